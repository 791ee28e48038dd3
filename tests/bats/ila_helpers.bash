# Helpers for tests/bats/ila.bats (loaded after helpers.bash).
#
# The ILA topology (ila_topo) is topo_crs plus a SIR prefix served by the
# server and a locator prefix routed to it:
#
#   client c0 ---- r0 router r1 ---- s0 server
#   fd00:1::2        ILA router        fd00:2::2, SIR 2001:db8:0:3::5 (lo)
#                    3333:0:0:1::/64 via fd00:2::2
#
# ila_rules IPT MODE installs the usual pairs, so every path is translated
# there and back (which makes mode none work with real checksums too):
#   router  PREROUTING  dst SIR -> LOC    POSTROUTING src LOC -> SIR
#   server  PREROUTING  dst LOC -> SIR    POSTROUTING src SIR -> LOC
# The src rules carry no -s match: ICMPv6 errors quoting a translated
# packet (Packet Too Big from the router) must reach the target too.

ILA_SIR_PFX=2001:db8:0:3::/64
ILA_LOC_PFX=3333:0:0:1::/64
ILA_SIR_HOST=2001:db8:0:3::5
ILA_MODES="adjust-transport neutral-map neutral-map-auto none rfc6296"
ILA_BACKENDS="ip6tables-legacy ip6tables-nft"

# ila_modes_for IPT : the modes the traffic tests run with IPT. The packet
# path is the same kernel target whichever backend installed the rule (the
# save/restore and option tests cover both backends in every mode), so the
# nft backend runs two modes (one transport-adjusting, one neutral) and
# legacy all of them: the same coverage in 60% of the VM time.
ila_modes_for() {
	if [ "$1" = ip6tables-nft ]; then echo "adjust-transport neutral-map"; else echo "$ILA_MODES"; fi
}

# ila_words ADDR : the 8 16-bit words of ADDR as integers, in array W.
ila_words() {
	local a=${1%%/*} head tail n i
	local -a h=() t=()
	if [[ $a == *::* ]]; then
		head=${a%%::*} tail=${a#*::}
	else
		head=$a tail=
	fi
	[ -n "$head" ] && IFS=: read -ra h <<<"$head"
	[ -n "$tail" ] && IFS=: read -ra t <<<"$tail"
	n=$((8 - ${#h[@]} - ${#t[@]}))
	W=()
	for i in "${h[@]}"; do W+=($((16#$i))); done
	for ((i = 0; i < n; i++)); do W+=(0); done
	for i in "${t[@]}"; do W+=($((16#$i))); done
}

# ila_expand ADDR : ADDR with all 8 words, no leading zeros (a:b:0:...).
ila_expand() {
	ila_words "$1"
	local IFS=:
	printf '%s\n' "$(printf '%x:%x:%x:%x:%x:%x:%x:%x' "${W[@]}")"
}

_oc_add() { # one's complement 16-bit a + b -> R
	R=$(($1 + $2))
	R=$(((R & 0xffff) + (R >> 16)))
}
_canon() { R=$(($1 == 0xffff ? 0 : $1)); }

# ila_map ADDR SRC_PFX DST_PFX MODE [sir2ila|ila2sir] : the address the
# target makes of ADDR (prefixes /64), written as by ila_expand. An
# independent restatement of include/common/ila_csum.h for checking what is
# on the wire.
ila_map() {
	local mode=$4 dir=${5:-sir2ila} i ss=0 sd=0 d adj= w=7
	ila_words "$2"; local -a S=("${W[@]}")
	ila_words "$3"; local -a D=("${W[@]}")
	ila_words "$1"; local -a A=("${W[@]}")
	for i in 0 1 2 3; do
		_oc_add "$ss" "${S[i]}"; ss=$R
		_oc_add "$sd" "${D[i]}"; sd=$R
		A[i]=${D[i]}
	done
	_oc_add "$sd" $((0xffff ^ ss)); _canon "$R"; d=$R
	case $mode in
	neutral-map-auto)
		_canon $((0xffff ^ d)); adj=$R ;;
	neutral-map)
		if ((A[4] & 0x1000)); then
			_oc_add "$d" $((0xffff ^ 0x1000)); A[4]=$((A[4] & ~0x1000))
			_canon $((0xffff ^ R)); adj=$R
		elif [ "$dir" = sir2ila ]; then
			_oc_add "$d" 0x1000; A[4]=$((A[4] | 0x1000))
			_canon $((0xffff ^ R)); adj=$R
		fi ;;	# ILA -> SIR without C-bit: identifier untouched
	rfc6296) # RFC 6296 3.5 for a /64: the first of words 4..7 not ffff
		for w in 4 5 6 7; do ((A[w] != 0xffff)) && break; done
		_canon $((0xffff ^ d)); adj=$R ;;
	esac
	if [ -n "$adj" ]; then
		_oc_add "${A[w]}" "$adj"; _canon "$R"; A[w]=$R
	fi
	local IFS=:
	printf '%x:%x:%x:%x:%x:%x:%x:%x\n' "${A[@]}"
}

# ila_offload NS DEV on|off : transmit checksum offload (off: every packet
# leaves with a full software checksum, which the receiver verifies).
ila_offload() {
	in_ns "$1" ethtool -K "$2" tx "$3" >/dev/null 2>&1 ||
		in_ns "$1" ethtool -K "$2" tx-checksumming "$3" >/dev/null
}

ila_topo() {
	topo_crs
	ip -n "$server" -6 addr add "$ILA_SIR_HOST/128" dev lo
	ip -n "$router" -6 route add "$ILA_LOC_PFX" via fd00:2::2
	local ns_dev
	for ns_dev in "$client c0" "$router r0" "$router r1" "$server s0"; do
		# shellcheck disable=SC2086
		ila_offload ${ns_dev} off
	done
}

# ila_flush : remove every ILA rule of both backends in all three netns.
ila_flush() {
	local ns
	for ns in "$client" "$router" "$server"; do
		in_ns "$ns" ip6tables-legacy -t mangle -F 2>/dev/null || true
		in_ns "$ns" nft flush ruleset 2>/dev/null || true
	done
}

# ila_rules IPT MODE : the four rules of the topology comment. neutral-map
# rules that go back from the locator to the SIR prefix say so (--direction
# ila2sir: undo where the C-bit is set).
ila_rules() {
	local ipt=$1 m="--csum-mode $2" back="--csum-mode $2"
	[ "$2" = neutral-map ] && back+=" --direction ila2sir"
	ila_flush
	# shellcheck disable=SC2086
	{
		in_ns "$router" "$ipt" -t mangle -A PREROUTING -j ILA --src-pfx "$ILA_SIR_PFX" --dst-pfx "$ILA_LOC_PFX" $m &&
		in_ns "$router" "$ipt" -t mangle -A POSTROUTING -j ILA --translate src --src-pfx "$ILA_LOC_PFX" --dst-pfx "$ILA_SIR_PFX" $back &&
		in_ns "$server" "$ipt" -t mangle -A PREROUTING -j ILA --src-pfx "$ILA_LOC_PFX" --dst-pfx "$ILA_SIR_PFX" $back &&
		in_ns "$server" "$ipt" -t mangle -A POSTROUTING -j ILA --translate src --src-pfx "$ILA_SIR_PFX" --dst-pfx "$ILA_LOC_PFX" $m
	}
}

# ila_count NS IPT CHAIN : packets that went through the ILA rules of CHAIN.
ila_count() {
	in_ns "$1" "$2" -t mangle -L "$3" -v -n -x | awk '$3 == "ILA" { n += $1 } END { print n + 0 }'
}

# ila_listening NS tcp|udp PORT : true once a socket listens there (ss
# itself exits 0 whether or not anything matched).
ila_listening() {
	[ -n "$(in_ns "$1" ss -Hln"${2:0:1}" "sport = :$3")" ]
}

# ila_tcp NS_FROM NS_TO DST PORT BYTES : TCP transfer, content compared.
ila_tcp() {
	local from=$1 to=$2 dst=$3 port=$4 bytes=$5 d
	d=$(mktemp -d "$BATS_TEST_TMPDIR/tcp.XXXX")
	head -c "$bytes" /dev/urandom >"$d/in"
	in_ns "$to" timeout 150 socat -u "TCP6-LISTEN:$port,reuseaddr" "CREATE:$d/out" 2>"$d/server.err" &
	local srv=$!
	wait_until 30 ila_listening "$to" tcp "$port"
	in_ns "$from" timeout 150 socat -u "OPEN:$d/in" "TCP6:[$dst]:$port" || { kill $srv 2>/dev/null; return 1; }
	wait $srv || { cat "$d/server.err" >&2; return 1; }
	cmp "$d/in" "$d/out"
}

# ila_udp NS_FROM NS_TO DST PORT BYTES : one datagram (fragmented when
# BYTES is over the MTU), content compared.
ila_udp() {
	local from=$1 to=$2 dst=$3 port=$4 bytes=$5 d
	d=$(mktemp -d "$BATS_TEST_TMPDIR/udp.XXXX")
	head -c "$bytes" /dev/urandom >"$d/in"
	in_ns "$to" timeout 120 socat -u "UDP6-RECVFROM:$port,reuseaddr" "CREATE:$d/out" 2>"$d/server.err" &
	local srv=$!
	wait_until 30 ila_listening "$to" udp "$port"
	in_ns "$from" socat -u "OPEN:$d/in" "UDP6-SENDTO:[$dst]:$port" || { kill $srv 2>/dev/null; return 1; }
	wait $srv || { cat "$d/server.err" >&2; return 1; }
	cmp "$d/in" "$d/out"
}

# ila_capture_start NS DEV FILE FILTER... : tcpdump for one packet, in the
# background ($CAP_PID), returns once it listens.
ila_capture_start() {
	local ns=$1 dev=$2 f=$3
	shift 3
	in_ns "$ns" timeout 120 tcpdump -i "$dev" -nn -U -c 1 -w "$f" "$@" 2>"$f.err" &
	CAP_PID=$!
	wait_until 30 grep -q 'listening on' "$f.err"
}

# ila_pcap_words FILE : the first packet's IPv6 bytes as 16-bit hex words.
ila_pcap_words() {
	tcpdump -r "$1" -nn -x 2>/dev/null |
		awk '/^[ \t]+0x/ { for (i = 2; i <= NF; i++) printf "%s ", $i } END { print "" }'
}

# ila_pcap_addr FILE src|dst : address of the captured packet (ila_expand form).
ila_pcap_addr() {
	ila_pcap_addr_at "$1" "$([ "$2" = src ] && echo 4 || echo 12)"
}

# ila_pcap_addr_at FILE WORD : the address at 16-bit word WORD of the
# captured packet (ila_expand form).
ila_pcap_addr_at() {
	local -a w
	read -ra w <<<"$(ila_pcap_words "$1")"
	local first=$2 i out=
	for ((i = first; i < first + 8; i++)); do
		out+=$(printf '%x' "$((16#${w[i]}))")
		((i < first + 7)) && out+=:
	done
	echo "$out"
}

# ila_pcap_word FILE N : 16-bit word N of the captured packet (hex).
ila_pcap_word() {
	local -a w
	read -ra w <<<"$(ila_pcap_words "$1")"
	echo "${w[$2]}"
}

# csum_errors NS : TCP + UDPv6 + ICMPv6 checksum errors counted by NS's stack
csum_errors() {
	in_ns "$1" nstat -asz TcpInCsumErrors Udp6InCsumErrors Icmp6InCsumErrors |
		awk '$1 ~ /CsumErrors$/ { n += $2 } END { print n + 0 }'
}

# hctl NS ARGS... : ilactl in netns NS
hctl() {
	local ns=$1
	shift
	in_ns "$ns" ilactl "$@"
}

# hook_field NS NAME FIELD : a field of `ilactl -j hook list` for hook NAME
hook_field() {
	hctl "$1" -j hook list | jq -r --arg n "$2" --arg f "$3" '.[] | select(.name == $n) | .[$f]'
}
