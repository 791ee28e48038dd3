// SPDX-License-Identifier: GPL-2.0
// ila-syncd cache mode: what to fetch, install, update, evict.
#include <gtest/gtest.h>

#include <algorithm>

#include "cache_table.h"

using namespace syncd;

namespace {

const Mapping kA{0x20010db800010000ULL, 0}, kB{0x20010db800020000ULL, 3};

} // namespace

TEST(SyncdCache, ABurstOfMissesIsOneFetch)
{
	CacheTable c(10, 60, 5);
	std::vector<std::uint64_t> ev;
	EXPECT_EQ(c.on_miss(7, 0), MissVerdict::Fetch);
	for (int i = 0; i < 100; i++)
		EXPECT_EQ(c.on_miss(7, 0.01 * i), MissVerdict::Pending);
	EXPECT_EQ(c.pending(), 1u);
	auto a = c.on_fetched(7, kA, 10, 12, 1, ev);
	EXPECT_EQ(a.kind, CacheAction::Install);
	EXPECT_EQ(a.mapping, kA);
	EXPECT_EQ(c.on_miss(7, 1), MissVerdict::Cached);
	EXPECT_EQ(c.pending(), 0u);
	EXPECT_TRUE(ev.empty());
}

TEST(SyncdCache, AbsentIdentifiersAreNegativeForATime)
{
	CacheTable c(10, 60, 5);
	std::vector<std::uint64_t> ev;
	ASSERT_EQ(c.on_miss(9, 0), MissVerdict::Fetch);
	EXPECT_EQ(c.on_fetched(9, std::nullopt, 0, 20, 0, ev).kind, CacheAction::None);
	EXPECT_EQ(c.on_miss(9, 1), MissVerdict::Negative);
	EXPECT_EQ(c.on_miss(9, 4.9), MissVerdict::Negative);
	EXPECT_EQ(c.on_miss(9, 5.1), MissVerdict::Fetch);
	c.fetch_failed(9);
	// appearing in the store while negative: installed at once, unless
	// the event is older than the read that found nothing
	ASSERT_EQ(c.on_miss(9, 6), MissVerdict::Fetch);
	c.on_fetched(9, std::nullopt, 0, 30, 6, ev);
	EXPECT_EQ(c.on_change(9, kA, 25, 6.5, ev).kind, CacheAction::None);
	auto a = c.on_change(9, kA, 31, 7, ev);
	EXPECT_EQ(a.kind, CacheAction::Install);
	EXPECT_EQ(c.negative(), 0u);
	EXPECT_EQ(c.size(), 1u);
}

TEST(SyncdCache, WatchEventsKeepCachedEntriesCurrentNewerWins)
{
	CacheTable c(10, 60, 5);
	std::vector<std::uint64_t> ev;
	c.on_miss(1, 0);
	c.on_fetched(1, kA, 10, 15, 0, ev);
	// older or equal revisions (the watch lagging the fetch): ignored
	EXPECT_EQ(c.on_change(1, kB, 10, 1, ev).kind, CacheAction::None);
	EXPECT_EQ(c.on_change(1, std::nullopt, 9, 1, ev).kind, CacheAction::None);
	EXPECT_EQ(*c.find(1), kA);
	auto a = c.on_change(1, kB, 16, 1, ev);
	EXPECT_EQ(a.kind, CacheAction::Update);
	EXPECT_EQ(*c.find(1), kB);
	// same value again: nothing to do
	EXPECT_EQ(c.on_change(1, kB, 17, 1, ev).kind, CacheAction::None);
	EXPECT_EQ(c.revision_of(1), 17);
	EXPECT_EQ(c.on_change(1, std::nullopt, 18, 1, ev).kind, CacheAction::Remove);
	EXPECT_FALSE(c.find(1));
	// identifiers nobody asked for: ignored
	EXPECT_EQ(c.on_change(2, kA, 19, 1, ev).kind, CacheAction::None);
	EXPECT_EQ(c.size(), 0u);
}

TEST(SyncdCache, AnEventDuringTheFetchWinsWhenNewer)
{
	CacheTable c(10, 60, 5);
	std::vector<std::uint64_t> ev;
	// the watch is ahead of the fetch's read
	c.on_miss(3, 0);
	EXPECT_EQ(c.on_change(3, kB, 40, 0, ev).kind, CacheAction::None);
	auto a = c.on_fetched(3, kA, 30, 35, 0, ev);
	EXPECT_EQ(a.kind, CacheAction::Install);
	EXPECT_EQ(a.mapping, kB);
	EXPECT_EQ(c.revision_of(3), 40);
	// deleted while being fetched
	c.on_miss(4, 0);
	c.on_change(4, std::nullopt, 50, 0, ev);
	EXPECT_EQ(c.on_fetched(4, kA, 45, 48, 0, ev).kind, CacheAction::None);
	EXPECT_EQ(c.on_miss(4, 1), MissVerdict::Negative);
	// an event older than the read: the read wins
	c.on_miss(5, 0);
	c.on_change(5, kB, 20, 0, ev);
	a = c.on_fetched(5, kA, 21, 22, 0, ev);
	EXPECT_EQ(a.mapping, kA);
}

TEST(SyncdCache, SizeLimitEvictsTheLeastRecentlyActive)
{
	CacheTable c(3, 60, 5);
	std::vector<std::uint64_t> ev;
	for (std::uint64_t id = 1; id <= 3; id++) {
		c.on_miss(id, double(id));
		c.on_fetched(id, kA, 1, 1, double(id), ev);
	}
	EXPECT_TRUE(ev.empty());
	// 1 gets hits: 2 becomes the least recently active
	c.sweep_begin();
	c.sweep_seen(1, 5, 10);
	c.sweep_seen(2, 0, 10);
	c.sweep_seen(3, 0, 10);
	EXPECT_TRUE(c.sweep_end(10).empty());
	c.on_miss(4, 11);
	c.on_fetched(4, kA, 1, 1, 11, ev);
	EXPECT_EQ(ev, std::vector<std::uint64_t>{2});
	EXPECT_EQ(c.size(), 3u);
	EXPECT_FALSE(c.find(2));
	// a thousand misses never grow it past its size
	for (std::uint64_t id = 100; id < 1100; id++) {
		c.on_miss(id, 12);
		c.on_fetched(id, kB, 1, 1, 12, ev);
		EXPECT_LE(c.size(), 3u);
	}
}

TEST(SyncdCache, IdleEntriesAreEvictedGoneOnesForgotten)
{
	CacheTable c(10, 60, 5);
	std::vector<std::uint64_t> ev;
	for (std::uint64_t id = 1; id <= 3; id++) {
		c.on_miss(id, 0);
		c.on_fetched(id, kA, 1, 1, 0, ev);
	}
	c.sweep_begin();
	c.sweep_seen(1, 1, 30); // used
	c.sweep_seen(2, 0, 30); // idle
				// 3: not in the kernel map any more
	EXPECT_TRUE(c.sweep_end(30).empty());
	EXPECT_EQ(c.size(), 2u);
	EXPECT_FALSE(c.find(3));
	c.sweep_begin();
	c.sweep_seen(1, 1, 70);
	c.sweep_seen(2, 0, 70);
	auto idle = c.sweep_end(70);
	EXPECT_EQ(idle, std::vector<std::uint64_t>{2});
	EXPECT_EQ(c.size(), 1u);
	c.sweep_begin();
	c.sweep_seen(1, 1, 95);
	EXPECT_EQ(c.sweep_end(95), std::vector<std::uint64_t>{1}); // idle since 30
	// a counter reset counts as use
	c.on_miss(8, 100);
	c.on_fetched(8, kA, 1, 1, 100, ev);
	c.sweep_begin();
	c.sweep_seen(8, 7, 110);
	c.sweep_end(110);
	c.sweep_begin();
	c.sweep_seen(8, 0, 165);
	EXPECT_TRUE(c.sweep_end(165).empty());
}

TEST(SyncdCache, RateLimiter)
{
	RateLimiter r(10, 10);
	int ok = 0;
	for (int i = 0; i < 100; i++)
		ok += r.take(0);
	EXPECT_EQ(ok, 10);
	EXPECT_FALSE(r.take(0.05));
	EXPECT_TRUE(r.take(0.15));
	// over 10 seconds at most rate * 10 + burst
	ok = 0;
	for (int i = 0; i < 100000; i++)
		ok += r.take(1 + i * 0.0001);
	EXPECT_LE(ok, 10 * 10 + 10);
	EXPECT_GE(ok, 10 * 10);
}

TEST(SyncdCache, FetchQueueNewestFirstAndBounded)
{
	FetchQueue q(3);
	EXPECT_TRUE(q.empty());
	EXPECT_FALSE(q.push(1));
	EXPECT_FALSE(q.push(2));
	EXPECT_FALSE(q.push(3));
	// full: the oldest miss goes (its next miss fetches it)
	EXPECT_EQ(q.push(4), std::optional<std::uint64_t>(1));
	EXPECT_EQ(q.size(), 3u);
	// the newest misses are served first
	EXPECT_EQ(q.take(2), (std::vector<std::uint64_t>{4, 3}));
	EXPECT_FALSE(q.push(5));
	EXPECT_EQ(q.take(10), (std::vector<std::uint64_t>{5, 2}));
	EXPECT_TRUE(q.empty());
	EXPECT_TRUE(q.take(1).empty());
}
