# Helpers for tests/bats/rtcache.bats (loaded after helpers.bash).
#
# Process start-up is the expensive part in the TCG guest (an `ip netns exec`
# costs seconds there), so these helpers enter namespaces with the static
# busybox nsenter, read statistics through /proc/PID/net of a process parked
# in the router namespace, and batch ip commands.

# rns NS CMD... : run CMD in network namespace NS (no mount namespace work).
rns() {
	local ns=$1
	shift
	busybox nsenter --net="/run/netns/$ns" "$@"
}

# rns_bg NS CMD... & : the same for a background job; $! is then CMD's own pid
# (a backgrounded function runs in a subshell of the init netns: exec it away).
rns_bg() {
	local ns=$1
	shift
	exec busybox nsenter -F --net="/run/netns/$ns" "$@" >/dev/null 2>&1 3>&-
}

# nap SECONDS : sleep without starting a process.
nap() {
	[ -n "${NAP_FD:-}" ] || exec {NAP_FD}<> <(:)
	read -rt "$1" -u "$NAP_FD" || true
}

# rwait TIMEOUT_S CMD... : like wait_until, polling with nap.
rwait() {
	local timeout=$1 i
	shift
	for ((i = 0; i < timeout * 10; i++)); do
		"$@" >/dev/null 2>&1 && return 0
		nap 0.1
	done
	echo "timed out after ${timeout}s waiting for: $*" >&2
	return 1
}

# rtc_topo: topo_crs plus a second link on each side of the router, the
# service address on the server's loopback, conntrack on the router, packet
# counters on the server.
rtc_topo() {
	topo_crs
	veth_link "$client" c1 "$router" r2
	veth_link "$router" r3 "$server" s1
	# the router ignores ARP requests from a source rp_filter rejects: the
	# client knows r2's address, or spoofed packets would never be sent
	ip -n "$client" -batch - <<-'EOF'
	addr add 10.0.3.2/24 dev c1
	addr add fd00:3::2/64 dev c1 nodad
	neigh replace 10.0.3.1 lladdr 02:00:00:00:03:01 dev c1 nud permanent
	EOF
	ip -n "$router" -batch - <<-'EOF'
	link set r2 address 02:00:00:00:03:01
	addr add 10.0.3.1/24 dev r2
	addr add fd00:3::1/64 dev r2 nodad
	addr add 10.0.4.1/24 dev r3
	addr add fd00:4::1/64 dev r3 nodad
	EOF
	ip -n "$server" -batch - <<-'EOF'
	addr add 10.0.4.2/24 dev s1
	addr add fd00:4::2/64 dev s1 nodad
	addr add 10.0.9.9/32 dev lo
	addr add fd00:9::9/128 dev lo nodad
	EOF
	rtc_routes
	rns "$router" nft -f - <<-'EOF'
	table inet fw {
		chain forward {
			type filter hook forward priority 0; policy accept;
			ct state established,related,new counter accept
		}
	}
	EOF
	# server: count (and drop: no ICMP errors) what reaches the service
	rns "$server" nft -f - <<-'EOF'
	table inet cnt {
		chain pre {
			type filter hook prerouting priority 0; policy accept;
			iifname "s0" ip daddr 10.0.9.9 counter comment "s0v4"
			iifname "s1" ip daddr 10.0.9.9 counter comment "s1v4"
			iifname "s0" ip6 daddr fd00:9::9 counter comment "s0v6"
			iifname "s1" ip6 daddr fd00:9::9 counter comment "s1v6"
			udp dport 5000 drop
		}
	}
	EOF
}

# rtc_anchor : park a process in the router netns, RPID (stats via /proc/RPID).
rtc_anchor() {
	rns_bg "$router" busybox sleep 100000 &
	RPID=$!
	BG_PIDS+=" $RPID"
}

# rtc_routes : (re)install the routes of the test topology.
#   router: the service via path A (r1) until a test moves it
#   client: the service via c0; via c1 only as a worse alternative
rtc_routes() {
	ip -n "$router" -batch - <<-'EOF'
	link set r1 up
	route replace 10.0.9.9/32 via 10.0.2.2
	route replace fd00:9::9/128 via fd00:2::2
	EOF
	ip -n "$client" -batch - <<-'EOF'
	route replace 10.0.9.9/32 via 10.0.1.1 metric 10
	route replace 10.0.9.9/32 via 10.0.3.1 metric 20
	route replace fd00:9::9/128 via fd00:1::1 metric 10
	route replace fd00:9::9/128 via fd00:3::1 metric 20
	EOF
}

# rtc_reset : routes, sysctls (rp_filter=1), empty cache, baselines.
rtc_reset() {
	rtc_anchor
	rtc_routes
	rns "$router" busybox sh -c '
		echo 1 >/proc/sys/net/netfilter/nf_conntrack_rtcache
		echo 1 >/proc/sys/net/netfilter/nf_conntrack_rtcache_flush
		echo 1 >/proc/sys/net/ipv4/conf/all/rp_filter
		echo 0 >/proc/sys/net/ipv4/conf/r2/rp_filter
		echo 1 >/proc/sys/net/ipv6/conf/all/keep_addr_on_down
		echo 1 >/proc/sys/net/ipv6/conf/r1/keep_addr_on_down'
	rtc_base
}

# fam 4|6 : addresses of the service test for one family.
fam() {
	F=$1
	if [ "$F" = 4 ]; then
		IPF=-4 SRV=10.0.9.9 CLI=10.0.1.2 NHA=10.0.2.2 NHB=10.0.4.2
		PFX=10.0.9.9/32 CLI_NH0=10.0.1.1 XT=iptables
	else
		IPF=-6 SRV=fd00:9::9 CLI=fd00:1::2 NHA=fd00:2::2 NHB=fd00:4::2
		PFX=fd00:9::9/128 CLI_NH0=fd00:1::1 XT=ip6tables
	fi
}

# rtc_file_stat FILE COLUMN : a column of an nf_conntrack_rtcache stat file,
# summed over CPUs ("entries" is per netns and not summed, as lnstat does).
rtc_file_stat() {
	local col=$2 i idx=-1 sum=0 names vals
	{
		read -r -a names || return 1
		for i in "${!names[@]}"; do
			[ "${names[$i]}" = "$col" ] && idx=$i
		done
		[ "$idx" -ge 0 ] || { echo "no column $col" >&2; return 1; }
		while read -r -a vals; do
			if [ "$idx" = 0 ]; then
				sum=$((16#${vals[0]}))
			else
				sum=$((sum + 16#${vals[$idx]}))
			fi
		done
	} <"$1"
	echo "$sum"
}

# rtc_stat COLUMN : router statistics (read without starting a process).
rtc_stat() {
	rtc_file_stat "/proc/$RPID/net/stat/nf_conntrack_rtcache" "$1"
}

RTC_COLS="entries hits misses inserts stale flushes reclaimed wrong_iif insert_failed churn_limited"

# rtc_base : remember the router and server counters; rtc_d COLUMN and
# srv_count NAME give the increase.
rtc_base() {
	local c n v
	declare -gA RTC_BASE SRV_BASE
	for c in $RTC_COLS; do
		RTC_BASE[$c]=$(rtc_stat "$c")
	done
	while read -r n v; do
		SRV_BASE[$n]=$v
	done < <(srv_counts)
}

rtc_d() {
	echo $(($(rtc_stat "$1") - ${RTC_BASE[$1]:-0}))
}

# rtc_stats : "name=increase ..." of every column (for failure messages).
rtc_stats() {
	local c out=
	for c in $RTC_COLS; do
		out+="$c=$(rtc_d $c) "
	done
	echo "$out"
}

# srv_counts : "NAME PACKETS" of each server counter.
srv_counts() {
	rns "$server" nft list chain inet cnt pre |
		sed -n 's/.*counter packets \([0-9]*\) .*comment "\(.*\)".*/\2 \1/p'
}

# srv_count NAME : packets counted by the server rule NAME since rtc_base.
srv_count() {
	local n v
	while read -r n v; do
		if [ "$n" = "$1" ]; then echo $((v - ${SRV_BASE[$n]:-0})); fi
	done < <(srv_counts)
}

# udp_send SRC SPORT DST DPORT COUNT [NS] : COUNT datagrams of one 5-tuple,
# from the client unless NS is given.
udp_send() {
	local f=$BATS_TEST_TMPDIR/pkts$5 proto=UDP4 src=$1 dst=$3
	[ -e "$f" ] || printf '%*s' $(($5 * 32)) '' >"$f"
	case $dst in *:*) proto=UDP6 src="[$src]" dst="[$dst]" ;; esac
	rns "${6:-$client}" socat -b 32 -u OPEN:"$f",rdonly \
		"$proto-SENDTO:$dst:$4,bind=$src:$2,reuseaddr"
}

# expect NAME ACTUAL OP EXPECTED : test(1) assertion with a readable failure.
expect() {
	if ! [ "$2" "$3" "$4" ]; then
		echo "expected $1 $3 $4, got $2 (increase: $(rtc_stats))" >&2
		return 1
	fi
}

# pmtu_exception ADDR MTU : the router has a path MTU exception for ADDR.
pmtu_exception() {
	ip -n "$router" -6 route show cache | grep -q "^$1 .* mtu $2"
}

stat_ge() { [ "$(rtc_stat "$1")" -ge "$2" ]; }
stat_is() { [ "$(rtc_stat "$1")" -eq "$2" ]; }

# rule_pkts XT N : packet counter of rule N of the router's mangle PREROUTING
# (iptables-nft may print a warning line first).
rule_pkts() {
	rns "$router" "$1" -t mangle -L PREROUTING -nvx |
		awk -v n="$2" '$1 ~ /^[0-9]+$/ && ++i == n { print $1 }'
}

# listening PID : the netns of process PID listens on TCP 6000 (IPv4) and
# 6001 (IPv6).
listening() {
	grep -qE ':1770 0+:0000 0A' "/proc/$1/net/tcp" &&
		grep -qE ':1771 0+:0000 0A' "/proc/$1/net/tcp6"
}

# dev_gone PID DEV : DEV no longer exists in the netns of process PID.
dev_gone() { ! grep -q "^ *$2:" "/proc/$1/net/dev"; }

# no_refcount_wait : the kernel log has no "waiting for X to become free".
# With net.core.netdev_unregister_timeout_secs=1 (set by the suite) a leaked
# reference is reported about a second after the device is unregistered.
no_refcount_wait() {
	nap 3	# the kernel reports after the timeout: nothing to poll for
	if dmesg | grep -q "waiting for .* to become free"; then
		dmesg | grep "waiting for .* to become free" | head -3 >&2
		return 1
	fi
}

# rtc_file_ge FILE COLUMN N / rtc_file_gt FILE COLUMN N : a column of a stat
# file compared with N.
rtc_file_ge() { [ "$(rtc_file_stat "$1" "$2")" -ge "$3" ]; }
rtc_file_gt() { [ "$(rtc_file_stat "$1" "$2")" -gt "$3" ]; }

# rtc_mini_router RT [RT_LINES [CLIENT_LINES [RT_SH]]] : netns RT (made by
# the caller) becomes a second router between the client (ra - x:
# 10.10.0.0/24, fd10::/64) and the server (rb - y: 10.20.0.0/24,
# fd20::/64), forwarding with conntrack; the client's and server's previous
# x/y must be gone. RT_LINES and CLIENT_LINES: more `ip -batch` lines for
# the router and the client, RT_SH: a shell command run in RT at the end.
rtc_mini_router() {
	local rt=$1
	ip -n "$rt" -batch - <<-EOF
	link set lo up
	link add name ra type veth peer name x netns $client
	link add name rb type veth peer name y netns $server
	link set dev ra up
	link set dev rb up
	addr add 10.10.0.1/24 dev ra
	addr add fd10::1/64 dev ra nodad
	addr add 10.20.0.1/24 dev rb
	addr add fd20::1/64 dev rb nodad
	${2:-}
	EOF
	ip -n "$client" -batch - <<-EOF
	link set dev x up
	addr add 10.10.0.2/24 dev x
	addr add fd10::2/64 dev x nodad
	route add 10.20.0.0/24 via 10.10.0.1
	route add fd20::/64 via fd10::1
	${3:-}
	EOF
	ip -n "$server" -batch - <<-EOF
	link set dev y up
	addr add 10.20.0.2/24 dev y
	addr add fd20::2/64 dev y nodad
	route add 10.10.0.0/24 via 10.20.0.1
	route add fd10::/64 via fd20::1
	EOF
	rns "$rt" busybox sh -c '
		echo 1 >/proc/sys/net/ipv4/ip_forward
		echo 1 >/proc/sys/net/ipv6/conf/all/forwarding
		nft "table inet t { chain f { type filter hook forward priority 0; ct state new counter; }; }" &&
		eval "$1"' sh "${4:-}"
}
