#!/usr/bin/env bash
# make demo: runs inside the VM (tests/vm/run -- tests/demo.sh) and shows each
# feature of nf-ila-rtcache on real traffic.
#
#   client c0 -------- r0 router r1 -------- s0 server
#   fd00:1::2/64   fd00:1::1   fd00:2::1   fd00:2::2/64, 3333:0:0:1::5/64
#   10.0.1.2/24    10.0.1.1    10.0.2.1    10.0.2.2/24
#
# ILA: the client talks to the SIR address 2001:db8:0:3::5; the router
# rewrites the locator to 3333:0:0:1 on the way in and back on the way out.
set -euo pipefail
cd "$(dirname "$0")/.."
BATS_TEST_TMPDIR=$(mktemp -d)
# shellcheck source=tests/bats/helpers.bash
. tests/bats/helpers.bash
trap 'cleanup_all; for m in xt_rtcache nf_conntrack_rtcache xt_ILA nf_ila; do rmmod $m 2>/dev/null || true; done' EXIT

B=$(tput bold 2>/dev/null || true) N=$(tput sgr0 2>/dev/null || true)
step() { printf '\n%s==> %s%s\n' "$B" "$*" "$N"; }
show() { printf '%s$ %s%s\n' "$B" "$*" "$N"; "$@"; }
rshow() { printf '%s[router]$ %s%s\n' "$B" "$*" "$N"; in_ns "$router" "$@"; }

step "kernel $(uname -r): loading the modules built from this tree"
for m in nf_ila xt_ILA nf_conntrack_rtcache xt_rtcache; do
	if [ -e "$KMOD_DIR/$m.ko" ]; then load_module "$m" && echo "  $m loaded"; fi
done

step "topology: client <-> router <-> server (network namespaces)"
topo_crs
addr "$server" s0 3333:0:0:1::5/64
ip -n "$router" -6 route add 3333:0:0:1::/64 via fd00:2::2
ip -n "$client" -6 route add 2001:db8:0:3::/64 via fd00:1::1
# Background processes are started with ip netns exec itself, in a subshell
# (not in_ns, a function whose shell would wait for them): no shell waits for
# them, so cleanup_all stops them without "Killed" notes.
(ip netns exec "$server" socat -u TCP6-LISTEN:8080,reuseaddr,fork SYSTEM:'echo hello from the server at $SOCAT_SOCKADDR' &)
(ip netns exec "$server" socat -u UDP6-RECV:5353 OPEN:/tmp/demo-udp.txt,creat,append &)
wait_until 5 sh -c "ip netns exec $server ss -Hltn 'sport = :8080' | grep . >/dev/null"

if [ -e /sys/module/xt_ILA ]; then
	step "ILA translation with prefix rules (ip6tables-nft backend)"
	rshow ip6tables-nft -t mangle -A PREROUTING -d 2001:db8:0:3::/64 -j ILA \
		--src-pfx 2001:db8:0:3::/64 --dst-pfx 3333:0:0:1::/64
	rshow ip6tables-nft -t mangle -A POSTROUTING -s 3333:0:0:1::/64 -j ILA --translate src \
		--src-pfx 3333:0:0:1::/64 --dst-pfx 2001:db8:0:3::/64
	(ip netns exec "$server" timeout 60 tcpdump -l -n -c 6 -i s0 'tcp port 8080' \
		>"$BATS_TEST_TMPDIR/wire" 2>"$BATS_TEST_TMPDIR/wire.err" &)
	wait_until 10 grep -q 'listening on' "$BATS_TEST_TMPDIR/wire.err"
	printf '%s[client]$ socat - TCP6:[2001:db8:0:3::5]:8080%s\n' "$B" "$N"
	in_ns "$client" socat - 'TCP6:[2001:db8:0:3::5]:8080' </dev/null
	echo "  (the server answered from the locator address 3333:0:0:1::5; the client only knows 2001:db8:0:3::5)"
	wait_until 10 sh -c "[ \$(wc -l <$BATS_TEST_TMPDIR/wire) -ge 4 ]" || true
	echo "  on the server's wire (tcpdump -i s0):"
	head -n 4 "$BATS_TEST_TMPDIR/wire" | cut -c 17- | cut -c 1-100 | sed 's/^/    /'
	printf '%s[client]$ ping -c 2 2001:db8:0:3::5%s\n' "$B" "$N"
	in_ns "$client" ping -c 2 -i 0.3 -W 2 2001:db8:0:3::5 | sed -n '1,3p'
	rshow ip6tables-nft -t mangle -L -v -n
	rshow nft list chain ip6 mangle PREROUTING
	rshow ip6tables-nft-save -t mangle
	if command -v ip6tables-translate >/dev/null; then
		show ip6tables-translate -t mangle -A PREROUTING -d 2001:db8:0:3::/64 -j ILA \
			--src-pfx 2001:db8:0:3::/64 --dst-pfx 3333:0:0:1::/64
	fi

	if [ -e /sys/module/nf_ila ] && command -v ilactl >/dev/null; then
		step "ILA identifier -> locator map (ilactl + -j ILA --map), watched by ilactl monitor"
		in_ns "$router" ip6tables-nft -t mangle -F PREROUTING
		printf '%s[router]$ ilactl monitor > monitor.log &%s\n' "$B" "$N"
		ip netns exec "$router" ilactl monitor >"$BATS_TEST_TMPDIR/monitor.log" &
		mon=$!
		disown $mon
		# the next change is seen once monitor waits for events
		wait_until 30 grep -q wait_for_more_packets /proc/$mon/wchan
		rshow ilactl map create hosts
		rshow ilactl map add hosts 0:0:0:5 3333:0:0:1
		rshow ilactl map add hosts 0:0:0:6 3333:0:0:2
		rshow ip6tables-nft -t mangle -A PREROUTING -d 2001:db8:0:3::/64 -j ILA --map hosts
		printf '%s[client]$ socat - TCP6:[2001:db8:0:3::5]:8080%s\n' "$B" "$N"
		in_ns "$client" socat - 'TCP6:[2001:db8:0:3::5]:8080' </dev/null
		printf '%s[client]$ echo datagram | socat - UDP6:[2001:db8:0:3::5]:5353%s\n' "$B" "$N"
		echo "datagram through the map" | in_ns "$client" socat - 'UDP6:[2001:db8:0:3::5]:5353'
		wait_until 5 grep -q datagram /tmp/demo-udp.txt && echo "  server received: $(cat /tmp/demo-udp.txt)"
		rshow ilactl -s map show hosts
		rshow ilactl -j map stats hosts
		rshow ilactl save
		echo "  (ilactl save prints every map with its entries, then every hook: ilactl restore reads it back)"

		step "ILA direct hooks: the same translation without any rule"
		in_ns "$router" ip6tables-nft -t mangle -F
		rshow ilactl hook add sir prerouting src-pfx 2001:db8:0:3::/64 map hosts miss drop
		rshow ilactl hook add back postrouting src-pfx 3333:0:0:1::/64 dst-pfx 2001:db8:0:3::/64
		printf '%s[client]$ socat - TCP6:[2001:db8:0:3::5]:8080%s\n' "$B" "$N"
		in_ns "$client" socat - 'TCP6:[2001:db8:0:3::5]:8080' </dev/null
		printf '%s[client]$ ping -c 2 2001:db8:0:3::5%s\n' "$B" "$N"
		in_ns "$client" ping -c 2 -i 0.3 -W 2 2001:db8:0:3::5 | sed -n '1,3p'
		rshow ilactl hook list
		printf '%s[router]$ nft list hooks | grep -B2 nf_ila%s\n' "$B" "$N"
		if ! in_ns "$router" nft list hooks 2>/dev/null | grep ila >/dev/null; then
			echo "  (this kernel, $(uname -r), is built without NETFILTER_NETLINK_HOOK: nft lists no hooks; on 6.12 it"
			echo "   shows ila_hook_slot_fn [nf_ila] once per point and priority)"
		else
			in_ns "$router" nft list hooks | grep -B2 'nf_ila' | sed 's/^/  /'
		fi
		rshow ilactl hook del sir
		rshow ilactl hook del back
		in_ns "$router" ilactl map destroy hosts
		echo "  what ilactl monitor printed meanwhile (a batch file: ilactl -b monitor.log replays it):"
		wait_until 10 grep -q 'hook del back' "$BATS_TEST_TMPDIR/monitor.log" || true
		sed 's/^/    /' "$BATS_TEST_TMPDIR/monitor.log"
		kill $mon 2>/dev/null || true
	fi
	in_ns "$router" ip6tables-nft -t mangle -F
fi

if [ -e /sys/module/nf_conntrack_rtcache ]; then
	step "rtcache: conntrack route cache on the router (conntrack + rp_filter=1)"
	in_ns "$router" sysctl -qw net.ipv4.conf.all.rp_filter=1 net.ipv4.conf.r0.rp_filter=1
	rshow iptables-nft -A FORWARD -m conntrack --ctstate ESTABLISHED,RELATED,NEW -j ACCEPT
	rshow sysctl net.netfilter.nf_conntrack_rtcache
	printf '%s[client]$ ping -c 20 -i 0.05 10.0.2.2%s\n' "$B" "$N"
	in_ns "$client" ping -c 20 -i 0.05 -W 2 10.0.2.2 | tail -2
	printf '%s[client]$ ping -c 20 -i 0.05 fd00:2::2%s\n' "$B" "$N"
	in_ns "$client" ping -c 20 -i 0.05 -W 2 fd00:2::2 | tail -2
	echo "  per-CPU statistics, summed by lnstat (hits: packets routed from the cache):"
	rshow lnstat -f nf_conntrack_rtcache -c 1 -i 1 || true	# (lnstat -c exits 1)
	rshow conntrack -L
	step "-m rtcache lets rpfilter skip its FIB lookup for cached flows"
	rshow iptables-nft -t mangle -A PREROUTING -m rtcache ! --cached -m rpfilter --invert -j DROP
	in_ns "$client" ping -c 10 -i 0.05 -W 2 10.0.2.2 | tail -2
	rshow iptables-nft -t mangle -L PREROUTING -v -n
	rshow sysctl -w net.netfilter.nf_conntrack_rtcache_flush=1
fi

step "done"
