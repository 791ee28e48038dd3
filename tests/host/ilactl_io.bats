#!/usr/bin/env bats
# ilactl's input and output errors are never silent: runs on the HOST (no
# VM, no kernel module needed: the failures happen before any netlink
# request), part of `make check`. The built binary is build/bin/ilactl.

setup() {
	ILACTL=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)/build/bin/ilactl
	[ -x "$ILACTL" ]
}

@test "ilactl: a write error on standard output (full disk) exits 1 naming it" {
	run bash -c '"$0" --help >/dev/full' "$ILACTL"
	echo "$output"
	[ "$status" -eq 1 ]
	[[ $output == *"write error on standard output: No space left on device"* ]]
	run bash -c '"$0" -V >/dev/full' "$ILACTL"
	[ "$status" -eq 1 ]
	# and the same commands to a working stdout exit 0
	"$ILACTL" --help >/dev/null
}

@test "ilactl -b: a directory, a missing file, a read error on stdin exit 1 naming the input" {
	run "$ILACTL" -b "$BATS_TEST_TMPDIR"
	echo "$output"
	[ "$status" -eq 1 ]
	[[ $output == *"$BATS_TEST_TMPDIR: read error: Is a directory"* ]]
	run "$ILACTL" -b "$BATS_TEST_TMPDIR/nosuch"
	[ "$status" -eq 1 ]
	[[ $output == *"$BATS_TEST_TMPDIR/nosuch: No such file or directory"* ]]
	run bash -c '"$0" -b - <"$1"' "$ILACTL" "$BATS_TEST_TMPDIR"
	echo "$output"
	[ "$status" -eq 1 ]
	[[ $output == *"standard input: read error: Is a directory"* ]]
}

@test "ilactl -V prints the package version of configure.ac" {
	local v
	v=$(sed -n 's/^AC_INIT(\[[^]]*\], *\[\([^]]*\)\].*/\1/p' "$BATS_TEST_DIRNAME/../../configure.ac")
	[ -n "$v" ]
	run "$ILACTL" -V
	echo "$output"
	[ "$status" -eq 0 ]
	[[ $output == "ilactl (nf-ila-rtcache) $v, ILA_MAP genl version "* ]]
}

@test "ilactl: identifiers and locators that would lose bits are refused (exit 2, accepted forms shown)" {
	run "$ILACTL" map add m 1:: 2001:db8:1:0
	echo "$output"
	[ "$status" -eq 2 ]
	[[ $output == *'bad identifier "1::"'*"(0:0:0:5)"*"(::5)"* ]]
	run "$ILACTL" map add m 0:0:0:5 2001:db8::5
	echo "$output"
	[ "$status" -eq 2 ]
	[[ $output == *'bad locator "2001:db8::5"'*"(2001:db8:0:1::)"* ]]
}

@test "ilactl -n: a missing namespace exits 1 naming it, a bad name exits 2" {
	run "$ILACTL" -n nfilr-no-such-netns map list
	[ "$status" -eq 1 ]
	[[ $output == *"-n nfilr-no-such-netns: /run/netns/nfilr-no-such-netns: No such file or directory"* ]]
	run "$ILACTL" -n ../etc map list
	[ "$status" -eq 2 ]
	[[ $output == *'bad network namespace name "../etc"'* ]]
}

@test "ilactl -b: hook lines are checked with the map lines before anything is sent (exit 2, line named)" {
	printf 'map add m 0:0:0:1 2001:db8:1:0\nhook add h1 prerouting src-pfx 2001:db8::/64\n' >"$BATS_TEST_TMPDIR/b"
	run "$ILACTL" -force -b "$BATS_TEST_TMPDIR/b"
	echo "$output"
	[ "$status" -eq 2 ]
	[[ $output == *"b:2: "* ]]
	printf 'hook list\n' >"$BATS_TEST_TMPDIR/l"
	run "$ILACTL" -b "$BATS_TEST_TMPDIR/l"
	[ "$status" -eq 2 ]
	[[ $output == *"l:1: hook list is not a batch command"* ]]
	run "$ILACTL" map reset-counters
	[ "$status" -eq 2 ]
	[[ $output == *"usage: map reset-counters NAME"* ]]
}

@test "ilactl -c -b, restore -c: every bad line reported as FILE:LINE, nothing sent, exit 2; a clean file exits 0" {
	# no module on the host: a command sent to the kernel would fail with ENOENT
	local f=$BATS_TEST_TMPDIR/c
	printf '%s\n' 'map create m' 'map add m 1:: 2001:db8:1:0' 'map list' '' '# comment' \
		'hook add h prerouting src-pfx 2001:db8::/64' 'map add m 0:0:0:2 2001:db8:1:0' \
		'map add m 0:0:0:3' >"$f"
	local form
	for form in "-c -b $f" "--check -b $f" "restore -c $f" "-c restore $f" "-check restore $f"; do
		run "$ILACTL" $form
		echo "$form: $output"
		[ "$status" -eq 2 ]
		[ "${#lines[@]}" -eq 5 ]
		[[ ${lines[0]} == "ilactl: $f:2: bad identifier \"1::\""* ]]
		[[ ${lines[1]} == "ilactl: $f:3: \"map list\": only map create"* ]]
		[[ ${lines[2]} == "ilactl: $f:6: hook add: dst-pfx Q/L or map MAP is required"* ]]
		[[ ${lines[3]} == "ilactl: $f:8: missing locator (usage: map add NAME IDENT LOCATOR"* ]]
		[ "${lines[4]}" = "ilactl: $f: 4 bad lines" ]
	done
	# stdin; one bad line is "1 bad line"
	run bash -c 'printf "map add m 0:0:0:1\n" | "$0" -c -b -' "$ILACTL"
	echo "$output"
	[ "$status" -eq 2 ]
	[[ ${lines[0]} == "ilactl: stdin:1: missing locator (usage: map add"* ]]
	[ "${lines[1]}" = "ilactl: stdin: 1 bad line" ]
	# a clean file: silent, exit 0, with -v a count
	printf '%s\n' 'map create m max-entries 10' 'map add m 0:0:0:1 2001:db8:1:0' \
		'hook add h prerouting src-pfx 2001:db8::/64 map m' >"$f"
	run "$ILACTL" -c -b "$f"
	[ "$status" -eq 0 ]
	[ -z "$output" ]
	run "$ILACTL" -v restore -c "$f"
	[ "$status" -eq 0 ]
	[ "$output" = "ilactl: $f: 3 commands, no errors" ]
	# without -c, a file with several bad lines lists them all too, and applies none
	printf '%s\n' 'map add m 1:: 2001:db8:1:0' 'map create m' 'map list' >"$f"
	run "$ILACTL" -b "$f"
	echo "$output"
	[ "$status" -eq 2 ]
	[[ ${lines[0]} == "ilactl: $f:1: "* ]]
	[[ ${lines[1]} == "ilactl: $f:3: "* ]]
	[ "${lines[2]}" = "ilactl: $f: 2 bad lines, nothing applied" ]
	# -c where it does not apply
	run "$ILACTL" -c map list
	[ "$status" -eq 2 ]
	[[ $output == *"-c (--check) applies to -b and restore"* ]]
}

@test "ilactl --progress -c -b: a million lines with lines done, rate and ETA on one rewritten line, final newline" {
	local f=$BATS_TEST_TMPDIR/big n=1000000
	awk -v n=$n 'BEGIN { print "map create big max-entries 2000000"
		for (i = 1; i < n; i++) printf "map add big 0:0:%x:%x 2001:db8:1:0\n", int(i / 65536), i % 65536 }' >"$f"
	"$ILACTL" --progress -c -b "$f" 2>"$BATS_TEST_TMPDIR/err"
	local err
	err=$(cat "$BATS_TEST_TMPDIR/err")
	echo "$err" | tr '\r' '\n'
	[[ $err == $'\r'* ]]                                  # starts with a carriage return
	[ "$(tail -c1 "$BATS_TEST_TMPDIR/err" | od -An -c | tr -d ' ')" = '\n' ]
	[ "$(tr -cd '\n' <"$BATS_TEST_TMPDIR/err" | wc -c)" -eq 1 ]   # one line on a terminal
	# the first and a later record, and the final one
	mapfile -t rec < <(tr '\r' '\n' <"$BATS_TEST_TMPDIR/err" | sed 's/ *$//' | grep .)
	[ "${#rec[@]}" -ge 2 ]
	[ "${rec[0]}" = "ilactl: $f: check: 0/$n lines (0%), 0/s, ETA -" ]
	local r
	for r in "${rec[@]:1:${#rec[@]}-2}"; do
		[[ $r =~ ^"ilactl: $f: check: "[0-9]+/$n" lines ("[0-9]+"%), "[0-9]+"/s, ETA "[0-9hms]+$ ]]
	done
	[[ ${rec[-1]} =~ ^"ilactl: $f: check: $n/$n lines (100%), "[0-9]+"/s, "[0-9]+\.[0-9]" s"$ ]]
	# without --progress and with stderr not a terminal: nothing
	run "$ILACTL" -c -b "$f"
	[ "$status" -eq 0 ]
	[ -z "$output" ]
	# where it does not apply
	run "$ILACTL" --progress map list
	[ "$status" -eq 2 ]
	[[ $output == *"--progress applies to -b, restore and save"* ]]
}

@test "ilactl: a long option is named as written (--json=yes is not \"-j\"), short and long forms both work" {
	run "$ILACTL" --json=yes map list
	echo "$output"
	[ "$status" -eq 2 ]
	[[ ${lines[0]} == "ilactl: option --json takes no value (--json, -j)" ]]
	[[ $output != *"bad option -j"* ]]
	run "$ILACTL" --js=1 map list
	[ "$status" -eq 2 ]
	[[ ${lines[0]} == "ilactl: option --json takes no value (--json, -j)" ]]
	run "$ILACTL" --batch
	[ "$status" -eq 2 ]
	[[ ${lines[0]} == "ilactl: option --batch needs an argument (--batch ARG, -b ARG)" ]]
	run "$ILACTL" -b
	[ "$status" -eq 2 ]
	[[ ${lines[0]} == "ilactl: option -b needs an argument (--batch)" ]]
	run "$ILACTL" --no-such
	[ "$status" -eq 2 ]
	[[ ${lines[0]} == "ilactl: unknown option --no-such" ]]
	run "$ILACTL" -x map list
	[ "$status" -eq 2 ]
	[[ ${lines[0]} == "ilactl: unknown option -x" ]]
	run "$ILACTL" -jx map list
	[ "$status" -eq 2 ]
	[[ ${lines[0]} == 'ilactl: unknown option "-jx" (single-dash words: '* ]]
	run "$ILACTL" --progress=1 -b -
	[ "$status" -eq 2 ]
	[[ ${lines[0]} == "ilactl: option --progress takes no value (--progress)" ]]
	# -j and --json are both accepted (the failure is then the missing module)
	run "$ILACTL" --json --pretty -j map list
	[ "$status" -eq 1 ]
	[[ $output != *"option"* ]]
	# -t is monitor's
	run "$ILACTL" -t map list
	[ "$status" -eq 2 ]
	[[ $output == *"-t (--timestamp) applies to monitor"* ]]
	run "$ILACTL" monitor -x
	[ "$status" -eq 2 ]
	[[ $output == *'monitor: unexpected "-x" (monitor [-t])'* ]]
}
