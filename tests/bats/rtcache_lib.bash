# Helpers for tests/bats/rtcache.bats (loaded after helpers.bash).

# rtc_topo: topo_crs plus a second link on each side of the router, the
# service address on the server's loopback, conntrack + rp_filter=1 on the
# router, packet counters on the server.
rtc_topo() {
	topo_crs
	veth_link "$client" c1 "$router" r2
	veth_link "$router" r3 "$server" s1
	addr "$client" c1 10.0.3.2/24 fd00:3::2/64
	addr "$router" r2 10.0.3.1/24 fd00:3::1/64
	addr "$router" r3 10.0.4.1/24 fd00:4::1/64
	addr "$server" s1 10.0.4.2/24 fd00:4::2/64
	addr "$server" lo 10.0.9.9/32 fd00:9::9/128
	# router: the service is on path A (r1) until a test moves it
	ip -n "$router" route add 10.0.9.9/32 via 10.0.2.2
	ip -n "$router" -6 route add fd00:9::9/128 via fd00:2::2
	# client: the service via c0; via c1 only as a worse alternative
	ip -n "$client" route add 10.0.9.9/32 via 10.0.1.1 metric 10
	ip -n "$client" route add 10.0.9.9/32 via 10.0.3.1 metric 20
	ip -n "$client" -6 route add fd00:9::9/128 via fd00:1::1 metric 10
	ip -n "$client" -6 route add fd00:9::9/128 via fd00:3::1 metric 20
	in_ns "$router" sysctl -qw net.ipv4.conf.all.rp_filter=1 \
		net.ipv4.conf.default.rp_filter=1
	in_ns "$router" nft -f - <<-'EOF'
	table inet fw {
		chain forward {
			type filter hook forward priority 0; policy accept;
			ct state established,related,new counter accept
		}
	}
	EOF
	# server: count (and drop: no ICMP errors) what reaches the service
	in_ns "$server" nft -f - <<-'EOF'
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

# fam 4|6 : addresses of the service test for one family.
fam() {
	F=$1
	if [ "$F" = 4 ]; then
		IPF=-4 SRV=10.0.9.9 CLI=10.0.1.2 NHA=10.0.2.2 NHB=10.0.4.2
		PFX=10.0.9.9/32 CLI_NH0=10.0.1.1 PING="ping -4"
		XT=iptables
	else
		IPF=-6 SRV=fd00:9::9 CLI=fd00:1::2 NHA=fd00:2::2 NHB=fd00:4::2
		PFX=fd00:9::9/128 CLI_NH0=fd00:1::1 PING="ping -6"
		XT=ip6tables
	fi
}

# rtc_stat NS COLUMN : a column of /proc/net/stat/nf_conntrack_rtcache,
# summed over CPUs ("entries" is per netns and not summed, as lnstat does).
rtc_stat() {
	local col=$2 i idx=-1 sum=0 names vals
	{
		read -r -a names
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
	} < <(in_ns "$1" cat /proc/net/stat/nf_conntrack_rtcache)
	echo "$sum"
}

# rtc_stats NS : "name=value ..." of every column (for failure messages).
rtc_stats() {
	local c out=
	for c in entries hits misses inserts stale flushes reclaimed wrong_iif insert_failed; do
		out+="$c=$(rtc_stat "$1" $c) "
	done
	echo "$out"
}

# srv_count NAME : packets counted by the server rule with comment NAME.
srv_count() {
	in_ns "$server" nft list chain inet cnt pre |
		sed -n "s/.*counter packets \([0-9]*\) .*comment \"$1\".*/\1/p"
}

# udp_send NS SRC SPORT DST DPORT COUNT : COUNT datagrams of one 5-tuple.
udp_send() {
	local ns=$1
	shift
	in_ns "$ns" /usr/bin/python3 -c '
import socket, sys, time
src, sport, dst, dport, n = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
fam = socket.AF_INET6 if ":" in dst else socket.AF_INET
s = socket.socket(fam, socket.SOCK_DGRAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind((src, sport))
for i in range(n):
    try:
        s.sendto(b"x" * 32, (dst, dport))
    except OSError:
        pass
    time.sleep(0.002)
' "$@"
}

# expect NAME ACTUAL OP EXPECTED : arithmetic assertion with a readable failure.
expect() {
	if ! (($2 $3 $4)); then
		echo "expected $1 $3 $4, got $2 ($(rtc_stats "$router"))" >&2
		return 1
	fi
}

# stat_is NS COLUMN VALUE : for wait_until.
stat_is() { [ "$(rtc_stat "$1" "$2")" -eq "$3" ]; }
stat_ge() { [ "$(rtc_stat "$1" "$2")" -ge "$3" ]; }

# dev_gone NS DEV : true once DEV no longer exists in NS.
dev_gone() { ! ip -n "$1" link show "$2" >/dev/null 2>&1; }

# no_refcount_wait : the kernel log has no "waiting for X to become free".
# With net.core.netdev_unregister_timeout_secs=1 (set by the suite) a leaked
# reference is reported about a second after the device is unregistered.
no_refcount_wait() {
	sleep 2.5	# the kernel reports after the timeout: nothing to poll
	if dmesg | grep -q "waiting for .* to become free"; then
		dmesg | grep "waiting for .* to become free" | head -3 >&2
		return 1
	fi
}
