# bench/report.awk: one markdown table from a benchmark's raw results.
#
#   awk -v title=... -v kernel=... -f bench/report.awk NAME.meta NAME.csv
#
# NAME.meta (tab-separated, written by the guest scripts):
#   label:CONFIG <tab> text     row label, rows in this order
#   base <tab> CONFIG           the ratio column divides by this row
#   estimator <tab> min         rows show their fastest round, not the median
#   direct <tab> CONFIG         the row without a router (sender + receiver
#                               alone): adds the columns "router instr/pkt"
#                               (row minus it) and "router-only vs base"
#   note|seed|loadrate <tab> text   printed under the table
# NAME.csv: table,family,config,round,pps,delivered  or  table,family,config,,na:why
#           or table,family,config,,key=value (other figures; not printed)

function median(s,    n, a, i, j, t) {
	n = split(s, a, " ")
	for (i = 2; i <= n; i++)
		for (j = i; j > 1 && a[j - 1] + 0 > a[j] + 0; j--) {
			t = a[j]; a[j] = a[j - 1]; a[j - 1] = t
		}
	if (n % 2)
		return a[(n + 1) / 2]
	return (a[n / 2] + a[n / 2 + 1]) / 2
}
# best: the fastest round (most packets per second = fewest instructions)
function best(s,    n, a, i, hi) {
	n = split(s, a, " ")
	hi = a[1]
	for (i = 2; i <= n; i++)
		if (a[i] + 0 > hi + 0) hi = a[i]
	return hi
}
# est: a row's value from its rounds: the median, or with "estimator min"
# in the meta file the fastest round
function est(s) { return estimator == "min" ? best(s) : median(s) }
# spread: (max - min) / median of the rounds, in percent
function spread(s,    n, a, i, lo, hi) {
	n = split(s, a, " ")
	lo = hi = a[1]
	for (i = 2; i <= n; i++) {
		if (a[i] + 0 < lo + 0) lo = a[i]
		if (a[i] + 0 > hi + 0) hi = a[i]
	}
	return median(s) > 0 ? (hi - lo) / median(s) * 100 : 0
}
function count(s,    a) { return split(s, a, " ") }
# slow: rounds more than 0.5% slower than the row's fastest
function slow(s,    n, a, i, hi, k) {
	n = split(s, a, " ")
	hi = best(s)
	k = 0
	for (i = 1; i <= n; i++)
		if (a[i] + 0 < hi * 0.995) k++
	return k
}
function grp(x,    s, neg) {
	x = sprintf("%.0f", x)
	neg = x ~ /^-/
	if (neg) x = substr(x, 2)
	s = ""
	while (length(x) > 3) {
		s = "," substr(x, length(x) - 2) s
		x = substr(x, 1, length(x) - 3)
	}
	return (neg ? "-" : "") x s
}
function famname(f) {
	return f == "4" ? "IPv4" : f == "6" ? "IPv6" : f
}

BEGIN { FS = "\t"; nrows = 0; nfam = 0; nnotes = 0 }

FNR == 1 { file++ }

file == 1 {
	if ($1 ~ /^label:/) {
		c = substr($1, 7)
		if (!(c in label)) rows[++nrows] = c
		label[c] = $2
		gsub(/\|/, "\\|", label[c])
	} else if ($1 == "base") {
		base = $2
	} else if ($1 == "direct") {
		direct = $2
	} else if ($1 == "estimator") {
		estimator = $2
	} else {
		notes[++nnotes] = $2
	}
	next
}

file == 2 {
	n = split($0, f, ",")
	fam = f[2]; c = f[3]; v = f[5]
	if (c == "") next
	if (!(fam in famseen)) { famseen[fam] = 1; fams[++nfam] = fam }
	if (v ~ /=/ && f[4] == "") {	# key=value figures
		kvk = substr(v, 1, index(v, "=") - 1)
		kvv = substr(v, index(v, "=") + 1)
		kk = fam SUBSEP c SUBSEP kvk
		kv[kk] = (kk in kv ? kv[kk] " " : "") kvv
		if (!(c in label)) { label[c] = c; rows[++nrows] = c }
		next
	}
	if (!(c in label)) { label[c] = c; rows[++nrows] = c }
	k = fam SUBSEP c
	if (v ~ /^na:/) {
		why = substr(v, 4)
		if (f[4] == "")
			na[k] = why
		else
			failed[k] = why
		next
	}
	vals[k] = (k in vals ? vals[k] " " : "") v
	if (n >= 6 && f[6] != "" && f[6] + 0 < 0.999) bad[k] = 1
}

END {
	if (title != "") print "### " title "\n"
	hdr = "| configuration |"
	sep = "|---|"
	for (i = 1; i <= nfam; i++) {
		hdr = hdr " " famname(fams[i]) " pps | instr/pkt | vs base |"
		sep = sep "---:|---:|---:|"
		if (direct != "") {
			hdr = hdr " router instr/pkt | router-only vs base |"
			sep = sep "---:|---:|"
		}
	}
	print hdr
	print sep
	anybad = 0; anyfail = 0; maxsp = -1; maxn = 0
	for (r = 1; r <= nrows; r++) {
		c = rows[r]
		line = "| " label[c] (c == base ? " (base)" : "") " |"
		for (i = 1; i <= nfam; i++) {
			k = fams[i] SUBSEP c
			kb = fams[i] SUBSEP base
			kd = fams[i] SUBSEP direct
			# the router's own instructions per packet: this row's
			# median minus the no-router row's; ratio as for pps
			rcells = ""
			if (direct != "") {
				rcells = " — | — |"
				if (c != direct && k in vals && kd in vals && est(vals[k]) > 0 && est(vals[kd]) > 0) {
					ri = 1e9 / est(vals[k]) - 1e9 / est(vals[kd])
					rcells = " " grp(ri) " |"
					if (kb in vals && est(vals[kb]) > 0 && ri > 0) {
						rb = 1e9 / est(vals[kb]) - 1e9 / est(vals[kd])
						rcells = rcells sprintf(" %.3fx (%+.1f%%) |", rb / ri, (rb / ri - 1) * 100)
					} else
						rcells = rcells " |"
				}
			}
			if (k in vals) {
				m = est(vals[k])
				sp = spread(vals[k])
				if (sp >= maxsp) { maxsp = sp; maxspc = label[c] " " famname(fams[i]) }
				if (count(vals[k]) > maxn) maxn = count(vals[k])
				ns = slow(vals[k])
				if (ns) slows = slows (slows == "" ? "" : ", ") label[c] " " famname(fams[i]) " " ns "/" count(vals[k])
				cell = grp(m)
				if (k in bad) { cell = cell " (!)"; anybad = 1 }
				if (k in failed) { cell = cell " (*)"; anyfail = 1 }
				if (m > 0 && kb in vals && est(vals[kb]) > 0) {
					mb = est(vals[kb])
					ratio = sprintf("%.3fx (%+.1f%%)", m / mb, (m / mb - 1) * 100)
				} else
					ratio = ""
				line = line " " cell " | " (m > 0 ? grp(1e9 / m) : "") " | " ratio " |" rcells
			} else if (k in na) {
				line = line " n/a (" na[k] ") | | |" (direct != "" ? " | |" : "")
			} else if (k in failed) {
				line = line " n/a (" failed[k] ") | | |" (direct != "" ? " | |" : "")
			} else {
				line = line " | | |" (direct != "" ? " | |" : "")
			}
		}
		print line
	}
	print ""
	if (maxn && estimator == "min")
		printf "Fastest of %d interleaved rounds (fewest instructions per packet; see \"Two modes\" in bench/README.md); largest spread between rounds: %.2f%% (%s).  \n", maxn, maxsp, maxspc
	else if (maxn) printf "Median of %d interleaved rounds; largest spread between rounds: %.2f%% (%s).  \n", maxn, maxsp, maxspc
	if (slows != "") print "Rounds more than 0.5% slower than their row's fastest: " slows ".  "
	if (anybad) print "(!) some packets did not reach the receiver's UDP intact (wrong address or checksum)."
	if (anyfail) print "(*) the configuration failed to set up in some rounds; median of the others."
	# bench/rtcache.sh scale rows: kernel memory per connection, and what
	# removing the connections costs (median of the rounds)
	kvline("bytes_per_conn", " B", "Kernel memory per connection (growth of Slab + VmallocUsed + Percpu over the warm-up, slab caches shrunk before each reading, / connections; median of the rounds)")
	kvline("flush_ns_per_entry", " guest-ns", "rtcache flush walk (sysctl nf_conntrack_rtcache_flush=1, the walk of a link going down, synchronous under RTNL), per entry")
	kvline("ctflush_ms", " guest-ms", "conntrack -F of all the row's connections")
	kvline("pass_ns_per_pkt", " guest-ns", "One packet per connection, steady (whole path per packet, as the rows)")
	kvline("pass_rtchg_ns_per_pkt", " guest-ns", "The same pass right after a route change toward the receiver (a host route added and deleted: every cached route of the flows stale, each connection records again)")
	kvline("reclaim_per_s", " entries/guest-s", "rtcache reclaim after conntrack -F, no traffic (the bounded background rate)")
	# conntrack full and churning (b_ctfull, c_ctfull): per 1000 packets
	# delivered during the measurement, and the table at its end
	kvline("ct_new_per_kpkt", "", "New connections per 1000 packets (conntrack full: early drops)")
	kvline("ct_dropped_per_kpkt", "", "Packets conntrack dropped for want of room per 1000 packets")
	kvline("rtc_records_per_kpkt", "", "rtcache records per 1000 packets")
	kvline("rtc_hits_per_kpkt", "", "rtcache hits per 1000 packets")
	kvline("rtc_reclaimed_per_kpkt", "", "rtcache entries reclaimed per 1000 packets")
	kvline("rtc_refused_per_kpkt", "", "rtcache inserts refused (no room: entries >= connections; or rate limit) per 1000 packets")
	kvline("ct_conns_per_kpkt", "", "New connections per 1000 packets (conntrack's count after the run, flushed before it; the short-connection rows)")
	kvline("rtc_entries_pct_of_conns", "%", "rtcache entries at the end, in % of the connections")
	for (i = 1; i <= nnotes; i++) print notes[i] "  "
}

# kvline KEY UNIT TITLE : one line "TITLE: row: IPv4 v UNIT, IPv6 v UNIT; ..."
# from the rows' KEY=value records
function kvline(key, unit, title,    line, r, c, cell, i, kk) {
	line = ""
	for (r = 1; r <= nrows; r++) {
		c = rows[r]
		cell = ""
		for (i = 1; i <= nfam; i++) {
			kk = fams[i] SUBSEP c SUBSEP key
			if (kk in kv)
				cell = cell (cell == "" ? "" : ", ") famname(fams[i]) " " grp(median(kv[kk])) unit
		}
		if (cell != "")
			line = line (line == "" ? "" : "; ") label[c] ": " cell
	}
	if (line != "")
		print title ": " line ".  "
}
