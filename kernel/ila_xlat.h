/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * ila_xlat.h - the per-packet ILA / NPTv6 translation of one skb, shared
 * by every kernel entry point that translates (the -j ILA target in
 * xt_ILA.c; direct hooks use the same function). The address and
 * checksum arithmetic is in include/common/ila_csum.h; this file applies
 * it to an skb: finds the L4 checksum (extension headers walked), the
 * header quoted in an ICMPv6 error, makes what it writes writable and
 * keeps the skb's checksum state truthful:
 *
 *  CHECKSUM_PARTIAL      when the field is the one the device (or GSO)
 *                        completes, only its pseudo-header seed changes
 *                        (adjust-transport). A locally sent UDP tunnel
 *                        (VXLAN, Geneve, FOU) whose partial checksum is the
 *                        inner one has a final outer checksum: updated as
 *                        such, a zero UDP checksum stays zero.
 *  CHECKSUM_COMPLETE     skb->csum gets the sum of every change we made, so
 *                        it stays the sum of the packet from skb->data.
 *  CHECKSUM_UNNECESSARY  stays while the L4 checksum is still right; when a
 *                        translation changed the address sum without fixing
 *                        the L4 checksum (no-action, a neutral-map ILA->SIR
 *                        address without C-bit) it becomes CHECKSUM_NONE,
 *                        so the stack verifies the packet.
 *
 * Non-first fragments only get the address rewrite: the L4 checksum lives
 * in the first fragment, which carries the whole fix. Neither does a
 * packet whose pseudo-header has another address than the one rewritten:
 * a Routing header with segments left (final destination), a Home Address
 * option (home address).
 */
#ifndef _NFILR_ILA_XLAT_H
#define _NFILR_ILA_XLAT_H

#include <linux/skbuff.h>
#include <linux/ipv6.h>
#include <linux/icmpv6.h>
#include <linux/tcp.h>
#include <linux/udp.h>
#include <net/ipv6.h>
#include <net/checksum.h>

#include <common/ila_csum.h>

#define ILA_ICMP6_HLEN	sizeof(struct icmp6hdr)

/* Offset of the checksum field in an L4 header whose checksum covers the
 * IPv6 pseudo-header, 0 for protocols without one.
 */
static inline unsigned int ila_l4_csum_off(u8 proto)
{
	switch (proto) {
	case IPPROTO_TCP:
		return offsetof(struct tcphdr, check);
	case IPPROTO_UDP:
	case IPPROTO_UDPLITE:
	case IPPROTO_DCCP:
		return offsetof(struct udphdr, check);
	case IPPROTO_ICMPV6:
		return offsetof(struct icmp6hdr, icmp6_cksum);
	}
	return 0;
}

/* Where the L4 checksum of the packet quoted in an ICMPv6 error lies. */
struct ila_quote {
	unsigned int off;	/* quoted IPv6 header, 0: nothing to translate */
	unsigned int csum;	/* its L4 checksum field (adjust-transport), or 0 */
	bool udp;
};

/*
 * An ICMPv6 error at thoff: find out whether its quoted header carries an
 * address to translate (the quoted source for dst translation, the quoted
 * destination for src translation). Reads only; returns the length of the
 * skb that must be writable for the job, 0 if there is none.
 */
static inline unsigned int ila_icmp_prepare(const struct sk_buff *skb,
					    const struct ila_xlat *x,
					    unsigned int thoff,
					    struct ila_quote *q)
{
	unsigned int qoff = thoff + ILA_ICMP6_HLEN, len, coff;
	struct ipv6hdr _qh;
	const struct ipv6hdr *qh;
	__be16 frag_off;
	u8 _type, proto;
	const u8 *type;
	int l4off;

	type = skb_header_pointer(skb, thoff, sizeof(_type), &_type);
	if (!type || (*type & ICMPV6_INFOMSG_MASK))
		return 0;
	qh = skb_header_pointer(skb, qoff, sizeof(_qh), &_qh);
	if (!qh || !ila_match(x, (const u8 *)qh + x->qoff) ||
	    !ila_can_xlat(x, (const u8 *)qh + x->qoff))
		return 0;

	q->off = qoff;
	q->csum = 0;
	len = qoff + sizeof(*qh);
	if (x->mode != ILA_MODE_ADJUST_TRANSPORT)
		return len;

	/* adjust-transport: fix the quoted L4 checksum too, when quoted */
	proto = qh->nexthdr;
	l4off = ipv6_skip_exthdr(skb, len, &proto, &frag_off);
	if (l4off < 0 || (ntohs(frag_off) & ~0x7))
		return len;
	coff = ila_l4_csum_off(proto);
	if (!coff || l4off + coff + 2 > skb->len)
		return len;
	q->csum = l4off + coff;
	q->udp = proto == IPPROTO_UDP;
	return q->csum + 2;
}

/*
 * Whether the L4 checksum field at coff (from skb->data) of a
 * CHECKSUM_PARTIAL skb is a pseudo-header seed that is completed later:
 * the field the partial checksum points at, or the outer UDP checksum of a
 * GSO tunnel packet, which segmentation computes per segment from its seed.
 */
static inline bool ila_csum_seed(const struct sk_buff *skb, unsigned int coff,
				 u8 proto)
{
	if (skb_checksum_start_offset(skb) + skb->csum_offset == coff)
		return true;
	return proto == IPPROTO_UDP && skb_is_gso(skb) &&
	       (skb_shinfo(skb)->gso_type & SKB_GSO_UDP_TUNNEL_CSUM);
}

/*
 * Translate the packet in skb (network header at skb_network_offset) with
 * x: its address when inside the source prefix, and the matching address
 * of a header quoted in an ICMPv6 error. same_ident: translate a quoted
 * header only if its identifier equals the outer one's (x was built for
 * the outer identifier, as --map does). Returns false if the packet must
 * be dropped (not translatable, or not writable).
 */
static inline bool ila_xlat_skb(struct sk_buff *skb, const struct ila_xlat *x,
				bool same_ident)
{
	const unsigned int nhoff = skb_network_offset(skb);
	unsigned int thoff = nhoff + sizeof(struct ipv6hdr);
	unsigned int wlen = thoff, coff = 0;
	const struct ipv6hdr *ip6h = ipv6_hdr(skb);
	struct ila_quote q = { .off = 0 };
	__u16 pseudo = 0, payload = 0, tot = 0;
	bool outer, partial, unfixed;
	__be16 frag_off;
	u8 proto;
	int off;

	outer = ila_match(x, (const u8 *)ip6h + x->aoff);
	proto = ip6h->nexthdr;
	if (likely(proto == IPPROTO_TCP || proto == IPPROTO_UDP)) {
		if (!outer)
			return true;
	} else if (proto != IPPROTO_ICMPV6) {
		if (!outer && !ipv6_ext_hdr(proto))
			return true;
		off = ipv6_skip_exthdr(skb, thoff, &proto, &frag_off);
		if (off < 0 || (ntohs(frag_off) & ~0x7))
			proto = NEXTHDR_NONE;	/* no L4 header here */
		else
			thoff = off;
		if (!outer && proto != IPPROTO_ICMPV6)
			return true;
	}

	if (outer) {
		if (unlikely(!ila_can_xlat(x, (const u8 *)ip6h + x->aoff)))
			return false;
		if (x->mode == ILA_MODE_ADJUST_TRANSPORT)
			coff = ila_l4_csum_off(proto);
	}
	if (unlikely(proto == IPPROTO_ICMPV6)) {
		wlen = max(wlen, ila_icmp_prepare(skb, x, thoff, &q));
		if (q.off)
			coff = ila_l4_csum_off(proto);
		else if (!outer)
			return true;
	}
	if (coff) {
		coff += thoff;
		wlen = max(wlen, coff + 2);
	}

	/* a truncated L4 header can't get its checksum fixed */
	if (unlikely(skb_ensure_writable(skb, wlen)))
		return false;
	if (same_ident && q.off &&
	    memcmp(skb->data + q.off + x->qoff + 8,
		   skb->data + nhoff + x->aoff + 8, 8))
		q.off = 0;

	if (outer)
		pseudo = ila_xlat_addr(x, skb->data + nhoff + x->aoff);
	/* the address sum changed and no L4 checksum will follow it */
	unfixed = pseudo && x->mode != ILA_MODE_ADJUST_TRANSPORT;
	tot = pseudo;
	if (q.off) {
		payload = ila_xlat_addr(x, skb->data + q.off + x->qoff);
		if (q.csum && payload)
			payload = ila_add16(payload,
					    ila_l4_csum_fix(skb->data + q.csum,
							    payload, 0, 1, q.udp));
		tot = ila_add16(tot, payload);
	}

	partial = skb->ip_summed == CHECKSUM_PARTIAL;
	if (coff) {
		/* only adjust-transport puts the pseudo-header change here */
		if (x->mode != ILA_MODE_ADJUST_TRANSPORT)
			pseudo = 0;
		/* ... and only if the pseudo-header has the address we changed */
		if (pseudo && thoff > nhoff + sizeof(struct ipv6hdr) &&
		    !ila_pseudo_uses_addr(skb->data + nhoff, thoff - nhoff,
					  x->aoff == ILA_IP6_DADDR_OFF))
			pseudo = 0;
		if (partial && ila_csum_seed(skb, coff, proto))
			ila_l4_csum_fix(skb->data + coff, pseudo, 1, 1, false);
		else if (pseudo || payload)
			tot = ila_add16(tot, ila_l4_csum_fix(skb->data + coff,
					ila_add16(pseudo, payload), 0, 1,
					proto == IPPROTO_UDP));
	}

	switch (skb->ip_summed) {
	case CHECKSUM_COMPLETE:
		if (tot)
			skb->csum = csum_block_add(skb->csum,
						   (__force __wsum)(u32)tot, nhoff);
		break;
	case CHECKSUM_UNNECESSARY:
		if (unfixed) {
			skb->ip_summed = CHECKSUM_NONE;
			skb->csum_level = 0;
		}
		break;
	}
	return true;
}

/*
 * The common case of ila_xlat_skb() for a packet whose address x translates
 * (ila_match() true): TCP or UDP right after the IPv6 header, the headers up
 * to the L4 checksum in the linear part (made writable as
 * skb_ensure_writable() does: a clone whose headers are shared gets its own
 * copy), and, when CHECKSUM_PARTIAL (veth keeps it on forwarded packets),
 * the L4 checksum field as its seed. Returns true when it translated the
 * packet, with exactly the result ila_xlat_skb() gives; false when the
 * packet is not that case or cannot be translated, untranslated: the caller
 * then runs ila_xlat_skb(). Inlined into the packet paths, it keeps them
 * free of the calls, the stack frame and the branches the general case
 * needs (ICMPv6 errors, extension headers, fragments).
 */
static __always_inline bool ila_xlat_skb_fast(struct sk_buff *skb,
					      const struct ila_xlat *x)
{
	const unsigned int nhoff = skb_network_offset(skb);
	unsigned int coff = nhoff + sizeof(struct ipv6hdr);
	struct ipv6hdr *ip6h = ipv6_hdr(skb);
	__u16 pseudo, tot;
	bool unfixed;
	u8 *addr;

	if (ip6h->nexthdr == IPPROTO_TCP)
		coff += offsetof(struct tcphdr, check);
	else if (ip6h->nexthdr == IPPROTO_UDP)
		coff += offsetof(struct udphdr, check);
	else
		return false;
	if (unlikely(coff + 2 > skb_headlen(skb) ||
		     !ila_can_xlat(x, (u8 *)ip6h + x->aoff)))
		return false;
	/* skb_ensure_writable(skb, coff + 2), the headers being linear */
	if (skb_cloned(skb) && !skb_clone_writable(skb, coff + 2)) {
		if (pskb_expand_head(skb, 0, 0, GFP_ATOMIC))
			return false;
		ip6h = ipv6_hdr(skb);
	}
	addr = (u8 *)ip6h + x->aoff;

	if (skb->ip_summed == CHECKSUM_PARTIAL) {
		if (x->mode != ILA_MODE_ADJUST_TRANSPORT) {
			ila_xlat_addr(x, addr);
			return true;
		}
		if (!ila_csum_seed(skb, coff, ip6h->nexthdr))
			return false;
		pseudo = ila_xlat_addr(x, addr);
		if (pseudo)
			ila_l4_csum_fix(skb->data + coff, pseudo, 1, 1, false);
		return true;
	}

	pseudo = ila_xlat_addr(x, addr);
	tot = pseudo;
	unfixed = false;
	if (x->mode != ILA_MODE_ADJUST_TRANSPORT)
		unfixed = pseudo;
	else if (pseudo)
		tot = ila_add16(pseudo,
				ila_l4_csum_fix(skb->data + coff, pseudo, 0, 1,
						ip6h->nexthdr == IPPROTO_UDP));

	if (skb->ip_summed == CHECKSUM_COMPLETE) {
		if (tot)
			skb->csum = csum_block_add(skb->csum, (__force __wsum)(u32)tot,
						   nhoff);
	} else if (skb->ip_summed == CHECKSUM_UNNECESSARY && unfixed) {
		skb->ip_summed = CHECKSUM_NONE;
		skb->csum_level = 0;
	}
	return true;
}

/*
 * ila_xlat_skb_fast() for the locator-only modes (ila_mode_loc_only()),
 * where a translation is known by two numbers: loc, the address's new
 * upper 64 bits (raw), and diff, the change of its sum (canonical, 0 for
 * none); adjust: adjust-transport, else no-action. In three steps, so that
 * the caller computes loc and diff only for a packet that qualifies.
 * Offsets are from skb->head, as the skb's own header offsets are.
 *
 * ila_loc_coff() - whether the packet is the common case of
 * ila_xlat_skb_fast(): TCP or UDP right after the IPv6 header, headers
 * linear up to the L4 checksum. Returns the L4 checksum's offset, 0 if
 * not: the general path (ila_xlat_skb()) handles the packet.
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
 * ila_xlat_skb_loc() - write loc at aoff in the IPv6 header and fix the
 * checksums; coff from ila_loc_coff(), after ila_loc_unshare(). The result
 * of ila_xlat_skb_fast(). False, with nothing written, for the one case
 * left to the general path: CHECKSUM_PARTIAL for another checksum than
 * the L4 one (ila_csum_seed()).
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
			/* ila_csum_seed(), the offset from skb->head */
			if (skb->csum_start + skb->csum_offset != coff &&
			    !(ipv6_hdr(skb)->nexthdr == IPPROTO_UDP &&
			      skb_is_gso(skb) &&
			      (skb_shinfo(skb)->gso_type &
			       SKB_GSO_UDP_TUNNEL_CSUM)))
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
	if (skb->ip_summed == CHECKSUM_COMPLETE) {
		if (tot)
			skb->csum = csum_block_add(skb->csum,
						   (__force __wsum)(u32)tot,
						   skb_network_offset(skb));
	} else if (skb->ip_summed == CHECKSUM_UNNECESSARY && !adjust) {
		/* no-action changed the address sum: let the stack verify */
		skb->ip_summed = CHECKSUM_NONE;
		skb->csum_level = 0;
	}
	return true;
}

#endif /* _NFILR_ILA_XLAT_H */
