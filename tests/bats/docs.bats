#!/usr/bin/env bats
# Every command block of the documentation runs, in the VM, as root:
# README.md, nft/README.md, the man pages' examples (tests/doc/files).
#
#   tests/doc/doctest run --netns DOC
#        │  one unit per Markdown section / man page
#        ▼
#   netns doc-XXXXXX ── fresh, lo up; empty working directory
#        bash: tests/doc/prelude.bash, then the blocks in order;
#        a command that fails, or output that differs from the one the
#        document shows, fails the test naming DOC:LINE
#
# The modules are loaded from the build tree first, as a host with the
# packages installed autoloads them (modprobe in a document loads ours from
# build/kmod too). Blocks that cannot run here (apt, dkms, reboot) carry
# <!-- doc-test: skip (reason) --> and are listed at the end of each test.

load helpers

setup_file() {
	local m
	for m in $(sed -n 's/^obj-m *:= *//p' "$PROJECT_ROOT/kernel/Kbuild" | sed 's/\.o//g'); do
		load_module "$m"
	done
}

teardown_file() {
	local m
	for m in xt_rtcache nf_conntrack_rtcache xt_ILA nf_ila; do unload_module "$m"; done
}

doctest() {
	cd "$PROJECT_ROOT"
	run "$PROJECT_ROOT/tests/doc/doctest" run --netns --timeout 600 "$@"
	echo "$output"
	[ "$status" -eq 0 ]
}

@test "README.md: every command block runs and prints what it shows" {
	doctest README.md
}

@test "nft/README.md: the nft examples load and list as shown" {
	doctest nft/README.md
}

@test "man nf-ila-rtcache (xtables/*.man): the examples run" {
	doctest xtables/*.man xtables/*.man.in
}

@test "man ilactl (userspace/ilactl.8): the EXAMPLES run" {
	doctest userspace/ilactl.8
}
