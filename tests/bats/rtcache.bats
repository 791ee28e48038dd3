#!/usr/bin/env bats
# nf_conntrack_rtcache + xt_rtcache: route cache for forwarded connections.
#
#                     path A
#   client c0 ---- r0 router r1 ---- s0 server
#          c1 ---- r2        r3 ---- s1   lo: 10.0.9.9/32 fd00:9::9/128
#                     path B
#
#   client-router: c0/r0 10.0.1.0/24 fd00:1::/64, c1/r2 10.0.3.0/24 fd00:3::/64
#   router-server: r1/s0 10.0.2.0/24 fd00:2::/64, r3/s1 10.0.4.0/24 fd00:4::/64
#
# The router runs conntrack (an nft "ct state" rule) and rp_filter=1 and
# routes the service address via path A (10.0.2.2 / fd00:2::2). The client
# reaches the service via c0, or via c1 once its c0 route is removed; the
# server counts what arrives on s0 and s1 per family and drops UDP to port
# 5000 (no replies, no ICMP errors).
#
# The topology is built once for the file (process start-up is slow in the
# TCG guest); each test resets routes, sysctls and counters, uses its own
# UDP source ports and compares counter increases. RTC_LOOPS (default 50)
# sets the number of rounds of the two repetition tests, RTC_TEARDOWN_LOOPS
# (default 20) those of the netns teardown test.

load helpers
load rtcache_lib

setup_file() {
	OLD_UNREG_TIMEOUT=$(sysctl -n net.core.netdev_unregister_timeout_secs)
	export OLD_UNREG_TIMEOUT
	sysctl -qw net.core.netdev_unregister_timeout_secs=1
	load_module nf_conntrack_rtcache
	rtc_topo
	RTC_FILE_NSLIST=$(_ns_list)
	export RTC_FILE_NSLIST
}

teardown_file() {
	cleanup_all
	unload_module xt_rtcache
	unload_module nf_conntrack_rtcache
	unload_module xt_ILA
	unload_module nf_ila
	sysctl -qw net.core.netdev_unregister_timeout_secs="$OLD_UNREG_TIMEOUT"
}

setup() {
	load_module nf_conntrack_rtcache
	rtc_reset
}

teardown() {
	local pid xt
	for pid in ${BG_PIDS:-}; do
		kill "$pid" 2>/dev/null || true
	done
	if [ -z "${BATS_TEST_COMPLETED:-}" ]; then
		dump_ns "$client" "$router" "$server"
		cat "/proc/$RPID/net/stat/nf_conntrack_rtcache" >&2 || true
	fi
	for xt in ${XT_USED:-}; do
		rns "$router" "$xt" -t mangle -F
		rns "$router" "$xt" -t mangle -X
		rns "$router" "$xt" -F
	done
	[ -z "${RTC_UNDO:-}" ] || eval "$RTC_UNDO"
	cleanup_all	# namespaces a test made for itself
	unload_module xt_rtcache
}

# flow_check F : one UDP flow; hits climb, misses stay flat once established.
flow_check() {
	fam "$1"
	udp_send "$CLI" 4000 "$SRV" 5000 5
	# packet 1: unconfirmed conntrack; 2: miss + insert; 3..5: hits
	expect "hits after 5" "$(rtc_d hits)" -eq 3
	expect "misses after 5" "$(rtc_d misses)" -eq 1
	expect "inserts after 5" "$(rtc_d inserts)" -eq 1
	expect entries "$(rtc_stat entries)" -eq 1
	udp_send "$CLI" 4000 "$SRV" 5000 50
	expect hits "$(rtc_d hits)" -eq 53
	expect misses "$(rtc_d misses)" -eq 1
	expect inserts "$(rtc_d inserts)" -eq 1
	expect received "$(srv_count "s0v$F")" -eq 55
}

@test "module: sysctls per netns, stat file in lnstat format" {
	[ "$(rns "$router" busybox cat /proc/sys/net/netfilter/nf_conntrack_rtcache)" = 1 ]
	[ "$(stat -c %a /proc/sys/net/netfilter/nf_conntrack_rtcache_flush)" = 200 ]
	local lines
	mapfile -t lines <"/proc/$RPID/net/stat/nf_conntrack_rtcache"
	[ "${lines[0]}" = "entries hits misses inserts stale flushes reclaimed wrong_iif insert_failed churn_limited" ]
	[ "${#lines[@]}" -eq $(($(nproc) + 1)) ]
	command -v lnstat >/dev/null || skip "lnstat (iproute2) not installed"
	udp_send 10.0.1.2 4090 10.0.9.9 5000 5
	# lnstat exits 1 even when it worked: check what it printed (the first
	# column as is, the others as increases per second: 0 in one sample)
	run rns "$router" lnstat -f nf_conntrack_rtcache -k entries,inserts -c 1 -j
	echo "lnstat: $output" >&2
	[ "$output" = '{"entries":1,"inserts":0}' ]
}

@test "IPv4: hits climb and misses stay flat once a flow is established" {
	flow_check 4
}

@test "IPv6: hits climb and misses stay flat once a flow is established" {
	flow_check 6
}

@test "both directions of a ping are cached (IPv4 and IPv6)" {
	rns "$client" busybox ping -4 -q -A -c 10 10.0.9.9
	rns "$client" busybox ping -6 -q -A -c 10 fd00:9::9
	# per family: request 1 unconfirmed; reply 1 and request 2 miss
	expect hits "$(rtc_d hits)" -eq 34
	expect misses "$(rtc_d misses)" -eq 4
	expect entries "$(rtc_stat entries)" -eq 2
}

# route_change F : the cached route is dropped when the route changes.
route_change() {
	fam "$1"
	udp_send "$CLI" 4001 "$SRV" 5000 10
	expect "path A" "$(srv_count "s0v$F")" -eq 10
	ip -n "$router" route replace "$PFX" via "$NHB"
	udp_send "$CLI" 4001 "$SRV" 5000 10
	expect "path B after the change" "$(srv_count "s1v$F")" -eq 10
	expect "path A after the change" "$(srv_count "s0v$F")" -eq 10
	expect stale "$(rtc_d stale)" -ge 1
	# cached again, on the new path
	expect "hits before" "$(rtc_d hits)" -eq 17
	udp_send "$CLI" 4001 "$SRV" 5000 10
	expect "hits on path B" "$(rtc_d hits)" -eq 27
	expect "path B" "$(srv_count "s1v$F")" -eq 20
}

@test "IPv4: route change, traffic follows on the next packet" {
	route_change 4
}

@test "IPv6: route change, traffic follows on the next packet (cookie)" {
	route_change 6
}

# link_flap F : egress down drops the entries (released by the worker); up
# again re-caches.
link_flap() {
	fam "$1"
	udp_send "$CLI" 4002 "$SRV" 5000 5
	expect entries "$(rtc_stat entries)" -eq 1
	ip -n "$router" link set r1 down
	# released by the worker, without RTNL
	rwait 5 stat_is entries 0
	expect flushes "$(rtc_d flushes)" -ge 1
	udp_send "$CLI" 4002 "$SRV" 5000 5
	expect "received while down" "$(srv_count "s0v$F")" -eq 5
	rtc_routes	# up again; the kernel dropped the route with the link
	rwait 10 rns "$router" busybox ping "$IPF" -c 1 -W 1 "$NHA"
	local h
	h=$(rtc_d hits)
	udp_send "$CLI" 4002 "$SRV" 5000 10
	expect "received after up" "$(srv_count "s0v$F")" -eq 15
	expect "hits after up" "$(rtc_d hits)" -ge $((h + 8))
}

@test "IPv4: egress link down/up" {
	link_flap 4
}

@test "IPv6: egress link down/up" {
	link_flap 6
}

# server_default_routes : the server's default routes of topo_crs
server_default_routes() {
	ip -n "$server" route replace default via 10.0.2.1
	ip -n "$server" -6 route replace default via fd00:2::1
}

# no_carrier : the router's r1 has lost its carrier
no_carrier() { ip -n "$router" link show r1 | grep -q NO-CARRIER; }

# carrier_loss F : path A's far end goes down, so r1 loses its carrier but
# stays up with its routes, which the kernel marks linkdown; with
# ignore_routes_with_linkdown the FIB then chooses path B (a worse route),
# and so must a cached flow, on its next packet. Back on path A when the
# carrier returns.
carrier_loss() {
	fam "$1"
	local conf=/proc/sys/net/ipv$F/conf
	# (printf, one write without a newline: 6.1's IPv6 handler reports a
	# successful write of this sysctl as 1 byte written, and the newline
	# then meets EINVAL)
	RTC_UNDO='ip -n "$server" link set s0 up; server_default_routes
		ip -n "$router" route del '"$PFX"' via '"$NHB"' metric 2000 2>/dev/null
		rns "$router" busybox sh -c "printf 0 >'"$conf"'/all/ignore_routes_with_linkdown
			printf 0 >'"$conf"'/r1/ignore_routes_with_linkdown"; true'
	rns "$server" busybox sh -c 'echo 1 >/proc/sys/net/ipv6/conf/s0/keep_addr_on_down'
	rns "$router" busybox sh -c "printf 1 >$conf/all/ignore_routes_with_linkdown
		printf 1 >$conf/r1/ignore_routes_with_linkdown"
	expect "ignore_routes_with_linkdown on r1" \
		"$(rns "$router" busybox cat "$conf/r1/ignore_routes_with_linkdown")" -eq 1
	ip -n "$router" route add "$PFX" via "$NHB" metric 2000
	udp_send "$CLI" 4170 "$SRV" 5000 5
	expect "hits before" "$(rtc_d hits)" -eq 3
	ip -n "$server" link set s0 down
	rwait 5 no_carrier
	udp_send "$CLI" 4170 "$SRV" 5000 5
	expect "received on path B without carrier on A" "$(srv_count "s1v$F")" -eq 5
	expect "received on path A" "$(srv_count "s0v$F")" -eq 5
	ip -n "$server" link set s0 up
	# (s0 down took the server's default routes with it: the later tests'
	# TCP needs them back)
	server_default_routes
	rwait 10 eval '! no_carrier'
	rwait 10 rns "$router" busybox ping "$IPF" -c 1 -W 1 "$NHA"
	udp_send "$CLI" 4170 "$SRV" 5000 5
	expect "received on path A again" "$(srv_count "s0v$F")" -eq 10
	expect "received on path B" "$(srv_count "s1v$F")" -eq 5
}

@test "IPv4: carrier loss on the egress link moves cached flows to the backup route (ignore_routes_with_linkdown)" {
	carrier_loss 4
}

@test "IPv6: carrier loss on the egress link moves cached flows to the backup route (ignore_routes_with_linkdown)" {
	carrier_loss 6
}

@test "IPv6: a path MTU exception on another route leaves cached routes valid" {
	RTC_UNDO='ip -n "$router" -6 route flush cache 2>/dev/null; true'
	fam 6
	udp_send "$CLI" 4140 "$SRV" 5000 5
	expect "hits after 5" "$(rtc_d hits)" -eq 3
	# the router learns an exception on its client-side route: a Packet
	# Too Big quoting an echo request it sent to fd00:1::77
	rns "$client" perl "$BATS_TEST_DIRNAME/icmp6_ptb.pl" fd00:1::1 fd00:1::1 fd00:1::77 1400
	rwait 5 pmtu_exception fd00:1::77 1400
	# the service's route is another fib6 node: its cookie still holds
	udp_send "$CLI" 4140 "$SRV" 5000 5
	expect hits "$(rtc_d hits)" -eq 8
	expect stale "$(rtc_d stale)" -eq 0
	expect misses "$(rtc_d misses)" -eq 1
	expect received "$(srv_count s0v6)" -eq 10
}

@test "traffic to the router itself is left to the kernel: recorded once as a pass, never served" {
	RTC_UNDO='rns "$router" nft delete table inet rtl 2>/dev/null; true'
	rns "$router" nft -f - <<-'EOF'
	table inet rtl {
		chain in {
			type filter hook input priority 0;
			udp dport 5555 counter
		}
	}
	EOF
	udp_send 10.0.1.2 4150 10.0.1.1 5555 10
	udp_send fd00:1::2 4150 fd00:1::1 5555 10
	local n
	n=$(rns "$router" nft list chain inet rtl in | sed -n 's/.*counter packets \([0-9]*\).*/\1/p')
	expect "delivered locally" "$n" -eq 20
	expect hits "$(rtc_d hits)" -eq 0
	# packet 1 of each: unconfirmed; packet 2: routed once by the cache
	expect misses "$(rtc_d misses)" -eq 2
	expect entries "$(rtc_stat entries)" -eq 2
}

rpf_drops() {
	rns "$router" busybox cat /proc/net/netstat |
		awk '/^TcpExt:/ { if (!n) { for (i = 1; i <= NF; i++) if ($i == "IPReversePathFilter") n = i } else print $n }'
}

@test "IPv4: second ingress interface is not served from the cache, rp_filter drops it" {
	local rpf0
	udp_send 10.0.1.2 4003 10.0.9.9 5000 10
	expect "received via c0" "$(srv_count s0v4)" -eq 10
	expect "hits via c0" "$(rtc_d hits)" -eq 8
	rpf0=$(rpf_drops)
	# same connection, same source address, now arriving on r2
	ip -n "$client" route del 10.0.9.9/32 via 10.0.1.1 metric 10
	udp_send 10.0.1.2 4003 10.0.9.9 5000 20
	expect "received via c1 (spoofed)" "$(srv_count s0v4)" -eq 10
	expect hits "$(rtc_d hits)" -eq 8
	expect wrong_iif "$(rtc_d wrong_iif)" -eq 20
	expect "rp_filter drops" "$(rpf_drops)" -ge $((rpf0 + 20))
	# control: without rp_filter the same packets pass, and get cached
	rns "$router" busybox sysctl -qw net.ipv4.conf.all.rp_filter=0
	udp_send 10.0.1.2 4003 10.0.9.9 5000 10
	expect "received via c1 without rp_filter" "$(srv_count s0v4)" -eq 20
	expect "hits via r2" "$(rtc_d hits)" -eq 17
	# rp_filter on again: the flow cached without it is checked again
	rns "$router" busybox sysctl -qw net.ipv4.conf.all.rp_filter=1
	udp_send 10.0.1.2 4003 10.0.9.9 5000 5
	expect "received via c1 with rp_filter again" "$(srv_count s0v4)" -eq 20
	expect "hits via r2 with rp_filter again" "$(rtc_d hits)" -eq 17
}

@test "IPv6: second ingress interface is not served from the cache, rpfilter drops it" {
	udp_send fd00:1::2 4003 fd00:9::9 5000 10
	expect "received via c0" "$(srv_count s0v6)" -eq 10
	expect "hits via c0" "$(rtc_d hits)" -eq 8
	# same connection, now arriving on r2: not served, routed, re-cached
	# (IPv6 has no rp_filter sysctl)
	ip -n "$client" route del fd00:9::9/128 via fd00:1::1 metric 10
	udp_send fd00:1::2 4003 fd00:9::9 5000 10
	expect "received via c1" "$(srv_count s0v6)" -eq 20
	expect wrong_iif "$(rtc_d wrong_iif)" -eq 1
	expect "hits via r2" "$(rtc_d hits)" -eq 17
	# with reverse-path filtering they are dropped
	XT_USED=ip6tables-legacy
	rns "$router" ip6tables-legacy -t mangle -A PREROUTING -m rpfilter --invert -j DROP
	udp_send fd00:1::2 4003 fd00:9::9 5000 10
	expect "received via c1 with rpfilter" "$(srv_count s0v6)" -eq 20
	expect "rpfilter drops" "$(rule_pkts ip6tables-legacy 1)" -eq 10
}

@test "sysctl flush drops the entries, sysctl off stops the cache" {
	local h i
	udp_send 10.0.1.2 4004 10.0.9.9 5000 5
	udp_send fd00:1::2 4004 fd00:9::9 5000 5
	expect entries "$(rtc_stat entries)" -eq 2
	rns "$router" busybox sysctl -qw net.netfilter.nf_conntrack_rtcache_flush=1
	expect "entries after flush" "$(rtc_stat entries)" -eq 0
	expect flushes "$(rtc_d flushes)" -eq 2
	run rns "$router" busybox cat /proc/sys/net/netfilter/nf_conntrack_rtcache_flush
	[ "$status" -ne 0 ]
	# refilled by the next packet
	udp_send 10.0.1.2 4004 10.0.9.9 5000 3
	expect "entries after refill" "$(rtc_stat entries)" -eq 1
	# off: entries dropped, nothing cached or served
	rns "$router" busybox sysctl -qw net.netfilter.nf_conntrack_rtcache=0
	expect "entries when off" "$(rtc_stat entries)" -eq 0
	h=$(rtc_d hits) i=$(rtc_d inserts)
	udp_send 10.0.1.2 4004 10.0.9.9 5000 10
	expect "hits when off" "$(rtc_d hits)" -eq "$h"
	expect "inserts when off" "$(rtc_d inserts)" -eq "$i"
	expect "received when off" "$(srv_count s0v4)" -eq 18
	run rns "$router" busybox sh -c 'echo 2 >/proc/sys/net/netfilter/nf_conntrack_rtcache'
	[ "$status" -ne 0 ]
	# on again
	rns "$router" busybox sysctl -qw net.netfilter.nf_conntrack_rtcache=1
	udp_send 10.0.1.2 4004 10.0.9.9 5000 5
	expect "hits when on" "$(rtc_d hits)" -eq $((h + 4))
	# per netns: the client netns was not switched off
	[ "$(rns "$client" busybox cat /proc/sys/net/netfilter/nf_conntrack_rtcache)" = 1 ]
}

# moved_setup : a second home for the IPv6 service, fd00:a::9 on the
# server's lo, reached via path B; counted as "s1v6moved".
moved_setup() {
	ip -n "$server" -6 addr replace fd00:a::9/128 dev lo nodad
	ip -n "$router" -6 route replace fd00:a::9/128 via fd00:4::2
	rns "$server" nft insert rule inet cnt pre iifname s1 ip6 daddr fd00:a::9 counter comment '"s1v6moved"'
	ip -n "$client" -6 route replace fd00:99::/64 via fd00:1::1
}

# moved_check HOW PORT : 5 datagrams to fd00:99::9 reach fd00:9::9 via path
# A (and are cached); then HOW moves the translation to fd00:a::9 and the
# next 10 must all go via path B, none via path A.
moved_check() {
	local a0 b0 h
	a0=$(srv_count s0v6) b0=$(srv_count s1v6moved) h=$(rtc_d hits)
	udp_send fd00:1::2 "$2" fd00:99::9 5000 5
	expect "path A before" "$(srv_count s0v6)" -eq $((a0 + 5))
	expect "hits before" "$(rtc_d hits)" -ge $((h + 3))
	"$1"
	udp_send fd00:1::2 "$2" fd00:99::9 5000 10
	expect "path B after $1" "$(srv_count s1v6moved)" -eq $((b0 + 10))
	expect "path A after $1" "$(srv_count s0v6)" -eq $((a0 + 5))
	# and the new destination is cached in turn
	h=$(rtc_d hits)
	udp_send fd00:1::2 "$2" fd00:99::9 5000 10
	expect "hits on the new route" "$(rtc_d hits)" -ge $((h + 10))
	expect "path B" "$(srv_count s1v6moved)" -eq $((b0 + 20))
}

move_ila_map() { rns "$router" ilactl map replace moved 0:0:0:9 fd00:a:0:0; }
move_ila_rule() {
	rns "$router" ip6tables -t mangle -R PREROUTING 1 -j ILA \
		--src-pfx fd00:99::/64 --dst-pfx fd00:a::/64
}
move_nft() {
	rns "$router" nft flush chain ip6 rw pre
	rns "$router" nft add rule ip6 rw pre ip6 daddr fd00:99::9 ip6 daddr set fd00:a::9
}

@test "the route follows a PREROUTING rewrite that changed mid-flow (ILA map replace, ILA rule, nft payload)" {
	load_module xt_ILA
	moved_setup
	XT_USED=ip6tables
	# -j ILA --map, then ilactl map replace
	rns "$router" ilactl map create moved
	rns "$router" ilactl map add moved 0:0:0:9 fd00:9:0:0
	rns "$router" ip6tables -t mangle -A PREROUTING -d fd00:99::/64 -j ILA --map moved
	moved_check move_ila_map 4100
	rns "$router" ip6tables -t mangle -F
	rns "$router" ilactl map destroy moved
	# a static -j ILA rule, replaced
	rns "$router" ip6tables -t mangle -A PREROUTING -j ILA --src-pfx fd00:99::/64 --dst-pfx fd00:9::/64
	moved_check move_ila_rule 4101
	rns "$router" ip6tables -t mangle -F
	# an nft payload rewrite, replaced
	rns "$router" nft -f - <<-'EOF'
	table ip6 rw {
		chain pre {
			type filter hook prerouting priority -150; policy accept;
			ip6 daddr fd00:99::9 ip6 daddr set fd00:9::9
		}
	}
	EOF
	moved_check move_nft 4103
	rns "$router" nft delete table ip6 rw
}

@test "FORWARD mangling (DSCP, CONNMARK --save-mark) does not poison the entry" {
	XT_USED="iptables ip6tables"
	local xt
	for xt in iptables ip6tables; do
		rns "$router" "$xt" -t mangle -A FORWARD -j DSCP --set-dscp 10
		rns "$router" "$xt" -t mangle -A FORWARD -j MARK --set-mark 7
		rns "$router" "$xt" -t mangle -A FORWARD -j CONNMARK --save-mark
	done
	# the routing inputs are those of PRE_ROUTING: DSCP 0, mark 0
	udp_send 10.0.1.2 4110 10.0.9.9 5000 10
	udp_send fd00:1::2 4110 fd00:9::9 5000 10
	expect hits "$(rtc_d hits)" -eq 16
	expect misses "$(rtc_d misses)" -eq 2
	expect received "$(($(srv_count s0v4) + $(srv_count s0v6)))" -eq 20
}

@test "fwmark policy routing, CONNMARK --restore-mark in PREROUTING: a connection marked mid-flow takes the marked route at once" {
	XT_USED="iptables ip6tables"
	RTC_UNDO='for f in -4 -6; do ip -n "$router" $f rule del priority 100 2>/dev/null; ip -n "$router" $f route flush table 100 2>/dev/null; done; true'
	local f a0 b0
	for f in 4 6; do
		fam $f
		ip -n "$router" $IPF rule add fwmark 1 table 100 priority 100
		ip -n "$router" $IPF route add $PFX via $NHB table 100
		rns "$router" $XT -t mangle -A PREROUTING -j CONNMARK --restore-mark
		a0=$(srv_count s0v$f) b0=$(srv_count s1v$f)
		udp_send $CLI 4120 $SRV 5000 5
		expect "IPv$f path A before" "$(srv_count s0v$f)" -eq $((a0 + 5))
		# the connection gets mark 1: restored into every next packet
		# before routing, which then takes table 100 (path B)
		rns "$router" conntrack -U -f ipv$f -p udp --sport 4120 --mark 1 2>&1 |
			grep -q '1 flow entries have been updated'
		udp_send $CLI 4120 $SRV 5000 10
		expect "IPv$f path B after the mark" "$(srv_count s1v$f)" -eq $((b0 + 10))
		expect "IPv$f path A after the mark" "$(srv_count s0v$f)" -eq $((a0 + 5))
		ip -n "$router" $IPF rule del priority 100
		ip -n "$router" $IPF route flush table 100
	done
}

@test "the route follows a DNPT rule replaced mid-flow (stock ip6t_NPT, checksum-neutral prefixes)" {
	modprobe ip6t_NPT
	XT_USED=ip6tables
	# fd09::/64 -> fd00:9::/64 and -> fd00:8:1::/64 are checksum-neutral
	# (equal one's-complement sums), so DNPT keeps the interface ID: the
	# service is fd00:9::9 before and fd00:8:1::9 (path B) after.
	ip -n "$server" -6 addr replace fd00:8:1::9/128 dev lo nodad
	ip -n "$router" -6 route replace fd00:8:1::9/128 via fd00:4::2
	rns "$server" nft insert rule inet cnt pre iifname s1 ip6 daddr fd00:8:1::9 counter comment '"s1v6npt"'
	ip -n "$client" -6 route replace fd09::/64 via fd00:1::1
	rns "$router" ip6tables -t mangle -A PREROUTING -d fd09::/64 -j DNPT --src-pfx fd09::/64 --dst-pfx fd00:9::/64
	local a0 b0 h
	a0=$(srv_count s0v6) b0=$(srv_count s1v6npt) h=$(rtc_d hits)
	udp_send fd00:1::2 4130 fd09::9 5000 5
	expect "path A before" "$(srv_count s0v6)" -eq $((a0 + 5))
	expect "hits before" "$(rtc_d hits)" -ge $((h + 3))
	rns "$router" ip6tables -t mangle -R PREROUTING 1 -d fd09::/64 -j DNPT --src-pfx fd09::/64 --dst-pfx fd00:8:1::/64
	udp_send fd00:1::2 4130 fd09::9 5000 10
	expect "path B after the rule change" "$(srv_count s1v6npt)" -eq $((b0 + 10))
	expect "path A after the rule change" "$(srv_count s0v6)" -eq $((a0 + 5))
}

@test "SRv6 End on the router: the re-routed packets are never cached, the segment works from the second packet on" {
	RTC_UNDO='ip -n "$client" -6 route del fd00:9::9/128 metric 5 2>/dev/null; ip -n "$router" -6 route del fd00:5::1/128 2>/dev/null; true'
	rns "$router" busybox sh -c '
		echo 1 >/proc/sys/net/ipv6/conf/all/seg6_enabled
		echo 1 >/proc/sys/net/ipv6/conf/r0/seg6_enabled'
	ip -n "$router" -6 route add fd00:5::1/128 encap seg6local action End dev r0
	# the client steers the service through the router's SID fd00:5::1
	ip -n "$client" -6 route add fd00:9::9/128 encap seg6 mode inline segs fd00:5::1 \
		via fd00:1::1 dev c0 metric 5
	local a0 h m
	a0=$(srv_count s0v6) h=$(rtc_d hits) m=$(rtc_d misses)
	udp_send fd00:1::2 4135 fd00:9::9 5000 10
	# End rewrites the destination after PRE_ROUTING: the SID's route is
	# recorded once as one the kernel must handle itself (a "pass"), never
	# served; every packet is routed by the kernel (End applied) and
	# delivered
	expect "delivered via path A" "$(srv_count s0v6)" -eq $((a0 + 10))
	expect "hits" "$(rtc_d hits)" -eq "$h"
	expect "misses (the first confirmed packet only)" "$(rtc_d misses)" -le $((m + 1))
	expect entries "$(rtc_stat entries)" -le 1
	ip -n "$client" -6 route del fd00:9::9/128 metric 5
	ip -n "$router" -6 route del fd00:5::1/128
}

@test "ECMP (L4 hash): every flow stays whole on the path its first, uncached packet took" {
	# 16 one-way flows: on a slow VM the first ones' conntracks would
	# expire (30 s unreplied UDP) while their entries wait for the
	# reclaim, and the entry cap (never more entries than connections)
	# would refuse the later flows' first inserts
	local udp_to
	udp_to=$(rns "$router" busybox cat /proc/sys/net/netfilter/nf_conntrack_udp_timeout)
	RTC_UNDO='rtc_routes; rns "$router" busybox sh -c "echo 0 >/proc/sys/net/ipv4/fib_multipath_hash_policy; echo 0 >/proc/sys/net/ipv6/fib_multipath_hash_policy; echo '"$udp_to"' >/proc/sys/net/netfilter/nf_conntrack_udp_timeout"'
	rns "$router" busybox sh -c '
		echo 600 >/proc/sys/net/netfilter/nf_conntrack_udp_timeout
		echo 1 >/proc/sys/net/ipv4/fib_multipath_hash_policy
		echo 1 >/proc/sys/net/ipv6/fib_multipath_hash_policy'
	ip -n "$router" -batch - <<-'EOF'
	route replace 10.0.9.9/32 nexthop via 10.0.2.2 nexthop via 10.0.4.2
	route replace fd00:9::9/128 nexthop via fd00:2::2 nexthop via fd00:4::2
	EOF
	local f p want da db h used_a=0 used_b=0
	for f in 4 6; do
		fam $f
		for p in 4140 4141 4142 4143 4144 4145 4146 4147; do
			da=$(srv_count s0v$f) db=$(srv_count s1v$f) h=$(rtc_d hits)
			udp_send $CLI $p $SRV 5000 6
			da=$(($(srv_count s0v$f) - da)) db=$(($(srv_count s1v$f) - db))
			# all 6 on one path: packets 3..6 served from the cache
			expect "IPv$f sport $p: all on one path (A $da, B $db)" "$((da * db))" -eq 0
			expect "IPv$f sport $p: delivered" "$((da + db))" -eq 6
			expect "IPv$f sport $p: hits" "$(rtc_d hits)" -ge $((h + 4))
			[ $da = 0 ] || used_a=1
			[ $db = 0 ] || used_b=1
			if [ $f = 4 ]; then
				# and it is the FIB's choice for the 5-tuple (IPv6 packets
				# carry their socket's random flow hash, which the ECMP
				# choice uses and `ip route get` can't know)
				want=$(ip -n "$router" -4 route get $SRV from $CLI iif r0 ipproto udp \
					sport $p dport 5000 | sed -n 's/.* via \([^ ]*\) .*/\1/p')
				expect "IPv4 sport $p: FIB next hop $want" "$([ $da = 6 ] && echo $NHA || echo $NHB)" = "$want"
			fi
		done
	done
	# 16 flows did not all take one path
	[ $used_a = 1 ] && [ $used_b = 1 ]
	# inner-header hashing (policy 2) may spread the inner flows of one
	# tunnel connection over the paths: multipath routes are never served
	rns "$router" busybox sh -c '
		echo 2 >/proc/sys/net/ipv4/fib_multipath_hash_policy
		echo 2 >/proc/sys/net/ipv6/fib_multipath_hash_policy'
	h=$(rtc_d hits)
	udp_send 10.0.1.2 4150 10.0.9.9 5000 6
	udp_send fd00:1::2 4150 fd00:9::9 5000 6
	expect "policy 2: hits" "$(rtc_d hits)" -eq "$h"
	eval "$RTC_UNDO"
}

# l3_path LABEL PAD SPORT : one datagram fd00:1::2 -> fd00:9::9 with flow
# label LABEL (PAD=1: behind a Destination Options header); prints the
# path it took, A or B (or none)
l3_path() {
	local da db
	da=$(srv_count s0v6) db=$(srv_count s1v6)
	rns "$client" env UDP6_FLOWLABEL="$1" UDP6_PADOPT="$2" \
		perl "$BATS_TEST_DIRNAME/udp6_raw.pl" fd00:1::2 fd00:9::9 "$3" 5000 >/dev/null
	da=$(($(srv_count s0v6) - da)) db=$(($(srv_count s1v6) - db))
	if [ "$da" = 1 ]; then echo A; elif [ "$db" = 1 ]; then echo B; else echo none; fi
}

@test "IPv6 ECMP (L3 hash): the first next header is a routing input, a datagram behind an extension header takes the kernel's path" {
	# ip6_route_input() hashes the first next header (flowi6_proto) with
	# the addresses and the flow label: datagrams of one connection with
	# and without a Destination Options header may take different paths
	RTC_UNDO='rtc_routes; rns "$router" busybox sh -c "echo 1 >/proc/sys/net/netfilter/nf_conntrack_rtcache"'
	rns "$router" busybox sh -c 'echo 0 >/proc/sys/net/ipv6/fib_multipath_hash_policy'
	ip -n "$router" -6 route replace fd00:9::9/128 nexthop via fd00:2::2 nexthop via fd00:4::2
	# without the cache: a flow label whose two datagrams part ways
	rns "$router" busybox sh -c 'echo 0 >/proc/sys/net/netfilter/nf_conntrack_rtcache'
	local l label= plain pad i
	for ((l = 1; l <= 24 && !label; l++)); do
		plain=$(l3_path $l 0 4180) pad=$(l3_path $l 1 4180)
		expect "label $l: delivered without the header" "$plain" != none
		expect "label $l: delivered with it" "$pad" != none
		[ "$plain" = "$pad" ] || label=$l
	done
	echo "# flow label $label: without the header path $plain, with it $pad" >&3
	[ -n "$label" ]
	# with the cache: a connection recorded without the header, then one
	# datagram with it, then without again: each on the kernel's path
	rns "$router" busybox sh -c 'echo 1 >/proc/sys/net/netfilter/nf_conntrack_rtcache'
	for i in 1 2 3 4; do
		expect "datagram $i without the header" "$(l3_path "$label" 0 4181)" = "$plain"
	done
	expect "hits" "$(rtc_d hits)" -ge 2
	expect "with the header" "$(l3_path "$label" 1 4181)" = "$pad"
	expect "without it again" "$(l3_path "$label" 0 4181)" = "$plain"
}

# mac NS DEV : the MAC address of DEV in NS.
mac() { ip -n "$1" -br link show "$2" | awk '{ print $3 }'; }

@test "an nf_conn recycled from an IPv4 to an IPv6 connection never gets the IPv4 route (family in the key, route family checked)" {
	# IPv4 flow 10.0.1.2 -> 10.0.9.9, then its conntrack freed and at once an
	# IPv6 flow a00:102:: -> a00:909:: (the same address bytes, zero-filled
	# as an IPv4 key is) from the same port, flow label 0, on the same
	# interface: its nf_conn is mostly the one just freed, found with the
	# IPv4 entry under it (rtc_reuse.pl tries until that happens).
	command -v taskset >/dev/null || skip "taskset (util-linux) not installed"
	RTC_UNDO='ip -n "$client" -6 route del a00:909::/128; ip -n "$router" -6 route del a00:909::/128
		ip -n "$client" neigh del fd00:1::1 dev c0; ip -n "$client" neigh del 10.0.1.1 dev c0
		ip -n "$router" neigh del fd00:2::2 dev r1; ip -n "$router" neigh del 10.0.2.2 dev r1; true'
	local r0 s0 attempts=30 out last n
	r0=$(mac "$router" r0) s0=$(mac "$server" s0)
	# static neighbours: every packet is forwarded the moment it is sent
	ip -n "$client" -batch - <<-EOF
	addr replace a00:102::/128 dev c0 nodad
	route replace a00:909::/128 via fd00:1::1 dev c0
	neigh replace fd00:1::1 lladdr $r0 dev c0 nud permanent
	neigh replace 10.0.1.1 lladdr $r0 dev c0 nud permanent
	EOF
	ip -n "$router" -batch - <<-EOF
	route replace a00:909::/128 via fd00:2::2
	neigh replace fd00:2::2 lladdr $s0 dev r1 nud permanent
	neigh replace 10.0.2.2 lladdr $s0 dev r1 nud permanent
	EOF
	ip -n "$server" -6 addr replace a00:909::/128 dev lo nodad
	rns "$server" nft insert rule inet cnt pre iifname s0 ip6 daddr a00:909:: counter comment '"s0v6r"'
	rns "$router" conntrack -C >/dev/null	# ctnetlink loaded
	rtc_base
	out=$(taskset -c 0 perl "$BATS_TEST_DIRNAME/rtc_reuse.pl" "$router" "$client" \
		10.0.1.2 10.0.9.9 a00:102:: a00:909:: 4200 $attempts)
	echo "$out" >&2
	last=$(tail -n 1 <<<"$out")
	n=$(wc -l <<<"$out")
	[[ "$last" == *" reused 1 "* ]] || { echo "no nf_conn reused in $attempts attempts" >&2; false; }
	# the IPv6 packet that found the IPv4 entry was routed, not served
	[[ "$last" == *" hit2 0" ]]
	expect stale "$(rtc_d stale)" -ge 1
	# every datagram of both families arrived, each where it belongs
	expect "IPv4 received" "$(srv_count s0v4)" -eq $((3 * n))
	expect "IPv6 received" "$(srv_count s0v6r)" -eq $((5 * n))
	# per attempt: IPv4 packet 3, IPv6 packets 3..5
	expect hits "$(rtc_d hits)" -eq $((4 * n))
}

@test "conntrack -F empties the table without traffic; never more entries than connections" {
	command -v conntrack >/dev/null || skip "conntrack tool not installed"
	local p
	for p in 4010 4011 4012 4013 4014; do
		udp_send 10.0.1.2 $p 10.0.9.9 5000 3
		udp_send fd00:1::2 $p fd00:9::9 5000 3
	done
	expect entries "$(rtc_stat entries)" -eq 10
	expect "entries <= conntracks" "$(rtc_stat entries)" -le \
		"$(rns "$router" conntrack -C)"
	rns "$router" conntrack -F 2>/dev/null
	rwait 5 stat_is entries 0
	expect reclaimed "$(rtc_d reclaimed)" -eq 10
	# a new connection after the flush is cached again
	udp_send 10.0.1.2 4010 10.0.9.9 5000 3
	expect "entries after" "$(rtc_stat entries)" -eq 1
}

# many_flows N : N two-datagram UDP flows per family from the client to the
# server (the second packet is the one cached), each from a new ephemeral
# port (bash's /dev/udp: one process for all).
many_flows() {
	rns "$client" bash -c "for ((i = 0; i < $1; i++)); do
		for d in 10.0.9.9 fd00:9::9; do
			exec 5>/dev/udp/\$d/5000; echo x >&5; echo x >&5; exec 5>&-
		done
	done"
}

@test "many flows, conntrack -F, nf_conntrack slab shrunk, flows again: no stale connection read (slub_debug, KFENCE)" {
	# The reclaim path must find out that a connection is gone by looking
	# it up, never by reading the nf_conn it saw last: after the flush the
	# objects are freed, and shrinking the slab hands their pages back
	# (slub_debug poisons them, KFENCE guards a sample). The kernel-log
	# gate of the suite fails on any report.
	local n=150 c round e total=0
	[ -e /sys/kernel/slab/nf_conntrack/shrink ]
	for round in 1 2; do
		many_flows $n
		# (an ephemeral port may come round twice: a few flows fewer)
		e=$(rtc_stat entries)
		expect "entries (round $round)" "$e" -ge $((2 * n * 9 / 10))
		expect "entries <= conntracks" "$e" -le "$(rns "$router" conntrack -C)"
		total=$((total + e))
		rns "$router" conntrack -F 2>/dev/null
		rwait 10 stat_is entries 0
		for c in /sys/kernel/slab/nf_conntrack /sys/kernel/slab/nf_conntrack_rtcache; do
			if [ -e "$c" ]; then echo 1 >"$c/shrink"; fi
		done
	done
	expect reclaimed "$(rtc_d reclaimed)" -eq "$total"
	# and the cache still works
	udp_send 10.0.1.2 4010 10.0.9.9 5000 3
	expect "entries after" "$(rtc_stat entries)" -eq 1
}

@test "rmmod during TCP transfers (IPv4 and IPv6): content intact, connections survive" {
	command -v socat >/dev/null || skip "socat not installed"
	local dir=$BATS_TEST_TMPDIR c4 c6 w4 w6 half=2000000
	head -c 4000000 /dev/urandom >"$dir/data"
	# The clients send what the test writes into a FIFO each: the first
	# half before the rmmod, the rest after it, so both transfers are open
	# across the rmmod however fast or slow the VM runs.
	mkfifo "$dir/in4" "$dir/in6"
	rns_bg "$server" socat -u TCP4-LISTEN:6000,reuseaddr OPEN:"$dir/out4",creat,trunc &
	BG_PIDS+=" $!"
	rns_bg "$server" socat -u TCP6-LISTEN:6001,reuseaddr OPEN:"$dir/out6",creat,trunc &
	BG_PIDS+=" $!"
	rwait 30 listening "${BG_PIDS##* }"
	rns_bg "$client" socat -u OPEN:"$dir/in4" TCP4:10.0.9.9:6000 &
	c4=$!
	rns_bg "$client" socat -u OPEN:"$dir/in6" TCP6:[fd00:9::9]:6001 &
	c6=$!
	BG_PIDS+=" $c4 $c6"
	exec {w4}>"$dir/in4" {w6}>"$dir/in6"
	head -c $half "$dir/data" >&"$w4"
	head -c $half "$dir/data" >&"$w6"
	rwait 20 stat_ge hits 300
	rmmod nf_conntrack_rtcache
	[ ! -e /sys/module/nf_conntrack_rtcache ]
	# both connections are still there and still running
	[ "$(rns "$router" conntrack -L -p tcp 2>/dev/null | grep -c "ESTABLISHED.*dport=600[01]")" -eq 2 ]
	kill -0 "$c4" && kill -0 "$c6"
	tail -c +$((half + 1)) "$dir/data" >&"$w4"
	tail -c +$((half + 1)) "$dir/data" >&"$w6"
	exec {w4}>&- {w6}>&-
	wait "$c4"
	wait "$c6"
	rwait 10 cmp -s "$dir/data" "$dir/out4"
	rwait 10 cmp -s "$dir/data" "$dir/out6"
}

@test "modprobe/rmmod $((${RTC_LOOPS:-50})) times under load" {
	local i
	rns_bg "$client" /usr/bin/ping -4 -q -i 0.005 10.0.9.9 &
	BG_PIDS+=" $!"
	rns_bg "$client" /usr/bin/ping -6 -q -i 0.005 fd00:9::9 &
	BG_PIDS+=" $!"
	for ((i = 0; i < ${RTC_LOOPS:-50}; i++)); do
		[ -e /sys/module/nf_conntrack_rtcache ] ||
			insmod "$KMOD_DIR/nf_conntrack_rtcache.ko"
		rwait 5 stat_ge hits 2
		rmmod nf_conntrack_rtcache
	done
}

@test "netns create/delete $((${RTC_LOOPS:-50})) times with cached routes" {
	local i rt cpid spid
	rns_bg "$client" busybox sleep 1000000 &
	cpid=$!
	rns_bg "$server" busybox sleep 1000000 &
	spid=$!
	BG_PIDS+=" $cpid $spid"
	for ((i = 0; i < ${RTC_LOOPS:-50}; i++)); do
		rt=rtc-loop-$i
		ip netns add "$rt"
		echo "$rt" >>"$(_ns_list)"
		# the previous round's links go away asynchronously
		rwait 10 dev_gone "$cpid" x
		rwait 10 dev_gone "$spid" y
		rtc_mini_router "$rt"
		rns "$client" busybox sh -c "
			busybox ping -4 -q -A -c 3 10.20.0.2 &&
			busybox ping -6 -q -A -c 3 fd20::2" >/dev/null
		rns "$rt" busybox cat /proc/net/stat/nf_conntrack_rtcache >"$BATS_TEST_TMPDIR/st"
		expect "entries in $rt" "$(rtc_file_stat "$BATS_TEST_TMPDIR/st" entries)" -eq 2
		ip netns del "$rt"
	done
	rwait 10 dev_gone "$cpid" x
	no_refcount_wait
}

@test "netns teardown while traffic and reclaim run, cached routes to destinations that became unreachable: ${RTC_TEARDOWN_LOOPS:-20} times" {
	# Each round: a router netns with conntrack, a short UDP timeout (the
	# reclaim worker unlinks entries all the time) and the client sending
	# new and long-lived flows to a routed address, a connected one and two
	# never routed ones (rtc_flows.pl). The routed address's route is then
	# deleted: its established flow now gets IPv6's ip6_null_entry, which
	# the cache records (held) for it. The netns is deleted with all that
	# running. Entries unlinked late free their routes in RCU callbacks;
	# ip6_null_entry goes with the netns's IPv6 routing state, so the
	# module waits for them (exit_batch: rcu_barrier). The suite's kernel-
	# log gate (KFENCE on 6.12, slub_debug on the first kernel) and the
	# refcount check below fail on a use after free or a leaked route.
	local i rt apid cpid spid loops=${RTC_TEARDOWN_LOOPS:-20} st=$BATS_TEST_TMPDIR/st
	rns_bg "$client" busybox sleep 1000000 &
	cpid=$!
	rns_bg "$server" busybox sleep 1000000 &
	spid=$!
	BG_PIDS+=" $cpid $spid"
	ip -n "$server" -6 addr add fd40::1/128 dev lo nodad
	RTC_UNDO='ip -n "$server" -6 addr del fd40::1/128 dev lo'
	# traffic for the whole test; sends fail while a round's links are missing
	rns_bg "$client" perl "$BATS_TEST_DIRNAME/rtc_flows.pl" 2 \
		10.20.0.2 fd20::2 fd40::1 10.30.0.1 fd30::1 &
	BG_PIDS+=" $!"
	for ((i = 0; i < loops; i++)); do
		rt=rtc-td-$i
		ip netns add "$rt"
		echo "$rt" >>"$(_ns_list)"
		rwait 10 dev_gone "$cpid" x
		rwait 10 dev_gone "$spid" y
		rtc_mini_router "$rt" "route add fd40::/64 via fd20::2" \
			"$(printf 'route add %s via 10.10.0.1\n' 10.30.0.0/24
			   printf 'route add %s via fd10::1\n' fd30::/64 fd40::/64)" \
			"echo 2 >/proc/sys/net/netfilter/nf_conntrack_udp_timeout"
		rns_bg "$rt" busybox sleep 1000000 &
		apid=$!
		# cached flows to every routed destination, then the route to
		# fd40::1 goes: its long-lived flow is recorded with the null route
		rwait 60 rtc_file_ge "/proc/$apid/net/stat/nf_conntrack_rtcache" entries 6
		cp "/proc/$apid/net/stat/nf_conntrack_rtcache" "$st"
		ip -n "$rt" -6 route del fd40::/64
		rwait 60 rtc_file_gt "/proc/$apid/net/stat/nf_conntrack_rtcache" stale \
			"$(rtc_file_stat "$st" stale)"
		kill "$apid"
		wait "$apid" 2>/dev/null || true
		ip netns del "$rt"
	done
	rwait 10 dev_gone "$cpid" x
	no_refcount_wait
}

@test "a sender changing DSCP on every packet: recorded again at most 8 times a second per direction, every packet delivered" {
	# Every packet has other routing inputs, so each is a miss; recording
	# each would cost an allocation, a replace and an RCU callback per
	# packet. Past the 8th record in a second the packet is routed as
	# without the cache (churn_limited) and the entry stays.
	local f n=300 t0 secs ins
	for f in 4 6; do
		fam $f
		rtc_base
		t0=$EPOCHREALTIME
		rns "$client" perl -MSocket=:all -e '
			my ($fam, $src, $sport, $dst, $n) = @ARGV;
			my $v6 = $fam == 6;
			socket(my $s, $v6 ? AF_INET6 : AF_INET, SOCK_DGRAM, 0) or die "socket: $!";
			my $bind = $v6 ? pack_sockaddr_in6($sport, inet_pton(AF_INET6, $src))
				       : pack_sockaddr_in($sport, inet_pton(AF_INET, $src));
			my $to = $v6 ? pack_sockaddr_in6(5000, inet_pton(AF_INET6, $dst))
				     : pack_sockaddr_in(5000, inet_pton(AF_INET, $dst));
			bind($s, $bind) or die "bind: $!";
			for my $i (0 .. $n - 1) {
				my $tos = ($i % 63 + 1) << 2;	# DSCP 1..63, never two alike in a row
				if ($v6) { setsockopt($s, IPPROTO_IPV6, 67, $tos) or die "IPV6_TCLASS: $!" }
				else { setsockopt($s, IPPROTO_IP, IP_TOS, $tos) or die "IP_TOS: $!" }
				send($s, "d" x 32, 0, $to) or die "send: $!";
			}' $f $CLI 4300 $SRV $n
		rwait 30 eval '[ "$(srv_count s0v$f)" -ge $n ]'
		secs=$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%d", b - a + 1 }')
		ins=$(rtc_d inserts)
		echo "IPv$f: $n packets in <= $secs s: $(rtc_stats)" >&2
		expect "IPv$f received" "$(srv_count s0v$f)" -eq $n
		# packet 1 has no confirmed connection; every other one misses
		# (a DSCP value comes round again only 63 packets later)
		expect "IPv$f misses + hits" "$(($(rtc_d misses) + $(rtc_d hits)))" -eq $((n - 1))
		expect "IPv$f records + limited" "$((ins + $(rtc_d churn_limited)))" -eq "$(rtc_d misses)"
		# at most 8 per started second (the window runs from its first record)
		expect "IPv$f records" "$ins" -le $((8 * (secs + 1)))
	done
}

# ecmp_on : both paths as equal-cost next hops, L4 hash, long UDP timeout
# (RTC_UNDO restores); static neighbours for both gateways.
ecmp_on() {
	local udp_to s0 s1
	udp_to=$(rns "$router" busybox cat /proc/sys/net/netfilter/nf_conntrack_udp_timeout)
	s0=$(mac "$server" s0) s1=$(mac "$server" s1)
	RTC_UNDO='rtc_routes; ip -n "$router" neigh del 10.0.2.2 dev r1; ip -n "$router" neigh del 10.0.4.2 dev r3
		rns "$router" busybox sh -c "echo 0 >/proc/sys/net/ipv4/fib_multipath_hash_policy; echo 0 >/proc/sys/net/ipv6/fib_multipath_hash_policy; echo 0 >/proc/sys/net/ipv4/fib_multipath_use_neigh; echo '"$udp_to"' >/proc/sys/net/netfilter/nf_conntrack_udp_timeout"'
	rns "$router" busybox sh -c '
		echo 600 >/proc/sys/net/netfilter/nf_conntrack_udp_timeout
		echo 1 >/proc/sys/net/ipv4/fib_multipath_hash_policy
		echo 1 >/proc/sys/net/ipv6/fib_multipath_hash_policy'
	ip -n "$router" -batch - <<-EOF
	neigh replace 10.0.2.2 lladdr $s0 dev r1 nud permanent
	neigh replace 10.0.4.2 lladdr $s1 dev r3 nud permanent
	route replace 10.0.9.9/32 nexthop via 10.0.2.2 nexthop via 10.0.4.2
	route replace fd00:9::9/128 nexthop via fd00:2::2 nexthop via fd00:4::2
	EOF
}

# fib_nh SPORT : the router's IPv4 next hop for the client's flow from SPORT.
fib_nh() {
	ip -n "$router" -4 route get 10.0.9.9 from 10.0.1.2 iif r0 ipproto udp \
		sport "$1" dport 5000 | sed -n 's/.* via \([^ ]*\) .*/\1/p'
}

# ecmp_ports FIRST NA NB : NA source ports from FIRST up that the FIB sends
# on path A (10.0.2.2) and NB that it sends on path B, A's first (one `ip
# route get` batch for 64 ports): the hash seed is random per boot, so
# ports picked blindly may all take one path.
ecmp_ports() {
	local first=$1 na=$2 nb=$3 p a=() b=()
	while read -r p nh; do
		case $nh in
		10.0.2.2) [ ${#a[@]} -ge "$na" ] || a+=("$p") ;;
		10.0.4.2) [ ${#b[@]} -ge "$nb" ] || b+=("$p") ;;
		*) echo "port $p: next hop '$nh'" >&2; return 1 ;;
		esac
	done < <(paste -d' ' <(seq "$first" $((first + 63))) <(
		for ((p = first; p < first + 64; p++)); do
			echo "route get 10.0.9.9 from 10.0.1.2 iif r0 ipproto udp sport $p dport 5000"
		done | ip -n "$router" -batch - | sed -n 's/.* via \([^ ]*\) .*/\1/p'))
	[ ${#a[@]} -eq "$na" ] && [ ${#b[@]} -eq "$nb" ] ||
		{ echo "64 ports gave ${#a[@]} on path A, ${#b[@]} on path B" >&2; return 1; }
	echo "${a[*]} ${b[*]}"
}

@test "ECMP: a multipath hash policy change re-decides cached flows (they follow the FIB's new choice)" {
	ecmp_on
	local p f da db ports
	# 8 flows under the L4 hash, 4 on each path
	ports=$(ecmp_ports 4310 4 4)
	for p in $ports; do
		for f in 4 6; do
			fam $f
			udp_send $CLI $p $SRV 5000 4
		done
	done
	# L3 hash: one path for every flow between these addresses
	rns "$router" busybox sh -c '
		echo 0 >/proc/sys/net/ipv4/fib_multipath_hash_policy
		echo 0 >/proc/sys/net/ipv6/fib_multipath_hash_policy'
	rtc_base
	for p in $ports; do
		fam 4
		da=$(srv_count s0v4) db=$(srv_count s1v4)
		udp_send $CLI $p $SRV 5000 4
		da=$(($(srv_count s0v4) - da)) db=$(($(srv_count s1v4) - db))
		expect "sport $p: where the FIB sends it now ($(fib_nh $p)): A $da B $db" \
			"$([ "$(fib_nh $p)" = 10.0.2.2 ] && echo $da || echo $db)" -eq 4
		fam 6
		udp_send $CLI $p $SRV 5000 4
	done
	# each flow of both families was routed again once, then cached again
	# (IPv6: also because each udp_send is a new socket with another flow
	# label; IPv4 flows miss only because the cache saw the change)
	expect misses "$(rtc_d misses)" -eq 16
	expect hits "$(rtc_d hits)" -eq 48
}

@test "ECMP with fib_multipath_use_neigh: a gateway whose neighbour failed gets no cached flow" {
	ecmp_on
	local p ports t1 t2 t3
	# The FIB skips a gateway whose neighbour is not valid only while the
	# neighbour entry exists: keep the kernel's neighbour GC (which removes
	# failed entries once the table holds gc_thresh1 entries, all netns
	# together) away from it for the test
	read -r t1 t2 t3 < <(sysctl -n net.ipv4.neigh.default.gc_thresh1 \
		net.ipv4.neigh.default.gc_thresh2 net.ipv4.neigh.default.gc_thresh3 | xargs)
	RTC_UNDO="sysctl -qw net.ipv4.neigh.default.gc_thresh1=$t1 net.ipv4.neigh.default.gc_thresh2=$t2 net.ipv4.neigh.default.gc_thresh3=$t3; $RTC_UNDO"
	sysctl -qw net.ipv4.neigh.default.gc_thresh3=1000000 \
		net.ipv4.neigh.default.gc_thresh2=1000000 net.ipv4.neigh.default.gc_thresh1=1000000
	rns "$router" busybox sh -c 'echo 1 >/proc/sys/net/ipv4/fib_multipath_use_neigh'
	# 8 flows, 4 cached on path A
	ports=$(ecmp_ports 4320 4 4)
	rtc_base
	for p in $ports; do
		udp_send 10.0.1.2 $p 10.0.9.9 5000 4
	done
	expect "path A" "$(srv_count s0v4)" -eq 16
	expect "path B" "$(srv_count s1v4)" -eq 16
	# the gateway of path A fails: the kernel chooses path B for all
	ip -n "$router" neigh replace 10.0.2.2 dev r1 nud failed
	rtc_base
	for p in $ports; do
		udp_send 10.0.1.2 $p 10.0.9.9 5000 4
	done
	expect "path A after its neighbour failed ($(ip -n "$router" -4 neigh show 10.0.2.2 dev r1))" \
		"$(srv_count s0v4)" -eq 0
	expect "path B" "$(srv_count s1v4)" -eq 32
	expect hits "$(rtc_d hits)" -ge 16
}

@test "entries are charged to the memory cgroup of the process that created the netns" {
	# The entries are allocated in softirq context, where no process's
	# cgroup applies; the module charges them to the cgroup of the netns's
	# creator. Flows through a router netns created from a fresh cgroup
	# must raise that cgroup's slab by at least the entries' size.
	local cg=/sys/fs/cgroup cpid spid apid rt=rtc-memcg-$$ n=200 e base
	if [ ! -e $cg/cgroup.controllers ]; then
		mount -t cgroup2 none $cg
		RTC_UNDO="umount $cg"
	fi
	grep -qw memory $cg/cgroup.controllers
	grep -qw memory $cg/cgroup.subtree_control || echo +memory >$cg/cgroup.subtree_control
	cg=$cg/rtc-$$
	mkdir $cg
	RTC_UNDO="ip netns del $rt; rmdir $cg; ${RTC_UNDO:-}"
	rns_bg "$client" busybox sleep 1000000 &
	cpid=$!
	rns_bg "$server" busybox sleep 1000000 &
	spid=$!
	BG_PIDS+=" $cpid $spid"
	rwait 10 dev_gone "$cpid" x
	rwait 10 dev_gone "$spid" y
	# the netns is created by a process in the new cgroup
	bash -c "echo \$\$ >$cg/cgroup.procs && exec ip netns add $rt"
	echo "$rt" >>"$(_ns_list)"
	rtc_mini_router "$rt"
	rns_bg "$rt" busybox sleep 1000000 &
	apid=$!
	BG_PIDS+=" $apid"
	rwait 30 eval "grep -q '^slab_unreclaimable ' $cg/memory.stat"
	base=$(awk '$1 == "slab_unreclaimable" { print $2 }' $cg/memory.stat)
	rns "$client" bash -c "for ((i = 0; i < $n; i++)); do
		exec 5>/dev/udp/10.20.0.2/5000; echo x >&5; echo x >&5; exec 5>&-
	done"
	e=$(rtc_file_stat "/proc/$apid/net/stat/nf_conntrack_rtcache" entries)
	expect entries "$e" -ge $((n * 9 / 10))
	# memcg statistics are flushed in batches: wait for them
	if ! rwait 30 eval "[ \$(awk '\$1 == \"slab_unreclaimable\" { print \$2 }' $cg/memory.stat) -ge $((base + e * 256)) ]"; then
		echo "slab_unreclaimable: $base before, now: $(grep slab $cg/memory.stat | xargs), $e entries" >&2
		false
	fi
	kill "$apid"
}

@test "-m rtcache counters match cached packets only (iptables-legacy, ip6tables-nft)" {
	load_module xt_rtcache
	XT_USED="iptables-legacy ip6tables-nft"
	local f xt cached uncached h0
	for f in 4 6; do
		fam $f
		if [ $f = 4 ]; then xt=iptables-legacy; else xt=ip6tables-nft; fi
		# UDP only: neighbour discovery (ICMPv6) is never cached and comes
		# when the kernel decides, so it must not count
		rns "$router" $xt -t mangle -A PREROUTING -p udp -m rtcache
		rns "$router" $xt -t mangle -A PREROUTING -p udp -m rtcache ! --cached
		h0=$(rtc_d hits)
		udp_send "$CLI" 4020 "$SRV" 5000 20
		# a new connection and the first packets of a flow are not cached
		udp_send "$CLI" 4021 "$SRV" 5000 2
		cached=$(rule_pkts $xt 1)
		uncached=$(rule_pkts $xt 2)
		expect "v$f cached == hits" "$cached" -eq $(($(rtc_d hits) - h0))
		expect "v$f cached" "$cached" -eq 18
		expect "v$f uncached" "$uncached" -eq 4
		# packets of a cached flow arriving on another interface do not
		# match; IPv4 drops them (rp_filter), IPv6 forwards the first and
		# caches the new interface, so packets 2..5 match again
		ip -n "$client" route del "$PFX" via "$CLI_NH0" metric 10
		udp_send "$CLI" 4020 "$SRV" 5000 5
		if [ $f = 4 ]; then
			expect "v4 cached, other iif" "$(rule_pkts $xt 1)" -eq 18
			expect "v4 uncached, other iif" "$(rule_pkts $xt 2)" -eq 9
		else
			expect "v6 cached, other iif" "$(rule_pkts $xt 1)" -eq 22
			expect "v6 uncached, other iif" "$(rule_pkts $xt 2)" -eq 5
		fi
		rtc_routes
		rns "$router" $xt -t mangle -F
	done
}

@test "-m rtcache ! --cached before -m rpfilter: cached flows pass, spoofed ones are dropped" {
	load_module xt_rtcache
	XT_USED="iptables-nft ip6tables-nft"
	local f
	for f in 4 6; do
		fam $f
		rns "$router" $XT-nft -t mangle -A PREROUTING -m rtcache ! --cached -m rpfilter --invert -j DROP
		udp_send "$CLI" 4030 "$SRV" 5000 20
		expect "v$f received" "$(srv_count "s0v$f")" -eq 20
		expect "v$f dropped" "$(rule_pkts $XT-nft 1)" -eq 0
		ip -n "$client" route del "$PFX" via "$CLI_NH0" metric 10
		udp_send "$CLI" 4030 "$SRV" 5000 10
		expect "v$f received, spoofed" "$(srv_count "s0v$f")" -eq 20
		expect "v$f dropped, spoofed" "$(rule_pkts $XT-nft 1)" -eq 10
		rtc_routes
		rns "$router" $XT-nft -t mangle -F
	done
}

@test "-m rtcache: save/restore round-trip on both backends, raw table refused" {
	load_module xt_rtcache
	XT_USED="iptables-legacy iptables-nft ip6tables-legacy ip6tables-nft"
	local xt before after
	for xt in $XT_USED; do
		rns "$router" "$xt-restore" --noflush <<-'EOF'
		*mangle
		:rpf - [0:0]
		-A PREROUTING -j rpf
		-A PREROUTING -i r0 -m rtcache ! --cached -m rpfilter --invert -j DROP
		-A rpf -m rtcache --cached -j RETURN
		-A rpf -m rpfilter --invert -j DROP
		COMMIT
		*filter
		-A FORWARD -m rtcache -j ACCEPT
		COMMIT
		EOF
		before=$(rns "$router" "$xt-save" | grep -v '^#' | sed 's/\[[0-9]*:[0-9]*\]//')
		[[ "$before" == *"-A rpf -m rtcache -j RETURN"* ]]
		[[ "$before" == *"-A PREROUTING -i r0 -m rtcache ! --cached -m rpfilter --invert -j DROP"* ]]
		[[ "$before" == *"-A FORWARD -m rtcache -j ACCEPT"* ]]
		rns "$router" "$xt-save" >"$BATS_TEST_TMPDIR/saved"
		rns "$router" "$xt" -t mangle -F
		rns "$router" "$xt" -t mangle -X
		rns "$router" "$xt" -F
		rns "$router" "$xt-restore" <"$BATS_TEST_TMPDIR/saved"
		after=$(rns "$router" "$xt-save" | grep -v '^#' | sed 's/\[[0-9]*:[0-9]*\]//')
		[ "$before" = "$after" ] || { diff <(echo "$before") <(echo "$after") >&2; false; }
		run rns "$router" "$xt" -t raw -A PREROUTING -m rtcache -j ACCEPT
		[ "$status" -ne 0 ]
		rns "$router" "$xt" -t mangle -F
		rns "$router" "$xt" -t mangle -X
		rns "$router" "$xt" -F
	done
}

@test "rmmod with cached routes, then deleting every namespace: no reference left" {
	udp_send 10.0.1.2 4040 10.0.9.9 5000 5
	udp_send fd00:1::2 4040 fd00:9::9 5000 5
	rns "$client" busybox ping -4 -q -A -c 5 10.0.9.9
	expect entries "$(rtc_stat entries)" -eq 3
	unload_module xt_rtcache
	rmmod nf_conntrack_rtcache
	_ns_list() { echo "$RTC_FILE_NSLIST"; }
	cleanup_all
	no_refcount_wait
}
