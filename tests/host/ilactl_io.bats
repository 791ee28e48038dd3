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
