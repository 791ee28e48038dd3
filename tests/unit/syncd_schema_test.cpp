// SPDX-License-Identifier: GPL-2.0
// ila-syncd: the etcd key schema (keys, values, prefixes).
#include <gtest/gtest.h>

#include <optional>
#include <random>
#include <stdexcept>
#include <string>

#include "ila_notation.h"
#include "schema.h"

using namespace syncd;

TEST(SyncdSchema, KeysOfAMap)
{
	EXPECT_EQ(normalize_prefix("/ila/"), "/ila");
	EXPECT_EQ(normalize_prefix("/ila//"), "/ila");
	EXPECT_EQ(normalize_prefix(""), "");
	EXPECT_EQ(maps_key_prefix("/ila"), "/ila/maps/");
	EXPECT_EQ(map_key_prefix("/ila/", "hosts"), "/ila/maps/hosts/");
	EXPECT_EQ(map_key_prefix("", "hosts"), "/maps/hosts/");
	EXPECT_EQ(mapping_key("/ila", "hosts", 0x11), "/ila/maps/hosts/0:0:0:11");
	EXPECT_EQ(mapping_key("/ila", "hosts", 0x20010db8000a0001ULL), "/ila/maps/hosts/2001:db8:a:1");
}

TEST(SyncdSchema, RangeEnd)
{
	EXPECT_EQ(prefix_range_end("/ila/maps/hosts/"), "/ila/maps/hosts0");
	EXPECT_EQ(prefix_range_end("a\xff"), "b");
	EXPECT_EQ(prefix_range_end("\xff\xff"), std::string(1, '\0'));
	// every key of the map is inside [prefix, end), the next map's are not
	const std::string p = map_key_prefix("/ila", "hosts"), e = prefix_range_end(p);
	for (std::string k : {"/ila/maps/hosts/0:0:0:1", "/ila/maps/hosts/ffff:ffff:ffff:ffff", "/ila/maps/hosts/\xff"})
		EXPECT_TRUE(k >= p && k < e) << k;
	for (std::string k : {"/ila/maps/hosts0/x", "/ila/maps/hosts.sync/0:0:0:1", "/ila/maps/host/0:0:0:1"})
		EXPECT_FALSE(k >= p && k < e) << k;
}

TEST(SyncdSchema, CanonicalIdentifierKeysOnly)
{
	EXPECT_EQ(parse_key_identifier("0:0:0:5").value, 5u);
	EXPECT_EQ(parse_key_identifier("ffff:ffff:ffff:ffff").value, ~0ULL);
	EXPECT_EQ(parse_key_identifier("2001:db8:0:1").value, 0x20010db800000001ULL);
	// other spellings of the same identifier: malformed, and the message
	// names the key to use
	for (const char *k : {"0:0:0:05", "::5", "0:0:0:0:0:0:0:5", "0:0:0:A", "0000:0:0:5"}) {
		auto r = parse_key_identifier(k);
		EXPECT_FALSE(r) << k;
		EXPECT_NE(r.error, "") << k;
	}
	EXPECT_NE(parse_key_identifier("0:0:0:05").error.find("\"0:0:0:5\""), std::string::npos);
	for (const char *k : {"", "0:0:0", "0:0:0:1:2", "x", "0:0:0:1/extra", "0:0:0:g", " 0:0:0:1"})
		EXPECT_FALSE(parse_key_identifier(k)) << k;
	EXPECT_FALSE(parse_key_identifier(std::string_view("0:0:0:1\0", 8)));
}

// The one-pass key parser against its definition: a key is valid when
// parse_half() takes it and format_half() gives it back unchanged.
TEST(SyncdSchema, KeyIdentifierAgreesWithFormat)
{
	std::mt19937_64 rng(3);
	const std::string alphabet = "0123456789abcdef0:::Ax/";
	auto reference = [](const std::string &k) -> std::optional<std::uint64_t> {
		if (k.find('/') != std::string::npos)
			return std::nullopt;
		try {
			std::uint64_t v = ila::parse_half(k, ila::Half::Identifier);
			if (ila::format_half(v) == k)
				return v;
		} catch (const std::invalid_argument &) {
		}
		return std::nullopt;
	};
	int valid = 0;
	for (int i = 0; i < 200000; i++) {
		std::string k;
		if (i % 2) {
			k = ila::format_half(rng() & (i % 6 == 1 ? 0x000f00ff0fff0000ULL : ~0ULL));
			if (i % 10 == 3)
				k[rng() % k.size()] = alphabet[rng() % alphabet.size()];
		} else {
			for (std::size_t n = rng() % 22; n; n--)
				k += alphabet[rng() % alphabet.size()];
		}
		auto want = reference(k);
		auto got = parse_key_identifier(k);
		ASSERT_EQ(bool(got), bool(want)) << k;
		if (want) {
			ASSERT_EQ(*got.value, *want) << k;
			valid++;
		}
	}
	EXPECT_GT(valid, 50000);
}

TEST(SyncdSchema, Values)
{
	auto v = parse_value("2001:db8:1:0");
	ASSERT_TRUE(v);
	EXPECT_EQ(v.value->locator, 0x20010db800010000ULL);
	EXPECT_EQ(v.value->csum_mode, 0); // adjust-transport
	v = parse_value("2001:db8:1:0 csum-mode neutral-map-auto");
	ASSERT_TRUE(v);
	EXPECT_EQ(v.value->csum_mode, 3);
	// the words of `ilactl map add`: full addresses, iproute2's mode names,
	// blanks and a trailing newline (etcdctl put from a file)
	v = parse_value("  2001:db8:1:: \t csum-mode no-action\n");
	ASSERT_TRUE(v);
	EXPECT_EQ(v.value->locator, 0x20010db800010000ULL);
	EXPECT_EQ(v.value->csum_mode, 2);
	EXPECT_EQ(parse_value("2001:db8:1:0 csum-mode rfc6296").value->csum_mode, 4);
	for (const char *bad : {"", "   ", "2001:db8:1", "2001:db8:1:0 neutral-map", "2001:db8:1:0 csum-mode",
				"2001:db8:1:0 csum-mode bogus", "2001:db8:1:0 csum-mode none extra",
				"2001:db8::1", "2001:db8:1:0,2001:db8:2:0", "{\"locator\":\"2001:db8:1:0\"}"}) {
		auto r = parse_value(bad);
		EXPECT_FALSE(r) << bad;
		EXPECT_NE(r.error, "") << bad;
	}
	EXPECT_NE(parse_value("2001:db8:1:0 csum-mode bogus").error.find("adjust-transport"), std::string::npos);
	EXPECT_FALSE(parse_value(std::string(300, ' ') + "2001:db8:1:0"));
	EXPECT_FALSE(parse_value(std::string_view("2001:db8:1:0\0", 13)));
}

TEST(SyncdSchema, ValueRoundTrip)
{
	for (std::uint8_t mode = 0; mode <= 4; mode++) {
		Mapping m{0x20010db8abcd0001ULL, mode};
		auto r = parse_value(format_value(m));
		ASSERT_TRUE(r) << format_value(m);
		EXPECT_EQ(*r.value, m);
	}
	EXPECT_EQ(format_value({0x20010db800010000ULL, 0}), "2001:db8:1:0 csum-mode adjust-transport");
}

TEST(SyncdSchema, MapKeys)
{
	auto k = split_map_key("hosts/0:0:0:5");
	ASSERT_TRUE(k);
	EXPECT_EQ(k.value->map, "hosts");
	EXPECT_EQ(k.value->ident_text, "0:0:0:5");
	EXPECT_FALSE(split_map_key("hosts"));
	EXPECT_FALSE(split_map_key("/0:0:0:5"));
	EXPECT_FALSE(split_map_key("bad name/0:0:0:5"));
	EXPECT_FALSE(split_map_key(std::string(32, 'a') + "/0:0:0:5"));
}

TEST(SyncdSchema, PrintableKeys)
{
	EXPECT_EQ(printable("/ila/maps/h/0:0:0:1"), "/ila/maps/h/0:0:0:1");
	EXPECT_EQ(printable(std::string_view("a\0b\n\\", 5)), "a\\x00b\\x0a\\x5c");
	EXPECT_EQ(printable(std::string(300, 'x'), 10), "xxxxxxxxxx...");
	std::string why;
	EXPECT_TRUE(valid_prefix("/ila", why));
	EXPECT_FALSE(valid_prefix(std::string_view("/i\0a", 4), why));
	EXPECT_FALSE(valid_prefix(std::string(600, 'p'), why));
}
