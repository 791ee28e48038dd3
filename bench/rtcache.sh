#!/bin/bash
# rtcache benchmark table (the seed's experiment), run inside the benchmark
# VM by bench/run: bench/rtcache.sh
#
#   sender (pktgen) s0 ---- r0  router  r1 ---- d0 receiver
#   10.0.1.2 / fd00:1::2        (forwards)       10.0.2.2 / fd00:2::2
#
# One UDP flow, IPv4 and IPv6, forwarded by the router under:
#   n      no router: the same pktgen and receiver over one veth pair
#          (s1 -> d1, direct_setup), what sender + receiver cost alone;
#          the report subtracts it from every row (the router's own
#          instructions per packet)
#   a      no conntrack, no reverse-path filter
#   b      conntrack (one nft "ct state" rule in forward) + rp_filter=1
#          (IPv6 has no rp_filter sysctl: conntrack only)
#   b0     conntrack without rp_filter (IPv4 only: IPv6 (b) has none)
#   c      b + nf_conntrack_rtcache loaded
#   d      b + nft flowtable (UDP offloaded to it)
#   e      conntrack + "-m rpfilter --invert -j DROP" in mangle PREROUTING
#          (iptables-legacy) instead of the sysctl
#   e_rtc  e with the rtcache shortcut, man page's one-rule form:
#          -m rtcache ! --cached -m rpfilter --invert -j DROP
#   e_ret  e with the shortcut as "-m rtcache -j RETURN" in a chain before
#          the rpfilter rule
#   b_churn, c_churn   b and c with a sender whose packets all differ in
#          a routing input: an nft rule in the router's PREROUTING (priority
#          mangle, before rtcache) sets the IPv6 flow label (IPv4: the mark)
#          from a counter, a new value every packet (both rows carry the rule)
#   b_10k, c_10k, b_100k, c_100k   b and c with 10,100 and 100,172 UDP
#          connections (pktgen port ranges 100 x 101 and 316 x 317, one new
#          pair every packet), warmed up with two packets per connection so
#          conntrack and the cache hold them all before the measurement;
#          also the kernel memory they take per connection
#   b_1m, c_1m   the same with 1,001,000 connections (1000 x 1001; only
#          when BENCH_RTC_CONFIGS names them: the warm-ups take long);
#          conntrack's hash gets 1,048,576 buckets for them, as an operator
#          sizes it for a million flows
#   b_ctfull, c_ctfull   b and c with conntrack churning: 131,406 UDP
#          tuples in a cycle (pktgen ports 362 x 363) through a conntrack
#          table of 65,536 (this guest's stock nf_conntrack_max): most
#          packets find their connection evicted (early drop of a random
#          unreplied one) and make a new one, which evicts another; the
#          rest are the second packet of a connection (recorded) or later.
#          Recorded per round (CSV): new connections, records, hits,
#          refused inserts and reclaimed entries per 1000 packets, and
#          entries vs connections
#   b_flow2, c_flow2, b_flow3, c_flow3   b and c with connections of 2
#          and 3 packets (IPv4): pktgen flows of "flowlen N" stepping
#          through 10.9.0.0/16, 50,000 / 33,334 new connections per run
#          (conntrack flushed before it)
#   b_tstamp   b while a socket in the router netns asks for receive
#          timestamps (SO_TIMESTAMP): every received packet is stamped
#          (only when BENCH_RTC_CONFIGS names it: a diagnostic row)
#   b_big, c_big   b and c with an Internet-sized table on the router
#          (BENCH_ROUTES4 / BENCH_ROUTES6, ip -batch files from bench/run;
#          none of the routes covers the test addresses)
set -u
. "$(dirname "$0")/lib.sh"
# a run slower than its configuration's fastest by more than 0.5% is
# measured again in the same setup (lib.sh run_configs; "Two modes")
: "${BENCH_SLOW_RETRY:=2}"

RTC=nf_conntrack_rtcache
FAMS=${BENCH_FAMILIES:-4 6}
ipt() { if [ "$FAM" = 6 ]; then in_rtr ip6tables-legacy "$@"; else in_rtr iptables-legacy "$@"; fi; }
mangle_mod() { if [ "$FAM" = 6 ]; then echo ip6table_mangle; else echo iptable_mangle; fi; }

rpf_sysctl() {
	[ "$FAM" = 4 ] || return 0
	in_rtr sysctl -qw net.ipv4.conf.all.rp_filter="$1" net.ipv4.conf.r0.rp_filter="$1"
}

ct_on() {
	in_rtr nft -f - <<'EOF'
table inet bench {
	chain forward {
		type filter hook forward priority filter;
		ct state invalid drop
	}
}
EOF
}
ct_off() { in_rtr nft delete table inet bench; }

rtc_check() { need_module $RTC; }
rtc_on() { load_module $RTC; }
rtc_off() {
	log "IPv$FAM rtcache stats: $(in_rtr cat /proc/net/stat/nf_conntrack_rtcache 2>/dev/null | tr '\n' '|')"
	unload_module xt_rtcache
	unload_module $RTC
}

# legacy tables stay hooked into the netns once used: unload the table
# module after each configuration.
mangle_off() {
	ipt -t mangle -F
	ipt -t mangle -X
	unload_module "$(mangle_mod)"
}

PATH_n=direct
cfg_n_on() { :; }
cfg_n_off() { :; }

cfg_a_on() { :; }
cfg_a_off() { :; }

cfg_b_on() { ct_on && rpf_sysctl 1; }
cfg_b_off() { ct_off; rpf_sysctl 0; }

cfg_b0_check() { [ "$FAM" = 4 ] || { echo "IPv6 has no rp_filter: (b) is conntrack only"; return 1; }; }
cfg_b0_on() { ct_on; }
cfg_b0_off() { ct_off; }

cfg_c_check() { rtc_check; }
cfg_c_on() { rtc_on && cfg_b_on; }
cfg_c_off() { cfg_b_off; rtc_off; }

cfg_d_on() {
	in_rtr nft -f - <<'EOF' && rpf_sysctl 1
table inet bench {
	flowtable ft {
		hook ingress priority filter
		devices = { r0, r1 }
	}
	chain forward {
		type filter hook forward priority filter;
		ct state invalid drop
		meta l4proto udp flow add @ft
	}
}
EOF
}
cfg_d_off() { cfg_b_off; }

cfg_e_on() { ct_on && ipt -t mangle -A PREROUTING -m rpfilter --invert -j DROP; }
cfg_e_off() { mangle_off; ct_off; }

cfg_e_rtc_check() { rtc_check && need_module xt_rtcache && need_plugin rtcache; }
cfg_e_rtc_on() {
	rtc_on && load_module xt_rtcache && ct_on &&
		ipt -t mangle -A PREROUTING -m rtcache ! --cached -m rpfilter --invert -j DROP
}
cfg_e_rtc_off() { mangle_off; ct_off; rtc_off; }

cfg_e_ret_check() { cfg_e_rtc_check; }
cfg_e_ret_on() {
	rtc_on && load_module xt_rtcache && ct_on &&
		ipt -t mangle -N rpf &&
		ipt -t mangle -A rpf -m rtcache -j RETURN &&
		ipt -t mangle -A rpf -m rpfilter --invert -j DROP &&
		ipt -t mangle -A PREROUTING -j rpf
}
cfg_e_ret_off() { cfg_e_rtc_off; }

# churn_on : every packet gets another routing input: IPv6 its flow label
# (the first 32-bit word of the header, version 6, traffic class 0, label
# from a counter: nft 1.0.6 sets only constants into sub-byte fields, and
# a whole word needs no read-modify-write), IPv4 its mark (the DSCP is a
# sub-byte field too, and a raw write would leave the header checksum
# wrong).
churn_on() {
	local set='@nh,0,32 set numgen inc mod 1048576 offset 0x60000000'
	[ "$FAM" = 6 ] || set='meta mark set numgen inc mod 1048576'
	in_rtr nft -f - <<EOF
table inet churn {
	chain pre {
		type filter hook prerouting priority mangle;
		meta nfproto ipv$FAM $set
	}
}
EOF
}
churn_off() { in_rtr nft delete table inet churn; }
cfg_b_churn_on() { churn_on && cfg_b_on; }
cfg_b_churn_off() { cfg_b_off; churn_off; }
cfg_c_churn_check() { rtc_check; }
cfg_c_churn_on() { churn_on && cfg_c_on; }
cfg_c_churn_off() { cfg_c_off; churn_off; }

# Many connections. conntrack's limit is raised for them (stock for this
# guest's memory: 65,536, the number of its hash buckets, which stays);
# their entries are flushed afterwards so that they do not lengthen the
# hash chains of the rows that follow.
SPORTS_b_10k=100 DPORTS_b_10k=101 WARMUP_b_10k=20200
SPORTS_c_10k=100 DPORTS_c_10k=101 WARMUP_c_10k=20200
SPORTS_b_100k=316 DPORTS_b_100k=317 WARMUP_b_100k=200344
SPORTS_c_100k=316 DPORTS_c_100k=317 WARMUP_c_100k=200344
SPORTS_b_1m=1000 DPORTS_b_1m=1001 WARMUP_b_1m=2002000
SPORTS_c_1m=1000 DPORTS_c_1m=1001 WARMUP_c_1m=2002000
conns() { local a=SPORTS_$1 b=DPORTS_$1; echo $((${!a} * ${!b})); }

# kmem_kb : kernel memory in kB that connections take: Slab + VmallocUsed
# + Percpu of /proc/meminfo, after every slab cache gave back its empty
# slabs (else entries freed by an earlier row would be reused unseen).
kmem_kb() {
	local f k v sum=0
	for f in /sys/kernel/slab/*/shrink; do echo 1 >"$f" 2>/dev/null; done
	while read -r k v _; do
		case $k in Slab: | VmallocUsed: | Percpu:) sum=$((sum + v)) ;; esac
	done </proc/meminfo
	echo $sum
}
# The UDP timeout (30 s without a reply) is raised in the router for these
# rows: guest time jumps ahead while the guest waits for the host (9p
# reads of every command run; icount with sleep=off), and the entries of
# a warm-up expired before the measurement (seen: 10,100 of 10,100 gone).
# scale_on N : room for N connections
scale_on() {
	local max=262144 hs=/sys/module/nf_conntrack/parameters/hashsize
	[ -s /tmp/bench-ctmax ] || sysctl -n net.netfilter.nf_conntrack_max >/tmp/bench-ctmax || return 1
	[ -s /tmp/bench-udpto ] || in_rtr sysctl -n net.netfilter.nf_conntrack_udp_timeout >/tmp/bench-udpto || return 1
	[ -s /tmp/bench-hashsize ] || cat $hs >/tmp/bench-hashsize || return 1
	if [ "$1" -gt $max ]; then
		max=$(($1 + $1 / 8))
		echo 1048576 >$hs || return 1
	fi
	sysctl -qw net.netfilter.nf_conntrack_max=$max || return 1
	in_rtr sysctl -qw net.netfilter.nf_conntrack_udp_timeout=3600 || return 1
	in_rtr conntrack -F 2>/dev/null
	kmem_kb >/tmp/bench-kmem0
}
# rtc_entries : entries in the router's rtcache table (0 without the module)
rtc_entries() {
	in_rtr bash -c '{ read -r _; read -r e _; } </proc/net/stat/nf_conntrack_rtcache 2>/dev/null; echo $((16#${e:-0}))'
}
# route_change_pass ROW : with the row's connections in place, a pass of
# one packet per connection (guest ns per packet: the whole path's
# instructions, as the rows), then a route change that concerns them (a
# host route to the receiver, same device, added and deleted: IPv4 makes
# every cached route stale, IPv6 those below the changed prefix; nothing is
# walked) and the same pass again: each connection's next packet finds its
# entry stale and records again.
route_change_pass() {
	local n t0 t2 host
	n=$(conns "$1")
	host=$dst/$([ "$FAM" = 4 ] && echo 32 || echo 128)
	_pg $PG_DEV "count $n"
	pg_run && t0=$(pg_elapsed_us)
	in_rtr ip -$FAM route add "$host" dev r1 && in_rtr ip -$FAM route del "$host" dev r1
	pg_run && t2=$(pg_elapsed_us)
	_pg $PG_DEV "count $BENCH_PKTS"
	[ -n "${t0:-}" ] && [ -n "${t2:-}" ] || return 0
	log "IPv$FAM $1: pass over $n connections ${t0} guest-us; after a route change ${t2} guest-us"
	csv "rtcache,$FAM,$1,,pass_ns_per_pkt=$((t0 * 1000 / n))"
	csv "rtcache,$FAM,$1,,pass_rtchg_ns_per_pkt=$((t2 * 1000 / n))"
}
# rtnl_churn ROW : with the row's entries in place, a container's veth
# comes and goes in the router netns (add, up, down, del; it carries none
# of the connections): the longest time rtcache's netdev notifier held RTNL
# in one call, and how long the worker's walk that releases stale entries
# took, both from the function graph tracer (guest us; c rows only).
rtnl_churn() {
	local t=/sys/kernel/tracing n us walk calls
	[ -e $t/set_graph_function ] || t=/sys/kernel/debug/tracing
	grep -qw rtc_netdev_event $t/available_filter_functions 2>/dev/null || return 0
	n=$(rtc_entries)
	echo 'rtc_netdev_event rtc_gc_work' >$t/set_graph_function || return 0
	echo 1 >$t/max_graph_depth
	echo function_graph >$t/current_tracer
	echo >$t/trace
	in_rtr ip link add vchurn type veth peer name vchurn1 &&
		in_rtr ip link set vchurn up && in_rtr ip link set vchurn down &&
		in_rtr ip link del vchurn
	# the walk the down and del queued: the worker runs it soon after
	in_rtr bash -c 'exec 3<> <(:); read -rt 2 -u 3 || :'
	# "rtc_netdev_event [mod]();" lines carry their duration before "us"
	us=$(awk '/rtc_netdev_event/ { for (i = 1; i < NF; i++) if ($(i + 1) == "us" && $i > m) m = $i } END { print m + 0 }' $t/trace)
	calls=$(grep -c 'rtc_netdev_event' $t/trace)
	walk=$(awk '/rtc_gc_work/ { for (i = 1; i < NF; i++) if ($(i + 1) == "us" && $i > m) m = $i } END { print m + 0 }' $t/trace)
	echo nop >$t/current_tracer
	echo >$t/set_graph_function
	log "IPv$FAM $1: veth add/up/down/del with $n entries: rtcache's netdev notifier held RTNL at most $us guest-us per call ($calls calls); the worker's longest run $walk guest-us"
	csv "rtcache,$FAM,$1,,rtnl_notifier_max_us=$us"
	csv "rtcache,$FAM,$1,,churn_worker_max_us=$walk"
}
# scale_teardown ROW : with the rows' connections still in place, what
# removing them costs (c rows). Odd rounds: a veth's churn (rtnl_churn),
# then the flush sysctl's walk (the walk the worker makes after a device
# went down, in the worker instead of under RTNL), in guest nanoseconds
# per entry. Even rounds: conntrack -F, then the time the
# reclaim worker takes to empty the table without traffic (no refused
# insert brings it forward), in entries per guest second. Guest time
# advances with the instructions run (icount), so both count work done.
scale_teardown() {
	local n t r f=/tmp/bench-teardown-$1-$FAM
	route_change_pass "$1"
	n=$(rtc_entries)
	[ "$n" -gt 0 ] || return 0
	r=$(($(cat "$f" 2>/dev/null || echo 0) + 1))
	echo $r >"$f"
	if ((r % 2)); then
		rtnl_churn "$1"
		t=$(in_rtr bash -c 't0=${EPOCHREALTIME/./}; echo 1 >/proc/sys/net/netfilter/nf_conntrack_rtcache_flush; echo $((${EPOCHREALTIME/./} - t0))')
		log "IPv$FAM $1: flush walk over $n entries: $t guest-us"
		csv "rtcache,$FAM,$1,,flush_ns_per_entry=$((t * 1000 / n))"
		return 0
	fi
	t=$(in_rtr bash -c 't0=${EPOCHREALTIME/./}; conntrack -F 2>/dev/null; echo $((${EPOCHREALTIME/./} - t0))')
	log "IPv$FAM $1: conntrack -F of $n connections: $t guest-us"
	csv "rtcache,$FAM,$1,,ctflush_ms=$((t / 1000))"
	# (read -t on a pipe this shell also holds open: a sleep without exec)
	t=$(in_rtr bash -c 'exec 3<> <(:); t0=${EPOCHREALTIME/./}
		for ((i = 0; i < 6000; i++)); do
			{ read -r _; read -r e _; } </proc/net/stat/nf_conntrack_rtcache
			[ $((16#$e)) -eq 0 ] && break
			read -rt 0.1 -u 3 || :
		done
		echo $((${EPOCHREALTIME/./} - t0)) $((16#$e))')
	log "IPv$FAM $1: reclaim after conntrack -F: ${t% *} guest-us, ${t#* } entries left"
	[ "${t#* }" -eq 0 ] && csv "rtcache,$FAM,$1,,reclaim_per_s=$((n * 1000000 / ${t% *}))"
}
scale_off() {
	scale_teardown "$1"
	in_rtr conntrack -F 2>/dev/null
	sysctl -qw net.netfilter.nf_conntrack_max="$(cat /tmp/bench-ctmax)"
	cat /tmp/bench-hashsize >/sys/module/nf_conntrack/parameters/hashsize
	in_rtr sysctl -qw net.netfilter.nf_conntrack_udp_timeout="$(cat /tmp/bench-udpto)"
}
# scale_warm CONFIG ROUND : after the warm-up, the memory the connections
# took (CSV: bytes_per_conn=N, conntrack entries).
scale_warm() {
	local n k0 k1 ct i
	n=$(conns "$1")
	# a warm-up that lost packets (backlog drops) or whose entries expired
	# left connections out: another pass over all of them, up to 3
	for ((i = 0; i < 3; i++)); do
		ct=$(in_rtr conntrack -C 2>/dev/null)
		[ "${ct:-0}" -lt "$n" ] || break
		log "IPv$FAM $1 round $2: $ct of $n connections after the warm-up; once more"
		_pg $PG_DEV "count $n"
		pg_run
		_pg $PG_DEV "count $BENCH_PKTS"
	done
	k0=$(cat /tmp/bench-kmem0)
	k1=$(kmem_kb)
	ct=$(in_rtr conntrack -C 2>/dev/null)
	log "IPv$FAM $1 round $2: $n connections, conntrack entries $ct, kernel memory +$((k1 - k0)) kB; rtcache stats after the warm-up: $(in_rtr cat /proc/net/stat/nf_conntrack_rtcache 2>/dev/null | tr '\n' '|')"
	csv "rtcache,$FAM,$1,,bytes_per_conn=$(((k1 - k0) * 1024 / n))"
	csv "rtcache,$FAM,$1,,conntrack_entries=$ct"
}
# cfg_{b,c}_{10k,100k}_{on,warm,off} (and _check for c): (b) or (c) with
# the flows of SPORTS_/DPORTS_
for _row in b c; do
	for _n in 10k 100k 1m; do
		eval "cfg_${_row}_${_n}_on() { cfg_${_row}_on && scale_on $(conns ${_row}_${_n}); }
		      cfg_${_row}_${_n}_warm() { scale_warm ${_row}_${_n} \"\$1\"; }
		      cfg_${_row}_${_n}_off() { scale_off ${_row}_${_n}; cfg_${_row}_off; }"
		[ $_row = b ] || eval "cfg_${_row}_${_n}_check() { rtc_check; }"
	done
done
unset _row _n

# b_tstamp: (b) while a socket in the router netns asks for receive
# timestamps (SO_TIMESTAMP): the kernel then stamps every packet it
# receives, in every netns (the netstamp_needed static key), on each veth
# hop. A candidate for the slow mode (bench/README.md, "Two modes").
# (_on runs in a command substitution, whose end must not wait for the
# socket's process: no inherited output; its pid goes through a file)
cfg_b_tstamp_on() {
	cfg_b_on || return 1
	in_rtr perl -e 'use Socket; socket(my $s, PF_INET, SOCK_DGRAM, 0) or die;
		setsockopt($s, SOL_SOCKET, 29, 1) or die "SO_TIMESTAMP: $!"; sleep 100000' \
		</dev/null >/dev/null 2>/tmp/bench-tstamp-err &
	echo $! >/tmp/bench-tstamp-pid
	sleep 1
	kill -0 $! 2>/dev/null || { echo "the SO_TIMESTAMP socket died: $(cat /tmp/bench-tstamp-err)"; return 1; }
}
cfg_b_tstamp_off() {
	kill "$(cat /tmp/bench-tstamp-pid 2>/dev/null)" 2>/dev/null
	cfg_b_off
	sleep 1
}

# Conntrack churn at the table's limit (b_ctfull, c_ctfull). Stats are
# read after the warm-up (_warm) and when the row is taken down (_off,
# right after the measurement): their difference is the measured run's.
SPORTS_b_ctfull=362 DPORTS_b_ctfull=363 WARMUP_b_ctfull=262812
SPORTS_c_ctfull=362 DPORTS_c_ctfull=363 WARMUP_c_ctfull=262812
# stat_col FILE COL : a column of a /proc/net/stat file of the router,
# summed over CPUs (hexadecimal)
stat_col() {
	local i idx=-1 sum=0 names vals
	{
		read -r -a names
		for i in "${!names[@]}"; do [ "${names[$i]}" = "$2" ] && idx=$i; done
		[ "$idx" -ge 0 ] || { echo 0; return 0; }
		while read -r -a vals; do sum=$((sum + 16#${vals[$idx]})); done
	} < <(in_rtr cat "$1" 2>/dev/null)
	echo $sum
}
ct_stat() { stat_col /proc/net/stat/nf_conntrack "$1"; }
rtc_col() { stat_col /proc/net/stat/nf_conntrack_rtcache "$1"; }
CTFULL_COLS="early_drop drop"
RTC_CTFULL_COLS="inserts reclaimed insert_failed churn_limited hits"
ctfull_snap() {
	local c
	for c in $CTFULL_COLS; do echo "ct_$c $(ct_stat $c)"; done
	for c in $RTC_CTFULL_COLS; do echo "rtc_$c $(rtc_col $c)"; done
	echo "rx $(rx_count)"
}
ctfull_on() {
	[ -s /tmp/bench-ctmax ] || sysctl -n net.netfilter.nf_conntrack_max >/tmp/bench-ctmax || return 1
	sysctl -qw net.netfilter.nf_conntrack_max=65536 || return 1
	in_rtr conntrack -F 2>/dev/null
	return 0
}
ctfull_warm() { ctfull_snap >/tmp/bench-ctfull0; }
# ctfull_report ROW : what happened during the measurement, per delivered
# packet, and the table sizes at its end
ctfull_report() {
	local k v rx0 rx1 d
	declare -A a
	while read -r k v; do a[$k]=$v; done </tmp/bench-ctfull0
	rx0=${a[rx]}
	while read -r k v; do
		if [ "$k" = rx ]; then rx1=$v; continue; fi
		a[$k]=$((v - ${a[$k]:-0}))
	done < <(ctfull_snap)
	d=$((rx1 - rx0))
	[ "$d" -gt 0 ] || return 0
	# (conntrack counts no confirmed insert; at a full table every new
	# connection evicts one: early drops are the new connections)
	csv "rtcache,$FAM,$1,,ct_new_per_kpkt=$((a[ct_early_drop] * 1000 / d))"
	csv "rtcache,$FAM,$1,,ct_dropped_per_kpkt=$((a[ct_drop] * 1000 / d))"
	[ "$1" = c_ctfull ] || return 0
	csv "rtcache,$FAM,$1,,rtc_records_per_kpkt=$((a[rtc_inserts] * 1000 / d))"
	csv "rtcache,$FAM,$1,,rtc_reclaimed_per_kpkt=$((a[rtc_reclaimed] * 1000 / d))"
	csv "rtcache,$FAM,$1,,rtc_refused_per_kpkt=$(((a[rtc_insert_failed] + a[rtc_churn_limited]) * 1000 / d))"
	csv "rtcache,$FAM,$1,,rtc_hits_per_kpkt=$((a[rtc_hits] * 1000 / d))"
	k=$(in_rtr conntrack -C 2>/dev/null)
	[ "${k:-0}" -gt 0 ] && csv "rtcache,$FAM,$1,,rtc_entries_pct_of_conns=$(($(rtc_entries) * 100 / k))"
	return 0
}
ctfull_off() {
	ctfull_report "$1"
	in_rtr conntrack -F 2>/dev/null
	sysctl -qw net.netfilter.nf_conntrack_max="$(cat /tmp/bench-ctmax)"
}
cfg_b_ctfull_on() { cfg_b_on && ctfull_on; }
cfg_b_ctfull_warm() { ctfull_warm; }
cfg_b_ctfull_off() { ctfull_off b_ctfull; cfg_b_off; }
cfg_c_ctfull_check() { rtc_check; }
cfg_c_ctfull_on() { cfg_c_on && ctfull_on; }
cfg_c_ctfull_warm() { ctfull_warm; }
cfg_c_ctfull_off() { ctfull_off c_ctfull; cfg_c_off; }

# Short connections (b_flow2, c_flow2, b_flow3, c_flow3; IPv4): pktgen
# keeps a flow's destination for "flowlen N" packets, then steps to the
# next address of 10.9.0.0/16 (the router routes it to the receiver, which
# takes the whole /16 as local: an address 10.9.0.1/16 on its loopback, not
# a "local" route, see "Two modes" in bench/README.md), so every
# connection is N packets and a run of
# 100,000 makes 50,000 (N=2) or 33,334 (N=3) new ones. conntrack is flushed
# after the warm-up: every connection measured is new. The cache records a
# connection on its second packet (the first one's connection is not
# confirmed yet): with 2 packets every record is paid and never used (its
# worst case), with 3 each record serves one packet.
FLOW_NET=10.9.0.0/16
DST_b_flow2=10.9.0.0 DST_c_flow2=10.9.0.0 DST_b_flow3=10.9.0.0 DST_c_flow3=10.9.0.0
flow_check() { [ "$FAM" = 4 ] || { echo "pktgen keeps only IPv4 destinations per flow"; return 1; }; }
flow_on() { # flow_on PACKETS_PER_CONNECTION
	ip -n $RCV link set lo up && ip -n $RCV addr replace 10.9.0.1/16 dev lo &&
		in_rtr ip route replace $FLOW_NET via 10.0.2.2 dev r1 &&
		_pg $PG_DEV "dst_max 10.9.255.255" && _pg $PG_DEV "flows 1" && _pg $PG_DEV "flowlen $1" &&
		_pg $PG_DEV "flag FLOW_SEQ"
}
# flow_warm : an empty conntrack table (and cache) before the measurement;
# entries still referenced (by packets or the cache) go a moment after the
# flush, so wait until the count is 0 (5 s at most, then say so)
flow_warm() {
	local i n
	for ((i = 0; i < 25; i++)); do
		in_rtr conntrack -F 2>/dev/null
		in_rtr sh -c 'f=/proc/sys/net/netfilter/nf_conntrack_rtcache_flush; [ ! -e $f ] || echo 1 >$f'
		n=$(in_rtr cat /proc/sys/net/netfilter/nf_conntrack_count)
		[ "$n" = 0 ] && break
		sleep 0.2
	done
	[ "$n" = 0 ] || log "IPv$FAM: $n conntrack entries left after the flush"
	ctfull_snap >/tmp/bench-flow0
}
# flow_off ROW : per 1000 packets delivered in the measurement: new
# connections (conntrack's count, flushed before it), rtcache records and
# hits; then back to one destination and no flows
flow_off() {
	local k v d n
	declare -A a
	while read -r k v; do a[$k]=$v; done </tmp/bench-flow0
	d=$(($(rx_count) - ${a[rx]:-0}))
	n=$(in_rtr conntrack -C 2>/dev/null)
	if [ "$d" -gt 0 ]; then
		csv "rtcache,$FAM,$1,,ct_conns_per_kpkt=$((${n:-0} * 1000 / d))"
		if [ "${1#c_}" != "$1" ]; then
			csv "rtcache,$FAM,$1,,rtc_records_per_kpkt=$((($(rtc_col inserts) - a[rtc_inserts]) * 1000 / d))"
			csv "rtcache,$FAM,$1,,rtc_hits_per_kpkt=$((($(rtc_col hits) - a[rtc_hits]) * 1000 / d))"
		fi
	fi
	in_rtr conntrack -F 2>/dev/null
	_pg $PG_DEV "dst_max 0.0.0.0"
	_pg $PG_DEV "flows 0"
	_pg $PG_DEV "flag !FLOW_SEQ"
	in_rtr ip route del $FLOW_NET 2>/dev/null
	ip -n $RCV addr del 10.9.0.1/16 dev lo 2>/dev/null
	return 0
}
for n in 2 3; do
	eval "cfg_b_flow${n}_check() { flow_check; }
cfg_b_flow${n}_on() { cfg_b_on && flow_on $n; }
cfg_b_flow${n}_warm() { flow_warm; }
cfg_b_flow${n}_off() { flow_off b_flow$n; cfg_b_off; }
cfg_c_flow${n}_check() { flow_check && rtc_check; }
cfg_c_flow${n}_on() { cfg_c_on && flow_on $n; }
cfg_c_flow${n}_warm() { flow_warm; }
cfg_c_flow${n}_off() { flow_off c_flow$n; cfg_c_off; }"
done

routes_file() { if [ "$FAM" = 6 ]; then echo "${BENCH_ROUTES6:-}"; else echo "${BENCH_ROUTES4:-}"; fi; }
ROUTES_LOADED=
big_check() {
	[ -n "$ROUTES_LOADED" ] || { echo "routes not loaded"; return 1; }
}
cfg_b_big_check() { big_check; }
cfg_b_big_on() { cfg_b_on; }
cfg_b_big_off() { cfg_b_off; }
cfg_c_big_check() { big_check && rtc_check; }
cfg_c_big_on() { cfg_c_on; }
cfg_c_big_off() { cfg_c_off; }

# load_routes : the Internet-sized table into the router's main table, in
# chunks of BENCH_ROUTE_CHUNK lines with a pause in between (500,000 routes
# in one ip -batch got ip OOM-killed once; with pauses the router's table
# takes about 75 MB of slab). The load time printed is guest time including
# the pauses and 9p waits (fast-forwarded by icount), not a rate.
load_routes() {
	local f n t0 t1 part chunk=${BENCH_ROUTE_CHUNK:-50000}
	ROUTES_LOADED=
	f=$(routes_file)
	[ -n "$f" ] && [ -r "$f" ] || { log "no route file for IPv$FAM"; return 0; }
	n=$(wc -l <"$f")
	t0=$EPOCHREALTIME
	# one read over 9p, then chunks from tmpfs
	rm -rf /tmp/routes && mkdir /tmp/routes && split -l "$chunk" "$f" /tmp/routes/part.
	for part in /tmp/routes/part.*; do
		if ! ip -n $RTR -batch "$part" >/dev/null; then
			log "ip -batch $part of $f failed; $(grep -E 'MemFree|^Slab' /proc/meminfo | tr -s ' \n' ' ')"
			dmesg | grep -iE 'out of memory|killed process' | tail -n 3 >&2
			meta note "IPv$FAM: loading $n routes with ip -batch failed."
			rm -rf /tmp/routes
			unload_routes
			return 0
		fi
		sleep 0.5
	done
	rm -rf /tmp/routes
	t1=$EPOCHREALTIME
	ROUTES_LOADED=1
	log "IPv$FAM: $n routes loaded in $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }') guest-s; main table: $(ip -n $RTR -"$FAM" route show table main | wc -l) routes; $(grep -E 'MemFree|^Slab' /proc/meminfo | tr -s ' \n' ' ')"
}

unload_routes() {
	ip -n $RTR -"$FAM" route flush table main proto static 2>/dev/null
	ROUTES_LOADED=
}

topo_setup
trap topo_teardown EXIT
direct_setup
meta base b
meta direct n
# a row's value is its fastest round: any row sometimes runs in a mode that
# costs up to 280 instructions per packet more (bench/README.md, "Two modes")
meta estimator min
label n "(n) no router: sender and receiver on one veth pair"
label a "(a) no conntrack"
label b "(b) conntrack + rp_filter=1 (IPv6: conntrack only)"
label b0 "(b0) conntrack, rp_filter=0"
label c "(c) (b) + rtcache"
label d "(d) (b) + nft flowtable"
label e "(e) conntrack + -m rpfilter"
label e_rtc "(e) + -m rtcache ! --cached -m rpfilter (one rule)"
label e_ret "(e) + -m rtcache -j RETURN before -m rpfilter (chain)"
label b_churn "(b), flow label (IPv4: mark) new every packet"
label c_churn "(c), flow label (IPv4: mark) new every packet"
label b_10k "(b) with 10,100 connections"
label c_10k "(c) with 10,100 connections"
label b_100k "(b) with 100,172 connections"
label c_100k "(c) with 100,172 connections"
label b_1m "(b) with 1,001,000 connections"
label c_1m "(c) with 1,001,000 connections"
label b_tstamp "(b) while a socket asks for receive timestamps (SO_TIMESTAMP)"
label b_ctfull "(b), conntrack full and churning (131,406 tuples, 65,536 connections)"
label c_ctfull "(c), conntrack full and churning (131,406 tuples, 65,536 connections)"
label b_flow2 "(b), connections of 2 packets (50,000 new per run)"
label c_flow2 "(c), connections of 2 packets (50,000 new per run)"
label b_flow3 "(b), connections of 3 packets (33,334 new per run)"
label c_flow3 "(c), connections of 3 packets (33,334 new per run)"
label b_big "(b) with Internet-sized table"
label c_big "(c) with Internet-sized table"
meta note "conntrack: nft table inet, forward chain, one 'ct state invalid drop' rule. rp_filter: net.ipv4.conf.{all,r0}.rp_filter=1; (e): no sysctl, iptables-legacy/ip6tables-legacy mangle PREROUTING '-m rpfilter --invert -j DROP' (IPv6 has no rp_filter sysctl, so IPv6 (b) is conntrack only). Internet-sized table: ${BENCH_ROUTES4_N:-?} IPv4 and ${BENCH_ROUTES6_N:-?} IPv6 routes in the router's main table (ip -batch), none covering the test addresses."
meta seed "Seed (netperf UDP_STREAM 64 B, IPv4): (b) -> (c) 1.31x, (a) 1.61x of (b)."
# BENCH_RTC_CONFIGS: only these configurations (and no Internet-sized table
# unless b_big or c_big is among them)
want() {
	local c out=
	for c in "$@"; do
		case " ${BENCH_RTC_CONFIGS:-$*} " in *" $c "*) out+=" $c" ;; esac
	done
	echo "$out"
}
for FAM in $FAMS; do
	if [ "$FAM" = 6 ]; then dst=fd00:2::2 DST_n=fd00:3::2; else dst=10.0.2.2 DST_n=10.0.3.2; fi
	# shellcheck disable=SC2046
	run_configs rtcache "$FAM" $dst $(want n a b b0 c d e e_rtc e_ret b_churn c_churn b_10k c_10k b_100k c_100k b_ctfull c_ctfull b_flow2 c_flow2 b_flow3 c_flow3)
	# a million connections, diagnostics: only when asked for by name
	if [ -n "${BENCH_RTC_CONFIGS:-}" ]; then
		# shellcheck disable=SC2046
		run_configs rtcache "$FAM" $dst $(want b_1m c_1m b_tstamp)
	fi
	big=$(want b_big c_big)
	[ -n "$big" ] || continue
	load_routes
	# shellcheck disable=SC2086
	run_configs rtcache "$FAM" $dst $big
	unload_routes
done
