#!/usr/bin/env bats
# ila_stress: a seeded, syzkaller-style random sequence of ILA_MAP and
# ILA_HOOK generic netlink requests (tests/stress/ila_stress.cpp: valid
# and malformed attributes, bad headers, truncated messages, batches,
# dumps left running or closed, maps swapped and destroyed under dumps),
# from several threads in several network namespaces, one of them owned by
# an unprivileged user namespace, while packets go through -j ILA --map
# rules and hooks. Every answer must be a documented one, a model of the
# single-threaded part must match the kernel (and ilactl), and at the end
# the modules must unload and the kernel log must be clean.
#
#   client c0 -------------- r0 router r1 -------------- s0 server
#   fd00:1::2/64     fd00:1::1                 fd00:2::1      fd00:2::2/64
#   ila_stress --traffic   mangle PREROUTING                  raw PREROUTING
#    to 2001:db8:0:3::N     -d 2001:db8:0:3::/64 --map c0     -d 3333:0:0:4::/64
#    and 2001:db8:0:4::N    -d 2001:db8:0:4::/64 --map fixed  (counts what the
#   mangle OUTPUT            (fixed: N -> 3333:0:0:4::N)       fixed map made)
#    -d ...:3::/64 --map c1  + rules --map c2/c3 added and removed all along
#   ila_stress (client)     ila_stress (router), and as uid 65534 (--role unpriv)
#
#   spare:  ila_stress            userns: uid 65534, unshare -Ur -n: ila_stress
#
# The generators' hooks never overlap the topology, neighbour discovery or
# the fixed map's addresses (--avoid), so the fixed rule's traffic is
# counted whatever they do. STRESS_SEED=N replays a run (every generator
# derives its threads' seeds from it), STRESS_SECS its length (default 60;
# make stress: 600).

load ../bats/helpers

# Our modules, in unload order (users first); loaded in the reverse order.
STRESS_MODULES="xt_ILA nf_ila"

AVOID=fd00:1::/64,fd00:2::/64,fe80::/10,ff00::/8,2001:db8:0:4::/64,3333:0:0:4::/64
GATE_RE='BUG:|BUG [^ ]+ \((Not tainted|Tainted)|WARNING:|Oops|general protection|refcount_t:|waiting for .* to become free|UBSAN:|kernel BUG at'

# replay hint for failure messages
seed_hint() { echo "replay: STRESS_SEED=$STRESS_SEED STRESS_SECS=$STRESS_SECS make check SUITE=ila_stress (or make stress)"; }

# run_bg NAME CMD... : run the command CMD in the background, output in
# $D/NAME.out, exit status in $D/NAME.rc; one that hangs is killed
run_bg() {
	local name=$1
	shift
	(
		timeout -k 20 $((STRESS_SECS * 3 + 300)) "$@" >"$D/$name.out" 2>&1 &
		echo $! >>"$D/pids"
		# (bats runs this under errexit: a bare failing wait would end
		# the subshell before the status is written)
		local rc=0
		wait $! || rc=$?
		echo $rc >"$D/$name.rc"
	) &
}

# delete_netns : the suite's netns, their processes killed first
delete_netns() {
	local ns pids
	for ns in $(cat "$D/netns" 2>/dev/null); do
		pids=$(ip netns pids "$ns" 2>/dev/null)
		[ -z "$pids" ] || kill -9 $pids 2>/dev/null
		ip netns del "$ns" 2>/dev/null
	done
	: >"$D/netns"
}

# snapshot DIR : what ilactl shows of the model's names ("m*") in this netns
snapshot() {
	local m
	ilactl map list | grep '^m' | sed -E 's/ lookups [0-9]+ hits [0-9]+ misses [0-9]+//' |
		LC_ALL=C sort >"$1/ilactl.maps"
	for m in $(awk '{print $1}' "$1/maps"); do
		ilactl map show "$m" | LC_ALL=C sort >"$1/ilactl.entries.$m"
	done
	ilactl -j hook list >"$1/ilactl.hooks.json"
}

# in_userns DIR : the netns of an unprivileged user namespace: generator,
# then the snapshot (the netns goes with the process)
in_userns() {
	ip link set lo up
	"$STRESS_BIN" --name userns --secs "$STRESS_SECS" --threads 1 --unpriv-threads 1 --avoid "$AVOID" \
		--expect-out "$1" >"$1.out" 2>&1
	echo $? >"$1.rc"
	snapshot "$1"
}

# stuck_report : where every ila_stress, ilactl and ip6tables process is
# (state, kernel wait channel and stack), for a run that does not end
stuck_report() {
	local p t
	for p in $(pgrep -x 'ila_stress|ilactl|ip6tables.*|xtables.*|bash'); do
		echo "# pid $p: $(tr '\0' ' ' </proc/$p/cmdline 2>/dev/null | cut -c1-120)"
		echo "#   state $(awk '/^State:/ {print $2}' /proc/$p/status 2>/dev/null) wchan $(cat /proc/$p/wchan 2>/dev/null)"
		for t in /proc/$p/task/*; do
			sed "s|^|#   ${t##*/}: |" "$t/stack" 2>/dev/null | head -n 12
		done
	done
}

# toggle_rules : -j ILA --map c2 / c3 rules (both backends) added and
# removed in the router while the generators create and destroy the maps
toggle_rules() {
	local i=0 ipt m added=0
	while [ ! -e "$D/stop" ]; do
		m=c$((2 + i % 2))
		ipt=ip6tables-legacy
		[ $((i % 3)) = 0 ] && ipt=ip6tables-nft
		if in_ns "$router" $ipt -t mangle -A PREROUTING -d 2001:db8:0:3::/64 -j ILA --map $m --miss drop,notify 2>/dev/null; then
			added=$((added + 1))
			in_ns "$router" $ipt -t mangle -D PREROUTING -d 2001:db8:0:3::/64 -j ILA --map $m --miss drop,notify
		fi
		i=$((i + 1))
	done
	echo "$added of $i rules added and removed"
}

setup_file() {
	local m i
	export STRESS_SEED=${STRESS_SEED:-$(($(od -An -N4 -tu4 /dev/urandom) % 1000000000))}
	export STRESS_SECS=${STRESS_SECS:-60}
	export STRESS_BIN=$PROJECT_ROOT/build/tests/ila_stress
	[ -x "$STRESS_BIN" ] || { echo "$STRESS_BIN not built (make check and make stress build it)"; return 1; }
	echo "# ila_stress: seed $STRESS_SEED, $STRESS_SECS s ($(seed_hint))" >&3
	D=$(mktemp -d /tmp/ila_stress.XXXXXX)
	export D
	chmod 1777 "$D"
	for m in $(echo $STRESS_MODULES | tr ' ' '\n' | tac); do
		load_module "$m"
	done
	export DMESG_START=$(dmesg | wc -l)
	echo "# T $SECONDS modules loaded" >&3

	ns_create client router server spare
	echo "$client $router $server $spare" >"$D/netns"
	veth_link "$client" c0 "$router" r0
	veth_link "$router" r1 "$server" s0
	addr "$client" c0 fd00:1::2/64
	addr "$router" r0 fd00:1::1/64
	addr "$router" r1 fd00:2::1/64
	addr "$server" s0 fd00:2::2/64
	ip -n "$client" -6 route add default via fd00:1::1
	ip -n "$router" -6 route add 2001:db8::/32 via fd00:2::2
	ip -n "$router" -6 route add 3333::/16 via fd00:2::2
	ip -n "$server" -6 route add default via fd00:2::1
	forwarding "$router"

	# the fixed map: identifiers 1..64 -> locator 3333:0:0:4, no
	# generator touches it
	in_ns "$router" ilactl map create fixed
	for i in $(seq 1 64); do printf 'add fixed 0:0:0:%x 3333:0:0:4\n' "$i"; done | in_ns "$router" ilactl -b -
	in_ns "$router" ilactl map create c0 notify-miss
	in_ns "$client" ilactl map create c1
	in_ns "$router" ip6tables-legacy -t mangle -A PREROUTING -d 2001:db8:0:4::/64 -j ILA --map fixed
	in_ns "$router" ip6tables-nft -t mangle -A PREROUTING -d 2001:db8:0:3::/64 -j ILA --map c0 --miss notify
	in_ns "$client" ip6tables-legacy -t mangle -A OUTPUT -d 2001:db8:0:3::/64 -j ILA --map c1
	in_ns "$server" ip6tables-legacy -t raw -A PREROUTING -d 3333:0:0:4::/64

	mkdir -m 777 "$D/router" "$D/client" "$D/spare" "$D/userns"
	echo "# T $SECONDS topology" >&3
	: >"$D/pids"
	toggle_rules >"$D/toggle.out" 2>&1 &
	export AVOID
	# a live view from the host (the results directory is shared): what
	# runs, where it waits, what each generator said last
	if [ -n "${VM_RESULTS:-}" ]; then
		(while [ ! -e "$D/stop" ]; do
			{
				echo "== $(cat /proc/uptime) load $(cat /proc/loadavg)"
				ps -eo pid,ppid,stat,pcpu,wchan:24,args --sort=-pcpu | cut -c1-160
				ls "$D"
				for f in "$D"/*.out; do echo "-- $f"; tail -n 3 "$f"; done
			} >"$VM_RESULTS/stress-watch.tmp" 2>&1
			mv "$VM_RESULTS/stress-watch.tmp" "$VM_RESULTS/stress-watch.txt"
			mkdir -p "$VM_RESULTS/stress-out" && cp "$D"/*.out "$VM_RESULTS/stress-out/" 2>/dev/null
			sleep 20
		done) &
		echo $! >"$D/watch.pid"
	fi
	run_bg traffic ip netns exec "$client" "$STRESS_BIN" --traffic --sir 2001:db8:0:3:: --sir 2001:db8:0:4:: \
		--server fd00:2::2 --src fd00:1::2 --secs "$STRESS_SECS"
	run_bg router ip netns exec "$router" "$STRESS_BIN" --name router --secs "$STRESS_SECS" --threads 2 \
		--unpriv-threads 1 --avoid "$AVOID" --expect-out "$D/router"
	run_bg nobody ip netns exec "$router" setpriv --reuid=65534 --regid=65534 --clear-groups "$STRESS_BIN" \
		--name router-nobody --role unpriv --secs "$STRESS_SECS" --threads 1 --unpriv-threads 0
	run_bg client ip netns exec "$client" "$STRESS_BIN" --name client --secs "$STRESS_SECS" --threads 1 \
		--unpriv-threads 1 --no-listener --avoid "$AVOID" --expect-out "$D/client"
	run_bg spare ip netns exec "$spare" "$STRESS_BIN" --name spare --secs "$STRESS_SECS" --threads 1 \
		--unpriv-threads 0 --avoid "$AVOID" --expect-out "$D/spare"
	run_bg userns-shell setpriv --reuid=65534 --regid=65534 --clear-groups unshare -Ur -n \
		bash -c "$(declare -f in_userns snapshot); in_userns $D/userns"
	# every generator and the traffic end by themselves
	for i in traffic router nobody client spare userns-shell; do
		if wait_until $((STRESS_SECS * 3 + 400)) test -e "$D/$i.rc"; then
			echo "# T $SECONDS $i exited $(cat "$D/$i.rc")" >&3
		else
			echo "# T $SECONDS $i still running:" >&3
			stuck_report >&3
		fi
	done
	touch "$D/stop"
	echo "# T $SECONDS generators done" >&3
	# the rule toggling ends its round; the live view need not
	[ ! -e "$D/watch.pid" ] || kill "$(cat "$D/watch.pid")" 2>/dev/null || true
	wait
	for i in router client spare; do
		in_ns "${!i}" bash -c "$(declare -f snapshot); snapshot $D/$i"
	done
	echo "# T $SECONDS snapshots" >&3
	# the generators' full output next to the TAP (make check / make stress)
	if [ -n "${VM_RESULTS:-}" ]; then
		mkdir -p "$VM_RESULTS/stress-out" && cp "$D"/*.out "$VM_RESULTS/stress-out/" 2>/dev/null || true
	fi
	for i in router client spare nobody userns traffic; do echo "# $i: $(sed -n 's/.*\]: T \(.*\)/\1/p' "$D/$i.out" | xargs)"; done >&3
}

teardown_file() {
	local pid m
	touch "$D/stop"
	for pid in $(cat "$D/pids" 2>/dev/null); do
		kill "$pid" 2>/dev/null
	done
	wait
	delete_netns
	cleanup_all
	for m in $STRESS_MODULES; do
		unload_module "$m"
	done
	rm -rf "$D"
}

# ok_run NAME : the generator NAME exited 0 (its failures otherwise)
ok_run() {
	local rc
	rc=$(cat "$D/$1.rc" 2>/dev/null || echo none)
	grep -E '^[a-z-]+: (ok|[0-9]+ FAILURES) ' "$D/$1.out" >&3 || true
	if [ "$rc" != 0 ]; then
		echo "ila_stress $1 exited $rc ($(seed_hint)):"
		grep -E '^FAIL ' "$D/$1.out" | head -n 20
		tail -n 40 "$D/$1.out" "$D/$1-shell.out" 2>/dev/null
		return 1
	fi
}

# count NAME LABEL ERR : how many answers of LABEL had ERR (ok, EPERM...)
count() {
	sed -n "s/^  $2: .*\b$3 \([0-9]*\).*/\1/p" "$D/$1.out" | head -n 1 | grep . || echo 0
}

@test "stress: every answer was a documented one, and the model matched the kernel (router, client, spare netns)" {
	ok_run router
	ok_run client
	ok_run spare
	grep -h -E 'kernel state equals the model|model.s NEWHOOK' "$D/router.out" "$D/client.out" "$D/spare.out" | sed 's/^/# /' >&3
	for n in router client spare; do
		grep -q 'kernel state equals the model' "$D/$n.out"
	done
	# the run did exercise the kernel: successes and refusals of every kind
	[ "$(count router 'ILA_MAP NEWENTRY' ok)" -gt 100 ]
	[ "$(count router 'ILA_HOOK NEWHOOK' ok)" -gt 0 ]
	[ "$(count router 'ILA_MAP NEWENTRY' EINVAL)" -gt 0 ]
	[ "$(count router 'ILA_MAP GETENTRY dump' ok)" -gt 0 ]
}

@test "stress: uid 65534 got EPERM for every write in a root-owned netns" {
	ok_run nobody
	grep -q 'unprivileged (uid 65534' "$D/nobody.out"
	[ "$(count nobody 'ILA_MAP NEWENTRY' EPERM)" -gt 0 ]
	[ "$(count nobody 'ILA_HOOK NEWHOOK' EPERM)" -gt 0 ]
	# and never succeeded in one
	run grep -E '^  ILA_(MAP (NEW|DEL)[A-Z]*|MAP (FLUSH|SWAP|RESET_COUNTERS)|HOOK (NEW|DEL)HOOK): ok' "$D/nobody.out"
	[ "$status" -ne 0 ]
}

@test "stress: root of an unprivileged user namespace writes in its netns; a thread without capabilities there gets EPERM" {
	ok_run userns
	[ "$(count userns 'ILA_MAP NEWMAP' ok)" -gt 0 ]
	[ "$(count userns 'ILA_HOOK NEWHOOK' ok)" -gt 0 ]
	grep -q 'unprivileged (uid 0 without capabilities)' "$D/userns.out"
	[ "$(count userns 'ILA_MAP NEWENTRY' EPERM)" -gt 0 ]
}

@test "stress: ilactl map list, map show and hook list agree with the model in every netns" {
	local n m
	for n in router client spare userns; do
		[ -s "$D/$n/maps" ] || { echo "$n: no model state written"; return 1; }
		diff -u "$D/$n/maps" "$D/$n/ilactl.maps"
		for m in $(awk '{print $1}' "$D/$n/maps"); do
			diff -u "$D/$n/entries.$m" "$D/$n/ilactl.entries.$m"
		done
		diff -u "$D/$n/hooks" <(jq -r '.[] | select(.name | startswith("m")) |
			"\(.name) \(.hook) \(.priority) \(.map // "static")"' "$D/$n/ilactl.hooks.json" | LC_ALL=C sort)
		echo "# $n: $(wc -l <"$D/$n/maps") maps, $(wc -l <"$D/$n/hooks") hooks as modelled" >&3
	done
}

@test "stress: packets went through the -j ILA --map rules while the maps churned" {
	ok_run traffic
	cat "$D/traffic.out" "$D/toggle.out" | sed 's/^/# /' >&3
	# the fixed map's rule translated, and its packets reached the server
	# with the locator
	local pkts hits srv
	pkts=$(in_ns "$router" ip6tables-legacy -t mangle -L PREROUTING -v -x -n | awk '/ILA/ {print $1; exit}')
	hits=$(in_ns "$router" ilactl -j map stats fixed | jq -r .hits)
	srv=$(in_ns "$server" ip6tables-legacy -t raw -L PREROUTING -v -x -n | awk '/3333:0:0:4::\/64/ {print $1; exit}')
	echo "# fixed rule $pkts packets, map hits $hits, at the server $srv; rule --map c0" \
		"$(in_ns "$router" ip6tables-nft -t mangle -L PREROUTING -v -x -n | awk '/ILA/ {print $1; exit}') packets" >&3
	[ "$pkts" -gt 0 ] && [ "$hits" -gt 0 ] && [ "$srv" -gt 0 ]
}

@test "stress: the modules unload once the rules and the generators' sockets are gone" {
	local m keep=$((STRESS_SEED % 2))
	in_ns "$router" ip6tables-legacy -t mangle -F
	in_ns "$router" ip6tables-nft -t mangle -F
	in_ns "$client" ip6tables-legacy -t mangle -F
	if [ "$keep" = 1 ]; then
		# the netns live on with their maps and hooks: module exit
		# removes them
		echo "# modules unloaded with the netns and their maps and hooks in place" >&3
	else
		echo "# netns deleted first, then the modules unloaded" >&3
		delete_netns
	fi
	for m in $STRESS_MODULES; do
		unload_module "$m" || { echo "rmmod $m failed ($(seed_hint))"; lsmod; return 1; }
		[ ! -e "/sys/module/$m" ]
	done
	delete_netns
}

@test "stress: the kernel log is clean (no oops, WARN, refcount or leak message)" {
	local bad
	bad=$(dmesg | tail -n +$((DMESG_START + 1)) | grep -E "$GATE_RE" || true)
	if [ -n "$bad" ]; then
		echo "kernel log ($(seed_hint)):"
		dmesg | tail -n +$((DMESG_START + 1)) | grep -E -B 2 -A 20 "$GATE_RE" | head -n 120
		return 1
	fi
}
