# Helpers for tests/bats/fleet.bats (loaded after helpers.bash): a real etcd
# (Debian's etcd binary: one member, or a 3-member cluster for the test
# whose point is a member failure), ILA routers and a forwarding node kept
# by ila-syncd, servers, clients.
#
#              the VM's own netns: etcd member m1 (client URL 0.0.0.0:23791,
#              peer 127.0.0.1:23801); the 3-member cluster: m5 m6 m7
#              (0.0.0.0:2379{5,6,7}, peers 127.0.0.1:2380{5,6,7})
#              10.99.1.1 /      10.99.2.1 |      \ 10.99.3.1   (management veths
#              10.99.1.2 m0     10.99.2.2 m0      m0 10.99.3.2   fleet1..3 - m0)
#   c1 ---- r1 (ila-syncd full)    r2 (ila-syncd full) ---- c2     f (ila-syncd cache)
#            | \                  / |
#            |  +------ s1 ------+  |       s1: locators L1, L3; s2: locator L2
#            +--------- s2 ---------+       (each translates its locators back to SIR)
#
#   SIR prefix 2001:db8:ffff::/64, host SIR::ID on the lo of the server holding it.
#   L1 = 2001:db8:1::/64, L3 = 2001:db8:3::/64 (s1, adjust-transport),
#   L2 = 2001:db8:2::/64 (s2, neutral-map-auto: entries to s2 carry that mode).
#   r1 translates with a direct hook (ilactl hook ... map hosts miss drop),
#   r2 with a rule (ip6tables -j ILA --map hosts --miss drop).
#
# Every program started in the TCG guest costs a good fraction of a second
# (more through `ip netns exec`, which mounts a sysfs): the helpers use
# `ilactl -n`, `ila-syncd status -n`, busybox nsenter, one `ip -batch` per
# namespace, and wait with a read timeout instead of starting sleep(1).

SIR=2001:db8:ffff
L1=2001:db8:1:0
L2=2001:db8:2:0
L3=2001:db8:3:0

# stamp WHAT : elapsed seconds since the previous stamp, on the TAP output
stamp() {
	local now=${EPOCHREALTIME/./} d
	d=$(((now - ${STAMP_T:-$now}) / 100000))
	echo "# $1: $((d / 10)).$((d % 10)) s" >&3
	STAMP_T=$now
}

# nap SECONDS : wait without starting a process (a read that times out)
nap() {
	[ -n "${NAP_FD:-}" ] || exec {NAP_FD}<> <(:)
	read -rt "$1" -u "$NAP_FD" || true
}

# poll TIMEOUT_S CMD... : CMD every 0.2 s until it succeeds (wait_until
# without a sleep process per round)
poll() {
	local timeout=$1 end now
	shift
	now=${EPOCHREALTIME/./}
	end=$((now + timeout * 1000000))
	while :; do
		"$@" >/dev/null 2>&1 && return 0
		now=${EPOCHREALTIME/./}
		((now > end)) && break
		nap 0.2
	done
	echo "timed out after ${timeout}s waiting for: $*" >&2
	return 1
}

# jget JSON KEY : the value of the first KEY in one line of compact JSON
# (as ila-syncd, ilactl and etcdctl write it; a string without its
# quotes, like jq -r), without starting jq: jq takes about a second to
# start in the TCG guest, and the polls would run it every round
jget() {
	local re='"'"$2"'":("([^"\\]|\\.)*"|[^,}]*)' v
	[[ $1 =~ $re ]] || return 1
	v=${BASH_REMATCH[1]}
	[[ $v == \"*\" ]] && v=${v:1:-1}
	printf '%s\n' "$v"
}

# nx NS CMD... : CMD in netns NS (busybox nsenter: no sysfs mount)
nx() {
	local ns=$1
	shift
	busybox nsenter --net="/run/netns/$ns" "$@"
}

# bg_run NS OUT CMD... & : CMD in NS as a background job whose pid is $!
# itself (the subshell of a backgrounded function execs CMD: killing $!
# kills CMD, not a shell that would leave it running); its output in OUT,
# the TAP descriptor closed so that bats does not wait for it
bg_run() {
	local ns=$1 out=$2
	shift 2
	exec busybox nsenter -F --net="/run/netns/$ns" "$@" >"$out" 2>&1 3>&-
}

# ---- etcd --------------------------------------------------------------------------

# Member N listens for clients on 0.0.0.0:2379N and for peers on
# 127.0.0.1:2380N. ETCD_MEMBERS: the members of the store the test uses.

# etcd_start N... : a store of members N... (one member, or a cluster), up
etcd_start() {
	ETCD_DIR=$BATS_FILE_TMPDIR/etcd
	mkdir -p "$ETCD_DIR"
	local n cluster=
	for n in "$@"; do cluster+="${cluster:+,}m$n=http://127.0.0.1:2380$n"; done
	ETCD_CLUSTER=$cluster ETCD_MEMBERS="$*"
	export ETCD_DIR ETCD_CLUSTER ETCD_MEMBERS
	for n in "$@"; do etcd_member_start "$n" new; done
	poll 120 etcd_healthy $#
}

# etcd_member_start N [new|existing] : member mN (again, on its data dir)
etcd_member_start() {
	local n=$1 state=${2:-existing}
	etcd --name "m$n" --data-dir "$ETCD_DIR/m$n" \
		--listen-client-urls "http://0.0.0.0:2379$n" --advertise-client-urls "http://127.0.0.1:2379$n" \
		--listen-peer-urls "http://127.0.0.1:2380$n" --initial-advertise-peer-urls "http://127.0.0.1:2380$n" \
		--initial-cluster "$ETCD_CLUSTER" --initial-cluster-state "$state" \
		--initial-cluster-token "fleet-${ETCD_CLUSTER//[^0-9]/}" --heartbeat-interval 200 --election-timeout 2000 \
		--max-txn-ops 1024 --log-level error \
		>>"$ETCD_DIR/m$n.log" 2>&1 3>&- &
	echo $! >"$ETCD_DIR/m$n.pid"
	disown $!
}

# kill_wait PID SIG : send SIG to PID and wait (30 s at most) for it to be gone
kill_wait() {
	kill "-$2" "$1" 2>/dev/null || true
	poll 30 eval "! kill -0 $1"
}

# etcd_member_kill N [SIG] : stop member mN (default SIGKILL)
etcd_member_kill() {
	kill_wait "$(cat "$ETCD_DIR/m$1.pid")" "${2:-KILL}"
}

# etcd_stop [N...] : members N... (default: every member of the store)
etcd_stop() {
	local n pid
	for n in ${*:-$ETCD_MEMBERS}; do
		[ -e "$ETCD_DIR/m$n.pid" ] || continue
		pid=$(cat "$ETCD_DIR/m$n.pid")
		kill -9 "$pid" 2>/dev/null && poll 30 eval "! kill -0 $pid"
		rm -f "$ETCD_DIR/m$n.pid"
	done
	true
}

# ectl ARGS... : etcdctl on the store's members
ectl() {
	local n eps=
	for n in $ETCD_MEMBERS; do eps+="${eps:+,}127.0.0.1:2379$n"; done
	etcdctl --endpoints "$eps" --command-timeout 30s "$@"
}

# etcd_urls : the client URLs of the store's members, from the VM's netns
etcd_urls() {
	local n eps=
	for n in $ETCD_MEMBERS; do eps+="${eps:+,}http://127.0.0.1:2379$n"; done
	echo "$eps"
}

# etcd_healthy N : at least N members answer
etcd_healthy() {
	local out n=0
	out=$(ectl endpoint health -w json 2>/dev/null)
	while [[ $out == *'"health":true'* ]]; do
		out=${out#*'"health":true'}
		n=$((n + 1))
	done
	[ "$n" -ge "$1" ]
}

# etcd_leader : the number of the leader member
etcd_leader() {
	ectl endpoint status -w json | jq -r '.[] | select(.Status.leader == .Status.header.member_id) | .Endpoint' |
		sed 's/.*:2379//'
}

# store_revision : the store's current revision
store_revision() {
	jget "$(ectl get / --limit 1 -w json)" revision
}

# endpoints_for NODE [FIRST] : the URLs node NODE (1 r1, 2 r2, 3 f) reaches
# the members at, member FIRST's first
endpoints_for() {
	local n out= first=${2:-}
	[ -n "$first" ] && out="http://10.99.$1.1:2379$first"
	for n in $ETCD_MEMBERS; do [ "$n" = "$first" ] || out+="${out:+,}http://10.99.$1.1:2379$n"; done
	echo "$out"
}

# ---- ila-syncd ------------------------------------------------------------------

# syncd_start NS NODE PREFIX [ARGS...] : ila-syncd for map hosts in NS (node
# NODE), log in $BATS_TEST_TMPDIR/syncd-NS.log, pid (the daemon's own) in
# $BATS_TEST_TMPDIR/syncd-NS.pid. SYNCD_FIRST=M: member M first in its
# endpoint list.
syncd_start() {
	local ns=$1 n=$2 prefix=$3
	shift 3
	busybox nsenter -F --net="/run/netns/$ns" ila-syncd --endpoints "$(endpoints_for "$n" "${SYNCD_FIRST:-}")" \
		--prefix "$prefix" --map hosts --progress-interval 0.5 --timeout 5 "$@" \
		>>"$BATS_TEST_TMPDIR/syncd-$ns.log" 2>&1 3>&- &
	echo $! >"$BATS_TEST_TMPDIR/syncd-$ns.pid"
	disown $! # killed at the end of the test: no job report
}

syncd_pid() { cat "$BATS_TEST_TMPDIR/syncd-$1.pid"; }

# syncd_stop NS [SIG] : stop NS's ila-syncd and wait for it to be gone
syncd_stop() {
	kill_wait "$(syncd_pid "$1")" "${2:-TERM}"
}

# syncd_status NS : `ila-syncd status --map hosts -j` of NS
syncd_status() {
	ila-syncd status -n "$1" --map hosts -j
}

# syncd_field NS FIELD : one field of NS's daemon's status (cache.F: F of
# the cache object; the names are unique)
syncd_field() {
	jget "$(syncd_status "$1")" "${2#cache.}"
}

# syncd_at NS REV : NS's daemon is watching and holds revision REV or later
syncd_at() {
	local s
	s=$(syncd_status "$1") || return 1
	[ "$(jget "$s" state)" = watching ] && [ "$(jget "$s" revision)" -ge "$2" ]
}

# syncd_stale NS : NS's daemon says its map may be behind the store
syncd_stale() {
	[ "$(syncd_field "$1" stale)" = true ]
}

# syncd_stale_for NS SECS : NS's daemon says stale and has not been current
# for SECS seconds (lag_seconds): a passing reconnection ("connecting") is
# stale for a moment too, this is the settled state
syncd_stale_for() {
	local s lag
	s=$(syncd_status "$1") || return 1
	lag=$(jget "$s" lag_seconds)
	[ "$(jget "$s" stale)" = true ] && [ "${lag%.*}" -ge "$2" ]
}

# syncd_wait NS... : every NS's daemon caught up with the store's current revision
syncd_wait() {
	local rev ns
	rev=$(store_revision)
	for ns in "$@"; do
		poll 120 syncd_at "$ns" "$rev" || {
			ila-syncd status -n "$ns" >&2
			tail -n 20 "$BATS_TEST_TMPDIR/syncd-$ns.log" >&2
			return 1
		}
	done
}

# store_lines PREFIX : the store's mappings of map hosts as `ilactl save`
# writes them (a value without csum-mode has the default), sorted
store_lines() {
	ectl get --prefix "$1/maps/hosts/" | paste -d ' ' - - |
		awk -v p="$1/maps/hosts/" '{ sub("^" p, ""); v = ""
			for (i = 2; i <= NF; i++) v = v " " $i
			if (NF == 2) v = v " csum-mode adjust-transport"
			print "map add hosts " $1 v }' | LC_ALL=C sort
}

# map_lines NS : the entries of map hosts in NS as `ilactl save` writes them, sorted
map_lines() {
	ilactl -n "$1" save hosts | grep '^map add ' | LC_ALL=C sort
}

# map_equals_store NS PREFIX [again] : the map holds exactly the store's
# mappings (again: the store as read by the previous call)
map_equals_store() {
	local a=$BATS_TEST_TMPDIR/map-$1 b=$BATS_TEST_TMPDIR/store i
	[ "${3:-}" = again ] || store_lines "$2" >"$b"
	# a few tries: with etcd 3.4 the status's revision (syncd_wait) can
	# run ahead of the last events for a moment (ila-syncd(8))
	for ((i = 0; i < 25; i++)); do
		map_lines "$1" >"$a"
		cmp -s "$a" "$b" && return 0
		nap 0.2
	done
	echo "map of $1 differs from the store under $2 ($(wc -l <"$a") vs $(wc -l <"$b") lines):" >&2
	diff "$a" "$b" | head -n 20 >&2
	return 1
}

# entry_hits NS ID : the hit counter of SIR::ID's entry in map hosts of NS
entry_hits() {
	jget "$(ilactl -n "$1" -j map get hosts "$2")" hits
}

# entry_locator NS ID : the locator of ID's entry in map hosts of NS
entry_locator() {
	jget "$(ilactl -n "$1" -j map get hosts "$2")" locator
}

# locator_is NS ID LOC : ID's entry in NS's map hosts has locator LOC
locator_is() { [ "$(entry_locator "$1" "$2")" = "$3" ]; }

# map_stat NS FIELD : a field of `ilactl map stats hosts` in NS
map_stat() {
	jget "$(ilactl -n "$1" -j map stats hosts)" "$2"
}

# json_is JSON KEY=VALUE... : every KEY of JSON has VALUE (jget's form)
json_is() {
	local j=$1 kv v
	shift
	for kv in "$@"; do
		v=$(jget "$j" "${kv%%=*}")
		[ "$v" = "${kv#*=}" ] || { echo "$j: ${kv%%=*} is \"$v\", not \"${kv#*=}\"" >&2; return 1; }
	done
}

# scratch_entries NS : entries of the scratch map of a full sync of hosts in
# NS (fails without that map)
scratch_entries() {
	jget "$(ilactl -n "$1" -j map stats hosts.sync 2>/dev/null)" entries
}

# map_has NS ID / map_lacks NS ID : ID's entry is (not) in NS's map hosts
map_has() { ilactl -n "$1" map get hosts "$2" >/dev/null 2>&1; }
map_lacks() { ! map_has "$@"; }

# fleet_cleanup : cleanup_all with fewer processes (from teardown): the
# processes of the test's netns found by comparing /proc/PID/ns/net with
# the netns files (a shell test, no process), killed, the netns deleted
# in one `ip -batch`; the namespaces dumped first when the test failed
fleet_cleanup() {
	local f ns p batch= list=()
	f="$(_ns_list)"
	[ -e "$f" ] || return 0
	mapfile -t list <"$f"
	[ -n "${BATS_TEST_COMPLETED:-}" ] || dump_ns "${list[@]}"
	for p in /proc/[0-9]*; do
		for ns in "${list[@]}"; do
			if [[ $p/ns/net -ef /run/netns/$ns ]]; then
				kill -9 "${p#/proc/}" 2>/dev/null
				break
			fi
		done
	done
	for ns in "${list[@]}"; do batch+="netns del $ns"$'\n'; done
	ip -force -batch - <<<"$batch" 2>/dev/null
	rm -f "$f"
	true
}

# ---- the data plane -------------------------------------------------------------

# fleet_ns VAR... : netns "<var>-<random>" for each VAR (exported), cleaned
# up by cleanup_all like ns_create's
fleet_ns() {
	local v ns batch=
	for v in "$@"; do
		printf -v ns '%s-%06x' "$v" $((SRANDOM & 0xffffff))
		batch+="netns add $ns"$'\n'
		echo "$ns" >>"$(_ns_list)"
		printf -v "$v" '%s' "$ns"
		export "${v?}"
	done
	ip -batch - <<<"$batch"
}

# fleet_links "NS1 IF1 NS2 IF2"... : veth pairs straight into the netns
# (NS2 "-": the VM's own)
fleet_links() {
	local l batch= a b c d
	for l in "$@"; do
		read -r a b c d <<<"$l"
		batch+="link add $b netns $a type veth peer name $d"
		[ "$c" = - ] || batch+=" netns $c"
		batch+=$'\n'
	done
	ip -batch - <<<"$batch"
}

# fleet_cfg NS "IF..." LINES : lo and IF... up, then `ip -n NS -batch` of
# LINES
fleet_cfg() {
	local ns=$1 i up="link set lo up"
	for i in $2; do up+=$'\n'"link set $i up"; done
	ip -n "$ns" -batch - <<<"$up"$'\n'"$3"
}

# fwd NS... : IPv6 forwarding on (sysctl through nsenter: no sysfs mount)
fwd() {
	local ns
	for ns in "$@"; do nx "$ns" sysctl -qw net.ipv6.conf.all.forwarding=1; done
}

# topo_mgmt N... : routers rN (N in 1 2) with their management link only
# (for tests without traffic)
topo_mgmt() {
	local n v batch=
	for n in "$@"; do fleet_ns "r$n"; done
	for n in "$@"; do
		v=r$n
		fleet_links "${!v} m0 - fleet$n"
		fleet_cfg "${!v}" m0 "addr add 10.99.$n.2/24 dev m0"
		batch+="addr add 10.99.$n.1/24 dev fleet$n"$'\n'"link set fleet$n up"$'\n'
	done
	ip -batch - <<<"$batch"
}

# servers_translate : s1 and s2 translate their locators back to SIR
servers_translate() {
	nx "$s1" ip6tables-restore --noflush <<EOF2
*mangle
-A PREROUTING -d $L1::/64 -j ILA --src-pfx $L1::/64 --dst-pfx $SIR::/64
-A PREROUTING -d $L3::/64 -j ILA --src-pfx $L3::/64 --dst-pfx $SIR::/64
COMMIT
EOF2
	nx "$s2" ip6tables -t mangle -A PREROUTING -d $L2::/64 -j ILA --src-pfx $L2::/64 --dst-pfx $SIR::/64 \
		--csum-mode neutral-map-auto
}

# topo_routers [N] : c1, r1, s1, s2 and the management link, as drawn above;
# with N=2 also c2 and r2. rN - sM on fd00:NM::/64, cN - rN on fd00:N::/64.
topo_routers() {
	local nr=${1:-1} n c r routes= links=() srv1= srv2=
	fleet_ns c1 r1 s1 s2
	[ "$nr" = 2 ] && fleet_ns c2 r2
	for ((n = 1; n <= nr; n++)); do
		c=c$n r=r$n
		links+=("${!c} c0 ${!r} c0" "${!r} m0 - fleet$n" "${!r} s1 $s1 r$n" "${!r} s2 $s2 r$n")
	done
	fleet_links "${links[@]}"
	for ((n = 1; n <= nr; n++)); do
		c=c$n r=r$n
		fleet_cfg "${!c}" c0 "addr add fd00:$n::2/64 dev c0 nodad
route add default via fd00:$n::1"
		fleet_cfg "${!r}" "c0 m0 s1 s2" "addr add fd00:$n::1/64 dev c0 nodad
addr add 10.99.$n.2/24 dev m0
addr add fd00:${n}1::1/64 dev s1 nodad
addr add fd00:${n}2::1/64 dev s2 nodad
route add $L1::/64 via fd00:${n}1::2
route add $L3::/64 via fd00:${n}1::2
route add $L2::/64 via fd00:${n}2::2"
		fwd "${!r}"
		routes+="addr add 10.99.$n.1/24 dev fleet$n"$'\n'"link set fleet$n up"$'\n'
		srv1+="addr add fd00:${n}1::2/64 dev r$n nodad"$'\n'"route add fd00:$n::/64 via fd00:${n}1::1"$'\n'
		srv2+="addr add fd00:${n}2::2/64 dev r$n nodad"$'\n'"route add fd00:$n::/64 via fd00:${n}2::1"$'\n'
	done
	ip -batch - <<<"$routes"
	local ifs="r1"
	[ "$nr" = 2 ] && ifs="r1 r2"
	fleet_cfg "$s1" "$ifs" "$srv1"
	fleet_cfg "$s2" "$ifs" "$srv2"
	srv_start s1
	srv_start s2
	servers_translate
}

# routers_translate N... : map hosts on router rN, used by a hook on r1 and
# a rule on r2 (created before ila-syncd, which swaps its contents in)
routers_translate() {
	local n
	for n in "$@"; do
		case $n in
		1)
			ilactl -n "$r1" map create hosts
			ilactl -n "$r1" hook add sir prerouting src-pfx $SIR::/64 map hosts miss drop
			;;
		2)
			ilactl -n "$r2" map create hosts
			nx "$r2" ip6tables -t mangle -A PREROUTING -d $SIR::/64 -j ILA --map hosts --miss drop
			;;
		esac
	done
}

# srv_start sN : sN answers "sN" on TCP port 7000 of every address it has
srv_start() {
	bg_run "${!1}" /dev/null socat -T30 TCP6-LISTEN:7000,fork,reuseaddr SYSTEM:"read -r x; echo $1" &
	disown $!
}

# srv_hold sN ID... : server sN owns SIR::ID...
srv_hold() {
	local ns=${!1} id batch=
	shift
	for id in "$@"; do batch+="addr add $SIR::$id/128 dev lo nodad"$'\n'; done
	ip -n "$ns" -batch - <<<"$batch"
}

# srv_udp_start sN ID : sN also answers "sN" on UDP port 7001 of SIR::ID
# (bound to it, so the answer comes from that address); srv_udp_wait sN ID:
# it listens
srv_udp_start() {
	bg_run "${!1}" /dev/null socat -T30 UDP6-LISTEN:7001,bind="[$SIR::$2]",fork,reuseaddr \
		SYSTEM:"read -r x; echo $1" &
	disown $!
}
srv_udp_wait() {
	poll 30 nx "${!1}" sh -c "ss -Huln src '[$SIR::$2]:7001' | grep -q ."
}

# tcp_ask|udp_ask CLIENT_NS ID [TIMEOUT] : the answer of the server holding SIR::ID
tcp_ask() {
	nx "$1" timeout "${3:-30}" bash -c 'exec 3<>"/dev/tcp/$0/7000" && echo hi >&3 && head -n 1 <&3' "$SIR::$2"
}
udp_ask() {
	nx "$1" timeout "${3:-30}" bash -c 'exec 3<>"/dev/udp/$0/7001" && echo hi >&3 && head -n 1 <&3' "$SIR::$2"
}

# answers CLIENT_NS ID SERVER : a TCP connection to SIR::ID is answered by SERVER
answers() { [ "$(tcp_ask "$1" "$2" 5)" = "$3" ]; }

# paced FILE : FILE on stdout, 20 kB every 0.1 s
paced() {
	perl -e 'open(my $f, "<", $ARGV[0]) or die "$ARGV[0]: $!"; binmode $f; binmode STDOUT;
		while (read($f, my $b, 20000)) { syswrite(STDOUT, $b); select(undef, undef, undef, 0.1) }' "$1"
}

# mapping_lines N : `ilactl save` lines of N mappings 0:0:X:Y (i = 0..N-1):
# even i to L1 (adjust-transport), odd i to L2 (neutral-map-auto)
mapping_lines() {
	awk -v n="$1" -v l1=$L1 -v l2=$L2 'BEGIN {
		print "map create hosts"
		for (i = 0; i < n; i++)
			printf "map add hosts 0:0:%x:%x %s\n", int(i / 65536), i % 65536,
				i % 2 ? l2 " csum-mode neutral-map-auto" : l1 " csum-mode adjust-transport"
	}'
}

# ident I : the identifier (key form) of mapping I
ident() { printf '0:0:%x:%x' $(($1 / 65536)) $(($1 % 65536)); }

# store_import PREFIX [ARGS...] : `ila-syncd import` into the store from stdin
store_import() {
	local p=$1
	shift
	ila-syncd import --endpoints "$(etcd_urls)" --prefix "$p" "$@"
}

# topo_cache : a forwarding node f between client c and router r1
#
#   c c0 ---- c0 f r0 ---- f0 r1 s1 ---- s1,  r1 s2 ---- s2
#   fd00:1::2   fd00:1::1  fd00:f::1  fd00:f::2   fd00:11::/64, fd00:12::/64
#
# f sends SIR and every locator to r1; f and r1 have management links.
topo_cache() {
	fleet_ns c f r1 s1 s2
	fleet_links "$c c0 $f c0" "$f r0 $r1 f0" "$f m0 - fleet3" "$r1 m0 - fleet1" \
		"$r1 s1 $s1 r1" "$r1 s2 $s2 r1"
	fleet_cfg "$c" c0 "addr add fd00:1::2/64 dev c0 nodad
route add default via fd00:1::1"
	fleet_cfg "$f" "c0 r0 m0" "addr add fd00:1::1/64 dev c0 nodad
addr add fd00:f::1/64 dev r0 nodad
addr add 10.99.3.2/24 dev m0
route add $SIR::/64 via fd00:f::2
route add $L1::/64 via fd00:f::2
route add $L2::/64 via fd00:f::2
route add $L3::/64 via fd00:f::2"
	fleet_cfg "$r1" "f0 m0 s1 s2" "addr add fd00:f::2/64 dev f0 nodad
addr add 10.99.1.2/24 dev m0
addr add fd00:11::1/64 dev s1 nodad
addr add fd00:12::1/64 dev s2 nodad
route add fd00:1::/64 via fd00:f::1
route add $L1::/64 via fd00:11::2
route add $L3::/64 via fd00:11::2
route add $L2::/64 via fd00:12::2"
	fwd "$f" "$r1"
	ip -batch - <<<$'addr add 10.99.1.1/24 dev fleet1\naddr add 10.99.3.1/24 dev fleet3\nlink set fleet1 up\nlink set fleet3 up'
	fleet_cfg "$s1" r1 "addr add fd00:11::2/64 dev r1 nodad
route add fd00:1::/64 via fd00:11::1"
	fleet_cfg "$s2" r1 "addr add fd00:12::2/64 dev r1 nodad
route add fd00:1::/64 via fd00:12::1"
	srv_start s1
	srv_start s2
	servers_translate
}

# l3_packets : packets s1 translated back from locator L3
l3_packets() {
	nx "$s1" ip6tables -t mangle -vxnL PREROUTING | awk '/ILA/ && $0 ~ /2001:db8:3::\/64/ { print $1; exit }'
}

# udp_storm NS FIRST N : one UDP datagram from NS to SIR::ident(I) port 9 for
# I in FIRST .. FIRST+N-1 (perl-base only)
udp_storm() {
	nx "$1" perl -e '
		use Socket qw(AF_INET6 SOCK_DGRAM inet_pton pack_sockaddr_in6);
		my ($sir, $first, $n) = @ARGV;
		socket(my $s, AF_INET6, SOCK_DGRAM, 0) or die "socket: $!";
		for my $i ($first .. $first + $n - 1) {
			my $a = sprintf("%s::%x:%x", $sir, int($i / 65536), $i % 65536);
			send($s, "x", 0, pack_sockaddr_in6(9, inet_pton(AF_INET6, $a)));
		}' "$SIR" "$2" "$3"
}

# ping_stop PID FILE : stop the ping PID (started without a count, output
# in FILE) and check that every echo request but the one in flight when it
# was stopped had its reply (at least 20 sent)
ping_stop() {
	local tx rx
	kill -INT "$1"
	wait "$1" || true
	read -r tx rx < <(sed -n 's/^\([0-9]*\) packets transmitted, \([0-9]*\) .*/\1 \2/p' "$2")
	echo "# ping: $tx sent, $rx answered" >&3
	[ "$tx" -ge 20 ] && [ "$rx" -ge $((tx - 1)) ] || { cat "$2" >&2; return 1; }
}

# no_loss FILE : the packet loss ping wrote into FILE is 0%
no_loss() {
	grep -q ' 0% packet loss' "$1" || { cat "$1" >&2; return 1; }
}

# ---- TLS and authentication ---------------------------------------------------

# tls_material DIR : a CA, a server certificate for 10.99.1.1 and 127.0.0.1,
# a client certificate from the CA, and one from another CA, in DIR
tls_material() {
	local d=$1
	mkdir -p "$d"
	(
		cd "$d" || exit 1
		for ca in ca other; do
			openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
				-keyout $ca.key -out $ca.pem -subj "/CN=fleet test $ca" 2>/dev/null || exit 1
		done
		printf 'subjectAltName=IP:10.99.1.1,IP:10.99.2.1,IP:127.0.0.1\nextendedKeyUsage=serverAuth,clientAuth\n' >san.ext
		printf 'extendedKeyUsage=clientAuth\n' >client.ext
		openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout server.key -out server.csr \
			-subj /CN=etcd 2>/dev/null &&
		openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 -out server.pem \
			-extfile san.ext 2>/dev/null || exit 1
		for c in client:ca wrong:other; do
			openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout "${c%%:*}.key" \
				-out "${c%%:*}.csr" -subj "/CN=ila-syncd" 2>/dev/null &&
			openssl x509 -req -in "${c%%:*}.csr" -CA "${c#*:}.pem" -CAkey "${c#*:}.key" -CAcreateserial -days 2 \
				-out "${c%%:*}.pem" -extfile client.ext 2>/dev/null || exit 1
		done
	)
}

# etcd_tls_start DIR : a single-member etcd on https://0.0.0.0:23794 that
# wants client certificates of DIR's CA; pid in DIR/etcd.pid
etcd_tls_start() {
	local d=$1
	etcd --name tls --data-dir "$d/data" \
		--listen-client-urls https://0.0.0.0:23794 --advertise-client-urls https://127.0.0.1:23794 \
		--listen-peer-urls http://127.0.0.1:23804 --initial-advertise-peer-urls http://127.0.0.1:23804 \
		--initial-cluster tls=http://127.0.0.1:23804 --client-cert-auth --trusted-ca-file "$d/ca.pem" \
		--cert-file "$d/server.pem" --key-file "$d/server.key" --log-level error >>"$d/etcd.log" 2>&1 3>&- &
	echo $! >"$d/etcd.pid"
}

# tctl DIR ARGS... : etcdctl on the TLS member with the right client certificate
tctl() {
	local d=$1
	shift
	etcdctl --endpoints https://127.0.0.1:23794 --cacert "$d/ca.pem" --cert "$d/client.pem" \
		--key "$d/client.key" "$@"
}

# keep_logs : the test's daemon logs into the results directory of the VM
# run (build/check/KERNEL/fleet-logs/TEST/), for a look after a failure
keep_logs() {
	[ -n "${VM_RESULTS:-}" ] && [ -d "$VM_RESULTS" ] || return 0
	local d="$VM_RESULTS/fleet-logs/$BATS_TEST_NUMBER"
	mkdir -p "$d" && cp "$BATS_TEST_TMPDIR"/syncd-*.log "$d/" 2>/dev/null
	true
}
