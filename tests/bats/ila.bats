#!/usr/bin/env bats
# ILA target (kernel/xt_ILA.c, xtables/libxt_ILA.so), both ip6tables
# backends, every checksum mode.
#
#   client c0 ----------- r0 router r1 ----------- s0 server
#   fd00:1::2/64   fd00:1::1        fd00:2::1   fd00:2::2/64
#                  PRE  dst SIR->LOC             PRE  dst LOC->SIR
#                  POST src LOC->SIR             POST src SIR->LOC
#                  3333:0:0:1::/64 via s0        lo: 2001:db8:0:3::5
#
#   SIR 2001:db8:0:3::/64 (what the client uses), LOC 3333:0:0:1::/64 (the
#   locator on the wire between router and server). Transmit checksum
#   offload is off on every veth, so checksums are real and verified,
#   except in the CHECKSUM_PARTIAL test, which turns it back on.

load helpers
load ila_helpers

setup_file() {
	load_module xt_ILA
}

teardown_file() {
	unload_module xt_ILA
	unload_module nf_ila # xt_ILA's dependency (maps, hooks), loaded with it
}

teardown() {
	cleanup_all
}

# ---- userspace: options, messages, save/restore, translate -------------------

@test "ILA: --help lists every option" {
	run ip6tables -j ILA --help
	[ "$status" -eq 0 ]
	for o in --src-pfx --dst-pfx --translate --csum-mode adjust-transport neutral-map \
		neutral-map-auto none rfc6296 adj-transport no-action --direction sir2ila ila2sir \
		--map --miss; do
		[[ $output == *"$o"* ]] || { echo "missing $o"; false; }
	done
}

@test "ILA: bad options exit non-zero with a message naming the option, no rule added" {
	ns_create t
	local ok="--src-pfx 2001:db8:0:3::/64 --dst-pfx 3333:0:0:1::/64" ipt args want
	local -a cases=(
		"--src-pfx 2001:db8:0:3::/64|--dst-pfx ADDR/LEN is required"
		"--dst-pfx 3333::/64|--src-pfx ADDR/LEN is required"
		"--src-pfx 2001:zz8::/64 --dst-pfx 3333::/64|--src-pfx \"2001:zz8::/64\": bad IPv6 address"
		"--src-pfx 2001:db8::/65 --dst-pfx 3333::/65|--src-pfx \"2001:db8::/65\": prefix length 65 is longer than 64"
		"--src-pfx ::/0 --dst-pfx 3333::/64|--src-pfx \"::/0\": prefix length 0 would translate every address"
		"--src-pfx 2001:db8::/0x30 --dst-pfx 3333::/48|--src-pfx \"2001:db8::/0x30\": bad prefix length \"0x30\""
		"--src-pfx 2001:db8::/060 --dst-pfx 3333::/60|--src-pfx \"2001:db8::/060\": bad prefix length \"060\""
		"$ok --direction ila2sir|--direction only applies to --csum-mode neutral-map"
		"$ok --csum-mode neutral-map --direction back|--direction: unknown value \"back\""
		"--src-pfx 2001:db8::/48 --dst-pfx 3333::/64|--src-pfx (/48) and --dst-pfx (/64) must have the same prefix length"
		"--src-pfx 2001:db8::/64 --dst-pfx 3333::1/64|--dst-pfx \"3333::1/64\": host bits set (did you mean 3333::/64?)"
		"--src-pfx 2001:db8:: --dst-pfx 3333::/64|--src-pfx \"2001:db8::\": prefix length missing"
		"$ok --csum-mode checksum|--csum-mode: unknown value \"checksum\""
		"$ok --translate both|--translate: unknown value \"both\""
	)
	for ipt in $ILA_BACKENDS; do
		for c in "${cases[@]}"; do
			args=${c%%|*} want=${c#*|}
			# shellcheck disable=SC2086
			run in_ns "$t" "$ipt" -t mangle -A PREROUTING -j ILA $args
			echo "$ipt $args -> $status: $output"
			[ "$status" -ne 0 ]
			[[ $output == *"$want"* ]]
		done
		[ "$(in_ns "$t" "$ipt-save" -t mangle | grep -c ILA)" -eq 0 ]
	done
}

@test "ILA: the kernel refuses --translate in the wrong chain and tables other than mangle" {
	ns_create t
	local ok="--src-pfx 2001:db8:0:3::/64 --dst-pfx 3333:0:0:1::/64" ipt chain
	for ipt in $ILA_BACKENDS; do
		dmesg -C
		for chain in POSTROUTING INPUT; do
			# shellcheck disable=SC2086
			run in_ns "$t" "$ipt" -t mangle -A $chain -j ILA $ok
			[ "$status" -ne 0 ]
		done
		dmesg | grep -q 'xt_ILA: --translate dst: only in PREROUTING and OUTPUT'
		for chain in PREROUTING OUTPUT; do
			# shellcheck disable=SC2086
			run in_ns "$t" "$ipt" -t mangle -A $chain -j ILA --translate src $ok
			[ "$status" -ne 0 ]
		done
		dmesg | grep -q 'xt_ILA: --translate src: only in POSTROUTING and INPUT'
		# shellcheck disable=SC2086
		run in_ns "$t" "$ipt" -t filter -A INPUT -j ILA --translate src $ok
		[ "$status" -ne 0 ]
		[ "$(in_ns "$t" "$ipt-save" | grep -c ILA)" -eq 0 ]
		# and the right chains take them
		# shellcheck disable=SC2086
		in_ns "$t" "$ipt" -t mangle -A OUTPUT -j ILA $ok
		# shellcheck disable=SC2086
		in_ns "$t" "$ipt" -t mangle -A INPUT -j ILA --translate src $ok
		[ "$(in_ns "$t" "$ipt-save" -t mangle | grep -c -- '-j ILA')" -eq 2 ]
		in_ns "$t" "$ipt" -t mangle -F
	done
}

@test "ILA: in a regular chain (nft backend, no hook known at insertion) a rule translates only when reached from a chain it belongs in" {
	ila_topo
	# The router routes the SIR prefix to the server too: a packet left
	# untranslated is delivered as it is, one translated after routing is
	# lost (the server has no rule to take the locator back).
	ip -n "$router" -6 route add "$ILA_SIR_PFX" via fd00:2::2
	local ipt=ip6tables-nft
	in_ns "$router" $ipt -t mangle -N ila_dst
	in_ns "$router" $ipt -t mangle -A ila_dst -j ILA --src-pfx "$ILA_SIR_PFX" --dst-pfx "$ILA_LOC_PFX"
	in_ns "$router" nft list ruleset | grep -q 'chain ila_dst'
	# POSTROUTING jumps to it: after routing a --translate dst rule must not act
	in_ns "$router" $ipt -t mangle -A POSTROUTING -j ila_dst
	dmesg -C
	in_ns "$client" ping -6 -c 2 -i 0.2 -W 5 "$ILA_SIR_HOST" >/dev/null
	dmesg | grep -q 'xt_ILA: --translate dst in a chain reached from hook 4: only for PREROUTING and OUTPUT; packet left untranslated'
	in_ns "$router" $ipt -t mangle -F POSTROUTING
	# PREROUTING jumps to it: translated, as in a base chain
	in_ns "$router" $ipt -t mangle -A PREROUTING -j ila_dst
	in_ns "$server" ip6tables -t mangle -A PREROUTING -j ILA --src-pfx "$ILA_LOC_PFX" --dst-pfx "$ILA_SIR_PFX"
	in_ns "$server" ip6tables -t mangle -A POSTROUTING -j ILA --translate src --src-pfx "$ILA_SIR_PFX" --dst-pfx "$ILA_LOC_PFX"
	in_ns "$router" ip6tables -t mangle -A POSTROUTING -j ILA --translate src --src-pfx "$ILA_LOC_PFX" --dst-pfx "$ILA_SIR_PFX"
	in_ns "$client" ping -6 -c 2 -i 0.2 -W 5 "$ILA_SIR_HOST" >/dev/null
	ila_udp "$client" "$server" "$ILA_SIR_HOST" 7300 1000
	[ "$(ila_count "$server" ip6tables PREROUTING)" -ge 3 ]
	ila_flush
}

@test "ILA: save | restore round-trips byte for byte; nft shows xt target ILA" {
	ns_create t
	local ipt m a b
	for ipt in $ILA_BACKENDS; do
		in_ns "$t" "$ipt" -t mangle -A PREROUTING -d 2001:db8:0:3::/64 -j ILA \
			--src-pfx 2001:db8:0:3::/64 --dst-pfx 3333:0:0:1::/64
		for m in $ILA_MODES; do
			in_ns "$t" "$ipt" -t mangle -A POSTROUTING -j ILA --translate src \
				--src-pfx 3333:0:0:1::/64 --dst-pfx 2001:db8:0:3::/64 --csum-mode "$m"
		done
		in_ns "$t" "$ipt" -t mangle -A POSTROUTING -j ILA --translate src --direction ila2sir \
			--src-pfx 3333:0:0:1::/64 --dst-pfx 2001:db8:0:3::/64 --csum-mode neutral-map
		in_ns "$t" "$ipt" -t mangle -A OUTPUT -p udp -j ILA --src-pfx 2001:db8::/48 \
			--dst-pfx 2001:db8:ffff::/48 --csum-mode adj-transport
		in_ns "$t" "$ipt" -t mangle -A INPUT -j ILA --translate src --src-pfx ::/1 --dst-pfx 8000::/1 \
			--csum-mode no-action
		a=$(in_ns "$t" "$ipt-save" -t mangle | grep -v '^#')
		echo "$a"
		grep -qxF -- '-A PREROUTING -d 2001:db8:0:3::/64 -j ILA --src-pfx 2001:db8:0:3::/64 --dst-pfx 3333:0:0:1::/64 --translate dst --csum-mode adjust-transport' <<<"$a"
		grep -qxF -- '-A POSTROUTING -j ILA --src-pfx 3333:0:0:1::/64 --dst-pfx 2001:db8:0:3::/64 --translate src --csum-mode neutral-map-auto' <<<"$a"
		grep -qxF -- '-A POSTROUTING -j ILA --src-pfx 3333:0:0:1::/64 --dst-pfx 2001:db8:0:3::/64 --translate src --csum-mode rfc6296' <<<"$a"
		grep -qxF -- '-A POSTROUTING -j ILA --src-pfx 3333:0:0:1::/64 --dst-pfx 2001:db8:0:3::/64 --translate src --csum-mode neutral-map --direction ila2sir' <<<"$a"
		grep -qxF -- '-A INPUT -j ILA --src-pfx ::/1 --dst-pfx 8000::/1 --translate src --csum-mode none' <<<"$a"
		in_ns "$t" "$ipt" -t mangle -F
		in_ns "$t" "$ipt-restore" <<<"$a"
		b=$(in_ns "$t" "$ipt-save" -t mangle | grep -v '^#')
		[ "$a" = "$b" ]
		# -L is readable, -D finds the rule by its options
		in_ns "$t" "$ipt" -t mangle -L POSTROUTING -n | grep -q 'translate src src-pfx 3333:0:0:1::/64 dst-pfx 2001:db8:0:3::/64 csum-mode neutral-map$'
		in_ns "$t" "$ipt" -t mangle -D POSTROUTING -j ILA --translate src \
			--src-pfx 3333:0:0:1::/64 --dst-pfx 2001:db8:0:3::/64 --csum-mode none
		[ "$(in_ns "$t" "$ipt-save" -t mangle | grep -c -- '-j ILA')" -eq 8 ]
		if [ "$ipt" = ip6tables-nft ]; then
			run in_ns "$t" nft list ruleset
			echo "$output"
			[ "$(grep -c 'xt target ILA' <<<"$output")" -eq 8 ]
		fi
		in_ns "$t" "$ipt" -t mangle -F
	done
}

@test "ILA: ip6tables-translate gives the native rewrite for adjust-transport, nft accepts it" {
	ns_create t
	# the rule's -d is printed once (the target adds no guard it already has)
	local want="nft 'add rule ip6 mangle PREROUTING ip6 daddr 2001:db8:0:3::/64 counter ip6 daddr set ip6 daddr & ::ffff:ffff:ffff:ffff | 3333:0:0:1::'"
	run ip6tables-translate -t mangle -A PREROUTING -d 2001:db8:0:3::/64 -j ILA \
		--src-pfx 2001:db8:0:3::/64 --dst-pfx 3333:0:0:1::/64
	echo "$output"
	[ "$status" -eq 0 ]
	[ "${lines[-1]}" = "$want" ]

	# the statement works in nft
	in_ns "$t" nft add table ip6 mangle
	in_ns "$t" nft add chain ip6 mangle PREROUTING '{ type filter hook prerouting priority -150; }'
	eval "in_ns \"\$t\" ${lines[-1]}"
	# (nft 1.0.6 lists the mask as 3333::1:ffff:ffff:ffff:ffff, the same rewrite)
	run in_ns "$t" nft list chain ip6 mangle PREROUTING
	echo "$output"
	[[ $output == *"ip6 daddr 2001:db8:0:3::/64 counter packets 0 bytes 0 ip6 daddr set ip6 daddr & "*":ffff:ffff:ffff:ffff | 3333:0:0:1::"* ]]

	# a wider or inverted -d keeps the target's own prefix guard
	run ip6tables-translate -t mangle -A PREROUTING -d 2001:db8::/32 -j ILA \
		--src-pfx 2001:db8:0:3::/64 --dst-pfx 3333:0:0:1::/64
	[ "${lines[-1]}" = "nft 'add rule ip6 mangle PREROUTING ip6 daddr 2001:db8::/32 counter ip6 daddr 2001:db8:0:3::/64 ip6 daddr set ip6 daddr & ::ffff:ffff:ffff:ffff | 3333:0:0:1::'" ]
	run ip6tables-translate -t mangle -A PREROUTING ! -d 2001:db8:0:3::/64 -j ILA \
		--src-pfx 2001:db8:0:3::/64 --dst-pfx 3333:0:0:1::/64
	[[ ${lines[-1]} == *"counter ip6 daddr 2001:db8:0:3::/64 ip6 daddr set "* ]]

	run ip6tables-translate -t mangle -A POSTROUTING -j ILA --translate src \
		--src-pfx 3333:0:0:1::/64 --dst-pfx 2001:db8:0:3::/64
	[ "${lines[-1]}" = "nft 'add rule ip6 mangle POSTROUTING counter ip6 saddr 3333:0:0:1::/64 ip6 saddr set ip6 saddr & ::ffff:ffff:ffff:ffff | 2001:db8:0:3::'" ]

	# no native equivalent: said so (the rule comes back as a comment)
	local m
	for m in neutral-map neutral-map-auto none rfc6296; do
		run ip6tables-translate -t mangle -A PREROUTING -j ILA \
			--src-pfx 2001:db8:0:3::/64 --dst-pfx 3333:0:0:1::/64 --csum-mode "$m"
		echo "$output"
		[[ ${lines[-1]} == "nft # -t mangle -A PREROUTING -j ILA"* ]]
	done
}

# ---- traffic -----------------------------------------------------------------

@test "ILA: TCP, UDP (fragmented too) and ping over SIR->LOC->SIR in every mode, both backends" {
	ila_topo
	local ipt m port=5000
	for ipt in $ILA_BACKENDS; do
		for m in $(ila_modes_for "$ipt"); do
			echo "# $ipt $m" >&3
			ila_rules "$ipt" "$m"
			port=$((port + 1))
			ila_tcp "$client" "$server" "$ILA_SIR_HOST" "$port" 150000
			ila_udp "$client" "$server" "$ILA_SIR_HOST" "$port" 200
			ila_udp "$client" "$server" "$ILA_SIR_HOST" "$port" 4000	# 3 fragments
			in_ns "$client" ping -6 -c 2 -i 0.2 -W 5 "$ILA_SIR_HOST" >/dev/null
			# both directions went through all four rules
			[ "$(ila_count "$router" "$ipt" PREROUTING)" -gt 10 ]
			[ "$(ila_count "$router" "$ipt" POSTROUTING)" -gt 10 ]
			[ "$(ila_count "$server" "$ipt" PREROUTING)" -gt 10 ]
			[ "$(ila_count "$server" "$ipt" POSTROUTING)" -gt 10 ]
		done
	done
	ila_flush
}

@test "ILA: the wire carries the translated address; neutral modes keep the UDP checksum field, adjust-transport changes it" {
	ila_topo
	local ipt m d want c_in c_out port=5100
	for ipt in $ILA_BACKENDS; do
		for m in $(ila_modes_for "$ipt"); do
			ila_rules "$ipt" "$m"
			port=$((port + 1))
			d=$(mktemp -d "$BATS_TEST_TMPDIR/cap.XXXX")
			ila_capture_start "$router" r0 "$d/in.pcap" udp port "$port"
			local p_in=$CAP_PID
			ila_capture_start "$router" r1 "$d/out.pcap" udp port "$port"
			local p_out=$CAP_PID
			ila_udp "$client" "$server" "$ILA_SIR_HOST" "$port" 100
			wait "$p_in" "$p_out"

			want=$(ila_map "$ILA_SIR_HOST" "$ILA_SIR_PFX" "$ILA_LOC_PFX" "$m")
			[ "$(ila_pcap_addr "$d/in.pcap" dst)" = "$(ila_expand "$ILA_SIR_HOST")" ]
			[ "$(ila_pcap_addr "$d/out.pcap" dst)" = "$want" ]
			c_in=$(ila_pcap_word "$d/in.pcap" 23) c_out=$(ila_pcap_word "$d/out.pcap" 23)
			echo "# $ipt $m: wire dst $want, udp check $c_in -> $c_out" >&3
			run tcpdump -r "$d/out.pcap" -nn -vv
			echo "$output"
			case $m in
			adjust-transport)
				[ "$c_in" != "$c_out" ]
				[[ $output == *"udp sum ok"* ]] ;;
			neutral-map | neutral-map-auto | rfc6296)
				[ "$c_in" = "$c_out" ]
				[[ $output == *"udp sum ok"* ]] ;;
			none)
				[ "$c_in" = "$c_out" ]
				[[ $output == *"bad udp cksum"* ]] ;;
			esac
		done
	done
	ila_flush
}

@test "ILA: the router's Packet Too Big is translated back, so TCP through a smaller MTU completes" {
	ila_topo
	# only the router's egress is small: only its PTB can tell the client
	ip -n "$router" link set r1 mtu 1280
	local ipt m port=5200
	for ipt in $ILA_BACKENDS; do
		for m in $(ila_modes_for "$ipt"); do
			echo "# $ipt $m" >&3
			ila_rules "$ipt" "$m"
			ip -n "$client" -6 route flush cache
			port=$((port + 1))
			ila_tcp "$client" "$server" "$ILA_SIR_HOST" "$port" 200000
			in_ns "$client" ip -6 route get "$ILA_SIR_HOST" | grep -q 'mtu 1280'
		done
	done
	ila_flush
}

@test "ILA: OUTPUT and INPUT on hosts with checksum offload (CHECKSUM_PARTIAL)" {
	ila_topo
	# the hosts hand CHECKSUM_PARTIAL skbs to the target; the router's
	# devices complete the checksums in software, the hosts verify them
	ila_offload "$client" c0 on
	ila_offload "$server" s0 on
	local ipt m back port=5300
	for ipt in $ILA_BACKENDS; do
		for m in adjust-transport neutral-map; do
			echo "# $ipt $m" >&3
			back=
			[ "$m" = neutral-map ] && back="--direction ila2sir"
			ila_flush
			in_ns "$client" "$ipt" -t mangle -A OUTPUT -j ILA \
				--src-pfx "$ILA_SIR_PFX" --dst-pfx "$ILA_LOC_PFX" --csum-mode "$m"
			in_ns "$client" "$ipt" -t mangle -A INPUT -j ILA --translate src \
				--src-pfx "$ILA_LOC_PFX" --dst-pfx "$ILA_SIR_PFX" --csum-mode "$m" $back
			in_ns "$server" "$ipt" -t mangle -A PREROUTING -j ILA \
				--src-pfx "$ILA_LOC_PFX" --dst-pfx "$ILA_SIR_PFX" --csum-mode "$m" $back
			in_ns "$server" "$ipt" -t mangle -A POSTROUTING -j ILA --translate src \
				--src-pfx "$ILA_SIR_PFX" --dst-pfx "$ILA_LOC_PFX" --csum-mode "$m"
			port=$((port + 1))
			ila_tcp "$client" "$server" "$ILA_SIR_HOST" "$port" 150000
			ila_udp "$client" "$server" "$ILA_SIR_HOST" "$port" 300
			[ "$(ila_count "$client" "$ipt" OUTPUT)" -gt 10 ]
			[ "$(ila_count "$client" "$ipt" INPUT)" -gt 10 ]
		done
	done
	ila_flush
}

# vxlan_pair ZERO : an IPv6 VXLAN between the client (fd77::1) and the
# server's SIR address (fd77::2), over the translation; ZERO=1: zero outer
# UDP checksums (udp6zerocsumtx/rx) on both ends.
vxlan_pair() {
	local z=()
	[ "$1" = 1 ] && z=(udp6zerocsumtx udp6zerocsumrx)
	in_ns "$client" ip link del vx0 2>/dev/null || true
	in_ns "$server" ip link del vx0 2>/dev/null || true
	ip -n "$client" link add vx0 type vxlan id 77 dstport 4789 local fd00:1::2 \
		remote "$ILA_SIR_HOST" dev c0 "${z[@]}"
	ip -n "$server" link add vx0 type vxlan id 77 dstport 4789 local "$ILA_SIR_HOST" \
		remote fd00:1::2 dev s0 "${z[@]}"
	ip -n "$client" addr add fd77::1/64 dev vx0 nodad
	ip -n "$server" addr add fd77::2/64 dev vx0 nodad
	ip -n "$client" link set vx0 up
	ip -n "$server" link set vx0 up
}

@test "ILA: a locally sent IPv6 VXLAN through OUTPUT/INPUT rules, GSO and checksum offload on: outer checksums right, zero stays zero" {
	ila_topo
	# The client's VXLAN hands the target CHECKSUM_PARTIAL skbs whose
	# partial checksum is the INNER one (or GSO tunnel packets): the outer
	# UDP checksum is final (or a GSO seed, or zero). The router's devices
	# complete everything in software, so the server verifies it all.
	ila_offload "$client" c0 on
	ila_offload "$server" s0 on
	local m zero back port=5400 c s
	for zero in 0 1; do
		for m in adjust-transport neutral-map; do
			# a new tunnel for each mode: nothing of the previous
			# mode's connections is still in flight or cached
			vxlan_pair $zero
			echo "# zero outer checksum: $zero, $m" >&3
			back=
			[ "$m" = neutral-map ] && back="--direction ila2sir"
			ila_flush
			in_ns "$client" ip6tables -t mangle -A OUTPUT -d "$ILA_SIR_PFX" -j ILA \
				--src-pfx "$ILA_SIR_PFX" --dst-pfx "$ILA_LOC_PFX" --csum-mode "$m"
			in_ns "$client" ip6tables -t mangle -A INPUT -s "$ILA_LOC_PFX" -j ILA --translate src \
				--src-pfx "$ILA_LOC_PFX" --dst-pfx "$ILA_SIR_PFX" --csum-mode "$m" $back
			in_ns "$server" ip6tables -t mangle -A PREROUTING -d "$ILA_LOC_PFX" -j ILA \
				--src-pfx "$ILA_LOC_PFX" --dst-pfx "$ILA_SIR_PFX" --csum-mode "$m" $back
			in_ns "$server" ip6tables -t mangle -A POSTROUTING -s "$ILA_SIR_PFX" -j ILA --translate src \
				--src-pfx "$ILA_SIR_PFX" --dst-pfx "$ILA_LOC_PFX" --csum-mode "$m"
			# count from when the tunnel carries traffic both ways
			port=$((port + 1))
			ila_tcp "$client" "$server" fd77::2 "$((port + 100))" 1000
			sleep 1
			c=$(csum_errors "$client") s=$(csum_errors "$server")
			ila_tcp "$client" "$server" fd77::2 "$port" 100000
			ila_udp "$client" "$server" fd77::2 "$port" 3000
			ila_tcp "$server" "$client" fd77::1 "$port" 50000
			in_ns "$client" ping -6 -q -c 2 -i 0.2 -W 5 fd77::2 >/dev/null
			# which counter moved, should one (shown on failure)
			in_ns "$client" nstat -asz | grep -i csum | sed 's/^/client: /'
			in_ns "$server" nstat -asz | grep -i csum | sed 's/^/server: /'
			[ "$(csum_errors "$client")" = "$c" ]
			[ "$(csum_errors "$server")" = "$s" ]
			# the tunnel really went through the rules
			[ "$(ila_count "$client" ip6tables OUTPUT)" -gt 10 ]
			[ "$(ila_count "$server" ip6tables PREROUTING)" -gt 10 ]
		done
		if [ $zero = 1 ]; then
			# what the router forwards still has a zero UDP checksum
			local d=$BATS_TEST_TMPDIR/vx
			ila_capture_start "$router" r1 "$d" udp dst port 4789
			local cap=$CAP_PID
			in_ns "$client" ping -6 -q -c 1 -W 5 fd77::2 >/dev/null
			wait "$cap"
			[ "$(ila_pcap_word "$d" 23)" = 0000 ]
		fi
	done
	ila_flush
}

@test "ILA: a segment address behind a Routing header with segments left: translated, the L4 checksum (final destination) left alone" {
	ila_topo
	# The client sends to fd00:2::2 (the server's own address) through the
	# segment $ILA_SIR_HOST (SRv6, inline SRH): the router translates the
	# segment SIR->LOC, and the server, owning the LOC address, processes
	# the SRH and delivers to the final destination. The TCP/UDP
	# pseudo-header holds the final destination throughout: a translation
	# that "fixed" the checksum for the segment address would break it.
	ip -n "$server" -6 addr add 3333:0:0:1::5/128 dev lo
	in_ns "$server" sysctl -qw net.ipv6.conf.all.seg6_enabled=1 net.ipv6.conf.s0.seg6_enabled=1
	ip -n "$client" -6 route add fd00:2::2/128 encap seg6 mode inline segs "$ILA_SIR_HOST" \
		via fd00:1::1 dev c0
	in_ns "$router" ip6tables -t mangle -A PREROUTING -d "$ILA_SIR_PFX" -j ILA \
		--src-pfx "$ILA_SIR_PFX" --dst-pfx "$ILA_LOC_PFX" --csum-mode adjust-transport
	local c s
	c=$(csum_errors "$client") s=$(csum_errors "$server")
	ila_udp "$client" "$server" fd00:2::2 5500 300
	ila_tcp "$client" "$server" fd00:2::2 5501 20000
	[ "$(csum_errors "$client")" = "$c" ]
	[ "$(csum_errors "$server")" = "$s" ]
	[ "$(ila_count "$router" ip6tables PREROUTING)" -gt 3 ]
	ila_flush
}

@test "ILA: --translate src on a hand-built packet with a Home Address option: source translated, the L4 checksum (home address) left alone" {
	ila_topo
	# The server sends from its locator address to the client, once as
	# plain UDP and once with a Destination Options header carrying a
	# Home Address option (the mobile node's home address is the
	# pseudo-header's source, RFC 6275 6.3). The router's POSTROUTING rule
	# translates the source LOC->SIR (adjust-transport): the plain packet's
	# checksum must follow the new source, the HAO packet's must not move.
	local loc_host=3333:0:0:1::5 home=2001:db8:0:99::7 d sent got tool w
	tool=$BATS_TEST_DIRNAME/udp6_raw.pl
	ip -n "$server" -6 addr add "$loc_host/128" dev lo
	in_ns "$router" ip6tables -t mangle -A POSTROUTING -s "$ILA_LOC_PFX" -j ILA \
		--translate src --src-pfx "$ILA_LOC_PFX" --dst-pfx "$ILA_SIR_PFX" --csum-mode adjust-transport
	d=$(mktemp -d "$BATS_TEST_TMPDIR/hao.XXXX")

	ila_capture_start "$router" r0 "$d/plain.pcap" ip6 and src host "$ILA_SIR_HOST"
	local p=$CAP_PID
	sent=$(in_ns "$server" perl "$tool" "$loc_host" fd00:1::2 5600 5601)
	wait "$p"
	got=$(ila_pcap_word "$d/plain.pcap" 23)
	echo "# plain UDP: udp check $sent -> $got" >&3
	[ "$(ila_pcap_addr "$d/plain.pcap" src)" = "$(ila_expand "$ILA_SIR_HOST")" ]
	[ "$((16#$got))" != "$((16#$sent))" ]
	run tcpdump -r "$d/plain.pcap" -nn -vv
	[[ $output == *"udp sum ok"* ]]

	ila_capture_start "$router" r0 "$d/hao.pcap" ip6 and src host "$ILA_SIR_HOST"
	p=$CAP_PID
	sent=$(in_ns "$server" perl "$tool" "$loc_host" fd00:1::2 5600 5601 "$home")
	wait "$p"
	# IPv6 header 20 words, Destination Options 12, UDP checksum 4th word
	got=$(ila_pcap_word "$d/hao.pcap" 35)
	echo "# with HAO $home: udp check $sent -> $got" >&3
	[ "$(ila_pcap_addr "$d/hao.pcap" src)" = "$(ila_expand "$ILA_SIR_HOST")" ]
	w=$(ila_pcap_word "$d/hao.pcap" 3)
	[ "${w:0:2}" = 3c ] # next header 60: Destination Options
	[ "$((16#$got))" = "$((16#$sent))" ]
	[ "$(ila_count "$router" ip6tables POSTROUTING)" = 2 ]
	ila_flush
}

@test "ILA: an ICMPv6 error quoting a packet with a Home Address option: the quoted source translated, its L4 checksum left alone" {
	ila_topo
	# The client sends errors to the SIR host quoting a packet the SIR
	# host sent, once plain and once with a Home Address option (its UDP
	# checksum covers the home address, RFC 6275 6.3). The router's
	# PREROUTING rule translates the error's destination and the quoted
	# source SIR->LOC (adjust-transport): the plain quoted checksum must
	# follow the new source, the HAO one must not move; the ICMPv6
	# checksum stays valid in both.
	local home=2001:db8:0:99::7 d sent got tool w
	tool=$BATS_TEST_DIRNAME/icmp6_err_raw.pl
	in_ns "$router" ip6tables -t mangle -A PREROUTING -d "$ILA_SIR_PFX" -j ILA \
		--src-pfx "$ILA_SIR_PFX" --dst-pfx "$ILA_LOC_PFX" --csum-mode adjust-transport
	d=$(mktemp -d "$BATS_TEST_TMPDIR/quote.XXXX")
	ila_capture_start "$router" r1 "$d/plain.pcap" icmp6 and dst host 3333:0:0:1::5
	local p=$CAP_PID
	sent=$(in_ns "$client" perl "$tool" fd00:1::2 "$ILA_SIR_HOST" "$ILA_SIR_HOST" fd00:1::2)
	wait "$p"
	# IPv6 20 words, ICMPv6 4, quoted IPv6 20, UDP checksum its 4th word
	got=$(ila_pcap_word "$d/plain.pcap" 47)
	echo "# plain quote: udp check $sent -> $got" >&3
	[ "$((16#$got))" != "$((16#$sent))" ]
	[ "$(ila_pcap_word "$d/plain.pcap" 28)" = 3333 ] # quoted source: the locator
	run tcpdump -r "$d/plain.pcap" -nn -vv
	echo "$output"
	[[ $output != *"bad"* ]]

	ila_capture_start "$router" r1 "$d/hao.pcap" icmp6 and dst host 3333:0:0:1::5
	p=$CAP_PID
	sent=$(in_ns "$client" perl "$tool" fd00:1::2 "$ILA_SIR_HOST" "$ILA_SIR_HOST" fd00:1::2 "$home")
	wait "$p"
	# ... Destination Options 12 words more
	got=$(ila_pcap_word "$d/hao.pcap" 59)
	echo "# quote with HAO $home: udp check $sent -> $got" >&3
	w=$(ila_pcap_word "$d/hao.pcap" 27)
	[ "${w:0:2}" = 3c ] # quoted next header 60: Destination Options
	[ "$((16#$got))" = "$((16#$sent))" ]
	[ "$(ila_pcap_word "$d/hao.pcap" 28)" = 3333 ]
	run tcpdump -r "$d/hao.pcap" -nn -vv
	echo "$output"
	[[ $output != *"bad"* ]]
	[ "$(ila_count "$router" ip6tables PREROUTING)" = 2 ]
	ila_flush
}

# ---- module lifetime ---------------------------------------------------------

@test "ILA: rmmod is refused while a rule uses the target" {
	ns_create t
	local ipt
	for ipt in $ILA_BACKENDS; do
		in_ns "$t" "$ipt" -t mangle -A PREROUTING -j ILA \
			--src-pfx 2001:db8:0:3::/64 --dst-pfx 3333:0:0:1::/64
		run rmmod xt_ILA
		[ "$status" -ne 0 ]
		[[ $output == *"in use"* ]]
		[ -e /sys/module/xt_ILA ]
		in_ns "$t" "$ipt" -t mangle -F
		unload_module xt_ILA
		[ ! -e /sys/module/xt_ILA ]
		load_module xt_ILA
	done
}
