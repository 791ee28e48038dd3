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
# server counts what arrives on s0 and s1 and drops it (no replies, no
# ICMP errors) unless a test talks to a real service.

load helpers
load rtcache_lib

setup_file() {
	OLD_UNREG_TIMEOUT=$(sysctl -n net.core.netdev_unregister_timeout_secs)
	export OLD_UNREG_TIMEOUT
	sysctl -qw net.core.netdev_unregister_timeout_secs=1
}

teardown_file() {
	unload_module xt_rtcache
	unload_module nf_conntrack_rtcache
	sysctl -qw net.core.netdev_unregister_timeout_secs="$OLD_UNREG_TIMEOUT"
}

setup() {
	load_module nf_conntrack_rtcache
	rtc_topo
}

teardown() {
	local pid
	for pid in ${BG_PIDS:-}; do
		kill "$pid" 2>/dev/null || true
	done
	cleanup_all
	unload_module xt_rtcache
}

# flow_check F : one UDP flow; hits climb, misses stay flat once established.
flow_check() {
	fam "$1"
	local h0 m0 i0 h1 m1
	udp_send "$client" "$CLI" 4000 "$SRV" 5000 5
	h0=$(rtc_stat "$router" hits) m0=$(rtc_stat "$router" misses)
	i0=$(rtc_stat "$router" inserts)
	# packet 1: unconfirmed conntrack; 2: miss + insert; 3..5 hit
	expect "hits after 5" "$h0" -eq 3
	expect "misses after 5" "$m0" -eq 1
	expect "inserts after 5" "$i0" -eq 1
	expect "entries" "$(rtc_stat "$router" entries)" -eq 1
	udp_send "$client" "$CLI" 4000 "$SRV" 5000 50
	h1=$(rtc_stat "$router" hits) m1=$(rtc_stat "$router" misses)
	expect "hits" "$h1" -eq $((h0 + 50))
	expect "misses" "$m1" -eq "$m0"
	expect "inserts" "$(rtc_stat "$router" inserts)" -eq "$i0"
	expect "received" "$(srv_count "s0v$F")" -eq 55
}

@test "module: sysctls per netns, stat file in lnstat format" {
	run in_ns "$router" sysctl -n net.netfilter.nf_conntrack_rtcache
	[ "$status" -eq 0 ] && [ "$output" = 1 ]
	[ "$(stat -c %a /proc/sys/net/netfilter/nf_conntrack_rtcache_flush)" = 200 ]
	run in_ns "$router" cat /proc/net/stat/nf_conntrack_rtcache
	[ "${lines[0]}" = "entries hits misses inserts stale flushes reclaimed wrong_iif insert_failed" ]
	[ "${#lines[@]}" -eq $(($(nproc) + 1)) ]
	if ! command -v lnstat >/dev/null; then
		skip "lnstat (iproute2) not installed"
	fi
	run in_ns "$router" lnstat -f nf_conntrack_rtcache -c 1 -i 1
	[ "$status" -eq 0 ]
	[[ "$output" == *"nf_conntrack_rt|"* ]]
	[[ "$output" == *"hits"* ]]
}

@test "IPv4: hits climb and misses stay flat once a flow is established" {
	flow_check 4
}

@test "IPv6: hits climb and misses stay flat once a flow is established" {
	flow_check 6
}

@test "both directions of a ping are cached (IPv4 and IPv6)" {
	local f
	for f in 4 6; do
		fam $f
		in_ns "$client" $PING -q -c 10 -i 0.05 "$SRV" 2>/dev/null || true
	done
	# per family: request 1 unconfirmed, reply 1 and request 2 miss
	expect hits "$(rtc_stat "$router" hits)" -eq 34
	expect misses "$(rtc_stat "$router" misses)" -eq 4
	expect entries "$(rtc_stat "$router" entries)" -eq 2
}

# route_change F : the cached route is dropped when the route changes.
route_change() {
	fam "$1"
	udp_send "$client" "$CLI" 4001 "$SRV" 5000 10
	expect "path A" "$(srv_count "s0v$F")" -eq 10
	ip -n "$router" $IPF route replace "$PFX" via "$NHB"
	udp_send "$client" "$CLI" 4001 "$SRV" 5000 10
	expect "path B after the change" "$(srv_count "s1v$F")" -eq 10
	expect "path A after the change" "$(srv_count "s0v$F")" -eq 10
	expect stale "$(rtc_stat "$router" stale)" -ge 1
	# cached again on the new path
	local h
	h=$(rtc_stat "$router" hits)
	udp_send "$client" "$CLI" 4001 "$SRV" 5000 10
	expect "hits on path B" "$(rtc_stat "$router" hits)" -eq $((h + 10))
	expect "path B" "$(srv_count "s1v$F")" -eq 20
}

@test "IPv4: route change, traffic follows on the next packet" {
	route_change 4
}

@test "IPv6: route change, traffic follows on the next packet (cookie)" {
	route_change 6
}

# link_flap F : egress down drops the entries at once; up again re-caches.
link_flap() {
	fam "$1"
	udp_send "$client" "$CLI" 4002 "$SRV" 5000 5
	expect entries "$(rtc_stat "$router" entries)" -eq 1
	ip -n "$router" link set r1 down
	expect "entries after down" "$(rtc_stat "$router" entries)" -eq 0
	expect flushes "$(rtc_stat "$router" flushes)" -ge 1
	udp_send "$client" "$CLI" 4002 "$SRV" 5000 5
	expect "received while down" "$(srv_count "s0v$F")" -eq 5
	ip -n "$router" link set r1 up
	# the kernel removed the static route with the link
	ip -n "$router" $IPF route replace "$PFX" via "$NHA"
	wait_until 5 in_ns "$router" ping $IPF -c 1 -W 1 "$NHA"
	local h
	h=$(rtc_stat "$router" hits)
	udp_send "$client" "$CLI" 4002 "$SRV" 5000 10
	expect "received after up" "$(srv_count "s0v$F")" -eq 15
	expect "hits after up" "$(rtc_stat "$router" hits)" -ge $((h + 8))
}

@test "IPv4: egress link down/up" {
	link_flap 4
}

@test "IPv6: egress link down/up" {
	link_flap 6
}

@test "IPv4: second ingress interface is not served from the cache, rp_filter drops it" {
	fam 4
	local rpf0 h w
	udp_send "$client" "$CLI" 4003 "$SRV" 5000 10
	expect "received via c0" "$(srv_count s0v4)" -eq 10
	h=$(rtc_stat "$router" hits)
	rpf0=$(in_ns "$router" nstat -az TcpExtIPReversePathFilter | awk '/IPReversePathFilter/ {print $2}')
	# same connection, same source address, now arriving on r2
	ip -n "$client" route del 10.0.9.9/32 via 10.0.1.1 metric 10
	udp_send "$client" "$CLI" 4003 "$SRV" 5000 20
	expect "received via c1 (spoofed)" "$(srv_count s0v4)" -eq 10
	expect "hits" "$(rtc_stat "$router" hits)" -eq "$h"
	expect wrong_iif "$(rtc_stat "$router" wrong_iif)" -eq 20
	w=$(in_ns "$router" nstat -az TcpExtIPReversePathFilter | awk '/IPReversePathFilter/ {print $2}')
	expect "rp_filter drops" "$w" -ge $((rpf0 + 20))
	# control: without rp_filter the same packets pass, and get cached
	in_ns "$router" sysctl -qw net.ipv4.conf.all.rp_filter=0 net.ipv4.conf.r2.rp_filter=0
	udp_send "$client" "$CLI" 4003 "$SRV" 5000 10
	expect "received via c1 without rp_filter" "$(srv_count s0v4)" -eq 20
	expect "hits via r2" "$(rtc_stat "$router" hits)" -ge $((h + 8))
}

@test "IPv6: second ingress interface is not served from the cache, rpfilter drops it" {
	fam 6
	local h
	in_ns "$router" ip6tables-legacy -t mangle -A PREROUTING -m rpfilter --invert -j DROP
	udp_send "$client" "$CLI" 4003 "$SRV" 5000 10
	expect "received via c0" "$(srv_count s0v6)" -eq 10
	h=$(rtc_stat "$router" hits)
	ip -n "$client" -6 route del fd00:9::9/128 via fd00:1::1 metric 10
	udp_send "$client" "$CLI" 4003 "$SRV" 5000 20
	expect "received via c1 (spoofed)" "$(srv_count s0v6)" -eq 10
	expect "hits" "$(rtc_stat "$router" hits)" -eq "$h"
	run in_ns "$router" ip6tables-legacy -t mangle -L PREROUTING -nvx
	[[ "${lines[2]}" =~ ^\ *2[0-9]\  ]] # >= 20 dropped by rpfilter
	in_ns "$router" ip6tables-legacy -t mangle -F
}

@test "sysctl flush drops the entries, sysctl off stops the cache" {
	local f h i
	for f in 4 6; do
		fam $f
		udp_send "$client" "$CLI" 4004 "$SRV" 5000 5
	done
	expect entries "$(rtc_stat "$router" entries)" -eq 2
	in_ns "$router" sysctl -qw net.netfilter.nf_conntrack_rtcache_flush=1
	expect "entries after flush" "$(rtc_stat "$router" entries)" -eq 0
	expect flushes "$(rtc_stat "$router" flushes)" -eq 2
	run in_ns "$router" cat /proc/sys/net/netfilter/nf_conntrack_rtcache_flush
	[ "$status" -ne 0 ]
	# refilled by the next packet
	udp_send "$client" 10.0.1.2 4004 10.0.9.9 5000 3
	expect "entries after refill" "$(rtc_stat "$router" entries)" -eq 1
	# off: entries dropped, nothing cached or served
	in_ns "$router" sysctl -qw net.netfilter.nf_conntrack_rtcache=0
	expect "entries when off" "$(rtc_stat "$router" entries)" -eq 0
	h=$(rtc_stat "$router" hits) i=$(rtc_stat "$router" inserts)
	udp_send "$client" 10.0.1.2 4004 10.0.9.9 5000 10
	expect "hits when off" "$(rtc_stat "$router" hits)" -eq "$h"
	expect "inserts when off" "$(rtc_stat "$router" inserts)" -eq "$i"
	expect "received when off" "$(srv_count s0v4)" -eq 18
	run in_ns "$router" sysctl -w net.netfilter.nf_conntrack_rtcache=2
	[ "$status" -ne 0 ]
	# on again
	in_ns "$router" sysctl -qw net.netfilter.nf_conntrack_rtcache=1
	udp_send "$client" 10.0.1.2 4004 10.0.9.9 5000 5
	expect "hits when on" "$(rtc_stat "$router" hits)" -ge $((h + 4))
	# per netns: the client netns (no conntrack) is untouched and stays on
	run in_ns "$client" sysctl -n net.netfilter.nf_conntrack_rtcache
	[ "$output" = 1 ]
}

@test "conntrack -F empties the table without traffic; never more entries than connections" {
	command -v conntrack >/dev/null || skip "conntrack tool not installed"
	local p
	for p in 4010 4011 4012 4013 4014; do
		udp_send "$client" 10.0.1.2 $p 10.0.9.9 5000 3
		udp_send "$client" fd00:1::2 $p fd00:9::9 5000 3
	done
	expect entries "$(rtc_stat "$router" entries)" -eq 10
	expect "entries <= conntracks" "$(rtc_stat "$router" entries)" -le \
		"$(in_ns "$router" conntrack -C)"
	in_ns "$router" conntrack -F 2>/dev/null
	wait_until 5 stat_is "$router" entries 0
	expect reclaimed "$(rtc_stat "$router" reclaimed)" -eq 10
	# a connection after the flush is cached again
	udp_send "$client" 10.0.1.2 4010 10.0.9.9 5000 3
	expect "entries after" "$(rtc_stat "$router" entries)" -eq 1
}

@test "rmmod during TCP transfers (IPv4 and IPv6): content intact, connections survive, no leak" {
	command -v socat >/dev/null || skip "socat not installed"
	local dir=$BATS_TEST_TMPDIR f
	head -c 3000000 /dev/urandom >"$dir/data"
	# slow the client down so the transfer runs while the module goes away
	in_ns "$client" tc qdisc add dev c0 root tbf rate 8mbit burst 32kb latency 400ms
	for f in 4 6; do
		fam $f
		in_ns "$server" socat -u TCP$F-LISTEN:6000,reuseaddr OPEN:"$dir/out$F",creat,trunc &
		BG_PIDS+=" $!"
	done
	wait_until 5 in_ns "$server" ss -ltn "sport = :6000"
	in_ns "$client" socat -u OPEN:"$dir/data" TCP4:10.0.9.9:6000 &
	local c4=$!
	in_ns "$client" socat -u OPEN:"$dir/data" TCP6:[fd00:9::9]:6000 &
	local c6=$!
	wait_until 10 stat_ge "$router" hits 200
	rmmod nf_conntrack_rtcache
	[ ! -e /sys/module/nf_conntrack_rtcache ]
	in_ns "$router" conntrack -L -p tcp 2>/dev/null | grep -c "dport=6000.*ESTABLISHED" | grep -qx 2
	wait "$c4"
	wait "$c6"
	wait_until 10 cmp -s "$dir/data" "$dir/out4"
	wait_until 10 cmp -s "$dir/data" "$dir/out6"
	# every dst released: deleting the namespaces does not hang
	cleanup_all
	no_refcount_wait
}

@test "modprobe/rmmod 50 times under load" {
	local i p4 p6
	in_ns "$client" ping -4 -q -i 0.002 10.0.9.9 >/dev/null 2>&1 &
	p4=$!
	in_ns "$client" ping -6 -q -i 0.002 fd00:9::9 >/dev/null 2>&1 &
	p6=$!
	BG_PIDS="$p4 $p6"
	for i in $(seq 1 50); do
		load_module nf_conntrack_rtcache
		wait_until 5 stat_ge "$router" hits 1
		rmmod nf_conntrack_rtcache
	done
	kill "$p4" "$p6"
	cleanup_all
	no_refcount_wait
}

@test "netns create/delete 50 times with cached routes stays clean" {
	local i rt
	for i in $(seq 1 50); do
		ns_create rt
		rt=$rt
		veth_link "$client" "x$i" "$rt" a
		veth_link "$rt" b "$server" "y$i"
		addr "$client" "x$i" "10.10.$i.2/24" "fd10:$i::2/64"
		addr "$rt" a "10.10.$i.1/24" "fd10:$i::1/64"
		addr "$rt" b "10.20.$i.1/24" "fd20:$i::1/64"
		addr "$server" "y$i" "10.20.$i.2/24" "fd20:$i::2/64"
		ip -n "$client" route add "10.20.$i.0/24" via "10.10.$i.1"
		ip -n "$client" -6 route add "fd20:$i::/64" via "fd10:$i::1"
		ip -n "$server" route add "10.10.$i.0/24" via "10.20.$i.1"
		ip -n "$server" -6 route add "fd10:$i::/64" via "fd20:$i::1"
		forwarding "$rt"
		in_ns "$rt" nft add table ip t '{ chain f { type filter hook forward priority 0; ct state new counter; }; }'
		in_ns "$rt" nft add table ip6 t '{ chain f { type filter hook forward priority 0; ct state new counter; }; }'
		in_ns "$client" ping -4 -q -c 4 -i 0.01 "10.20.$i.2" >/dev/null
		in_ns "$client" ping -6 -q -c 4 -i 0.01 "fd20:$i::2" >/dev/null
		expect "entries in $rt" "$(rtc_stat "$rt" entries)" -eq 2
		ip netns del "$rt"
	done
	wait_until 20 dev_gone "$client" x50
	no_refcount_wait
}

@test "-m rtcache counters match cached packets only (iptables-legacy, ip6tables-nft)" {
	load_module xt_rtcache
	local f xt h0 h cached uncached
	for f in 4 6; do
		fam $f
		if [ $f = 4 ]; then xt=iptables-legacy; else xt=ip6tables-nft; fi
		in_ns "$router" $xt -t mangle -A PREROUTING -m rtcache
		in_ns "$router" $xt -t mangle -A PREROUTING -m rtcache ! --cached
		h0=$(rtc_stat "$router" hits)
		udp_send "$client" "$CLI" 4020 "$SRV" 5000 20
		# a new connection and the first packets of a flow are not cached
		udp_send "$client" "$CLI" 4021 "$SRV" 5000 2
		h=$(rtc_stat "$router" hits)
		run in_ns "$router" $xt -t mangle -L PREROUTING -nvx
		cached=$(echo "${lines[2]}" | awk '{print $1}')
		uncached=$(echo "${lines[3]}" | awk '{print $1}')
		expect "v$f cached == hits" "$cached" -eq $((h - h0))
		expect "v$f cached" "$cached" -eq 18
		expect "v$f uncached" "$uncached" -eq 4
		# packets of a cached flow on another interface do not match
		ip -n "$client" $IPF route del "$PFX" via "$CLI_NH0" metric 10
		udp_send "$client" "$CLI" 4020 "$SRV" 5000 5
		run in_ns "$router" $xt -t mangle -L PREROUTING -nvx
		expect "v$f cached, other iif" "$(echo "${lines[2]}" | awk '{print $1}')" -eq 18
		ip -n "$client" $IPF route add "$PFX" via "$CLI_NH0" metric 10
		in_ns "$router" $xt -t mangle -F
	done
}

@test "-m rtcache ! --cached before rpfilter: cached flows pass, spoofed ones are dropped" {
	load_module xt_rtcache
	local f
	for f in 4 6; do
		fam $f
		in_ns "$router" $XT-nft -t mangle -A PREROUTING -m rtcache ! --cached -m rpfilter --invert -j DROP
		udp_send "$client" "$CLI" 4030 "$SRV" 5000 20
		expect "v$f received" "$(srv_count "s0v$f")" -eq 20
		run in_ns "$router" $XT-nft -t mangle -L PREROUTING -nvx
		# evaluated (not cached) twice, never dropped
		[[ "${lines[2]}" =~ ^\ *0\  ]]
		ip -n "$client" $IPF route del "$PFX" via "$CLI_NH0" metric 10
		udp_send "$client" "$CLI" 4030 "$SRV" 5000 10
		expect "v$f received spoofed" "$(srv_count "s0v$f")" -eq 20
		run in_ns "$router" $XT-nft -t mangle -L PREROUTING -nvx
		[[ "${lines[2]}" =~ ^\ *10\  ]]
		in_ns "$router" $XT-nft -t mangle -F
	done
}

@test "-m rtcache: save/restore round-trip on both backends, raw table refused" {
	load_module xt_rtcache
	local xt rules before after
	for xt in iptables-legacy iptables-nft ip6tables-legacy ip6tables-nft; do
		in_ns "$router" $xt -t mangle -N rpf
		in_ns "$router" $xt -t mangle -A rpf -m rtcache -j RETURN
		in_ns "$router" $xt -t mangle -A rpf -m rpfilter --invert -j DROP
		in_ns "$router" $xt -t mangle -A PREROUTING -j rpf
		in_ns "$router" $xt -t mangle -A PREROUTING -i r0 -m rtcache ! --cached -m rpfilter --invert -j DROP
		in_ns "$router" $xt -A FORWARD -m rtcache -j ACCEPT
		before=$(in_ns "$router" "${xt/tables/tables-save}" | grep -v '^#' | sed 's/\[[0-9]*:[0-9]*\]//')
		[[ "$before" == *"-A rpf -m rtcache -j RETURN"* ]]
		[[ "$before" == *"-m rtcache ! --cached -m rpfilter --invert -j DROP"* ]]
		in_ns "$router" "${xt/tables/tables-save}" >"$BATS_TEST_TMPDIR/saved"
		in_ns "$router" $xt -t mangle -F
		in_ns "$router" $xt -t mangle -X
		in_ns "$router" $xt -F
		in_ns "$router" "${xt/tables/tables-restore}" <"$BATS_TEST_TMPDIR/saved"
		after=$(in_ns "$router" "${xt/tables/tables-save}" | grep -v '^#' | sed 's/\[[0-9]*:[0-9]*\]//')
		[ "$before" = "$after" ] || { diff <(echo "$before") <(echo "$after") >&2; false; }
		run in_ns "$router" $xt -t raw -A PREROUTING -m rtcache -j ACCEPT
		[ "$status" -ne 0 ]
		in_ns "$router" $xt -t mangle -F
		in_ns "$router" $xt -t mangle -X
		in_ns "$router" $xt -F
	done
}
