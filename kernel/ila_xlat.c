// SPDX-License-Identifier: GPL-2.0-only
/*
 * ila_xlat.c - the translation of one packet, for every case the inline
 * fast path (ila_xlat.h: ila_rule_xlat()) leaves out of line: ICMPv6
 * errors (the header they quote), extension headers, fragments, packets
 * whose headers are not linear, the neutral checksum modes, map misses.
 * Used by the -j ILA target (xt_ILA) and the named hooks alike.
 *
 * Non-first fragments only get the address rewrite: the L4 checksum lives
 * in the first fragment, which carries the whole fix. Neither does a
 * packet whose pseudo-header has another address than the one rewritten:
 * a Routing header with segments left (final destination), a Home Address
 * option (home address); the same holds for the packet an ICMPv6 error
 * quotes.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/icmpv6.h>
#include <linux/module.h>
#include <linux/net.h>
#include <net/ipv6.h>

#include "ila_xlat.h"

#define ILA_ICMP6_HLEN	sizeof(struct icmp6hdr)

/* Offset of the checksum field in an L4 header whose checksum covers the
 * IPv6 pseudo-header, 0 for protocols without one.
 */
static unsigned int ila_l4_csum_off(u8 proto)
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

/*
 * A matching address x cannot translate: dropped. Say why, once in a while
 * (a silent drop is the worst failure an operator can meet); the hooks
 * count these drops too.
 */
static void ila_log_untranslatable(const struct ila_xlat *x, const u8 *addr)
{
	if (x->mode == NF_ILA_CSUM_NEUTRAL_MAP && (addr[ILA_CBIT_BYTE] & ILA_CBIT))
		net_info_ratelimited("neutral-map: dropped a packet for %pI6c: C-bit set, an ILA address; translating ILA -> SIR needs --direction ila2sir (hooks and maps: direction ila2sir)\n",
				     addr);
	else if (x->mode == NF_ILA_CSUM_NEUTRAL_MAP)
		net_info_ratelimited("neutral-map: dropped a packet for %pI6c: identifier ends in ffff, which the checksum adjustment could not restore\n",
				     addr);
	else
		net_info_ratelimited("rfc6296: dropped a packet for %pI6c: every identifier word is ffff, none can absorb the checksum change\n",
				     addr);
}

/* Where the L4 checksum of the packet quoted in an ICMPv6 error lies. */
struct ila_quote {
	unsigned int off;	/* quoted IPv6 header, 0: nothing to translate */
	unsigned int l4off;	/* its L4 header (adjust-transport) */
	unsigned int csum;	/* its L4 checksum field (adjust-transport), or 0 */
	bool udp;
};

/*
 * An ICMPv6 error at thoff: find out whether its quoted header carries an
 * address to translate (the quoted source for dst translation, the quoted
 * destination for src translation). Reads only; returns the length of the
 * skb that must be writable for the job, 0 if there is none.
 */
static unsigned int ila_icmp_prepare(const struct sk_buff *skb,
				     const struct ila_xlat *x,
				     unsigned int thoff, struct ila_quote *q)
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
	if (x->mode != NF_ILA_CSUM_ADJUST_TRANSPORT)
		return len;

	/* adjust-transport: fix the quoted L4 checksum too, when quoted */
	proto = qh->nexthdr;
	l4off = ipv6_skip_exthdr(skb, len, &proto, &frag_off);
	if (l4off < 0 || (ntohs(frag_off) & ~0x7))
		return len;
	coff = ila_l4_csum_off(proto);
	if (!coff || l4off + coff + 2 > skb->len)
		return len;
	q->l4off = l4off;
	q->csum = l4off + coff;
	q->udp = proto == IPPROTO_UDP;
	return q->csum + 2;
}

/**
 * ila_icmp_err_off - where the ICMPv6 header of an ICMPv6 error lies
 * @skb: an IPv6 packet, network header at skb_network_offset()
 *
 * The error may follow extension headers (not in a fragment after the
 * first, which has no ICMPv6 header). The one test every path that looks
 * at quoted headers makes: the hooks' choice of the quoted address's hook,
 * a map's lookup of the quoted identifier, and ila_xlat_skb().
 * Return: the offset from skb->data, 0 if @skb is no ICMPv6 error.
 */
unsigned int ila_icmp_err_off(const struct sk_buff *skb)
{
	unsigned int off = skb_network_offset(skb) + sizeof(struct ipv6hdr);
	u8 proto = ipv6_hdr(skb)->nexthdr, _type;
	const u8 *type;
	__be16 frag_off;
	int l4off;

	if (proto != IPPROTO_ICMPV6) {
		if (!ipv6_ext_hdr(proto))
			return 0;
		l4off = ipv6_skip_exthdr(skb, off, &proto, &frag_off);
		if (l4off < 0 || proto != IPPROTO_ICMPV6 ||
		    (ntohs(frag_off) & ~0x7))
			return 0;
		off = l4off;
	}
	type = skb_header_pointer(skb, off, sizeof(_type), &_type);
	if (!type || (*type & ICMPV6_INFOMSG_MASK))
		return 0;
	return off;
}
EXPORT_SYMBOL_GPL(ila_icmp_err_off);

/*
 * Translate the packet in skb (network header at skb_network_offset) with
 * x: its own address when outer (the caller found it inside the source
 * prefix), and the matching address of a header quoted in an ICMPv6 error.
 * Not outer: the quoted header only, even when x's prefix holds the
 * packet's own address too (a slot's shorter prefix, whose longer one
 * translates that address). same_ident: translate a quoted header only if
 * its identifier equals the outer one's (x was built for the outer
 * identifier, as a map entry is). Returns false if the packet must be
 * dropped (not translatable, or not writable).
 */
static bool ila_xlat_skb(struct sk_buff *skb, const struct ila_xlat *x,
			 bool outer, bool same_ident)
{
	const unsigned int nhoff = skb_network_offset(skb);
	unsigned int thoff = nhoff + sizeof(struct ipv6hdr);
	unsigned int wlen = thoff, coff = 0;
	const struct ipv6hdr *ip6h = ipv6_hdr(skb);
	struct ila_quote q = { .off = 0 };
	__u16 pseudo = 0, payload = 0, tot = 0;
	__be16 frag_off;
	bool unfixed;
	u8 proto;
	int off;

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
		if (unlikely(!ila_can_xlat(x, (const u8 *)ip6h + x->aoff))) {
			ila_log_untranslatable(x, (const u8 *)ip6h + x->aoff);
			return false;
		}
		if (x->mode == NF_ILA_CSUM_ADJUST_TRANSPORT)
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
	/* the quoted packet's pseudo-header may hold another address */
	if (q.csum && q.l4off > q.off + sizeof(struct ipv6hdr) &&
	    !ila_pseudo_uses_addr(skb->data + q.off, q.l4off - q.off,
				  x->qoff == ILA_IP6_DADDR_OFF))
		q.csum = 0;

	if (outer)
		pseudo = ila_xlat_addr(x, skb->data + nhoff + x->aoff);
	/* the address sum changed and no L4 checksum will follow it */
	unfixed = pseudo && x->mode != NF_ILA_CSUM_ADJUST_TRANSPORT;
	tot = pseudo;
	if (q.off) {
		payload = ila_xlat_addr(x, skb->data + q.off + x->qoff);
		if (q.csum && payload)
			payload = ila_add16(payload,
					    ila_l4_csum_fix(skb->data + q.csum,
							    payload, 0, 1, q.udp));
		tot = ila_add16(tot, payload);
	}

	if (coff) {
		/* only adjust-transport puts the pseudo-header change here */
		if (x->mode != NF_ILA_CSUM_ADJUST_TRANSPORT)
			pseudo = 0;
		/* ... and only if the pseudo-header has the address we changed */
		if (pseudo && thoff > nhoff + sizeof(struct ipv6hdr) &&
		    !ila_pseudo_uses_addr(skb->data + nhoff, thoff - nhoff,
					  x->aoff == ILA_IP6_DADDR_OFF))
			pseudo = 0;
		if (skb->ip_summed == CHECKSUM_PARTIAL &&
		    ila_csum_seed(skb, skb_headroom(skb) + coff, proto))
			ila_l4_csum_fix(skb->data + coff, pseudo, 1, 1, false);
		else if (pseudo || payload)
			tot = ila_add16(tot, ila_l4_csum_fix(skb->data + coff,
					ila_add16(pseudo, payload), 0, 1,
					proto == IPPROTO_UDP));
	}
	ila_csum_finish(skb, tot, unfixed);
	return true;
}

/*
 * The common TCP/UDP case of ila_xlat_skb() for a packet whose address x
 * translates (ila_match() true) in any mode, without its header walks:
 * TCP or UDP right after the IPv6 header, headers linear up to the L4
 * checksum (made writable as skb_ensure_writable() does) and, when
 * CHECKSUM_PARTIAL, the L4 checksum field as its seed. True when it
 * translated the packet, with exactly ila_xlat_skb()'s result; false,
 * untranslated, when the packet is not that case (ila_xlat_skb() then).
 */
static bool ila_xlat_skb_fast(struct sk_buff *skb, const struct ila_xlat *x)
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
		if (x->mode != NF_ILA_CSUM_ADJUST_TRANSPORT) {
			ila_xlat_addr(x, addr);
			return true;
		}
		if (!ila_csum_seed(skb, skb_headroom(skb) + coff, ip6h->nexthdr))
			return false;
		pseudo = ila_xlat_addr(x, addr);
		if (pseudo)
			ila_l4_csum_fix(skb->data + coff, pseudo, 1, 1, false);
		return true;
	}

	pseudo = ila_xlat_addr(x, addr);
	tot = pseudo;
	unfixed = false;
	if (x->mode != NF_ILA_CSUM_ADJUST_TRANSPORT)
		unfixed = pseudo;
	else if (pseudo)
		tot = ila_add16(pseudo,
				ila_l4_csum_fix(skb->data + coff, pseudo, 0, 1,
						ip6h->nexthdr == IPPROTO_UDP));
	ila_csum_finish(skb, tot, unfixed);
	return true;
}

/* Translate with x (outer: the packet's own address is in x's prefix). */
static enum ila_res ila_xlat_general(struct sk_buff *skb,
				     const struct ila_xlat *x, bool outer,
				     bool same_ident)
{
	if (outer && ila_xlat_skb_fast(skb, x))
		return ILA_RES_XLAT;
	if (unlikely(!ila_xlat_skb(skb, x, outer, same_ident)))
		return ILA_RES_DROP;
	return outer ? ILA_RES_XLAT : ILA_RES_PASS;
}

/*
 * A map entry's translation of the address at @addr: a /64 rule from the
 * address's own locator (so it matches) to the entry's, in the entry's
 * mode, with the same ILA math the prefix pairs use.
 */
static void ila_entry_xlat(struct ila_xlat *mx, const struct ila_rule *r,
			   const u8 *addr, const struct nf_ila_map_entry *e)
{
	ila_xlat_init64s(mx, addr, (const u8 *)&e->locator, e->loc_sum,
			 e->csum_mode, r->x.aoff == ILA_IP6_SADDR_OFF, r->x.dir);
}

/*
 * ila_rule_entry - translate skb with map entry @e (the entry of its own
 * address's identifier), in any mode and any packet shape.
 */
enum ila_res ila_rule_entry(struct sk_buff *skb, const struct ila_rule *r,
			    const struct nf_ila_map_entry *e)
{
	struct ila_xlat mx;

	ila_entry_xlat(&mx, r, skb_network_header(skb) + r->x.aoff, e);
	return ila_xlat_general(skb, &mx, true, true);
}
EXPORT_SYMBOL_GPL(ila_rule_entry);

/** ila_rule_miss - a map had no entry for @ident: count, report, decide. */
enum ila_res ila_rule_miss(const struct ila_rule *r, __be64 ident)
{
	nf_ila_map_miss(r->map, ident, r->flags & ILA_RF_MISS_NOTIFY);
	return r->flags & ILA_RF_MISS_DROP ? ILA_RES_MISS_DROP : ILA_RES_MISS;
}
EXPORT_SYMBOL_GPL(ila_rule_miss);

/*
 * A map and an ICMPv6 error whose own address is not in the prefix (the
 * router's own Packet Too Big): the quoted address's identifier decides.
 */
static enum ila_res ila_rule_quoted(struct sk_buff *skb,
				    const struct ila_rule *r)
{
	const unsigned int off = ila_icmp_err_off(skb);
	const struct nf_ila_map_entry *e;
	struct ila_xlat mx;
	const u8 *qaddr;
	u8 qbuf[16];
	__be64 ident;

	if (!off)
		return ILA_RES_PASS;
	qaddr = skb_header_pointer(skb, off + ILA_ICMP6_HLEN + r->x.qoff,
				   sizeof(qbuf), qbuf);
	if (!qaddr || !ila_match(&r->x, qaddr))
		return ILA_RES_PASS;
	memcpy(&ident, qaddr + 8, sizeof(ident));
	e = nf_ila_map_entry_find(r->map, ident);
	if (!e) {
		nf_ila_map_miss(r->map, ident, r->flags & ILA_RF_MISS_NOTIFY);
		return ILA_RES_MISS;	/* the error goes on untranslated */
	}
	nf_ila_map_hit(r->map, (struct nf_ila_map_entry *)e);
	ila_entry_xlat(&mx, r, qaddr, e);
	return ila_xlat_general(skb, &mx, false, false);
}

/*
 * ila_rule_slow - translate skb by @r in the cases ila_rule_xlat() does not
 * handle inline. @outer: the packet's own address is in the prefix (a
 * prefix pair in any mode and packet shape); else an ICMPv6 error may
 * quote an address in it.
 */
enum ila_res ila_rule_slow(struct sk_buff *skb, const struct ila_rule *r,
			   bool outer)
{
	if (r->map)
		return ila_rule_quoted(skb, r);
	return ila_xlat_general(skb, &r->x, outer, false);
}
EXPORT_SYMBOL_GPL(ila_rule_slow);
