// SPDX-License-Identifier: GPL-2.0-only
/*
 * include/common/ila_csum.h against models of the two translators we must
 * interoperate with, each written here from its kernel source's rules with
 * the kernel's own checksum primitives re-implemented on big-endian words
 * (csum_partial, csum_add, csum_fold: 32-bit end-around-carry sums):
 *
 *  - the kernel's ILA, net/ipv6/ila/ila_common.c (ila_update_ipv6_locator:
 *    neutral-map with the C-bit rules, neutral-map-auto), and
 *  - NPTv6, net/ipv6/netfilter/ip6t_NPT.c (ip6t_npt_map_pfx, RFC 6296).
 *
 * rfc6296 must be bit-identical to ip6t_NPT; the ILA modes must agree with
 * the kernel's ILA address for address except where the two write the two
 * one's complement zeros differently, and must translate each other's
 * addresses back to the original.
 */
#include <gtest/gtest.h>

#include <arpa/inet.h>

#include <array>
#include <cstdint>
#include <cstring>
#include <optional>
#include <random>

#include <common/ila_csum.h>

namespace {

using Addr = std::array<uint8_t, 16>;

// ---- the kernel's checksum primitives, on big-endian word values ------------

uint32_t k_add(uint32_t a, uint32_t b)	// csum_add
{
	uint32_t s = a + b;
	return s + (s < a);
}

uint16_t k_fold_sum(uint32_t s)	// ~csum_fold(s): the folded, uncomplemented sum
{
	s = (s & 0xffff) + (s >> 16);
	s = (s & 0xffff) + (s >> 16);
	return uint16_t(s);
}

uint32_t k_partial(const uint8_t *p, size_t n)	// csum_partial(p, n, 0), n even
{
	uint32_t s = 0;
	for (size_t i = 0; i < n; i += 2)
		s = k_add(s, uint32_t(p[i] << 8 | p[i + 1]));
	return s;
}

uint16_t word(const Addr &a, unsigned int i) { return uint16_t(a[2 * i] << 8 | a[2 * i + 1]); }
void set_word(Addr &a, unsigned int i, uint16_t v)
{
	a[2 * i] = uint8_t(v >> 8);
	a[2 * i + 1] = uint8_t(v);
}

// ---- model of net/ipv6/ila/ila_common.c --------------------------------------

enum KMode { K_ADJUST_TRANSPORT, K_NEUTRAL_MAP, K_NO_ACTION, K_NEUTRAL_MAP_AUTO };

// compute_csum_diff8(from, to): csum_partial of {~from[0], ~from[1], to[0], to[1]}
uint32_t k_diff8(const uint8_t *from, const uint8_t *to)
{
	uint8_t buf[16];
	for (int i = 0; i < 8; i++) {
		buf[i] = uint8_t(~from[i]);
		buf[8 + i] = to[i];
	}
	return k_partial(buf, 16);
}

// ila_update_ipv6_locator() on the address, with ila_params { locator_match =
// the address's current locator, locator = loc, csum_mode }. Returns false
// where the kernel WARNs (a SIR address with the C-bit set).
bool kernel_ila(Addr &a, const uint8_t loc[8], KMode mode, bool sir2ila)
{
	const bool cbit = a[8] & 0x10;
	auto neutral = [&](bool fmt) {
		uint32_t diff = k_diff8(loc, a.data());	// (from = new, to = old)
		if (fmt) {
			// CSUM_NEUTRAL_FLAG = htonl(0x10000000), or its complement
			const uint8_t flag[4] = {0x10, 0, 0, 0}, nflag[4] = {0xef, 0xff, 0xff, 0xff};
			diff = k_add(diff, k_partial(cbit ? flag : nflag, 4));
		}
		set_word(a, 7, k_fold_sum(k_add(diff, word(a, 7))));
		if (fmt)
			a[8] ^= 0x10;
	};
	bool ok = true;
	switch (mode) {
	case K_NEUTRAL_MAP:
		if (sir2ila && cbit)
			ok = false;	/* WARN_ON, no adjustment */
		else if (sir2ila || cbit)
			neutral(true);
		break;
	case K_NEUTRAL_MAP_AUTO:
		neutral(false);
		break;
	default:
		break;	// adjust-transport changes the L4 checksum, not the address
	}
	std::memcpy(a.data(), loc, 8);
	return ok;
}

// ---- model of net/ipv6/netfilter/ip6t_NPT.c ------------------------------------

struct Npt {
	Addr src{}, dst{};
	unsigned int len = 0;
	uint16_t adjustment = 0;

	Npt(const Addr &s, const Addr &d, unsigned int l) : src(s), dst(d), len(l)
	{
		// ~csum_fold(csum_sub(src_sum, dst_sum)), csum_sub(a, b) = csum_add(a, ~b)
		adjustment = k_fold_sum(k_add(k_partial(src.data(), 16), ~k_partial(dst.data(), 16)));
	}

	// ip6t_npt_map_pfx(); false: all of words 4..7 are 0xffff (dropped)
	bool map(Addr &a) const
	{
		for (unsigned int i = 0; i < len; i += 32) {
			uint32_t mask = len - i >= 32 ? 0 : (1u << (i - len + 32)) - 1;
			for (int b = 0; b < 4; b++) {
				uint8_t m = uint8_t(mask >> (24 - 8 * b));
				a[i / 8 + b] = uint8_t((a[i / 8 + b] & m) | (~m & dst[i / 8 + b]));
			}
		}
		unsigned int idx = 3;
		if (len > 48) {
			for (idx = 4; idx < 8; idx++)
				if (word(a, idx) != 0xffff)
					break;
			if (idx == 8)
				return false;
		}
		uint16_t sum = k_fold_sum(k_add(word(a, idx), adjustment));
		if (sum == 0xffff)
			sum = 0;
		set_word(a, idx, sum);
		return true;
	}
};

// ---- helpers ------------------------------------------------------------------

class Rng {
public:
	explicit Rng(uint32_t seed) : r_(seed) {}
	uint32_t operator()() { return r_(); }
	unsigned int below(unsigned int n) { return unsigned(r_() % n); }
	Addr addr()
	{
		Addr a;
		for (auto &b : a)
			b = uint8_t(r_());
		return a;
	}
	Addr prefix(unsigned int len)
	{
		Addr a = addr();
		uint8_t m[16];
		ila_pfx_mask(m, len);
		for (int i = 0; i < 16; i++)
			a[i] &= m[i];
		return a;
	}
	Addr inside(const Addr &pfx, unsigned int len)
	{
		Addr a = addr();
		uint8_t m[16];
		ila_pfx_mask(m, len);
		for (int i = 0; i < 16; i++)
			a[i] = uint8_t((a[i] & ~m[i]) | pfx[i]);
		return a;
	}

private:
	std::mt19937 r_;
};

ila_xlat ours(const Addr &src, const Addr &dst, unsigned int len, unsigned int mode,
	      unsigned int dir = NF_ILA_DIR_SIR2ILA)
{
	ila_xlat x;
	ila_xlat_init(&x, src.data(), dst.data(), len, mode, 0, dir);
	return x;
}

std::optional<Addr> ours_xlat(const ila_xlat &x, Addr a)
{
	if (!ila_match(&x, a.data()) || !ila_can_xlat(&x, a.data()))
		return std::nullopt;
	ila_xlat_addr(&x, a.data());
	return a;
}

bool zero16(uint16_t v) { return v == 0 || v == 0xffff; }

// equal, except that word 7 may hold either one's complement zero
bool equal_but_zero(const Addr &a, const Addr &b)
{
	if (std::memcmp(a.data(), b.data(), 14))
		return false;
	return word(a, 7) == word(b, 7) || (zero16(word(a, 7)) && zero16(word(b, 7)));
}

// an address whose word 7 is made to hit a given value after adjustment
constexpr int kRounds = 50000;

// ---- rfc6296 == ip6t_NPT, bit for bit -------------------------------------------

TEST(PeerNpt, Rfc6296IsBitIdenticalToNpt)
{
	Rng g(1);
	for (int i = 0; i < kRounds; i++) {
		unsigned int len = 1 + g.below(64);
		Addr src = g.prefix(len), dst = g.prefix(len);
		Npt npt(src, dst, len);
		ila_xlat x = ours(src, dst, len, NF_ILA_CSUM_RFC6296);
		Addr a = g.inside(src, len);
		switch (i % 5) {	// the words RFC 6296 treats specially
		case 0: set_word(a, 4, 0xffff); break;
		case 1: set_word(a, 4, 0xffff); set_word(a, 5, 0xffff); break;
		case 2: for (unsigned int w = 4; w < 8; w++) set_word(a, w, 0xffff); break;
		case 3: set_word(a, len <= 48 ? 3 : 4, 0); break;
		default: break;
		}
		Addr n = a;
		bool nok = npt.map(n);
		auto o = ours_xlat(x, a);
		ASSERT_EQ(nok, o.has_value()) << "len " << len;
		if (nok) {
			ASSERT_EQ(*o, n) << "len " << len;
		}
	}
}

TEST(PeerNpt, ResultWordZeroIsWritten0000)
{
	// choose the address so that the adjusted word sums to zero
	Rng g(2);
	for (unsigned int len : {16u, 48u, 56u, 64u}) {
		for (int i = 0; i < 100; i++) {
			Addr src = g.prefix(len), dst = g.prefix(len);
			Npt npt(src, dst, len);
			Addr a = g.inside(src, len);
			unsigned int w = len <= 48 ? 3 : 4;
			if (w == 4)
				set_word(a, 4, 1);	// any non-ffff word
			set_word(a, w, uint16_t(~npt.adjustment));
			Addr n = a;
			ASSERT_TRUE(npt.map(n));
			ASSERT_EQ(word(n, w), 0);
			auto o = ours_xlat(ours(src, dst, len, NF_ILA_CSUM_RFC6296), a);
			ASSERT_TRUE(o);
			ASSERT_EQ(*o, n);
		}
	}
}

TEST(PeerNpt, DnptUndoesOurSnptAndTheReverse)
{
	Rng g(3);
	for (int i = 0; i < kRounds; i++) {
		unsigned int len = 1 + g.below(64);
		Addr in = g.prefix(len), out = g.prefix(len);
		Addr a = g.inside(in, len);
		// ours inside -> outside, NPT back
		auto o = ours_xlat(ours(in, out, len, NF_ILA_CSUM_RFC6296), a);
		if (!o)
			continue;
		Addr back = *o;
		ASSERT_TRUE(Npt(out, in, len).map(back));
		unsigned int w = len <= 48 ? 3 : 4;
		while (w < 8 && len > 48 && word(a, w) == 0xffff)
			w++;
		if (word(a, w) == 0xffff)	// written back as 0000, as NPT does itself
			continue;
		ASSERT_EQ(back, a);
		// NPT inside -> outside, ours back
		Addr n = a;
		ASSERT_TRUE(Npt(in, out, len).map(n));
		auto r = ours_xlat(ours(out, in, len, NF_ILA_CSUM_RFC6296), n);
		ASSERT_TRUE(r);
		ASSERT_EQ(*r, a);
	}
}

// ---- ILA modes vs the kernel's ILA ---------------------------------------------

struct IlaCase {
	Addr sir_pfx, loc_pfx, sir;
};

IlaCase ila_case(Rng &g, int i)
{
	IlaCase c{g.prefix(64), g.prefix(64), {}};
	c.sir = g.inside(c.sir_pfx, 64);
	c.sir[8] &= uint8_t(~0x10);	// a SIR address has no C-bit
	switch (i % 6) {	// the low 16 bits around the two zeros
	case 0: set_word(c.sir, 7, 0); break;
	case 1: set_word(c.sir, 7, 0xffff); break;
	case 2: set_word(c.sir, 7, 1); break;
	default: break;
	}
	return c;
}

TEST(PeerKernelIla, SirToIlaAgreesWithTheKernel)
{
	Rng g(10);
	for (unsigned int mode : {NF_ILA_CSUM_NEUTRAL_MAP, NF_ILA_CSUM_NEUTRAL_MAP_AUTO,
				  NF_ILA_CSUM_ADJUST_TRANSPORT, NF_ILA_CSUM_NO_ACTION}) {
		for (int i = 0; i < kRounds; i++) {
			IlaCase c = ila_case(g, i);
			Addr k = c.sir;
			ASSERT_TRUE(kernel_ila(k, c.loc_pfx.data(), KMode(mode), true));
			auto o = ours_xlat(ours(c.sir_pfx, c.loc_pfx, 64, mode), c.sir);
			if (!o) {	// only neutral-map refuses, and only ffff
				ASSERT_EQ(mode, NF_ILA_CSUM_NEUTRAL_MAP);
				ASSERT_EQ(word(c.sir, 7), 0xffff);
				continue;
			}
			ASSERT_TRUE(equal_but_zero(*o, k)) << "mode " << mode;
			if (ila_mode_neutral(mode)) {
				ASSERT_NE(word(*o, 7), 0xffff);	// ours writes zero as 0000
			}
		}
	}
}

TEST(PeerKernelIla, OursUndoesTheKernelsSirToIla)
{
	Rng g(11);
	for (unsigned int mode : {NF_ILA_CSUM_NEUTRAL_MAP, NF_ILA_CSUM_NEUTRAL_MAP_AUTO,
				  NF_ILA_CSUM_ADJUST_TRANSPORT, NF_ILA_CSUM_NO_ACTION}) {
		for (int i = 0; i < kRounds; i++) {
			IlaCase c = ila_case(g, i);
			Addr k = c.sir;
			kernel_ila(k, c.loc_pfx.data(), KMode(mode), true);
			auto back = ours_xlat(ours(c.loc_pfx, c.sir_pfx, 64, mode, NF_ILA_DIR_ILA2SIR), k);
			ASSERT_TRUE(back) << "mode " << mode;	// 0xffff from the kernel accepted
			if (ila_mode_neutral(mode) && word(c.sir, 7) == 0xffff) {
				ASSERT_EQ(word(*back, 7), 0);	// two zeros, one representation
				continue;
			}
			ASSERT_EQ(*back, c.sir) << "mode " << mode;
		}
	}
}

TEST(PeerKernelIla, TheKernelUndoesOurSirToIla)
{
	Rng g(12);
	for (unsigned int mode : {NF_ILA_CSUM_NEUTRAL_MAP, NF_ILA_CSUM_NEUTRAL_MAP_AUTO,
				  NF_ILA_CSUM_ADJUST_TRANSPORT, NF_ILA_CSUM_NO_ACTION}) {
		for (int i = 0; i < kRounds; i++) {
			IlaCase c = ila_case(g, i);
			auto o = ours_xlat(ours(c.sir_pfx, c.loc_pfx, 64, mode), c.sir);
			if (!o)
				continue;
			Addr k = *o;
			ASSERT_TRUE(kernel_ila(k, c.sir_pfx.data(), KMode(mode), false));
			// the kernel turns a 0000 it restores into ffff: its own round
			// trip does the same, checksums are equal either way
			ASSERT_TRUE(equal_but_zero(k, c.sir)) << "mode " << mode;
			if (word(c.sir, 7) != 0 || !ila_mode_neutral(mode)) {
				ASSERT_EQ(k, c.sir);
			}
		}
	}
}

TEST(PeerKernelIla, KernelZeroAsFfffIsRestored)
{
	// a SIR identifier whose adjusted word sums to zero: the kernel writes
	// ffff, we write 0000; each side restores the other's
	Rng g(13);
	for (int i = 0; i < 1000; i++) {
		IlaCase c = ila_case(g, 3);
		for (unsigned int mode : {NF_ILA_CSUM_NEUTRAL_MAP, NF_ILA_CSUM_NEUTRAL_MAP_AUTO}) {
			Addr probe = c.sir;
			set_word(probe, 7, 0);
			kernel_ila(probe, c.loc_pfx.data(), KMode(mode), true);
			Addr sir = c.sir;
			set_word(sir, 7, uint16_t(~word(probe, 7)));	// v = -adjustment
			if (zero16(word(sir, 7)))
				continue;
			Addr k = sir;
			kernel_ila(k, c.loc_pfx.data(), KMode(mode), true);
			ASSERT_EQ(word(k, 7), 0xffff);
			auto back = ours_xlat(ours(c.loc_pfx, c.sir_pfx, 64, mode, NF_ILA_DIR_ILA2SIR), k);
			ASSERT_TRUE(back);
			ASSERT_EQ(*back, sir);
			auto o = ours_xlat(ours(c.sir_pfx, c.loc_pfx, 64, mode), sir);
			ASSERT_TRUE(o);
			ASSERT_EQ(word(*o, 7), 0);
			Addr kb = *o;
			kernel_ila(kb, c.sir_pfx.data(), KMode(mode), false);
			ASSERT_EQ(kb, sir);
		}
	}
}

TEST(PeerKernelIla, CBitRules)
{
	Rng g(14);
	for (int i = 0; i < kRounds; i++) {
		IlaCase c = ila_case(g, i);
		ila_xlat back = ours(c.loc_pfx, c.sir_pfx, 64, NF_ILA_CSUM_NEUTRAL_MAP, NF_ILA_DIR_ILA2SIR);
		// an ILA address from an adjust-transport / no-action peer: no
		// C-bit; ILA -> SIR replaces the locator, identifier untouched
		Addr ila = c.sir;
		std::memcpy(ila.data(), c.loc_pfx.data(), 8);
		Addr k = ila;
		kernel_ila(k, c.sir_pfx.data(), K_NEUTRAL_MAP, false);
		auto o = ours_xlat(back, ila);
		ASSERT_TRUE(o);
		ASSERT_EQ(*o, k);
		ASSERT_EQ(*o, c.sir);
		ASSERT_EQ(ila_xlat_addr(&back, ila.data()), back.diff);	// the sum moved
		// SIR -> ILA sets the C-bit; the kernel WARNs on a set one, we drop
		Addr bad = c.sir;
		bad[8] |= 0x10;
		Addr kb = bad;
		ASSERT_FALSE(kernel_ila(kb, c.loc_pfx.data(), K_NEUTRAL_MAP, true));
		ASSERT_FALSE(ours_xlat(ours(c.sir_pfx, c.loc_pfx, 64, NF_ILA_CSUM_NEUTRAL_MAP), bad));
		auto s = ours_xlat(ours(c.sir_pfx, c.loc_pfx, 64, NF_ILA_CSUM_NEUTRAL_MAP), c.sir);
		if (s) {
			ASSERT_TRUE((*s)[8] & 0x10);
		}
	}
}

} // namespace
