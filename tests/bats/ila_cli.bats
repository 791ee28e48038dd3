#!/usr/bin/env bats
# ilactl as an operator drives it: batch files applied in file order, hook
# replace under traffic, monitor events that replay exactly, ip's and
# ipset's spellings, help and error texts.
#
#   client c0 ----------- r0 router r1 ----------- s0 server
#   fd00:1::2/64   fd00:1::1        fd00:2::1   fd00:2::2/64
#                  PRE  hook m: dst SIR->LOC     PRE  in1: 3333:0:0:1::/64 -> SIR
#                  POST hook back: LOC->SIR      PRE  in2: 3333:0:0:2::/64 -> SIR
#                  3333:0:0:{1,2}::/64 via s0    POST out: SIR -> 3333:0:0:1::/64
#                                                lo: 2001:db8:0:3::5 (SIR)
#
# The router has no route to the SIR prefix: a packet it does not
# translate is lost, so "0% packet loss" means every packet was translated.

load helpers
load ila_helpers

setup_file() {
	load_module nf_ila
}

teardown_file() {
	unload_module xt_ILA	# the EXAMPLES test's
	unload_module nf_ila
}

teardown() {
	cleanup_all
}

@test "batch: map and hook lines apply in file order; a teardown file deletes the hook before its map; errors in line order" {
	ns_create t u
	local f=$BATS_TEST_TMPDIR
	# set up: the hook uses the map created on the line before it
	cat >"$f/up" <<-'EOF'
	map create hosts max-entries 100
	hook add h prerouting src-pfx 2001:db8:0:3::/64 map hosts miss drop
	map add hosts 0:0:0:5 3333:0:0:1
	EOF
	hctl "$t" -b "$f/up"
	[ "$(hook_field "$t" h map)" = hosts ]
	[ "$(hctl "$t" -j map stats hosts | jq -c '[.entries, .max_entries]')" = '[1,100]' ]
	# tear down in the order written: the hook goes first, then its map
	printf 'hook del h\nmap destroy hosts\n' >"$f/down"
	hctl "$t" -b "$f/down"
	[ "$(hctl "$t" -j hook list | jq length)" -eq 0 ]
	[ "$(hctl "$t" -j map list | jq length)" -eq 0 ]
	# the other order fails at the line that is wrong, and stops there
	hctl "$t" -b "$f/up"
	printf 'map destroy hosts\nhook del h\n' >"$f/wrong"
	run hctl "$t" -b "$f/wrong"
	echo "$output"
	[ "$status" -eq 1 ]
	[[ $output == *"wrong:1: map destroy hosts: Device or resource busy"* ]]
	[ "$(hook_field "$t" h name)" = h ]	# line 2 was not sent
	hctl "$t" -b "$f/down"
	# without -force: the first failure (a hook line) stops the file; the
	# map line after it is not applied
	cat >"$f/stop" <<-'EOF'
	map create a
	hook del nosuch
	map add a 0:0:0:1 3333:0:0:1
	EOF
	run hctl "$u" -b "$f/stop"
	echo "$output"
	[ "$status" -eq 1 ]
	[[ $output == *"stop:2: hook del nosuch: "*"no such hook"* ]]
	[[ $output == *"commands sent: 2 of 3"* ]]
	[ "$(hctl "$u" -j map stats a | jq .entries)" -eq 0 ]
	# with -force: every failure, map and hook lines mixed, in line order
	cat >"$f/mixed" <<-'EOF'
	map create b
	hook del nosuch
	map del b 0:0:0:9
	hook add h prerouting src-pfx 2001:db8:0:3::/64 map nosuch
	map create b
	map add b 0:0:0:1 3333:0:0:1
	EOF
	run hctl "$u" -force -b "$f/mixed"
	echo "$output"
	[ "$status" -eq 1 ]
	[ "$(grep -o 'mixed:[0-9]*:' <<<"$output" | xargs)" = "mixed:2: mixed:3: mixed:4: mixed:5:" ]
	[[ $output == *"failed lines: 4"* ]]
	[ "$(hctl "$u" map get b 0:0:0:1)" = "0:0:0:1 3333:0:0:1 csum-mode adjust-transport" ]
	hctl "$u" map destroy a
	hctl "$u" map destroy b
}

@test "hook replace: a steady stream meets the old hook or the new one, never neither (0% loss); restore -exist replaces" {
	ila_topo
	ip -n "$router" -6 route add 3333:0:0:2::/64 via fd00:2::2
	local f=$BATS_TEST_TMPDIR n=0 p loc
	hctl "$router" hook add m prerouting src-pfx "$ILA_SIR_PFX" dst-pfx 3333:0:0:1::/64
	hctl "$router" hook add back postrouting src-pfx "$ILA_LOC_PFX" dst-pfx "$ILA_SIR_PFX"
	hctl "$server" hook add in1 prerouting src-pfx 3333:0:0:1::/64 dst-pfx "$ILA_SIR_PFX"
	hctl "$server" hook add in2 prerouting src-pfx 3333:0:0:2::/64 dst-pfx "$ILA_SIR_PFX"
	hctl "$server" hook add out postrouting src-pfx "$ILA_SIR_PFX" dst-pfx "$ILA_LOC_PFX"
	in_ns "$client" ping -6 -c 1 -W 5 "$ILA_SIR_HOST" >/dev/null
	# replace errors: no such hook, another point or priority
	run hctl "$router" hook replace nosuch prerouting src-pfx "$ILA_SIR_PFX" dst-pfx 3333:0:0:2::/64
	[ "$status" -eq 1 ]
	[[ $output == *"no such hook"* ]]
	run hctl "$router" hook replace m prerouting src-pfx "$ILA_SIR_PFX" dst-pfx 3333:0:0:2::/64 priority -240
	[ "$status" -eq 1 ]
	[[ $output == *"replace keeps the hook point and priority"* ]]
	# a steady stream while m is replaced, alternating the locator, until
	# the stream ends; every third change by restore -exist
	in_ns "$client" ping -6 -q -i 0.01 -c 1000 -W 5 "$ILA_SIR_HOST" >"$f/ping" 2>&1 &
	p=$!
	while kill -0 "$p" 2>/dev/null; do
		n=$((n + 1))
		loc=3333:0:0:$((n % 2 + 1))::/64
		if ((n % 3 == 0)); then
			echo "hook add m prerouting priority -250 translate dst src-pfx $ILA_SIR_PFX dst-pfx $loc csum-mode adjust-transport" >"$f/saved"
			hctl "$router" restore -exist "$f/saved"
		else
			hctl "$router" hook replace m prerouting src-pfx "$ILA_SIR_PFX" dst-pfx "$loc"
		fi
	done
	wait "$p"
	cat "$f/ping"
	echo "# $n replaces during the stream" >&3
	grep -q ' 0% packet loss' "$f/ping"
	# both definitions carried traffic
	[ "$(hook_field "$server" in1 packets)" -gt 0 ]
	[ "$(hook_field "$server" in2 packets)" -gt 0 ]
	[ "$(hook_field "$router" m dst_pfx)" = "$loc" ]
	# replace starts the counters from zero; one hook, not two
	hctl "$router" hook replace m prerouting src-pfx "$ILA_SIR_PFX" dst-pfx 3333:0:0:1::/64
	[ "$(hook_field "$router" m packets)" -eq 0 ]
	[ "$(hctl "$router" -j hook list | jq '[.[] | select(.name == "m")] | length')" -eq 1 ]
	in_ns "$client" ping -6 -c 1 -W 5 "$ILA_SIR_HOST" >/dev/null
	[ "$(hook_field "$router" m packets)" -gt 0 ]
}

@test "monitor: map create carries max-entries and notify-miss, hook replace is its own event; the replay is exact" {
	ns_create t copy
	local ev=$BATS_TEST_TMPDIR/ev
	ip netns exec "$t" ilactl -v monitor >"$ev" 2>"$ev.err" &
	local mon=$!
	wait_until 10 grep -q 'monitoring map changes and hook changes' "$ev.err"
	hctl "$t" map create hosts max-entries 1000 notify-miss
	hctl "$t" map create plain
	hctl "$t" hook add h prerouting src-pfx 2001:db8:0:3::/64 map hosts
	hctl "$t" hook replace h prerouting src-pfx 2001:db8:0:3::/64 map plain miss drop
	hctl "$t" hook add s postrouting src-pfx 3333:0:0:1::/64 dst-pfx 2001:db8:0:3::/64 priority 310
	wait_until 10 grep -q '^hook add s ' "$ev"
	kill "$mon"
	diff -u - "$ev" <<-'EOF'
	map create hosts max-entries 1000 notify-miss
	map create plain max-entries 16777216
	hook add h prerouting priority -250 translate dst src-pfx 2001:db8:0:3::/64 map hosts miss accept
	hook replace h prerouting priority -250 translate dst src-pfx 2001:db8:0:3::/64 map plain miss drop
	hook add s postrouting priority 310 translate src src-pfx 3333:0:0:1::/64 dst-pfx 2001:db8:0:3::/64 csum-mode adjust-transport
	EOF
	# replayed elsewhere: the same maps (max-entries, notify-miss) and hooks
	hctl "$copy" -b "$ev"
	[ "$(hctl "$copy" map list | sort)" = "$(hctl "$t" map list | sort)" ]
	[ "$(hctl "$copy" -j map stats hosts | jq -c '[.max_entries, .notify_miss]')" = '[1000,true]' ]
	[ "$(hctl "$copy" hook list)" = "$(hctl "$t" hook list)" ]
	# JSON: the same facts as keys
	ip netns exec "$t" ilactl -j -v monitor >"$ev.json" 2>"$ev.err2" &
	mon=$!
	wait_until 10 grep -q 'monitoring map changes' "$ev.err2"
	hctl "$t" map create third max-entries 7
	hctl "$t" hook replace h prerouting src-pfx 2001:db8:0:3::/64 map hosts
	wait_until 10 test "$(wc -l <"$ev.json")" -eq 2
	kill "$mon"
	[ "$(jq -c . "$ev.json" | head -1)" = '{"event":"create","name":"third","max_entries":7,"notify_miss":false}' ]
	[ "$(jq -r '.event + " " + .name + " " + .map' "$ev.json" | tail -1)" = "hook replace h hosts" ]
	for c in t copy; do
		hctl "${!c}" hook del h
		hctl "${!c}" hook del s
	done
}

@test "monitor -t: each event after a '# Timestamp:' line as ip monitor -t prints it, at the time of the change; the output replays; -j: a timestamp key" {
	ns_create t copy
	local ev=$BATS_TEST_TMPDIR/ev t0 t1
	ip netns exec "$t" ilactl -v monitor -t >"$ev" 2>"$ev.err" &
	local mon=$!
	wait_until 10 grep -q 'monitoring map changes and hook changes' "$ev.err"
	t0=$(date +%s)
	hctl "$t" map create hosts max-entries 10
	hctl "$t" map add hosts 0:0:0:5 3333:0:0:1
	hctl "$t" hook add h prerouting src-pfx 2001:db8:0:3::/64 map hosts
	wait_until 10 grep -q '^hook add h ' "$ev"
	t1=$(date +%s)
	kill "$mon"
	cat "$ev"
	[ "$(wc -l <"$ev")" -eq 6 ]
	# every other line a timestamp, then the event
	[ "$(sed -n '2p;4p;6p' "$ev")" = "map create hosts max-entries 10
map add hosts 0:0:0:5 3333:0:0:1 csum-mode adjust-transport
hook add h prerouting priority -250 translate dst src-pfx 2001:db8:0:3::/64 map hosts miss accept" ]
	local line d s re='^# Timestamp: ([A-Z][a-z]{2} [A-Z][a-z]{2} [ 1-3][0-9] [0-9]{2}:[0-9]{2}:[0-9]{2} [0-9]{4}) ([0-9]{1,6}) usec$'
	while read -r line; do
		# ip's form: "Timestamp: <asctime> <usec> usec", here a comment
		[[ $line =~ $re ]]
		d=${BASH_REMATCH[1]}
		s=$(date -d "$d" +%s)
		[ "$s" -ge "$t0" ] && [ "$s" -le "$t1" ]
		[ "${BASH_REMATCH[2]}" -lt 1000000 ]
	done < <(sed -n '1p;3p;5p' "$ev")
	# asctime pads the day with a blank, as ip does
	[ "$(sed -n 1p "$ev" | cut -c14-23)" = "$(date -d "@$t0" '+%a %b %e')" ] ||
		[ "$(sed -n 1p "$ev" | cut -c14-23)" = "$(date -d "@$t1" '+%a %b %e')" ]
	# the timestamps are comments: the file replays
	hctl "$copy" -b "$ev"
	[ "$(hctl "$copy" map show hosts)" = "$(hctl "$t" map show hosts)" ]
	[ "$(hctl "$copy" hook list)" = "$(hctl "$t" hook list)" ]
	# -t before the command, and JSON: "timestamp" first, UTC
	ip netns exec "$t" ilactl -j -v -t monitor >"$ev.json" 2>"$ev.err2" &
	mon=$!
	wait_until 10 grep -q 'monitoring map changes' "$ev.err2"
	hctl "$t" map del hosts 0:0:0:5
	wait_until 10 test "$(wc -l <"$ev.json")" -eq 1
	kill "$mon"
	cat "$ev.json"
	[ "$(jq -r 'keys_unsorted[0] + " " + .event + " " + .identifier' "$ev.json")" = "timestamp del 0:0:0:5" ]
	s=$(date -u -d "$(jq -r '.timestamp | sub("\\.[0-9]{6}Z$"; "Z")' "$ev.json")" +%s)
	[ "$s" -ge "$t0" ] && [ "$s" -le "$(date +%s)" ]
	[[ $(jq -r .timestamp "$ev.json") =~ ^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:]{8}\.[0-9]{6}Z$ ]]
	for c in t copy; do
		hctl "${!c}" hook del h
	done
	# -t is monitor's alone
	run ilactl -n "$t" monitor -x
	[ "$status" -eq 2 ]
	[[ $output == *'monitor: unexpected "-x" (monitor [-t])'* ]]
}

@test "--progress: -b, restore -exist and save of 100000 entries show entries done, rate and ETA on one line, then the final line; nothing without it" {
	ns_create t
	local f=$BATS_TEST_TMPDIR n=100000
	awk -v n=$n 'BEGIN { print "map create big max-entries 300000"
		for (i = 1; i < n; i++) printf "map add big 0:0:%x:%x 2001:db8:1:0\n", int(i / 65536), i % 65536 }' >"$f/big"
	# final_line ERRFILE WHAT TOTAL: the records of the \r-line, the last one checked
	final_line() {
		local rec
		echo "$1:" >&2
		tr '\r' '\n' <"$1" | sed 's/ *$//' | grep . | tee /dev/stderr >"$1.rec"
		[ "$(head -c1 "$1")" = $'\r' ]
		[ "$(tr -cd '\n' <"$1" | wc -c)" -eq 1 ]
		[ "$(tail -c1 "$1" | od -An -c | tr -d ' ')" = '\n' ]
		[ "$(head -1 "$1.rec")" = "ilactl: $2: 0/$3 entries (0%), 0/s, ETA -" ]
		while read -r rec; do
			[[ $rec =~ ^"ilactl: $2: "[0-9]+/$3" entries ("[0-9]+"%), "[0-9]+"/s, ETA "[0-9hms-]+$ ]]
		done < <(sed '1d;$d' "$1.rec")
		[[ $(tail -1 "$1.rec") =~ ^"ilactl: $2: $3/$3 entries (100%), "[0-9]+"/s, "[0-9]+\.[0-9]" s"$ ]]
	}
	ilactl -n "$t" --progress -b "$f/big" 2>"$f/b.err"
	final_line "$f/b.err" "$f/big" "$n"
	[ "$(hctl "$t" -j map stats big | jq .entries)" -eq $((n - 1)) ]
	ilactl -n "$t" --progress save big >"$f/saved" 2>"$f/s.err"
	final_line "$f/s.err" save $((n - 1))
	[ "$(grep -c '^map add big ' "$f/saved")" -eq $((n - 1)) ]
	ilactl -n "$t" --progress -exist restore "$f/saved" 2>"$f/r.err"
	final_line "$f/r.err" "$f/saved" "$n"                 # the create line and the entries
	[ "$(hctl "$t" -j map stats big | jq .entries)" -eq $((n - 1)) ]
	# stderr not a terminal, no --progress: no progress
	run ilactl -n "$t" -exist -b "$f/big"
	[ "$status" -eq 0 ]
	[ -z "$output" ]
	run ilactl -n "$t" save big
	[ "$status" -eq 0 ]
	[[ $output != *$'\r'* ]]
	hctl "$t" map destroy big
}

@test "ip's and ipset's single-dash spellings work; others are refused by name; help, show/list, one-line hook errors" {
	ns_create t
	local f=$BATS_TEST_TMPDIR
	printf 'map create m\nmap add m 0:0:0:1 3333:0:0:1\n' >"$f/b"
	# ip -batch, -netns, -json, -force; ipset -exist before the command
	ilactl -netns "$t" -batch "$f/b"
	[ "$(ilactl -netns "$t" -json map list | jq -r '.[0].name')" = m ]
	run ilactl -netns "$t" -batch "$f/b" -force
	[ "$status" -eq 1 ]
	[[ $output == *"b:1: map create m: File exists"* ]]
	[[ $output == *"b:2: map add m 0:0:0:1 3333:0:0:1: File exists"* ]]
	ilactl -netns "$t" save >"$f/saved"
	ilactl -netns "$t" -exist restore "$f/saved"
	ilactl -netns "$t" restore -exist "$f/saved"
	ilactl -n "$t" -exist -b "$f/saved"
	[ "$(ilactl -n "$t" -json -pretty map list | jq -r '.[0].entries')" = 1 ]
	[ "$(ilactl -n "$t" -stats map get m 0:0:0:1)" = "0:0:0:1 3333:0:0:1 csum-mode adjust-transport hits 0" ]
	# a word that is none of them is refused by name (not read as -b "atch")
	local w
	for w in -bogus -batc -nets -jsonx; do
		run ilactl "$w" map list
		echo "$w -> $status: $output"
		[ "$status" -eq 2 ]
		[[ $output == *"unknown option \"$w\""* ]]
	done
	run ilactl -n "$t" -force map list
	[ "$status" -eq 2 ]
	[[ $output == *"-f applies to -b"* ]]
	# help, as ip ila help
	ilactl map help | grep -q '^Usage: ilactl \[-n NETNS\] map create NAME'
	ilactl hook help | grep -q 'hook replace NAME'
	ilactl -help | grep -q 'hook replace NAME HOOK'
	# show and list, as ip uses them
	ilactl -n "$t" map show >"$f/show"
	ilactl -n "$t" map list >"$f/list"
	diff -u "$f/list" "$f/show"
	grep -q '^m entries 1 max-entries 16777216 ' "$f/show"
	[ "$(ilactl -n "$t" map show m)" = "0:0:0:1 3333:0:0:1 csum-mode adjust-transport" ]
	ilactl -n "$t" hook add h prerouting src-pfx 2001:db8::/64 dst-pfx 3333::/64
	[ "$(ilactl -n "$t" hook show)" = "$(ilactl -n "$t" hook list)" ]
	# a hook error names the word and shows the one line of the grammar
	run ilactl -n "$t" hook del h extra
	[ "$status" -eq 2 ]
	[[ ${lines[0]} == 'ilactl: unexpected "extra" (usage: hook del NAME)' ]]
	run ilactl -n "$t" hook add x prerouting src-pfx 2001:db8::/64 map m frob
	[ "$status" -eq 2 ]
	[[ ${lines[0]} == 'ilactl: unexpected "frob" (usage: hook add NAME HOOK [translate dst|src] src-pfx P/L map MAP '* ]]
	[[ ${lines[0]} != *dst-pfx* ]]
	# the batch error lists every command a batch may hold
	printf 'map show m\n' >"$f/read"
	run ilactl -n "$t" -b "$f/read"
	[ "$status" -eq 2 ]
	[[ $output == *"only map create, destroy, add, replace, del, flush, swap, reset-counters; hook add, replace, del are allowed"* ]]
	ilactl -n "$t" hook del h
	ilactl -n "$t" map destroy m
}

@test "man ilactl: every line of EXAMPLES runs as written, in order, and leaves nothing behind" {
	load_module xt_ILA
	ns_create t
	local f=$BATS_TEST_TMPDIR/examples line n=0
	sed -n '/^\.SH EXAMPLES/,/^\.SH /p' "$BATS_TEST_DIRNAME/../../userspace/ilactl.8" |
		sed -n '/^\.nf$/,/^\.fi$/p' | grep -v '^\.\(nf\|fi\)$' |
		sed 's/\\-/-/g; s/\\en/\\n/g' >"$f"
	[ "$(wc -l <"$f")" -gt 15 ]
	cd "$BATS_TEST_TMPDIR"
	while IFS= read -r line; do
		n=$((n + 1))
		echo "# $n: $line"
		in_ns "$t" bash -o pipefail -c "$line" </dev/null
	done <"$f"
	[ "$(in_ns "$t" ilactl -j map list | jq length)" -eq 0 ]
	[ "$(in_ns "$t" ilactl -j hook list | jq length)" -eq 0 ]
	grep -qx 'map create hosts max-entries 16777216' ila.saved
	[ "$(grep -c '^map add hosts ' ila.saved)" -eq 1002 ]
	grep -q '^hook add h prerouting priority -250 translate dst src-pfx 2001:db8:fffe::/64 map hosts miss drop,notify$' ila.saved
}
