#!/usr/bin/env bats
# ILA maps (nf_ila + ilactl + ip6tables -j ILA --map), in the VM.
#
# The client talks to hosts by their SIR address (SIR prefix 2001:db8:ffff::/64,
# host identifiers ::11, ::12, ...). The router's mangle PREROUTING rule
# "-d SIR/64 -j ILA --map hosts" looks the identifier up and replaces the
# locator with the one of the server holding the host; each server
# translates its locator back to SIR (prefix rule) and answers from SIR:id.
# srv2 does that in csum-mode neutral-map-auto, so entries pointing to
# srv2 must carry that mode (translating back restores the identifier).
#
#                        r1 ---- s0  srv1  locator 2001:db8:1::/64
#   client c0 ---- r0 router r2 ---- s0  srv2  locator 2001:db8:2::/64
#   fd00:1::2       fd00:1::1  r3 ---- s0  srv3  locator 2001:db8:3::/64
#                           fd00:1N::1   fd00:1N::2
#
#   router: route LOC_N/64 via srvN; SIR/64 via srv3 (where misses that
#   continue untranslated end up: srv3 also holds SIR::99).

load helpers

SIR=2001:db8:ffff
HOST_A=$SIR::11 # in map "hosts"
HOST_B=$SIR::12
ID_A=0:0:0:11 # their identifiers, as ilactl takes them
ID_B=0:0:0:12
HOST_MISS=$SIR::99 # never in the map, reachable untranslated at srv3

setup_file() {
	load_module nf_ila
	load_module xt_ILA
}

teardown_file() {
	unload_module xt_ILA
	unload_module nf_ila
}

# netns are deleted with their rules and maps in place: that is the
# netns-exit path of both modules
teardown() {
	cleanup_all
}

# ilactl in the router's netns
rctl() { in_ns "$router" ilactl "$@"; }

# topo: client, router, srv1..3 with servers answering as "srvN" on
# TCP 7000 and UDP 7001 of each SIR address they hold (srv_hold).
topo() {
	local n
	ns_create client router srv1 srv2 srv3
	veth_link "$client" c0 "$router" r0
	addr "$client" c0 fd00:1::2/64
	addr "$router" r0 fd00:1::1/64
	ip -n "$client" -6 route add default via fd00:1::1
	forwarding "$router"
	for n in 1 2 3; do
		local s=srv$n
		veth_link "$router" r$n "${!s}" s0
		addr "$router" r$n fd00:1$n::1/64
		addr "${!s}" s0 fd00:1$n::2/64
		ip -n "${!s}" -6 route add default via fd00:1$n::1
		ip -n "$router" -6 route add 2001:db8:$n::/64 via fd00:1$n::2
		# locator -> SIR on arrival at the server
		in_ns "${!s}" ip6tables -t mangle -A PREROUTING -d 2001:db8:$n::/64 \
			-j ILA --src-pfx 2001:db8:$n::/64 --dst-pfx $SIR::/64 \
			--csum-mode "$(srv_mode $n)"
	done
	ip -n "$router" -6 route add $SIR::/64 via fd00:13::2
	srv_hold srv3 "$HOST_MISS"
}

# srv_mode N: checksum mode of srvN's translation back (and of entries to it)
srv_mode() { if [ "$1" = 2 ]; then echo neutral-map-auto; else echo adjust-transport; fi; }

# srv_hold srvN ADDR: srvN owns SIR address ADDR and answers on it
srv_hold() {
	local ns=${!1} a=$2
	ip -n "$ns" -6 addr add "$a/128" dev lo nodad
	in_ns "$ns" socat -T30 TCP6-LISTEN:7000,bind="[$a]",fork,reuseaddr SYSTEM:"read -r x; echo $1" &
	in_ns "$ns" socat -T30 UDP6-LISTEN:7001,bind="[$a]",fork,reuseaddr SYSTEM:"read -r x; echo $1" &
	wait_until 5 in_ns "$ns" sh -c "ss -Htln | grep -q ':7000 ' && ss -Huln | grep -q ':7001 '"
}

# tcp_ask|udp_ask ADDR [TIMEOUT]: the answer of the server holding ADDR.
# bash's /dev/tcp, /dev/udp (head reads the whole datagram): returns as soon
# as the line is there; the loaded TCG guest can take seconds to fork the
# server's shell. The server reads the request before it answers.
tcp_ask() {
	in_ns "$client" timeout "${2:-30}" bash -c \
		'exec 3<>"/dev/tcp/$0/7000" && echo hi >&3 && head -n 1 <&3' "$1"
}
udp_ask() {
	in_ns "$client" timeout "${2:-30}" bash -c \
		'exec 3<>"/dev/udp/$0/7001" && echo hi >&3 && head -n 1 <&3' "$1"
}

# map_field MAP FIELD: one number of "ilactl -j map stats MAP"
map_field() { rctl -j map stats "$1" | jq -r ".$2"; }

secs_since() { awk -v a="$1" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.2f", b - a }'; }

router_rule() {
	in_ns "$router" ip6tables -t mangle -A PREROUTING -d $SIR::/64 -j ILA --map hosts "$@"
}

@test "map commands: create, add, replace, get, show, del, flush, destroy, list, exit codes" {
	ns_create router
	rctl map create hosts
	run rctl map create hosts
	[ "$status" -eq 1 ]
	[[ "$output" == *"map create hosts"*"File exists"*"map exists"* ]]
	rctl map add hosts 0:0:0:11 2001:db8:1:0
	# full addresses only where the half not used is zero: never lose bits
	run rctl map add hosts $SIR::12 2001:db8:2:0
	[ "$status" -eq 2 ]
	[[ "$output" == *'bad identifier "2001:db8:ffff::12"'*"high 64 bits"* ]]
	run rctl map add hosts ::12 2001:db8:2:0:abcd::1
	[ "$status" -eq 2 ]
	[[ "$output" == *'bad locator "2001:db8:2:0:abcd::1"'*"low 64 bits"* ]]
	rctl map add hosts ::12 2001:db8:2:: csum-mode neutral-map
	run rctl map add hosts 0:0:0:11 2001:db8:3:0
	[ "$status" -eq 1 ]
	[[ "$output" == *"map add hosts 0:0:0:11"*"already mapped"* ]]
	[ "$(rctl map get hosts 0:0:0:12)" = "0:0:0:12 2001:db8:2:0 csum-mode neutral-map" ]
	rctl map replace hosts 0:0:0:11 2001:db8:3:0 csum-mode none
	rctl map replace hosts 0:0:0:13 2001:db8:1:0
	[ "$(rctl -j map get hosts 0:0:0:11 | jq -r .locator,.csum_mode | xargs)" = "2001:db8:3:0 none" ]
	[ "$(rctl -j map show hosts | jq -r '.name, (.entries | length)' | xargs)" = "hosts 3" ]
	# -p: the same JSON, indented
	[ "$(rctl -p map show hosts | jq -c .)" = "$(rctl -j map show hosts | jq -c .)" ]
	[ "$(rctl -p map show hosts | wc -l)" -gt 8 ]
	rctl -V | grep -q 'JSON schema 1$'

	[ "$(rctl map show hosts | sort | head -1)" = "0:0:0:11 2001:db8:3:0 csum-mode none" ]
	# replace without csum-mode keeps the entry's mode
	rctl map replace hosts 0:0:0:12 2001:db8:4:0
	[ "$(rctl map get hosts 0:0:0:12)" = "0:0:0:12 2001:db8:4:0 csum-mode neutral-map" ]
	rctl map del hosts 0:0:0:13
	run rctl map del hosts 0:0:0:13
	[ "$status" -eq 1 ]
	[[ "$output" == *"map del hosts 0:0:0:13"*"not in map"* ]]
	run rctl map get hosts 0:0:0:13
	[ "$status" -eq 1 ]
	run rctl map get nosuch 0:0:0:1
	[ "$status" -eq 1 ]
	[[ "$output" == *"map get nosuch"*"no such map"* ]]
	[ "$(map_field hosts entries)" -eq 2 ]
	rctl map create other max-entries 1
	rctl map add other 0:0:0:1 1:2:3:4
	run rctl map add other 0:0:0:2 1:2:3:4
	[ "$status" -eq 1 ]
	[[ "$output" == *"full"* ]]
	[ "$(rctl -j map list | jq -r '.[].name' | sort | xargs)" = "hosts other" ]
	rctl map flush hosts
	[ "$(map_field hosts entries)" -eq 0 ]
	rctl map destroy other
	[ "$(rctl -j map list | jq length)" -eq 1 ]
	# usage errors: exit 2, message names the word
	run rctl map add hosts 0:0:1 2001:db8:1:0
	[ "$status" -eq 2 ]
	[[ "$output" == *'bad identifier "0:0:1"'* ]]
	run rctl map frob hosts
	[ "$status" -eq 2 ]
	run rctl map create 'bad name'
	[ "$status" -eq 2 ]
	rctl --help | grep -q 'map add NAME IDENT LOCATOR'
	# maps are per netns
	ns_create other_ns
	[ "$(in_ns "$other_ns" ilactl -j map list)" = "[]" ]
}

@test "batch: bad line reported with its number, nothing applied; kernel errors name the line" {
	ns_create router
	rctl map create hosts
	printf 'map add hosts 0:0:0:1 2001:db8:1:0\n# comment\n\nmap add hosts 0:0:0:2 2001:db8:1:zz\n' >"$BATS_TEST_TMPDIR/bad"
	run rctl -b "$BATS_TEST_TMPDIR/bad"
	[ "$status" -eq 2 ]
	[[ "$output" == *"bad:4: bad locator \"2001:db8:1:zz\""* ]]
	[ "$(map_field hosts entries)" -eq 0 ]
	printf 'map add hosts 0:0:0:1 2001:db8:1:0\nmap add hosts 0:0:0:1 2001:db8:2:0\n' | {
		run in_ns "$router" ilactl -b -
		[ "$status" -eq 1 ]
		[[ "$output" == *"stdin:2: map add hosts 0:0:0:1 2001:db8:2:0: File exists"* ]]
	}
	[ "$(rctl map get hosts 0:0:0:1)" = "0:0:0:1 2001:db8:1:0 csum-mode adjust-transport" ]
	# -force (ip's spelling) goes on past failing lines and reports each
	printf 'map add hosts 0:0:0:1 2001:db8:2:0\nmap add hosts 0:0:0:2 2001:db8:2:0\nmap del hosts 0:0:0:9\nmap add hosts 0:0:0:3 2001:db8:2:0\n' >"$BATS_TEST_TMPDIR/some"
	run rctl -force -b "$BATS_TEST_TMPDIR/some"
	[ "$status" -eq 1 ]
	[[ "$output" == *"some:1: map add hosts 0:0:0:1 2001:db8:2:0: File exists"* ]]
	[[ "$output" == *"some:3: map del hosts 0:0:0:9"* ]]
	[[ "$output" == *"failed lines: 2; commands sent: 4 of 4"* ]]
	[ "$(map_field hosts entries)" -eq 3 ]
	# without it the first failing batch stops
	rctl map flush hosts
	run rctl -b "$BATS_TEST_TMPDIR/some"
	[ "$status" -eq 1 ]
	[[ "$output" == *"stopped after the batch with errors"* ]]
	# hook commands in a batch: a bad one is refused before anything runs
	printf 'map add hosts 0:0:0:7 2001:db8:2:0\nhook add h1 prerouting src-pfx 2001:db8:ffff::/64\n' >"$BATS_TEST_TMPDIR/h"
	run rctl -b "$BATS_TEST_TMPDIR/h"
	[ "$status" -eq 2 ]
	[[ "$output" == *"h:2: "* ]]
	[ "$(map_field hosts entries)" -eq 3 ]
}

@test "monitor: every change comes out as the command that makes it, and replays into the same map" {
	ns_create router copy
	local ev=$BATS_TEST_TMPDIR/events
	ip netns exec "$router" ilactl -v monitor >"$ev" 2>"$ev.err" &
	local mon=$!
	wait_until 10 grep -q 'monitoring map changes' "$ev.err"
	rctl map create hosts
	rctl map add hosts 0:0:0:1 2001:db8:1:0
	rctl map add hosts 0:0:0:2 2001:db8:2:0 csum-mode neutral-map
	rctl map replace hosts 0:0:0:1 2001:db8:3:0
	printf 'map add hosts 0:0:0:3 2001:db8:1:0 csum-mode rfc6296\nmap del hosts 0:0:0:2\n' | rctl -b -
	run rctl map del hosts 0:0:0:9	# fails: no event
	rctl map create spare
	rctl map swap hosts spare
	rctl map swap hosts spare
	rctl map reset-counters hosts
	rctl map flush spare
	rctl map destroy spare
	wait_until 10 grep -qx 'map destroy spare' "$ev"
	kill "$mon"
	diff -u - "$ev" <<-'EOF'
	map create hosts max-entries 16777216
	map add hosts 0:0:0:1 2001:db8:1:0 csum-mode adjust-transport
	map add hosts 0:0:0:2 2001:db8:2:0 csum-mode neutral-map
	map replace hosts 0:0:0:1 2001:db8:3:0 csum-mode adjust-transport
	map add hosts 0:0:0:3 2001:db8:1:0 csum-mode rfc6296
	map del hosts 0:0:0:2
	map create spare max-entries 16777216
	map swap hosts spare
	map swap hosts spare
	map reset-counters hosts
	map flush spare
	map destroy spare
	EOF
	# the events are a batch file: replayed elsewhere, the same map
	in_ns "$copy" ilactl -b "$ev"
	[ "$(in_ns "$copy" ilactl map show hosts | sort)" = "$(rctl map show hosts | sort)" ]
	# JSON: one object per line, per netns (the copy's changes are not seen here)
	ip netns exec "$router" ilactl -j -v monitor >"$ev.json" 2>"$ev.err2" &
	mon=$!
	wait_until 10 grep -q 'monitoring map changes' "$ev.err2"
	in_ns "$copy" ilactl map flush hosts
	rctl map del hosts 0:0:0:3
	wait_until 10 grep -q . "$ev.json"
	kill "$mon"
	[ "$(jq -c . "$ev.json")" = '{"event":"del","name":"hosts","identifier":"0:0:0:3"}' ]
}

@test "without CAP_NET_ADMIN in the netns's user namespace: changes, entry reads and events refused; map list allowed" {
	ns_create router
	rctl map create hosts
	rctl map add hosts 0:0:0:1 2001:db8:1:0
	nobody() { in_ns "$router" setpriv --reuid=nobody --regid=nogroup --clear-groups --inh-caps=-all "$@"; }
	for cmd in "map create x" "map destroy hosts" "map add hosts 0:0:0:2 1:2:3:4" \
		"map replace hosts 0:0:0:1 1:2:3:4" "map del hosts 0:0:0:1" "map flush hosts" \
		"map reset-counters hosts"; do
		# shellcheck disable=SC2086
		run nobody ilactl $cmd
		[ "$status" -eq 1 ]
		[[ "$output" == *"Operation not permitted"* ]]
	done
	# which identifier is where: entries (get, dump) and events are for admins
	for cmd in "map show hosts" "map get hosts 0:0:0:1" "monitor"; do
		# shellcheck disable=SC2086
		run nobody ilactl $cmd
		echo "ilactl $cmd: $status $output"
		[ "$status" -ne 0 ]
		[[ "$output" == *"Operation not permitted"* ]]
	done
	# ... names, sizes and counters are open, as route dumps are
	[ "$(nobody ilactl -j map list | jq -r '.[].name')" = "hosts" ]
	[ "$(rctl map show hosts)" = "0:0:0:1 2001:db8:1:0 csum-mode adjust-transport" ]
	# root of a user namespace does not own this netns either
	if nobody unshare -Ur true 2>/dev/null; then
		run nobody unshare -Ur ilactl map create x
		[ "$status" -eq 1 ]
		[[ "$output" == *"Operation not permitted"* ]]
		# ... but does own a netns it creates with it (netns-aware family)
		nobody unshare -Urn sh -c 'ilactl map create mine && ilactl map add mine 0:0:0:1 1:2:3:4 &&
			ilactl map show mine | grep -q "^0:0:0:1 1:2:3:4"'
	fi
}

@test "selftest=1: the inline map lookup agrees with rhashtable_lookup() on this kernel" {
	unload_module xt_ILA
	unload_module nf_ila
	dmesg -C
	load_module nf_ila selftest=1
	dmesg | grep 'nf_ila: selftest:' >&3
	dmesg | grep -q 'nf_ila: selftest: the inline map lookup agrees with rhashtable_lookup() in [0-9]* lookups'
	unload_module nf_ila
	load_module xt_ILA
}

@test "malformed netlink requests are refused and leave the map unchanged" {
	ns_create router
	rctl map create hosts
	rctl map add hosts 0:0:0:1 2001:db8:1:0
	rctl map add hosts 0:0:0:2 2001:db8:2:0 csum-mode neutral-map-auto
	before=$(rctl map show hosts | sort)
	run in_ns "$router" ila_nltest hosts
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"accepted"* ]]
	[ "$(echo "$output" | grep -c "^ok ")" -ge 20 ]
	[ "$(rctl map show hosts | sort)" = "$before" ]
	[ "$(rctl -j map list | jq -r '.[].name')" = "hosts" ]
}

@test "swap, flush and destroy go ahead while an entry dump is held open (a slow or hostile reader)" {
	ns_create router
	local f=$BATS_TEST_TMPDIR hold
	rctl map create hosts
	rctl map create scratch
	awk 'BEGIN { for (i = 1; i <= 5000; i++) printf "map add hosts 0:0:1:%x 2001:db8:1:0\n", i
		for (i = 1; i <= 3000; i++) printf "map add scratch 0:0:2:%x 2001:db8:2:0\n", i }' >"$f/fill"
	rctl -b "$f/fill"
	in_ns "$router" perl "$BATS_TEST_DIRNAME/nl_dump_hold.pl" hosts >"$f/hold" &
	hold=$!
	wait_until 10 grep -q '^held [1-9]' "$f/hold"
	# the dump walks the table it started on; the map goes on without it
	rctl map swap hosts scratch
	[ "$(map_field hosts entries)" -eq 3000 ]
	[ "$(map_field scratch entries)" -eq 5000 ]
	rctl map flush scratch
	[ "$(map_field scratch entries)" -eq 0 ]
	rctl map destroy scratch
	rctl map swap hosts hosts
	rctl map flush hosts
	rctl map add hosts 0:0:0:1 2001:db8:1:0
	[ "$(rctl map show hosts)" = "0:0:0:1 2001:db8:1:0 csum-mode adjust-transport" ]
	kill "$hold"
	wait "$hold" || true
	# the held table goes with the reader (a leak would show at rmmod)
}

@test "ip6tables --map: TCP and UDP reach the server of each identifier; stats count" {
	topo
	srv_hold srv1 "$HOST_A"
	srv_hold srv2 "$HOST_B"
	rctl map create hosts
	rctl map add hosts $ID_A 2001:db8:1:0
	rctl map add hosts $ID_B 2001:db8:2:0 csum-mode neutral-map-auto
	router_rule
	in_ns "$router" ip6tables -t mangle -S PREROUTING | grep -- '--map hosts'
	[ "$(map_field hosts rules)" -eq 1 ]
	# exact counters first, before TCP leaves stray segments around
	in_ns "$client" ping -q -c 3 -i 0.2 -W 2 $HOST_A
	in_ns "$client" ping -q -c 2 -i 0.2 -W 2 $HOST_MISS
	[ "$(map_field hosts lookups)" -eq 5 ]
	[ "$(map_field hosts hits)" -eq 3 ]
	[ "$(map_field hosts misses)" -eq 2 ]
	[ "$(tcp_ask $HOST_A)" = srv1 ]
	[ "$(udp_ask $HOST_A)" = srv1 ]
	[ "$(tcp_ask $HOST_B)" = srv2 ]
	[ "$(udp_ask $HOST_B)" = srv2 ]
	[ "$(map_field hosts hits)" -ge 7 ]
	# per-entry hits: -s in text, always in JSON; reset-counters zeroes all
	local a_hits b_hits
	# the last segments of the TCP exchanges are through
	lookups_settled() { local l; l=$(map_field hosts lookups); sleep 0.5; [ "$l" = "$(map_field hosts lookups)" ]; }
	wait_until 20 lookups_settled
	a_hits=$(rctl -s map get hosts $ID_A | awk '{ print $NF }')
	b_hits=$(rctl -j map show hosts | jq -r --arg i "$ID_A" '.entries[] | select(.identifier != $i) | .hits')
	[ "$a_hits" -ge 5 ]	# 3 pings, a TCP and a UDP exchange
	[ "$b_hits" -ge 2 ]
	[ $((a_hits + b_hits)) -eq "$(map_field hosts hits)" ]
	rctl -s map show hosts | grep -q "^$ID_A 2001:db8:1:0 csum-mode adjust-transport hits $a_hits\$"
	rctl map reset-counters hosts
	[ "$(map_field hosts lookups)" -eq 0 ]
	[ "$(rctl -j map show hosts | jq '[.entries[].hits] | add')" -eq 0 ]
	in_ns "$client" ping -q -c 2 -i 0.2 -W 2 $HOST_A
	[ "$(rctl -s map get hosts $ID_A | awk '{ print $NF }')" -eq 2 ]
	[ "$(map_field hosts hits)" -eq 2 ]
	# replace keeps an identifier's count
	rctl map replace hosts $ID_A 2001:db8:1:0
	[ "$(rctl -j map get hosts $ID_A | jq .hits)" -eq 2 ]
}

@test "replace moves a host: the next connections reach the new locator" {
	topo
	srv_hold srv1 "$HOST_A"
	srv_hold srv2 "$HOST_A"
	rctl map create hosts
	rctl map add hosts $ID_A 2001:db8:1:0
	router_rule
	[ "$(tcp_ask $HOST_A)" = srv1 ]
	[ "$(udp_ask $HOST_A)" = srv1 ]
	rctl map replace hosts $ID_A 2001:db8:2:0 csum-mode neutral-map-auto
	[ "$(tcp_ask $HOST_A)" = srv2 ]
	[ "$(udp_ask $HOST_A)" = srv2 ]
	rctl map del hosts $ID_A # now a miss: continues untranslated to srv3, which lacks ::11
	run tcp_ask $HOST_A 5
	[ "$status" -ne 0 ]
}

@test "miss: accept continues untranslated, drop drops" {
	topo
	rctl map create hosts
	router_rule
	[ "$(tcp_ask $HOST_MISS)" = srv3 ]
	[ "$(udp_ask $HOST_MISS)" = srv3 ]
	in_ns "$router" ip6tables -t mangle -F PREROUTING
	router_rule --miss drop
	in_ns "$router" ip6tables -t mangle -S PREROUTING | grep -- '--miss drop'
	m0=$(map_field hosts misses)
	run tcp_ask $HOST_MISS 5
	[ "$status" -ne 0 ]
	[ "$(map_field hosts misses)" -gt "$m0" ]
	[ "$(in_ns "$router" ip6tables -t mangle -vxnL PREROUTING | awk '/ILA/ {print $1}')" -gt 0 ]
	# notify-miss: monitor sees each identifier not found, as a comment
	local ev=$BATS_TEST_TMPDIR/ev
	in_ns "$router" ip6tables -t mangle -F PREROUTING
	rctl map destroy hosts
	rctl map create hosts notify-miss
	rctl map stats hosts | grep -q ' notify-miss$'
	[ "$(map_field hosts notify_miss)" = true ]
	rctl save | grep -qx 'map create hosts max-entries 16777216 notify-miss'
	rctl map add hosts $ID_A 2001:db8:1:0
	srv_hold srv1 "$HOST_A"
	router_rule --miss drop
	ip netns exec "$router" ilactl -v monitor >"$ev" 2>"$ev.err" &
	local mon=$!
	wait_until 10 grep -q 'monitoring map changes' "$ev.err"
	run in_ns "$client" ping -q -c 3 -i 0.2 -W 1 $HOST_MISS
	in_ns "$client" ping -q -c 1 -W 2 $HOST_A	# a hit: no event
	wait_until 10 test "$(grep -c '^# miss hosts 0:0:0:99$' "$ev")" -eq 3
	kill "$mon"
	[ "$(wc -l <"$ev")" -eq 3 ]
	# --miss drop,notify on a rule: the misses of that rule only, on a map
	# without notify-miss
	in_ns "$router" ip6tables -t mangle -F PREROUTING
	rctl map destroy hosts
	rctl map create hosts
	rctl map add hosts $ID_A 2001:db8:1:0
	in_ns "$router" ip6tables -t mangle -A PREROUTING -d $SIR::99/128 -j ILA --map hosts --miss drop,notify
	router_rule --miss drop
	in_ns "$router" ip6tables -t mangle -S PREROUTING | grep -q -- '-d '"$SIR"'::99/128 -j ILA --map hosts --translate dst --miss drop,notify$'
	ip netns exec "$router" ilactl -v monitor >"$ev" 2>"$ev.err" &
	mon=$!
	wait_until 10 grep -q 'monitoring map changes' "$ev.err"
	run in_ns "$client" ping -q -c 2 -i 0.2 -W 1 $HOST_MISS	# rule 1: notify
	run in_ns "$client" ping -q -c 2 -i 0.2 -W 1 $SIR::98	# rule 2: silent
	[ "$status" -ne 0 ]
	in_ns "$client" ping -q -c 1 -W 2 $HOST_A
	wait_until 10 test "$(grep -c '^# miss hosts 0:0:0:99$' "$ev")" -eq 2
	sleep 0.5
	kill "$mon"
	[ "$(wc -l <"$ev")" -eq 2 ]
}

@test "--map rules: save/restore round trip on both backends, nft shows them, no native translation" {
	ns_create router
	rctl map create hosts
	local ipt a b want="-A PREROUTING -d $SIR::/64 -j ILA --map hosts --translate dst --miss drop"
	for ipt in ip6tables-legacy ip6tables-nft; do
		in_ns "$router" $ipt -t mangle -A PREROUTING -d $SIR::/64 -j ILA --map hosts --miss drop
		in_ns "$router" $ipt -t mangle -L PREROUTING -n | grep -q 'translate dst map hosts miss drop$'
		a=$(in_ns "$router" $ipt-save -t mangle | grep -v '^#')
		grep -qxF -- "$want" <<<"$a"
		in_ns "$router" $ipt -t mangle -F
		[ "$(map_field hosts rules)" -eq 0 ]
		in_ns "$router" $ipt-restore <<<"$a"
		b=$(in_ns "$router" $ipt-save -t mangle | grep -v '^#')
		[ "$a" = "$b" ]
		[ "$(map_field hosts rules)" -eq 1 ]
		if [ $ipt = ip6tables-nft ]; then
			in_ns "$router" nft list ruleset | grep -q 'xt target ILA'
		fi
		in_ns "$router" $ipt -t mangle -F
	done
	run ip6tables-translate -t mangle -A PREROUTING -d $SIR::/64 -j ILA --map hosts
	[[ "$output" == "nft # "* ]]
	run in_ns "$router" ip6tables -t mangle -A PREROUTING -j ILA --miss drop
	[ "$status" -eq 2 ]
	[[ "$output" == *"--miss needs --map"* ]]
	# --miss with notify: each form saves in its canonical form and restores
	local form canon
	for form in notify:notify accept,notify:notify drop,notify:drop,notify notify,drop:drop,notify; do
		canon=${form#*:} form=${form%%:*}
		for ipt in ip6tables-legacy ip6tables-nft; do
			in_ns "$router" $ipt -t mangle -A PREROUTING -d $SIR::/64 -j ILA --map hosts --miss "$form"
			a=$(in_ns "$router" $ipt-save -t mangle | grep -- '-j ILA')
			[ "$a" = "-A PREROUTING -d $SIR::/64 -j ILA --map hosts --translate dst --miss $canon" ]
			in_ns "$router" $ipt -t mangle -F
			in_ns "$router" $ipt-restore --noflush <<<"*mangle
$a
COMMIT"
			[ "$(in_ns "$router" $ipt-save -t mangle | grep -- '-j ILA')" = "$a" ]
			in_ns "$router" $ipt -t mangle -L PREROUTING -n | grep -q "miss $canon\$"
			in_ns "$router" $ipt -t mangle -F
		done
	done
	run in_ns "$router" ip6tables -t mangle -A PREROUTING -j ILA --map hosts --miss notify,notify
	[ "$status" -eq 2 ]
	[[ "$output" == *'--miss: unknown value "notify,notify"'* ]]
	run in_ns "$router" ip6tables -t mangle -A PREROUTING -j ILA --map hosts --csum-mode none
	[ "$status" -eq 2 ]
}

@test "a map used by a rule can't be destroyed; a rule needs an existing map" {
	ns_create router
	rctl map create hosts
	router_rule
	run rctl map destroy hosts
	[ "$status" -eq 1 ]
	[[ "$output" == *"map destroy hosts"*"busy"*"in use by ip6tables rules"* ]]
	[ "$(map_field hosts rules)" -eq 1 ]
	run in_ns "$router" ip6tables -t mangle -A PREROUTING -d $SIR::/64 -j ILA --map nosuch
	[ "$status" -ne 0 ]
	in_ns "$router" ip6tables -t mangle -F PREROUTING
	[ "$(map_field hosts rules)" -eq 0 ]
	rctl map destroy hosts
	# the netns going away with a rule and a map in it frees both (kmemleak-free rmmod later)
	rctl map create hosts
	router_rule
}

@test "1,000,000 entries by batch: load rate, traffic still translated, show count, stats" {
	topo
	srv_hold srv1 "$SIR::a:1"
	srv_hold srv2 "$SIR::f:4240"
	rctl map create hosts
	router_rule
	# identifiers ::0:0 .. ::f:423f (1,000,000), locator by identifier mod 3
	awk 'BEGIN { for (i = 0; i < 1000000; i++)
		printf "map add hosts 0:0:%x:%x 2001:db8:%d:0%s\n", int(i / 65536), i % 65536, i % 3 + 1,
			i % 3 == 1 ? " csum-mode neutral-map-auto" : "" }' >"$BATS_TEST_TMPDIR/1m"
	out=$(rctl -v -b "$BATS_TEST_TMPDIR/1m" 2>&1)
	echo "# $out" >&3
	[ "$(map_field hosts entries)" -eq 1000000 ]
	# ::a:1 is in the batch (locator 2001:db8:3:0): move it to srv1;
	# ::f:4240 (= 1,000,000) is not: add it
	[ "$(rctl map get hosts ::a:1)" = "0:0:a:1 2001:db8:3:0 csum-mode adjust-transport" ]
	rctl map replace hosts ::a:1 2001:db8:1:0
	rctl map add hosts ::f:4240 2001:db8:2:0 csum-mode neutral-map-auto
	[ "$(tcp_ask $SIR::a:1)" = srv1 ]
	[ "$(udp_ask $SIR::f:4240)" = srv2 ]
	[ "$(rctl map get hosts 0:0:0:5)" = "0:0:0:5 2001:db8:3:0 csum-mode adjust-transport" ]
	[ "$(rctl map get hosts 0:0:0:4)" = "0:0:0:4 2001:db8:2:0 csum-mode neutral-map-auto" ]
	t0=$EPOCHREALTIME
	# one entry per line; jq itself would take half a minute in TCG
	[ "$(rctl -j map show hosts | grep -c '{"identifier":')" -eq 1000001 ]
	echo "# ilactl -j map show of 1,000,001 entries: $(secs_since $t0) s" >&3
	[ "$(map_field hosts hits)" -ge 2 ]
	t0=$EPOCHREALTIME
	rctl map flush hosts
	echo "# flush of 1,000,001 entries: $(secs_since $t0) s" >&3
	[ "$(map_field hosts entries)" -eq 0 ]
}
