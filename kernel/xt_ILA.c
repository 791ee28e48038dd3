// SPDX-License-Identifier: GPL-2.0-only
/*
 * xt_ILA: Identifier-Locator Addressing prefix translation as an ip6tables
 * target (mangle table), in the style of DNPT/SNPT, with the checksum
 * modes of the kernel's ILA (adjust-transport, neutral-map, no-action,
 * neutral-map-auto) and RFC 6296's (rfc6296: a drop-in for DNPT/SNPT).
 *
 * The arithmetic lives in include/common/ila_csum.h (shared with the unit
 * tests), the per-packet work in ila_xlat.h: one routine for this target
 * and the direct hooks of nf_ila.ko, which also holds its out-of-line
 * cases and the maps (--map). checkentry precomputes everything, so a
 * packet costs a prefix compare, an address write and one 16-bit checksum
 * update.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/skbuff.h>
#include <linux/netfilter.h>
#include <linux/netfilter_ipv6.h>
#include <linux/netfilter/x_tables.h>
#include <linux/netfilter/xt_ILA.h>

#include "ila_xlat.h"

static_assert(sizeof(struct ila_rule) <= sizeof_field(struct xt_ila_tginfo, kpriv));
static_assert(offsetof(struct ipv6hdr, saddr) == ILA_IP6_SADDR_OFF);
static_assert(offsetof(struct ipv6hdr, daddr) == ILA_IP6_DADDR_OFF);

/* The kernel-only area holds the rule as checkentry built it. */
static inline const struct ila_rule *ila_rule_of(const struct xt_ila_tginfo *info)
{
	return (const struct ila_rule *)info->kpriv;
}

/*
 * The hooks where a rule may translate: the destination before routing,
 * the source after it. Legacy tables check this at insertion; nft_compat
 * cannot for a rule in a regular chain (hook mask 0), which any base
 * chain may jump to: such rules are checked per packet.
 */
static unsigned int ila_tg6_hooks(bool src)
{
	return src ? (1 << NF_INET_POST_ROUTING) | (1 << NF_INET_LOCAL_IN) :
		     (1 << NF_INET_PRE_ROUTING) | (1 << NF_INET_LOCAL_OUT);
}

static noinline bool ila_tg6_misplaced(const struct xt_action_param *par,
				       const struct ila_rule *r)
{
	const bool src = r->x.aoff == ILA_IP6_SADDR_OFF;

	if (ila_tg6_hooks(src) & (1 << xt_hooknum(par)))
		return false;
	net_info_ratelimited("--translate %s in a chain reached from hook %u: only for %s; packet left untranslated\n",
			     src ? "src" : "dst", xt_hooknum(par),
			     src ? "POSTROUTING and INPUT" : "PREROUTING and OUTPUT");
	return true;
}

static unsigned int ila_tg6_verdict(enum ila_res res)
{
	return res >= ILA_RES_MISS_DROP ? NF_DROP : XT_CONTINUE;
}

/* Each kind of rule in a function of its own, none paying for the other. */
static noinline unsigned int ila_tg6_map(struct sk_buff *skb,
					 const struct ila_rule *r)
{
	return ila_tg6_verdict(ila_rule_xlat(skb, r, ILA_V_MAP));
}

static noinline unsigned int ila_tg6_pfx(struct sk_buff *skb,
					 const struct ila_rule *r)
{
	return ila_tg6_verdict(ila_rule_xlat(skb, r, ILA_V_STATIC));
}

static unsigned int
ila_tg6(struct sk_buff *skb, const struct xt_action_param *par)
{
	const struct ila_rule *r = ila_rule_of(par->targinfo);

	if (unlikely(r->flags & ILA_RF_CHECK_HOOK) && ila_tg6_misplaced(par, r))
		return XT_CONTINUE;
	if (r->map)
		return ila_tg6_map(skb, r);
	return ila_tg6_pfx(skb, r);
}

/* --map NAME: takes the place of the prefixes and of --csum-mode */
static int ila_tg6_check_map(const struct xt_tgchk_param *par,
			     struct xt_ila_tginfo *info, struct ila_rule *r)
{
	static const u8 any[16];
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
	/* every address: the rule's own match (-d) selects the packets */
	ila_xlat_init(&r->x, any, any, 0, NF_ILA_CSUM_ADJUST_TRANSPORT,
		      info->translate == XT_ILA_TRANSLATE_SRC,
		      info->flags & XT_ILA_F_ILA2SIR ? NF_ILA_DIR_ILA2SIR :
						       NF_ILA_DIR_SIR2ILA);
	r->flags |= (info->flags & XT_ILA_F_MISS_DROP ? ILA_RF_MISS_DROP : 0) |
		    (info->flags & XT_ILA_F_MISS_NOTIFY ? ILA_RF_MISS_NOTIFY : 0);
	r->map = map;
	return 0;
}

static void ila_tg6_destroy(const struct xt_tgdtor_param *par)
{
	const struct ila_rule *r = ila_rule_of(par->targinfo);

	if (r->map)
		nf_ila_map_put(r->map);
}

static int ila_tg6_check(const struct xt_tgchk_param *par)
{
	struct xt_ila_tginfo *info = par->targinfo;
	struct ila_rule *r;
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

	chains = info->translate == XT_ILA_TRANSLATE_DST ?
		 "--translate dst: only in PREROUTING and OUTPUT" :
		 "--translate src: only in POSTROUTING and INPUT";
	if (par->hook_mask & ~ila_tg6_hooks(info->translate == XT_ILA_TRANSLATE_SRC)) {
		pr_info_ratelimited("%s (hook mask 0x%x)\n", chains, par->hook_mask);
		return -EINVAL;
	}
	if (!(info->flags & XT_ILA_F_MAP) && !info->src_pfx_len) {
		pr_info_ratelimited("--src-pfx/--dst-pfx: prefix length must be 1..%u (/0 would translate every address)\n",
				    ILA_MAX_PFX_LEN);
		return -EINVAL;
	}
	if ((info->flags & XT_ILA_F_ILA2SIR) && !(info->flags & XT_ILA_F_MAP) &&
	    info->csum_mode != XT_ILA_CSUM_NEUTRAL_MAP) {
		pr_info_ratelimited("--direction: only with --csum-mode neutral-map or --map\n");
		return -EINVAL;
	}

	/* userspace may have put anything in kpriv: it is ours from here */
	r = (struct ila_rule *)info->kpriv;
	memset(info->kpriv, 0, sizeof(info->kpriv));
	/* nft_compat in a regular chain: no hook known yet, check per packet */
	if (!par->hook_mask)
		r->flags = ILA_RF_CHECK_HOOK;
	if (info->flags & XT_ILA_F_MAP)
		return ila_tg6_check_map(par, info, r);
	ila_xlat_init(&r->x, info->src_pfx.in6.s6_addr,
		      info->dst_pfx.in6.s6_addr, info->src_pfx_len,
		      info->csum_mode, info->translate == XT_ILA_TRANSLATE_SRC,
		      info->flags & XT_ILA_F_ILA2SIR ? NF_ILA_DIR_ILA2SIR :
						       NF_ILA_DIR_SIR2ILA);
	r->src_sum = ila_sum16(info->src_pfx.in6.s6_addr, 4);
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
