#!/usr/bin/env bats
# ILA across a fleet: ila-syncd keeps the maps of ILA routers (full mode)
# and of a forwarding node (cache mode) equal to a real etcd store; real
# traffic through them. Topology in tests/bats/fleet_helpers.bash:
#
#              the VM's own netns: etcd member m1 (the 3-member cluster
#              m5 m6 m7 only in the member-failure test)
#              10.99.1.1 /      10.99.2.1 |      \ 10.99.3.1   (management veths)
#   c1 ---- r1 (ila-syncd full)    r2 (ila-syncd full) ---- c2     f (ila-syncd cache)
#            | \                  / |
#            |  +------ s1 ------+  |       s1: locators L1, L3; s2: locator L2
#            +--------- s2 ---------+
#
# Each test uses its own key prefix (/tN). One etcd member and one router
# except where more are the point (two routers converging and following
# moves; a cluster losing its leader and its quorum). The 100,000 and
# 1,000,000-mapping figures are measured by bench/fleet.sh (make bench).

load helpers
load fleet_helpers

setup_file() {
	load_module nf_ila
	load_module xt_ILA
	local t0=$EPOCHREALTIME
	etcd_start 1
	echo "# etcd member up in $(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }') s" >&3
}

teardown_file() {
	etcd_stop
	unload_module xt_ILA
	unload_module nf_ila
}

setup() {
	STAMP_T=${EPOCHREALTIME/./}
	TEST_T0=$EPOCHREALTIME
}

teardown() {
	keep_logs
	etcd_stop 5 6 7 # the 3-member cluster of a test that failed
	# processes of the VM's own netns a test started (cleanup_all kills
	# those of the test's netns)
	[ -e "$BATS_TEST_TMPDIR/pids" ] && kill -9 $(cat "$BATS_TEST_TMPDIR/pids") 2>/dev/null
	fleet_cleanup
	echo "# test time: $(awk -v a="$TEST_T0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.0f", b - a }') s" >&3
}

@test "full mode: 100,000 mappings, both routers converge to exactly the store through a swap, one of them from a backlog; sampled identifiers translated" {
	topo_routers 2
	routers_translate 1 2
	# an entry the store does not have: the initial sync's swap replaces it
	ilactl -n "$r1" map add hosts 0:0:ff:ff $L3
	stamp topology
	mapping_lines 100000 >"$BATS_TEST_TMPDIR/100k"
	# 20,000 before the routers start (initial sync), the rest after (the watch)
	head -n 20001 "$BATS_TEST_TMPDIR/100k" | store_import /t1 --txn-ops 1000
	syncd_start "$r1" 1 /t1 --page-size 1000
	syncd_start "$r2" 2 /t1
	syncd_wait "$r1" "$r2"
	[ "$(map_stat "$r1" entries)" -eq 20000 ]
	[ "$(map_stat "$r2" entries)" -eq 20000 ]
	map_lacks "$r1" 0:0:ff:ff
	grep -q 'full sync at revision .*: 20000 entries of 20000 keys .*swapped in' "$BATS_TEST_TMPDIR/syncd-$r1.log"
	! scratch_entries "$r1"
	stamp "initial sync of 20,000 on both routers"
	# r2's daemon is stopped while 80,000 more are written in 160
	# transactions: more than its watch's buffer holds, so its member
	# sends them as one backlog when it runs again (etcd 3.4: one response
	# of 8 MB, far over the size at which etcd splits fragments)
	kill -STOP "$(syncd_pid "$r2")"
	tail -n 80000 "$BATS_TEST_TMPDIR/100k" | store_import /t1 --txn-ops 500
	syncd_wait "$r1"
	kill -CONT "$(syncd_pid "$r2")"
	# (the status revision may run ahead of a backlog: ila-syncd(8))
	poll 120 eval "[ \$(map_stat $r2 entries) -eq 100000 ]"
	syncd_wait "$r2"
	stamp "80,000 more: applied through the watch by r1, as a backlog by r2"
	# the backlog came from r2's own member, without giving it up
	! grep -q 'trying another endpoint' "$BATS_TEST_TMPDIR/syncd-$r2.log"
	map_equals_store "$r1" /t1
	map_equals_store "$r2" /t1 again
	[ "$(wc -l <"$BATS_TEST_TMPDIR/store")" -eq 100000 ]
	for r in "$r1" "$r2"; do
		json_is "$(syncd_status "$r")" entries=100000 bad_keys=0 errors=0 full_syncs=1 events_applied=80000 \
			stale=false lag_revisions=0
	done
	# sampled identifiers: mapping 4660 (even: s1, L1), 4661 and 9999
	# (odd: s2, L2, neutral-map-auto), through each router
	srv_hold s1 "$(ident 4660)"
	srv_hold s2 "$(ident 4661)" "$(ident 9999)"
	srv_udp_start s2 "$(ident 4661)" # (starts while TCP is asked)
	[ "$(tcp_ask "$c1" "$(ident 4660)")" = s1 ]
	[ "$(tcp_ask "$c2" "$(ident 9999)")" = s2 ]
	srv_udp_wait s2 "$(ident 4661)"
	[ "$(udp_ask "$c1" "$(ident 4661)")" = s2 ]
	stamp traffic
	[ "$(entry_hits "$r1" "$(ident 4660)")" -ge 1 ]
	[ "$(entry_hits "$r2" "$(ident 9999)")" -ge 1 ]
	[ "$(map_stat "$r1" misses)" -eq 0 ]
	[ "$(map_stat "$r2" misses)" -eq 0 ]
}

@test "moves under traffic: flows through both routers follow, no packet sees a missing entry" {
	topo_routers 2
	routers_translate 1 2
	mapping_lines 200 | store_import /t2
	syncd_start "$r1" 1 /t2
	syncd_start "$r2" 2 /t2
	syncd_wait "$r1" "$r2"
	stamp "topology and sync"
	local x y t0 l
	x=$(ident 100) y=$(ident 101) # x on s1 (L1), y on s2 (L2)
	srv_hold s1 "$x" "$y"
	srv_hold s2 "$y"
	# s1 receives a 1.6 MB stream for x from each client (20 kB every 0.1 s)
	# while x moves between s1's two locators (L1 <-> L3): the
	# connections live on
	bg_run "$s1" /dev/null socat -u TCP6-LISTEN:7002,fork,reuseaddr SYSTEM:"cat >$BATS_TEST_TMPDIR/rx.\$\$" &
	poll 10 nx "$s1" sh -c "ss -Htln | grep -q ':7002 '"
	head -c 1600000 /dev/urandom >"$BATS_TEST_TMPDIR/tx"
	local c pids=()
	for c in "$c1" "$c2"; do
		paced "$BATS_TEST_TMPDIR/tx" | nx "$c" socat -u - "TCP6:[$SIR::$x]:7002" 3>&- &
		pids+=($!)
	done
	# and ping x and y through both routers all along
	bg_run "$c1" "$BATS_TEST_TMPDIR/ping1" ping -q -i 0.1 -c 120 -W 5 "$SIR::$x" &
	pids+=($!)
	bg_run "$c2" "$BATS_TEST_TMPDIR/ping2" ping -q -i 0.1 -c 120 -W 5 "$SIR::$y" &
	pids+=($!)
	for l in $L3 $L1 $L3; do
		t0=$EPOCHREALTIME
		ectl put "/t2/maps/hosts/$x" "$l"
		poll 30 locator_is "$r1" "$x" "$l"
		poll 30 locator_is "$r2" "$x" "$l"
		echo "# move of $x to $l on both routers: $(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.2f", b - a }') s (etcdctl included)" >&3
	done
	# the flows took L3 (s1's counter of its L3 rule)
	[ "$(l3_packets)" -gt 0 ]
	# y moves to another host: the next connections reach s2, then s1
	[ "$(tcp_ask "$c1" "$y")" = s2 ]
	ectl put "/t2/maps/hosts/$y" "$L1"
	poll 30 answers "$c2" "$y" s1
	[ "$(tcp_ask "$c1" "$y")" = s1 ]
	# a batch of moves in one transaction: identifiers 0..49 to L3, applied
	# as one batch (the map's entries move together at one revision)
	# (etcdctl txn reads: compares, a blank line, the puts, a blank line, no else-ops, a blank line)
	printf '\n%s\n\n\n' "$(for i in $(seq 0 49); do echo "put /t2/maps/hosts/$(ident "$i") $L3"; done)" |
		ectl txn >/dev/null
	syncd_wait "$r1" "$r2"
	stamp "moves"
	wait "${pids[@]}"
	stamp "flows ended"
	# every byte arrived, once per client, in order
	for f in "$BATS_TEST_TMPDIR"/rx.*; do cmp "$f" "$BATS_TEST_TMPDIR/tx"; done
	[ "$(ls "$BATS_TEST_TMPDIR"/rx.* | wc -l)" -eq 2 ]
	no_loss "$BATS_TEST_TMPDIR/ping1"
	no_loss "$BATS_TEST_TMPDIR/ping2"
	# no packet found its identifier missing (the hook and the rule drop misses)
	[ "$(map_stat "$r1" misses)" -eq 0 ]
	[ "$(map_stat "$r2" misses)" -eq 0 ]
	map_equals_store "$r1" /t2
	map_equals_store "$r2" /t2 again
	[ "$(grep -c "^map add hosts .* $L3 " "$BATS_TEST_TMPDIR/store")" -eq 51 ]
}

@test "faults, 3-member cluster: the leader killed mid-stream, then quorum lost: the map keeps forwarding and says stale, recovery resumes" {
	# this test's own cluster (m5 m6 m7); the shared member m1 rests
	local shared=$ETCD_MEMBERS
	etcd_start 5 6 7
	stamp "3-member cluster up"
	topo_routers 1
	routers_translate 1
	mapping_lines 2000 | store_import /t3 --txn-ops 500
	local leader x
	leader=$(etcd_leader)
	# r1 watches through the leader
	SYNCD_FIRST=$leader syncd_start "$r1" 1 /t3
	syncd_wait "$r1"
	[ "$(syncd_field "$r1" endpoint)" = "http://10.99.1.1:2379$leader" ]
	x=$(ident 10) # unchanged all along, on s1
	srv_hold s1 "$x"
	bg_run "$c1" "$BATS_TEST_TMPDIR/ping1" ping -q -i 0.1 -c 100 -W 5 "$SIR::$x" &
	local p1=$!
	# writes keep coming (10 transactions) while the leader is killed, and
	# more after it
	local rev0 writer
	rev0=$(store_revision)
	mapping_lines 2200 | sed -n 2002,2101p | store_import /t3 --txn-ops 10 &
	writer=$!
	poll 60 eval "[ \$(store_revision) -ge $((rev0 + 3)) ]"
	etcd_member_kill "$leader"
	wait "$writer"
	mapping_lines 2200 | tail -n 100 | store_import /t3 --txn-ops 10
	syncd_wait "$r1"
	stamp "leader killed, writes applied"
	# r1 went on through another member
	[ "$(syncd_field "$r1" endpoint)" != "http://10.99.1.1:2379$leader" ]
	map_equals_store "$r1" /t3
	[ "$(wc -l <"$BATS_TEST_TMPDIR/store")" -eq 2200 ]
	[ "$(syncd_field "$r1" full_syncs)" -eq 1 ]
	# quorum lost (a second member killed): the map keeps forwarding, the
	# status says stale (the last member refuses watches once it sees it
	# has no leader, a few election timeouts later: until then the daemon
	# may still watch through it)
	local second
	for second in 5 6 7; do [ "$second" = "$leader" ] || break; done
	etcd_member_kill "$second"
	poll 90 syncd_stale_for "$r1" 8
	stamp "quorum lost: stale"
	[ "$(tcp_ask "$c1" "$x")" = s1 ]
	[ "$(syncd_field "$r1" entries)" -eq 2200 ]
	ila-syncd status -n "$r1" | grep -q 'state .*(stale)'
	syncd_field "$r1" last_error | grep -q .
	# quorum back: the daemon resumes
	etcd_member_start "$second"
	etcd_member_start "$leader"
	poll 120 etcd_healthy 3
	ectl put /t3/maps/hosts/"$(ident 13)" "$L3"
	syncd_wait "$r1"
	stamp "quorum back, resumed"
	map_equals_store "$r1" /t3
	grep -q "^map add hosts $(ident 13) $L3 " "$BATS_TEST_TMPDIR/map-$r1"
	[ "$(syncd_field "$r1" stale)" = false ]
	wait "$p1"
	no_loss "$BATS_TEST_TMPDIR/ping1"
	[ "$(map_stat "$r1" misses)" -eq 0 ]
	etcd_stop
	ETCD_MEMBERS=$shared
}

@test "faults: a daemon killed during its initial sync; cut off from the store (stale, keeps forwarding) while its revision is compacted: resync through a swap, no packet lost" {
	topo_routers 1
	routers_translate 1
	mapping_lines 10000 | store_import /t4 --txn-ops 1000
	stamp "topology, 10,000 mappings"
	# small pages: the initial sync takes a while; killed in it (the
	# scratch map fills by batches of about 4,000 entries)
	syncd_start "$r1" 1 /t4 --page-size 20
	poll 120 eval "[ \"\$(scratch_entries $r1)\" -gt 0 ]"
	syncd_stop "$r1" KILL
	# the live map never saw the half-loaded one
	[ "$(map_stat "$r1" entries)" -eq 0 ]
	[ "$(scratch_entries "$r1")" -gt 0 ]
	[ "$(scratch_entries "$r1")" -lt 10000 ]
	syncd_start "$r1" 1 /t4
	syncd_wait "$r1"
	! scratch_entries "$r1"
	map_equals_store "$r1" /t4
	[ "$(syncd_field "$r1" full_syncs)" -eq 1 ]
	stamp "killed in the initial sync, restarted"
	local x
	x=$(ident 10) # unchanged all along, on s1
	srv_hold s1 "$x"
	# steady traffic to an unchanged identifier all along (stopped below)
	bg_run "$c1" "$BATS_TEST_TMPDIR/ping1" ping -q -i 0.05 -W 5 "$SIR::$x" &
	local p1=$!
	# r1 loses its management link: the store is unreachable; the map
	# keeps forwarding, the status says stale
	ip -n "$r1" link set m0 down
	poll 60 syncd_stale "$r1"
	ila-syncd status -n "$r1" | grep -q 'state .*(stale)'
	[ "$(tcp_ask "$c1" "$x")" = s1 ]
	[ "$(syncd_field "$r1" entries)" -eq 10000 ]
	stamp "cut off: stale"
	# changes, then the history before them is compacted away
	ectl put /t4/maps/hosts/"$(ident 11)" "$L3"
	ectl del /t4/maps/hosts/"$(ident 12)"
	ectl put /t4/maps/hosts/0:0:1:0 "$L2 csum-mode neutral-map-auto"
	ectl compact "$(store_revision)"
	ip -n "$r1" link set m0 up
	syncd_wait "$r1"
	stamp "back: resynced"
	grep -q 'was compacted.*full resync' "$BATS_TEST_TMPDIR/syncd-$r1.log"
	[ "$(grep -c 'full sync at revision .*swapped in' "$BATS_TEST_TMPDIR/syncd-$r1.log")" -eq 2 ]
	[ "$(syncd_field "$r1" full_syncs)" -eq 2 ]
	[ "$(syncd_field "$r1" stale)" = false ]
	map_equals_store "$r1" /t4
	grep -q "^map add hosts $(ident 11) $L3 " "$BATS_TEST_TMPDIR/map-$r1"
	! grep -q "^map add hosts $(ident 12) " "$BATS_TEST_TMPDIR/map-$r1"
	ping_stop "$p1" "$BATS_TEST_TMPDIR/ping1"
	# no packet saw the map without x (the hook drops and counts misses)
	[ "$(map_stat "$r1" misses)" -eq 0 ]
	[ "$(entry_hits "$r1" "$x")" -ge 20 ]
}

@test "cache mode: a miss goes via the router and installs the entry; one fetch for a burst; the watch keeps it current; idle eviction; a miss storm within size and rate" {
	topo_cache
	mapping_lines 10000 | store_import /t5 --txn-ops 1000
	ilactl -n "$r1" map create hosts
	ilactl -n "$r1" hook add sir prerouting src-pfx $SIR::/64 map hosts miss drop
	syncd_start "$r1" 1 /t5
	# the forwarding node: misses go on untranslated (to r1) and are notified
	ilactl -n "$f" map create hosts max-entries 1000
	ilactl -n "$f" hook add sir prerouting src-pfx $SIR::/64 map hosts miss accept,notify
	syncd_start "$f" 3 /t5 --mode cache --cache-size 50 --fetch-rate 20 --idle-timeout 600 --sweep-interval 0.5
	syncd_wait "$r1" "$f"
	[ "$(syncd_field "$f" entries)" -eq 0 ]
	stamp "topology and daemons"
	local x y
	x=$(ident 20) y=$(ident 22) # both on s1 (L1)
	srv_hold s1 "$x" "$y"
	# the first packet of x: a miss at f (the daemon was ready, so it is
	# notified), forwarded untranslated and translated by r1
	nx "$c" ping -q -c 1 -W 5 "$SIR::$x"
	[ "$(entry_hits "$r1" "$x")" -eq 1 ]
	poll 30 map_has "$f" "$x"
	[ "$(entry_locator "$f" "$x")" = "$L1" ]
	[ "$(syncd_field "$f" cache.misses)" -ge 1 ]
	# the next ones are translated at f: r1 does not see them as SIR
	nx "$c" ping -q -c 3 -i 0.2 -W 5 "$SIR::$x"
	[ "$(entry_hits "$f" "$x")" -eq 3 ]
	[ "$(entry_hits "$r1" "$x")" -eq 1 ]
	[ "$(tcp_ask "$c" "$x")" = s1 ]
	stamp "miss, install"
	# a burst of misses for one identifier: one fetch
	local fetches
	fetches=$(syncd_field "$f" cache.fetches)
	nx "$c" ping -q -c 20 -i 0.01 -W 5 "$SIR::$y"
	poll 30 map_has "$f" "$y"
	[ "$(syncd_field "$f" cache.fetches)" -eq $((fetches + 1)) ]
	[ "$(syncd_field "$f" cache.misses)" -ge 2 ]
	stamp "burst"
	# a move in the store updates the cached entry (and r1's), x in use
	bg_run "$c" /dev/null ping -i 0.3 -W 5 "$SIR::$x" &
	local keep=$!
	ectl put "/t5/maps/hosts/$x" "$L3"
	poll 30 locator_is "$f" "$x" "$L3"
	[ "$(tcp_ask "$c" "$x")" = s1 ]
	[ "$(l3_packets)" -gt 0 ]
	stamp "move"
	# idle eviction, from the entries' hit counters: the daemon restarted
	# with --idle-timeout 4 adopts both entries (a restart keeps the
	# cache); x stays in use (the ping), y has no traffic and goes
	syncd_stop "$f"
	syncd_start "$f" 3 /t5 --mode cache --cache-size 10 --fetch-rate 20 --idle-timeout 4 --sweep-interval 0.5
	syncd_wait "$f"
	grep -q 'adopted 2 entries' "$BATS_TEST_TMPDIR/syncd-$f.log"
	poll 30 map_lacks "$f" "$y"
	map_has "$f" "$x"
	[ "$(syncd_field "$f" cache.evicted_idle)" -eq 1 ]
	kill "$keep"
	poll 30 map_lacks "$f" "$x"
	[ "$(syncd_field "$f" cache.evicted_idle)" -eq 2 ]
	stamp "idle eviction"
	# a miss storm for 10,000 identifiers: at most 10 entries (--cache-size
	# of the restarted daemon, below the burst of fetches: size evictions
	# even when the storm is over within a second), at most 20 fetches a
	# second (+ a burst of 20), the rest counted as rate-limited
	fetches=$(syncd_field "$f" cache.fetches)
	local t0=$EPOCHREALTIME max=0 n secs
	udp_storm "$c" 0 10000 &
	local storm=$! adds
	# (what the map holds while the storm runs, and once more right after
	# it, in case the storm was over before a fetch came back: the entries
	# go idle within 4 s)
	sample_cache() {
		mapfile -t adds < <(ilactl -n "$f" save hosts | grep '^map add ')
		n=${#adds[@]}
		[ "$n" -le 10 ]
		[ "$n" -le "$max" ] || max=$n
		[ "$n" -eq 0 ] || printf '%s\n' "${adds[@]}" | LC_ALL=C sort >"$BATS_TEST_TMPDIR/cached"
	}
	while kill -0 "$storm" 2>/dev/null; do
		sample_cache
	done
	wait "$storm"
	sample_cache
	nap 1
	secs=$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%d", b - a + 1 }')
	n=$(($(syncd_field "$f" cache.fetches) - fetches))
	echo "# miss storm: $n fetches in ${secs} s, $(syncd_field "$f" cache.rate_limited) rate-limited, at most $max entries seen" >&3
	[ "$n" -ge 20 ]
	[ "$n" -le $((20 * secs + 20)) ]
	[ "$(syncd_field "$f" cache.rate_limited)" -ge 1 ]
	[ "$(map_stat "$f" entries)" -le 10 ]
	[ "$(syncd_field "$f" cache.evicted_size)" -ge 10 ]
	[ "$(syncd_field "$f" errors)" -eq 0 ]
	# what was cached is what the store says
	store_lines /t5 >"$BATS_TEST_TMPDIR/store"
	[ "$(wc -l <"$BATS_TEST_TMPDIR/cached")" -ge 1 ]
	[ "$(LC_ALL=C comm -23 "$BATS_TEST_TMPDIR/cached" "$BATS_TEST_TMPDIR/store" | wc -l)" -eq 0 ]
	stamp "storm"
}

@test "bad data in the store: malformed keys and values skipped, counted and logged; the rest applies" {
	topo_mgmt 1 2
	ilactl -n "$r1" map create hosts
	# r2's map can hold 4 entries: the fifth is the kernel's error, for that key only
	ilactl -n "$r2" map create hosts max-entries 4
	local k=/t6/maps/hosts
	# one transaction (etcdctl txn: compares, a blank line, the puts, a
	# blank line, no else-ops, a blank line); quoted values keep their spaces
	printf '\n%s\n\n\n' "put $k/0:0:0:1 $L1
put $k/0:0:0:2 \"$L2 csum-mode neutral-map-auto\"
put $k/0:0:0:3 \"  $L3   csum-mode none  \"
put $k/0:0:0:04 $L1
put $k/::5 $L1
put $k/0:0:0:6/x $L1
put $k/0:0:0:7 \"over there\"
put $k/0:0:0:8 \"$L1 csum-mode fast\"
put $k/0:0:0:9 \"$L1 extra\"
put $k/0:0:0:a 2001:db8:1:0:1::
put $k/0:0:0:b $L2
put $k/0:0:0:c $L1" | ectl txn >/dev/null
	# 0:0:0:04: identifier not canonical; ::5: an address, not the key
	# notation; 0:0:0:6/x: one level too deep; 0:0:0:7: not a locator;
	# 0:0:0:8: a mode no map takes; 0:0:0:9: a word too many; 0:0:0:a:
	# bits in the identifier half of the locator
	[ "$(ectl get $k/ --prefix --keys-only | grep -c .)" -eq 12 ]
	[ "$(ectl get $k/0:0:0:3 --print-value-only)" = "  $L3   csum-mode none  " ]
	syncd_start "$r1" 1 /t6
	syncd_start "$r2" 2 /t6
	syncd_wait "$r1" "$r2"
	[ "$(map_lines "$r1" | cut -d' ' -f5- | xargs)" = \
		"$L1 csum-mode adjust-transport $L2 csum-mode neutral-map-auto $L3 csum-mode none $L2 csum-mode adjust-transport $L1 csum-mode adjust-transport" ]
	[ "$(syncd_field "$r1" bad_keys)" -eq 7 ]
	[ "$(syncd_field "$r1" errors)" -eq 0 ]
	local log=$BATS_TEST_TMPDIR/syncd-$r1.log key
	for key in 0:0:0:04 ::5 0:0:0:6/x 0:0:0:7 0:0:0:8 0:0:0:9 0:0:0:a; do
		grep -qF "skipping key $k/$key: " "$log"
	done
	grep -q 'skipping key .*0:0:0:04: identifier not in canonical notation (the key of this identifier is "0:0:0:4")' "$log"
	grep -q 'skipping key .*0:0:0:8: unknown csum-mode "fast"' "$log"
	# r2: four entries, one error naming the key that did not fit
	[ "$(syncd_field "$r2" entries)" -eq 4 ]
	[ "$(syncd_field "$r2" errors)" -eq 1 ]
	syncd_field "$r2" last_error | grep -q "^key $k/0:0:0:.*map is full"
	# through the watch: a bad key is counted and logged, a mapping whose
	# value turns bad leaves the map, the good ones still apply
	printf '\n%s\n\n\n' "put $k/0:0:0:0d $L1
put $k/0:0:0:b \"$L2 csum-mode nope\"
put $k/0:0:0:e $L3" | ectl txn >/dev/null
	syncd_wait "$r1"
	[ "$(syncd_field "$r1" bad_keys)" -eq 9 ]
	grep -q "skipping key $k/0:0:0:0d: " "$log"
	grep -q "skipping key $k/0:0:0:b: unknown csum-mode \"nope\"" "$log"
	map_lacks "$r1" 0:0:0:b
	[ "$(entry_locator "$r1" 0:0:0:e)" = "$L3" ]
	[ "$(map_lines "$r1" | wc -l)" -eq 5 ]
}

@test "TLS with right and wrong certificates; a user without permission on the prefix; secrets never logged" {
	topo_mgmt 1 2
	local d=$BATS_TEST_TMPDIR/tls pw=$BATS_TEST_TMPDIR/pw
	tls_material "$d"
	stamp "certificates"
	etcd_tls_start "$d"
	cat "$d/etcd.pid" >>"$BATS_TEST_TMPDIR/pids"
	poll 60 tctl "$d" endpoint health
	stamp "TLS member"
	tctl "$d" put /t7/maps/hosts/0:0:0:1 "$L1"
	tctl "$d" put /t7/maps/hosts/0:0:0:2 "$L2"
	tctl "$d" put /t8/maps/hosts/0:0:0:3 "$L3"
	local tls="--endpoints https://10.99.N.1:23794 --cacert $d/ca.pem"
	# right certificate
	nx "$r1" ila-syncd ${tls/N/1} --cert "$d/client.pem" --key "$d/client.key" --prefix /t7 --map hosts --once
	[ "$(map_lines "$r1" | wc -l)" -eq 2 ]
	# a client certificate from another CA: refused, the map untouched
	run nx "$r1" ila-syncd ${tls/N/1} --cert "$d/wrong.pem" --key "$d/wrong.key" --prefix /t8 --map hosts --once --timeout 3
	echo "$output"
	[ "$status" -eq 1 ]
	[ "$(map_lines "$r1" | wc -l)" -eq 2 ]
	# the server's certificate checked against another CA: refused
	run nx "$r1" ila-syncd --endpoints https://10.99.1.1:23794 --cacert "$d/other.pem" --cert "$d/client.pem" \
		--key "$d/client.key" --prefix /t8 --map hosts --once --timeout 3
	echo "$output"
	[ "$status" -eq 1 ]
	[ "$(map_lines "$r1" | wc -l)" -eq 2 ]
	# no client certificate at all
	run nx "$r1" ila-syncd ${tls/N/1} --prefix /t8 --map hosts --once --timeout 3
	[ "$status" -eq 1 ]
	[ "$(map_lines "$r1" | wc -l)" -eq 2 ]
	stamp "right and wrong certificates"
	# users: "ila" may read /t7/, "other" only /t8/
	tctl "$d" user add root --new-user-password rootpw >/dev/null
	tctl "$d" user grant-role root root >/dev/null
	tctl "$d" role add ila-read >/dev/null
	tctl "$d" role grant-permission --prefix=true ila-read read /t7/maps/hosts/ >/dev/null
	tctl "$d" user add ila --new-user-password 's3cret-Pa55' >/dev/null
	tctl "$d" user grant-role ila ila-read >/dev/null
	tctl "$d" role add other-read >/dev/null
	tctl "$d" role grant-permission --prefix=true other-read read /t8/ >/dev/null
	tctl "$d" user add other --new-user-password 'an0ther-Pa55' >/dev/null
	tctl "$d" user grant-role other other-read >/dev/null
	tctl "$d" auth enable >/dev/null
	stamp "users and roles"
	printf 's3cret-Pa55\n' >"$pw.ila"
	printf 'an0ther-Pa55\n' >"$pw.other"
	chmod 600 "$pw.ila" "$pw.other"
	local cert="--cert $d/client.pem --key $d/client.key"
	# the user with permission: full sync and watch
	busybox nsenter -F --net="/run/netns/$r2" ila-syncd ${tls/N/2} $cert --user ila --password-file "$pw.ila" \
		--prefix /t7 --map hosts --progress-interval 0.5 -v >>"$BATS_TEST_TMPDIR/syncd-$r2.log" 2>&1 3>&- &
	poll 60 syncd_at "$r2" 1
	tctl "$d" --user root:rootpw put /t7/maps/hosts/0:0:0:4 "$L1" >/dev/null
	poll 30 map_has "$r2" 0:0:0:4
	[ "$(map_lines "$r2" | wc -l)" -eq 3 ]
	# the user without permission on /t7/: refused, said in the status, map untouched
	busybox nsenter -F --net="/run/netns/$r1" ila-syncd ${tls/N/1} $cert --user other --password-file "$pw.other" \
		--prefix /t7 --map hosts --progress-interval 0.5 >>"$BATS_TEST_TMPDIR/syncd-$r1.log" 2>&1 3>&- &
	poll 60 eval "[[ \"\$(syncd_field $r1 last_error)\" == *'permission denied'* ]]"
	[ "$(syncd_field "$r1" stale)" = true ]
	[ "$(map_lines "$r1" | wc -l)" -eq 2 ]
	# a wrong password
	printf 'guess\n' >"$pw.bad"
	run nx "$r1" ila-syncd ${tls/N/1} $cert --user ila --password-file "$pw.bad" --prefix /t7 --map other --once \
		--timeout 3
	echo "$output"
	[ "$status" -eq 1 ]
	[[ "$output" == *"authentication failed"* ]]
	[[ "$output" != *guess* ]]
	# secrets: in no log line, in no argument list
	! grep -rq -e 's3cret-Pa55' -e 'an0ther-Pa55' -e guess "$BATS_TEST_TMPDIR"/syncd-*.log
	local p
	for p in $(pgrep -x ila-syncd); do ! grep -qa -e 's3cret-Pa55' -e 'an0ther-Pa55' "/proc/$p/cmdline"; done
	kill "$(cat "$d/etcd.pid")"
}

@test "operability: ilactl save into etcd and back, --once, --netns, status, config file, SIGHUP" {
	topo_mgmt 1 2
	# a map made by hand on r1 goes into the store with one command ...
	ilactl -n "$r1" map create hosts
	ilactl -n "$r1" map add hosts 0:0:0:5 3333:0:0:1
	ilactl -n "$r1" map add hosts 0:0:0:6 3333:0:0:2 csum-mode neutral-map
	ilactl -n "$r1" save hosts | ila-syncd import --endpoints http://127.0.0.1:23791 --prefix /ila
	[ "$(ectl get /ila/maps/hosts/0:0:0:6 --print-value-only)" = "3333:0:0:2 csum-mode neutral-map" ]
	# ... and comes back out of it with one command
	ila-syncd export --endpoints http://127.0.0.1:23791 --prefix /ila | ilactl -n "$r2" restore -exist
	[ "$(map_lines "$r2")" = "$(map_lines "$r1")" ]
	# --prune: the store becomes the file
	ilactl -n "$r1" map del hosts 0:0:0:5
	ilactl -n "$r1" save hosts | ila-syncd import --endpoints http://127.0.0.1:23791 \
		--prefix /ila --prune
	[ "$(ectl get --prefix /ila/maps/hosts/ --keys-only | grep -c .)" -eq 1 ]
	# --once: one sync, exit 0; usage errors exit 2 naming the option
	ectl put /ila/maps/hosts/0:0:0:7 "3333:0:0:3"
	nx "$r2" ila-syncd --endpoints http://10.99.2.1:23791 --prefix /ila --map hosts --once
	map_equals_store "$r2" /ila
	[ "$(map_lines "$r2" | wc -l)" -eq 2 ]
	! pgrep -x ila-syncd
	run ila-syncd --endpoints http://10.99.2.1:23791 --prefix /ila --map hosts --mode sideways
	[ "$status" -eq 2 ]
	[[ "$output" == *'--mode: unknown mode "sideways"'* ]]
	run ila-syncd --help
	[ "$status" -eq 0 ]
	[[ "$output" == *"PREFIX/maps/NAME/IDENTIFIER"* ]]
	# --netns: etcd reached from the VM's namespace, the map in r1's;
	# status found there; a second daemon for the same map is refused
	ila-syncd --endpoints http://127.0.0.1:23791 --prefix /ila --map hosts \
		--netns "$r1" --progress-interval 0.5 >>"$BATS_TEST_TMPDIR/syncd-$r1.log" 2>&1 3>&- &
	local nsd=$!
	echo $nsd >>"$BATS_TEST_TMPDIR/pids"
	poll 60 syncd_at "$r1" 1
	map_equals_store "$r1" /ila again
	[ "$(ila-syncd status -n "$r1" --map hosts -j | jq -r .netns)" = "$r1" ]
	! ila-syncd status
	run ila-syncd --endpoints http://127.0.0.1:23791 --prefix /ila --map hosts --netns "$r1"
	[ "$status" -eq 1 ]
	[[ "$output" == *"another ila-syncd keeps map hosts in this network namespace"* ]]
	# status: text and JSON of every daemon of the namespace
	ila-syncd status -n "$r1" | grep -q '^hosts: full mode, prefix /ila, netns '"$r1"
	ila-syncd status -n "$r1" -j | jq -e 'length == 1 and .[0].map == "hosts" and .[0].schema == 1'
	local s f
	s=$(ila-syncd status -n "$r1" --map hosts -j)
	jq -e 'has("revision") and has("store_revision") and has("lag_revisions") and has("lag_seconds") and
		has("entries") and has("events_applied") and has("bad_keys") and has("errors") and
		has("full_syncs") and has("last_error") and has("stale") and has("state") and has("endpoint")' <<<"$s"
	json_is "$s" entries=2 lag_revisions=0 stale=false state=watching revision="$(store_revision)"
	# SIGHUP: a full resync
	kill -HUP "$nsd"
	poll 60 eval "[ \"\$(syncd_field $r1 full_syncs)\" -eq 2 ]"
	# a configuration file (as the systemd unit ila-syncd@NAME uses)
	cat >"$BATS_TEST_TMPDIR/hosts.conf" <<EOF2
# /etc/ila-syncd/hosts.conf
endpoints http://10.99.2.1:23791
prefix /ila
map hosts
mode full
EOF2
	ilactl -n "$r2" map flush hosts
	nx "$r2" ila-syncd --config "$BATS_TEST_TMPDIR/hosts.conf" --once
	map_equals_store "$r2" /ila again
	kill "$nsd"
	poll 30 eval "! kill -0 $nsd"
	grep -q 'stopped' "$BATS_TEST_TMPDIR/syncd-$r1.log"
}

@test "full mode follows the map changed by hand: a flush, a destroy and a swap each lead to one full resync" {
	topo_mgmt 1
	mapping_lines 20 | store_import /t9
	syncd_start "$r1" 1 /t9
	syncd_wait "$r1"
	map_equals_store "$r1" /t9
	# the kernel's notifications reach the daemon (a full sync's own swap
	# and scratch map do not count)
	ilactl -n "$r1" map flush hosts
	poll 60 map_equals_store "$r1" /t9 again
	grep -q 'map hosts was flushed by another process: full resync' "$BATS_TEST_TMPDIR/syncd-$r1.log"
	ilactl -n "$r1" map destroy hosts
	poll 60 map_equals_store "$r1" /t9 again
	grep -q 'map hosts was destroyed by another process: full resync' "$BATS_TEST_TMPDIR/syncd-$r1.log"
	# created by the first sync, and again
	[ "$(grep -c 'created map hosts' "$BATS_TEST_TMPDIR/syncd-$r1.log")" -eq 2 ]
	ilactl -n "$r1" map create spare
	ilactl -n "$r1" map add spare 0:0:ff:1 $L3
	ilactl -n "$r1" map swap hosts spare
	poll 60 map_equals_store "$r1" /t9 again
	grep -q 'map hosts was swapped with another map by another process: full resync' \
		"$BATS_TEST_TMPDIR/syncd-$r1.log"
	syncd_wait "$r1"
	[ "$(syncd_field "$r1" full_syncs)" -eq 4 ]
	[ "$(syncd_field "$r1" stale)" = false ]
	# the watch goes on
	ectl put /t9/maps/hosts/"$(ident 30)" "$L2"
	syncd_wait "$r1"
	map_equals_store "$r1" /t9
}

@test "a full map: changes the kernel refuses (ENOSPC) are retried until they apply; meanwhile the status is stale with keys_behind" {
	topo_mgmt 1
	ilactl -n "$r1" map create hosts max-entries 4
	mapping_lines 5 | store_import /t10
	syncd_start "$r1" 1 /t10
	# the initial sync: four entries fit, the fifth waits
	poll 60 eval "[ \"\$(syncd_field $r1 keys_behind)\" = 1 ]"
	[ "$(map_stat "$r1" entries)" -eq 4 ]
	poll 60 syncd_stale_for "$r1" 1
	[ "$(syncd_field "$r1" state)" = watching ]
	grep -q 'No space left on device' "$BATS_TEST_TMPDIR/syncd-$r1.log"
	# a key the map holds leaves the store: the refused one takes its place
	local gone
	gone=$(ilactl -n "$r1" save hosts | awk '/^map add hosts / { print $4; exit }')
	ectl del /t10/maps/hosts/"$gone"
	syncd_wait "$r1"
	poll 60 eval "[ \"\$(syncd_field $r1 keys_behind)\" = 0 ]"
	map_equals_store "$r1" /t10
	[ "$(syncd_field "$r1" stale)" = false ]
	[ "$(syncd_field "$r1" lag_seconds)" = 0.000 ]
	grep -q 'refused changes applied on a retry' "$BATS_TEST_TMPDIR/syncd-$r1.log"
	# refused while watching: the same
	ectl put /t10/maps/hosts/"$(ident 9)" "$L1"
	poll 60 eval "[ \"\$(syncd_field $r1 keys_behind)\" = 1 ]"
	syncd_stale "$r1"
	gone=$(ilactl -n "$r1" save hosts | awk '/^map add hosts / { print $4; exit }')
	ectl del /t10/maps/hosts/"$gone"
	poll 60 eval "[ \"\$(syncd_field $r1 keys_behind)\" = 0 ]"
	syncd_wait "$r1"
	map_equals_store "$r1" /t10
	[ "$(syncd_field "$r1" full_syncs)" -eq 1 ]
}

# last: the store is restored from a snapshot (its revision goes back)
@test "a store restored from a snapshot: its revision went back, a full resync drops what the snapshot does not have and the writes after the restore apply" {
	topo_mgmt 1
	mapping_lines 20 | store_import /t11
	syncd_start "$r1" 1 /t11
	syncd_wait "$r1"
	ectl snapshot save "$BATS_TEST_TMPDIR/snap.db" >/dev/null
	# after the snapshot: a delete, a move, a new key
	ectl del /t11/maps/hosts/"$(ident 1)"
	ectl put /t11/maps/hosts/"$(ident 2)" "$L3"
	ectl put /t11/maps/hosts/"$(ident 40)" "$L1"
	syncd_wait "$r1"
	map_equals_store "$r1" /t11
	local before
	before=$(syncd_field "$r1" revision)
	# member m1 restarted on the snapshot: etcd 3.4 cannot raise the
	# revision of a restored store
	etcd_member_kill 1
	mv "$ETCD_DIR/m1" "$ETCD_DIR/m1.before-restore"
	etcdctl snapshot restore "$BATS_TEST_TMPDIR/snap.db" --name m1 --data-dir "$ETCD_DIR/m1" \
		--initial-cluster "$ETCD_CLUSTER" --initial-advertise-peer-urls http://127.0.0.1:23801 \
		--initial-cluster-token "fleet-${ETCD_CLUSTER//[^0-9]/}" >/dev/null 2>&1
	etcd_member_start 1
	poll 120 etcd_healthy 1
	[ "$(store_revision)" -lt "$before" ]
	# a write after the restore, at a revision the daemon had passed
	ectl put /t11/maps/hosts/"$(ident 41)" "$L2"
	poll 60 map_equals_store "$r1" /t11
	syncd_wait "$r1"
	grep -q 'below revision .* applied (restored from a snapshot?): full resync' "$BATS_TEST_TMPDIR/syncd-$r1.log"
	[ "$(syncd_field "$r1" store_revision)" -lt "$before" ]
	[ "$(syncd_field "$r1" stale)" = false ]
	map_lacks "$r1" "$(ident 40)"
	map_has "$r1" "$(ident 1)"
	map_has "$r1" "$(ident 41)"
}
