/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * cachesim.h: the cache model of the benchmark VM's TCG plugin
 * (bench/cachesim.c), pure C with no QEMU dependency, so the host unit
 * tests (tests/unit/cachesim_test.cpp) compile the same code.
 *
 * Model (bench/README.md, "Modeled cycles"):
 * - four set-associative caches with true LRU replacement: L1I and L1D
 *   (private), L2 (unified) and LLC (unified); one line size for all;
 * - an access looks up its L1; a miss looks up L2, a miss there the LLC.
 *   A line is filled into every level it was looked up in (so right after
 *   a miss it is in all three); evictions are not propagated (no
 *   back-invalidation: a line evicted from L2 may stay in L1, "non-inclusive,
 *   non-exclusive"). Stores are treated as loads (write-allocate, no
 *   write-back traffic);
 * - an access that spans two lines is two accesses;
 * - modeled cycles = instructions + L1 misses x p_l1 + L2 misses x p_l2 +
 *   LLC misses x p_llc (an access served from DRAM costs the three).
 */
#ifndef NFILR_BENCH_CACHESIM_H
#define NFILR_BENCH_CACHESIM_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>

enum cs_level { CS_L1I, CS_L1D, CS_L2, CS_LLC, CS_NLEVELS };

static const char *const cs_level_names[CS_NLEVELS] = { "l1i", "l1d", "l2", "llc" };

#define CS_INVALID UINT64_MAX

struct cs_cache {
	uint32_t sets;
	uint32_t ways;
	uint64_t set_mask;	/* sets - 1 when sets is a power of two, else 0 */
	uint64_t *tags;		/* sets x ways line numbers, each set MRU first */
	uint64_t accesses;
	uint64_t misses;
};

struct cs_config {
	uint64_t size[CS_NLEVELS];	/* bytes */
	uint32_t ways[CS_NLEVELS];
	uint32_t line;			/* bytes, a power of two */
	uint64_t penalty[3];		/* L1 miss, L2 miss, LLC miss (cycles) */
};

struct cs_stats {
	uint64_t insns;
	uint64_t accesses[CS_NLEVELS];
	uint64_t misses[CS_NLEVELS];
	uint64_t io;			/* memory-mapped I/O accesses (not cached) */
};

struct cs_hier {
	struct cs_config cfg;
	unsigned int line_shift;
	struct cs_cache c[CS_NLEVELS];
	uint64_t insns;
	uint64_t io;
};

/* A current server core (bench/README.md states where they come from). */
static inline void cs_config_default(struct cs_config *cfg)
{
	cfg->size[CS_L1I] = 32 << 10;
	cfg->ways[CS_L1I] = 8;
	cfg->size[CS_L1D] = 48 << 10;
	cfg->ways[CS_L1D] = 12;
	cfg->size[CS_L2] = 2 << 20;
	cfg->ways[CS_L2] = 16;
	cfg->size[CS_LLC] = 32 << 20;
	cfg->ways[CS_LLC] = 16;
	cfg->line = 64;
	cfg->penalty[0] = 14;
	cfg->penalty[1] = 50;
	cfg->penalty[2] = 300;
}

/* "123", "48K", "2M", "1G" -> bytes; -1 on garbage */
static inline int cs_parse_size(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;

	if (*s < '0' || *s > '9')
		return -1;
	v = strtoull(s, &end, 10);
	switch (*end) {
	case 'k': case 'K': v <<= 10; end++; break;
	case 'm': case 'M': v <<= 20; end++; break;
	case 'g': case 'G': v <<= 30; end++; break;
	default: break;
	}
	if (*end)
		return -1;
	*out = v;
	return 0;
}

/*
 * One plugin argument "key=value" into cfg. Keys: l1i_size l1i_ways
 * l1d_size l1d_ways l2_size l2_ways llc_size llc_ways line l1_penalty
 * l2_penalty llc_penalty. Returns 0, 1 when the key is not a cache key
 * (the caller's own), -1 on a bad value (message in err).
 */
static inline int cs_config_arg(struct cs_config *cfg, const char *arg, char *err, size_t errlen)
{
	static const char *const pen[3] = { "l1_penalty", "l2_penalty", "llc_penalty" };
	const char *eq = strchr(arg, '=');
	uint64_t *u64 = NULL;
	uint32_t *ways = NULL, *line = NULL;
	char key[32];
	uint64_t v;
	int i;

	if (!eq || (size_t)(eq - arg) >= sizeof(key))
		return 1;
	memcpy(key, arg, (size_t)(eq - arg));
	key[eq - arg] = 0;
	for (i = 0; i < CS_NLEVELS; i++) {
		char k[32];

		snprintf(k, sizeof(k), "%s_size", cs_level_names[i]);
		if (!strcmp(key, k))
			u64 = &cfg->size[i];
		snprintf(k, sizeof(k), "%s_ways", cs_level_names[i]);
		if (!strcmp(key, k))
			ways = &cfg->ways[i];
	}
	for (i = 0; i < 3; i++)
		if (!strcmp(key, pen[i]))
			u64 = &cfg->penalty[i];
	if (!strcmp(key, "line"))
		line = &cfg->line;
	if (!u64 && !ways && !line)
		return 1;
	if (cs_parse_size(eq + 1, &v)) {
		snprintf(err, errlen, "%s: not a number (suffix K, M or G allowed)", arg);
		return -1;
	}
	if (ways && (v == 0 || v > 1024)) {
		snprintf(err, errlen, "%s: ways must be 1-1024", arg);
		return -1;
	}
	if (line && (v < 8 || v > 4096 || (v & (v - 1)))) {
		snprintf(err, errlen, "%s: the line size must be a power of two, 8-4096", arg);
		return -1;
	}
	if (u64)
		*u64 = v;
	else if (ways)
		*ways = (uint32_t)v;
	else
		*line = (uint32_t)v;
	return 0;
}

/* 0, or -1 with a message: each size must be a whole number of sets */
static inline int cs_config_check(const struct cs_config *cfg, char *err, size_t errlen)
{
	int i;

	for (i = 0; i < CS_NLEVELS; i++) {
		uint64_t way_bytes = (uint64_t)cfg->ways[i] * cfg->line;

		if (cfg->size[i] == 0 || cfg->size[i] % way_bytes) {
			snprintf(err, errlen, "%s: size %llu is not a multiple of ways (%u) x line (%u)",
				 cs_level_names[i], (unsigned long long)cfg->size[i], cfg->ways[i], cfg->line);
			return -1;
		}
	}
	return 0;
}

static inline int cs_cache_init(struct cs_cache *c, uint64_t size, uint32_t ways, uint32_t line)
{
	uint64_t n, i;

	c->ways = ways;
	c->sets = (uint32_t)(size / ((uint64_t)ways * line));
	c->set_mask = (c->sets & (c->sets - 1)) ? 0 : c->sets - 1;
	n = (uint64_t)c->sets * ways;
	c->tags = (uint64_t *)malloc(n * sizeof(*c->tags));
	if (!c->tags)
		return -1;
	for (i = 0; i < n; i++)
		c->tags[i] = CS_INVALID;
	c->accesses = 0;
	c->misses = 0;
	return 0;
}

/* one lookup of a line number; 1 on a hit. The line ends up MRU. */
static inline int cs_cache_access(struct cs_cache *c, uint64_t line)
{
	uint64_t set = c->set_mask ? (line & c->set_mask) : (c->sets == 1 ? 0 : line % c->sets);
	uint64_t *w = c->tags + set * c->ways;
	uint32_t i, hit;

	c->accesses++;
	if (w[0] == line)
		return 1;
	for (i = 1; i < c->ways; i++)
		if (w[i] == line)
			break;
	hit = i < c->ways;
	if (!hit) {
		c->misses++;
		i = c->ways - 1;	/* the LRU way is evicted */
	}
	memmove(w + 1, w, i * sizeof(*w));
	w[0] = line;
	return (int)hit;
}

/* is the line in the cache (no LRU update, no counting)? */
static inline int cs_cache_holds(const struct cs_cache *c, uint64_t line)
{
	uint64_t set = c->set_mask ? (line & c->set_mask) : (c->sets == 1 ? 0 : line % c->sets);
	const uint64_t *w = c->tags + set * c->ways;
	uint32_t i;

	for (i = 0; i < c->ways; i++)
		if (w[i] == line)
			return 1;
	return 0;
}

static inline void cs_hier_free(struct cs_hier *h)
{
	int i;

	for (i = 0; i < CS_NLEVELS; i++) {
		free(h->c[i].tags);
		h->c[i].tags = NULL;
	}
}

static inline int cs_hier_init(struct cs_hier *h, const struct cs_config *cfg, char *err, size_t errlen)
{
	int i;

	memset(h, 0, sizeof(*h));
	if (cs_config_check(cfg, err, errlen))
		return -1;
	h->cfg = *cfg;
	while ((1u << h->line_shift) < cfg->line)
		h->line_shift++;
	for (i = 0; i < CS_NLEVELS; i++)
		if (cs_cache_init(&h->c[i], cfg->size[i], cfg->ways[i], cfg->line)) {
			snprintf(err, errlen, "%s: out of memory", cs_level_names[i]);
			cs_hier_free(h);
			return -1;
		}
	return 0;
}

/* one line through L1 (l1 = CS_L1I or CS_L1D), then L2, then LLC */
static inline void cs_access_line(struct cs_hier *h, int l1, uint64_t line)
{
	if (cs_cache_access(&h->c[l1], line))
		return;
	if (cs_cache_access(&h->c[CS_L2], line))
		return;
	cs_cache_access(&h->c[CS_LLC], line);
}

/* an access of size bytes at addr: one lookup per line it touches */
static inline void cs_access(struct cs_hier *h, int l1, uint64_t addr, uint64_t size)
{
	uint64_t first = addr >> h->line_shift;
	uint64_t last = (addr + (size ? size : 1) - 1) >> h->line_shift;

	for (;;) {
		cs_access_line(h, l1, first);
		if (first == last)
			break;
		first++;
	}
}

static inline void cs_snapshot(const struct cs_hier *h, struct cs_stats *s)
{
	int i;

	s->insns = h->insns;
	s->io = h->io;
	for (i = 0; i < CS_NLEVELS; i++) {
		s->accesses[i] = h->c[i].accesses;
		s->misses[i] = h->c[i].misses;
	}
}

/* d = b - a */
static inline void cs_stats_diff(const struct cs_stats *b, const struct cs_stats *a, struct cs_stats *d)
{
	int i;

	d->insns = b->insns - a->insns;
	d->io = b->io - a->io;
	for (i = 0; i < CS_NLEVELS; i++) {
		d->accesses[i] = b->accesses[i] - a->accesses[i];
		d->misses[i] = b->misses[i] - a->misses[i];
	}
}

/* instructions + L1 misses x p1 + L2 misses x p2 + LLC misses x p3 */
static inline uint64_t cs_cycles(const struct cs_stats *s, const struct cs_config *cfg)
{
	return s->insns + (s->misses[CS_L1I] + s->misses[CS_L1D]) * cfg->penalty[0] +
	       s->misses[CS_L2] * cfg->penalty[1] + s->misses[CS_LLC] * cfg->penalty[2];
}

/* one result line: "insns=N l1i_acc=N l1i_miss=N ... io=N cycles=N" */
static inline int cs_format_stats(char *buf, size_t len, const struct cs_stats *s, const struct cs_config *cfg)
{
	int n = snprintf(buf, len, "insns=%llu", (unsigned long long)s->insns);
	int i;

	for (i = 0; i < CS_NLEVELS && n >= 0 && (size_t)n < len; i++)
		n += snprintf(buf + n, len - (size_t)n, " %s_acc=%llu %s_miss=%llu", cs_level_names[i],
			      (unsigned long long)s->accesses[i], cs_level_names[i],
			      (unsigned long long)s->misses[i]);
	if (n >= 0 && (size_t)n < len)
		n += snprintf(buf + n, len - (size_t)n, " io=%llu cycles=%llu", (unsigned long long)s->io,
			      (unsigned long long)cs_cycles(s, cfg));
	return n;
}

#endif /* NFILR_BENCH_CACHESIM_H */
