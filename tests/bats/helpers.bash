# Shared helpers for the bats suites. They run inside the test VM
# (tests/vm/run), as root, on the stock kernel the modules were built for.
#
#   load helpers           (first line of every suite, after the topology comment)
#
# Topology:   ns_create client router server   -> $client $router $server
#             veth_link $client c0 $router r0  -> veth pair straight into the netns
# Waiting:    wait_until 5 cmd args...         -> polls every 0.1 s, fails after 5 s
# Modules:    load_module xt_ILA               -> insmod build/kmod/$(uname -r)/xt_ILA.ko
# Cleanup:    cleanup_all (call from teardown)  -> kills netns processes, deletes netns

PROJECT_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
KREL="$(uname -r)"
KMOD_DIR="$PROJECT_ROOT/build/kmod/$KREL"
BIN_DIR="$PROJECT_ROOT/build/bin"
SYS_XTLIBDIR="$(pkg-config --variable=xtlibdir xtables 2>/dev/null || echo /usr/lib/x86_64-linux-gnu/xtables)"
export XTABLES_LIBDIR="$PROJECT_ROOT/xtables:$SYS_XTLIBDIR"
export PATH="$BIN_DIR:$PATH"

# Per-test state file: one netns name per line, deleted by cleanup_all.
_ns_list() { echo "${BATS_TEST_TMPDIR:-${BATS_TMPDIR:-/tmp}}/.netns-list"; }

rand_suffix() { od -An -N3 -tx1 /dev/urandom | tr -d ' \n'; }

# ns_create VAR... : creates "<var>-<random>" for each name, exports $VAR.
ns_create() {
	local v ns
	for v in "$@"; do
		ns="$v-$(rand_suffix)"
		ip netns add "$ns"
		echo "$ns" >>"$(_ns_list)"
		ip -n "$ns" link set lo up
		ip netns exec "$ns" sysctl -qw net.ipv6.conf.all.accept_dad=0 net.ipv6.conf.default.accept_dad=0
		printf -v "$v" '%s' "$ns"
		export "${v?}"
	done
}

# veth_link NS1 IF1 NS2 IF2 : veth pair created straight into both netns, up.
veth_link() {
	ip link add "$2" netns "$1" type veth peer name "$4" netns "$3"
	ip -n "$1" link set "$2" up
	ip -n "$3" link set "$4" up
}

# addr NS IF ADDR/LEN... : add v4 or v6 addresses (v6 with nodad).
addr() {
	local ns=$1 ifc=$2 a
	shift 2
	for a in "$@"; do
		case $a in
		*:*) ip -n "$ns" -6 addr add "$a" dev "$ifc" nodad ;;
		*) ip -n "$ns" addr add "$a" dev "$ifc" ;;
		esac
	done
}

# forwarding NS : enable IPv4 and IPv6 forwarding in NS.
forwarding() {
	ip netns exec "$1" sysctl -qw net.ipv4.ip_forward=1 net.ipv6.conf.all.forwarding=1
}

# topo_crs : client <-> router <-> server, IPv4 + IPv6, routes both ways.
#
#   client c0 ---- r0 router r1 ---- s0 server
#   10.0.1.2/24   10.0.1.1  10.0.2.1   10.0.2.2/24
#   fd00:1::2/64  fd00:1::1 fd00:2::1  fd00:2::2/64
topo_crs() {
	ns_create client router server
	veth_link "$client" c0 "$router" r0
	veth_link "$router" r1 "$server" s0
	addr "$client" c0 10.0.1.2/24 fd00:1::2/64
	addr "$router" r0 10.0.1.1/24 fd00:1::1/64
	addr "$router" r1 10.0.2.1/24 fd00:2::1/64
	addr "$server" s0 10.0.2.2/24 fd00:2::2/64
	ip -n "$client" route add default via 10.0.1.1
	ip -n "$client" -6 route add default via fd00:1::1
	ip -n "$server" route add default via 10.0.2.1
	ip -n "$server" -6 route add default via fd00:2::1
	forwarding "$router"
}

# wait_until TIMEOUT_S CMD... : run CMD every 0.1 s until it succeeds.
wait_until() {
	local timeout=$1 i
	shift
	for ((i = 0; i < timeout * 10; i++)); do
		"$@" >/dev/null 2>&1 && return 0
		sleep 0.1
	done
	echo "timed out after ${timeout}s waiting for: $*" >&2
	return 1
}

# load_module NAME [params], unload_module NAME
# shellcheck source=tests/lib/kmod.bash
. "$PROJECT_ROOT/tests/lib/kmod.bash"

# in_ns NS CMD... : shorthand for ip netns exec.
in_ns() { local ns=$1; shift; ip netns exec "$ns" "$@"; }

# dump_ns NS... : rules, routes, addresses of each NS to stderr (for failures).
dump_ns() {
	local ns
	for ns in "$@"; do
		{
			echo "=== $ns"
			ip -n "$ns" addr; ip -n "$ns" route; ip -n "$ns" -6 route
			ip netns exec "$ns" iptables-legacy-save 2>/dev/null
			ip netns exec "$ns" ip6tables-legacy-save 2>/dev/null
			ip netns exec "$ns" nft list ruleset 2>/dev/null
		} >&2
	done
}

# cleanup_all : kill everything left in our netns and delete them.
cleanup_all() {
	local f ns pids
	f="$(_ns_list)"
	[ -e "$f" ] || return 0
	if [ -z "${BATS_TEST_COMPLETED:-}" ] && [ -n "${BATS_TEST_NAME:-}" ]; then
		# shellcheck disable=SC2046
		dump_ns $(cat "$f")
	fi
	while read -r ns; do
		pids=$(ip netns pids "$ns" 2>/dev/null)
		[ -n "$pids" ] && kill -9 $pids 2>/dev/null
		ip netns del "$ns" 2>/dev/null
	done <"$f"
	rm -f "$f"
}
