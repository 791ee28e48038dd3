/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * ila_xlat.h - the translation of one packet by a -j ILA rule (xt_ILA.c) or
 * a named hook (ila_hook.c): one routine, ila_rule_xlat(), for both, as
 * net/ipv6/ila's update_ipv6_locator() serves the LWT and the hook. The
 * caller turns its result (enum ila_res) into a verdict and counters.
 *
 * Only the common case is here, inlined into the callers: TCP or UDP right
 * after the IPv6 header, an address inside the prefix, a locator-only mode
 * (adjust-transport, no-action: the translation is an 8-byte store and one
 * checksum change). Everything else (ICMPv6 errors, extension headers,
 * fragments, the neutral modes, map misses) is ila_xlat.c's, out of line.
 * The address and checksum arithmetic is include/common/ila_csum.h's.
 *
 * The skb's checksum state stays truthful (ila_csum_finish(), the one
 * ending every path shares):
 *  CHECKSUM_PARTIAL      when the field is the one the device (or GSO)
 *                        completes, only its pseudo-header seed changes
 *                        (adjust-transport); ila_csum_seed() decides.
 *  CHECKSUM_COMPLETE     skb->csum gets the sum of every change we made, so
 *                        it stays the sum of the packet from skb->data.
 *  CHECKSUM_UNNECESSARY  stays while the L4 checksum is still right; when a
 *                        translation changed the address sum without fixing
 *                        the L4 checksum (no-action, a neutral-map ILA->SIR
 *                        address without C-bit) it becomes CHECKSUM_NONE,
 *                        so the stack verifies the packet.
 */
#ifndef _NFILR_ILA_XLAT_H
#define _NFILR_ILA_XLAT_H

#include <linux/skbuff.h>
#include <linux/ipv6.h>
#include <linux/tcp.h>
#include <linux/udp.h>
#include <net/checksum.h>
#include <linux/nf_ila.h>

#include <common/ila_csum.h>

#include "ila_map.h"

/*
 * What a rule or a named hook translates with. A prefix pair: x, map NULL.
 * A map: x holds the prefix whose addresses are looked up (src = dst; -j ILA
 * --map has /0, the rule's -d match selects), every entry its locator and
 * mode. Fits the kernel-only area of struct xt_ila_tginfo.
 */
struct ila_rule {
	struct ila_xlat		x;
	u16			src_sum;	/* ila_sum16(src prefix, 4) */
	u8			flags;		/* ILA_RF_* */
	u8			pad;
	struct nf_ila_map	*map;
};

#define ILA_RF_MISS_DROP	BIT(0)	/* map miss: drop (else accept) */
#define ILA_RF_MISS_NOTIFY	BIT(1)	/* map miss: report (ilactl monitor) */
#define ILA_RF_CHECK_HOOK	BIT(2)	/* xt_ILA: check the hook per packet */

enum ila_res {
	ILA_RES_PASS,	/* untouched, or only the header an ICMPv6 error quotes */
	ILA_RES_XLAT,	/* translated */
	ILA_RES_MISS,	/* map: identifier not in it; accept untranslated */
	ILA_RES_MISS_DROP,	/* map: identifier not in it; drop */
	ILA_RES_DROP,	/* not translatable, or not writable: drop */
};

/* What ila_rule_xlat() is specialised for (a constant in every caller). */
#define ILA_V_AT	1	/* prefix pair, adjust-transport */
#define ILA_V_NA	2	/* prefix pair, no-action */
#define ILA_V_STATIC	3	/* prefix pair, mode read from the rule */
#define ILA_V_MAP	4	/* map */
#define ILA_V_KIND	7
#define ILA_V_PFX64	8	/* with a /64 prefix: known new locator / sum */

/* ila_xlat.c: the cases ila_rule_xlat() leaves out of line */
enum ila_res ila_rule_slow(struct sk_buff *skb, const struct ila_rule *r,
			   bool outer);
enum ila_res ila_rule_entry(struct sk_buff *skb, const struct ila_rule *r,
			    const struct nf_ila_map_entry *e);
enum ila_res ila_rule_miss(const struct ila_rule *r, __be64 ident);
unsigned int ila_icmp_err_off(const struct sk_buff *skb);

/*
 * Whether the L4 checksum field at head_off (from skb->head) of a
 * CHECKSUM_PARTIAL skb is a pseudo-header seed that is completed later:
 * the field the partial checksum points at, or the outer UDP checksum of a
 * GSO tunnel packet, which segmentation computes per segment from its seed.
 */
static __always_inline bool ila_csum_seed(const struct sk_buff *skb,
					  unsigned int head_off, u8 proto)
{
	if (skb->csum_start + skb->csum_offset == head_off)
		return true;
	return proto == IPPROTO_UDP && skb_is_gso(skb) &&
	       (skb_shinfo(skb)->gso_type & SKB_GSO_UDP_TUNNEL_CSUM);
}

/*
 * The one ending of every translation: tot, the sum of every change made
 * to the packet (canonical, 0 for none); unfixed: the address sum changed
 * and no L4 checksum followed it.
 */
static __always_inline void ila_csum_finish(struct sk_buff *skb, u16 tot,
					    bool unfixed)
{
	if (skb->ip_summed == CHECKSUM_COMPLETE) {
		if (tot)
			skb->csum = csum_block_add(skb->csum,
						   (__force __wsum)(u32)tot,
						   skb_network_offset(skb));
	} else if (skb->ip_summed == CHECKSUM_UNNECESSARY && unfixed) {
		skb->ip_summed = CHECKSUM_NONE;
		skb->csum_level = 0;
	}
}

/*
 * ila_loc_coff() - whether the packet is the common case: TCP or UDP right
 * after the IPv6 header, headers linear up to the L4 checksum. Returns the
 * L4 checksum's offset from skb->head, 0 if not.
 */
static __always_inline unsigned int ila_loc_coff(const struct sk_buff *skb)
{
	unsigned int coff = skb->network_header + sizeof(struct ipv6hdr);
	const u8 proto = ipv6_hdr(skb)->nexthdr;

	if (proto == IPPROTO_TCP)
		coff += offsetof(struct tcphdr, check);
	else if (proto == IPPROTO_UDP)
		coff += offsetof(struct udphdr, check);
	else
		return 0;
#ifdef NET_SKBUFF_DATA_USES_OFFSET
	if (unlikely(coff + 2 > skb->tail))
#else
	if (unlikely(skb->head + coff + 2 > skb->tail))
#endif
		return 0;
	return coff;
}

/*
 * ila_loc_unshare() - make the headers up to the L4 checksum writable: a
 * clone sharing them gets its own copy, as skb_ensure_writable() does
 * (skb_clone_writable() with the length from skb->head; the copy keeps the
 * headroom, so offsets from skb->head stay valid). False if the copy
 * failed: the packet must be dropped.
 */
static __always_inline bool ila_loc_unshare(struct sk_buff *skb,
					    unsigned int coff)
{
	if (likely(!skb_cloned(skb)) ||
	    (!skb_header_cloned(skb) && coff + 2 <= skb->hdr_len))
		return true;
	return !pskb_expand_head(skb, 0, 0, GFP_ATOMIC);
}

/*
 * ila_xlat_skb_loc() - write loc (the new upper 64 bits, raw) at aoff in
 * the IPv6 header and fix the checksums for diff (the change of the address
 * sum, canonical); adjust: adjust-transport, else no-action. coff from
 * ila_loc_coff(), after ila_loc_unshare(). False, with nothing written, for
 * the one case left to the general path: CHECKSUM_PARTIAL for another
 * checksum than the L4 one.
 */
static __always_inline bool ila_xlat_skb_loc(struct sk_buff *skb,
					     unsigned int coff,
					     unsigned int aoff, __u64 loc,
					     __u16 diff, bool adjust)
{
	u8 *field = skb->head + coff;
	__u16 tot;

	if (skb->ip_summed == CHECKSUM_PARTIAL) {
		/* the field is the pseudo-header seed the device completes */
		if (adjust && diff) {
			if (!ila_csum_seed(skb, coff, ipv6_hdr(skb)->nexthdr))
				return false;
			ila_put16(field, ila_add16(ila_get16(field), diff));
		}
		ila_put64(skb_network_header(skb) + aoff, loc);
		return true;
	}
	ila_put64(skb_network_header(skb) + aoff, loc);
	if (!diff)
		return true;
	tot = diff;
	if (adjust)
		tot = ila_add16(diff, ila_l4_csum_fix(field, diff, 0, 1,
				ipv6_hdr(skb)->nexthdr == IPPROTO_UDP));
	ila_csum_finish(skb, tot, !adjust);
	return true;
}

/*
 * ila_rule_xlat() - translate skb by r: its address at r->x.aoff when in
 * the prefix (and, out of line, the header an ICMPv6 error quotes). v: the
 * ILA_V_* the caller is specialised for. Under rcu_read_lock() (netfilter
 * hooks are).
 */
static __always_inline enum ila_res
ila_rule_xlat(struct sk_buff *skb, const struct ila_rule *r,
	      const unsigned int v)
{
	const unsigned int kind = v & ILA_V_KIND;
	const bool pfx64 = v & ILA_V_PFX64;
	const struct ila_xlat *x = &r->x;
	const u8 *nh = skb_network_header(skb);
	const u64 a = ila_get64(nh + x->aoff);
	struct nf_ila_map_entry *e = NULL;
	unsigned int coff;
	bool adjust;
	u64 loc;
	u16 diff;

	if (!ila_match64(x, a)) {
		/* only an ICMPv6 error (its quoted header) can need work */
		if (likely(nh[offsetof(struct ipv6hdr, nexthdr)] == IPPROTO_TCP ||
			   nh[offsetof(struct ipv6hdr, nexthdr)] == IPPROTO_UDP))
			return ILA_RES_PASS;
		return ila_rule_slow(skb, r, false);
	}
	if (kind == ILA_V_MAP) {
		const __be64 ident = (__force __be64)ila_get64(nh + x->aoff + 8);

		e = nf_ila_map_entry_find(r->map, ident);
		if (unlikely(!e))
			return ila_rule_miss(r, ident);
		nf_ila_map_hit(r->map, e);
		if (unlikely(!ila_mode_loc_only(e->csum_mode)))
			return ila_rule_entry(skb, r, e);
	} else if (kind == ILA_V_STATIC && !ila_mode_loc_only(x->mode)) {
		return ila_rule_slow(skb, r, true);
	}

	coff = ila_loc_coff(skb);
	if (unlikely(!coff))
		goto general;
	if (unlikely(!ila_loc_unshare(skb, coff)))
		return ILA_RES_DROP;
	if (kind == ILA_V_MAP) {
		loc = (__force u64)e->locator;
		diff = pfx64 ? ila_canon16(ila_sub16(e->loc_sum, r->src_sum)) :
			       ila_loc_diff(e->loc_sum, a);
		adjust = e->csum_mode == NF_ILA_CSUM_ADJUST_TRANSPORT;
	} else {
		loc = pfx64 ? ila_get64(x->dst) : ila_xlat_loc(x, a);
		diff = x->diff;
		adjust = kind == ILA_V_AT ||
			 (kind == ILA_V_STATIC &&
			  x->mode == NF_ILA_CSUM_ADJUST_TRANSPORT);
	}
	if (likely(ila_xlat_skb_loc(skb, coff, x->aoff, loc, diff, adjust)))
		return ILA_RES_XLAT;
general:
	if (kind == ILA_V_MAP)
		return ila_rule_entry(skb, r, e);
	return ila_rule_slow(skb, r, true);
}

#endif /* _NFILR_ILA_XLAT_H */
