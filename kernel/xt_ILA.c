// SPDX-License-Identifier: GPL-2.0-only
/*
 * xt_ILA: Identifier-Locator Addressing prefix translation as an ip6tables
 * target (mangle table), in the style of DNPT/SNPT, with the checksum
 * modes of the kernel's ILA (adjust-transport, neutral-map, no-action,
 * neutral-map-auto) and RFC 6296's (rfc6296: a drop-in for DNPT/SNPT).
 *
 * The arithmetic lives in include/common/ila_csum.h (shared with the unit
 * tests), the per-packet work in ila_xlat.h (shared with the direct
 * hooks); checkentry precomputes everything, so a packet costs a prefix
 * compare, an address write and one 16-bit checksum update.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/skbuff.h>
#include <linux/netfilter.h>
#include <linux/netfilter_ipv6.h>
#include <linux/netfilter/x_tables.h>
#include <linux/netfilter/xt_ILA.h>

#include "ila_xlat.h"
#include "nf_ila_map.h"

static_assert(sizeof(struct ila_xlat) <= sizeof_field(struct xt_ila_tginfo, kpriv));
static_assert(XT_ILA_CSUM_ADJUST_TRANSPORT == ILA_MODE_ADJUST_TRANSPORT);
static_assert(XT_ILA_CSUM_NEUTRAL_MAP == ILA_MODE_NEUTRAL_MAP);
static_assert(XT_ILA_CSUM_NO_ACTION == ILA_MODE_NO_ACTION);
static_assert(XT_ILA_CSUM_NEUTRAL_MAP_AUTO == ILA_MODE_NEUTRAL_MAP_AUTO);
static_assert(XT_ILA_CSUM_RFC6296 == ILA_MODE_RFC6296);
static_assert(__XT_ILA_CSUM_MAX == ILA_MODE_COUNT);
static_assert(offsetof(struct ipv6hdr, saddr) == ILA_IP6_SADDR_OFF);
static_assert(offsetof(struct ipv6hdr, daddr) == ILA_IP6_DADDR_OFF);

static inline const struct ila_xlat *ila_priv(const struct xt_ila_tginfo *info)
{
	return (const struct ila_xlat *)info->kpriv;
}

/* --map: the kernel-only area holds the map instead of an ila_xlat */
static inline struct nf_ila_map *ila_map_of(const struct xt_ila_tginfo *info)
{
	return *(struct nf_ila_map * const *)info->kpriv;
}

/* The general case, out of line: the fast path keeps a small frame. */
static noinline unsigned int ila_tg6_general(struct sk_buff *skb,
					     const struct ila_xlat *x,
					     bool same_ident)
{
	return ila_xlat_skb(skb, x, same_ident) ? XT_CONTINUE : NF_DROP;
}

/*
 * --map, an entry in a mode that is not locator-only or a packet that is
 * not the common case: the translation of this packet, a /64 rule from its
 * own locator (so it matches) to the mapped one in the entry's checksum
 * mode, with the same ILA math the prefix rules use.
 */
static noinline unsigned int ila_tg6_map_entry(struct sk_buff *skb,
					       const struct xt_ila_tginfo *info,
					       const struct nf_ila_map_entry *e)
{
	const bool src = info->translate == XT_ILA_TRANSLATE_SRC;
	const u8 *addr = skb_network_header(skb) +
			 (src ? ILA_IP6_SADDR_OFF : ILA_IP6_DADDR_OFF);
	struct ila_xlat mx;

	ila_xlat_init64s(&mx, addr, (const u8 *)&e->locator, e->loc_sum,
			 e->csum_mode, src,
			 info->flags & XT_ILA_F_ILA2SIR ? ILA_DIR_ILA2SIR :
							  ILA_DIR_SIR2ILA);
	if (likely(ila_xlat_skb_fast(skb, &mx)))
		return XT_CONTINUE;
	return ila_tg6_general(skb, &mx, true);
}

/* --map: the entry of the packet's identifier gives its translation */
static noinline unsigned int ila_tg6_map(struct sk_buff *skb,
					 const struct xt_ila_tginfo *info)
{
	const unsigned int aoff = info->translate == XT_ILA_TRANSLATE_SRC ?
				  ILA_IP6_SADDR_OFF : ILA_IP6_DADDR_OFF;
	const u8 *addr = skb_network_header(skb) + aoff;
	struct nf_ila_map *map = ila_map_of(info);
	const __be64 ident = (__force __be64)ila_get64(addr + 8);
	const u64 a = ila_get64(addr);	/* addr is stale after the unshare */
	struct nf_ila_map_entry *e;
	unsigned int coff;

	e = nf_ila_map_entry_find(map, ident);
	if (unlikely(!e)) {
		nf_ila_map_miss(map, ident, info->flags & XT_ILA_F_MISS_NOTIFY);
		return info->flags & XT_ILA_F_MISS_DROP ? NF_DROP : XT_CONTINUE;
	}
	nf_ila_map_hit(map, e);
	if (unlikely(!ila_mode_loc_only(e->csum_mode)))
		return ila_tg6_map_entry(skb, info, e);
	coff = ila_loc_coff(skb);
	if (unlikely(!coff))
		return ila_tg6_map_entry(skb, info, e);
	if (unlikely(!ila_loc_unshare(skb, coff)))
		return NF_DROP;
	if (unlikely(!ila_xlat_skb_loc(skb, coff, aoff, (__force u64)e->locator,
				       ila_loc_diff(e->loc_sum, a),
				       e->csum_mode == ILA_MODE_ADJUST_TRANSPORT)))
		return ila_tg6_map_entry(skb, info, e);
	return XT_CONTINUE;
}

/* --src-pfx/--dst-pfx: the precomputed translation */
static noinline unsigned int ila_tg6_pfx(struct sk_buff *skb,
					 const struct xt_ila_tginfo *info)
{
	const struct ila_xlat *x = ila_priv(info);
	const u64 a = ila_get64(skb_network_header(skb) + x->aoff);
	unsigned int coff;

	if (!ila_match64(x, a)) {
		/* only an ICMPv6 error (its quoted header) can need work */
		if (likely(ipv6_hdr(skb)->nexthdr == IPPROTO_TCP ||
			   ipv6_hdr(skb)->nexthdr == IPPROTO_UDP))
			return XT_CONTINUE;
		return ila_tg6_general(skb, x, false);
	}
	if (!ila_mode_loc_only(x->mode)) {
		if (likely(ila_xlat_skb_fast(skb, x)))
			return XT_CONTINUE;
		return ila_tg6_general(skb, x, false);
	}
	coff = ila_loc_coff(skb);
	if (unlikely(!coff))
		return ila_tg6_general(skb, x, false);
	if (unlikely(!ila_loc_unshare(skb, coff)))
		return NF_DROP;
	if (unlikely(!ila_xlat_skb_loc(skb, coff, x->aoff, ila_xlat_loc(x, a),
				       x->diff,
				       x->mode == ILA_MODE_ADJUST_TRANSPORT)))
		return ila_tg6_general(skb, x, false);
	return XT_CONTINUE;
}

/* Each kind of rule in a function of its own, none paying for the other. */
static unsigned int
ila_tg6(struct sk_buff *skb, const struct xt_action_param *par)
{
	const struct xt_ila_tginfo *info = par->targinfo;

	if (info->flags & XT_ILA_F_MAP)
		return ila_tg6_map(skb, info);
	return ila_tg6_pfx(skb, info);
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
	if ((info->flags & (XT_ILA_F_MISS_DROP | XT_ILA_F_MISS_NOTIFY)) &&
	    !(info->flags & XT_ILA_F_MAP)) {
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
		pr_info_ratelimited("--src-pfx/--dst-pfx: prefix length must be 1..%u\n",
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
	if (!info->src_pfx_len) {
		pr_info_ratelimited("--src-pfx/--dst-pfx: prefix length must be 1..%u (/0 would translate every address)\n",
				    ILA_MAX_PFX_LEN);
		return -EINVAL;
	}

	if ((info->flags & XT_ILA_F_ILA2SIR) &&
	    info->csum_mode != XT_ILA_CSUM_NEUTRAL_MAP) {
		pr_info_ratelimited("--direction: only with --csum-mode neutral-map or --map\n");
		return -EINVAL;
	}
	ila_xlat_init((struct ila_xlat *)info->kpriv, info->src_pfx.in6.s6_addr,
		      info->dst_pfx.in6.s6_addr, info->src_pfx_len,
		      info->csum_mode, info->translate == XT_ILA_TRANSLATE_SRC,
		      info->flags & XT_ILA_F_ILA2SIR ? ILA_DIR_ILA2SIR :
						       ILA_DIR_SIR2ILA);
	return 0;
}

static struct xt_target ila_tg6_reg __read_mostly = {
	.name		= "ILA",
	.revision	= 1,
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
