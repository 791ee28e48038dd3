#!/usr/bin/env bats
# ila_userns: what one unprivileged user can make the host spend through
# ILA maps and hooks. uid 65534 makes its own user and network namespace
# (unshare -Urn), where it is root, and nested network namespaces below it;
# everything runs in a memory cgroup of its own (cgroup v2, memory.max).
# In every netns: at most 1024 maps and 256 hooks (the next one: ENOSPC),
# a map at most its max-entries. What the netns hold is charged to the
# cgroup (memory.current grows with maps, hooks and entries and falls back
# when the netns go); at memory.max, adding entries fails with "Cannot
# allocate memory" inside the cgroup and the host never runs out of memory.
#
#   host, root: cgroup ila_userns-XXXX (memory.max)
#     `- uid 65534: unshare -Urn ---------- netns 1: 1024 maps, 256 hooks
#                     `- unshare -n ------- netns 2: 1024 maps, 256 hooks
#                          `- unshare -n -- netns 3: 1024 maps, 256 hooks
#
# Numbers (bytes charged per map, hook, entry) go to the TAP output.

load helpers

CGROOT=/sys/fs/cgroup
NNS=3

setup_file() {
	load_module nf_ila
	if [ "$(stat -f -c %T $CGROOT)" != cgroup2fs ]; then
		mount -t cgroup2 cgroup2 $CGROOT
		touch "$BATS_FILE_TMPDIR/cg-mounted"
	fi
	grep -qw memory $CGROOT/cgroup.controllers
	echo +memory >$CGROOT/cgroup.subtree_control
	if [ -e /proc/sys/kernel/unprivileged_userns_clone ]; then
		cat /proc/sys/kernel/unprivileged_userns_clone >"$BATS_FILE_TMPDIR/userns-clone"
		echo 1 >/proc/sys/kernel/unprivileged_userns_clone
	fi
	# the user's output: a directory it can reach (bats' are root's only)
	mktemp -d /tmp/ila_userns.XXXXXX >"$BATS_FILE_TMPDIR/outdir"
	chmod 755 "$(cat "$BATS_FILE_TMPDIR/outdir")"
	# ilactl and the tools it runs read once, so that their page cache is
	# not charged inside the measurements
	ilactl --version >/dev/null
	awk 'BEGIN {}' </dev/null
	jq -n 1 >/dev/null
}

teardown_file() {
	local cg
	for cg in "$CGROOT"/ila_userns-*; do
		[ -d "$cg" ] || continue
		echo 1 >"$cg/cgroup.kill" 2>/dev/null
		wait_until 30 test -z "$(cat "$cg/cgroup.procs")" || true
		rmdir "$cg"
	done
	[ ! -e "$BATS_FILE_TMPDIR/userns-clone" ] ||
		cat "$BATS_FILE_TMPDIR/userns-clone" >/proc/sys/kernel/unprivileged_userns_clone
	[ ! -e "$BATS_FILE_TMPDIR/cg-mounted" ] || umount $CGROOT
	rm -rf "$(cat "$BATS_FILE_TMPDIR/outdir")"
	unload_module nf_ila
}

teardown() {
	cleanup_all
}

# cg_new VAR : a new cgroup under the root, its path in VAR
cg_new() {
	local d
	d=$CGROOT/ila_userns-$(rand_suffix)
	mkdir "$d"
	printf -v "$1" '%s' "$d"
}

# as_user CG DIR SCRIPT : SCRIPT run by bash as uid 65534 in a new user and
# network namespace, inside cgroup CG; its output in DIR/out
as_user() {
	bash -c 'echo $$ >"$1/cgroup.procs" && exec setpriv --reuid=65534 --regid=65534 --clear-groups \
		--inh-caps=-all unshare -Urn bash -c "$3" >"$2/out" 2>&1' _ "$1" "$2" "$3"
}

# The functions below run inside the user namespace (passed with declare -f).

# mc : the cgroup's memory.current; kmem : the whole system's slab and
# percpu memory in bytes (/proc/meminfo: what was not charged shows here)
mc() { cat "$CG/memory.current"; }
kmem() { awk '/^(Slab|Percpu):/ { s += $2 } END { print s * 1024 }' /proc/meminfo; }

# fill_ns K : netns K: 1024 maps, the 1025th, 256 hooks, the 257th, a full
# map; memory.current before and after each; then netns K+1 below it, so
# that all NNS netns live at once; "done K" in $OUT/done when all is done
fill_ns() {
	local k=$1
	ip link set lo up
	sleep 0.2
	mc >"$OUT/mc.$k.start"
	kmem >"$OUT/km.$k.start"
	awk 'BEGIN { for (i = 0; i < 1024; i++) printf "map create m%d max-entries %d\n", i, i ? 4 : 1000000 }' | ilactl -b - ||
		echo "netns $k: creating 1024 maps failed"
	mc >"$OUT/mc.$k.maps"
	kmem >"$OUT/km.$k.maps"
	ilactl -j map list | jq length >"$OUT/nmaps.$k"
	ilactl map create m1024 >"$OUT/map1024.$k" 2>&1 && echo "netns $k: map 1025 created"
	# 256 static hooks in prerouting (one prefix table), the last ones
	# through a map
	awk 'BEGIN { for (i = 0; i < 250; i++)
			printf "hook add h%d prerouting src-pfx 2001:db8:%x::/64 dst-pfx 3fff:%x::/64\n", i, i, i
		for (i = 250; i < 256; i++)
			printf "hook add h%d prerouting src-pfx 2001:db8:%x::/64 map m%d\n", i, i, i }' | ilactl -b - ||
		echo "netns $k: creating 256 hooks failed"
	mc >"$OUT/mc.$k.hooks"
	ilactl -j hook list | jq length >"$OUT/nhooks.$k"
	ilactl hook add h256 prerouting src-pfx 2001:db8:100::/64 dst-pfx 3fff:100::/64 >"$OUT/hook256.$k" 2>&1 &&
		echo "netns $k: hook 257 created"
	# max-entries 4: the fifth entry is refused
	for i in 1 2 3 4 5; do echo "map add m1 0:0:0:$i 3fff:0:0:1"; done | ilactl -f -b - >"$OUT/full.$k" 2>&1
	ilactl -j map stats m1 | jq .entries >"$OUT/m1entries.$k"
	# max-entries above the limit (2^28) is refused
	ilactl map create huge max-entries 268435457 >"$OUT/huge.$k" 2>&1 && echo "netns $k: map huge created"
	if [ "$k" = 1 ]; then
		mc >"$OUT/mc.entries.0"
		kmem >"$OUT/km.entries.0"
		# entries: 200,000 in map m0
		awk 'BEGIN { for (i = 0; i < 200000; i++)
			printf "map add m0 0:0:%x:%x 3fff:0:0:1\n", int(i / 65536), i % 65536 }' |
			ilactl -b - || echo "200,000 entries failed"
		mc >"$OUT/mc.entries.1"
		kmem >"$OUT/km.entries.1"
		ilactl -j map stats m0 | jq .entries >"$OUT/bigentries"
	fi
	if [ "$k" -lt "$NNS" ]; then
		unshare -n bash -c "$(declare -f mc kmem fill_ns); fill_ns $((k + 1))"
	else
		# every netns is alive here
		mc >"$OUT/mc.all"
	fi
	echo "done $k" >>"$OUT/done"
}

# bytes FROM TO COUNT : (TO - FROM) / COUNT
per() { echo $((($(cat "$2") - $(cat "$1")) / $3)); }

@test "userns: each netns of an unprivileged user holds at most 1024 maps and 256 hooks (ENOSPC), a map at most max-entries; charged to its memory cgroup" {
	local CG OUT k pm ph pe
	cg_new CG
	OUT=$(cat "$BATS_FILE_TMPDIR/outdir")/$BATS_TEST_NUMBER
	mkdir -m 777 "$OUT"
	export CG OUT NNS
	mc >"$OUT/mc.before"
	as_user "$CG" "$OUT" "$(declare -f mc kmem fill_ns); fill_ns 1" || { cat "$OUT/out"; return 1; }
	cat "$OUT/out"
	[ "$(wc -l <"$OUT/done")" -eq "$NNS" ]
	if grep -q 'failed\|created' "$OUT/out"; then return 1; fi
	for k in $(seq 1 $NNS); do
		[ "$(cat "$OUT/nmaps.$k")" -eq 1024 ]
		grep -q 'too many maps in this netns' "$OUT/map1024.$k"
		grep -q 'No space left on device' "$OUT/map1024.$k"
		[ "$(cat "$OUT/nhooks.$k")" -eq 256 ]
		grep -q 'too many hooks in this netns' "$OUT/hook256.$k"
		grep -q 'map is full (max-entries)' "$OUT/full.$k"
		[ "$(cat "$OUT/m1entries.$k")" -eq 4 ]
		grep -qi 'max-entries\|Numerical result\|Invalid argument' "$OUT/huge.$k"
	done
	[ "$(cat "$OUT/bigentries")" -eq 200000 ]
	# bytes charged per map, hook, entry (netns 1: the others agree)
	pm=$(per "$OUT/mc.1.start" "$OUT/mc.1.maps" 1024)
	ph=$(per "$OUT/mc.1.maps" "$OUT/mc.1.hooks" 256)
	pe=$(per "$OUT/mc.entries.0" "$OUT/mc.entries.1" 200000)
	echo "# memory.current per map $pm B, per hook $ph B, per entry $pe B;" \
		"$NNS netns each with 1024 maps + 256 hooks, one with 200,000 entries:" \
		"$((($(cat "$OUT/mc.all") - $(cat "$OUT/mc.before")) / 1024)) KiB in the cgroup" >&3
	echo "# the whole system's slab + percpu grew per map $(per "$OUT/km.1.start" "$OUT/km.1.maps" 1024) B," \
		"per entry $(per "$OUT/km.entries.0" "$OUT/km.entries.1" 200000) B (all allocations, charged or not)" >&3
	for k in $(seq 2 $NNS); do
		echo "# netns $k: per map $(per "$OUT/mc.$k.start" "$OUT/mc.$k.maps" 1024) B," \
			"per hook $(per "$OUT/mc.$k.maps" "$OUT/mc.$k.hooks" 256) B" >&3
	done
	# every map and entry holds at least its own struct: more than 64
	# bytes a map (name, counters, links; over the maps of every netns:
	# memcg charges ahead by per-cpu batches of 64 pages), 32 an entry.
	# Hooks: printed only (256 a netns are within that batching noise).
	local all=0
	for k in $(seq 1 $NNS); do
		all=$((all + $(cat "$OUT/mc.$k.maps") - $(cat "$OUT/mc.$k.start")))
	done
	echo "# per map over the $NNS netns: $((all / (1024 * NNS))) B" >&3
	[ $((all / (1024 * NNS))) -gt 64 ] && [ "$pe" -gt 32 ]
	# the user's processes are gone, with them the netns: the charge goes
	# back (RCU-deferred frees: wait)
	wait_until 120 bash -c "[ \$(cat $CG/memory.current) -lt $(($(cat "$OUT/mc.before") + 2097152)) ]"
}

# add_until_enomem : batches of 20,000 entries into map "big" until one
# fails; the failing batch's output in $OUT/fail, the count in $OUT/entries
add_until_enomem() {
	local b=0
	ilactl map create big || return 1
	while [ $b -lt 200 ]; do
		if ! awk -v b=$b 'BEGIN { for (i = 0; i < 20000; i++)
			printf "map add big 0:%x:%x:%x 3fff:0:0:1\n", b, int(i / 65536), i % 65536 }' |
			ilactl -b - >"$OUT/fail" 2>&1; then
			break
		fi
		b=$((b + 1))
	done
	# the count with shell builtins, not jq: at memory.max every page a
	# new program needs is taken from the cgroup's others
	set -- $(ilactl map stats big)
	while [ $# -gt 1 ] && [ "$1" != entries ]; do shift; done
	echo "${2:-none}" >"$OUT/entries"
	echo "batches $b" >>"$OUT/done"
}

@test "userns: at memory.max, the user's adds stop inside the cgroup (ENOMEM, its OOM killer, or its processes thrash), never the host's" {
	local CG OUT n mx events f
	cg_new CG
	OUT=$(cat "$BATS_FILE_TMPDIR/outdir")/$BATS_TEST_NUMBER
	mkdir -m 777 "$OUT"
	export CG OUT
	# 24 MiB for the user: room for about a third of a million entries
	mx=$((24 << 20))
	echo $mx >"$CG/memory.max"
	echo 0 >"$CG/memory.swap.max" 2>/dev/null || true
	# The user's adds in the background, given USERNS_FILL_SECS (120) to
	# end by themselves (20-30 s in the test VM; a thrashing user once took
	# 31 minutes to reach its OOM kill).
	as_user "$CG" "$OUT" "$(declare -f add_until_enomem); add_until_enomem" &
	local user=$! secs=${USERNS_FILL_SECS:-120} i thrash= pid
	for ((i = 0; i < secs * 5; i++)); do
		kill -0 "$user" 2>/dev/null || break
		sleep 0.2
	done
	if kill -0 "$user" 2>/dev/null; then
		# Still running: its processes are thrashing at memory.max (the
		# entries are unreclaimable, so their own text and libraries are
		# all the cgroup can reclaim: evicted and read again on every
		# step, slow progress, never an OOM). That stays inside the
		# cgroup; root reads the map from the user's netns, then kills
		# the cgroup.
		thrash=1
		pid=$(head -n 1 "$CG/cgroup.procs")
		nsenter --net="/proc/$pid/ns/net" ilactl -j map stats big | jq .entries >"$OUT/entries" || true
		echo 1 >"$CG/cgroup.kill"
	fi
	wait "$user" || true
	for f in "$OUT/out" "$OUT/fail"; do
		if [ -e "$f" ]; then cat "$f"; fi
	done
	events=$(tr '\n' ' ' <"$CG/memory.events")
	n=$(cat "$OUT/entries" 2>/dev/null || echo none)
	echo "# memory.max $((mx >> 20)) MiB: $n entries added, then: $(tail -n 2 "$OUT/fail" | tr '\n' ' ')" >&3
	echo "# memory.events: $events; memory.peak $(cat "$CG/memory.peak" 2>/dev/null || echo n/a)" >&3
	# nf_ila's own allocations never invoke the OOM killer
	# (__GFP_NORETRY): at the limit an add fails with ENOMEM. But the
	# entries are unreclaimable memory of this cgroup, so a page fault of
	# the user's next process (ilactl's text, its buffers) may find the
	# cgroup full first; a fault cannot fail, and the memcg kills that
	# process. Or the user's processes thrash at the limit (above). Each
	# way the adds stop inside the cgroup, bounded by memory.max, and the
	# kernel never warns about a failed allocation.
	[ "$n" -gt 1000 ] && [ "$n" -lt 4000000 ]
	if [ -n "$thrash" ]; then
		echo "# stopped by: the test after ${secs} s: the user's processes thrashed at memory.max (killed)" >&3
	elif grep -q 'Cannot allocate memory' "$OUT/fail"; then
		grep -q '^batches ' "$OUT/done"
		echo "# stopped by: ENOMEM from the kernel" >&3
	else
		echo "# stopped by: the cgroup's OOM killer (a page fault of ilactl)" >&3
		grep -q '^batches ' "$OUT/done"
		[[ "$events" != *"oom_kill 0"* ]]
		dmesg | grep -q 'Memory cgroup out of memory: Killed process [0-9]* (ilactl)'
	fi
	[ "$(cat "$CG/memory.peak" 2>/dev/null || echo 0)" -le "$mx" ]
	if dmesg | grep -E 'page allocation failure'; then return 1; fi
	# the host never ran out of memory (no global OOM killer)
	if dmesg | grep -E 'Out of memory: Killed process' | grep -v 'Memory cgroup'; then return 1; fi
	# and the charge goes back when the netns goes
	wait_until 120 bash -c "[ \$(cat $CG/memory.current) -lt 2097152 ]"
}
