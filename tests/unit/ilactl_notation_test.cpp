// SPDX-License-Identifier: GPL-2.0
// ilactl: ILA notation parsing/formatting, checksum mode and map names.
#include <gtest/gtest.h>

#include <cstdio>
#include <random>
#include <stdexcept>

#include "ila_notation.h"

using ila::Half;

TEST(IlactlNotation, FourGroups)
{
	EXPECT_EQ(ila::parse_half("2001:0:0:1", Half::Locator), 0x2001000000000001ULL);
	EXPECT_EQ(ila::parse_half("2001:db8:0:1", Half::Identifier), 0x20010db800000001ULL);
	EXPECT_EQ(ila::parse_half("0:0:0:0", Half::Identifier), 0ULL);
	EXPECT_EQ(ila::parse_half("ffff:FFFF:ffff:fFfF", Half::Identifier), ~0ULL);
	EXPECT_EQ(ila::parse_half("0001:0002:0003:0004", Half::Identifier), 0x0001000200030004ULL);
}

TEST(IlactlNotation, FullAddressOnlyWhenTheOtherHalfIsZero)
{
	EXPECT_EQ(ila::parse_half("2001:db8:1:2::", Half::Locator), 0x20010db800010002ULL);
	EXPECT_EQ(ila::parse_half("2001:db8::", Half::Locator), 0x20010db800000000ULL);
	EXPECT_EQ(ila::parse_half("::", Half::Identifier), 0ULL);
	EXPECT_EQ(ila::parse_half("::", Half::Locator), 0ULL);
	EXPECT_EQ(ila::parse_half("::1:2", Half::Identifier), 0x10002ULL);
	EXPECT_EQ(ila::parse_half("::5", Half::Identifier), 5ULL);
	EXPECT_EQ(ila::parse_half("::ffff:10.0.0.1", Half::Identifier), 0x0000ffff0a000001ULL);
	EXPECT_EQ(ila::parse_half("0:0:0:0:1:2:3:4", Half::Identifier), 0x0001000200030004ULL);
	// bits in the half not used: refused, never silently dropped
	for (const char *a : {"1::", "2001:db8::5", "2001:db8:1:2:3:4:5:6", "::1:0:0:0:0"}) {
		EXPECT_THROW(ila::parse_half(a, Half::Identifier), std::invalid_argument) << a;
	}
	for (const char *a : {"2001:db8::5", "::1", "2001:db8:1:2:3:4:5:6", "::ffff:10.0.0.1"}) {
		EXPECT_THROW(ila::parse_half(a, Half::Locator), std::invalid_argument) << a;
	}
}

TEST(IlactlNotation, MessagesShowTheAcceptedForms)
{
	try {
		ila::parse_half("1::", Half::Identifier);
		FAIL();
	} catch (const std::invalid_argument &e) {
		std::string m = e.what();
		EXPECT_NE(m.find("bad identifier \"1::\""), std::string::npos) << m;
		EXPECT_NE(m.find("high 64 bits"), std::string::npos) << m;
		EXPECT_NE(m.find("(0:0:0:5)"), std::string::npos) << m;
		EXPECT_NE(m.find("(::5)"), std::string::npos) << m;
	}
	try {
		ila::parse_half("2001:db8::5", Half::Locator);
		FAIL();
	} catch (const std::invalid_argument &e) {
		std::string m = e.what();
		EXPECT_NE(m.find("bad locator \"2001:db8::5\""), std::string::npos) << m;
		EXPECT_NE(m.find("(2001:db8:0:1::)"), std::string::npos) << m;
	}
}

TEST(IlactlNotation, EmbeddedNulRefused)
{
	using namespace std::string_view_literals;
	EXPECT_THROW(ila::parse_half("0:0:0:5\0junk"sv, Half::Identifier), std::invalid_argument);
	EXPECT_THROW(ila::parse_half("::5\0"sv, Half::Identifier), std::invalid_argument);
	EXPECT_THROW(ila::parse_half("\0"sv, Half::Locator), std::invalid_argument);
}

TEST(IlactlNotation, Rejects)
{
	for (const char *bad : {"", "1:2:3", "1:2:3:4:5", "12345:0:0:0", "g:0:0:0", "1::2:3:",
				":1:2:3", "1:2:3:", "1:2::3:4:5:6:7:8", "1 :2:3:4", "fe80::1%eth0",
				"10.0.0.1", "1:2:3:4/64", "0x1:2:3:4"}) {
		EXPECT_THROW(ila::parse_half(bad, Half::Identifier), std::invalid_argument) << bad;
	}
}

TEST(IlactlNotation, ErrorNamesTheHalfAndText)
{
	try {
		ila::parse_half("zz", Half::Locator);
		FAIL();
	} catch (const std::invalid_argument &e) {
		EXPECT_NE(std::string(e.what()).find("locator \"zz\""), std::string::npos) << e.what();
	}
}

TEST(IlactlNotation, Format)
{
	EXPECT_EQ(ila::format_half(0x2001000000000001ULL), "2001:0:0:1");
	EXPECT_EQ(ila::format_half(0), "0:0:0:0");
	EXPECT_EQ(ila::format_half(~0ULL), "ffff:ffff:ffff:ffff");
	EXPECT_EQ(ila::format_half(0x00ab000c0d00e000ULL), "ab:c:d00:e000");
}

// the hand-written formatter against printf's "%x:%x:%x:%x", every group
// length (1-4 digits, zero groups) in every position
TEST(IlactlNotation, FormatAgreesWithPrintf)
{
	std::mt19937_64 rng(7);
	for (int i = 0; i < 20000; i++) {
		std::uint64_t v = rng();
		for (int g = 0; g < 4; g++) // group g keeps 0-4 of its digits
			v &= ~(((0xffffULL << (4 * ((rng() % 5)))) & 0xffff) << (16 * g));
		char want[32];
		std::snprintf(want, sizeof(want), "%x:%x:%x:%x", unsigned(v >> 48) & 0xffff,
			      unsigned(v >> 32) & 0xffff, unsigned(v >> 16) & 0xffff, unsigned(v) & 0xffff);
		ASSERT_EQ(ila::format_half(v), want) << std::hex << v;
	}
}

TEST(IlactlNotation, RoundTripRandom)
{
	std::mt19937_64 rng(42);
	for (int i = 0; i < 10000; i++) {
		std::uint64_t v = rng();
		if (i % 3 == 0)
			v &= 0x0000ffff0000ffffULL; // zero groups
		EXPECT_EQ(ila::parse_half(ila::format_half(v), Half::Identifier), v);
	}
}

TEST(IlactlNotation, CsumModes)
{
	EXPECT_EQ(ila::parse_csum_mode("adjust-transport"), 0);
	EXPECT_EQ(ila::parse_csum_mode("neutral-map"), 1);
	// the numbers of enum ila_csum_mode in <linux/ila.h>, then ours
	EXPECT_EQ(ila::parse_csum_mode("none"), 2);
	EXPECT_EQ(ila::parse_csum_mode("neutral-map-auto"), 3);
	EXPECT_EQ(ila::parse_csum_mode("rfc6296"), 4);
	// iproute2's names
	EXPECT_EQ(ila::parse_csum_mode("adj-transport"), 0);
	EXPECT_EQ(ila::parse_csum_mode("no-action"), 2);
	EXPECT_FALSE(ila::parse_csum_mode("adjust"));
	EXPECT_FALSE(ila::parse_csum_mode(std::string(100, 'a')));
	EXPECT_FALSE(ila::parse_csum_mode(std::string("none\0x", 6)));
	EXPECT_FALSE(ila::parse_csum_mode(""));
	for (std::uint8_t m = 0; m < 5; m++)
		EXPECT_EQ(ila::parse_csum_mode(ila::csum_mode_name(m)), m);
	EXPECT_EQ(ila::csum_mode_name(9), "unknown");
}

TEST(IlactlNotation, MapNames)
{
	EXPECT_TRUE(ila::valid_map_name("hosts"));
	EXPECT_TRUE(ila::valid_map_name("a.b-c_D9"));
	EXPECT_TRUE(ila::valid_map_name(std::string(31, 'x')));
	EXPECT_FALSE(ila::valid_map_name(std::string(32, 'x')));
	EXPECT_FALSE(ila::valid_map_name(""));
	EXPECT_FALSE(ila::valid_map_name("a b"));
	EXPECT_FALSE(ila::valid_map_name("a/b"));
	EXPECT_FALSE(ila::valid_map_name("ä"));
}

TEST(IlactlNotation, Uint)
{
	EXPECT_EQ(ila::parse_uint("10", 1, 100), 10U);
	EXPECT_FALSE(ila::parse_uint("0", 1, 100));
	EXPECT_FALSE(ila::parse_uint("101", 1, 100));
	EXPECT_FALSE(ila::parse_uint("1x", 1, 100));
	EXPECT_FALSE(ila::parse_uint("-1", 0, 100));
	EXPECT_FALSE(ila::parse_uint("", 0, 100));
}
