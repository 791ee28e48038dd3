# shellcheck shell=bash
# bench/model.sh: the guest side of the modeled rows (BENCH_MODEL=1 bench/run;
# bench/README.md, "Modeled cycles"). Sourced by bench/lib.sh inside the
# benchmark VM when BENCH_MODEL=1; the VM then runs with the cache-model
# plugin (build/cachesim/cachesim.so), which counts only between the
# markers cachesim-mark executes.
#
# Every pktgen run of a measurement (lib.sh measure: each try, not the
# warm-ups) becomes one interval of the plugin: cachesim-mark writes
# "start" to pgctrl between its start and stop markers, so the interval is
# that write, which returns when pktgen is done. Before it, the run's label
# "table,family,config,round" is appended to $BENCH_MODEL_LABELS: line N
# of that file names interval N of the plugin's output (bench/run joins
# them; of several tries of one measurement the last is the one kept, as in
# measure). The other pktgen runs (warm-ups) run with the simulation on
# but not counted (cachesim-mark warm), so that the caches hold what the
# warm-up left, as a real core's would.

: "${BENCH_MODEL_LABELS:=${BENCH_CSV%.csv}.model-labels}"
CACHESIM_MARK=$BENCH_TOP/build/cachesim/cachesim-mark
[ -x "$CACHESIM_MARK" ] || die "BENCH_MODEL=1: $CACHESIM_MARK not built (make cachesim)"

eval "$(declare -f pg_run | sed '1s/^pg_run/_pg_run_unmodeled/')"
eval "$(declare -f measure | sed '1s/^measure/_measure_unmodeled/')"

# measure's pktgen runs are marked; run_configs' table, c and r (its locals,
# visible here) and measure's fam name them
measure() {
	local MODEL_MARK=1
	_measure_unmodeled "$@"
}

pg_run() {
	local how='warm'
	if [ "${MODEL_MARK:-0}" = 1 ]; then
		how='write'
		echo "${table:-?},${fam:-?},${c:-?},${r:-?}" >>"$BENCH_MODEL_LABELS"
	fi
	timeout "${BENCH_RUN_TIMEOUT:-300}" ip netns exec "$SND" \
		"$CACHESIM_MARK" $how /proc/net/pktgen/pgctrl start && return 0
	ip netns exec "$SND" sh -c 'echo stop > /proc/net/pktgen/pgctrl'
	return 1
}
