#!/usr/bin/env bats
# nf_ila hooks: ILA / NPTv6 translation in direct netfilter hooks, driven by
# `ilactl hook add|del|list`.
#
#   client c0 ----------- r0 router r1 ----------- s0 server
#   fd00:1::2/64   fd00:1::1        fd00:2::1   fd00:2::2/64
#                  PRE  dst SIR->LOC             PRE  dst LOC->SIR
#                  POST src LOC->SIR             POST src SIR->LOC
#                  3333:0:0:1::/64 via s0        lo: 2001:db8:0:3::5
#
# The same topology and the same four translations as tests/bats/ila.bats,
# done by hooks instead of rules. Transmit checksum offload is off on every
# veth, so the receiving stacks verify every checksum.

load helpers
load ila_helpers

setup_file() {
	load_module nf_ila
}

teardown_file() {
	unload_module xt_ILA
	unload_module nf_ila
	unload_module nf_conntrack_rtcache	# the last test's
}

teardown() {
	cleanup_all
}

# hook_pairs MODE : the four translations of the topology comment, as hooks
hook_pairs() {
	local m=$1 back=
	[ "$m" = neutral-map ] && back="direction ila2sir"
	hook_flush
	# shellcheck disable=SC2086
	{
		hctl "$router" hook add sir prerouting src-pfx "$ILA_SIR_PFX" dst-pfx "$ILA_LOC_PFX" csum-mode "$m" &&
		hctl "$router" hook add back postrouting src-pfx "$ILA_LOC_PFX" dst-pfx "$ILA_SIR_PFX" csum-mode "$m" $back &&
		hctl "$server" hook add in prerouting src-pfx "$ILA_LOC_PFX" dst-pfx "$ILA_SIR_PFX" csum-mode "$m" $back &&
		hctl "$server" hook add out postrouting src-pfx "$ILA_SIR_PFX" dst-pfx "$ILA_LOC_PFX" csum-mode "$m"
	}
}

hook_flush() {
	local ns n
	for ns in "$router" "$server"; do
		for n in $(hctl "$ns" -j hook list | jq -r '.[].name'); do
			hctl "$ns" hook del "$n"
		done
	done
}

@test "hook: static prefixes in every mode: TCP, UDP, ping; counters; the wire carries the locator; nft list hooks shows them" {
	ila_topo
	local m port=7000 d want
	for m in $ILA_MODES; do
		echo "# $m" >&3
		hook_pairs "$m"
		port=$((port + 1))
		ila_tcp "$client" "$server" "$ILA_SIR_HOST" "$port" 100000
		ila_udp "$client" "$server" "$ILA_SIR_HOST" "$port" 300
		# (TCP's segments may travel as a few GSO packets, and its ACKs
		# are as few: the 12 echo requests and replies are the packets
		# every hook must count, one each)
		in_ns "$client" ping -6 -c 12 -i 0.05 -W 5 "$ILA_SIR_HOST" >/dev/null
		echo "# packets: router sir $(hook_field "$router" sir packets) back $(hook_field "$router" back packets)," \
			"server in $(hook_field "$server" in packets) out $(hook_field "$server" out packets)"
		[ "$(hook_field "$router" sir packets)" -gt 12 ]
		[ "$(hook_field "$router" back packets)" -gt 12 ]
		[ "$(hook_field "$server" in packets)" -gt 12 ]
		[ "$(hook_field "$server" out packets)" -gt 12 ]
		[ "$(hook_field "$router" sir bytes)" -gt 100000 ]
		# the same address on the wire as the -j ILA rule writes
		d=$(mktemp -d "$BATS_TEST_TMPDIR/cap.XXXX")
		ila_capture_start "$router" r1 "$d/p" udp port $((port + 100))
		local cap=$CAP_PID
		ila_udp "$client" "$server" "$ILA_SIR_HOST" $((port + 100)) 50
		wait "$cap"
		want=$(ila_map "$ILA_SIR_HOST" "$ILA_SIR_PFX" "$ILA_LOC_PFX" "$m")
		[ "$(ila_pcap_addr "$d/p" dst)" = "$want" ]
	done
	run in_ns "$router" nft list hooks
	echo "$output"
	if grep -q '^CONFIG_NETFILTER_NETLINK_HOOK=' "/boot/config-$(uname -r)"; then
		[[ $output == *"hook prerouting"*"-0000000250 ila_hook_slot_fn"*"[nf_ila]"* ]]
		[[ $output == *"hook postrouting"*"+0000000300 ila_hook_slot_fn"*"[nf_ila]"* ]]
	else
		# Debian's 6.1 is built without NETFILTER_NETLINK_HOOK: nft
		# cannot list any hook there
		echo "# $(uname -r): no NETFILTER_NETLINK_HOOK, nft list hooks shows nothing" >&3
		[ -z "$output" ] || [[ $output != *"[nf_ila]"* ]]
	fi
	# list shows what each hook does
	run hctl "$router" hook list
	echo "$output"
	[[ $output == *"sir prerouting priority -250 translate dst src-pfx 2001:db8:0:3::/64 dst-pfx 3333:0:0:1::/64 csum-mode rfc6296 packets "* ]]
	hook_flush
	[ "$(hctl "$router" -j hook list)" = "[]" ]
}

@test "hook: the router's own Packet Too Big is translated back, TCP through a smaller MTU completes" {
	ila_topo
	ip -n "$router" link set r1 mtu 1280
	local m port=7100
	for m in adjust-transport neutral-map; do
		echo "# $m" >&3
		hook_pairs "$m"
		ip -n "$client" -6 route flush cache
		port=$((port + 1))
		ila_tcp "$client" "$server" "$ILA_SIR_HOST" "$port" 200000
		in_ns "$client" ip -6 route get "$ILA_SIR_HOST" | grep -q 'mtu 1280'
	done
	hook_flush
}

@test "hook: /48 prefixes, static and with a map; checksum offload on and off; clones (a packet socket on the router): TCP and UDP" {
	# The packet paths have an instance per mode and for /64 prefixes:
	# here the others (a /48 keeps the locator's last word, a map hook
	# sums the packet's own locator), each checksum state the router gets
	# (offload off: full checksums; on: CHECKSUM_PARTIAL), and packets
	# whose headers are shared with a clone (a packet socket on r0 queues
	# one of every packet), which must be copied first.
	ila_topo
	ip -n "$router" -6 route add 3333::/48 via fd00:2::2
	hctl "$router" map create m48
	hctl "$router" map add m48 0:0:0:5 3333:0:0:3
	local m how off tap port=7200 n=0
	for off in off on; do
		ila_offload "$client" c0 "$off"
		ila_offload "$server" s0 "$off"
		for how in static-adjust-transport static-none map; do
			for tap in no yes; do
				echo "# offload $off, $how, packet socket on r0: $tap" >&3
				hook_flush
				m=${how#static-}
				[ "$how" = map ] && m=adjust-transport
				if [ "$how" = map ]; then
					hctl "$router" hook add sir prerouting src-pfx 2001:db8::/48 map m48 miss drop
				else
					hctl "$router" hook add sir prerouting src-pfx 2001:db8::/48 dst-pfx 3333::/48 csum-mode "$m"
				fi
				hctl "$router" hook add back postrouting src-pfx 3333::/48 dst-pfx 2001:db8::/48 csum-mode "$m"
				hctl "$server" hook add in prerouting src-pfx 3333::/48 dst-pfx 2001:db8::/48 csum-mode "$m"
				hctl "$server" hook add out postrouting src-pfx 2001:db8::/48 dst-pfx 3333::/48 csum-mode "$m"
				local cap= seen="$BATS_TEST_TMPDIR/tap.$n"
				if [ "$tap" = yes ]; then
					in_ns "$router" perl "$BATS_TEST_DIRNAME/pkt_tap.pl" \
						"$(ip -n "$router" -o link show r0 | cut -d: -f1)" 60 \
						>"$seen" 2>"$seen.err" &
					cap=$!
					wait_until 10 grep -q ready "$seen.err"
				fi
				port=$((port + 1))
				ila_tcp "$client" "$server" "$ILA_SIR_HOST" "$port" 100000
				ila_udp "$client" "$server" "$ILA_SIR_HOST" "$port" 300
				if [ -n "$cap" ]; then
					kill "$cap"
					wait "$cap" || true
					# the tap's clones kept what arrived: the hook
					# copied the shared headers before writing
					[ "$(grep -c "^$ILA_SIR_HOST\$" "$seen")" -gt 10 ]
					[ "$(grep -c '^3333:' "$seen")" = 0 ]
				fi
				[ "$(hook_field "$router" sir packets)" -gt 10 ]
				[ "$(hook_field "$router" sir drops)" = 0 ]
				[ "$(hook_field "$server" in packets)" -gt 10 ]
				n=$((n + 1))
			done
		done
	done
	[ "$n" = 12 ]
	[ "$(hctl "$router" -j map show m48 | jq '.entries[0].hits')" -gt 60 ]
	hook_flush
}

@test "hook with a map: hits, misses, miss accept/drop, map replace moves a host on the next packet" {
	ila_topo
	# a second locator for the same server
	ip -n "$router" -6 route add 3333:0:0:2::/64 via fd00:2::2
	hctl "$router" map create hosts
	hctl "$router" map add hosts 0:0:0:5 3333:0:0:1
	hctl "$router" hook add m prerouting src-pfx "$ILA_SIR_PFX" map hosts miss drop
	hctl "$router" hook add back postrouting src-pfx "$ILA_LOC_PFX" dst-pfx "$ILA_SIR_PFX"
	hctl "$server" hook add in1 prerouting src-pfx 3333:0:0:1::/64 dst-pfx "$ILA_SIR_PFX"
	hctl "$server" hook add in2 prerouting src-pfx 3333:0:0:2::/64 dst-pfx "$ILA_SIR_PFX"
	hctl "$server" hook add out postrouting src-pfx "$ILA_SIR_PFX" dst-pfx "$ILA_LOC_PFX"
	in_ns "$client" ping -6 -c 2 -i 0.2 -W 5 "$ILA_SIR_HOST" >/dev/null
	ila_tcp "$client" "$server" "$ILA_SIR_HOST" 7201 50000
	[ "$(hook_field "$router" m packets)" -gt 10 ]
	[ "$(hook_field "$server" in1 packets)" -gt 10 ]
	[ "$(hook_field "$server" in2 packets)" -eq 0 ]
	# the map cannot go while a hook uses it
	run hctl "$router" map destroy hosts
	[ "$status" -eq 1 ]
	[[ $output == *"Device or resource busy"* ]]
	# a host moves: the next packet goes to the new locator
	hctl "$router" map replace hosts 0:0:0:5 3333:0:0:2
	in_ns "$client" ping -6 -c 2 -i 0.2 -W 5 "$ILA_SIR_HOST" >/dev/null
	[ "$(hook_field "$server" in2 packets)" -eq 2 ]
	# an identifier not in the map: dropped (miss drop)
	hctl "$router" map del hosts 0:0:0:5
	run in_ns "$client" ping -6 -c 1 -W 2 "$ILA_SIR_HOST"
	[ "$status" -ne 0 ]
	[ "$(hook_field "$router" m misses)" -ge 1 ]
	[ "$(hook_field "$router" m drops)" -ge 1 ]
	# miss accept: continues untranslated (the router has no route: dropped
	# there, but not by the hook)
	hctl "$router" hook del m
	hctl "$router" hook add m prerouting src-pfx "$ILA_SIR_PFX" map hosts
	run in_ns "$client" ping -6 -c 1 -W 2 "$ILA_SIR_HOST"
	[ "$(hook_field "$router" m misses)" -ge 1 ]
	[ "$(hook_field "$router" m drops)" -eq 0 ]
	hook_flush
	hctl "$router" map destroy hosts
}

@test "hook: monitor reports hook add/del as replayable commands; miss notify reports identifiers not found" {
	ila_topo
	local ev=$BATS_TEST_TMPDIR/ev
	ip netns exec "$router" ilactl -v monitor >"$ev" 2>"$ev.err" &
	local mon=$!
	wait_until 10 grep -q 'monitoring map changes and hook changes' "$ev.err"
	hctl "$router" map create hosts
	hctl "$router" map add hosts 0:0:0:5 3333:0:0:1
	hctl "$router" hook add m prerouting src-pfx "$ILA_SIR_PFX" map hosts miss drop,notify
	hctl "$router" hook add back postrouting src-pfx "$ILA_LOC_PFX" dst-pfx "$ILA_SIR_PFX" \
		csum-mode neutral-map direction ila2sir priority 310
	run hctl "$router" hook add back postrouting src-pfx "$ILA_LOC_PFX" dst-pfx "$ILA_SIR_PFX"
	[ "$status" -eq 1 ]	# exists: no event
	[ "$(hook_field "$router" m notify_miss)" = true ]
	[ "$(hook_field "$router" m miss)" = drop ]
	hctl "$router" hook list | grep -q '^m prerouting .* map hosts miss drop,notify '
	# misses of a hook with notify: one event per packet (within 100/s)
	run in_ns "$client" ping -6 -q -c 3 -i 0.2 -W 1 2001:db8:0:3::99
	[ "$status" -ne 0 ]
	in_ns "$client" ping -6 -q -c 1 -W 2 "$ILA_SIR_HOST" >/dev/null || true	# a hit: no event
	hctl "$router" hook del back
	wait_until 10 grep -qx 'hook del back' "$ev"
	kill "$mon"
	diff -u - "$ev" <<-EOF
	map create hosts max-entries 16777216
	map add hosts 0:0:0:5 3333:0:0:1 csum-mode adjust-transport
	hook add m prerouting priority -250 translate dst src-pfx $ILA_SIR_PFX map hosts miss drop,notify
	hook add back postrouting priority 310 translate src src-pfx $ILA_LOC_PFX dst-pfx $ILA_SIR_PFX csum-mode neutral-map direction ila2sir
	# miss hosts 0:0:0:99
	# miss hosts 0:0:0:99
	# miss hosts 0:0:0:99
	hook del back
	EOF
	# replayed in a fresh netns: the same hooks
	ns_create copy
	in_ns "$copy" ilactl -b "$ev"
	[ "$(hctl "$copy" hook list | sed 's/ packets .*//')" = "$(hctl "$router" hook list | sed 's/ packets .*//')" ]
	# JSON: hook events carry the hook list keys without counters
	ip netns exec "$router" ilactl -j -v monitor >"$ev.json" 2>"$ev.err2" &
	mon=$!
	wait_until 10 grep -q 'monitoring map changes and hook changes' "$ev.err2"
	hctl "$router" hook add n output src-pfx "$ILA_SIR_PFX" map hosts miss notify
	hctl "$router" hook del n
	wait_until 10 test "$(wc -l <"$ev.json")" -eq 2
	kill "$mon"
	[ "$(jq -c . "$ev.json" | head -1)" = '{"event":"hook add","name":"n","hook":"output","priority":-250,"translate":"dst","src_pfx":"2001:db8:0:3::/64","map":"hosts","miss":"accept","notify_miss":true,"direction":"sir2ila"}' ]
	[ "$(jq -r .event "$ev.json" | tail -1)" = "hook del" ]
	hook_flush
	hctl "$copy" hook del m
	hctl "$router" map destroy hosts
}

@test "hook: many prefixes at one point share one netfilter hook; the longest prefix wins; a prefix serves once per point and priority" {
	ila_topo
	local f=$BATS_TEST_TMPDIR i want
	# the return path: server LOC->SIR in, SIR->LOC out; router LOC->SIR back
	hctl "$server" hook add in prerouting src-pfx "$ILA_LOC_PFX" dst-pfx "$ILA_SIR_PFX"
	hctl "$server" hook add out postrouting src-pfx "$ILA_SIR_PFX" dst-pfx "$ILA_LOC_PFX"
	hctl "$router" hook add back postrouting src-pfx "$ILA_LOC_PFX" dst-pfx "$ILA_SIR_PFX"
	# 40 prefixes at prerouting -250: decoys of three lengths, a /48 that
	# holds the SIR prefix, and the SIR /64 itself
	for ((i = 0; i < 30; i++)); do echo "hook add d64_$i prerouting src-pfx 2001:db8:9:$i::/64 dst-pfx 3333:0:0:ff::/64"; done >"$f/hooks"
	for ((i = 0; i < 8; i++)); do echo "hook add d56_$i prerouting src-pfx 2001:db8:a:${i}00::/56 dst-pfx 3333:0:0:fe00::/56"; done >>"$f/hooks"
	echo "hook add wide prerouting src-pfx 2001:db8::/48 dst-pfx 3333:0:1::/48" >>"$f/hooks"
	echo "hook add sir prerouting src-pfx $ILA_SIR_PFX dst-pfx $ILA_LOC_PFX" >>"$f/hooks"
	hctl "$router" -b "$f/hooks"
	[ "$(hctl "$router" -j hook list | jq length)" -eq 41 ]
	# one netfilter hook for the 40 at prerouting (where nft can list hooks)
	if grep -q '^CONFIG_NETFILTER_NETLINK_HOOK=' "/boot/config-$(uname -r)"; then
		run in_ns "$router" nft list hooks
		echo "$output"
		[ "$(echo "$output" | grep -c 'ila_hook_slot_fn')" -eq 2 ] # prerouting + postrouting
	fi
	# the SIR /64 translates; the /48 holding it does not see the packets
	in_ns "$client" ping -6 -c 2 -i 0.2 -W 5 "$ILA_SIR_HOST" >/dev/null
	ila_tcp "$client" "$server" "$ILA_SIR_HOST" 7400 100000
	ila_udp "$client" "$server" "$ILA_SIR_HOST" 7401 3000
	[ "$(hook_field "$router" sir packets)" -ge 5 ]
	[ "$(hook_field "$router" wide packets)" -eq 0 ]
	[ "$(hook_field "$router" d64_7 packets)" -eq 0 ]
	# a prefix is served once per point and priority ...
	run hctl "$router" hook add dup prerouting src-pfx "$ILA_SIR_PFX" dst-pfx 3333:0:0:2::/64
	echo "$output"
	[ "$status" -eq 1 ]
	[[ $output == *"File exists"* ]]
	# 6.1: the plain message; 6.2+: the hook's name, whole even at 31
	# characters (the extack holds 80 bytes; a longer one is cut and logged)
	[[ $output == *"at this point and priority"* || $output == *"prefix already translated here by hook sir"* ]]
	local long=L123456789012345678901234567890
	hctl "$router" hook add $long prerouting src-pfx 2001:db8:99::/64 dst-pfx 3333:0:0:99::/64
	run hctl "$router" hook add dup prerouting src-pfx 2001:db8:99::/64 dst-pfx 3333:0:0:98::/64
	echo "$output"
	[ "$status" -eq 1 ]
	[[ $output == *"at this point and priority"* || $output == *"prefix already translated here by hook $long"* ]]
	[ -z "$(dmesg | grep 'truncated extack' || true)" ]
	hctl "$router" hook del $long
	# ... and at another priority it is another netfilter hook
	hctl "$router" hook add dup prerouting src-pfx "$ILA_SIR_PFX" dst-pfx 3333:0:0:2::/64 priority -240
	hctl "$router" hook del dup
	# without the /64 the /48 takes the packet: 2001:db8:0:3::5 -> 3333:0:1:3::5
	hctl "$router" hook del sir
	ip -n "$router" -6 route add 3333:0:1::/48 via fd00:2::2
	ila_capture_start "$router" r1 "$f/wide.pcap" ip6 and udp port 7402
	local p=$CAP_PID
	in_ns "$client" socat -u - "UDP6-SENDTO:[$ILA_SIR_HOST]:7402" <<<"wide"
	wait "$p"
	[ "$(ila_pcap_addr "$f/wide.pcap" dst)" = 3333:0:1:3:0:0:0:5 ]
	[ "$(hook_field "$router" wide packets)" -eq 1 ]
	# deleting all of them leaves no ILA hook at prerouting
	sed -n 's/^hook add \([^ ]*\) .*/hook del \1/p' "$f/hooks" | grep -v ' sir$' >"$f/del"
	hctl "$router" -b "$f/del"
	[ "$(hctl "$router" -j hook list | jq -r '.[].name')" = back ]
	hook_flush
}

# quoted_src FILE EXT : the source address an ICMPv6 error in FILE quotes
# (after EXT 8-byte extension headers of its own), ila_expand form
quoted_src() { ila_pcap_addr_at "$1" $((28 + 4 * $2)); }

@test "hook: an ICMPv6 error in a slot of nested prefixes: its address by the longest prefix, the quoted one by its own; behind an extension header too" {
	ila_topo
	local f=$BATS_TEST_TMPDIR tool=$BATS_TEST_DIRNAME/icmp6_err_raw.pl ext p
	# a /32 and a /48 inside it, at one point: an error to an address of the
	# /48 quoting a packet from elsewhere in the /32
	hctl "$router" hook add a prerouting src-pfx 2001:db8::/32 dst-pfx 3fff:a::/32
	hctl "$router" hook add b prerouting src-pfx 2001:db8:1::/48 dst-pfx 3fff:b:1::/48
	ip -n "$router" -6 route add 3fff::/16 via fd00:2::2
	for ext in 0 1; do
		ila_capture_start "$router" r1 "$f/nested$ext.pcap" dst host 3fff:b:1::5
		p=$CAP_PID
		in_ns "$client" env ICMP6_OUTER_DSTOPT=$ext perl "$tool" \
			fd00:1::2 2001:db8:1::5 2001:db8:2::7 fd00:1::2 >/dev/null
		wait "$p"
		run tcpdump -r "$f/nested$ext.pcap" -nn -vv
		echo "$output"
		[[ $output != *"bad"* ]]
		[ "$(ila_pcap_addr "$f/nested$ext.pcap" dst)" = 3fff:b:1:0:0:0:0:5 ]
		[ "$(quoted_src "$f/nested$ext.pcap" "$ext")" = 3fff:a:2:0:0:0:0:7 ]
	done
	# the error counts once, for the hook of its own address
	[ "$(hook_field "$router" b packets)" -eq 2 ]
	[ "$(hook_field "$router" a packets)" -eq 0 ]
	[ "$(hook_field "$router" a drops)" -eq 0 ]
	hook_flush

	# a map whose prefix holds only the quoted address (the router's own
	# error to a host outside it): the quoted identifier is looked up
	# behind the error's extension header as without one
	hctl "$router" map create q
	hctl "$router" map add q 0:0:0:5 3333:0:0:1
	hctl "$router" hook add m prerouting src-pfx "$ILA_SIR_PFX" map q
	hctl "$router" hook add other prerouting src-pfx 2001:db8:7::/48 dst-pfx 3fff:7::/48
	for ext in 0 1; do
		ila_capture_start "$router" r1 "$f/map$ext.pcap" dst host fd00:2::2 and not tcp and not udp
		p=$CAP_PID
		in_ns "$client" env ICMP6_OUTER_DSTOPT=$ext perl "$tool" \
			fd00:1::2 fd00:2::2 "$ILA_SIR_HOST" fd00:1::2 >/dev/null
		wait "$p"
		run tcpdump -r "$f/map$ext.pcap" -nn -vv
		echo "$output"
		[[ $output != *"bad"* ]]
		[ "$(quoted_src "$f/map$ext.pcap" "$ext")" = 3333:0:0:1:0:0:0:5 ]
	done
	# both errors' quoted identifiers were looked up and found
	[ "$(hctl "$router" -j map stats q | jq -r .hits)" -eq 2 ]
	hook_flush
	hctl "$router" map destroy q
}

@test "hook: output translates the destination and routes the packet again (the locator's route, not the SIR's): TCP and UDP" {
	ila_topo
	# The router itself talks to the SIR host. Its route for the SIR
	# prefix leads to the client (the wrong way); the locator's, to the
	# server. Only a packet routed again after the translation arrives.
	ip -n "$router" -6 route add "$ILA_SIR_PFX" via fd00:1::2
	hctl "$router" hook add o output src-pfx "$ILA_SIR_PFX" dst-pfx "$ILA_LOC_PFX"
	hctl "$router" hook add i input src-pfx "$ILA_LOC_PFX" dst-pfx "$ILA_SIR_PFX"
	hctl "$server" hook add in prerouting src-pfx "$ILA_LOC_PFX" dst-pfx "$ILA_SIR_PFX"
	hctl "$server" hook add out postrouting src-pfx "$ILA_SIR_PFX" dst-pfx "$ILA_LOC_PFX"
	local off
	for off in off on; do
		ila_offload "$router" r1 "$off"
		ila_tcp "$router" "$server" "$ILA_SIR_HOST" 7410 200000
		ila_udp "$router" "$server" "$ILA_SIR_HOST" 7411 3000
		in_ns "$router" ping -6 -c 2 -i 0.2 -W 5 "$ILA_SIR_HOST" >/dev/null
	done
	[ "$(hook_field "$router" o packets)" -ge 10 ]
	[ "$(hook_field "$router" o drops)" -eq 0 ]
	[ "$(csum_errors "$server")" -eq 0 ]
	[ "$(csum_errors "$router")" -eq 0 ]
	hook_flush
}

@test "hook: bad commands exit non-zero with a clear message and change nothing" {
	ns_create t
	hctl "$t" hook add keep prerouting src-pfx 2001:db8::/64 dst-pfx 3333::/64
	local before
	before=$(hctl "$t" hook list)
	local -a cases=(
		"2|hook add x forward src-pfx 2001:db8::/64 dst-pfx 3333::/64|unknown hook \"forward\""
		"2|hook add x postrouting translate dst src-pfx 2001:db8::/64 dst-pfx 3333::/64|postrouting translates the source"
		"2|hook add x prerouting src-pfx 2001:db8::/65 dst-pfx 3333::/65|prefix length must be 1..64"
		"2|hook add x prerouting src-pfx 2001:db8::/0 dst-pfx 3333::/0|prefix length must be 1..64"
		"2|hook add x prerouting src-pfx 2001:db8::1/64 dst-pfx 3333::/64|bits set after the prefix length"
		"2|hook add x prerouting src-pfx 2001:db8::/64 dst-pfx 3333::/48|same length"
		"2|hook add x prerouting src-pfx 2001:db8::/64|dst-pfx Q/L or map MAP is required"
		"2|hook add x prerouting src-pfx 2001:db8::/64 dst-pfx 3333::/64 csum-mode bogus|bad csum-mode"
		"2|hook add x prerouting src-pfx 2001:db8::/64 dst-pfx 3333::/64 miss drop|miss needs a map"
		"2|hook add bad/name prerouting src-pfx 2001:db8::/64 dst-pfx 3333::/64|bad hook name"
		"1|hook add keep prerouting src-pfx 2001:db8::/64 dst-pfx 3333::/64|File exists"
		"1|hook add x prerouting src-pfx 2001:db8::/64 map nosuch|no such map"
		"1|hook add x prerouting src-pfx 2001:db8::/64 dst-pfx 3333::/64 priority 2147483647|priority out of range"
		"1|hook del nosuch|no such hook"
	)
	local c want_status args want
	for c in "${cases[@]}"; do
		want_status=${c%%|*} c=${c#*|}
		args=${c%%|*} want=${c#*|}
		# shellcheck disable=SC2086
		run hctl "$t" $args
		echo "ilactl $args -> $status: $output"
		[ "$status" -eq "$want_status" ]
		[[ $output == *"$want"* ]]
	done
	[ "$(hctl "$t" hook list)" = "$before" ]
	# -n NETNS (as ip -n) reads the same namespace
	[ "$(ilactl -n "$t" hook list)" = "$before" ]
}

@test "hook: unprivileged users are refused, reading is allowed" {
	ns_create t
	hctl "$t" hook add keep prerouting src-pfx 2001:db8::/64 dst-pfx 3333::/64
	run in_ns "$t" setpriv --reuid 65534 --regid 65534 --clear-groups --inh-caps=-all \
		"$BIN_DIR/ilactl" hook add x prerouting src-pfx 2001:db8::/64 dst-pfx 3333::/64
	echo "$output"
	[ "$status" -eq 1 ]
	[[ $output == *"Operation not permitted"* ]]
	run in_ns "$t" setpriv --reuid 65534 --regid 65534 --clear-groups --inh-caps=-all \
		"$BIN_DIR/ilactl" hook list
	[ "$status" -eq 0 ]
	[[ $output == "keep prerouting"* ]]
}

@test "hook: netns delete and rmmod with hooks installed (and traffic) leave no hook and a clean log" {
	ila_topo
	hook_pairs adjust-transport
	in_ns "$client" ping -6 -c 2 -i 0.2 -W 5 "$ILA_SIR_HOST" >/dev/null
	ns_create t
	hctl "$t" map create m
	hctl "$t" hook add h prerouting src-pfx 2001:db8::/64 map m
	ip netns del "$t"
	# rmmod while hooks exist in the other namespaces
	unload_module xt_ILA
	unload_module nf_ila
	[ ! -e /sys/module/nf_ila ]
	run in_ns "$router" nft list hooks
	[[ $output != *"[nf_ila]"* ]]
	load_module nf_ila
	[ "$(hctl "$router" -j hook list)" = "[]" ]
}

@test "save -> wipe (hooks, maps, rmmod) -> restore: maps entry for entry (1,000,000), hooks, traffic as before; -exist" {
	ila_topo
	local f=$BATS_TEST_TMPDIR ns t0
	awk 'BEGIN { for (i = 0; i < 1000000; i++)
		printf "map add hosts 0:0:%x:%x 3333:0:0:%d%s\n", int(i / 65536) + 1, i % 65536, i % 3 + 1,
			i % 3 == 1 ? " csum-mode neutral-map-auto" : "" }' >"$f/1m"
	hctl "$router" map create hosts max-entries 2000000
	hctl "$router" -b "$f/1m"
	# neutral-map: the router sets the C-bit, the server's ILA->SIR undoes it
	hctl "$router" map add hosts 0:0:0:5 3333:0:0:1 csum-mode neutral-map
	hctl "$router" hook add m prerouting src-pfx "$ILA_SIR_PFX" map hosts miss drop
	hctl "$router" hook add back postrouting src-pfx "$ILA_LOC_PFX" dst-pfx "$ILA_SIR_PFX" priority 310
	hctl "$server" hook add in prerouting src-pfx "$ILA_LOC_PFX" dst-pfx "$ILA_SIR_PFX" csum-mode neutral-map direction ila2sir
	hctl "$server" hook add out postrouting src-pfx "$ILA_SIR_PFX" dst-pfx "$ILA_LOC_PFX"
	in_ns "$client" ping -6 -c 2 -i 0.2 -W 5 "$ILA_SIR_HOST" >/dev/null
	for ns in router server; do
		hctl "${!ns}" save >"$f/$ns.saved"
	done
	[ "$(grep -c '^map add hosts ' "$f/router.saved")" -eq 1000001 ]
	grep -qx 'map create hosts max-entries 2000000' "$f/router.saved"
	grep -qx 'hook add back postrouting priority 310 translate src src-pfx 3333:0:0:1::/64 dst-pfx 2001:db8:0:3::/64 csum-mode adjust-transport' "$f/router.saved"
	# "reboot": everything goes, modules too
	hctl "$router" hook del m
	hctl "$router" hook del back
	hctl "$router" map destroy hosts
	unload_module xt_ILA
	unload_module nf_ila
	run in_ns "$client" ping -6 -c 1 -W 2 "$ILA_SIR_HOST"
	[ "$status" -ne 0 ]
	load_module nf_ila
	t0=$EPOCHREALTIME
	hctl "$router" restore "$f/router.saved"
	echo "# restore of 1,000,001 entries and 2 hooks: $(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }') s" >&3
	hctl "$server" restore <"$f/server.saved"
	for ns in router server; do
		hctl "${!ns}" save >"$f/$ns.again"
		diff <(sort "$f/$ns.saved") <(sort "$f/$ns.again")
	done
	in_ns "$client" ping -6 -c 2 -i 0.2 -W 5 "$ILA_SIR_HOST" >/dev/null
	ila_tcp "$client" "$server" "$ILA_SIR_HOST" 7301 50000
	# again: without -exist it fails on the first existing object, with it
	# nothing changes
	run hctl "$server" restore "$f/server.saved"
	[ "$status" -eq 1 ]
	[[ $output == *"File exists"* ]]
	hctl "$server" restore -exist "$f/server.saved"
	hctl "$server" save >"$f/server.third"
	diff "$f/server.saved" "$f/server.third"
	# -exist updates a hook whose definition changed
	sed -i 's/^hook add out postrouting priority 300/hook add out postrouting priority 301/' "$f/server.third"
	hctl "$server" restore -exist "$f/server.third"
	hctl "$server" hook list | grep -q '^out postrouting priority 301 '
	hook_flush
	hctl "$router" map destroy hosts
}

@test "map swap: 101 swaps under a steady stream with miss drop lose nothing; the contents really change" {
	ila_topo
	ip -n "$router" -6 route add 3333:0:0:2::/64 via fd00:2::2
	hctl "$router" map create live
	hctl "$router" map add live 0:0:0:5 3333:0:0:1
	hctl "$router" map create next max-entries 1000
	hctl "$router" map add next 0:0:0:5 3333:0:0:2
	hctl "$router" hook add m prerouting src-pfx "$ILA_SIR_PFX" map live miss drop
	hctl "$router" hook add back postrouting src-pfx "$ILA_LOC_PFX" dst-pfx "$ILA_SIR_PFX"
	hctl "$server" hook add in1 prerouting src-pfx 3333:0:0:1::/64 dst-pfx "$ILA_SIR_PFX"
	hctl "$server" hook add in2 prerouting src-pfx 3333:0:0:2::/64 dst-pfx "$ILA_SIR_PFX"
	hctl "$server" hook add out postrouting src-pfx "$ILA_SIR_PFX" dst-pfx "$ILA_LOC_PFX"
	in_ns "$client" ping -6 -c 1 -W 5 "$ILA_SIR_HOST" >/dev/null
	# a steady stream while the maps are swapped 101 times
	in_ns "$client" ping -6 -q -i 0.01 -c 1500 -W 5 "$ILA_SIR_HOST" >"$BATS_TEST_TMPDIR/ping" 2>&1 &
	local p=$! i
	for ((i = 0; i < 101; i++)); do
		hctl "$router" map swap live next
	done
	wait "$p"
	cat "$BATS_TEST_TMPDIR/ping"
	grep -q ' 0% packet loss' "$BATS_TEST_TMPDIR/ping"
	[ "$(hook_field "$router" m misses)" -eq 0 ]
	[ "$(hook_field "$router" m drops)" -eq 0 ]
	# both contents served traffic, and after an odd number of swaps "live"
	# holds what "next" had (entries and max-entries)
	[ "$(hook_field "$server" in1 packets)" -gt 0 ]
	[ "$(hook_field "$server" in2 packets)" -gt 0 ]
	[ "$(hctl "$router" map get live 0:0:0:5)" = "0:0:0:5 3333:0:0:2 csum-mode adjust-transport" ]
	[ "$(hctl "$router" -j map stats live | jq .max_entries)" -eq 1000 ]
	run hctl "$router" map swap live nosuch
	[ "$status" -eq 1 ]
	[[ $output == *"no such map"* ]]
	hook_flush
	hctl "$router" map destroy live
	hctl "$router" map destroy next
}

# rtc_hits NS : rtcache hits in NS (summed over CPUs, hex per CPU)
rtc_hits() {
	local n=0 first=1 e h rest
	while read -r e h rest; do
		[ "$first" = 1 ] && { first=0; continue; }
		n=$((n + 16#$h))
	done < <(in_ns "$1" cat /proc/net/stat/nf_conntrack_rtcache)
	echo "$n"
}

# udp_flow N PORT : N datagrams of ONE connection (fixed source port)
udp_flow() {
	local f=$BATS_TEST_TMPDIR/flow$1
	[ -e "$f" ] || printf '%*s' $(($1 * 32)) '' >"$f"
	in_ns "$client" socat -b 32 -u OPEN:"$f",rdonly \
		"UDP6-SENDTO:[$ILA_SIR_HOST]:$2,bind=[fd00:1::2]:4444,reuseaddr"
}

@test "hook + conntrack + rtcache on one router: a moved host's established flow follows at once" {
	load_module nf_conntrack_rtcache
	ila_topo
	ip -n "$router" -6 route add 3333:0:0:2::/64 via fd00:2::2
	in_ns "$router" nft -f - <<-'EOF'
	table inet fw {
		chain forward {
			type filter hook forward priority 0; policy accept;
			ct state new,established counter accept
		}
	}
	EOF
	hctl "$router" map create hosts
	hctl "$router" map add hosts 0:0:0:5 3333:0:0:1
	hctl "$router" hook add m prerouting src-pfx "$ILA_SIR_PFX" map hosts miss drop
	hctl "$router" hook add back postrouting src-pfx "$ILA_LOC_PFX" dst-pfx "$ILA_SIR_PFX"
	hctl "$server" hook add in1 prerouting src-pfx 3333:0:0:1::/64 dst-pfx "$ILA_SIR_PFX"
	hctl "$server" hook add in2 prerouting src-pfx 3333:0:0:2::/64 dst-pfx "$ILA_SIR_PFX"
	local h0
	h0=$(rtc_hits "$router")
	udp_flow 10 7401
	[ "$(hook_field "$server" in1 packets)" -eq 10 ]
	[ "$(rtc_hits "$router")" -ge $((h0 + 7)) ]	# the flow is served from the cache
	hctl "$router" map replace hosts 0:0:0:5 3333:0:0:2
	udp_flow 10 7401
	# every packet after the replace went to the new locator
	[ "$(hook_field "$server" in1 packets)" -eq 10 ]
	[ "$(hook_field "$server" in2 packets)" -eq 10 ]
	hook_flush
	hctl "$router" map destroy hosts
	unload_module nf_conntrack_rtcache
}
