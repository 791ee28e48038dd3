#!/usr/bin/env bats
# Self-test of the VM harness.  Runs on the HOST (each test boots a VM):
#
#   bats tests/vm/selftest.bats
#
#   host: bats ── tests/vm/run ── qemu (TCG) ── guest kernel ── CMD
#                      │  9p, read-only: host /
#                      └─ 9p, writable: --results DIR (= $VM_RESULTS)
#
# Needs root, qemu-system-x86, busybox-static and an installed
# linux-image + linux-headers pair.  About 1.5 minutes on TCG.

setup() {
	VM=$BATS_TEST_DIRNAME/run
	[ -n "$(find /boot -maxdepth 1 -name 'vmlinuz-*' -readable 2>/dev/null)" ] ||
		skip "no readable /boot/vmlinuz-* (not root, or no linux-image installed)"
	command -v qemu-system-x86_64 >/dev/null || skip "qemu-system-x86_64 not installed"
	RESULTS=$BATS_TEST_TMPDIR/results
}

@test "true exits 0 and leaves rc, dmesg and serial.log" {
	run "$VM" --results "$RESULTS" -- true
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$(cat "$RESULTS/rc")" = 0 ]
	grep -q 'Linux version' "$RESULTS/dmesg"
	[ -e "$RESULTS/serial.log" ]
}

@test "false exits 1" {
	run "$VM" --quiet -- false
	echo "$output"
	[ "$status" -eq 1 ]
}

@test "the exit status of the command is passed through" {
	run "$VM" --quiet -- sh -c 'exit 7'
	echo "$output"
	[ "$status" -eq 7 ]
}

@test "a WARNING in the kernel log fails a successful command" {
	run "$VM" --results "$RESULTS" -- sh -c 'echo "WARNING: harness selftest" > /dev/kmsg'
	echo "$output"
	[ "$status" -eq 3 ]
	[[ $output == *"vm: |"*"WARNING: harness selftest"* ]]
	grep -q 'WARNING: harness selftest' "$RESULTS/dmesg"
}

@test "results dir, cwd, environment and stdout reach the host" {
	mkdir -p "$BATS_TEST_TMPDIR/work"
	cd "$BATS_TEST_TMPDIR/work"
	echo marker >input
	SELFTEST_VAR='a b'\''c'
	export SELFTEST_VAR
	run "$VM" --results "$RESULTS" --env SELFTEST_VAR --env SET_HERE=x=y -- \
		sh -c 'cat input; echo hi >"$VM_RESULTS/x"; pwd >"$VM_RESULTS/cwd";
			echo "$SELFTEST_VAR|$SET_HERE|$VM_KERNEL|$HOME" >"$VM_RESULTS/env";
			touch /tmp/t /root/r; echo on-console'
	echo "$output"
	[ "$status" -eq 0 ]
	[[ $output == *marker*on-console* ]]
	[ "$(cat "$RESULTS/x")" = hi ]
	[ "$(cat "$RESULTS/cwd")" = "$(pwd -P)" ]
	IFS='|' read -r var set_here kernel home <"$RESULTS/env"
	[ "$var" = "$SELFTEST_VAR" ]
	[ "$set_here" = x=y ]
	[ -d "/lib/modules/$kernel/build" ]
	[ "$home" = /root ]
}

@test "the guest can load stock modules and use netns, ip6tables, nft" {
	run "$VM" -- sh -ec '
		modprobe nf_conntrack
		grep -q "^nf_conntrack " /proc/modules
		ip netns add selftest
		ip netns exec selftest ip link set lo up
		ip netns del selftest
		ip6tables-legacy -t mangle -L >/dev/null
		ip6tables-nft -t mangle -L >/dev/null
		nft list ruleset >/dev/null
		echo ALL-OK'
	echo "$output"
	[ "$status" -eq 0 ]
	[[ $output == *ALL-OK* ]]
}

@test "a kernel panic is reported as a failure (4)" {
	run "$VM" --quiet -- sh -c 'echo c >/proc/sysrq-trigger; sleep 5'
	echo "$output"
	[ "$status" -eq 4 ]
	[[ $output == *"no exit status came back"* ]]
	[[ $output == *"Kernel panic"* ]]
}

@test "--timeout kills the VM and exits 124" {
	run "$VM" --timeout 20 -- sleep 600
	echo "$output"
	[ "$status" -eq 124 ]
	[[ $output == *timeout* ]]
}

@test "usage errors exit 2 without booting" {
	run "$VM" --bogus -- true
	[ "$status" -eq 2 ]
	run "$VM"
	[ "$status" -eq 2 ]
	run "$VM" --help
	[ "$status" -eq 0 ]
	[[ $output == *Usage:* ]]
}

@test "run-suites: one VM for several suites, per-suite gates, a new VM after a panic" {
	out=$BATS_TEST_TMPDIR/suites
	run "$BATS_TEST_DIRNAME/run-suites" --kernel "$(ls /boot/vmlinuz-* | sed "s|^/boot/vmlinuz-||" | sort -V | head -n 1)" --quiet \
		--results "$out" --dir tests/vm/fixtures --timeout 120 -- pass warn panic fail pass
	echo "$output"
	[ "$status" -eq 1 ]
	# two VMs: the first ran pass, warn and died in panic; the second the rest
	[ -d "$out/vm1" ] && [ -d "$out/vm2" ] && [ ! -d "$out/vm3" ]
	[ "$(cat "$out/pass.gate")" = ok ]
	grep -q '^ok 1 fixture passes' "$out/pass.tap"
	grep -q 'kernel log: .*WARNING: run-suites fixture' "$out/warn.gate"
	grep -q 'left behind: netns fixture-leak' "$out/warn.gate"
	grep -q '^ok 1 fixture before the panic' "$out/panic.tap"
	grep -q 'the VM died or hung in this suite' "$out/panic.gate"
	grep -q '^not ok 1 fixture fails' "$out/fail.tap"
	[ "$(cat "$out/fail.gate")" = ok ]
	[[ $output == *"fail: 1 passed, 1 failed, gate ok"* ]]
}
