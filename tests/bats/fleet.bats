#!/usr/bin/env bats
# ILA across a fleet: ila-syncd keeps the maps of two ILA routers (full
# mode) and a forwarding node (cache mode) equal to a real 3-member etcd
# cluster; traffic through them. Topology in tests/bats/fleet_helpers.bash:
#
#              the VM's own netns: etcd members m1 m2 m3
#              10.99.1.1 /      10.99.2.1 |      \ 10.99.3.1   (management veths)
#   c1 ---- r1 (ila-syncd full)    r2 (ila-syncd full) ---- c2     f (ila-syncd cache)
#            | \                  / |
#            |  +------ s1 ------+  |       s1: locators L1, L3; s2: locator L2
#            +--------- s2 ---------+
#
# Each test uses its own key prefix (/tN) on the shared cluster.

load helpers
load fleet_helpers

setup_file() {
	load_module nf_ila
	load_module xt_ILA
	local t0=$EPOCHREALTIME
	etcd_start_cluster
	echo "# etcd cluster up in $(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }') s" >&3
}

teardown_file() {
	etcd_stop_cluster
	unload_module xt_ILA
	unload_module nf_ila
}

setup() {
	STAMP_T=$EPOCHREALTIME
	TEST_T0=$EPOCHREALTIME
}

teardown() {
	echo "# test time: $(awk -v a="$TEST_T0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.0f", b - a }') s" >&3
	cleanup_all
}

@test "full mode: 100,000 mappings, both routers converge to exactly the store, sampled identifiers translated" {
	topo_routers
	routers_translate
	stamp topology
	mapping_lines 100000 >"$BATS_TEST_TMPDIR/100k"
	# half before the routers start (initial sync), half after (the watch)
	head -n 50001 "$BATS_TEST_TMPDIR/100k" >"$BATS_TEST_TMPDIR/first"
	tail -n 50000 "$BATS_TEST_TMPDIR/100k" >"$BATS_TEST_TMPDIR/second"
	ila-syncd import --endpoints http://127.0.0.1:23791,http://127.0.0.1:23792 --prefix /t1 \
		--txn-ops 512 "$BATS_TEST_TMPDIR/first"
	stamp "import of 50,000 mappings"
	syncd_start "$r1" 1 /t1
	syncd_start "$r2" 2 /t1
	wait_until 120 syncd_at "$r1" 1
	wait_until 120 syncd_at "$r2" 1
	[ "$(syncd_field "$r1" entries)" -eq 50000 ]
	stamp "initial sync of 50,000 on both routers"
	ila-syncd import --endpoints "http://127.0.0.1:23793" --prefix /t1 --txn-ops 512 \
		"$BATS_TEST_TMPDIR/second"
	syncd_wait "$r1" "$r2"
	stamp "50,000 more imported and applied through the watch"
	map_equals_store "$r1" /t1
	map_equals_store "$r2" /t1 again
	stamp "both maps compared with the store"
	[ "$(wc -l <"$BATS_TEST_TMPDIR/store")" -eq 100000 ]
	[ "$(syncd_field "$r1" bad_keys)" -eq 0 ]
	[ "$(syncd_field "$r2" errors)" -eq 0 ]
	[ "$(syncd_field "$r1" full_syncs)" -eq 1 ]
	# sampled identifiers: mapping 4660 (even: s1, L1), 43981 and 99999
	# (odd: s2, L2, neutral-map-auto), through each router
	srv_hold s1 "$(ident 4660)"
	srv_hold s2 "$(ident 43981)" "$(ident 99999)"
	srv_udp s2 "$(ident 43981)"
	for c in "$c1" "$c2"; do
		[ "$(tcp_ask "$c" "$(ident 4660)")" = s1 ]
		[ "$(udp_ask "$c" "$(ident 43981)")" = s2 ]
		[ "$(tcp_ask "$c" "$(ident 99999)")" = s2 ]
	done
	stamp traffic
	[ "$(ilactl -n "$r1" -j map stats hosts | jq .hits)" -ge 3 ]
	[ "$(ilactl -n "$r2" -j map stats hosts | jq .misses)" -eq 0 ]
}

@test "moves under traffic: flows through both routers follow, no packet sees a missing entry" {
	topo_routers
	routers_translate
	mapping_lines 200 | ila-syncd import --endpoints http://127.0.0.1:23791 --prefix /t2
	syncd_start "$r1" 1 /t2
	syncd_start "$r2" 2 /t2
	syncd_wait "$r1" "$r2"
	local x y t0
	x=$(ident 100) y=$(ident 101) # x on s1 (L1), y on s2 (L2)
	srv_hold s1 "$x" "$y"
	srv_hold s2 "$y"
	# s1 receives a 2 MB stream for x from each client (20 kB every 0.1 s)
	# while x moves between s1's two locators (L1 <-> L3): the
	# connections live on
	in_ns "$s1" socat -u TCP6-LISTEN:7002,fork,reuseaddr SYSTEM:"cat >$BATS_TEST_TMPDIR/rx.\$\$" &
	wait_until 10 in_ns "$s1" sh -c "ss -Htln | grep -q ':7002 '"
	head -c 2000000 /dev/urandom >"$BATS_TEST_TMPDIR/tx"
	local c pids=()
	for c in "$c1" "$c2"; do
		paced "$BATS_TEST_TMPDIR/tx" | in_ns "$c" socat -u - "TCP6:[$SIR::$x]:7002" &
		pids+=($!)
	done
	# and ping x and y through both routers all along
	in_ns "$c1" ping -q -i 0.1 -c 150 -W 5 "$SIR::$x" >"$BATS_TEST_TMPDIR/ping1" &
	pids+=($!)
	in_ns "$c2" ping -q -i 0.1 -c 150 -W 5 "$SIR::$y" >"$BATS_TEST_TMPDIR/ping2" &
	pids+=($!)
	for l in $L3 $L1 $L3 $L1 $L3; do
		t0=$EPOCHREALTIME
		ectl put "/t2/maps/hosts/$x" "$l"
		wait_until 30 sh -c "[ \"\$(ilactl -n $r1 -j map get hosts $x | jq -r .locator)\" = $l ] &&
			[ \"\$(ilactl -n $r2 -j map get hosts $x | jq -r .locator)\" = $l ]"
		echo "# move of $x to $l on both routers: $(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.2f", b - a }') s (etcdctl included)" >&3
	done
	# the flows took L3 (s1's counter of its L3 rule)
	[ "$(l3_packets)" -gt 0 ]
	# y moves to another host: the next connections reach s2, then s1
	[ "$(tcp_ask "$c1" "$y")" = s2 ]
	ectl put "/t2/maps/hosts/$y" "$L1"
	wait_until 30 answers "$c2" "$y" s1
	[ "$(tcp_ask "$c1" "$y")" = s1 ]
	# a batch of moves in one transaction: identifiers 0..49 to L3
	# (etcdctl txn reads: compares, a blank line, the puts, a blank line, no else-ops, a blank line)
	printf '\n%s\n\n\n' "$(for i in $(seq 0 49); do echo "put /t2/maps/hosts/$(ident "$i") $L3"; done)" |
		ectl txn >/dev/null
	syncd_wait "$r1" "$r2"
	wait "${pids[@]}"
	# every byte arrived, once per client, in order
	for f in "$BATS_TEST_TMPDIR"/rx.*; do cmp "$f" "$BATS_TEST_TMPDIR/tx"; done
	[ "$(ls "$BATS_TEST_TMPDIR"/rx.* | wc -l)" -eq 2 ]
	grep -q ' 0% packet loss' "$BATS_TEST_TMPDIR/ping1"
	grep -q ' 0% packet loss' "$BATS_TEST_TMPDIR/ping2"
	# no packet found its identifier missing (the hook and the rule drop misses)
	[ "$(ilactl -n "$r1" -j map stats hosts | jq .misses)" -eq 0 ]
	[ "$(ilactl -n "$r2" -j map stats hosts | jq .misses)" -eq 0 ]
	map_equals_store "$r1" /t2
	map_equals_store "$r2" /t2 again
	grep -c "^map add hosts .* $L3 " "$BATS_TEST_TMPDIR/store" | grep -qx 51
}

@test "faults: the etcd leader killed mid-stream, a daemon killed during its initial sync; nothing lost" {
	topo_routers
	routers_translate
	mapping_lines 20000 | ila-syncd import --endpoints http://127.0.0.1:23791 --prefix /t3 --txn-ops 500
	local leader
	leader=$(etcd_leader)
	# r1 watches through the leader
	SYNCD_FIRST=$leader syncd_start "$r1" 1 /t3
	# r2 reads in small pages: its initial sync takes a while; killed in it
	syncd_start "$r2" 2 /t3 --page-size 50
	wait_until 120 sh -c "ilactl -n $r2 -j map list | jq -e '.[] | select(.name == \"hosts.sync\" and .entries > 0)'"
	syncd_stop "$r2" KILL
	# the live map never saw the half-loaded one
	[ "$(ilactl -n "$r2" -j map stats hosts | jq .entries)" -eq 0 ]
	ilactl -n "$r2" -j map list | jq -e '.[] | select(.name == "hosts.sync")'
	syncd_start "$r2" 2 /t3
	syncd_wait "$r1" "$r2"
	! ilactl -n "$r2" -j map list | jq -e '.[] | select(.name == "hosts.sync")'
	[ "$(syncd_field "$r1" endpoint)" = "http://10.99.1.1:2379$leader" ]
	# writes keep coming (150 transactions) while the leader is killed
	local rev0
	rev0=$(store_revision)
	mapping_lines 23000 | tail -n 3000 | ila-syncd import --prefix /t3 --txn-ops 20 \
		--endpoints http://127.0.0.1:23791,http://127.0.0.1:23792,http://127.0.0.1:23793 &
	local writer=$!
	wait_until 60 sh -c "[ \$(etcdctl --endpoints 127.0.0.1:23791,127.0.0.1:23792,127.0.0.1:23793 get / --limit 1 -w json | jq .header.revision) -ge $((rev0 + 20)) ]"
	etcd_member_kill "$leader"
	wait "$writer"
	syncd_wait "$r1" "$r2"
	# r1 went on through another member
	[ "$(syncd_field "$r1" endpoint)" != "http://10.99.1.1:2379$leader" ]
	map_equals_store "$r1" /t3
	map_equals_store "$r2" /t3 again
	[ "$(wc -l <"$BATS_TEST_TMPDIR/store")" -eq 23000 ]
	[ "$(syncd_field "$r1" full_syncs)" -eq 1 ]
	etcd_member_start "$leader"
	wait_until 120 etcd_healthy 3
}

@test "faults: compaction while cut off or stopped, quorum loss: resync through a swap, no packet lost" {
	topo_routers
	routers_translate
	mapping_lines 2000 | ila-syncd import --endpoints http://127.0.0.1:23791 --prefix /t4
	syncd_start "$r1" 1 /t4
	syncd_start "$r2" 2 /t4
	syncd_wait "$r1" "$r2"
	local x
	x=$(ident 10) # unchanged all along, on s1
	srv_hold s1 "$x"
	in_ns "$c1" ping -q -i 0.05 -c 300 -W 5 "$SIR::$x" >"$BATS_TEST_TMPDIR/ping1" &
	local p1=$!
	in_ns "$c2" ping -q -i 0.05 -c 300 -W 5 "$SIR::$x" >"$BATS_TEST_TMPDIR/ping2" &
	local p2=$!
	# r1 loses its management link (stale, keeps forwarding); r2's daemon stops
	ip -n "$r1" link set m0 down
	syncd_stop "$r2"
	wait_until 60 syncd_stale "$r1"
	# changes, then the history before them is compacted away
	ectl put /t4/maps/hosts/"$(ident 11)" "$L3"
	ectl del /t4/maps/hosts/"$(ident 12)"
	ectl put /t4/maps/hosts/0:0:1:0 "$L2 csum-mode neutral-map-auto"
	ectl compact "$(store_revision)"
	ip -n "$r1" link set m0 up
	syncd_start "$r2" 2 /t4
	syncd_wait "$r1" "$r2"
	grep -q 'was compacted.*full resync' "$BATS_TEST_TMPDIR/syncd-$r1.log"
	[ "$(syncd_field "$r1" full_syncs)" -eq 2 ]
	map_equals_store "$r1" /t4
	map_equals_store "$r2" /t4 again
	grep -q "^map add hosts $(ident 11) $L3 " "$BATS_TEST_TMPDIR/map-$r1"
	wait "$p1" "$p2"
	grep -q ' 0% packet loss' "$BATS_TEST_TMPDIR/ping1"
	grep -q ' 0% packet loss' "$BATS_TEST_TMPDIR/ping2"
	[ "$(ilactl -n "$r1" -j map stats hosts | jq .misses)" -eq 0 ]

	# quorum lost: the maps keep forwarding, the status says stale
	etcd_member_kill 1
	etcd_member_kill 2
	wait_until 60 syncd_stale "$r1"
	wait_until 60 syncd_stale "$r2"
	[ "$(tcp_ask "$c1" "$x")" = s1 ]
	[ "$(tcp_ask "$c2" "$x")" = s1 ]
	[ "$(syncd_field "$r2" entries)" -eq 2000 ]
	ila-syncd status -n "$r1" | grep -q 'state .*(stale)'
	# quorum back: the daemons resume
	etcd_member_start 1
	etcd_member_start 2
	wait_until 120 etcd_healthy 3
	ectl put /t4/maps/hosts/"$(ident 13)" "$L3"
	syncd_wait "$r1" "$r2"
	map_equals_store "$r1" /t4
	map_equals_store "$r2" /t4 again
	grep -q "^map add hosts $(ident 13) $L3 " "$BATS_TEST_TMPDIR/map-$r2"
}

@test "cache mode: a miss goes via the router and installs the entry; moves, idle eviction, a miss storm within size and rate" {
	topo_cache
	mapping_lines 10000 | ila-syncd import --endpoints http://127.0.0.1:23791 --prefix /t5 --txn-ops 500
	ilactl -n "$r1" map create hosts
	ilactl -n "$r1" hook add sir prerouting src-pfx $SIR::/64 map hosts miss drop
	syncd_start "$r1" 1 /t5
	# the forwarding node: misses go on untranslated (to r1) and are notified
	ilactl -n "$f" map create hosts max-entries 1000
	ilactl -n "$f" hook add sir prerouting src-pfx $SIR::/64 map hosts miss notify
	syncd_start "$f" 3 /t5 --mode cache --cache-size 50 --fetch-rate 20 --idle-timeout 6 --sweep-interval 0.5
	syncd_wait "$r1" "$f"
	[ "$(syncd_field "$f" entries)" -eq 0 ]
	local x y
	x=$(ident 20) y=$(ident 22) # both on s1 (L1)
	srv_hold s1 "$x" "$y"
	# the first packet of x: a miss at f, translated by r1
	in_ns "$c" ping -q -c 1 -W 5 "$SIR::$x"
	# (shown if what follows fails: both maps' counters, the daemons' state)
	for ns in "$r1" "$f"; do
		ilactl -n "$ns" -j map stats hosts
		ila-syncd status -n "$ns"
		ilactl -n "$ns" hook list
	done
	[ "$(entry_hits "$r1" "$x")" -eq 1 ]
	wait_until 30 ilactl -n "$f" map get hosts "$x"
	[ "$(entry_locator "$f" "$x")" = "$L1" ]
	# the next ones are translated at f: r1 does not see them as SIR
	in_ns "$c" ping -q -c 3 -i 0.2 -W 5 "$SIR::$x"
	[ "$(entry_hits "$f" "$x")" -eq 3 ]
	[ "$(entry_hits "$r1" "$x")" -eq 1 ]
	[ "$(tcp_ask "$c" "$x")" = s1 ]
	# a burst of misses for one identifier: one fetch
	local fetches
	fetches=$(syncd_field "$f" cache.fetches)
	in_ns "$c" ping -q -c 20 -i 0.01 -W 5 "$SIR::$y" || true
	wait_until 30 ilactl -n "$f" map get hosts "$y"
	[ "$(syncd_field "$f" cache.fetches)" -eq $((fetches + 1)) ]
	# a move in the store updates the cached entry (and r1's), x in use
	in_ns "$c" ping -q -i 0.3 -W 5 "$SIR::$x" >/dev/null &
	local keep=$!
	ectl put "/t5/maps/hosts/$x" "$L3"
	wait_until 30 sh -c "[ \"\$(ilactl -n $f -j map get hosts $x | jq -r .locator)\" = $L3 ]"
	[ "$(tcp_ask "$c" "$x")" = s1 ]
	[ "$(l3_packets)" -gt 0 ]
	kill "$keep"
	# idle entries go (no traffic for --idle-timeout 6)
	wait_until 60 sh -c "! ilactl -n $f map get hosts $x && ! ilactl -n $f map get hosts $y"
	[ "$(syncd_field "$f" cache.evicted_idle)" -ge 2 ]
	# a miss storm for 10,000 identifiers: at most 50 entries, at most 20
	# fetches a second (+ a burst of 20), the rest counted as rate-limited
	fetches=$(syncd_field "$f" cache.fetches)
	local t0=$EPOCHREALTIME max=0 n
	udp_storm "$c" 0 10000 &
	local storm=$!
	while kill -0 "$storm" 2>/dev/null; do
		n=$(ilactl -n "$f" -j map stats hosts | jq .entries)
		[ "$n" -le 50 ]
		[ "$n" -gt "$max" ] && max=$n
	done
	wait "$storm"
	sleep 1
	local secs
	secs=$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%d", b - a + 1 }')
	n=$(($(syncd_field "$f" cache.fetches) - fetches))
	echo "# miss storm: $n fetches in ${secs} s, $(syncd_field "$f" cache.rate_limited) rate-limited, at most $max entries seen" >&3
	[ "$n" -ge 1 ]
	[ "$n" -le $((20 * secs + 20)) ]
	[ "$(syncd_field "$f" cache.rate_limited)" -ge 1 ]
	[ "$(ilactl -n "$f" -j map stats hosts | jq .entries)" -le 50 ]
	[ "$(syncd_field "$f" cache.evicted_size)" -ge 1 ]
	[ "$(syncd_field "$f" errors)" -eq 0 ]
	# what is cached is what the store says
	ilactl -n "$f" save hosts | grep '^map add ' | LC_ALL=C sort >"$BATS_TEST_TMPDIR/cached"
	store_lines /t5 >"$BATS_TEST_TMPDIR/store"
	[ "$(LC_ALL=C comm -23 "$BATS_TEST_TMPDIR/cached" "$BATS_TEST_TMPDIR/store" | wc -l)" -eq 0 ]
}

@test "bad data in the store: malformed keys and values skipped, counted and logged; the rest applies" {
	topo_routers
	ilactl -n "$r1" map create hosts
	# r2's map can hold 4 entries: the fifth is the kernel's error, for that key only
	ilactl -n "$r2" map create hosts max-entries 4
	local k=/t6/maps/hosts
	ectl put $k/0:0:0:1 "$L1"
	ectl put $k/0:0:0:2 "$L2 csum-mode neutral-map-auto"
	ectl put $k/0:0:0:3 "  $L3   csum-mode none  "
	ectl put $k/0:0:0:04 "$L1"              # identifier not canonical
	ectl put $k/::5 "$L1"                   # an address, not the key notation
	ectl put $k/0:0:0:6/x "$L1"             # one level too deep
	ectl put $k/0:0:0:7 "over there"        # not a locator
	ectl put $k/0:0:0:8 "$L1 csum-mode fast" # a mode no map takes
	ectl put $k/0:0:0:9 "$L1 extra"
	ectl put $k/0:0:0:a "2001:db8:1:0:1::"  # bits in the identifier half
	ectl put $k/0:0:0:b "$L2"
	ectl put $k/0:0:0:c "$L1"
	syncd_start "$r1" 1 /t6
	syncd_start "$r2" 2 /t6
	syncd_wait "$r1" "$r2"
	[ "$(map_lines "$r1" | cut -d' ' -f5- | xargs)" = \
		"$L1 csum-mode adjust-transport $L2 csum-mode neutral-map-auto $L3 csum-mode none $L2 csum-mode adjust-transport $L1 csum-mode adjust-transport" ]
	[ "$(syncd_field "$r1" bad_keys)" -eq 7 ]
	[ "$(syncd_field "$r1" errors)" -eq 0 ]
	local log=$BATS_TEST_TMPDIR/syncd-$r1.log
	for key in 0:0:0:04 ::5 0:0:0:6/x 0:0:0:7 0:0:0:8 0:0:0:9 0:0:0:a; do
		grep -q "skipping key $k/$key: " "$log"
	done
	grep -q 'skipping key .*0:0:0:04: identifier not in canonical notation (the key of this identifier is "0:0:0:4")' "$log"
	grep -q 'skipping key .*0:0:0:8: unknown csum-mode "fast"' "$log"
	# r2: four entries, one error naming the key that did not fit
	[ "$(syncd_field "$r2" entries)" -eq 4 ]
	[ "$(syncd_field "$r2" errors)" -eq 1 ]
	syncd_field "$r2" last_error | grep -q "^key $k/0:0:0:.*map is full"
	# through the watch: a bad key is counted and logged, a mapping whose
	# value turns bad leaves the map, the good ones still apply
	ectl put $k/0:0:0:0d "$L1"
	ectl put $k/0:0:0:b "$L2 csum-mode nope"
	ectl put $k/0:0:0:e "$L3"
	syncd_wait "$r1"
	[ "$(syncd_field "$r1" bad_keys)" -eq 9 ]
	grep -q "skipping key $k/0:0:0:0d: " "$log"
	! ilactl -n "$r1" map get hosts 0:0:0:b
	[ "$(entry_locator "$r1" 0:0:0:e)" = "$L3" ]
	[ "$(map_lines "$r1" | wc -l)" -eq 5 ]
}

@test "TLS with right and wrong certificates; a user without permission on the prefix; secrets never logged" {
	topo_routers
	local d=$BATS_TEST_TMPDIR/tls pw=$BATS_TEST_TMPDIR/pw
	tls_material "$d"
	etcd_tls_start "$d"
	wait_until 60 tctl "$d" endpoint health
	tctl "$d" put /t7/maps/hosts/0:0:0:1 "$L1"
	tctl "$d" put /t7/maps/hosts/0:0:0:2 "$L2"
	tctl "$d" put /t8/maps/hosts/0:0:0:3 "$L3"
	local tls="--endpoints https://10.99.N.1:23794 --cacert $d/ca.pem"
	# right certificate
	in_ns "$r1" ila-syncd ${tls/N/1} --cert "$d/client.pem" --key "$d/client.key" --prefix /t7 --map hosts --once
	[ "$(map_lines "$r1" | wc -l)" -eq 2 ]
	# a client certificate from another CA: refused, the map untouched
	run in_ns "$r1" ila-syncd ${tls/N/1} --cert "$d/wrong.pem" --key "$d/wrong.key" --prefix /t8 --map hosts --once
	echo "$output"
	[ "$status" -eq 1 ]
	[ "$(map_lines "$r1" | wc -l)" -eq 2 ]
	# the server's certificate checked against another CA: refused
	run in_ns "$r1" ila-syncd --endpoints https://10.99.1.1:23794 --cacert "$d/other.pem" --cert "$d/client.pem" \
		--key "$d/client.key" --prefix /t8 --map hosts --once
	echo "$output"
	[ "$status" -eq 1 ]
	[ "$(map_lines "$r1" | wc -l)" -eq 2 ]
	# no client certificate at all
	run in_ns "$r1" ila-syncd ${tls/N/1} --prefix /t8 --map hosts --once
	[ "$status" -eq 1 ]
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
	printf 's3cret-Pa55\n' >"$pw.ila"
	printf 'an0ther-Pa55\n' >"$pw.other"
	chmod 600 "$pw.ila" "$pw.other"
	local cert="--cert $d/client.pem --key $d/client.key"
	# the user with permission: full sync and watch
	in_ns "$r2" ila-syncd ${tls/N/2} $cert --user ila --password-file "$pw.ila" --prefix /t7 --map hosts \
		--progress-interval 0.5 -v >>"$BATS_TEST_TMPDIR/syncd-$r2.log" 2>&1 &
	wait_until 60 syncd_at "$r2" 1
	tctl "$d" --user root:rootpw put /t7/maps/hosts/0:0:0:4 "$L1" >/dev/null
	wait_until 30 ilactl -n "$r2" map get hosts 0:0:0:4
	[ "$(map_lines "$r2" | wc -l)" -eq 3 ]
	# the user without permission on /t7/: refused, said in the status, map untouched
	in_ns "$r1" ila-syncd ${tls/N/1} $cert --user other --password-file "$pw.other" --prefix /t7 --map hosts \
		--progress-interval 0.5 >>"$BATS_TEST_TMPDIR/syncd-$r1.log" 2>&1 &
	wait_until 60 sh -c "ila-syncd status -n $r1 --map hosts -j | jq -r .last_error | grep -q 'permission denied'"
	[ "$(syncd_field "$r1" stale)" = true ]
	[ "$(map_lines "$r1" | wc -l)" -eq 2 ]
	# a wrong password
	printf 'guess\n' >"$pw.bad"
	run in_ns "$r1" ila-syncd ${tls/N/1} $cert --user ila --password-file "$pw.bad" --prefix /t7 --map other --once
	echo "$output"
	[ "$status" -eq 1 ]
	[[ "$output" == *"authentication failed"* ]]
	# secrets: in no log line, in no argument list
	! grep -rq -e 's3cret-Pa55' -e 'an0ther-Pa55' -e guess "$BATS_TEST_TMPDIR"/syncd-*.log
	local p
	for p in $(pgrep -x ila-syncd); do ! grep -qa -e 's3cret-Pa55' -e 'an0ther-Pa55' "/proc/$p/cmdline"; done
	kill "$(cat "$d/etcd.pid")"
}

@test "operability: ilactl save into etcd and back, --once, --netns, status, config file, SIGHUP" {
	topo_routers
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
	in_ns "$r2" ila-syncd --endpoints http://10.99.2.1:23791 --prefix /ila --map hosts --once
	map_equals_store "$r2" /ila
	run ila-syncd --endpoints http://10.99.2.1:23791 --prefix /ila --map hosts --mode sideways
	[ "$status" -eq 2 ]
	[[ "$output" == *'--mode: unknown mode "sideways"'* ]]
	run ila-syncd --help
	[ "$status" -eq 0 ]
	[[ "$output" == *"PREFIX/maps/NAME/IDENTIFIER"* ]]
	# --netns: etcd reached from the store's namespace, the map in r1's;
	# status found there; a second daemon for the same map is refused
	ila-syncd --endpoints http://127.0.0.1:23792 --prefix /ila --map hosts \
		--netns "$r1" --progress-interval 0.5 >>"$BATS_TEST_TMPDIR/syncd-$r1.log" 2>&1 &
	local nsd=$!
	wait_until 60 syncd_at "$r1" 1
	map_equals_store "$r1" /ila again
	[ "$(ila-syncd status -n "$r1" --map hosts -j | jq -r .netns)" = "$r1" ]
	! ila-syncd status
	run ila-syncd --endpoints http://127.0.0.1:23792 --prefix /ila --map hosts --netns "$r1"
	[ "$status" -eq 1 ]
	[[ "$output" == *"another ila-syncd keeps map hosts in this network namespace"* ]]
	# status: text and JSON of every daemon of the namespace
	ila-syncd status -n "$r1" | grep -q '^hosts: full mode, prefix /ila, netns '"$r1"
	ila-syncd status -n "$r1" -j | jq -e 'length == 1 and .[0].map == "hosts" and .[0].schema == 1'
	s=$(ila-syncd status -n "$r1" --map hosts -j)
	for f in revision store_revision lag_revisions lag_seconds entries events_applied bad_keys errors \
		full_syncs last_error stale state endpoint; do
		jq -e "has(\"$f\")" <<<"$s"
	done
	[ "$(jq .entries <<<"$s")" -eq 2 ]
	[ "$(jq .lag_revisions <<<"$s")" -eq 0 ]
	# SIGHUP: a full resync
	kill -HUP "$nsd"
	wait_until 60 sh -c "[ \"\$(ila-syncd status -n $r1 --map hosts -j | jq .full_syncs)\" -eq 2 ]"
	# a configuration file (as the systemd unit ila-syncd@NAME uses)
	cat >"$BATS_TEST_TMPDIR/hosts.conf" <<EOF2
# /etc/ila-syncd/hosts.conf
endpoints http://10.99.2.1:23791,http://10.99.2.1:23792
prefix /ila
map hosts
mode full
EOF2
	ilactl -n "$r2" map flush hosts
	in_ns "$r2" ila-syncd --config "$BATS_TEST_TMPDIR/hosts.conf" --once
	map_equals_store "$r2" /ila again
}
