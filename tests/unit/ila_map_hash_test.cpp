// SPDX-License-Identifier: GPL-2.0-only
/*
 * Host tests for include/common/ila_map_hash.h: how the map's hash spreads
 * the identifier patterns of real deployments over the buckets, measured
 * as the chain a lookup walks (sum of squared chain lengths per key; 1.5
 * for random keys at the load of these tests) and the longest chain, with
 * identifiers loaded raw as the kernel loads them (little-endian host:
 * the identifier's last byte is the top byte of the key).
 */
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include <common/ila_map_hash.h>

namespace {

// the identifier (as written, big-endian) loaded raw, as the kernel does
uint64_t raw(uint64_t ident)
{
	uint8_t b[8];
	for (int i = 0; i < 8; i++)
		b[i] = uint8_t(ident >> (56 - 8 * i));
	uint64_t k;
	std::memcpy(&k, b, sizeof(k));
	return k;
}

struct Spread {
	double probe;	// mean chain length a key's lookup walks
	unsigned max;	// longest chain
};

Spread spread(const std::vector<uint64_t> &idents, unsigned bits, uint32_t seed)
{
	std::vector<unsigned> chain(size_t(1) << bits);
	for (uint64_t id : idents)
		chain[ila_map_hash64(raw(id), seed) & ((1u << bits) - 1)]++;
	double sq = 0;
	unsigned max = 0;
	for (unsigned c : chain) {
		sq += double(c) * c;
		max = std::max(max, c);
	}
	return {sq / double(idents.size()), max};
}

constexpr unsigned kKeys = 1u << 17, kBits = 18;	// load 0.5

void expect_random_like(const std::string &name,
			const std::vector<uint64_t> &idents)
{
	std::mt19937 rng(7);
	for (int s = 0; s < 8; s++) {
		Spread sp = spread(idents, kBits, rng());
		// random keys: 1.5 and about 7-8; a weak hash gives 2 to 256
		EXPECT_LT(sp.probe, 1.6) << name;
		EXPECT_LE(sp.max, 10u) << name;
	}
}

TEST(IlaMapHash, DeploymentPatternsSpreadLikeRandomKeys)
{
	std::vector<uint64_t> v;
	std::mt19937_64 rng(1);

	for (uint64_t i = 1; i <= kKeys; i++)
		v.push_back(i);			// ::1, ::2, ...
	expect_random_like("sequence", v);
	v.clear();
	for (uint64_t i = 0; i < kKeys; i++)
		v.push_back(i << 16);		// ::N:0
	expect_random_like("sequence << 16", v);
	v.clear();
	for (uint64_t i = 0; i < kKeys; i++)
		v.push_back((i & 255) << 56 | (i >> 8) << 8);	// first and last bytes
	expect_random_like("first byte", v);
	v.clear();
	for (uint64_t i = 0; i < 512; i++)
		for (uint64_t j = 0; j < kKeys / 512; j++)
			v.push_back(i << 32 | j);	// subnet:host
	expect_random_like("two-level", v);
	v.clear();
	for (uint64_t t = 0; t < 8; t++)
		for (uint64_t i = 0; i < kKeys / 8; i++)
			v.push_back(t << 61 | i);	// ILA identifier types
	expect_random_like("typed", v);
	v.clear();
	for (uint64_t i = 0; i < kKeys; i++)
		v.push_back(0x02005efffe000000ULL | i);	// EUI-64 style
	expect_random_like("eui64", v);
	v.clear();
	for (unsigned i = 0; i < kKeys; i++)
		v.push_back(rng());
	expect_random_like("random", v);
}

// The seed decides the buckets: another table seed moves the keys.
TEST(IlaMapHash, SeedChangesTheBuckets)
{
	unsigned same = 0;
	for (uint64_t i = 1; i <= 1000; i++)
		same += (ila_map_hash64(raw(i), 1) & 0xffff) ==
			(ila_map_hash64(raw(i), 2) & 0xffff);
	EXPECT_LT(same, 10u);
}

} // namespace
