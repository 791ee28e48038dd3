/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ILA prefix translation and checksum arithmetic, as plain C shared by the
 * kernel target (kernel/xt_ILA.c), the iptables plugin and the host unit
 * tests (tests/unit/ila_*_test.cpp). No kernel-only API in here.
 *
 * "Raw" 16/32-bit values are the bytes as they lie in the packet, loaded
 * into a host integer without byte swapping. One's complement sums do not
 * depend on byte order as long as every operand is raw, so nothing here
 * swaps bytes on the packet path.
 *
 * An IPv6 address is locator (upper 64 bits) + identifier (lower 64). A
 * translation moves addresses inside the source prefix (length 1..64) into
 * the destination prefix, which changes the one's complement sum of the
 * address by a constant, diff = sum(dst prefix) - sum(src prefix). The
 * checksum modes deal with that change (numbers as in <linux/ila.h>, plus
 * rfc6296):
 *
 *  adjust-transport  the TCP/UDP/ICMPv6 checksum absorbs diff (pseudo-header)
 *  neutral-map       the identifier's low 16 bits absorb it, so the address
 *                    sum (and every checksum over it) is unchanged, and the
 *                    C-bit (0x10 in byte 8) marks an address carrying the
 *                    adjustment. As net/ipv6/ila/ila_common.c: SIR -> ILA
 *                    adjusts and sets the C-bit (a SIR address with the
 *                    C-bit set is malformed: dropped, where the kernel
 *                    WARNs and corrupts the checksum); ILA -> SIR undoes
 *                    the adjustment and clears the C-bit only when it is
 *                    set, and otherwise (an address from an
 *                    adjust-transport or no-action peer) replaces the
 *                    locator and leaves the identifier untouched.
 *  no-action         checksums are left as they are
 *  neutral-map-auto  like neutral-map without the C-bit: every translation
 *                    adjusts the low 16 bits
 *  rfc6296           RFC 6296 section 3.5 (NPTv6, ip6t_NPT): a word of the
 *                    address absorbs diff: word 3 (bits 48..63) for a prefix
 *                    of 48 bits or less, else the first of words 4..7 that
 *                    is not 0xffff (all 0xffff: not translatable, dropped);
 *                    a result of 0xffff is written 0x0000
 *
 * One's complement has two zeros (0x0000, 0xffff). We write an adjusted
 * word with 0x0000 for zero, as RFC 6296 does; the kernel's ILA writes
 * 0xffff. Both forms are accepted on input, so a kernel peer's address
 * translates back to the original. A SIR -> ILA neutral-map translation of
 * an identifier whose low 16 bits are 0xffff could not be restored (it
 * would come back as 0000) and is refused; the direction-less
 * neutral-map-auto translates it (the kernel's ILA restores ffff but turns
 * 0000 into ffff).
 */
#ifndef _NFILR_COMMON_ILA_CSUM_H
#define _NFILR_COMMON_ILA_CSUM_H

#include <linux/types.h>
#include <linux/nf_ila.h>	/* NF_ILA_CSUM_*, NF_ILA_DIR_* */

#define ILA_IP6_HLEN		40	/* fixed IPv6 header */
#define ILA_IP6_SADDR_OFF	8
#define ILA_IP6_DADDR_OFF	24
#define ILA_CBIT_BYTE		8	/* C-bit: first identifier byte ... */
#define ILA_CBIT		0x10	/* ... this bit */
#define ILA_ADJ_OFF		14	/* the identifier's low 16 bits */
#define ILA_MAX_PFX_LEN		64

/* Precomputed state of one rule: everything the packet path needs. */
struct ila_xlat {
	__u32 src[2];	/* raw upper 64 bits of the source prefix */
	__u32 mask[2];	/* raw prefix mask */
	__u32 dst[2];	/* raw upper 64 bits of the destination prefix */
	__u16 diff;	/* raw one's complement sum(dst) - sum(src), 0 for zero */
	__u16 adj;	/* neutral modes: added to the low 16 bits (C-bit clear) */
	__u16 adj_clear; /* neutral-map: added when the C-bit is set (cleared) */
	__u8 mode;	/* enum nf_ila_csum_mode */
	__u8 aoff;	/* offset of the translated address in the IPv6 header */
	__u8 qoff;	/* offset of the address translated in a quoted header */
	__u8 dir;	/* NF_ILA_DIR_*, for neutral-map */
	__u8 word;	/* rfc6296: 3 (prefix <= 48 bits), else 0: search 4..7 */
	__u8 pad;
};

static inline __u16 ila_get16(const void *p)
{
	__u16 v;

	__builtin_memcpy(&v, p, sizeof(v));
	return v;
}

static inline void ila_put16(void *p, __u16 v)
{
	__builtin_memcpy(p, &v, sizeof(v));
}

static inline __u32 ila_get32(const void *p)
{
	__u32 v;

	__builtin_memcpy(&v, p, sizeof(v));
	return v;
}

static inline void ila_put32(void *p, __u32 v)
{
	__builtin_memcpy(p, &v, sizeof(v));
}

static inline __u64 ila_get64(const void *p)
{
	__u64 v;

	__builtin_memcpy(&v, p, sizeof(v));
	return v;
}

static inline void ila_put64(void *p, __u64 v)
{
	__builtin_memcpy(p, &v, sizeof(v));
}

/* A big-endian 16-bit constant as a raw value. */
static inline __u16 ila_raw16(__u16 be_value)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	return __builtin_bswap16(be_value);
#else
	return be_value;
#endif
}

/* 16-bit one's complement addition (end-around carry). */
static inline __u16 ila_add16(__u16 a, __u16 b)
{
	__u32 s = (__u32)a + b;

	return (__u16)(s + (s >> 16));
}

static inline __u16 ila_sub16(__u16 a, __u16 b)
{
	return ila_add16(a, (__u16)~b);
}

/*
 * One's complement sum of the four raw 16-bit words in v (8 bytes loaded
 * raw): ila_sum16(p, 4) as two 32-bit halves and two folds, equal to it
 * up to the form of zero.
 */
static inline __u16 ila_sum64(__u64 v)
{
	__u32 lo = (__u32)v, s = lo + (__u32)(v >> 32);

	s += s < lo;			/* end-around carry */
	s = (s & 0xffff) + (s >> 16);
	return (__u16)(s + (s >> 16));
}

/* The one's complement zero written as 0x0000. */
static inline __u16 ila_canon16(__u16 v)
{
	return v == 0xffff ? 0 : v;
}

/* One's complement sum of n raw 16-bit words. */
static inline __u16 ila_sum16(const void *p, unsigned int nwords)
{
	const __u8 *b = (const __u8 *)p;
	__u16 s = 0;
	unsigned int i;

	for (i = 0; i < nwords; i++)
		s = ila_add16(s, ila_get16(b + 2 * i));
	return s;
}

/* Mask of the first len bits of an address (len <= 128). */
static inline void ila_pfx_mask(__u8 mask[16], unsigned int len)
{
	unsigned int i;

	for (i = 0; i < 16; i++) {
		if (len >= 8)
			mask[i] = 0xff;
		else
			mask[i] = (__u8)(0xff00 >> len);
		len = len >= 8 ? len - 8 : 0;
	}
}

/* 1 if no bit beyond len is set in pfx. */
static inline int ila_pfx_host_bits_clear(const __u8 pfx[16], unsigned int len)
{
	__u8 mask[16];
	unsigned int i;

	if (len > 128)
		return 0;
	ila_pfx_mask(mask, len);
	for (i = 0; i < 16; i++)
		if (pfx[i] & ~mask[i])
			return 0;
	return 1;
}

/* The part of ila_xlat_init() after the prefixes: d = sum(dst) - sum(src). */
static inline void ila_xlat_finish(struct ila_xlat *x, __u16 d, unsigned int len,
				   unsigned int mode, int translate_src,
				   unsigned int dir)
{
	const __u16 cbit = ila_raw16(ILA_CBIT << 8);

	x->diff = d;
	if (mode == NF_ILA_CSUM_NEUTRAL_MAP) {
		/* setting the C-bit adds cbit to the sum, clearing removes it */
		x->adj = ila_canon16((__u16)~ila_add16(d, cbit));
		x->adj_clear = ila_canon16((__u16)~ila_sub16(d, cbit));
	} else {
		x->adj = ila_canon16((__u16)~d);
		x->adj_clear = x->adj;
	}
	x->mode = (__u8)mode;
	x->dir = (__u8)dir;
	x->word = len <= 48 ? 3 : 0;
	x->aoff = translate_src ? ILA_IP6_SADDR_OFF : ILA_IP6_DADDR_OFF;
	x->qoff = translate_src ? ILA_IP6_DADDR_OFF : ILA_IP6_SADDR_OFF;
	x->pad = 0;
}

/*
 * Fill x for one rule. src and dst are the 16-byte prefixes (host bits
 * clear, checked by the caller), len their common length (1..64), mode an
 * NF_ILA_CSUM_*, translate_src 0 for the destination address, 1 for the
 * source, dir an NF_ILA_DIR_* (used by neutral-map only).
 */
static inline void ila_xlat_init(struct ila_xlat *x, const __u8 src[16],
				 const __u8 dst[16], unsigned int len,
				 unsigned int mode, int translate_src,
				 unsigned int dir)
{
	__u8 mask[16];

	__builtin_memset(x, 0, sizeof(*x));
	ila_pfx_mask(mask, len);
	x->src[0] = ila_get32(src);
	x->src[1] = ila_get32(src + 4);
	x->dst[0] = ila_get32(dst);
	x->dst[1] = ila_get32(dst + 4);
	x->mask[0] = ila_get32(mask);
	x->mask[1] = ila_get32(mask + 4);
	ila_xlat_finish(x, ila_canon16(ila_sub16(ila_sum16(dst, 4),
						 ila_sum16(src, 4))),
			len, mode, translate_src, dir);
}

/*
 * The same for a /64 (a map entry: the packet's own locator to the
 * entry's), built per packet: no mask loop, the two locators as 8 bytes.
 * Equal to ila_xlat_init(x, src, dst, 64, ...) (unit-tested).
 */
static inline void ila_xlat_init64s(struct ila_xlat *x, const __u8 src[8],
				    const __u8 dst[8], __u16 dst_sum,
				    unsigned int mode, int translate_src,
				    unsigned int dir)
{
	x->src[0] = ila_get32(src);
	x->src[1] = ila_get32(src + 4);
	x->dst[0] = ila_get32(dst);
	x->dst[1] = ila_get32(dst + 4);
	x->mask[0] = 0xffffffff;
	x->mask[1] = 0xffffffff;
	ila_xlat_finish(x, ila_canon16(ila_sub16(dst_sum, ila_sum16(src, 4))),
			ILA_MAX_PFX_LEN, mode, translate_src, dir);
}

/* ila_xlat_init64s with dst_sum = ila_sum16(dst, 4), which a map entry keeps */
static inline void ila_xlat_init64(struct ila_xlat *x, const __u8 src[8],
				   const __u8 dst[8], unsigned int mode,
				   int translate_src, unsigned int dir)
{
	ila_xlat_init64s(x, src, dst, ila_sum16(dst, 4), mode, translate_src,
			 dir);
}

/*
 * The locator-only translation: in adjust-transport and no-action a
 * translation replaces the address's upper 64 bits and nothing else, so a
 * packet's translation is an 8-byte store and one sum difference.
 */
static inline int ila_mode_loc_only(unsigned int mode)
{
	return mode == NF_ILA_CSUM_ADJUST_TRANSPORT || mode == NF_ILA_CSUM_NO_ACTION;
}

/* 1 if the upper 64 bits of an address, loaded raw, are in the prefix. */
static inline int ila_match64(const struct ila_xlat *x, __u64 a)
{
	return ((a ^ ila_get64(x->src)) & ila_get64(x->mask)) == 0;
}

/* The upper 64 bits (raw) after the translation of a matching address. */
static inline __u64 ila_xlat_loc(const struct ila_xlat *x, __u64 a)
{
	return (a & ~ila_get64(x->mask)) | ila_get64(x->dst);
}

/*
 * A map entry's translation of an address whose upper 64 bits are a (raw):
 * the change of the address sum, ila_xlat_init64s()'s diff without the
 * struct. new_sum: ila_sum16() of the entry's locator.
 */
static inline __u16 ila_loc_diff(__u16 new_sum, __u64 a)
{
	return ila_canon16(ila_sub16(new_sum, ila_sum64(a)));
}

/* 1 if the mode keeps the address sum (no transport checksum changes). */
static inline int ila_mode_neutral(unsigned int mode)
{
	return mode == NF_ILA_CSUM_NEUTRAL_MAP ||
	       mode == NF_ILA_CSUM_NEUTRAL_MAP_AUTO || mode == NF_ILA_CSUM_RFC6296;
}

/* 1 if the address (16 bytes) is inside the source prefix. */
static inline int ila_match(const struct ila_xlat *x, const void *addr)
{
	const __u8 *a = (const __u8 *)addr;

	return (((ila_get32(a) ^ x->src[0]) & x->mask[0]) |
		((ila_get32(a + 4) ^ x->src[1]) & x->mask[1])) == 0;
}

/* rfc6296: the offset of the word that absorbs the change, 0 if none. */
static inline unsigned int ila_rfc6296_word(const struct ila_xlat *x,
					    const __u8 *a)
{
	unsigned int i;

	if (x->word)
		return 2 * x->word;
	for (i = 8; i < 16; i += 2)
		if (ila_get16(a + i) != 0xffff)
			return i;
	return 0;
}

/* 1 if a matching address can be translated in this mode. */
static inline int ila_can_xlat(const struct ila_xlat *x, const void *addr)
{
	const __u8 *a = (const __u8 *)addr;

	switch (x->mode) {
	case NF_ILA_CSUM_NEUTRAL_MAP:
		if (x->dir != NF_ILA_DIR_SIR2ILA)
			return 1;
		/* a SIR address has no C-bit, and ffff could not come back */
		return !(a[ILA_CBIT_BYTE] & ILA_CBIT) &&
		       ila_get16(a + ILA_ADJ_OFF) != 0xffff;
	case NF_ILA_CSUM_RFC6296:
		return ila_rfc6296_word(x, a) != 0;
	}
	return 1;
}

/*
 * Translate a matching address in place (ila_match() and ila_can_xlat()
 * true). Returns the change of its one's complement sum: diff for
 * adjust-transport and no-action, and for a neutral-map ILA -> SIR
 * translation of an address without the C-bit; 0 otherwise.
 */
static inline __u16 ila_xlat_addr(const struct ila_xlat *x, void *addr)
{
	__u8 *a = (__u8 *)addr;
	unsigned int w = ILA_ADJ_OFF;
	__u16 adj = x->adj;

	switch (x->mode) {
	case NF_ILA_CSUM_NEUTRAL_MAP:
		if (x->dir == NF_ILA_DIR_ILA2SIR) {
			if (!(a[ILA_CBIT_BYTE] & ILA_CBIT)) {
				w = 0;	/* identifier untouched */
				break;
			}
			adj = x->adj_clear;
		}
		a[ILA_CBIT_BYTE] ^= ILA_CBIT;
		break;
	case NF_ILA_CSUM_RFC6296:
		w = ila_rfc6296_word(x, a);
		break;
	case NF_ILA_CSUM_NEUTRAL_MAP_AUTO:
		break;
	default:
		w = 0;
	}
	if (w)
		ila_put16(a + w, ila_canon16(ila_add16(ila_get16(a + w), adj)));
	ila_put32(a, (ila_get32(a) & ~x->mask[0]) | x->dst[0]);
	ila_put32(a + 4, (ila_get32(a + 4) & ~x->mask[1]) | x->dst[1]);
	return w ? 0 : x->diff;
}

/* A final checksum field after the data it covers changed by +delta. */
static inline __u16 ila_csum_update(__u16 check, __u16 delta)
{
	return (__u16)~ila_add16((__u16)~check, delta);
}

/*
 * Fix an L4 checksum field (raw bytes at field) for a +delta change of the
 * data it covers. partial: the skb is CHECKSUM_PARTIAL and the field holds
 * the folded pseudo-header sum that the device completes; only pseudo-header
 * changes (pseudo=1) are applied then. udp: a zero checksum means "none" and
 * stays zero, and a computed zero is sent as 0xffff.
 * Returns the one's complement change of the field's value.
 */
static inline __u16 ila_l4_csum_fix(void *field, __u16 delta, int partial,
				    int pseudo, int udp)
{
	__u16 old = ila_get16(field), nv;

	if (partial) {
		if (!pseudo)
			return 0;
		nv = ila_add16(old, delta);
	} else {
		if (udp && old == 0)
			return 0;
		nv = ila_csum_update(old, delta);
		if (udp && nv == 0)
			nv = 0xffff;
	}
	ila_put16(field, nv);
	return ila_sub16(nv, old);
}

/*
 * Whether the transport checksum's pseudo-header holds the address that a
 * translation of the IPv6 header's destination (dst) or source (!dst)
 * changes. pkt: the IPv6 header; hlen: it and every extension header
 * before the L4 header (all present). It does not when
 *  - dst: a Routing header still has segments left: the pseudo-header uses
 *    the final destination (RFC 8200 8.1), not the current one;
 *  - src: a Destination Options header carries a Home Address option
 *    (RFC 6275 6.3): the pseudo-header uses the home address.
 * Then the translation must leave the L4 checksum alone.
 */
#define ILA_NH_HOP	0
#define ILA_NH_ROUTING	43
#define ILA_NH_FRAGMENT	44
#define ILA_NH_AH	51
#define ILA_NH_DEST	60
#define ILA_OPT_HAO	201

static inline int ila_pseudo_uses_addr(const __u8 *pkt, unsigned int hlen, int dst)
{
	unsigned int off = 40, len, o;
	__u8 nh = pkt[6];

	while (off + 8 <= hlen) {
		switch (nh) {
		case ILA_NH_HOP:
		case ILA_NH_ROUTING:
		case ILA_NH_DEST:
			len = (pkt[off + 1] + 1u) * 8;
			break;
		case ILA_NH_AH:
			len = (pkt[off + 1] + 2u) * 4;
			break;
		case ILA_NH_FRAGMENT:
			len = 8;
			break;
		default:
			return 1;
		}
		if (off + len > hlen)
			return 1;
		if (dst && nh == ILA_NH_ROUTING && pkt[off + 3])
			return 0;
		if (!dst && nh == ILA_NH_DEST) {
			for (o = off + 2; o < off + len;) {
				if (pkt[o] == 0) {	/* Pad1 */
					o++;
					continue;
				}
				if (o + 1 >= off + len)
					break;
				if (pkt[o] == ILA_OPT_HAO)
					return 0;
				o += 2u + pkt[o + 1];
			}
		}
		nh = pkt[off];
		off += len;
	}
	return 1;
}

#endif /* _NFILR_COMMON_ILA_CSUM_H */
