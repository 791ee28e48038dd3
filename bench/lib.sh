# Benchmark helpers, sourced by the table scripts (bench/ila.sh,
# bench/rtcache.sh). They run INSIDE the benchmark VM
# (tests/vm/run --bench: -smp 1 -icount shift=0,sleep=off,align=off), as root.
#
#   sender (pktgen) s0 ---- r0  router  r1 ---- d0 receiver
#   10.0.1.2/24        10.0.1.1   10.0.2.1        10.0.2.2/24
#   fd00:1::2/64       fd00:1::1  fd00:2::1       fd00:2::2/64
#                                 3333:0:0:1::1   3333:0:0:1::2/64
#
# pktgen (kernel thread of the sender netns) sends one UDP flow, a fixed
# number of packets back to back, to the router's MAC; the router forwards
# it; packets are counted at the receiver (rx_packets of d0) and divided by
# the GUEST time pktgen took. Under icount guest time advances one
# nanosecond per instruction, so packets per guest-second is
# 1e9 / (instructions per packet), sender, router and receiver together.
#
# Results: one CSV line per measurement appended to $BENCH_CSV:
#   table,family,config,round,pps,delivered  (a measurement)
#   table,family,config,,na:<reason>          (a row that cannot be measured)
# and facts for the report (labels, notes) in $BENCH_META.

BENCH_TOP="${BENCH_TOP:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}"
KREL="$(uname -r)"
KMOD_DIR="$BENCH_TOP/build/kmod/$KREL"
BIN_DIR="$BENCH_TOP/build/bin"
SYS_XTLIBDIR="$(pkg-config --variable=xtlibdir xtables 2>/dev/null || echo /usr/lib/x86_64-linux-gnu/xtables)"
export XTABLES_LIBDIR="$BENCH_TOP/xtables:$SYS_XTLIBDIR"
export PATH="$BIN_DIR:$PATH"

: "${BENCH_CSV:=${VM_RESULTS:-/tmp}/bench.csv}"
: "${BENCH_PKTS:=100000}" # packets per measurement (about 1 guest second)
: "${BENCH_WARMUP_PKTS:=5000}" # packets sent before each measurement, not counted
: "${BENCH_ROUNDS:=3}"    # interleaved rounds per configuration

SND=bsnd RTR=brtr RCV=brcv
SPID='' RPID=''
# The path a measurement uses (set by run_configs from PATH_<config>):
# through the router (s0 -> r0, r1 -> d0) or, for PATH_<config>=direct,
# over the sender-receiver pair of direct_setup (s1 -> d1, no router).
PG_DEV=s0 RX_DEV=d0 PG_DMAC='' PG_SRC4=10.0.1.2 PG_SRC6=fd00:1::2
# Flows: UDP source ports 1024 .. 1024+PG_SPORTS-1 and destination ports
# 2048 .. 2048+PG_DPORTS-1, each advanced by one every packet (pktgen's
# sequential ranges): with coprime counts every pair comes once in
# PG_SPORTS * PG_DPORTS packets, that many connections. 1 and 1: the one
# flow 9 -> 9. Set by run_configs from SPORTS_<config>, DPORTS_<config>.
PG_SPORTS=1 PG_DPORTS=1

log() { echo "bench: $*" | tee -a "${BENCH_CSV%.csv}.log" >&2; }
die() { log "FATAL: $*"; exit 1; }

# ---- topology -----------------------------------------------------------------

_wait_in_ns() {
	local i
	for ((i = 0; i < 100; i++)); do
		grep -q "^ *$2:" "/proc/$1/net/dev" 2>/dev/null && return 0
		sleep 0.1
	done
	die "process $1 never entered the netns of $2"
}

topo_setup() {
	local n
	modprobe pktgen || die "no pktgen module"
	for n in $SND $RTR $RCV; do
		ip netns add $n
		ip -n $n link set lo up
		ip netns exec $n sysctl -qw net.ipv6.conf.all.accept_dad=0 \
			net.ipv6.conf.default.accept_dad=0 \
			net.ipv6.conf.all.router_solicitations=0 \
			net.ipv6.conf.default.router_solicitations=0 \
			net.ipv4.conf.all.rp_filter=0 net.ipv4.conf.default.rp_filter=0
	done
	ip link add s0 netns $SND type veth peer name r0 netns $RTR
	ip link add r1 netns $RTR type veth peer name d0 netns $RCV
	ip -n $SND link set s0 up
	ip -n $RTR link set r0 up
	ip -n $RTR link set r1 up
	ip -n $RCV link set d0 up
	ip -n $SND addr add 10.0.1.2/24 dev s0
	ip -n $SND -6 addr add fd00:1::2/64 dev s0 nodad
	ip -n $RTR addr add 10.0.1.1/24 dev r0
	ip -n $RTR -6 addr add fd00:1::1/64 dev r0 nodad
	ip -n $RTR addr add 10.0.2.1/24 dev r1
	ip -n $RTR -6 addr add fd00:2::1/64 dev r1 nodad
	ip -n $RTR -6 addr add 3333:0:0:1::1/64 dev r1 nodad
	ip -n $RCV addr add 10.0.2.2/24 dev d0
	ip -n $RCV -6 addr add fd00:2::2/64 dev d0 nodad
	ip -n $RCV -6 addr add 3333:0:0:1::2/64 dev d0 nodad
	ip -n $SND route add default via 10.0.1.1
	ip -n $SND -6 route add default via fd00:1::1
	ip -n $RCV route add default via 10.0.2.1
	ip -n $RCV -6 route add default via fd00:2::1
	ip netns exec $RTR sysctl -qw net.ipv4.ip_forward=1 net.ipv6.conf.all.forwarding=1
	# Static neighbours: no resolution traffic during measurements.
	SMAC=$(ip -n $SND -br link show s0 | awk '{print $3}')
	R0MAC=$(ip -n $RTR -br link show r0 | awk '{print $3}')
	R1MAC=$(ip -n $RTR -br link show r1 | awk '{print $3}')
	DMAC=$(ip -n $RCV -br link show d0 | awk '{print $3}')
	ip -n $SND neigh replace 10.0.1.1 lladdr "$R0MAC" dev s0 nud permanent
	ip -n $SND neigh replace fd00:1::1 lladdr "$R0MAC" dev s0 nud permanent
	ip -n $RTR neigh replace 10.0.1.2 lladdr "$SMAC" dev r0 nud permanent
	ip -n $RTR neigh replace fd00:1::2 lladdr "$SMAC" dev r0 nud permanent
	ip -n $RTR neigh replace 10.0.2.2 lladdr "$DMAC" dev r1 nud permanent
	ip -n $RTR neigh replace fd00:2::2 lladdr "$DMAC" dev r1 nud permanent
	ip -n $RTR neigh replace 3333:0:0:1::2 lladdr "$DMAC" dev r1 nud permanent
	ip -n $RCV neigh replace 10.0.2.1 lladdr "$R1MAC" dev d0 nud permanent
	ip -n $RCV neigh replace fd00:2::1 lladdr "$R1MAC" dev d0 nud permanent
	# Processes that hold each netns, for /proc/PID/net/* without forking.
	ip netns exec $SND sleep infinity &
	SPID=$!
	ip netns exec $RCV sleep infinity &
	RPID=$!
	# ip netns exec may not have entered the netns yet.
	_wait_in_ns $SPID s0
	_wait_in_ns $RPID d0
	PG_DMAC=$R0MAC
	wq_trace_on
	kp_on
	rcv_setup
}

# direct_setup : a second veth pair s1 (sender) -- d1 (receiver), no router
# between them, for the "no router" row (PATH_<config>=direct): the same
# pktgen and the same receiver, one veth hop.
#   s1 10.0.3.1/24 fd00:3::1/64  ----  d1 10.0.3.2/24 fd00:3::2/64
direct_setup() {
	local ns dev a4 a6 peer4 peer6 mac
	ip link add s1 netns $SND type veth peer name d1 netns $RCV
	# each end: its addresses, and a permanent neighbour entry for the other
	for ns in "$SND s1 10.0.3.1 fd00:3::1 10.0.3.2 fd00:3::2 d1 $RCV" \
		"$RCV d1 10.0.3.2 fd00:3::2 10.0.3.1 fd00:3::1 s1 $SND"; do
		set -- $ns
		dev=$2 a4=$3 a6=$4 peer4=$5 peer6=$6
		mac=$(ip -n "$8" -br link show "$7" | awk '{print $3}')
		ip -n "$1" link set "$dev" up
		ip -n "$1" addr add "$a4/24" dev "$dev"
		ip -n "$1" -6 addr add "$a6/64" dev "$dev" nodad
		ip -n "$1" neigh replace "$peer4" lladdr "$mac" dev "$dev" nud permanent
		ip -n "$1" neigh replace "$peer6" lladdr "$mac" dev "$dev" nud permanent
	done
	D1MAC=$(ip -n $RCV -br link show d1 | awk '{print $3}')
	_wait_in_ns $RPID d1
}

# path_select router|direct : the devices and addresses pg_setup, measure
# and rx_count use.
path_select() {
	if [ "$1" = direct ]; then
		PG_DEV=s1 RX_DEV=d1 PG_DMAC=$D1MAC PG_SRC4=10.0.3.1 PG_SRC6=fd00:3::1
	else
		PG_DEV=s0 RX_DEV=d0 PG_DMAC=$R0MAC PG_SRC4=10.0.1.2 PG_SRC6=fd00:1::2
	fi
}

# The receiver consumes the packets. Default: no socket on the port, so
# the packet goes through the receiver's IP and UDP input and is dropped
# there (UDP NoPorts; the ICMP errors that triggers are rate-limited).
rcv_setup() { :; }

topo_teardown() {
	[ -n "$SPID" ] && kill "$SPID" 2>/dev/null
	[ -n "$RPID" ] && kill "$RPID" 2>/dev/null
	wait 2>/dev/null
	ip netns del $SND 2>/dev/null
	ip netns del $RTR 2>/dev/null
	ip netns del $RCV 2>/dev/null
}

# in_rtr CMD... : run in the router netns.
in_rtr() { ip netns exec $RTR "$@"; }

# ---- pktgen -------------------------------------------------------------------

_pg() { echo "$2" >"/proc/$SPID/net/pktgen/$1" || die "pktgen $1: $2"; }

# pg_device : PG_DEV is the pktgen thread's only device (rem_device_all
# is asynchronous: the thread drops its devices on its next loop).
pg_device() {
	local d=/proc/$SPID/net/pktgen i f others
	_pg_others() {
		others=
		for f in "$d"/*; do
			f=${f##*/}
			case $f in pgctrl | kpktgend_* | "$PG_DEV") ;; *) others+=" $f" ;; esac
		done
	}
	_pg_others
	[ -e "$d/$PG_DEV" ] && [ -z "$others" ] && return 0
	if [ -n "$others" ]; then
		_pg kpktgend_0 "rem_device_all"
		for ((i = 0; i < 100; i++)); do
			_pg_others
			[ -z "$others" ] && [ ! -e "$d/$PG_DEV" ] && break
			sleep 0.1
		done
	fi
	[ -e "$d/$PG_DEV" ] || _pg kpktgend_0 "add_device $PG_DEV"
}

# pg_setup 4|6 DST : one UDP flow sender -> DST (port 9 -> 9), BENCH_PKTS
# packets per run, plus the pktgen flags in PG_FLAGS (e.g. UDPCSUM), from
# PG_DEV to PG_DMAC (path_select).
PG_FLAGS_ALL="UDPCSUM NO_TIMESTAMP"
: "${PG_FLAGS=UDPCSUM}"
pg_setup() {
	local fam=$1 dst=$2 c
	pg_device
	local sp=9 sq=9 dp=9 dq=9
	# pktgen wraps a range when the port reaches its max: max = min + count
	[ "$PG_SPORTS" -le 1 ] || sp=1024 sq=$((1024 + PG_SPORTS))
	[ "$PG_DPORTS" -le 1 ] || dp=2048 dq=$((2048 + PG_DPORTS))
	for c in "count $BENCH_PKTS" "clone_skb 0" "delay 0" "dst_mac $PG_DMAC" \
		"udp_src_min $sp" "udp_src_max $sq" "udp_dst_min $dp" "udp_dst_max $dq"; do
		_pg $PG_DEV "$c"
	done
	if [ "$fam" = 6 ]; then
		# pktgen's shortest IPv6 frame: 14 + 40 + 8 + 16 (pktgen header).
		_pg $PG_DEV "pkt_size 78"
		_pg $PG_DEV "dst6 $dst"
		_pg $PG_DEV "src6 $PG_SRC6"
	else
		_pg $PG_DEV "flag !IPV6"
		_pg $PG_DEV "pkt_size 64"
		_pg $PG_DEV "dst $dst"
		_pg $PG_DEV "src_min $PG_SRC4"
		_pg $PG_DEV "src_max $PG_SRC4"
	fi
	for c in $PG_FLAGS_ALL; do
		case " ${PG_FLAGS:-} " in
		*" $c "*) _pg $PG_DEV "flag $c" ;;
		*) _pg $PG_DEV "flag !$c" ;;
		esac
	done
}

# pg_run : send BENCH_PKTS packets; returns when pktgen is done. pgctrl acts
# on the netns of the writing process: write it from the sender.
pg_run() {
	timeout "${BENCH_RUN_TIMEOUT:-300}" ip netns exec $SND \
		sh -c 'echo start > /proc/net/pktgen/pgctrl' && return 0
	ip netns exec $SND sh -c 'echo stop > /proc/net/pktgen/pgctrl'
	return 1
}

# ---- measuring ----------------------------------------------------------------

# rx_count : rx_packets of the receiver's RX_DEV (bash builtins only).
rx_count() {
	local l
	while read -r l; do
		case $l in
		"$RX_DEV":*) set -- $l; echo "$3"; return ;;
		esac
	done <"/proc/$RPID/net/dev"
}

# backlog_drops : packets dropped at the CPU's input backlog so far.
backlog_drops() {
	local a b
	read -r a b _ </proc/net/softnet_stat
	echo $((16#$b))
}

# pg_elapsed_us : guest microseconds of pktgen's last run (its Result line).
pg_elapsed_us() {
	local l
	while read -r l; do
		case $l in
		"Result: OK: "*) l=${l#Result: OK: }; echo "${l%%(*}"; return ;;
		esac
	done <"/proc/$SPID/net/pktgen/$PG_DEV"
}

# sys_snap : "<NET_RX> <TIMER> <RCU> <SCHED softirqs> <context switches>
# <interrupts> <backlog packets processed> <time squeezes> <pages
# allocated> <pages freed>" so far (bash
# builtins only): what changed during a run tells how its packets were
# batched and scheduled.
sys_snap() {
	local k v a b c rx=0 tm=0 rcu=0 sch=0 ctxt=0 intr=0
	while read -r k v _; do
		case $k in
		NET_RX:) rx=$v ;;
		TIMER:) tm=$v ;;
		RCU:) rcu=$v ;;
		SCHED:) sch=$v ;;
		esac
	done </proc/softirqs
	while read -r k v _; do
		case $k in
		ctxt) ctxt=$v ;;
		intr) intr=$v ;;
		esac
	done </proc/stat
	read -r a b c _ </proc/net/softnet_stat
	local pga=0 pgf=0
	while read -r k v; do
		case $k in
		pgalloc_*) pga=$((pga + v)) ;;
		pgfree) pgf=$v ;;
		esac
	done </proc/vmstat
	echo "$rx $tm $rcu $sch $ctxt $intr $((16#$a)) $((16#$c)) $pga $pgf"
}

# task_snap : "PID:RUNTIME_NS ..." of every task (schedstat; under icount a
# nanosecond is an instruction).
task_snap() {
	local f t out=
	for f in /proc/[0-9]*/schedstat; do
		read -r t _ <"$f" 2>/dev/null || continue
		f=${f#/proc/}
		out+=" ${f%/schedstat}:$t"
	done
	echo "$out"
}

# task_busy BEFORE AFTER : tasks that ran 0.5 ms or more between two
# task_snaps, "comm=us ..." (the pktgen thread included).
task_busy() {
	local -A t0
	local e p c out=
	for e in $1; do t0[${e%%:*}]=${e#*:}; done
	for e in $2; do
		p=${e%%:*}
		[ -n "${t0[$p]:-}" ] || continue
		if [ $(((${e#*:} - ${t0[$p]}) / 1000)) -ge 500 ]; then
			read -r c <"/proc/$p/comm" 2>/dev/null || c=$p
			out+=" $c=$(((${e#*:} - ${t0[$p]}) / 1000))"
		fi
	done
	echo "${out# }"
}

# Work items that run during a measurement (tracepoint
# workqueue:workqueue_execute_start; a few per guest-second, so the trace
# costs nothing measurable). The conntrack garbage collector
# (gc_worker) scans every bucket of the conntrack hash (65,536 in the
# 3 GiB guest: about 3.3 million instructions a pass) every 1 to 60
# guest-seconds, whatever the traffic and whether conntrack is in use in
# the router or not: a run it lands in costs about 33 instructions per
# packet more, so measure repeats such a run (see bench/README.md).
WQ_TRACE=
wq_trace_on() {
	local t=/sys/kernel/tracing
	[ -e $t/trace ] || mount -t tracefs nodev $t 2>/dev/null
	if [ -w $t/events/workqueue/workqueue_execute_start/enable ] &&
		echo 1 >$t/events/workqueue/workqueue_execute_start/enable; then
		WQ_TRACE=$t
	else
		log "no tracefs: work items during runs are not recorded"
	fi
}
wq_clear() { [ -z "$WQ_TRACE" ] || : >"$WQ_TRACE/trace"; }
# wq_summary : "function=count ..." of the work items since wq_clear
wq_summary() {
	[ -n "$WQ_TRACE" ] || return 0
	grep -o 'function [A-Za-z0-9_.]*' "$WQ_TRACE/trace" | sort | uniq -c |
		awk '{ printf "%s%s=%s", sep, $3, $1; sep = " " }'
}

# BENCH_KPROBES="fn ...": a diagnostic (opt-in; see "Two modes" in
# bench/README.md): each run's log line gets how often each kernel function
# named was entered during it (a kprobe with a hist trigger: nothing is
# written to a trace buffer). Each hit costs instructions of its own, so
# name slow paths, not functions every packet calls. Functions the running
# kernel does not have (inlined, renamed) are reported and left out.
KP_FUNCS=
kp_on() {
	local t=/sys/kernel/tracing f
	[ -n "${BENCH_KPROBES:-}" ] || return 0
	for f in $BENCH_KPROBES; do
		if ! grep -q " [tT] $f$" /proc/kallsyms; then
			log "kprobe: the kernel has no function $f"
		elif echo "p:kp_$f $f" >>$t/kprobe_events &&
			echo "hist:keys=${BENCH_KPROBE_KEY:-common_cpu}:vals=hitcount" >$t/events/kprobes/kp_$f/trigger; then
			KP_FUNCS+=" $f"
		else
			log "kprobe: cannot probe $f"
		fi
	done
}
# kp_snap : "fn=hits ..." so far
kp_snap() {
	local f
	for f in $KP_FUNCS; do
		printf '%s=%s ' "$f" "$(sed -n 's/^ *Hits: *\([0-9]*\).*/\1/p' /sys/kernel/tracing/events/kprobes/kp_$f/hist | head -n 1)"
	done
}
# kp_delta BEFORE AFTER : "fn=+N ..." of the functions entered
kp_delta() {
	awk -v a="$1" -v b="$2" 'BEGIN { n = split(a, x, " "); split(b, y, " ")
		for (i = 1; i <= n; i++) { split(x[i], p, "="); split(y[i], q, "=")
			if (q[2] - p[2]) printf "%s%s=+%d", (o++ ? " " : ""), p[1], q[2] - p[2] } }'
}

# udp_in : "<noports> <csum errors>" of the receiver's UDP for family $1.
udp_in() {
	local l k v
	if [ "$1" = 6 ]; then
		local np=0 ce=0
		while read -r k v; do
			case $k in
			Udp6NoPorts) np=$v ;;
			Udp6InCsumErrors) ce=$v ;;
			esac
		done <"/proc/$RPID/net/snmp6"
		echo "$np $ce"
	else
		while read -r l; do
			case $l in
			"Udp: "[0-9]*) set -- $l; echo "$3 $8"; return ;;
			esac
		done <"/proc/$RPID/net/snmp"
	fi
}

# measure FAMILY : one run of BENCH_PKTS packets, sent back to back by
# pktgen. Every packet is forwarded and received in softirq context right
# after pktgen hands it to the veth, on the one CPU, so pktgen's elapsed
# guest time is the cost of sender + router + receiver for all of them,
# with no userspace running in between. Prints "PPS DELIVERED": packets
# received per guest-second, and the fraction of them that reached the
# receiver's UDP intact (checksum verified; there is no socket, so they
# count as NoPorts): anything below 1.000 means the configuration broke
# the packets. If the input backlog dropped packets (softirq processing
# was deferred to ksoftirqd and pktgen overran it), the run wasted
# instructions on packets nobody received: it is repeated (up to 4 times).
measure() {
	local fam=$1 try c0 c1 d0 d1 u0 u1 us s0 s1 wq t0 t1 k0 k1 ct f
	for ((try = 1; try <= 4; try++)); do
		c0=$(rx_count)
		d0=$(backlog_drops)
		u0=$(udp_in "$fam")
		s0=$(sys_snap)
		t0=$(task_snap)
		wq_clear
		ct=$(in_rtr cat /proc/sys/net/netfilter/nf_conntrack_count 2>/dev/null || echo -)
		k0=$(kp_snap)
		pg_run || { log "pktgen did not finish"; echo "0 0"; return 1; }
		k1=$(kp_snap)
		t1=$(task_snap)
		s1=$(sys_snap)
		wq=$(wq_summary)
		c1=$(rx_count)
		d1=$(backlog_drops)
		u1=$(udp_in "$fam")
		us=$(pg_elapsed_us)
		# BENCH_KPROBE_KEY=stacktrace: where the calls came from (read
		# after the snapshots, so that they do not count this work)
		if [ "${BENCH_KPROBE_KEY:-}" = stacktrace ]; then
			for f in $KP_FUNCS; do
				log "calls of $f so far, by stack: $(grep -v '^#' /sys/kernel/tracing/events/kprobes/kp_$f/hist | tr -s ' \n' ' ')"
			done
		fi
		set -- $s0 $s1
		log "run: $((c1 - c0)) pkts in $us us; router's conntrack entries $ct; softirqs net_rx +$((${11} - $1)) timer +$((${12} - $2)) rcu +$((${13} - $3)) sched +$((${14} - $4)); ctxt +$((${15} - $5)) intr +$((${16} - $6)) backlog processed +$((${17} - $7)) squeezed +$((${18} - $8)); pages alloc +$((${19} - $9)) free +$((${20} - ${10})); work: ${wq:-none}; tasks (us): $(task_busy "$t0" "$t1")${KP_FUNCS:+; entered: $(kp_delta "$k0" "$k1")}"
		if [ $try = 4 ]; then
			[ "$d1" = "$d0" ] || log "backlog drops in every try; keeping the last"
			case " $wq " in *" gc_worker="*) log "conntrack gc in every try; keeping the last" ;; esac
			break
		fi
		if [ "$d1" != "$d0" ]; then
			log "backlog dropped $((d1 - d0)) packets; measuring again"
		elif [ "${BENCH_GC_RETRY:-1}" = 1 ] && [[ " $wq " == *" gc_worker="* ]]; then
			log "the conntrack gc worker ran during the run; measuring again"
		else
			break
		fi
	done
	[ -n "$us" ] && [ "$us" -gt 0 ] || die "no pktgen result"
	set -- $u0 $u1
	awk -v c="$((c1 - c0))" -v us="$us" -v np="$(($3 - $1))" \
		'BEGIN { printf "%.0f %.3f\n", c * 1e6 / us, c ? np / c : 0 }'
}

# ---- tables -------------------------------------------------------------------

csv() { echo "$*" >>"$BENCH_CSV"; }
: "${BENCH_META:=${BENCH_CSV%.csv}.meta}"
# meta KEY VALUE... : facts for the report (labels, notes), tab-separated.
meta() { local k=$1; shift; printf '%s\t%s\n' "$k" "$*" >>"$BENCH_META"; }
label() { meta "label:$1" "${@:2}"; }

# A configuration NAME is a set of shell functions: cfg_NAME_check
# (prints why and fails if it cannot be measured: module not built...),
# cfg_NAME_on (sets it up; fails with the reason on output), cfg_NAME_off
# (removes it). The destination address is $DST_NAME if set, else DST;
# PATH_NAME=direct sends over the pair of direct_setup (no router);
# SPORTS_NAME and DPORTS_NAME give the flows (PG_SPORTS), WARMUP_NAME the
# warm-up packets (default BENCH_WARMUP_PKTS); cfg_NAME_warm ROUND, if
# defined, runs after the warm-up, before the measurement.
# run_configs TABLE FAMILY DST NAME... measures the available ones
# interleaved (A B C A B C ...), BENCH_ROUNDS rounds.
# CSV: table,family,config,round,pps,delivered  or  table,family,config,,na:why
run_configs() {
	local table=$1 fam=$2 dst=$3 r c why out dv pv warm p b t again
	local -A best=()
	shift 3
	local avail=()
	for c in "$@"; do
		if declare -F "cfg_${c}_check" >/dev/null && ! why=$(cfg_${c}_check 2>&1); then
			log "$table/$fam/$c: n/a: $why"
			csv "$table,$fam,$c,,na:${why//,/;}"
		else
			avail+=("$c")
		fi
	done
	for ((r = 1; r <= BENCH_ROUNDS; r++)); do
		for c in ${avail[@]+"${avail[@]}"}; do
			dv=DST_$c
			pv=PATH_$c
			path_select "${!pv:-router}"
			pv=SPORTS_$c
			PG_SPORTS=${!pv:-1}
			pv=DPORTS_$c
			PG_DPORTS=${!pv:-1}
			pv=WARMUP_$c
			warm=${!pv:-$BENCH_WARMUP_PKTS}
			pg_setup "$fam" "${!dv:-$dst}"
			if ! why=$(cfg_${c}_on 2>&1); then
				log "$table/$fam/$c: setup failed: $why"
				csv "$table,$fam,$c,$r,na:setup failed"
				cfg_${c}_off >/dev/null 2>&1
				continue
			fi
			if [ "$warm" -gt 0 ]; then
				_pg $PG_DEV "count $warm"
				pg_run
				_pg $PG_DEV "count $BENCH_PKTS"
			fi
			if declare -F "cfg_${c}_warm" >/dev/null; then
				cfg_${c}_warm "$r"
			fi
			out=$(measure "$fam")
			# BENCH_SLOW_RETRY=N: a measurement more than 0.5% slower
			# than the fastest of this configuration so far is taken
			# again in the same setup, up to N times, and the faster
			# kept (the slow mode only ever adds instructions; see
			# bench/README.md, "Two modes"). Each retry is logged: a
			# fast retry means the mode came with that one run, a slow
			# one that it came with the setup.
			for ((t = 0; t < ${BENCH_SLOW_RETRY:-0}; t++)); do
				p=${out%% *} b=${best[$c]:-0}
				[ "$b" -gt 0 ] && [ $((p * 1000)) -lt $((b * 995)) ] || break
				again=$(measure "$fam")
				log "$table/$fam/$c round $r: $p pps, $(awk -v p="$p" -v b="$b" 'BEGIN { printf "%.2f%%", 100 * (b - p) / b }') below its fastest ($b): measured again in the same setup: ${again%% *} pps"
				[ "${again%% *}" -le "$p" ] || out=$again
			done
			p=${out%% *}
			[ "$p" -le "${best[$c]:-0}" ] || best[$c]=$p
			# BENCH_MEASURE_TWICE=1 (diagnostic): a second measurement of
			# the same setup, logged only: does a mode outlast one run?
			if [ "${BENCH_MEASURE_TWICE:-0}" = 1 ]; then
				log "$table/$fam/$c round $r, measured again: $(measure "$fam")"
			fi
			cfg_${c}_off >/dev/null 2>&1
			log "$table/$fam/$c round $r: $out (pps delivered)"
			csv "$table,$fam,$c,$r,${out// /,}"
		done
	done
}

# Availability helpers for cfg_*_check.
need_module() { [ -e "$KMOD_DIR/$1.ko" ] || { echo "not built: $1.ko"; return 1; }; }
need_plugin() { [ -e "$BENCH_TOP/xtables/libxt_$1.so" ] || { echo "not built: libxt_$1.so"; return 1; }; }
need_bin() { command -v "$1" >/dev/null || { echo "not built: $1"; return 1; }; }

# load_module NAME [params], unload_module NAME (shared with the bats suites)
# shellcheck source=tests/lib/kmod.bash
. "$BENCH_TOP/tests/lib/kmod.bash"

# BENCH_MODEL=1 (bench/run): measurements marked for the cache model
# shellcheck source=bench/model.sh
[ "${BENCH_MODEL:-0}" != 1 ] || . "$BENCH_TOP/bench/model.sh"
