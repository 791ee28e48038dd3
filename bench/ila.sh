#!/bin/bash
# ILA benchmark tables, run inside the benchmark VM by bench/run:
#   bench/ila.sh ila      prefix translation: stock DNPT, -j ILA, native nft
#   bench/ila.sh ilamap   -j ILA --map with 1 and 1,000,000 entries, batch load rate
#   bench/ila.sh ilascale maps of 10,000,000 entries: cost per hit, memory per
#                         entry, load rate, swap under traffic, save
#
#   sender (pktgen) s0 ---- r0  router  r1 ---- d0 receiver
#   fd00:1::2         fd00:1::1   |      fd00:2::1       3333:0:0:1::2
#                                 |
#     sends to 2001:db8:0:3::2; the router translates the destination at
#     PREROUTING (mangle) to 3333:0:0:1::2 and forwards it to the receiver.
#     "no translation": the sender uses 3333:0:0:1::2 itself, no rules.
set -u
. "$(dirname "$0")/lib.sh"

table=${1:?usage: ila.sh ila|ilamap}
SIR=2001:db8:0:3
LOC=3333:0:0:1
DST=$SIR::2
DST_direct=$LOC::2
DST_hook_noop=$LOC::2	# not translated: sent to the locator like "direct"
DST_hook_noop16=$LOC::2
DST_hook_noop256=$LOC::2
DST_hook_noop256mix=$LOC::2

i6l() { in_rtr ip6tables-legacy "$@"; }
i6n() { in_rtr ip6tables-nft "$@"; }

# Legacy tables stay hooked into the netns once used: remove the table
# module after each configuration, so the next one starts clean.
legacy_off() {
	i6l -t mangle -F
	unload_module ip6table_mangle
}
nft_off() {
	i6n -t mangle -F 2>/dev/null
	in_rtr nft delete table ip6 mangle 2>/dev/null
	in_rtr nft delete table ip6 ila 2>/dev/null
	true
}

cfg_direct_on() { :; }
cfg_direct_off() { :; }

NPT="-d $SIR::/64 -j DNPT --src-pfx $SIR::/64 --dst-pfx $LOC::/64"
# DNPT (RFC 6296) is checksum-neutral: for a /64 it puts the adjustment
# into the first identifier word, so $SIR::2 becomes $LOC:ADJ::2, not
# $LOC::2. The receiver owns that address too (and the router knows its
# neighbour entry), so the packets are delivered like the others.
# npt_word : ADJ = ~(~(sum src prefix) + sum dst prefix) in one's complement.
ones_add() { local s=$(($1 + $2)); echo $(((s & 0xffff) + (s >> 16))); }
npt_word() {
	local s=0 d=0 w
	for w in ${SIR//:/ }; do s=$(ones_add $s $((16#$w))); done
	for w in ${LOC//:/ }; do d=$(ones_add $d $((16#$w))); done
	# adjustment = ~(s - d); new word = ~(0 + adjustment) = s - d = s + ~d
	printf '%x' "$(ones_add $s $((~d & 0xffff)))"
}
dnpt_setup() {
	local a
	a=$LOC:$(npt_word)::2
	ip -n $RCV -6 addr add "$a/64" dev d0 nodad
	ip -n $RTR neigh replace "$a" lladdr "$DMAC" dev r1 nud permanent
	log "DNPT maps $SIR::2 to $a"
}
cfg_dnpt_legacy_on() { i6l -t mangle -A PREROUTING $NPT; }
cfg_dnpt_legacy_off() { legacy_off; }
cfg_dnpt_nft_on() { i6n -t mangle -A PREROUTING $NPT; }
cfg_dnpt_nft_off() { nft_off; }

ILA="-d $SIR::/64 -j ILA --src-pfx $SIR::/64 --dst-pfx $LOC::/64"
ila_check() {
	need_module xt_ILA && need_plugin ILA
}
ila_load() {
	load_module xt_ILA || return 1
}
cfg_ila_legacy_check() { ila_check; }
cfg_ila_legacy_on() { ila_load && i6l -t mangle -A PREROUTING $ILA; }
cfg_ila_legacy_off() { legacy_off; }
cfg_ila_nft_check() { ila_check; }
cfg_ila_nft_on() { ila_load && i6n -t mangle -A PREROUTING $ILA; }
cfg_ila_nft_off() { nft_off; }

cfg_nft_native_on() {
	in_rtr nft -f - <<EOF
table ip6 ila {
	chain pre {
		type filter hook prerouting priority mangle;
		ip6 daddr $SIR::/64 ip6 daddr set ip6 daddr & ::ffff:ffff:ffff:ffff | $LOC::
	}
}
EOF
}
cfg_nft_native_off() { nft_off; }

# ---- direct hooks (nf_ila, ilactl hook) ---------------------------------------
# nf_ila stays loaded between configurations (it holds the maps); with no
# hook it has no hook in the packet path.

hook_check() { need_module nf_ila && need_bin ilactl; }
hook_on() { load_module nf_ila && in_rtr ilactl hook add bench prerouting src-pfx $SIR::/64 "$@"; }
hook_off() { in_rtr ilactl hook del bench; }
cfg_hook_static_check() { hook_check; }
cfg_hook_static_on() { hook_on dst-pfx $LOC::/64; }
cfg_hook_static_off() { hook_off; }
# a hook whose prefix never matches: what the hook invocation costs
cfg_hook_noop_check() { hook_check; }
cfg_hook_noop_on() { load_module nf_ila && in_rtr ilactl hook add bench prerouting src-pfx 2001:db8:9::/64 dst-pfx $LOC::/64; }
cfg_hook_noop_off() { hook_off; }

# K named hooks at the same point and priority: one netfilter hook serving
# a table of K prefixes. hooks_batch K LENS: hooks p0..p(K-1) on prefixes
# 2001:db8:9:N::/64 (N = 0..K-1), or, with LENS=mix, an eighth of them /56
# (2001:db8:a:N00::/56) and an eighth /48 (2001:db8:N::/48 from N = 256
# up): three lengths, looked up longest first.
hooks_batch() {
	awk -v k="$1" -v mix="$2" -v loc=$LOC 'BEGIN {
		for (i = 0; i < k; i++) {
			if (mix == "mix" && i % 8 == 1)
				p = sprintf("2001:db8:a:%x00::/56 dst-pfx 3333:0:0:ff00::/56", i)
			else if (mix == "mix" && i % 8 == 2)
				p = sprintf("2001:db8:%x::/48 dst-pfx 3333:0:ff::/48", 256 + i)
			else
				p = sprintf("2001:db8:9:%x::/64 dst-pfx %s::/64", i, loc)
			printf "hook add p%d prerouting src-pfx %s\n", i, p
		}
	}' >/tmp/hooks-$1-$2
}
hooks_on() { # K LENS [match]: K hooks, the last one translating $SIR::/64 if match
	local k=$1
	load_module nf_ila || return 1
	if [ "${3:-}" = match ]; then
		hooks_batch $((k - 1)) "$2"
		echo "hook add bench prerouting src-pfx $SIR::/64 dst-pfx $LOC::/64" >>/tmp/hooks-$((k - 1))-$2
		in_rtr ilactl -b /tmp/hooks-$((k - 1))-$2
	else
		hooks_batch "$k" "$2"
		in_rtr ilactl -b /tmp/hooks-$k-$2
	fi
}
hooks_off() { in_rtr ilactl -j hook list | jq -r '.[].name' | sed 's/^/hook del /' >/tmp/hooks-del && in_rtr ilactl -b /tmp/hooks-del; }
for k in 16 256; do
	eval "cfg_hook_static$k""_check() { hook_check; }
cfg_hook_static$k""_on() { hooks_on $k 64 match; }
cfg_hook_static$k""_off() { hooks_off; }
cfg_hook_noop$k""_check() { hook_check; }
cfg_hook_noop$k""_on() { hooks_on $k 64; }
cfg_hook_noop$k""_off() { hooks_off; }"
done
cfg_hook_static256mix_check() { hook_check; }
cfg_hook_static256mix_on() { hooks_on 256 mix match; }
cfg_hook_static256mix_off() { hooks_off; }
cfg_hook_noop256mix_check() { hook_check; }
cfg_hook_noop256mix_on() { hooks_on 256 mix; }
cfg_hook_noop256mix_off() { hooks_off; }

cfg_hook_map1_check() { hook_check && map_check; }
cfg_hook_map1_on() { hook_on map one; }
cfg_hook_map1_off() { hook_off; }
cfg_hook_map1m_check() { hook_check && cfg_map1m_check; }
cfg_hook_map1m_on() { hook_on map million; }
cfg_hook_map1m_off() { hook_off; }
# the same without per-entry hit counters (nf_ila entry_hits=N): what
# the counters of `ilactl map show -s` cost
ENTRY_HITS=/sys/module/nf_ila/parameters/entry_hits
cfg_hook_map1m_nohits_check() { cfg_hook_map1m_check && [ -w $ENTRY_HITS ]; }
cfg_hook_map1m_nohits_on() { echo N >$ENTRY_HITS && hook_on map million; }
cfg_hook_map1m_nohits_off() { hook_off; echo Y >$ENTRY_HITS; }

# ---- maps ---------------------------------------------------------------------

map_check() {
	need_module xt_ILA && need_plugin ILA && need_module nf_ila && need_bin ilactl
}
cfg_map1_check() { map_check; }
cfg_map1_on() { i6l -t mangle -A PREROUTING -d $SIR::/64 -j ILA --map one; }
cfg_map1_off() { legacy_off; }
cfg_map1m_check() {
	map_check || return 1
	[ -r "$BENCH_MAP_BATCH" ] || { echo "no batch file $BENCH_MAP_BATCH"; return 1; }
	[ -n "$MAP1M_OK" ] || { echo "loading 1,000,000 entries failed"; return 1; }
}
cfg_map1m_on() { i6l -t mangle -A PREROUTING -d $SIR::/64 -j ILA --map million; }
cfg_map1m_off() { legacy_off; }
cfg_ila_static_check() { ila_check; }
cfg_ila_static_on() { ila_load && i6l -t mangle -A PREROUTING $ILA; }
cfg_ila_static_off() { legacy_off; }

# maps_setup : maps "one" (identifier ::2 only) and "million" (1,000,000
# identifiers, ::2 among them, from the batch file bench/run wrote), and
# the batch load rate. The rate is the one ilactl -v reports: parsing and
# sending, after the file is read, in guest time (= instructions: a rate
# of R entries/s is 1e9/R instructions per entry, ilactl and kernel
# together). Wall time around ilactl would count the idle waits for 9p
# reads, which icount (sleep=off) fast-forwards to the next timer.
MAP1M_OK=
maps_setup() {
	local n out rate
	map_check >/dev/null || return 0
	load_module xt_ILA || return 0
	in_rtr ilactl map create one && in_rtr ilactl map add one 0:0:0:2 $LOC || return 0
	[ -r "$BENCH_MAP_BATCH" ] || return 0
	n=$(grep -c '^map add' "$BENCH_MAP_BATCH")
	in_rtr ilactl map create million max-entries 2000000 || return 0
	out=$(in_rtr ilactl -v -b "$BENCH_MAP_BATCH" 2>&1) || {
		log "ilactl -b failed: $out"
		meta note "Loading $n entries with ilactl -b failed: $(echo "$out" | tail -n 1)"
		return 0
	}
	log "ilactl -v -b: $out"
	MAP1M_OK=1
	rate=$(echo "$out" | sed -n 's/.* \([0-9.]*\) commands\/s.*/\1/p' | tail -n 1)
	meta loadrate "Batch load (ilactl -b, $n entries into an empty map): ${rate:-?} entries per guest-second, i.e. $(awk -v r="${rate:-0}" 'BEGIN { if (r > 0) printf "%.0f", 1e9 / r; else printf "?" }') instructions per entry (ilactl -v: $(echo "$out" | tail -n 1 | sed 's/^ilactl: //'))."
	csv "$table,6,batch_load,,entries_per_guest_s=${rate:-?}"
	log "map million: $(in_rtr ilactl map stats million | tr '\n' ' ')"
}

# ---- maps at scale (ilascale) -------------------------------------------------

# meminfo_kib FIELD... : the sum of /proc/meminfo's FIELDs, KiB
meminfo_kib() {
	awk -v f=" $* " 'index(f, " " substr($1, 1, length($1) - 1) " ") { n += $2 } END { print n + 0 }' /proc/meminfo
}

cfg_hook_map10m_check() { hook_check && [ -n "$MAP10M_OK" ] || { echo "loading the 10,000,000 entries failed"; return 1; }; }
cfg_hook_map10m_on() { hook_on map ten; }
cfg_hook_map10m_off() { hook_off; }
cfg_map10m_check() { map_check && [ -n "$MAP10M_OK" ] || { echo "loading the 10,000,000 entries failed"; return 1; }; }
cfg_map10m_on() { i6l -t mangle -A PREROUTING -d $SIR::/64 -j ILA --map ten; }
cfg_map10m_off() { legacy_off; }

# scale_setup : map "ten" from BENCH_MAP10M_BATCH (identifier 0:0:0:2 among
# them), its load rate and the kernel memory it takes per entry: the
# growth of Slab + VmallocUsed + Percpu over the load (entries, the hash
# table's buckets, everything), divided by the entries.
MAP10M_OK=
scale_setup() {
	local n out rate m0 m1 slab
	map_check >/dev/null || return 0
	load_module xt_ILA || return 0
	in_rtr ilactl map create one && in_rtr ilactl map add one 0:0:0:2 $LOC || return 0
	[ -r "$BENCH_MAP10M_BATCH" ] || return 0
	n=$(grep -c '^map add' "$BENCH_MAP10M_BATCH")
	in_rtr ilactl map create ten max-entries 12000000 || return 0
	echo 3 >/proc/sys/vm/drop_caches
	m0=$(meminfo_kib Slab VmallocUsed Percpu)
	out=$(in_rtr ilactl -v -b "$BENCH_MAP10M_BATCH" 2>&1) || {
		log "ilactl -b failed: $out"
		meta note "Loading $n entries with ilactl -b failed: $(echo "$out" | tail -n 1)"
		return 0
	}
	echo 3 >/proc/sys/vm/drop_caches
	m1=$(meminfo_kib Slab VmallocUsed Percpu)
	MAP10M_OK=1
	rate=$(echo "$out" | sed -n 's/.* \([0-9.]*\) commands\/s.*/\1/p' | tail -n 1)
	slab=$(awk '$1 == "nf_ila_map_entry" { printf "%d-byte objects, %d per %d-page slab", $4, $5, $6 }' /proc/slabinfo)
	[ -n "$slab" ] || slab="its objects merged into a cache of the same size"
	meta loadrate "Batch load (ilactl -b, $n entries into an empty map): ${rate:-?} entries per guest-second, i.e. $(awk -v r="${rate:-0}" 'BEGIN { if (r > 0) printf "%.0f", 1e9 / r; else printf "?" }') instructions per entry."
	meta note "Kernel memory per entry at $n entries: $(awk -v a="$m0" -v b="$m1" -v n="$n" 'BEGIN { printf "%.1f", (b - a) * 1024 / n }') bytes (growth of Slab + VmallocUsed + Percpu over the load: entries and hash table; the entry cache: $slab)."
	csv "$table,6,batch_load,,entries_per_guest_s=${rate:-?}"
	csv "$table,6,bytes_per_entry,,$(awk -v a="$m0" -v b="$m1" -v n="$n" 'BEGIN { printf "%.1f", (b - a) * 1024 / n }')"
	log "map ten: $(in_rtr ilactl map stats ten | tr '\n' ' ')"
}

# scale_swap : a hook on map "ten" under a stream of BENCH_PKTS packets to
# identifier 0:0:0:2 while `map swap ten one` runs in a loop: every packet
# must be translated and delivered whichever table it meets.
scale_swap() {
	local swaps=/tmp/swaps n c0 c1 u0 u1 sent
	[ -n "$MAP10M_OK" ] || return 0
	pg_setup 6 "$DST"
	hook_on map ten || return 0
	: >$swaps
	in_rtr sh -c 'while :; do ilactl map swap ten one && echo >>'$swaps'; done' 2>/dev/null &
	local loop=$!
	c0=$(rx_count) u0=$(udp_in 6)
	pg_run
	kill $loop 2>/dev/null
	wait $loop 2>/dev/null
	c1=$(rx_count) u1=$(udp_in 6)
	hook_off
	n=$(wc -l <$swaps)
	set -- $u0 $u1
	sent=$BENCH_PKTS
	meta note "Swap under traffic: $n swaps of the 10,000,000-entry map with a 1-entry map while $sent packets went through a hook on it: $((c1 - c0)) received, $(($3 - $1)) delivered intact (translated)."
	csv "$table,6,swap_under_traffic,,swaps=$n;sent=$sent;received=$((c1 - c0));delivered=$(($3 - $1))"
}

# scale_save : ilactl save of everything (11 million lines): guest time
# (instructions) and the tool's largest resident set.
scale_save() {
	local t0 t1 rss
	[ -n "$MAP10M_OK" ] || return 0
	t0=$(date +%s.%N)
	rss=$(in_rtr /usr/bin/time -f %M ilactl save 2>&1 >/tmp/saved | tail -n 1)
	t1=$(date +%s.%N)
	meta note "ilactl save of the 10,000,000 entries ($(wc -l </tmp/saved) lines, $(($(stat -c %s /tmp/saved) / 1048576)) MiB): $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }') guest-seconds (10^9 instructions each), largest resident set ${rss:-?} KiB."
	rm -f /tmp/saved
}

# ---- main ---------------------------------------------------------------------

topo_setup
trap topo_teardown EXIT
dnpt_setup
meta base direct
label direct "no translation (sender uses $LOC::2)"
case $table in
ila)
	label dnpt_legacy "DNPT, ip6tables-legacy"
	label dnpt_nft "DNPT, ip6tables-nft"
	label ila_legacy "-j ILA --src-pfx/--dst-pfx, ip6tables-legacy"
	label ila_nft "-j ILA --src-pfx/--dst-pfx, ip6tables-nft"
	label nft_native "nft: ip6 daddr set ip6 daddr & ::ffff:ffff:ffff:ffff | $LOC::"
	label hook_static "ilactl hook (direct hook), src-pfx/dst-pfx"
	label hook_noop "ilactl hook whose prefix never matches (the hook invocation alone)"
	label hook_static16 "16 ilactl hooks (one netfilter hook, 16 /64 prefixes), the packet's among them"
	label hook_noop16 "16 ilactl hooks, none matching"
	label hook_static256 "256 ilactl hooks (256 /64 prefixes), the packet's among them"
	label hook_noop256 "256 ilactl hooks, none matching"
	label hook_static256mix "256 ilactl hooks of /64, /56 and /48 prefixes, the packet's a /64 among them"
	label hook_noop256mix "256 ilactl hooks of /64, /56 and /48 prefixes, none matching"
	meta note "Router: one rule in mangle PREROUTING translating $SIR::/64 -> $LOC::/64 (destination); -j ILA in its default mode adjust-transport, like the nft rule."
	meta seed "Seed (netdev thread, TCP_RR): DNPT -10%, ILA direct hook -1.5%, vs no ILA."
	run_configs ila 6 $DST direct dnpt_legacy dnpt_nft ila_legacy ila_nft nft_native hook_static hook_noop \
		hook_static16 hook_noop16 hook_static256 hook_noop256 hook_static256mix hook_noop256mix
	;;
ilamap)
	label ila_static "-j ILA --src-pfx/--dst-pfx (static prefix), ip6tables-legacy"
	label map1 "-j ILA --map, 1 entry, ip6tables-legacy"
	label map1m "-j ILA --map, 1,000,000 entries, ip6tables-legacy"
	label hook_map1 "ilactl hook (direct hook) with a map, 1 entry"
	label hook_map1m "ilactl hook (direct hook) with a map, 1,000,000 entries"
	label hook_map1m_nohits "the same, per-entry hit counters off (nf_ila entry_hits=N)"
	meta note "Router: one rule in mangle PREROUTING (-d $SIR::/64); the map entry for identifier 0:0:0:2 has locator $LOC (adjust-transport)."
	maps_setup
	meta note "Per-entry hit counters: the cost is the ratio of the last two rows (one atomic increment per hit)."
	run_configs ilamap 6 $DST direct ila_static map1 map1m hook_map1 hook_map1m hook_map1m_nohits
	;;
ilascale)
	label hook_map1 "ilactl hook (direct hook) with a map, 1 entry"
	label hook_map10m "ilactl hook (direct hook) with a map, 10,000,000 entries"
	label map1 "-j ILA --map, 1 entry, ip6tables-legacy"
	label map10m "-j ILA --map, 10,000,000 entries, ip6tables-legacy"
	meta note "Router: the map entry for identifier 0:0:0:2 has locator $LOC (adjust-transport); the 10,000,000 identifiers are sequential."
	scale_setup
	run_configs ilascale 6 $DST direct hook_map1 hook_map10m map1 map10m
	scale_swap
	scale_save
	;;
*) die "unknown table $table" ;;
esac
