// SPDX-License-Identifier: GPL-2.0-only
/*
 * xt_rtcache: match packets whose connection has a valid cached route for
 * their direction and input interface in nf_conntrack_rtcache.
 *
 * Meant to skip a reverse-path FIB lookup for flows that already passed it:
 *
 *   iptables -t mangle -A PREROUTING -m rtcache ! --cached \
 *            -m rpfilter --invert -j DROP
 *
 * The conntrack is attached at PRE_ROUTING priority -200, so the match is of
 * no use in the raw table (-300) and refuses it; mangle (-150) works.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/netfilter/x_tables.h>
#include <linux/netfilter/xt_rtcache.h>
#include <net/netfilter/nf_conntrack.h>

#include "nf_conntrack_rtcache.h"

static bool rtcache_mt(const struct sk_buff *skb, struct xt_action_param *par)
{
	const struct xt_rtcache_info *info = par->matchinfo;
	bool cached;

	cached = nf_conntrack_rtcache_cached(xt_net(par), skb, xt_in(par),
					     xt_family(par));
	return cached ^ !!(info->flags & XT_RTCACHE_INVERT);
}

static int rtcache_mt_check(const struct xt_mtchk_param *par)
{
	const struct xt_rtcache_info *info = par->matchinfo;
	int ret;

	if (info->flags & ~XT_RTCACHE_MASK) {
		pr_info_ratelimited("unknown flags 0x%x\n",
				    info->flags & ~XT_RTCACHE_MASK);
		return -EINVAL;
	}
	if (par->family != NFPROTO_IPV4 && par->family != NFPROTO_IPV6 &&
	    par->family != NFPROTO_INET) {
		pr_info_ratelimited("only for IPv4 and IPv6\n");
		return -EINVAL;
	}
	if (!strcmp(par->table, "raw")) {
		pr_info_ratelimited("not valid in the raw table (no conntrack yet), use mangle\n");
		return -EINVAL;
	}
	ret = nf_ct_netns_get(par->net, par->family);
	if (ret < 0)
		pr_info_ratelimited("cannot load conntrack support for proto=%u\n",
				    par->family);
	return ret;
}

static void rtcache_mt_destroy(const struct xt_mtdtor_param *par)
{
	nf_ct_netns_put(par->net, par->family);
}

static struct xt_match rtcache_mt_reg __read_mostly = {
	.name		= "rtcache",
	.revision	= 0,
	.family		= NFPROTO_UNSPEC,
	.checkentry	= rtcache_mt_check,
	.match		= rtcache_mt,
	.destroy	= rtcache_mt_destroy,
	.matchsize	= sizeof(struct xt_rtcache_info),
	.hooks		= (1 << NF_INET_PRE_ROUTING) | (1 << NF_INET_LOCAL_IN) |
			  (1 << NF_INET_FORWARD),
	.me		= THIS_MODULE,
};

static int __init rtcache_mt_init(void)
{
	return xt_register_match(&rtcache_mt_reg);
}

static void __exit rtcache_mt_exit(void)
{
	xt_unregister_match(&rtcache_mt_reg);
}

module_init(rtcache_mt_init);
module_exit(rtcache_mt_exit);

MODULE_LICENSE("GPL");
MODULE_AUTHOR("nf-ila-rtcache contributors");
MODULE_DESCRIPTION("Xtables: match connections with a cached route (nf_conntrack_rtcache)");
MODULE_ALIAS("ipt_rtcache");
MODULE_ALIAS("ip6t_rtcache");
