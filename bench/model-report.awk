# bench/model-report.awk: the modeled rows of a table (BENCH_MODEL=1 bench/run).
#
#   awk -v pkts=N -v title=T -f bench/model-report.awk LABELS MODEL CSV
#
# LABELS: line N is "table,family,config,round" of the plugin's interval N
# (bench/model.sh); MODEL: the plugin's output (bench/cachesim.c: one
# "interval=N insns=... l1i_miss=... cycles=..." line per interval); CSV:
# the table's measurements (table,family,config,round,pps,delivered), for
# the instruction count icount measured in the same run. Of several
# intervals with one label (tries of one measurement) the last is kept, as
# lib.sh measure keeps it. Per configuration, the round with the median
# modeled cycles is shown; per packet = per interval / pkts; speed vs the
# family's first row = its cycles / this row's (as pps ratios are).
BEGIN { FS = "," }
FILENAME == ARGV[1] {
	label[FNR] = $0
	next
}
FILENAME == ARGV[2] {
	if ($0 !~ /^interval=/)
		next
	n = split($0, f, " ")
	delete v
	for (i = 1; i <= n; i++) {
		split(f[i], kv, "=")
		v[kv[1]] = kv[2]
	}
	l = label[v["interval"]]
	if (l == "")
		next
	split(l, p, ",")
	key = p[2] SUBSEP p[3]
	if (!(key in seen)) {
		seen[key] = 1
		order[++nkeys] = key
	}
	r = p[4]
	if (!((key, r) in has)) {
		has[key, r] = 1
		nr[key]++
		rounds[key, nr[key]] = r
	}
	ins[key, r] = v["insns"]; cyc[key, r] = v["cycles"]
	m1i[key, r] = v["l1i_miss"]; m1d[key, r] = v["l1d_miss"]
	m2[key, r] = v["l2_miss"]; m3[key, r] = v["llc_miss"]
	unterminated[key, r] = ($0 ~ /unterminated/)
	next
}
{
	# CSV: table,family,config,round,pps,delivered
	if ($5 ~ /^[0-9]+$/ && $5 > 0)
		icount[$2 SUBSEP $3, $4] = 1e9 / $5
}
function median_round(key,    i, j, t, a, n) {
	n = nr[key]
	for (i = 1; i <= n; i++)
		a[i] = rounds[key, i]
	for (i = 2; i <= n; i++)	# insertion sort by cycles
		for (j = i; j > 1 && cyc[key, a[j]] + 0 < cyc[key, a[j - 1]] + 0; j--) {
			t = a[j]; a[j] = a[j - 1]; a[j - 1] = t
		}
	return a[int((n + 1) / 2)]
}
END {
	if (title != "")
		printf "### %s, modeled\n\n", title
	print "| family | configuration | instr/pkt (icount) | instr/pkt (model) | L1I miss/pkt | L1D miss/pkt | L2 miss/pkt | LLC miss/pkt | modeled cycles/pkt | cycles/instr | speed vs first row |"
	print "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
	for (k = 1; k <= nkeys; k++) {
		key = order[k]
		split(key, p, SUBSEP)
		r = median_round(key)
		c = cyc[key, r] / pkts
		if (!(p[1] in base))
			base[p[1]] = c
		ic = ((key, r) in icount) ? sprintf("%.0f", icount[key, r]) : "-"
		printf "| IPv%s | %s | %s | %.0f | %.2f | %.2f | %.2f | %.2f | %.0f | %.3f | %.3fx |%s\n",
			p[1], p[2], ic, ins[key, r] / pkts, m1i[key, r] / pkts, m1d[key, r] / pkts,
			m2[key, r] / pkts, m3[key, r] / pkts, c, ins[key, r] ? cyc[key, r] / ins[key, r] : 0,
			base[p[1]] / c, unterminated[key, r] ? " (interval not closed)" : ""
	}
	printf "\nRounds per row: the median of %s by modeled cycles. Model: bench/README.md, \"Modeled cycles\".\n", \
		nkeys ? nr[order[1]] : 0
}
