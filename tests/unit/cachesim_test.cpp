// SPDX-License-Identifier: GPL-2.0-only
/*
 * Host tests for bench/cachesim.h, the cache model of the benchmark VM's
 * plugin: access patterns whose misses are known by hand (sequential
 * sweeps, working sets that fit or not, LRU order, set conflicts, the
 * hierarchy's fill and eviction rules, the cycle formula) and the
 * plugin's argument parsing.
 */
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "../../bench/cachesim.h"

namespace {

struct Hier {
	cs_hier h;
	explicit Hier(const cs_config &cfg)
	{
		char err[256];
		int r = cs_hier_init(&h, &cfg, err, sizeof(err));
		EXPECT_EQ(r, 0) << err;
	}
	Hier()
	{
		cs_config cfg;
		cs_config_default(&cfg);
		char err[256];
		int r = cs_hier_init(&h, &cfg, err, sizeof(err));
		EXPECT_EQ(r, 0) << err;
	}
	~Hier() { cs_hier_free(&h); }
	cs_stats stats() const
	{
		cs_stats s;
		cs_snapshot(&h, &s);
		return s;
	}
	// reads one byte every `stride` bytes of [base, base + bytes)
	void sweep(uint64_t base, uint64_t bytes, uint64_t stride = 64)
	{
		for (uint64_t a = base; a < base + bytes; a += stride)
			cs_access(&h, CS_L1D, a, 1);
	}
};

// a one-level-like config: tiny L1D, the rest large enough never to miss twice
cs_config small_l1d(uint64_t size, uint32_t ways)
{
	cs_config c;
	cs_config_default(&c);
	c.size[CS_L1D] = size;
	c.ways[CS_L1D] = ways;
	return c;
}

TEST(CachesimConfig, DefaultsAreTheStatedCore)
{
	Hier x;
	EXPECT_EQ(x.h.line_shift, 6u);
	EXPECT_EQ(x.h.c[CS_L1I].sets, 64u);	// 32K / (8 x 64)
	EXPECT_EQ(x.h.c[CS_L1D].sets, 64u);	// 48K / (12 x 64)
	EXPECT_EQ(x.h.c[CS_L2].sets, 2048u);	// 2M / (16 x 64)
	EXPECT_EQ(x.h.c[CS_LLC].sets, 32768u);	// 32M / (16 x 64)
	EXPECT_EQ(x.h.cfg.penalty[0], 14u);
	EXPECT_EQ(x.h.cfg.penalty[1], 50u);
	EXPECT_EQ(x.h.cfg.penalty[2], 300u);
}

TEST(CachesimConfig, Arguments)
{
	cs_config c;
	char err[256] = "";
	cs_config_default(&c);
	EXPECT_EQ(cs_config_arg(&c, "l1d_size=32K", err, sizeof(err)), 0);
	EXPECT_EQ(c.size[CS_L1D], 32768u);
	EXPECT_EQ(cs_config_arg(&c, "llc_size=30M", err, sizeof(err)), 0);
	EXPECT_EQ(c.size[CS_LLC], 30u << 20);
	EXPECT_EQ(cs_config_arg(&c, "llc_ways=15", err, sizeof(err)), 0);
	EXPECT_EQ(c.ways[CS_LLC], 15u);
	EXPECT_EQ(cs_config_arg(&c, "llc_penalty=250", err, sizeof(err)), 0);
	EXPECT_EQ(c.penalty[2], 250u);
	EXPECT_EQ(cs_config_arg(&c, "line=128", err, sizeof(err)), 0);
	EXPECT_EQ(c.line, 128u);
	// the plugin's own keys are left to it
	EXPECT_EQ(cs_config_arg(&c, "out=/tmp/x", err, sizeof(err)), 1);
	EXPECT_EQ(cs_config_arg(&c, "sim=always", err, sizeof(err)), 1);
	EXPECT_EQ(cs_config_arg(&c, "l2_ways", err, sizeof(err)), 1);
	// bad values
	EXPECT_EQ(cs_config_arg(&c, "l2_ways=x", err, sizeof(err)), -1);
	EXPECT_NE(std::string(err).find("not a number"), std::string::npos);
	EXPECT_EQ(cs_config_arg(&c, "l2_ways=0", err, sizeof(err)), -1);
	EXPECT_EQ(cs_config_arg(&c, "line=48", err, sizeof(err)), -1);
	EXPECT_EQ(cs_config_arg(&c, "l1i_size=12Q", err, sizeof(err)), -1);
}

TEST(CachesimConfig, SizeMustBeWholeSets)
{
	cs_config c = small_l1d(47 << 10, 12);
	char err[256];
	cs_hier h;
	EXPECT_EQ(cs_hier_init(&h, &c, err, sizeof(err)), -1);
	EXPECT_NE(std::string(err).find("l1d"), std::string::npos);
}

TEST(Cachesim, SequentialSweepColdThenL2Hits)
{
	Hier x;
	x.sweep(0, 1 << 20);	// 1 MiB: 16384 lines, all cold
	cs_stats a = x.stats();
	EXPECT_EQ(a.accesses[CS_L1D], 16384u);
	EXPECT_EQ(a.misses[CS_L1D], 16384u);
	EXPECT_EQ(a.misses[CS_L2], 16384u);
	EXPECT_EQ(a.misses[CS_LLC], 16384u);
	x.sweep(0, 1 << 20);	// again: larger than L1D (48K), fits L2 (2M)
	cs_stats b = x.stats(), d;
	cs_stats_diff(&b, &a, &d);
	EXPECT_EQ(d.misses[CS_L1D], 16384u);
	EXPECT_EQ(d.accesses[CS_L2], 16384u);
	EXPECT_EQ(d.misses[CS_L2], 0u);
	EXPECT_EQ(d.accesses[CS_LLC], 0u);
}

TEST(Cachesim, SweepLargerThanLlcMissesEveryTime)
{
	Hier x;
	x.sweep(0, 64 << 20);	// 64 MiB: twice the LLC, LRU keeps none of it
	cs_stats a = x.stats(), b, d;
	x.sweep(0, 64 << 20);
	b = x.stats();
	cs_stats_diff(&b, &a, &d);
	EXPECT_EQ(d.accesses[CS_L1D], 1u << 20);
	EXPECT_EQ(d.misses[CS_L1D], 1u << 20);
	EXPECT_EQ(d.misses[CS_L2], 1u << 20);
	EXPECT_EQ(d.misses[CS_LLC], 1u << 20);
}

TEST(Cachesim, WorkingSetThatFitsMissesOnlyOnce)
{
	Hier x;
	for (int i = 0; i < 10; i++)
		x.sweep(0x100000, 32 << 10);	// 32K in a 48K L1D
	cs_stats s = x.stats();
	EXPECT_EQ(s.accesses[CS_L1D], 10u * 512);
	EXPECT_EQ(s.misses[CS_L1D], 512u);
	EXPECT_EQ(s.misses[CS_L2], 512u);
	EXPECT_EQ(s.misses[CS_LLC], 512u);
	// byte accesses inside lines already loaded are hits
	x.sweep(0x100000, 32 << 10, 8);
	EXPECT_EQ(x.stats().misses[CS_L1D], 512u);
}

TEST(Cachesim, WorkingSetOneWayTooLargeMissesAlways)
{
	// 13 lines in one L1D set (64 sets x 12 ways): cyclic access under
	// LRU evicts each line just before it is used again
	Hier x;
	for (int round = 0; round < 10; round++)
		for (uint64_t i = 0; i < 13; i++)
			cs_access(&x.h, CS_L1D, i * 64 * 64, 4);
	cs_stats s = x.stats();
	EXPECT_EQ(s.misses[CS_L1D], 130u);
	// in L2 (2048 sets) the 13 lines are in different sets: cold misses only
	EXPECT_EQ(s.misses[CS_L2], 13u);
	EXPECT_EQ(s.misses[CS_LLC], 13u);
	// 12 lines fit the set
	Hier y;
	for (int round = 0; round < 10; round++)
		for (uint64_t i = 0; i < 12; i++)
			cs_access(&y.h, CS_L1D, i * 64 * 64, 4);
	EXPECT_EQ(y.stats().misses[CS_L1D], 12u);
}

TEST(Cachesim, LruEvictsLeastRecentlyUsed)
{
	cs_cache c;
	ASSERT_EQ(cs_cache_init(&c, 4 * 64, 4, 64), 0);	// one set, 4 ways
	const uint64_t A = 10, B = 11, C = 12, D = 13, E = 14;
	EXPECT_FALSE(cs_cache_access(&c, A));
	EXPECT_FALSE(cs_cache_access(&c, B));
	EXPECT_FALSE(cs_cache_access(&c, C));
	EXPECT_FALSE(cs_cache_access(&c, D));
	EXPECT_TRUE(cs_cache_access(&c, A));	// A most recent, B least
	EXPECT_FALSE(cs_cache_access(&c, E));	// evicts B
	EXPECT_TRUE(cs_cache_holds(&c, A));
	EXPECT_FALSE(cs_cache_holds(&c, B));
	EXPECT_TRUE(cs_cache_holds(&c, C));
	EXPECT_TRUE(cs_cache_holds(&c, D));
	EXPECT_TRUE(cs_cache_holds(&c, E));
	EXPECT_TRUE(cs_cache_access(&c, C));	// now D is least recent
	EXPECT_FALSE(cs_cache_access(&c, B));	// evicts D
	EXPECT_FALSE(cs_cache_holds(&c, D));
	EXPECT_TRUE(cs_cache_holds(&c, C));
	EXPECT_EQ(c.accesses, 8u);
	EXPECT_EQ(c.misses, 6u);
	free(c.tags);
}

TEST(Cachesim, AssociativityConflicts)
{
	// two lines of the same set, alternating: a direct-mapped cache misses
	// every time, a 2-way cache of the same size only the first two
	cs_cache dm, two;
	ASSERT_EQ(cs_cache_init(&dm, 8 * 64, 1, 64), 0);	// 8 sets
	ASSERT_EQ(cs_cache_init(&two, 8 * 64, 2, 64), 0);	// 4 sets
	for (int i = 0; i < 20; i++) {
		uint64_t line = (i & 1) ? 8 : 0;	// same set in both
		cs_cache_access(&dm, line);
		cs_cache_access(&two, line);
	}
	EXPECT_EQ(dm.misses, 20u);
	EXPECT_EQ(two.misses, 2u);
	// lines of different sets do not conflict
	cs_cache dm2;
	ASSERT_EQ(cs_cache_init(&dm2, 8 * 64, 1, 64), 0);
	for (int i = 0; i < 20; i++)
		cs_cache_access(&dm2, (i & 1) ? 9 : 0);
	EXPECT_EQ(dm2.misses, 2u);
	free(dm.tags);
	free(two.tags);
	free(dm2.tags);
}

TEST(Cachesim, SetCountNotPowerOfTwo)
{
	cs_cache c;
	ASSERT_EQ(cs_cache_init(&c, 3 * 64, 1, 64), 0);	// 3 sets, direct-mapped
	EXPECT_EQ(c.sets, 3u);
	cs_cache_access(&c, 0);
	cs_cache_access(&c, 1);
	cs_cache_access(&c, 2);
	EXPECT_TRUE(cs_cache_access(&c, 0));
	EXPECT_FALSE(cs_cache_access(&c, 3));	// set 0 again
	EXPECT_FALSE(cs_cache_holds(&c, 0));
	EXPECT_TRUE(cs_cache_holds(&c, 1));
	free(c.tags);
}

TEST(Cachesim, FillGoesToEveryLevelEvictionIsNotPropagated)
{
	// L1D: one set of 2 ways; L2: 2 sets, direct-mapped; LLC large
	cs_config c = small_l1d(2 * 64, 2);
	c.size[CS_L2] = 2 * 64;
	c.ways[CS_L2] = 1;
	Hier x(c);
	const uint64_t A = 0, B = 2 * 64;	// same L2 set (line 0 and line 2)
	cs_access(&x.h, CS_L1D, A, 8);
	EXPECT_TRUE(cs_cache_holds(&x.h.c[CS_L1D], 0));
	EXPECT_TRUE(cs_cache_holds(&x.h.c[CS_L2], 0));
	EXPECT_TRUE(cs_cache_holds(&x.h.c[CS_LLC], 0));
	cs_access(&x.h, CS_L1D, B, 8);	// evicts A from L2, not from L1D
	EXPECT_FALSE(cs_cache_holds(&x.h.c[CS_L2], 0));
	EXPECT_TRUE(cs_cache_holds(&x.h.c[CS_L1D], 0));
	cs_stats a = x.stats();
	cs_access(&x.h, CS_L1D, A, 8);	// L1D hit: L2 not asked
	cs_stats b = x.stats(), d;
	cs_stats_diff(&b, &a, &d);
	EXPECT_EQ(d.misses[CS_L1D], 0u);
	EXPECT_EQ(d.accesses[CS_L2], 0u);
	// a third line evicts A from L1D (LRU: B was used before A's hit);
	// A is then served by the LLC, which kept it
	cs_access(&x.h, CS_L1D, 4 * 64, 8);	// line 4: evicts B from L1D
	cs_access(&x.h, CS_L1D, 6 * 64, 8);	// line 6: evicts A from L1D
	EXPECT_FALSE(cs_cache_holds(&x.h.c[CS_L1D], 0));
	a = x.stats();
	cs_access(&x.h, CS_L1D, A, 8);
	b = x.stats();
	cs_stats_diff(&b, &a, &d);
	EXPECT_EQ(d.misses[CS_L1D], 1u);
	EXPECT_EQ(d.misses[CS_L2], 1u);
	EXPECT_EQ(d.accesses[CS_LLC], 1u);
	EXPECT_EQ(d.misses[CS_LLC], 0u);
}

TEST(Cachesim, InstructionAndDataL1AreSeparateL2IsShared)
{
	Hier x;
	cs_access(&x.h, CS_L1I, 0x4000, 4);	// code line: misses all the way
	cs_access(&x.h, CS_L1D, 0x4000, 4);	// same line read as data: L1D miss, L2 hit
	cs_stats s = x.stats();
	EXPECT_EQ(s.misses[CS_L1I], 1u);
	EXPECT_EQ(s.misses[CS_L1D], 1u);
	EXPECT_EQ(s.accesses[CS_L2], 2u);
	EXPECT_EQ(s.misses[CS_L2], 1u);
	EXPECT_EQ(s.misses[CS_LLC], 1u);
}

TEST(Cachesim, AccessAcrossALineIsTwoAccesses)
{
	Hier x;
	cs_access(&x.h, CS_L1D, 60, 8);	// bytes 60-67: lines 0 and 1
	EXPECT_EQ(x.stats().accesses[CS_L1D], 2u);
	cs_access(&x.h, CS_L1D, 56, 8);	// bytes 56-63: line 0 only
	EXPECT_EQ(x.stats().accesses[CS_L1D], 3u);
	EXPECT_EQ(x.stats().misses[CS_L1D], 2u);
}

TEST(Cachesim, ModeledCycles)
{
	cs_config c;
	cs_config_default(&c);
	cs_stats s = {};
	s.insns = 1000;
	s.misses[CS_L1I] = 2;
	s.misses[CS_L1D] = 3;
	s.misses[CS_L2] = 4;
	s.misses[CS_LLC] = 1;
	// 1000 + 5 x 14 + 4 x 50 + 1 x 300
	EXPECT_EQ(cs_cycles(&s, &c), 1570u);
	// one access from DRAM, cold, in a real hierarchy: 14 + 50 + 300
	Hier x;
	cs_access(&x.h, CS_L1D, 0x123440, 8);
	cs_stats t = x.stats();
	EXPECT_EQ(cs_cycles(&t, &x.h.cfg), 364u);
	char buf[512];
	cs_format_stats(buf, sizeof(buf), &s, &c);
	EXPECT_EQ(std::string(buf), "insns=1000 l1i_acc=0 l1i_miss=2 l1d_acc=0 l1d_miss=3 l2_acc=0 "
				    "l2_miss=4 llc_acc=0 llc_miss=1 io=0 cycles=1570");
}

} // namespace
