#!/usr/bin/env bats
# -j ILA against translators we did not write: the kernel's own ILA
# (module ila: `ip ila add` translates ILA->SIR in a PREROUTING hook,
# `ip route ... encap ila` SIR->ILA on a route) and stock NPTv6
# (ip6t_NPT's DNPT/SNPT, RFC 6296).
#
#   client c0 ----------- r0 router r1 ----------- s0 server
#   fd00:1::2/64   fd00:1::1        fd00:2::1   fd00:2::2/64
#                  3333:0:0:1::/64 and 3333::/48 via s0   lo: 2001:db8:0:3::5 ...
#
# ILA: one side turns the SIR destination 2001:db8:0:3::/64 into the
# locator 3333:0:0:1::/64, the other turns it back before the server's
# stack sees it; replies go from the SIR address straight back (the ILA
# model: only destinations are translated). NPTv6: the router and the
# server translate both ways (SIR 2001:db8::/48 <-> 3333::/48, and the
# same for /64), one side stock NPT, the other ours. Transmit checksum
# offload is off on every veth: the receiving stacks verify every
# checksum, and their InCsumErrors counters must not move.

load helpers
load ila_helpers

setup_file() {
	load_module xt_ILA
	modprobe ila
	modprobe ip6t_NPT
}

teardown_file() {
	unload_module xt_ILA
	unload_module nf_ila
	rmmod ila 2>/dev/null || true
}

teardown() {
	cleanup_all
}

# kernel (ip-route/ip-ila) name of each of our modes
kmode() {
	case $1 in
	adjust-transport) echo adj-transport ;;
	none) echo no-action ;;
	*) echo "$1" ;;
	esac
}

# ila_kdel : remove the server's kernel ILA mapping, if any
ila_kdel() {
	ip -n "$server" ila del loc_match 3333:0:0:1 2>/dev/null || true
}

# traffic DST PORT : TCP (content compared), UDP and ping from the client to
# DST on the server; neither stack counted a checksum error.
traffic() {
	local dst=$1 port=$2 c s
	c=$(csum_errors "$client") s=$(csum_errors "$server")
	ila_tcp "$client" "$server" "$dst" "$port" 100000
	ila_udp "$client" "$server" "$dst" "$port" 300
	in_ns "$client" ping -6 -c 2 -i 0.2 -W 5 "$dst" >/dev/null
	[ "$(csum_errors "$client")" = "$c" ]
	[ "$(csum_errors "$server")" = "$s" ]
}

# wire_dst DST PORT : the destination address a UDP datagram from the client
# to DST:PORT carries between router and server (ila_expand form).
wire_dst() {
	local d
	d=$(mktemp -d "$BATS_TEST_TMPDIR/cap.XXXX")
	ila_capture_start "$router" r1 "$d/p" udp port "$2"
	local cap=$CAP_PID
	ila_udp "$client" "$server" "$1" "$2" 50
	wait "$cap"
	ila_pcap_addr "$d/p" dst
}

ila_interop_topo() {
	ila_topo
	ip -n "$router" -6 route add 3333::/48 via fd00:2::2
}

# ---- the kernel's ILA ------------------------------------------------------------

# The kernel's adj-transport (6.1 and 6.12) adjusts the L4 checksum by
# old - new locator instead of new - old (ila_common.c uses the neutral
# modes' difference for it), so its packets carry a wrong checksum unless
# both locators have the same sum: that pair is not interoperable. Our
# side is checked on the wire instead (tcpdump verifies the checksum), and
# what the kernel does is reported.
kernel_adj_transport_note() {
	echo "# adj-transport: the kernel's side: $1 (see the comment above)" >&3
}

# wire_udp_sum : "ok" or "bad": the UDP checksum of a datagram from the
# client to the SIR host as captured between router and server.
wire_udp_sum() {
	local d
	d=$(mktemp -d "$BATS_TEST_TMPDIR/sum.XXXX")
	ila_capture_start "$router" r1 "$d/p" udp port "$1"
	local cap=$CAP_PID
	echo x | in_ns "$client" socat -u - "UDP6-SENDTO:[$ILA_SIR_HOST]:$1"
	wait "$cap"
	if tcpdump -r "$d/p" -nn -vv 2>/dev/null | grep -q 'udp sum ok'; then echo ok; else echo bad; fi
}

@test "interop: ours SIR->ILA, the kernel's ILA->SIR (ip ila), every mode" {
	ila_interop_topo
	local m port=6000 want e
	for m in adjust-transport neutral-map neutral-map-auto none; do
		echo "# ours $m -> kernel $(kmode "$m")" >&3
		ila_flush
		in_ns "$router" ip6tables -t mangle -A PREROUTING -j ILA \
			--src-pfx "$ILA_SIR_PFX" --dst-pfx "$ILA_LOC_PFX" --csum-mode "$m"
		ila_kdel
		ip -n "$server" ila add loc_match 3333:0:0:1 loc 2001:db8:0:3 csum-mode "$(kmode "$m")" ident-type luid
		port=$((port + 1))
		want=$(ila_map "$ILA_SIR_HOST" "$ILA_SIR_PFX" "$ILA_LOC_PFX" "$m")
		if [ "$m" = adjust-transport ]; then
			[ "$(wire_udp_sum $((port + 200)))" = ok ]
			e=$(csum_errors "$server")
			echo x | in_ns "$client" socat -u - "UDP6-SENDTO:[$ILA_SIR_HOST]:$((port + 300))"
			sleep 1
			kernel_adj_transport_note "$(($(csum_errors "$server") - e)) checksum error(s) after its ILA->SIR"
			continue
		fi
		traffic "$ILA_SIR_HOST" "$port"
		[ "$(wire_dst "$ILA_SIR_HOST" $((port + 100)))" = "$want" ]
		[ "$(ila_count "$router" ip6tables PREROUTING)" -gt 10 ]
	done
	ila_flush
	ila_kdel
}

@test "interop: the kernel's SIR->ILA (encap ila), ours ILA->SIR, every mode" {
	ila_interop_topo
	local m port=6200 back want
	for m in adjust-transport neutral-map neutral-map-auto none; do
		echo "# kernel $(kmode "$m") -> ours $m" >&3
		ila_flush
		back=
		[ "$m" = neutral-map ] && back="--direction ila2sir"
		# shellcheck disable=SC2086
		in_ns "$server" ip6tables -t mangle -A PREROUTING -j ILA \
			--src-pfx "$ILA_LOC_PFX" --dst-pfx "$ILA_SIR_PFX" --csum-mode "$m" $back
		ip -n "$client" -6 route replace "$ILA_SIR_PFX" encap ila 3333:0:0:1 \
			csum-mode "$(kmode "$m")" ident-type luid via fd00:1::1 dev c0
		port=$((port + 1))
		if [ "$m" = adjust-transport ]; then
			kernel_adj_transport_note "UDP checksum on the wire: $(wire_udp_sum $((port + 200)))"
			continue
		fi
		# what the kernel put on the wire is what our model says
		want=$(ila_map "$ILA_SIR_HOST" "$ILA_SIR_PFX" "$ILA_LOC_PFX" "$m")
		[ "$(wire_dst "$ILA_SIR_HOST" $((port + 100)))" = "$want" ]
		traffic "$ILA_SIR_HOST" "$port"
		[ "$(ila_count "$server" ip6tables PREROUTING)" -gt 10 ]
	done
	ila_flush
}

@test "interop: C-bit rules: a no-action peer's address passes ours neutral-map ILA->SIR untouched" {
	ila_interop_topo
	# the kernel sends SIR->ILA without adjusting the identifier (no C-bit);
	# our neutral-map ILA->SIR must only replace the locator
	in_ns "$server" ip6tables -t mangle -A PREROUTING -j ILA --direction ila2sir \
		--src-pfx "$ILA_LOC_PFX" --dst-pfx "$ILA_SIR_PFX" --csum-mode neutral-map
	ip -n "$client" -6 route add "$ILA_SIR_PFX" encap ila 3333:0:0:1 \
		csum-mode no-action ident-type luid via fd00:1::1 dev c0
	[ "$(wire_dst "$ILA_SIR_HOST" 6301)" = "3333:0:0:1:0:0:0:5" ]
	traffic "$ILA_SIR_HOST" 6302
	[ "$(ila_count "$server" ip6tables PREROUTING)" -gt 10 ]
	# and a SIR->ILA rule refuses a SIR address with the C-bit set
	ila_flush
	ip -n "$client" -6 route del "$ILA_SIR_PFX"
	in_ns "$router" ip6tables -t mangle -A PREROUTING -j ILA \
		--src-pfx "$ILA_SIR_PFX" --dst-pfx "$ILA_LOC_PFX" --csum-mode neutral-map
	ip -n "$server" ila add loc_match 3333:0:0:1 loc 2001:db8:0:3 csum-mode neutral-map ident-type luid
	ip -n "$server" -6 addr add 2001:db8:0:3:1000::5/128 dev lo
	run in_ns "$client" ping -6 -c 1 -W 2 2001:db8:0:3:1000::5
	[ "$status" -ne 0 ]
	# not silently: the log says why and what to write instead
	[ "$(ila_count "$router" ip6tables PREROUTING)" -ge 1 ]
	dmesg | grep -q 'neutral-map: dropped a packet for 2001:db8:0:3:1000::5: C-bit set, an ILA address; translating ILA -> SIR needs --direction ila2sir'
	traffic "$ILA_SIR_HOST" 6303
	ila_kdel
}

@test "interop: the kernel's 0xffff zero is restored, ours 0x0000 is restored by the kernel" {
	ila_interop_topo
	# identifiers whose adjusted low 16 bits sum to zero for
	# 2001:db8:0:3 -> 3333:0:0:1: the kernel writes ffff there, we 0000
	local m host port=6400
	for m in neutral-map-auto neutral-map; do
		if [ "$m" = neutral-map ]; then host=2001:db8:0:3::1578; else host=2001:db8:0:3::578; fi
		echo "# $m $host" >&3
		ip -n "$server" -6 addr add "$host/128" dev lo
		ila_flush
		ila_kdel
		# the kernel's SIR->ILA: ffff on the wire, ours back
		local back=
		[ "$m" = neutral-map ] && back="--direction ila2sir"
		# shellcheck disable=SC2086
		in_ns "$server" ip6tables -t mangle -A PREROUTING -j ILA \
			--src-pfx "$ILA_LOC_PFX" --dst-pfx "$ILA_SIR_PFX" --csum-mode "$m" $back
		ip -n "$client" -6 route replace "$ILA_SIR_PFX" encap ila 3333:0:0:1 \
			csum-mode "$m" ident-type luid via fd00:1::1 dev c0
		port=$((port + 1))
		[[ $(wire_dst "$host" "$port") == *:ffff ]]
		traffic "$host" $((port + 10))
		# ours SIR->ILA: 0000 on the wire, the kernel's back
		ila_flush
		ip -n "$client" -6 route del "$ILA_SIR_PFX"
		in_ns "$router" ip6tables -t mangle -A PREROUTING -j ILA \
			--src-pfx "$ILA_SIR_PFX" --dst-pfx "$ILA_LOC_PFX" --csum-mode "$m"
		ip -n "$server" ila add loc_match 3333:0:0:1 loc 2001:db8:0:3 csum-mode "$m" ident-type luid
		port=$((port + 20))
		[[ $(wire_dst "$host" "$port") == *:0 ]]
		traffic "$host" $((port + 10))
	done
	ila_flush
	ila_kdel
}

# ---- stock NPTv6 (RFC 6296) --------------------------------------------------

# npt_rules SIDE LEN : SIDE (router|server) does the translation with stock
# DNPT/SNPT, the other side with -j ILA --csum-mode rfc6296.
#   router: dst SIR -> LOC (PREROUTING), src LOC -> SIR (POSTROUTING)
#   server: dst LOC -> SIR (PREROUTING), src SIR -> LOC (POSTROUTING)
npt_rules() {
	local stock=$1 len=$2 sir loc
	if [ "$len" = 48 ]; then sir=2001:db8::/48 loc=3333::/48; else sir=$ILA_SIR_PFX loc=$ILA_LOC_PFX; fi
	ila_flush
	if [ "$stock" = router ]; then
		in_ns "$router" ip6tables -t mangle -A PREROUTING -d "$sir" -j DNPT --src-pfx "$sir" --dst-pfx "$loc"
		in_ns "$router" ip6tables -t mangle -A POSTROUTING -s "$loc" -j SNPT --src-pfx "$loc" --dst-pfx "$sir"
		in_ns "$server" ip6tables -t mangle -A PREROUTING -j ILA --src-pfx "$loc" --dst-pfx "$sir" --csum-mode rfc6296
		in_ns "$server" ip6tables -t mangle -A POSTROUTING -j ILA --translate src \
			--src-pfx "$sir" --dst-pfx "$loc" --csum-mode rfc6296
	else
		in_ns "$router" ip6tables -t mangle -A PREROUTING -j ILA --src-pfx "$sir" --dst-pfx "$loc" --csum-mode rfc6296
		in_ns "$router" ip6tables -t mangle -A POSTROUTING -j ILA --translate src \
			--src-pfx "$loc" --dst-pfx "$sir" --csum-mode rfc6296
		in_ns "$server" ip6tables -t mangle -A PREROUTING -d "$loc" -j DNPT --src-pfx "$loc" --dst-pfx "$sir"
		in_ns "$server" ip6tables -t mangle -A POSTROUTING -s "$sir" -j SNPT --src-pfx "$sir" --dst-pfx "$loc"
	fi
}

# wire_pair DST PORT : "dst-of-request src-of-reply" between router and server
# for a TCP connection (its SYN and the SYN-ACK; TCP content compared).
wire_pair() {
	local dst=$1 port=$2 d
	d=$(mktemp -d "$BATS_TEST_TMPDIR/pair.XXXX")
	ila_capture_start "$router" r1 "$d/q" tcp dst port "$port"
	local c1=$CAP_PID
	ila_capture_start "$router" r1 "$d/r" tcp src port "$port"
	local c2=$CAP_PID
	ila_tcp "$client" "$server" "$dst" "$port" 1000 >&2 ||
		{ echo "wire_pair: TCP to $dst port $port failed" >&2; kill "$c1" "$c2" 2>/dev/null; return 1; }
	wait "$c1" "$c2"
	# (runs in $(...), where errexit does not reach: fail explicitly)
	[ -s "$d/q" ] && [ -s "$d/r" ] || { echo "wire_pair: a capture is empty" >&2; return 1; }
	echo "$(ila_pcap_addr "$d/q" dst) $(ila_pcap_addr "$d/r" src)"
}

@test "interop: rfc6296 against stock DNPT/SNPT, both sides, /48 and /64: traffic, and the same bits on the wire" {
	ila_interop_topo
	local len side port=6500 a b host
	for len in 48 64; do
		for host in "$ILA_SIR_HOST" 2001:db8:0:3:ffff::9; do
			[ "$host" = "$ILA_SIR_HOST" ] || ip -n "$server" -6 addr replace "$host/128" dev lo
			for side in router server; do
				echo "# /$len $host: stock NPT on the $side" >&3
				npt_rules "$side" "$len"
				port=$((port + 1))
				traffic "$host" "$port"
			done
			# one exchange under each arrangement: what the router sends
			# to the server and what the server answers with must be equal
			npt_rules router "$len"
			port=$((port + 1))
			a=$(wire_pair "$host" "$port") || false
			npt_rules server "$len"
			port=$((port + 1))
			b=$(wire_pair "$host" "$port") || false
			echo "# /$len $host: stock router $a, ours router $b" >&3
			[ "$a" = "$b" ]
			[[ $a != "$(ila_expand "$host") "* ]]	# translated on the wire
		done
	done
	ila_flush
}

@test "interop: rfc6296 with stock NPT: an ICMPv6 error quoting a translated packet reaches the sender" {
	ila_interop_topo
	local side d
	for side in router server; do
		echo "# stock NPT on the $side" >&3
		npt_rules "$side" 64
		d=$(mktemp -d "$BATS_TEST_TMPDIR/err.XXXX")
		# UDP to a closed port: the server's port unreachable quotes the
		# request with the SIR destination; both translators rewrite it
		ila_capture_start "$client" c0 "$d/e" icmp6 and 'ip6[40] == 1'
		local cap=$CAP_PID
		local e0
		e0=$(csum_errors "$client")
		echo x | in_ns "$client" socat -u - "UDP6-SENDTO:[$ILA_SIR_HOST]:9"
		wait "$cap"
		run tcpdump -r "$d/e" -nn -vv
		echo "$output"
		[[ $output == *"$ILA_SIR_HOST > fd00:1::2"* ]]
		# the quoted header is the client's own datagram, as it sent it
		[[ $output == *"unreachable port, $ILA_SIR_HOST udp port 9"* ]]
		[ "$(csum_errors "$client")" = "$e0" ]
		[ "$(in_ns "$client" nstat -asz Icmp6InDestUnreachs | awk '$1 == "Icmp6InDestUnreachs" { print $2 + 0 }')" -gt 0 ]
	done
	ila_flush
}
