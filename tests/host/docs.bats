#!/usr/bin/env bats
# The documentation test's own test, on the HOST (no VM; part of `make check`).
#
#   tests/doc/files ──> tests/doc/doctest check   every document parses, no unmarked block
#   tests/doc/fixtures/*.md, *.8 ──> doctest run  a failing command, a wrong output and a
#                                                 block without info string fail, naming file:line
#
# The documents themselves run in the VM: tests/bats/docs.bats.

setup() {
	TOP=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)
	cd "$TOP"
	DT=tests/doc/doctest
	FX=tests/doc/fixtures
}

doc_files() {
	local f
	# shellcheck disable=SC2046
	for f in $(grep -v '^#' tests/doc/files); do [ -e "$f" ] && echo "$f"; done
}

@test "every document of tests/doc/files parses: fenced blocks have an info string, skips a reason" {
	run $DT check $(doc_files)
	echo "$output"
	[ "$status" -eq 0 ]
}

@test "README.md, nft/README.md and both man pages have command blocks the VM runs" {
	for f in README.md nft/README.md xtables/libxt_ILA.man xtables/libxt_rtcache.man userspace/ilactl.8; do
		n=$($DT list "$f" | grep -c ' run' || true)
		echo "$f: $n blocks run"
		[ "$n" -gt 0 ]
	done
}

@test "every skipped block says why" {
	run $DT list $(doc_files)
	[ "$status" -eq 0 ]
	! echo "$output" | grep -E ' skip *$'
	! echo "$output" | grep -E ' skip \(\s*\)'
}

@test "fixture: blocks run in order, shown output matched with ... wildcards and in any order when unordered, setup and skip" {
	run $DT run $FX/good.md $FX/good.8 $FX/unordered.md
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$(grep -c "^ok " <<<"$output")" -eq 4 ]
	grep -q '^skip tests/doc/fixtures/good.md:33 (needs the network)$' <<<"$output"
	grep -q '^skip tests/doc/fixtures/good.8:12 (reboots the machine)$' <<<"$output"
}

@test "fixture: a failing command fails the run and names its line" {
	run $DT run $FX/fail.md
	echo "$output"
	[ "$status" -eq 1 ]
	grep -q 'tests/doc/fixtures/fail.md:5: exit status 1' <<<"$output"
	! grep -q never <<<"$output"
}

@test "fixture: output that differs from the shown one fails the run" {
	run $DT run $FX/differ.md
	echo "$output"
	[ "$status" -eq 1 ]
	grep -q 'differ.md:4: the output differs from tests/doc/fixtures/differ.md:8' <<<"$output"
}

@test "fixture: a fenced block without info string and a skip without reason are refused" {
	run $DT check $FX/nolang.md
	[ "$status" -eq 1 ]
	grep -q 'nolang.md:4: fenced block without an info string' <<<"$output"
	printf '# x\n\n<!-- doc-test: skip -->\n```sh\ntrue\n```\n' >"$BATS_TEST_TMPDIR/noreason.md"
	run $DT check "$BATS_TEST_TMPDIR/noreason.md"
	[ "$status" -eq 1 ]
	grep -q 'doc-test: skip (reason)' <<<"$output"
}

@test "fixture: a command the document leaves running does not hold the run, and is stopped" {
	run timeout 60 $DT run $FX/background.md
	echo "$output"
	[ "$status" -eq 0 ]
	! pgrep -x -f 'sleep 1000'
}
