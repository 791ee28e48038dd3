#!/bin/bash
# bench/fleet.sh: the "fleet" table of make bench (ila-syncd and etcd).
#
#   bench/fleet.sh host OUT KERNEL TIMEOUT   from bench/run: inputs, VM, report
#   bench/fleet.sh guest                     inside the benchmark VM
#
# Measured inside one benchmark VM (tests/vm/run --bench: one vCPU, QEMU
# icount: guest time = instructions, 1 ns each), so every figure is in
# guest time and does not depend on the host's load. See bench/README.md.
#
#  1. Initial sync of 1,000,000 mappings: `ila-syncd --once` (full mode,
#     from a single etcd member that holds them: restored from a snapshot
#     made on the host) against `ilactl -b` loading the same entries from
#     a file; interleaved rounds, medians.
#  2. Memory: RSS of a cache-mode daemon holding 1,000,000 cached entries
#     (adopted from the map at start, checked against the store) minus
#     that of one with an empty cache; peak RSS of a full-mode daemon
#     syncing 1,000,000.
#  3. Propagation: a 3-member cluster, two routers (netns) each kept by a
#     full-mode ila-syncd; ila_syncd_bench moves identifiers at 1,000 a
#     second and times each put until both kernel maps report it: one
#     move per put, then ten moves per transaction (--batch 10).
#  4. Events applied per second: a daemon stopped (SIGSTOP) while 100,000
#     puts are written, then continued: backlog / time to catch up.
#  5. The initial sync of 1. with etcd on a CPU of its own, as deployed
#     (etcd members run on other machines): a second VM with two vCPUs in
#     real time (not instruction-counting: noisier, ratios only), etcd
#     pinned to one, ila-syncd or ilactl to the other; interleaved rounds,
#     medians (BENCH_FLEET_TWO_CPUS=0 skips it; kernels that boot with
#     two host threads only: 6.12 runs its vCPUs on one).
set -u

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
N=${BENCH_FLEET_N:-1000000}

# ---- host side -------------------------------------------------------------------

# fleet_inputs OUT N : OUT/fleet-N.snap (an etcd snapshot holding N mappings
# under /b/maps/hosts/) and OUT/fleet-N.batch (the same as ilactl -b lines),
# made once on the host with a temporary etcd member.
fleet_inputs() {
	local out=$1 n=$2 tmp pid i
	[ -s "$out/fleet-$n.snap" ] && [ -s "$out/fleet-$n.batch" ] && return 0
	tmp=$(mktemp -d "$out/fleet-etcd.XXXXXX")
	awk -v n="$n" 'BEGIN {
		print "map create hosts"
		for (i = 0; i < n; i++)
			printf "map add hosts 0:0:%x:%x 2001:db8:%x:0 csum-mode %s\n", int(i / 65536), i % 65536,
				i % 3 + 1, i % 3 == 1 ? "neutral-map-auto" : "adjust-transport"
	}' >"$out/fleet-$n.batch.tmp"
	etcd --name h --data-dir "$tmp/data" --listen-client-urls http://127.0.0.1:24479 \
		--advertise-client-urls http://127.0.0.1:24479 --listen-peer-urls http://127.0.0.1:24480 \
		--initial-advertise-peer-urls http://127.0.0.1:24480 --initial-cluster h=http://127.0.0.1:24480 \
		--max-txn-ops 1024 --quota-backend-bytes 8589934592 --log-level error >"$tmp/etcd.log" 2>&1 &
	pid=$!
	for ((i = 0; i < 100; i++)); do
		ETCDCTL_API=3 etcdctl --endpoints 127.0.0.1:24479 endpoint health >/dev/null 2>&1 && break
		sleep 0.2
	done
	"$top/build/bin/ila-syncd" import --endpoints http://127.0.0.1:24479 --prefix /b --txn-ops 1024 \
		"$out/fleet-$n.batch.tmp" &&
		ETCDCTL_API=3 etcdctl --endpoints 127.0.0.1:24479 snapshot save "$out/fleet-$n.snap.tmp" >/dev/null
	local rc=$?
	kill "$pid"
	wait "$pid" 2>/dev/null
	rm -rf "$tmp"
	[ $rc = 0 ] || { echo "bench: fleet: making the etcd snapshot failed" >&2; return 1; }
	mv "$out/fleet-$n.snap.tmp" "$out/fleet-$n.snap"
	mv "$out/fleet-$n.batch.tmp" "$out/fleet-$n.batch"
}

if [ "${1:-}" = host ]; then
	out=$2 kernel=$3 timeout_s=$4
	res=$out/vm-fleet
	rm -rf "$res" && mkdir -p "$res"
	[ -x "$top/build/bin/ila-syncd" ] && [ -x "$top/build/bin/ila_syncd_bench" ] ||
		{ echo "bench: fleet: ila-syncd not built (./configure without --disable-syncd, make)" >&2; exit 1; }
	command -v etcd >/dev/null || { echo "bench: fleet: no etcd (apt-get install etcd-server etcd-client)" >&2; exit 1; }
	echo "bench: fleet: inputs (etcd snapshot of $N mappings, once)" >&2
	fleet_inputs "$out" "$N" || exit 1
	rc=0
	if [ "${BENCH_FLEET_ONLY:-}" = two-cpus ]; then
		: >"$out/fleet.md"
		: >"$out/fleet.csv"
	else
		echo "bench: fleet: booting the benchmark VM ($(date +%H:%M:%S))" >&2
		"$top/tests/vm/run" --bench --quiet ${kernel:+--kernel "$kernel"} --mem 4096 --timeout "$timeout_s" \
			--results "$res" --env "BENCH_FLEET_N=$N" --env "BENCH_OUT=$out" --env "BENCH_ROUNDS=${BENCH_ROUNDS:-3}" \
			--env "BENCH_FLEET_PERF=${BENCH_FLEET_PERF:-}" --env "BENCH_FLEET_ONLY=${BENCH_FLEET_ONLY:-}" \
			-- "$top/bench/fleet.sh" guest || rc=$?
		if [ ! -s "$res/fleet.md" ]; then
			echo "bench: fleet: no results (VM exit status $rc; log: $res/fleet.log)" >&2
			exit 1
		fi
		cp "$res/fleet.csv" "$res/fleet.md" "$out/"
	fi
	# 5. etcd on a CPU of its own: two vCPUs in real time (6.12 oopses
	# under multi-threaded TCG, tests/vm/run gives it one host thread)
	res2=$out/vm-fleet-2cpu
	rm -rf "$res2" && mkdir -p "$res2"
	# (the bench kernel, else another one the modules are built for)
	mt_ok() { [ "${1%%.*}" -lt 6 ] || { [ "${1%%.*}" = 6 ] && [ "$(cut -d. -f2 <<<"$1")" -lt 12 ]; }; }
	k2=
	for k in ${kernel:-} $(ls "$top/build/kmod" 2>/dev/null); do
		if mt_ok "$k" && [ -e "/boot/vmlinuz-$k" ]; then
			k2=$k
			break
		fi
	done
	if [ "${BENCH_FLEET_TWO_CPUS:-1}" = 0 ]; then
		:
	elif [ -z "$k2" ]; then
		echo "bench: fleet: no two-CPU sync rows: no kernel below 6.12 built (6.12's vCPUs share one host thread)" >&2
	else
		echo "bench: fleet: booting a two-vCPU VM ($k2), etcd on its own CPU ($(date +%H:%M:%S))" >&2
		"$top/tests/vm/run" --quiet --kernel "$k2" --cpus 2 --mem 4096 --timeout "$timeout_s" \
			--results "$res2" --env "BENCH_FLEET_N=$N" --env "BENCH_OUT=$out" \
			--env "BENCH_ROUNDS=${BENCH_FLEET_TWO_CPUS_ROUNDS:-5}" --env "BENCH_FLEET_OTHER_SYNCD=${BENCH_FLEET_OTHER_SYNCD:-}" \
			-- "$top/bench/fleet.sh" guest-2cpu || rc=$?
		if [ -s "$res2/fleet.md" ]; then
			{ echo; cat "$res2/fleet.md"; } >>"$out/fleet.md"
			sed 's/^fleet,/fleet_2cpu,/' "$res2/fleet.csv" >>"$out/fleet.csv"
		else
			echo "bench: fleet: no two-CPU results (log: $res2/fleet.log)" >&2
			rc=1
		fi
	fi
	cat "$out/fleet.md"
	echo
	exit "$rc"
fi

case "${1:-}" in
guest | guest-2cpu) ;;
*) sed -n '2,6p' "$0" | sed 's/^# \{0,1\}//'; exit 2 ;;
esac

# ---- guest side --------------------------------------------------------------------

export PATH="$top/build/bin:$PATH"
KMOD_DIR=$top/build/kmod/$(uname -r)
. "$top/tests/lib/kmod.bash"
R=${VM_RESULTS:?runs in tests/vm/run}
CSV=$R/fleet.csv LOG=$R/fleet.log
: >"$CSV"
ROUNDS=${BENCH_ROUNDS:-3}
W=/tmp/fleet
mkdir -p $W

log() { echo "fleet: $*" | tee -a "$LOG" >&2; }
now() { echo "$EPOCHREALTIME"; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", b - a }'; }
csv() { echo "fleet,,$1,$2,$3" >>"$CSV"; }
median() { tr ' ' '\n' | grep . | sort -g | awk '{ a[NR] = $1 } END { print NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
rss_kb() { awk '/^VmRSS/ { print $2 }' "/proc/$1/status"; }
hwm_kb() { awk '/^VmHWM/ { print $2 }' "/proc/$1/status"; }
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; } # user + system, 1/100 s
wait_for() { # wait_for SECONDS CMD... : poll CMD every 0.2 s
	local t=$1 i
	shift
	for ((i = 0; i < t * 5; i++)); do "$@" >/dev/null 2>&1 && return 0; sleep 0.2; done
	log "timed out: $*"
	return 1
}
status_of() { ila-syncd status -n "$1" --map "$2" -j; }
entries_at() { [ "$(ilactl -n "$1" -j map stats "$2" | jq .entries)" -ge "$3" ]; }
# (jq -e succeeds on no input: a daemon not answering yet is not watching)
watching_at() {
	local s
	s=$(status_of "$1" "$2") && [ -n "$s" ] && jq -e --argjson r "$3" '.state == "watching" and .revision >= $r' <<<"$s"
}

# etcd_up NAME CLIENT PEER CLUSTER [restore SNAP] : a member in the VM's netns
etcd_up() {
	local name=$1 client=$2 peer=$3 cluster=$4
	if [ "${5:-}" = restore ]; then
		etcdctl snapshot restore "$6" --data-dir "$W/$name" --name "$name" --initial-cluster "$cluster" \
			--initial-advertise-peer-urls "http://127.0.0.1:$peer" >>"$LOG" 2>&1 || return 1
	fi
	etcd --name "$name" --data-dir "$W/$name" --listen-client-urls "http://127.0.0.1:$client" \
		--advertise-client-urls "http://127.0.0.1:$client" --listen-peer-urls "http://127.0.0.1:$peer" \
		--initial-advertise-peer-urls "http://127.0.0.1:$peer" --initial-cluster "$cluster" \
		--initial-cluster-token bench --quota-backend-bytes 8589934592 --log-level error >>"$LOG" 2>&1 &
	echo $! >"$W/$name.pid"
}

load_module nf_ila || { log "nf_ila not built"; exit 1; }
ip netns add bn
ip -n bn link set lo up
log "kernel $(uname -r), $N mappings, $ROUNDS rounds"

# ---- 5. (its own VM) the initial sync with etcd on a CPU of its own -------------------
if [ "$1" = guest-2cpu ]; then
	[ "$(nproc)" -ge 2 ] || { log "two-CPU rows: $(nproc) CPU"; exit 1; }
	etcdctl snapshot restore "$BENCH_OUT/fleet-$N.snap" --data-dir "$W/s1" --name s1 \
		--initial-cluster s1=http://127.0.0.1:24380 --initial-advertise-peer-urls http://127.0.0.1:24380 >>"$LOG" 2>&1 ||
		exit 1
	taskset -c 1 etcd --name s1 --data-dir "$W/s1" --listen-client-urls http://127.0.0.1:24379 \
		--advertise-client-urls http://127.0.0.1:24379 --listen-peer-urls http://127.0.0.1:24380 \
		--initial-advertise-peer-urls http://127.0.0.1:24380 --initial-cluster s1=http://127.0.0.1:24380 \
		--quota-backend-bytes 8589934592 --log-level error >>"$LOG" 2>&1 &
	epid=$!
	wait_for 300 etcdctl --endpoints 127.0.0.1:24379 endpoint health || exit 1
	TIMEFORMAT='%R %U %S'
	ratios=() bsecs=() ssecs=() ecpus=()
	for ((r = 1; r <= ROUNDS; r++)); do
		{ time taskset -c 0 ilactl -n bn -b "$BENCH_OUT/fleet-$N.batch" >/dev/null 2>&1; } 2>$W/batch.time
		read -r b _ <$W/batch.time
		ilactl -n bn map destroy hosts
		e0=$(cpu_ticks $epid)
		{ time taskset -c 0 ila-syncd --once --netns bn --endpoints http://127.0.0.1:24379 --prefix /b \
			--map hosts >$W/once.out 2>&1; } 2>$W/once.time
		e1=$(cpu_ticks $epid)
		read -r s _ <$W/once.time
		entries=$(sed -n 's/.*: \([0-9]*\) entries of .*/\1/p' $W/once.out)
		[ "$entries" = "$N" ] || log "two CPUs, round $r: ila-syncd loaded ${entries:-?} entries, not $N"
		ilactl -n bn map destroy hosts
		# BENCH_FLEET_OTHER_SYNCD=BINARY: another build of ila-syncd in the
		# same rounds (a diagnostic: logged, not in the table)
		if [ -n "${BENCH_FLEET_OTHER_SYNCD:-}" ]; then
			{ time taskset -c 0 "$BENCH_FLEET_OTHER_SYNCD" --once --netns bn --endpoints http://127.0.0.1:24379 \
				--prefix /b --map hosts >$W/other.out 2>&1; } 2>$W/other.time
			read -r o _ <$W/other.time
			ilactl -n bn map destroy hosts
			log "two CPUs, round $r: $BENCH_FLEET_OTHER_SYNCD --once $o s ($(awk -v b="$b" -v s="$o" 'BEGIN { printf "%.1f", 100 * b / s }')% of ilactl -b)"
		fi
		ec=$(awk -v a="$e0" -v b="$e1" 'BEGIN { printf "%.2f", (b - a) / 100 }')
		pct=$(awk -v b="$b" -v s="$s" 'BEGIN { printf "%.1f", 100 * b / s }')
		log "two CPUs, round $r: ilactl -b $b s, ila-syncd --once $s s (etcd CPU $ec s): $pct%"
		csv ilactl_b_s "$r" "$b"
		csv sync_s "$r" "$s"
		csv sync_cpu_etcd_s "$r" "$ec"
		csv sync_pct_of_ilactl_b "$r" "$pct"
		ratios+=("$pct") bsecs+=("$b") ssecs+=("$s") ecpus+=("$ec")
	done
	kill $epid
	wait 2>/dev/null
	B=$(echo "${bsecs[*]}" | median) S=$(echo "${ssecs[*]}" | median)
	{
		echo "**ILA fleet, initial sync with etcd on a CPU of its own** (two vCPUs, real time: etcd pinned to one," \
			"ila-syncd or \`ilactl -b\` to the other; medians of $ROUNDS interleaved rounds)"
		echo
		echo "| measurement | value |"
		echo "|---|---:|"
		echo "| initial sync of $N mappings, \`ila-syncd --once\` | $S s, $(awk -v n="$N" -v s="$S" 'BEGIN { printf "%.0f", n / s }') entries/s |"
		echo "| \`ilactl -b FILE\` | $B s, $(awk -v n="$N" -v s="$B" 'BEGIN { printf "%.0f", n / s }') entries/s |"
		echo "| initial sync rate / \`ilactl -b\` rate, per round, median (goal >= 50%) | $(echo "${ratios[*]}" | median)% (rounds: ${ratios[*]}) |"
		echo "| CPU time of etcd serving the range | $(echo "${ecpus[*]}" | median) s |"
		echo
		echo "Kernel $(uname -r). QEMU multi-threaded TCG, one host thread per vCPU: times are real, not" \
			"instruction counts, and only the ratio of the two commands, measured in the same rounds, is compared."
	} >"$R/fleet.md"
	cat "$R/fleet.md" >>"$LOG"
	ip netns del bn
	exit 0
fi

# ---- 1. initial sync against ilactl -b --------------------------------------------
etcd_up s1 24379 24380 s1=http://127.0.0.1:24380 restore "$BENCH_OUT/fleet-$N.snap"
wait_for 300 etcdctl --endpoints 127.0.0.1:24379 endpoint health || exit 1
EP=http://127.0.0.1:24379
sync_rates=() batch_rates=() sync_secs=() batch_secs=() etcd_cpus=() syncd_cpus=() batch_cpus=()
for ((r = 1; r <= ROUNDS; r++)); do
	# ilactl -b: "ilactl: N commands in B batches, S s, R commands/s"
	# both commands timed whole (guest wall time: start, reading, parsing,
	# sending, the kernel's inserts), and their CPU time (user + kernel).
	# ilactl's own line (-v) counts from its first batch only (after the
	# file is read and parsed): logged, not compared.
	TIMEFORMAT='%R %U %S'
	{ time ilactl -n bn -v -b "$BENCH_OUT/fleet-$N.batch" >$W/batch.out 2>&1; } 2>$W/batch.time
	out=$(cat $W/batch.out)
	read -r s u k <$W/batch.time
	cpu_batch=$(awk -v u="$u" -v k="$k" 'BEGIN { printf "%.2f", u + k }')
	rate=$(awk -v n="$N" -v s="$s" 'BEGIN { printf "%.0f", n / s }')
	log "round $r: ilactl -b: $s s, $rate entries/s, CPU $cpu_batch s (user $u, kernel $k); its own line: $out"
	batch_cpus+=("$cpu_batch") batch_rates+=("$rate") batch_secs+=("$s")
	csv batch_cpu_s "$r" "$cpu_batch"
	csv ilactl_b_per_s "$r" "$rate"
	ilactl -n bn map destroy hosts
	# ila-syncd --once: "full sync at revision R from URL: E entries of K keys in S s, R keys/s, swapped in";
	# the CPU time etcd and the daemon (user + kernel) spend in it
	e0=$(cpu_ticks "$(cat $W/s1.pid)")
	{ time ila-syncd --once --netns bn --endpoints "$EP" --prefix /b --map hosts >$W/once.out 2>&1; } 2>$W/once.time
	e1=$(cpu_ticks "$(cat $W/s1.pid)")
	out=$(cat $W/once.out)
	read -r s u k <$W/once.time
	cpu_etcd=$(awk -v a="$e0" -v b="$e1" 'BEGIN { printf "%.2f", (b - a) / 100 }')
	cpu_syncd=$(awk -v u="$u" -v k="$k" 'BEGIN { printf "%.2f", u + k }')
	rate=$(awk -v n="$N" -v s="$s" 'BEGIN { printf "%.0f", n / s }')
	log "round $r: ila-syncd --once: $s s, $rate entries/s; CPU etcd $cpu_etcd s, ila-syncd $cpu_syncd s (user $u, kernel $k)"
	etcd_cpus+=("$cpu_etcd") syncd_cpus+=("$cpu_syncd")
	csv sync_cpu_etcd_s "$r" "$cpu_etcd"
	csv sync_cpu_syncd_s "$r" "$cpu_syncd"
	log "round $r: $(grep 'full sync' <<<"$out")"
	entries=$(sed -n 's/.*: \([0-9]*\) entries of .*/\1/p' <<<"$out")
	[ "$entries" = "$N" ] || log "round $r: ila-syncd loaded ${entries:-?} entries, not $N"
	sync_rates+=("$rate") sync_secs+=("$s")
	csv sync_per_s "$r" "$rate"
	ilactl -n bn map destroy hosts
done
# BENCH_FLEET_PERF=1: where the CPU of one more initial sync goes (not
# timed): perf samples of every task (etcd, ila-syncd, the kernel), by
# command and symbol, then the daemon's own by symbol, in the log
if [ -n "${BENCH_FLEET_PERF:-}" ]; then
	perf record -q -a -F 499 -o $W/perf.data -- \
		ila-syncd --once --netns bn --endpoints "$EP" --prefix /b --map hosts >$W/once.out 2>>"$LOG"
	log "perf: $(grep 'full sync' $W/once.out)"
	perf report -i $W/perf.data --stdio --no-children --sort comm,dso --percent-limit 0.5 2>/dev/null |
		grep -v '^#' | grep . | sed 's/^/fleet: perf by task: /' | tee -a "$LOG" >&2
	perf report -i $W/perf.data --stdio --no-children --comm ila-syncd --sort dso,sym --percent-limit 0.3 \
		2>/dev/null | grep -v '^#' | grep . | head -80 | sed 's/^/fleet: perf ila-syncd: /' | tee -a "$LOG" >&2
	ilactl -n bn map destroy hosts
fi
CPU_ETCD=$(echo "${etcd_cpus[*]}" | median)
CPU_SYNCD=$(echo "${syncd_cpus[*]}" | median)
CPU_BATCH=$(echo "${batch_cpus[*]}" | median)
# the daemon's own share: its CPU per key against ilactl -b's (what a router
# spends when etcd runs on other machines, as deployed)
own_pct=$(awk -v a="$CPU_BATCH" -v b="$CPU_SYNCD" 'BEGIN { printf "%.1f", (b > 0 ? 100 * a / b : 0) }')
SYNC_RATE=$(echo "${sync_rates[*]}" | median)
SYNC_SECS=$(echo "${sync_secs[*]}" | median)
BATCH_RATE=$(echo "${batch_rates[*]}" | median)
BATCH_SECS=$(echo "${batch_secs[*]}" | median)
# BENCH_FLEET_ONLY=sync: the initial sync rows only (a diagnostic run)
if [ "${BENCH_FLEET_ONLY:-}" = sync ]; then
	{
		echo "**ILA fleet, initial sync only** (BENCH_FLEET_ONLY=sync; medians of $ROUNDS rounds)"
		echo
		echo "| measurement | value |"
		echo "|---|---:|"
		echo "| initial sync of $N mappings, \`ila-syncd --once\` | ${SYNC_SECS} s, ${SYNC_RATE} entries/s |"
		echo "| \`ilactl -b\` | ${BATCH_SECS} s, ${BATCH_RATE} entries/s |"
		echo "| CPU time of etcd / of ila-syncd / of \`ilactl -b\` | ${CPU_ETCD} s / ${CPU_SYNCD} s / ${CPU_BATCH} s |"
		echo "| ila-syncd's own rate (keys per CPU-second) / \`ilactl -b\`'s | ${own_pct}% |"
	} >"$R/fleet.md"
	cat "$R/fleet.md" >>"$LOG"
	exit 0
fi

# ---- 2. memory ------------------------------------------------------------------------
# full mode: peak while syncing N
ila-syncd --netns bn --endpoints "$EP" --prefix /b --map full1 --progress-interval 1 2>>"$LOG" &
pid=$!
wait_for 600 watching_at bn full1 0
FULL_HWM=$(hwm_kb $pid) FULL_RSS=$(rss_kb $pid)
kill $pid; wait $pid
ilactl -n bn map destroy full1 2>/dev/null
# cache mode: empty, then N cached entries (adopted from the map, checked
# against the store)
ilactl -n bn map create empty
ila-syncd --netns bn --endpoints "$EP" --prefix /b --map empty --mode cache --cache-size "$N" 2>>"$LOG" &
pid=$!
wait_for 120 watching_at bn empty 0
CACHE0=$(rss_kb $pid)
kill $pid; wait $pid
ilactl -n bn -b "$BENCH_OUT/fleet-$N.batch"
t0=$(now)
ila-syncd --netns bn --endpoints "$EP" --prefix /b --map hosts --mode cache --cache-size "$N" 2>>"$LOG" &
pid=$!
wait_for 1200 watching_at bn hosts 0
CHECK_SECS=$(secs "$t0" "$(now)")
CACHEN=$(rss_kb $pid)
[ "$(status_of bn hosts | jq .entries)" = "$N" ] || log "cache holds $(status_of bn hosts | jq .entries) entries, not $N"
kill $pid; wait $pid
ilactl -n bn map destroy hosts
ilactl -n bn map destroy empty
csv full_sync_peak_rss_kb 1 "$FULL_HWM"
csv cache_rss_empty_kb 1 "$CACHE0"
csv cache_rss_n_kb 1 "$CACHEN"
kill "$(cat $W/s1.pid)"
wait 2>/dev/null
rm -rf "$W/s1"

# ---- 3. propagation at 1,000 moves/s (one per put, ten per transaction), 4. events per second ----------------------------
cluster=c1=http://127.0.0.1:25381,c2=http://127.0.0.1:25382,c3=http://127.0.0.1:25383
for n in 1 2 3; do etcd_up "c$n" "2537$n" "2538$n" "$cluster"; done
EPS=http://127.0.0.1:25371,http://127.0.0.1:25372,http://127.0.0.1:25373
wait_for 300 sh -c "[ \$(etcdctl --endpoints 127.0.0.1:25371,127.0.0.1:25372,127.0.0.1:25373 endpoint health -w json | jq '[.[] | select(.health)] | length') = 3 ]"
ip netns add ra
ip netns add rb
awk 'BEGIN { for (i = 0; i < 1000; i++) printf "map add hosts 0:0:0:%x 2001:db8:1:0\n", i }' |
	ila-syncd import --endpoints "$EPS" --prefix /p 2>>"$LOG"
pids=()
for ns in ra rb; do
	ila-syncd --netns $ns --endpoints "$EPS" --prefix /p --map hosts 2>>"$LOG" &
	pids+=($!)
done
rev=$(etcdctl --endpoints 127.0.0.1:25371 get / --limit 1 -w json | jq .header.revision)
wait_for 120 watching_at ra hosts "$rev"
wait_for 120 watching_at rb hosts "$rev"
# moves one per put, then ten per transaction (an orchestrator moving
# several identifiers at once): the same rate asked, latency per move
propagation() { # propagation BATCH CSV_SUFFIX -> P50 P99 MOVES
	local b=$1 sfx=$2 r out p50 p99 max seen rate
	local -a p50s=() p99s=() rates=()
	for ((r = 1; r <= ROUNDS; r++)); do
		out=$(ila_syncd_bench --endpoints "$EPS" --prefix /p --map hosts --netns ra,rb --rate 1000 --count 10000 \
			--idents 1000 --batch "$b" 2>>"$LOG")
		log "round $r, $b per transaction: $(tr '\n' ';' <<<"$out")"
		read -r _ _ p50 _ p99 max seen <<<"$(grep '^latency all' <<<"$out")"
		rate=$(awk '/^rate/ { print $2 }' <<<"$out")
		p50s+=("$p50") p99s+=("$p99") rates+=("$rate")
		csv "latency_p50_ms$sfx" "$r" "$p50"
		csv "latency_p99_ms$sfx" "$r" "$p99"
		csv "latency_max_ms$sfx" "$r" "$max"
		csv "latency_seen$sfx" "$r" "$seen"
		csv "moves_per_s$sfx" "$r" "$rate"
	done
	echo "$(echo "${p50s[*]}" | median) $(echo "${p99s[*]}" | median) $(echo "${rates[*]}" | median)"
}
read -r P50 P99 MOVES <<<"$(propagation 1 "")"
read -r P50B P99B MOVESB <<<"$(propagation 10 _batch10)"

# 4. a backlog of 100,000 puts (new identifiers), one daemon at a time
BACKLOG=100000
evs=()
for ((r = 1; r <= ROUNDS; r++)); do
	kill -STOP "${pids[@]}"
	awk -v n=$BACKLOG -v r="$r" 'BEGIN { for (i = 0; i < n; i++) printf "map add hosts %x:0:%x:%x 2001:db8:2:0\n", r, int(i / 65536), i % 65536 }' |
		ila-syncd import --endpoints "$EPS" --prefix /p 2>>"$LOG"
	for k in 0 1; do
		ns=$([ $k = 0 ] && echo ra || echo rb)
		e0=$(ilactl -n $ns -j map stats hosts | jq .entries)
		t0=$(now)
		kill -CONT "${pids[$k]}"
		# done when the kernel map holds them all (the status's revision
		# may run ahead of the events with etcd 3.4: ila-syncd(8))
		wait_for 600 entries_at $ns hosts $((e0 + BACKLOG))
		t1=$(now)
		e1=$(ilactl -n $ns -j map stats hosts | jq .entries)
		ev=$(awk -v n=$((e1 - e0)) -v s="$(secs "$t0" "$t1")" 'BEGIN { printf "%.0f", n / s }')
		log "round $r: $ns applied $((e1 - e0)) events in $(secs "$t0" "$t1") s: $ev/s"
		evs+=("$ev")
		csv events_per_s "$r" "$ev"
	done
done
EVS=$(echo "${evs[*]}" | median)
kill "${pids[@]}" 2>/dev/null
for n in 1 2 3; do kill "$(cat $W/c$n.pid)"; done
wait 2>/dev/null

# ---- report ------------------------------------------------------------------------------
pct=$(awk -v a="$SYNC_RATE" -v b="$BATCH_RATE" 'BEGIN { printf "%.1f", (b > 0 ? 100 * a / b : 0) }')
mem=$(awk -v a="$CACHEN" -v b="$CACHE0" -v n="$N" 'BEGIN { printf "%.0f", (a - b) / 1024 * 1000000 / n }')
grp() { sed ':a;s/\B[0-9]\{3\}\>/,&/;ta' <<<"$1"; } # 1000000 -> 1,000,000 (the guest has no locales)
{
	echo "**ILA fleet: ila-syncd and etcd 3.4** (guest time of the instruction-counting VM, medians of $ROUNDS rounds)"
	echo
	echo "| measurement | value |"
	echo "|---|---:|"
	echo "| initial sync of $(grp "$N") mappings, \`ila-syncd --once\` (full mode, one etcd member; the whole command) | ${SYNC_SECS} s, $(grp "$SYNC_RATE") entries/s |"
	echo "| the same entries with \`ilactl -b FILE\` (the whole command) | ${BATCH_SECS} s, $(grp "$BATCH_RATE") entries/s |"
	echo "| initial sync rate / \`ilactl -b\` rate (goal >= 50%) | ${pct}% |"
	echo "| of it, CPU time of etcd serving the range / of ila-syncd (decoding, parsing, netlink, the kernel's inserts) | ${CPU_ETCD} s / ${CPU_SYNCD} s |"
	echo "| ila-syncd's own rate, keys per CPU-second of the daemon, / \`ilactl -b\`'s (${CPU_BATCH} s of CPU) (goal >= 50%) | ${own_pct}% |"
	echo "| propagation put -> map, both routers, at $(grp "$MOVES") moves/s (3-member cluster): p50 | ${P50} ms |"
	echo "| same, p99 (goal < 500 ms) | ${P99} ms |"
	echo "| propagation at $(grp "$MOVESB") moves/s in transactions of 10 moves: p50 / p99 | ${P50B} / ${P99B} ms |"
	echo "| events applied per second, from a backlog of $(grp $BACKLOG) | $(grp "$EVS")/s |"
	echo "| cache mode: daemon memory per 1,000,000 cached entries (RSS with $(grp "$N") minus empty) | ${mem} MB |"
	echo "| full mode: daemon peak RSS while syncing $(grp "$N") | $((FULL_HWM / 1024)) MB |"
	echo
	echo "Kernel $(uname -r). One vCPU running etcd, the daemons and the load generator together;" \
		"QEMU -icount shift=0: one guest nanosecond per instruction, idle time skipped." \
		"Cache check of $(grp "$N") adopted entries at start: ${CHECK_SECS} s. Raw numbers: build/bench/fleet.csv."
} >"$R/fleet.md"
cat "$R/fleet.md" >>"$LOG"
ip netns del bn
ip netns del ra
ip netns del rb
exit 0
