// SPDX-License-Identifier: GPL-2.0-only
/*
 * xt_ILA: Identifier-Locator Addressing prefix translation as an ip6tables
 * target (mangle table), in the style of DNPT/SNPT, with ILA's checksum
 * modes (adjust-transport, neutral-map, neutral-map-auto, none).
 *
 * The arithmetic lives in include/common/ila_csum.h (shared with the unit
 * tests); checkentry precomputes everything, so a packet costs a prefix
 * compare, an address write and, for adjust-transport, one 16-bit
 * checksum update.
 *
 * Checksum state of the skb after translation:
 *  CHECKSUM_PARTIAL      only the pseudo-header seed in the L4 field changes
 *                        (adjust-transport); the device completes the rest.
 *  CHECKSUM_COMPLETE     skb->csum gets the sum of every change we made, so
 *                        it stays the sum of the packet from skb->data.
 *  CHECKSUM_UNNECESSARY  stays: the L4 checksum is still right, except in
 *                        mode none, where it becomes CHECKSUM_NONE.
 * Non-first fragments only get the address rewrite: the L4 checksum lives
 * in the first fragment, which carries the whole fix.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/skbuff.h>
#include <linux/ipv6.h>
#include <linux/icmpv6.h>
#include <linux/tcp.h>
#include <linux/udp.h>
#include <linux/netfilter.h>
#include <linux/netfilter_ipv6.h>
#include <linux/netfilter/x_tables.h>
#include <linux/netfilter/xt_ILA.h>
#include <net/ipv6.h>
#include <net/checksum.h>

#include <common/ila_csum.h>

#include "nf_ila_map.h"

static_assert(sizeof(struct ila_xlat) <= sizeof_field(struct xt_ila_tginfo, kpriv));
static_assert(XT_ILA_CSUM_ADJUST_TRANSPORT == ILA_MODE_ADJUST_TRANSPORT);
static_assert(XT_ILA_CSUM_NEUTRAL_MAP == ILA_MODE_NEUTRAL_MAP);
static_assert(XT_ILA_CSUM_NEUTRAL_MAP_AUTO == ILA_MODE_NEUTRAL_MAP_AUTO);
static_assert(XT_ILA_CSUM_NONE == ILA_MODE_NONE);
static_assert(offsetof(struct ipv6hdr, saddr) == ILA_IP6_SADDR_OFF);
static_assert(offsetof(struct ipv6hdr, daddr) == ILA_IP6_DADDR_OFF);

#define ILA_ICMP6_HLEN	sizeof(struct icmp6hdr)

static inline const struct ila_xlat *ila_priv(const struct xt_ila_tginfo *info)
{
	return (const struct ila_xlat *)info->kpriv;
}

/* --map: the kernel-only area holds the map instead of an ila_xlat */
static inline struct nf_ila_map *ila_map_of(const struct xt_ila_tginfo *info)
{
	return *(struct nf_ila_map * const *)info->kpriv;
}

/*
 * --map: look up the identifier of the address to translate; on a hit,
 * build the translation of this packet, a /64 rule from its own locator to
 * the mapped one in the entry's checksum mode, with the same ILA math the
 * prefix rules use. False on a miss.
 */
static bool ila_map_xlat(const struct xt_ila_tginfo *info,
			 const struct ipv6hdr *ip6h, struct ila_xlat *x)
{
	bool src = info->translate == XT_ILA_TRANSLATE_SRC;
	const u8 *addr = src ? ip6h->saddr.s6_addr : ip6h->daddr.s6_addr;
	struct nf_ila_map_result res;
	u8 loc[16] = {};
	__be64 ident;

	memcpy(&ident, addr + 8, sizeof(ident));
	if (!nf_ila_map_lookup(ila_map_of(info), ident, &res))
		return false;
	memcpy(loc, &res.locator, sizeof(res.locator));
	ila_xlat_init(x, addr, loc, ILA_MAX_PFX_LEN, res.csum_mode, src);
	return true;
}

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
 * address to translate (the quoted source for --translate dst, the quoted
 * destination for --translate src). Reads only; returns the length of the
 * skb that must be writable for the job, 0 if there is none.
 */
static unsigned int ila_icmp_prepare(const struct sk_buff *skb,
				     const struct ila_xlat *x,
				     unsigned int thoff, struct ila_quote *q)
{
	struct ipv6hdr _qh;
	const struct ipv6hdr *qh;
	unsigned int qoff = thoff + ILA_ICMP6_HLEN, len, coff;
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

static unsigned int
ila_tg6(struct sk_buff *skb, const struct xt_action_param *par)
{
	const struct xt_ila_tginfo *info = par->targinfo;
	const struct ila_xlat *x = ila_priv(info);
	const bool map = info->flags & XT_ILA_F_MAP;
	struct ila_xlat mx;
	const unsigned int nhoff = skb_network_offset(skb);
	unsigned int thoff = nhoff + sizeof(struct ipv6hdr);
	unsigned int wlen = thoff, coff = 0;
	const struct ipv6hdr *ip6h = ipv6_hdr(skb);
	struct ila_quote q = { .off = 0 };
	__u16 pseudo = 0, payload = 0, tot = 0;
	bool outer, partial;
	__be16 frag_off;
	u8 proto;
	int off;

	if (map) {
		if (!ila_map_xlat(info, ip6h, &mx))
			return info->flags & XT_ILA_F_MISS_DROP ? NF_DROP :
								  XT_CONTINUE;
		x = &mx;
	}
	outer = ila_match(x, (const u8 *)ip6h + x->aoff);
	proto = ip6h->nexthdr;
	if (likely(proto == IPPROTO_TCP || proto == IPPROTO_UDP)) {
		if (!outer)
			return XT_CONTINUE;
	} else if (proto != IPPROTO_ICMPV6) {
		if (!outer && !ipv6_ext_hdr(proto))
			return XT_CONTINUE;
		off = ipv6_skip_exthdr(skb, thoff, &proto, &frag_off);
		if (off < 0 || (ntohs(frag_off) & ~0x7))
			proto = NEXTHDR_NONE;	/* no L4 header here */
		else
			thoff = off;
		if (!outer && proto != IPPROTO_ICMPV6)
			return XT_CONTINUE;
	}

	if (outer) {
		if (unlikely(!ila_can_xlat(x, (const u8 *)ip6h + x->aoff)))
			return NF_DROP;	/* low 16 bits 0xffff: not reversible */
		if (x->mode == ILA_MODE_ADJUST_TRANSPORT)
			coff = ila_l4_csum_off(proto);
	}
	if (unlikely(proto == IPPROTO_ICMPV6)) {
		wlen = max(wlen, ila_icmp_prepare(skb, x, thoff, &q));
		if (q.off)
			coff = ila_l4_csum_off(proto);
		else if (!outer)
			return XT_CONTINUE;
	}
	if (coff) {
		coff += thoff;
		wlen = max(wlen, coff + 2);
	}

	/* a truncated L4 header can't get its checksum fixed */
	if (unlikely(skb_ensure_writable(skb, wlen)))
		return NF_DROP;
	/* --map: a quoted address shares the outer one's entry only if it
	 * has the same identifier (an error returning to the sender)
	 */
	if (map && q.off &&
	    memcmp(skb->data + q.off + x->qoff + 8,
		   skb->data + nhoff + x->aoff + 8, 8))
		q.off = 0;

	if (outer)
		pseudo = ila_xlat_addr(x, skb->data + nhoff + x->aoff);
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
		if (partial)
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
		if (outer && x->mode == ILA_MODE_NONE) {
			skb->ip_summed = CHECKSUM_NONE;
			skb->csum_level = 0;
		}
		break;
	}
	return XT_CONTINUE;
}

/* --map NAME: takes the place of the prefixes and of --csum-mode */
static int ila_tg6_check_map(const struct xt_tgchk_param *par,
			     struct xt_ila_tginfo *info)
{
	struct nf_ila_map *map;

	if (!info->map[0] || !memchr(info->map, 0, sizeof(info->map))) {
		pr_info_ratelimited("--map: bad map name\n");
		return -EINVAL;
	}
	if (info->src_pfx_len || info->dst_pfx_len ||
	    memchr_inv(&info->src_pfx, 0, sizeof(info->src_pfx)) ||
	    memchr_inv(&info->dst_pfx, 0, sizeof(info->dst_pfx))) {
		pr_info_ratelimited("--map %s: replaces --src-pfx and --dst-pfx\n",
				    info->map);
		return -EINVAL;
	}
	if (info->csum_mode != XT_ILA_CSUM_ADJUST_TRANSPORT) {
		pr_info_ratelimited("--map %s: --csum-mode comes from each map entry\n",
				    info->map);
		return -EINVAL;
	}
	map = nf_ila_map_get(par->net, info->map);
	if (IS_ERR(map)) {
		pr_info_ratelimited("--map %s: no such map in this netns (ilactl map create)\n",
				    info->map);
		return -EINVAL;
	}
	*(struct nf_ila_map **)info->kpriv = map;
	return 0;
}

static void ila_tg6_destroy(const struct xt_tgdtor_param *par)
{
	const struct xt_ila_tginfo *info = par->targinfo;

	if (info->flags & XT_ILA_F_MAP)
		nf_ila_map_put(ila_map_of(info));
}

static int ila_tg6_check(const struct xt_tgchk_param *par)
{
	struct xt_ila_tginfo *info = par->targinfo;
	unsigned int allowed;
	const char *chains;

	if (info->flags & ~XT_ILA_F_ALL) {
		pr_info_ratelimited("unknown flags 0x%x\n", info->flags);
		return -EINVAL;
	}
	if ((info->flags & XT_ILA_F_MISS_DROP) && !(info->flags & XT_ILA_F_MAP)) {
		pr_info_ratelimited("--miss needs --map\n");
		return -EINVAL;
	}
	if (!(info->flags & XT_ILA_F_MAP) &&
	    memchr_inv(info->map, 0, sizeof(info->map))) {
		pr_info_ratelimited("map name given without --map\n");
		return -EINVAL;
	}
	if (info->translate > XT_ILA_TRANSLATE_SRC) {
		pr_info_ratelimited("--translate: unknown value %u\n",
				    info->translate);
		return -EINVAL;
	}
	if (info->csum_mode >= __XT_ILA_CSUM_MAX) {
		pr_info_ratelimited("--csum-mode: unknown value %u\n",
				    info->csum_mode);
		return -EINVAL;
	}
	if (info->src_pfx_len > ILA_MAX_PFX_LEN ||
	    info->dst_pfx_len > ILA_MAX_PFX_LEN) {
		pr_info_ratelimited("--src-pfx/--dst-pfx: prefix length must be at most %u\n",
				    ILA_MAX_PFX_LEN);
		return -EINVAL;
	}
	if (info->src_pfx_len != info->dst_pfx_len) {
		pr_info_ratelimited("--src-pfx /%u and --dst-pfx /%u: prefix lengths differ\n",
				    info->src_pfx_len, info->dst_pfx_len);
		return -EINVAL;
	}
	if (!ila_pfx_host_bits_clear(info->src_pfx.in6.s6_addr, info->src_pfx_len)) {
		pr_info_ratelimited("--src-pfx %pI6c/%u: host bits set\n",
				    &info->src_pfx.in6, info->src_pfx_len);
		return -EINVAL;
	}
	if (!ila_pfx_host_bits_clear(info->dst_pfx.in6.s6_addr, info->dst_pfx_len)) {
		pr_info_ratelimited("--dst-pfx %pI6c/%u: host bits set\n",
				    &info->dst_pfx.in6, info->dst_pfx_len);
		return -EINVAL;
	}

	if (info->translate == XT_ILA_TRANSLATE_DST) {
		allowed = (1 << NF_INET_PRE_ROUTING) | (1 << NF_INET_LOCAL_OUT);
		chains = "--translate dst: only in PREROUTING and OUTPUT";
	} else {
		allowed = (1 << NF_INET_POST_ROUTING) | (1 << NF_INET_LOCAL_IN);
		chains = "--translate src: only in POSTROUTING and INPUT";
	}
	if (par->hook_mask & ~allowed) {
		pr_info_ratelimited("%s (hook mask 0x%x)\n", chains, par->hook_mask);
		return -EINVAL;
	}

	if (info->flags & XT_ILA_F_MAP)
		return ila_tg6_check_map(par, info);

	ila_xlat_init((struct ila_xlat *)info->kpriv, info->src_pfx.in6.s6_addr,
		      info->dst_pfx.in6.s6_addr, info->src_pfx_len,
		      info->csum_mode, info->translate == XT_ILA_TRANSLATE_SRC);
	return 0;
}

static struct xt_target ila_tg6_reg __read_mostly = {
	.name		= "ILA",
	.revision	= 0,
	.family		= NFPROTO_IPV6,
	.table		= "mangle",
	.hooks		= (1 << NF_INET_PRE_ROUTING) | (1 << NF_INET_LOCAL_OUT) |
			  (1 << NF_INET_POST_ROUTING) | (1 << NF_INET_LOCAL_IN),
	.target		= ila_tg6,
	.checkentry	= ila_tg6_check,
	.destroy	= ila_tg6_destroy,
	.targetsize	= sizeof(struct xt_ila_tginfo),
	.usersize	= offsetof(struct xt_ila_tginfo, kpriv),
	.me		= THIS_MODULE,
};

static int __init ila_tg6_init(void)
{
	return xt_register_target(&ila_tg6_reg);
}

static void __exit ila_tg6_exit(void)
{
	xt_unregister_target(&ila_tg6_reg);
}

module_init(ila_tg6_init);
module_exit(ila_tg6_exit);

MODULE_LICENSE("GPL");
MODULE_AUTHOR("nf-ila-rtcache developers");
MODULE_DESCRIPTION("Xtables: ILA (Identifier-Locator Addressing, RFC draft-herbert-intarea-ila) prefix translation");
MODULE_ALIAS("ip6t_ILA");
