// SPDX-License-Identifier: GPL-2.0
// ila-syncd: reading a key range in pages (RangePager, read_range) against a
// model of etcd 3.4's Range: a request walks every key of [key, range_end)
// (it counts them) before applying its limit.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <random>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "range_pager.h"
#include "schema.h"

using namespace syncd;

namespace {

struct Kv {
	std::string key;
};
struct Page {
	std::vector<Kv> kvs;
	bool more = false;
	std::int64_t count = 0;
	std::int64_t revision = 7;
};

// etcd 3.4's Range over sorted KEYS; WALKED counts the keys its index visits
struct Etcd34 {
	std::vector<std::string> keys;
	std::uint64_t walked = 0, requests = 0;
	Page operator()(const std::string &key, const std::string &end, std::int64_t rev, std::uint32_t limit)
	{
		EXPECT_TRUE(rev == 0 || rev == 7);
		requests++;
		auto lo = std::lower_bound(keys.begin(), keys.end(), key);
		auto hi = end == std::string(1, '\0') ? keys.end() : std::lower_bound(keys.begin(), keys.end(), end);
		Page p;
		if (hi <= lo)
			return p;
		const std::size_t count = std::size_t(hi - lo);
		walked += count;
		for (auto it = lo; it != hi && p.kvs.size() < limit; ++it)
			p.kvs.push_back({*it});
		p.more = count > limit;
		p.count = std::int64_t(count);
		return p;
	}
};

// Reads [BEGIN, END) of STORE with pages of LIMIT: every key of the range
// exactly once, in order, at one revision
std::vector<std::string> read_all(Etcd34 &store, const std::string &begin, const std::string &end, std::uint32_t limit)
{
	std::vector<std::string> got;
	const std::int64_t rev = read_range(store, begin, end, limit, [&](const Page &p) {
		EXPECT_LE(p.kvs.size(), limit);
		for (const auto &kv : p.kvs)
			got.push_back(kv.key);
	});
	EXPECT_EQ(rev, 7);
	std::vector<std::string> want;
	for (const auto &k : store.keys)
		if (k >= begin && (end == std::string(1, '\0') || k < end))
			want.push_back(k);
	EXPECT_EQ(got, want);
	return got;
}

Etcd34 store_of(std::vector<std::string> keys)
{
	std::sort(keys.begin(), keys.end());
	keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
	return Etcd34{keys};
}

const std::string P = "/f/maps/hosts/", E = prefix_range_end(P);

// keys of the map, and of its neighbours (which must not be read)
std::vector<std::string> with_neighbours(std::vector<std::string> keys)
{
	for (std::string k : {"/f/maps/host/0:0:0:1", "/f/maps/hosts0", "/f/maps/hosts.x/0:0:0:1", "/f/maps/hostsa/1",
			      "/f/maps/a", "/f/z"})
		keys.push_back(k);
	return keys;
}

} // namespace

// The keys of bench/fleet.sh and the fleet tests: 0:0:G:H
TEST(SyncdPager, SequentialIdentifiersCostAboutOneWalk)
{
	std::vector<std::string> keys;
	const std::uint64_t n = 200000;
	for (std::uint64_t i = 0; i < n; i++)
		keys.push_back(mapping_key("/f", "hosts", (i / 65536) << 16 | (i % 65536)));
	Etcd34 store = store_of(with_neighbours(keys));
	EXPECT_EQ(read_all(store, P, E, 2000).size(), n);
	// the first request walks the whole map, the windows after it a few
	// pages each (pages of [last, end) would walk n * n / 2 / 2000 = 50 n)
	EXPECT_LE(store.walked, 5 * n) << store.requests << " requests";
	EXPECT_LE(store.requests, 2 * n / 2000 + 40);
}

TEST(SyncdPager, RandomAndClusteredIdentifiers)
{
	std::mt19937_64 rng(42);
	std::vector<std::string> keys;
	for (int i = 0; i < 60000; i++)
		keys.push_back(mapping_key("/f", "hosts", rng()));
	// tenants: dense subnets of very different sizes
	for (std::uint64_t t = 0; t < 5; t++)
		for (std::uint64_t i = 0; i < (10000u >> (2 * t)); i++)
			keys.push_back(mapping_key("/f", "hosts", 0x20010db800000000ULL | t << 24 | i));
	// a long shared head: ffff:ffff:ffff:X
	for (std::uint64_t i = 0; i < 20000; i++)
		keys.push_back(mapping_key("/f", "hosts", 0xffffffffffff0000ULL | i));
	// malformed keys are read too (the daemon reports them)
	for (std::string k : {P, P + "x", P + "\xff\xff", P + std::string(40, 'a'), P + std::string(1, '\0')})
		keys.push_back(k);
	Etcd34 store = store_of(with_neighbours(keys));
	const std::size_t n = read_all(store, P, E, 1000).size();
	// dense clusters among sparse keys: a few walks more at each change of
	// density (pages of [last, end) would walk n / 2000 = 46 times n)
	EXPECT_LE(store.walked, 8 * n) << store.requests << " requests";
}

TEST(SyncdPager, SmallAndEdgeRanges)
{
	Etcd34 empty = store_of(with_neighbours({}));
	EXPECT_TRUE(read_all(empty, P, E, 10).empty());
	EXPECT_EQ(empty.requests, 1u);
	Etcd34 one = store_of(with_neighbours({P + "0:0:0:1"}));
	EXPECT_EQ(read_all(one, P, E, 10).size(), 1u);
	// limit 1, a page per key
	std::vector<std::string> few;
	for (int i = 0; i < 50; i++)
		few.push_back(mapping_key("/f", "hosts", std::uint64_t(i) * 977));
	Etcd34 s = store_of(with_neighbours(few));
	EXPECT_EQ(read_all(s, P, E, 1).size(), 50u);
	EXPECT_EQ(read_all(s, P, E, 7).size(), 50u);
	// a range to the end of the key space, keys of 0xff bytes
	Etcd34 top = store_of({"\xff", "\xff\xff", "\xff\xff\xff", std::string(20, '\xff'), "\xfe\x01", "a"});
	EXPECT_EQ(read_all(top, "\xfe", std::string(1, '\0'), 2).size(), 5u);
	EXPECT_EQ(read_all(top, "", std::string(1, '\0'), 1).size(), 6u);
	// gaps: two dense clusters far apart, windows widen across the gap
	std::vector<std::string> gap;
	for (std::uint64_t i = 0; i < 3000; i++) {
		gap.push_back(mapping_key("/f", "hosts", i));
		gap.push_back(mapping_key("/f", "hosts", 0xfff0000000000000ULL + i));
	}
	Etcd34 g = store_of(with_neighbours(gap));
	EXPECT_EQ(read_all(g, P, E, 100).size(), 6000u);
	EXPECT_LE(g.walked, 4u * 6000) << g.requests << " requests";
}

TEST(SyncdPager, PositionsKeepTheOrderOfKeys)
{
	RangePager pg(P, E, 10);
	// the order of keys is the order of their places, the shortest key at
	// a place is at that place
	std::vector<std::string> ks = {P, P + "0", P + "0:0:0:1", P + "0:0:0:10", P + "0:0:0:2", P + "0:0:1:0",
				       P + "9", P + "a:0:0:0", P + "ffff:ffff:ffff:ffff"};
	for (std::size_t i = 1; i < ks.size(); i++)
		EXPECT_LT(pg.position(ks[i - 1]), pg.position(ks[i])) << ks[i];
	for (const auto &k : ks)
		EXPECT_EQ(pg.key_at(pg.position(k)), k);
	EXPECT_LE(pg.position(P + "0:0:0:1\x80"), pg.position(P + "0:0:0:2"));
}

// The next page is asked for while the caller loads the page before it (etcd
// serves page K+1 while page K goes to the kernel), and the requests are
// still the same, one at a time, in order
TEST(SyncdPager, NextPageRequestedWhileThePageIsLoaded)
{
	std::vector<std::string> keys;
	for (std::uint64_t i = 0; i < 5000; i++)
		keys.push_back(mapping_key("/f", "hosts", i));
	std::sort(keys.begin(), keys.end());
	// the requests of a reader that asks only after loading
	std::vector<std::string> seq_model;
	{
		Etcd34 m = store_of(with_neighbours(keys));
		RangePager pager(P, E, 300);
		while (!pager.done()) {
			seq_model.push_back(pager.key() + "|" + pager.window_end());
			Page p = m(pager.key(), pager.window_end(), 0, pager.limit());
			const std::size_t n = p.kvs.size();
			pager.advance(n, n ? p.kvs.front().key : "", n ? p.kvs.back().key : "", p.more, p.count);
		}
	}
	ASSERT_GT(seq_model.size(), 10u);
	Etcd34 model = store_of(with_neighbours(keys));
	std::mutex mu;
	std::condition_variable cv;
	std::size_t asked = 0;
	bool busy = false, overlapped = true;
	std::vector<std::string> seq;
	auto store = [&](const std::string &key, const std::string &end, std::int64_t rev, std::uint32_t limit) {
		{
			std::lock_guard lock(mu);
			EXPECT_FALSE(busy) << "two requests at once";
			busy = true;
			seq.push_back(key + "|" + end);
		}
		Page p = model(key, end, rev, limit);
		std::lock_guard lock(mu);
		busy = false;
		asked++;
		cv.notify_all();
		return p;
	};
	std::size_t pages = 0;
	std::vector<std::string> got;
	read_range(store, P, E, 300, [&](const Page &p) {
		pages++;
		for (const auto &kv : p.kvs)
			got.push_back(kv.key);
		// every page but the last: the next request is answered while
		// this page is still being loaded
		std::unique_lock lock(mu);
		if (overlapped && pages < seq_model.size())
			overlapped = cv.wait_for(lock, std::chrono::seconds(10), [&] { return asked > pages; });
	});
	EXPECT_TRUE(overlapped);
	EXPECT_EQ(got, keys);
	EXPECT_EQ(pages, seq_model.size());
	EXPECT_EQ(seq, seq_model);
}

// A failing request ends the read after the pages before it were loaded; a
// failing load ends it too, and a request in flight is waited for
TEST(SyncdPager, ErrorsEndTheRead)
{
	std::vector<std::string> keys;
	for (std::uint64_t i = 0; i < 1000; i++)
		keys.push_back(mapping_key("/f", "hosts", i));
	Etcd34 model = store_of(keys);
	std::atomic<int> calls{0};
	auto failing = [&](const std::string &key, const std::string &end, std::int64_t rev, std::uint32_t limit) {
		if (++calls == 3)
			throw std::runtime_error("member gone");
		return model(key, end, rev, limit);
	};
	std::size_t loaded = 0;
	EXPECT_THROW(read_range(failing, P, E, 100, [&](const Page &p) { loaded += p.kvs.size(); }), std::runtime_error);
	EXPECT_EQ(calls, 3);
	EXPECT_EQ(loaded, 200u);
	calls = 0;
	Etcd34 model2 = store_of(keys);
	auto slow = [&](const std::string &key, const std::string &end, std::int64_t rev, std::uint32_t limit) {
		calls++;
		std::this_thread::sleep_for(std::chrono::milliseconds(20));
		return model2(key, end, rev, limit);
	};
	int pages = 0;
	EXPECT_THROW(read_range(slow, P, E, 100,
				[&](const Page &) {
					if (++pages == 2)
						throw std::logic_error("netlink");
				}),
		     std::logic_error);
	EXPECT_EQ(calls, 3); // pages 1 and 2, and page 3 asked for before page 2 failed
}
