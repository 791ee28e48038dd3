// SPDX-License-Identifier: GPL-2.0-only
/*
 * cachesim.c: a QEMU TCG plugin (system mode, one vCPU) that runs the
 * memory accesses of the benchmark VM through the cache model of
 * bench/cachesim.h and reports, for each interval between a start and a
 * stop marker the guest executes, instructions, accesses and misses per
 * level and modeled cycles. Usage and output: bench/README.md
 * ("Modeled cycles").
 *
 *   qemu-system-x86_64 ... -plugin build/cachesim/cachesim.so,out=FILE[,l1d_size=48K,...]
 *
 * Markers (bench/cachesim-mark.c executes them): the 7-byte no-ops
 * "nopl 0x43530001(%rax)" (start) and "nopl 0x43530002(%rax)" (stop),
 * 0f 1f 80 + the 32-bit displacement; compilers pad with these nops
 * only with a displacement of 0, so no other code carries them. Two more,
 * 0x43530003 and 0x43530004, switch the simulation on and off without
 * counting (a warm-up that should leave its lines in the caches).
 *
 * Data accesses are simulated at their guest physical address; instruction
 * fetches at the host address of the guest RAM that holds them (QEMU 7.2
 * gives no physical address for an instruction; guest RAM is one host
 * mapping aligned to 2 MiB, so the set index is that of the physical
 * address). Fetches are simulated per translated block when it starts:
 * one access per line its instructions cover, in order.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "qemu_plugin_api.h"
#include "cachesim.h"

CS_PLUGIN_EXPORT int qemu_plugin_version = CS_QEMU_PLUGIN_API;

#define CS_MARK_START 0x43530001u
#define CS_MARK_STOP  0x43530002u
#define CS_MARK_WARM  0x43530003u
#define CS_MARK_COOL  0x43530004u

/* one translated block: its instruction count and the lines it fetches */
struct cs_tb {
	uint32_t n_insns;
	uint32_t n_lines;
	uint64_t lines[];
};

static struct cs_hier hier;
static int simulating;		/* caches see accesses */
static int counting;		/* inside a start..stop interval */
static int sim_always;		/* sim=always: caches also between intervals */
static struct cs_stats at_start;
static struct timespec wall_start;	/* host time at the start marker */
static unsigned long intervals;
static char *out_path;
static FILE *out;

/* QEMU's plugin log (qemu_plugin_outs) shows only with -d plugin: errors go to stderr too */
static void cs_err(const char *s)
{
	fputs(s, stderr);
	qemu_plugin_outs(s);
}

static void cs_msg(const char *fmt, const char *a, const char *b)
{
	char buf[512];

	snprintf(buf, sizeof(buf), fmt, a, b);
	cs_err(buf);
}

static void write_interval(const char *how)
{
	struct cs_stats now, d;
	struct timespec t;
	char line[512];

	clock_gettime(CLOCK_MONOTONIC, &t);
	cs_snapshot(&hier, &now);
	cs_stats_diff(&now, &at_start, &d);
	cs_format_stats(line, sizeof(line), &d, &hier.cfg);
	/* wall_ms: host time the interval took, for the plugin's own cost */
	fprintf(out, "interval=%lu %s wall_ms=%.0f%s\n", intervals, line,
		(double)(t.tv_sec - wall_start.tv_sec) * 1e3 + (double)(t.tv_nsec - wall_start.tv_nsec) / 1e6,
		how);
	fflush(out);
}

static void vcpu_tb_exec(unsigned int vcpu, void *udata)
{
	const struct cs_tb *t = (const struct cs_tb *)udata;
	uint32_t i;

	(void)vcpu;
	if (!simulating)
		return;
	hier.insns += t->n_insns;
	for (i = 0; i < t->n_lines; i++)
		cs_access_line(&hier, CS_L1I, t->lines[i]);
}

static void vcpu_mem(unsigned int vcpu, qemu_plugin_meminfo_t info, uint64_t vaddr, void *udata)
{
	struct qemu_plugin_hwaddr *hw;

	(void)vcpu;
	(void)udata;
	if (!simulating)
		return;
	hw = qemu_plugin_get_hwaddr(info, vaddr);
	if (!hw)
		return;
	if (qemu_plugin_hwaddr_is_io(hw)) {
		hier.io++;
		return;
	}
	cs_access(&hier, CS_L1D, qemu_plugin_hwaddr_phys_addr(hw),
		  (uint64_t)1 << qemu_plugin_mem_size_shift(info));
}

/*
 * The marker at index idx of a block of n: the block's exec callback ran
 * before it, so the instructions after it (start) or after it (stop,
 * already counted) are corrected here.
 */
static void vcpu_mark_start(unsigned int vcpu, void *udata)
{
	uint32_t after = (uint32_t)(uintptr_t)udata;

	(void)vcpu;
	if (counting)
		return;
	simulating = 1;
	counting = 1;
	hier.insns += after;
	cs_snapshot(&hier, &at_start);
	clock_gettime(CLOCK_MONOTONIC, &wall_start);
}

static void vcpu_mark_stop(unsigned int vcpu, void *udata)
{
	uint32_t after = (uint32_t)(uintptr_t)udata;

	(void)vcpu;
	if (!counting)
		return;
	hier.insns -= after;
	intervals++;
	write_interval("");
	counting = 0;
	simulating = sim_always;
}

static void vcpu_mark_warm(unsigned int vcpu, void *udata)
{
	(void)vcpu;
	(void)udata;
	simulating = 1;
}

static void vcpu_mark_cool(unsigned int vcpu, void *udata)
{
	(void)vcpu;
	(void)udata;
	simulating = counting || sim_always;
}

static uint32_t marker_of(const struct qemu_plugin_insn *insn)
{
	const uint8_t *b = (const uint8_t *)qemu_plugin_insn_data(insn);
	uint32_t disp;

	if (qemu_plugin_insn_size(insn) != 7 || b[0] != 0x0f || b[1] != 0x1f || b[2] != 0x80)
		return 0;
	disp = (uint32_t)b[3] | (uint32_t)b[4] << 8 | (uint32_t)b[5] << 16 | (uint32_t)b[6] << 24;
	return disp >= CS_MARK_START && disp <= CS_MARK_COOL ? disp : 0;
}

static void vcpu_tb_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	size_t n = qemu_plugin_tb_n_insns(tb), i;
	unsigned int shift = hier.line_shift;
	uint64_t last = CS_INVALID;
	struct cs_tb *t;
	uint32_t nl = 0;

	(void)id;
	/* at most two lines per instruction (x86: up to 15 bytes) */
	t = (struct cs_tb *)malloc(sizeof(*t) + 2 * n * sizeof(t->lines[0]));
	if (!t)
		abort();
	for (i = 0; i < n; i++) {
		struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
		uint64_t a = (uint64_t)(uintptr_t)qemu_plugin_insn_haddr(insn);
		size_t sz = qemu_plugin_insn_size(insn);
		uint32_t m = marker_of(insn);

		if (a) {
			uint64_t l = a >> shift, e = (a + (sz ? sz : 1) - 1) >> shift;

			for (; l <= e; l++)
				if (l != last)
					t->lines[nl++] = last = l;
		}
		qemu_plugin_register_vcpu_mem_cb(insn, vcpu_mem, QEMU_PLUGIN_CB_NO_REGS,
						 QEMU_PLUGIN_MEM_RW, NULL);
		if (m)
			qemu_plugin_register_vcpu_insn_exec_cb(insn,
				m == CS_MARK_START ? vcpu_mark_start :
				m == CS_MARK_STOP ? vcpu_mark_stop :
				m == CS_MARK_WARM ? vcpu_mark_warm : vcpu_mark_cool,
				QEMU_PLUGIN_CB_NO_REGS, (void *)(uintptr_t)(n - i - 1));
	}
	t->n_insns = (uint32_t)n;
	t->n_lines = nl;
	/* the block struct lives as long as QEMU may run the block: not freed */
	qemu_plugin_register_vcpu_tb_exec_cb(tb, vcpu_tb_exec, QEMU_PLUGIN_CB_NO_REGS, t);
}

static void plugin_exit(qemu_plugin_id_t id, void *p)
{
	(void)id;
	(void)p;
	if (counting) {
		intervals++;
		write_interval(" unterminated=1");
	}
	fprintf(out, "# end: %lu intervals\n", intervals);
	fclose(out);
	cs_hier_free(&hier);
}

CS_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info, int argc, char **argv)
{
	struct cs_config cfg;
	char err[256];
	int i;

	if (info->version.min > CS_QEMU_PLUGIN_API || info->version.cur < CS_QEMU_PLUGIN_API) {
		snprintf(err, sizeof(err),
			 "cachesim: built for QEMU plugin API %d, this QEMU offers %d-%d: "
			 "check bench/qemu_plugin_api.h against this QEMU's qemu-plugin.h\n",
			 CS_QEMU_PLUGIN_API, info->version.min, info->version.cur);
		cs_err(err);
		return -1;
	}
	if (!info->system_emulation) {
		cs_err("cachesim: system emulation only (physical addresses)\n");
		return -1;
	}
	if (info->system.max_vcpus > 1) {
		cs_err("cachesim: one vCPU only (-smp 1, as tests/vm/run --bench): "
				 "the model is one core's caches and is not thread-safe\n");
		return -1;
	}
	cs_config_default(&cfg);
	for (i = 0; i < argc; i++) {
		int r = cs_config_arg(&cfg, argv[i], err, sizeof(err));

		if (r < 0) {
			cs_msg("cachesim: %s%s\n", err, "");
			return -1;
		}
		if (r == 0)
			continue;
		if (!strncmp(argv[i], "out=", 4)) {
			out_path = argv[i] + 4;
		} else if (!strcmp(argv[i], "sim=always")) {
			sim_always = 1;
		} else if (!strcmp(argv[i], "sim=marked")) {
			sim_always = 0;
		} else {
			cs_msg("cachesim: unknown argument '%s'%s (keys: out= sim=always|marked "
			       "{l1i,l1d,l2,llc}_{size,ways} line l1_penalty l2_penalty llc_penalty)\n",
			       argv[i], "");
			return -1;
		}
	}
	if (!out_path) {
		cs_err("cachesim: out=FILE is required\n");
		return -1;
	}
	if (cs_hier_init(&hier, &cfg, err, sizeof(err))) {
		cs_msg("cachesim: %s%s\n", err, "");
		return -1;
	}
	out = fopen(out_path, "w");
	if (!out) {
		cs_msg("cachesim: %s: %s\n", out_path, strerror(errno));
		return -1;
	}
	fprintf(out, "# cachesim: api=%d", CS_QEMU_PLUGIN_API);
	for (i = 0; i < CS_NLEVELS; i++)
		fprintf(out, " %s=%" PRIu64 "/%u", cs_level_names[i], cfg.size[i], cfg.ways[i]);
	fprintf(out, " line=%u penalties=%" PRIu64 "/%" PRIu64 "/%" PRIu64 " sim=%s\n", cfg.line,
		cfg.penalty[0], cfg.penalty[1], cfg.penalty[2], sim_always ? "always" : "marked");
	fflush(out);
	simulating = sim_always;
	qemu_plugin_register_vcpu_tb_trans_cb(id, vcpu_tb_trans);
	qemu_plugin_register_atexit_cb(id, plugin_exit, NULL);
	return 0;
}
