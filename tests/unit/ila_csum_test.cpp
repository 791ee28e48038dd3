// SPDX-License-Identifier: GPL-2.0-only
/*
 * Host tests for include/common/ila_csum.h, the math of the ILA target:
 * prefix mapping, every checksum mode and the skb checksum states, each
 * checked against an independent full recomputation (plain big-endian
 * arithmetic, written here from RFC 1071/8200) over many random addresses
 * and payloads.
 */
#include <gtest/gtest.h>

#include <arpa/inet.h>

#include <array>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <algorithm>
#include <vector>

#include <common/ila_csum.h>
#include <linux/netfilter/xt_ILA.h>

namespace {

using Addr = std::array<uint8_t, 16>;

constexpr uint8_t kTcp = 6, kUdp = 17, kIcmp6 = 58;

// ---- independent reference ---------------------------------------------------

uint32_t ref_add(uint32_t acc, const uint8_t *p, size_t n)
{
	for (size_t i = 0; i + 1 < n; i += 2)
		acc += (uint32_t(p[i]) << 8) | p[i + 1];
	if (n & 1)
		acc += uint32_t(p[n - 1]) << 8;
	return acc;
}

uint16_t ref_fold(uint64_t s)
{
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return uint16_t(s);
}

struct Packet {
	std::array<uint8_t, 40> ip{};
	std::vector<uint8_t> l4;
	uint8_t proto = kTcp;

	uint8_t *saddr() { return ip.data() + 8; }
	uint8_t *daddr() { return ip.data() + 24; }
	size_t csum_off() const { return proto == kTcp ? 16 : proto == kUdp ? 6 : 2; }
	uint16_t check() const { return uint16_t(l4[csum_off()] << 8 | l4[csum_off() + 1]); }
	void set_check(uint16_t v)
	{
		l4[csum_off()] = uint8_t(v >> 8);
		l4[csum_off() + 1] = uint8_t(v);
	}
	uint8_t *check_field() { return l4.data() + csum_off(); }

	// folded (not complemented) sum of the IPv6 pseudo-header
	uint16_t pseudo_sum() const
	{
		uint32_t acc = ref_add(0, ip.data() + 8, 32);
		acc += uint32_t(l4.size() >> 16) + uint32_t(l4.size() & 0xffff);
		acc += proto;
		return ref_fold(acc);
	}
	// sum of pseudo-header and L4 bytes, check field included
	uint16_t l4_sum() const { return ref_fold(uint64_t(pseudo_sum()) + ref_add(0, l4.data(), l4.size())); }
	// the checksum a sender computes (field zero during the sum)
	uint16_t compute_check()
	{
		uint16_t saved = check();
		set_check(0);
		uint16_t c = uint16_t(~l4_sum());
		set_check(saved);
		if (proto == kUdp && c == 0)
			c = 0xffff;
		return c;
	}
	bool check_valid() const { return l4_sum() == 0xffff; }
	// what CHECKSUM_COMPLETE covers at PREROUTING: the whole packet
	uint16_t packet_sum() const { return ref_fold(ref_add(ref_add(0, ip.data(), 40), l4.data(), l4.size())); }
};

// one's complement equality (0x0000 and 0xffff are both zero)
bool oc_equal(uint16_t a, uint16_t b)
{
	return a == b || ((a == 0 || a == 0xffff) && (b == 0 || b == 0xffff));
}

uint16_t be_of_raw(uint16_t raw)
{
	return ila_raw16(raw);	// the same swap both ways
}

// ---- random rules and packets --------------------------------------------------

struct Rule {
	Addr src{}, dst{};
	unsigned int len = 64;
};

class Gen {
public:
	explicit Gen(uint32_t seed) : rng_(seed) {}

	uint32_t u32() { return rng_(); }
	unsigned int below(unsigned int n) { return unsigned(rng_() % n); }

	Addr addr()
	{
		Addr a;
		for (auto &b : a)
			b = uint8_t(rng_());
		return a;
	}

	Rule rule(unsigned int len)
	{
		Rule r;
		r.len = len;
		r.src = addr();
		r.dst = addr();
		uint8_t mask[16];
		ila_pfx_mask(mask, len);
		for (int i = 0; i < 16; i++) {
			r.src[i] &= mask[i];
			r.dst[i] &= mask[i];
		}
		return r;
	}

	// an address inside pfx/len
	Addr inside(const Addr &pfx, unsigned int len)
	{
		Addr a = addr();
		uint8_t mask[16];
		ila_pfx_mask(mask, len);
		for (int i = 0; i < 16; i++)
			a[i] = uint8_t((a[i] & ~mask[i]) | pfx[i]);
		return a;
	}

	Packet packet(uint8_t proto)
	{
		Packet p;
		p.proto = proto;
		size_t min = proto == kTcp ? 20 : 8;
		p.l4.resize(min + below(180));	// odd lengths too
		for (auto &b : p.l4)
			b = uint8_t(rng_());
		Addr s = addr(), d = addr();
		std::memcpy(p.saddr(), s.data(), 16);
		std::memcpy(p.daddr(), d.data(), 16);
		p.ip[0] = 0x60;
		p.ip[6] = proto;
		p.set_check(p.compute_check());
		return p;
	}

	uint8_t proto()
	{
		static constexpr uint8_t protos[] = {kTcp, kUdp, kIcmp6};
		return protos[below(3)];
	}

private:
	std::mt19937 rng_;
};

ila_xlat make_xlat(const Rule &r, unsigned int mode, bool translate_src,
		   unsigned int dir = NF_ILA_DIR_SIR2ILA)
{
	ila_xlat x;
	ila_xlat_init(&x, r.src.data(), r.dst.data(), r.len, mode, translate_src, dir);
	return x;
}

constexpr int kRounds = 20000;

// ---- prefix mapping ------------------------------------------------------------

TEST(IlaPrefix, MaskAndHostBits)
{
	uint8_t m[16];
	ila_pfx_mask(m, 0);
	for (auto b : m)
		EXPECT_EQ(b, 0);
	ila_pfx_mask(m, 60);
	EXPECT_EQ(m[6], 0xff);
	EXPECT_EQ(m[7], 0xf0);
	EXPECT_EQ(m[8], 0);
	ila_pfx_mask(m, 64);
	EXPECT_EQ(m[7], 0xff);
	EXPECT_EQ(m[8], 0);

	Addr a{};
	inet_pton(AF_INET6, "2001:db8:0:3::", a.data());
	EXPECT_TRUE(ila_pfx_host_bits_clear(a.data(), 64));
	EXPECT_FALSE(ila_pfx_host_bits_clear(a.data(), 63));	// ...:3 is ...0011
	EXPECT_TRUE(ila_pfx_host_bits_clear(a.data(), 65));
	inet_pton(AF_INET6, "2001:db8:0:3::1", a.data());
	EXPECT_FALSE(ila_pfx_host_bits_clear(a.data(), 64));
	EXPECT_TRUE(ila_pfx_host_bits_clear(a.data(), 128));
}

TEST(IlaPrefix, MatchAndRewriteKeepOtherBits)
{
	Gen g(1);
	for (int i = 0; i < kRounds; i++) {
		unsigned int len = g.below(65);
		Rule r = g.rule(len);
		ila_xlat x = make_xlat(r, NF_ILA_CSUM_ADJUST_TRANSPORT, false);
		Addr a = g.inside(r.src, len);
		ASSERT_TRUE(ila_match(&x, a.data()));

		Addr b = a;
		ila_xlat_addr(&x, b.data());
		uint8_t mask[16];
		ila_pfx_mask(mask, len);
		for (int k = 0; k < 16; k++)
			ASSERT_EQ(b[k], uint8_t((a[k] & ~mask[k]) | r.dst[k])) << "len " << len;

		if (len > 0) {	// one flipped prefix bit: outside, no match
			unsigned int bit = g.below(len);
			a[bit / 8] ^= uint8_t(0x80 >> (bit % 8));
			ASSERT_FALSE(ila_match(&x, a.data()));
		}
	}
}

TEST(IlaPrefix, DiffIsSumDstMinusSumSrc)
{
	Gen g(2);
	for (int i = 0; i < kRounds; i++) {
		Rule r = g.rule(g.below(65));
		ila_xlat x = make_xlat(r, NF_ILA_CSUM_ADJUST_TRANSPORT, false);
		uint16_t want = ref_fold(uint64_t(ref_fold(ref_add(0, r.dst.data(), 16))) +
					 uint16_t(~ref_fold(ref_add(0, r.src.data(), 16))));
		ASSERT_TRUE(oc_equal(be_of_raw(x.diff), want));
		ASSERT_NE(x.diff, 0xffff);	// zero is written as 0x0000
	}
}

TEST(IlaPrefix, DirectionOffsets)
{
	Rule r;
	ila_xlat d = make_xlat(r, NF_ILA_CSUM_NO_ACTION, false), s = make_xlat(r, NF_ILA_CSUM_NO_ACTION, true);
	EXPECT_EQ(d.aoff, 24);
	EXPECT_EQ(d.qoff, 8);
	EXPECT_EQ(s.aoff, 8);
	EXPECT_EQ(s.qoff, 24);
	static_assert(sizeof(ila_xlat) <= sizeof(xt_ila_tginfo::kpriv));
	static_assert(offsetof(xt_ila_tginfo, kpriv) % 8 == 0);
}

// ---- checksum modes vs full recomputation --------------------------------------

void translate(Packet &p, const ila_xlat &x, bool src, bool partial, uint16_t *tot = nullptr)
{
	uint8_t *a = src ? p.saddr() : p.daddr();
	uint16_t delta = ila_xlat_addr(&x, a);
	uint16_t t = delta;
	if (x.mode == NF_ILA_CSUM_ADJUST_TRANSPORT)
		t = ila_add16(t, ila_l4_csum_fix(p.check_field(), delta, partial, 1, p.proto == kUdp));
	if (tot)
		*tot = t;
}

class IlaModes : public ::testing::TestWithParam<bool> {};	// param: translate src

TEST_P(IlaModes, AdjustTransportFixesTheChecksum)
{
	const bool src = GetParam();
	Gen g(10 + src);
	for (int i = 0; i < kRounds; i++) {
		unsigned int len = 1 + g.below(64);
		Rule r = g.rule(len);
		ila_xlat x = make_xlat(r, NF_ILA_CSUM_ADJUST_TRANSPORT, src);
		Packet p = g.packet(g.proto());
		Addr a = g.inside(r.src, len);
		std::memcpy(src ? p.saddr() : p.daddr(), a.data(), 16);
		p.set_check(p.compute_check());
		ASSERT_TRUE(p.check_valid());
		uint16_t before = p.packet_sum(), tot;

		translate(p, x, src, false, &tot);
		ASSERT_TRUE(p.check_valid()) << "proto " << int(p.proto) << " len " << len;
		if (p.proto == kUdp) {
			ASSERT_NE(p.check(), 0);
		}
		// CHECKSUM_COMPLETE: the sum of everything changed keeps skb->csum true
		ASSERT_TRUE(oc_equal(p.packet_sum(), ref_fold(uint64_t(before) + be_of_raw(tot))));
	}
}

TEST_P(IlaModes, AdjustTransportPartialUpdatesPseudoHeaderSeed)
{
	const bool src = GetParam();
	Gen g(20 + src);
	for (int i = 0; i < kRounds; i++) {
		unsigned int len = 1 + g.below(64);
		Rule r = g.rule(len);
		ila_xlat x = make_xlat(r, NF_ILA_CSUM_ADJUST_TRANSPORT, src);
		Packet p = g.packet(g.proto());
		Addr a = g.inside(r.src, len);
		std::memcpy(src ? p.saddr() : p.daddr(), a.data(), 16);
		// CHECKSUM_PARTIAL: the field holds the folded pseudo-header sum
		p.set_check(p.pseudo_sum());
		translate(p, x, src, true);
		ASSERT_TRUE(oc_equal(p.check(), p.pseudo_sum()));
		// what the device then computes is right for the new addresses
		uint16_t seed = p.check();
		p.set_check(0);
		uint16_t final_sum = ref_fold(uint64_t(seed) + ref_add(0, p.l4.data(), p.l4.size()));
		p.set_check(uint16_t(~final_sum));
		ASSERT_TRUE(p.check_valid());
	}
}

TEST_P(IlaModes, ZeroUdpChecksumStaysZero)
{
	const bool src = GetParam();
	Gen g(30 + src);
	for (int i = 0; i < 1000; i++) {
		Rule r = g.rule(64);
		ila_xlat x = make_xlat(r, NF_ILA_CSUM_ADJUST_TRANSPORT, src);
		Packet p = g.packet(kUdp);
		Addr a = g.inside(r.src, 64);
		std::memcpy(src ? p.saddr() : p.daddr(), a.data(), 16);
		p.set_check(0);
		uint16_t before = p.packet_sum(), tot;
		translate(p, x, src, false, &tot);
		ASSERT_EQ(p.check(), 0);
		ASSERT_TRUE(oc_equal(p.packet_sum(), ref_fold(uint64_t(before) + be_of_raw(tot))));
	}
}

TEST_P(IlaModes, NeutralModesLeaveEveryChecksumValid)
{
	const bool src = GetParam();
	Gen g(40 + src);
	for (unsigned int mode : {NF_ILA_CSUM_NEUTRAL_MAP, NF_ILA_CSUM_NEUTRAL_MAP_AUTO, NF_ILA_CSUM_RFC6296}) {
		for (int i = 0; i < kRounds; i++) {
			unsigned int len = 1 + g.below(64);
			Rule r = g.rule(len);
			ila_xlat x = make_xlat(r, mode, src);
			Packet p = g.packet(g.proto());
			Addr a = g.inside(r.src, len);
			if (mode == NF_ILA_CSUM_NEUTRAL_MAP)
				a[ILA_CBIT_BYTE] &= uint8_t(~ILA_CBIT);	// a SIR address
			std::memcpy(src ? p.saddr() : p.daddr(), a.data(), 16);
			if (!ila_can_xlat(&x, a.data())) {
				if (mode == NF_ILA_CSUM_RFC6296) {	// no word to adjust
					ASSERT_GT(len, 48u);
					for (int k = 8; k < 16; k++)
						ASSERT_EQ(a[k], 0xff);
				} else {
					ASSERT_EQ(a[14] << 8 | a[15], 0xffff);
				}
				continue;
			}
			p.set_check(p.compute_check());
			uint16_t check = p.check(), before = p.packet_sum();

			uint16_t tot;
			translate(p, x, src, false, &tot);
			ASSERT_EQ(tot, 0);
			ASSERT_EQ(p.check(), check);	// the field is untouched ...
			ASSERT_TRUE(p.check_valid());	// ... and still right
			ASSERT_TRUE(oc_equal(p.packet_sum(), before));
			const uint8_t *b = src ? p.saddr() : p.daddr();
			ASSERT_TRUE(ila_match(&x, a.data()));
			if (mode == NF_ILA_CSUM_RFC6296)
				continue;	// against ip6t_NPT: ila_peer_models_test
			// identifier kept except the C-bit and the low 16 bits
			for (int k = 8; k < 14; k++) {
				uint8_t m = (k == ILA_CBIT_BYTE && mode == NF_ILA_CSUM_NEUTRAL_MAP) ? uint8_t(~ILA_CBIT) : 0xff;
				ASSERT_EQ(b[k] & m, a[k] & m);
			}
			if (mode == NF_ILA_CSUM_NEUTRAL_MAP)
				ASSERT_TRUE(b[ILA_CBIT_BYTE] & ILA_CBIT);
			else
				ASSERT_EQ(b[ILA_CBIT_BYTE] & ILA_CBIT, a[ILA_CBIT_BYTE] & ILA_CBIT);
			ASSERT_NE(b[14] << 8 | b[15], 0xffff);
		}
	}
}

TEST_P(IlaModes, NoneLeavesTheChecksumAlone)
{
	const bool src = GetParam();
	Gen g(50 + src);
	for (int i = 0; i < kRounds; i++) {
		unsigned int len = 1 + g.below(64);
		Rule r = g.rule(len);
		ila_xlat x = make_xlat(r, NF_ILA_CSUM_NO_ACTION, src);
		Packet p = g.packet(g.proto());
		Addr a = g.inside(r.src, len);
		std::memcpy(src ? p.saddr() : p.daddr(), a.data(), 16);
		p.set_check(p.compute_check());
		uint16_t check = p.check(), before = p.packet_sum();
		uint16_t tot;
		translate(p, x, src, false, &tot);
		ASSERT_EQ(p.check(), check);
		ASSERT_EQ(p.check_valid(), x.diff == 0);	// wrong on the wire unless sums agree
		ASSERT_TRUE(oc_equal(p.packet_sum(), ref_fold(uint64_t(before) + be_of_raw(tot))));
	}
}

INSTANTIATE_TEST_SUITE_P(IlaDstAndSrc, IlaModes, ::testing::Bool(),
			 [](const auto &info) { return std::string(info.param ? "src" : "dst"); });

// ---- round trips --------------------------------------------------------------

TEST(IlaRoundTrip, SirToIlaToSirRestoresEveryBit)
{
	Gen g(60);
	for (unsigned int mode : {NF_ILA_CSUM_ADJUST_TRANSPORT, NF_ILA_CSUM_NEUTRAL_MAP,
				  NF_ILA_CSUM_NEUTRAL_MAP_AUTO, NF_ILA_CSUM_NO_ACTION, NF_ILA_CSUM_RFC6296}) {
		for (int i = 0; i < kRounds; i++) {
			unsigned int len = 1 + g.below(64);
			Rule fwd = g.rule(len), back;
			back.len = len;
			back.src = fwd.dst;
			back.dst = fwd.src;
			ila_xlat x1 = make_xlat(fwd, mode, g.below(2), NF_ILA_DIR_SIR2ILA);
			ila_xlat x2 = make_xlat(back, mode, g.below(2), NF_ILA_DIR_ILA2SIR);

			Addr sir = g.inside(fwd.src, len);
			sir[ILA_CBIT_BYTE] &= uint8_t(~ILA_CBIT);
			switch (i % 4) {	// the edge values of the adjusted word
			case 0: sir[14] = sir[15] = 0; break;
			case 1: sir[14] = 0xff; sir[15] = 0xfe; break;
			default: break;
			}
			if (!ila_can_xlat(&x1, sir.data()))
				continue;
			// one's complement has two zeros: an adjusted word that
			// was ffff comes back as 0000 (man page, ila_csum.h)
			if (mode == NF_ILA_CSUM_NEUTRAL_MAP_AUTO && sir[14] == 0xff && sir[15] == 0xff)
				continue;
			if (mode == NF_ILA_CSUM_RFC6296) {
				unsigned int w = ila_rfc6296_word(&x1, sir.data());
				if (sir[w] == 0xff && sir[w + 1] == 0xff)
					continue;
			}
			Addr ila = sir;
			ila_xlat_addr(&x1, ila.data());
			ASSERT_TRUE(ila_match(&x2, ila.data()));
			ASSERT_TRUE(ila_can_xlat(&x2, ila.data()));
			Addr back_addr = ila;
			ila_xlat_addr(&x2, back_addr.data());
			ASSERT_EQ(back_addr, sir) << "mode " << mode << " len " << len;
		}
	}
}

TEST(IlaRoundTrip, WhatIsRefused)
{
	Rule r;
	inet_pton(AF_INET6, "2001:db8:0:3::", r.src.data());
	inet_pton(AF_INET6, "3333:0:0:1::", r.dst.data());
	Addr a{}, c{};
	inet_pton(AF_INET6, "2001:db8:0:3::ffff", a.data());
	inet_pton(AF_INET6, "2001:db8:0:3:1000::1", c.data());	// C-bit set
	// neutral-map SIR -> ILA: ffff could not come back, a C-bit is malformed
	ila_xlat x = make_xlat(r, NF_ILA_CSUM_NEUTRAL_MAP, false, NF_ILA_DIR_SIR2ILA);
	EXPECT_FALSE(ila_can_xlat(&x, a.data()));
	EXPECT_FALSE(ila_can_xlat(&x, c.data()));
	// ILA -> SIR accepts both (0xffff is the kernel's zero)
	x = make_xlat(r, NF_ILA_CSUM_NEUTRAL_MAP, false, NF_ILA_DIR_ILA2SIR);
	EXPECT_TRUE(ila_can_xlat(&x, a.data()));
	EXPECT_TRUE(ila_can_xlat(&x, c.data()));
	for (unsigned int mode : {NF_ILA_CSUM_ADJUST_TRANSPORT, NF_ILA_CSUM_NO_ACTION,
				  NF_ILA_CSUM_NEUTRAL_MAP_AUTO, NF_ILA_CSUM_RFC6296}) {
		x = make_xlat(r, mode, false);
		EXPECT_TRUE(ila_can_xlat(&x, a.data()));
		EXPECT_TRUE(ila_can_xlat(&x, c.data()));
	}
	// rfc6296 beyond /48: words 4..7 all ffff leave nothing to adjust
	Addr ones{};
	inet_pton(AF_INET6, "2001:db8:0:3:ffff:ffff:ffff:ffff", ones.data());
	x = make_xlat(r, NF_ILA_CSUM_RFC6296, false);
	EXPECT_FALSE(ila_can_xlat(&x, ones.data()));
	r.len = 48;
	x = make_xlat(r, NF_ILA_CSUM_RFC6296, false);
	EXPECT_TRUE(ila_can_xlat(&x, ones.data()));
}

// The per-packet /64 builder of the map paths equals the general one.
TEST(IlaPrefix, Init64EqualsInitWithLength64)
{
	Gen g(70);
	for (int i = 0; i < kRounds; i++) {
		Rule r = g.rule(64);
		unsigned int mode = g.below(__NF_ILA_CSUM_MAX), dir = g.below(2);
		bool src = g.below(2);
		ila_xlat a, b;
		std::memset(&b, 0xa5, sizeof(b));	// init64 must set every byte
		ila_xlat_init(&a, r.src.data(), r.dst.data(), 64, mode, src, dir);
		ila_xlat_init64(&b, r.src.data(), r.dst.data(), mode, src, dir);
		ASSERT_EQ(std::memcmp(&a, &b, sizeof(a)), 0) << "mode " << mode;
	}
}

// The 64-bit sum equals ila_sum16 over the same 8 bytes (up to the form of
// zero), at random and at the carry corner cases.
TEST(IlaPrefix, Sum64EqualsSum16)
{
	Gen g(71);
	auto check = [](const uint8_t *p) {
		uint16_t a = ila_sum16(p, 4), b = ila_sum64(ila_get64(p));
		EXPECT_EQ(ila_canon16(a), ila_canon16(b));
	};
	for (int i = 0; i < kRounds; i++) {
		Addr a = g.addr();
		check(a.data());
	}
	for (uint8_t fill : {0x00, 0x01, 0x7f, 0x80, 0xfe, 0xff}) {
		Addr a;
		a.fill(fill);
		check(a.data());
		a[g.below(8)] ^= 1;
		check(a.data());
	}
}

// The locator-only path (ila_match64, ila_xlat_loc, x->diff, and
// ila_loc_diff for map entries) computes what ila_match/ila_xlat_addr do.
TEST(IlaPrefix, LocatorOnlyPathEqualsTheRule)
{
	Gen g(72);
	for (int i = 0; i < kRounds; i++) {
		unsigned int len = 1 + g.below(64);
		Rule r = g.rule(len);
		unsigned int mode = g.below(2) ? NF_ILA_CSUM_ADJUST_TRANSPORT :
						 NF_ILA_CSUM_NO_ACTION;
		ASSERT_TRUE(ila_mode_loc_only(mode));
		ila_xlat x = make_xlat(r, mode, false);
		Addr a = g.below(4) ? g.inside(r.src, len) : g.addr();
		ASSERT_EQ(ila_match64(&x, ila_get64(a.data())) != 0,
			  ila_match(&x, a.data()) != 0);
		if (!ila_match(&x, a.data()))
			continue;
		Addr b = a;
		uint16_t diff = ila_xlat_addr(&x, b.data());
		EXPECT_EQ(ila_xlat_loc(&x, ila_get64(a.data())), ila_get64(b.data()));
		EXPECT_EQ(std::memcmp(a.data() + 8, b.data() + 8, 8), 0);
		EXPECT_EQ(diff, x.diff);
		// a map entry: a /64 from the packet's own locator to b's
		ila_xlat m;
		ila_xlat_init64(&m, a.data(), b.data(), mode, 0, NF_ILA_DIR_SIR2ILA);
		EXPECT_EQ(ila_loc_diff(ila_sum16(b.data(), 4), ila_get64(a.data())),
			  m.diff);
		EXPECT_EQ(m.diff, x.diff);
	}
	for (unsigned int mode : {NF_ILA_CSUM_NEUTRAL_MAP, NF_ILA_CSUM_NEUTRAL_MAP_AUTO,
				  NF_ILA_CSUM_RFC6296})
		EXPECT_FALSE(ila_mode_loc_only(mode));
}

// The example of the man page (xtables/libxt_ILA.man) and tests/bats/ila.bats.
TEST(IlaRoundTrip, ManPageExample)
{
	Rule r;
	r.len = 64;
	inet_pton(AF_INET6, "2001:db8:0:3::", r.src.data());
	inet_pton(AF_INET6, "3333:0:0:1::", r.dst.data());
	Addr a{};
	inet_pton(AF_INET6, "2001:db8:0:3::5", a.data());

	ila_xlat x = make_xlat(r, NF_ILA_CSUM_NEUTRAL_MAP, false);
	ila_xlat_addr(&x, a.data());
	char buf[INET6_ADDRSTRLEN];
	inet_ntop(AF_INET6, a.data(), buf, sizeof(buf));
	EXPECT_STREQ(buf, "3333::1:1000:0:0:ea8c");

	inet_pton(AF_INET6, "2001:db8:0:3::5", a.data());
	x = make_xlat(r, NF_ILA_CSUM_NEUTRAL_MAP_AUTO, false);
	ila_xlat_addr(&x, a.data());
	inet_ntop(AF_INET6, a.data(), buf, sizeof(buf));
	EXPECT_STREQ(buf, "3333:0:0:1::fa8c");
}

} // namespace

// ---- which address the pseudo-header holds (extension headers) --------------

namespace {

// An IPv6 header whose next header is FIRST, followed by EXT.
std::vector<std::uint8_t> ip6_with(std::uint8_t first, const std::vector<std::uint8_t> &ext)
{
	std::vector<std::uint8_t> p(40 + ext.size(), 0);
	p[0] = 0x60;
	p[6] = first;
	std::copy(ext.begin(), ext.end(), p.begin() + 40);
	return p;
}

} // namespace

TEST(IlaPseudoHeader, PlainTransportUsesBothAddresses)
{
	auto p = ip6_with(17, {});
	EXPECT_EQ(ila_pseudo_uses_addr(p.data(), unsigned(p.size()), 1), 1);
	EXPECT_EQ(ila_pseudo_uses_addr(p.data(), unsigned(p.size()), 0), 1);
}

TEST(IlaPseudoHeader, RoutingHeaderWithSegmentsLeftHidesTheDestination)
{
	// SRH (type 4), hdr ext len 2 (one segment), segments left 1, then UDP
	std::vector<std::uint8_t> srh(24, 0);
	srh[0] = 17;
	srh[1] = 2;
	srh[2] = 4;
	srh[3] = 1;
	auto p = ip6_with(43, srh);
	EXPECT_EQ(ila_pseudo_uses_addr(p.data(), unsigned(p.size()), 1), 0);
	EXPECT_EQ(ila_pseudo_uses_addr(p.data(), unsigned(p.size()), 0), 1); // the source is in it
	p[40 + 3] = 0; // segments left 0: the destination is final
	EXPECT_EQ(ila_pseudo_uses_addr(p.data(), unsigned(p.size()), 1), 1);
	// behind a Hop-by-Hop header
	std::vector<std::uint8_t> hbh = {43, 0, 1, 4, 0, 0, 0, 0};
	hbh.insert(hbh.end(), srh.begin(), srh.end());
	auto q = ip6_with(0, hbh);
	EXPECT_EQ(ila_pseudo_uses_addr(q.data(), unsigned(q.size()), 1), 0);
}

TEST(IlaPseudoHeader, HomeAddressOptionHidesTheSource)
{
	// Destination Options: Pad1 Pad1 PadN(2) HAO(16) -> 24 bytes (len 2)
	std::vector<std::uint8_t> dopt = {17, 2, 0, 0, 1, 0, 201, 16};
	dopt.resize(24, 0xab);
	auto p = ip6_with(60, dopt);
	EXPECT_EQ(ila_pseudo_uses_addr(p.data(), unsigned(p.size()), 0), 0);
	EXPECT_EQ(ila_pseudo_uses_addr(p.data(), unsigned(p.size()), 1), 1);
	// another option of the same size is no home address
	p[40 + 6] = 0x1e;
	EXPECT_EQ(ila_pseudo_uses_addr(p.data(), unsigned(p.size()), 0), 1);
}

TEST(IlaPseudoHeader, TruncatedOrBogusHeadersAreTakenAsPlain)
{
	std::vector<std::uint8_t> srh = {17, 200, 4, 1, 0, 0, 0, 0}; // claims 1608 bytes
	auto p = ip6_with(43, srh);
	EXPECT_EQ(ila_pseudo_uses_addr(p.data(), unsigned(p.size()), 1), 1);
	std::vector<std::uint8_t> dopt = {17, 0, 201}; // option runs past the header
	dopt.resize(8, 0);
	dopt[2] = 1;
	dopt[3] = 200;
	auto q = ip6_with(60, dopt);
	EXPECT_EQ(ila_pseudo_uses_addr(q.data(), unsigned(q.size()), 0), 1);
}
