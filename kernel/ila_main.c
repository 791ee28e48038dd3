// SPDX-License-Identifier: GPL-2.0-only
/*
 * ila_main.c - nf_ila.ko: ILA / NPTv6 maps (ila_map.c, generic netlink
 * family ILA_MAP) and direct hooks (ila_hook.c, family ILA_HOOK), and the
 * translation the -j ILA target (xt_ILA.ko) shares with the hooks
 * (ila_xlat.c). This file holds what they share: the per-netns state and
 * its lock, and the module's life.
 *
 * Module parameters: entry_hits (ila_map.c); selftest: at load, check the
 * inline map lookup against rhashtable_lookup() (refuse to load if they
 * disagree).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <net/genetlink.h>
#include <net/net_namespace.h>
#include <net/netns/generic.h>
#include <linux/ila_hook.h>
#include <linux/ila_map.h>

#include "ila.h"

static unsigned int nf_ila_net_id __read_mostly;

static bool nf_ila_selftest;
module_param_named(selftest, nf_ila_selftest, bool, 0444);
MODULE_PARM_DESC(selftest, "check the inline map lookup against rhashtable_lookup() at load");

struct nf_ila_net *nf_ila_pernet(const struct net *net)
{
	return net_generic(net, nf_ila_net_id);
}

static int __net_init nf_ila_net_init(struct net *net)
{
	struct nf_ila_net *in = nf_ila_pernet(net);

	mutex_init(&in->lock);
	INIT_LIST_HEAD(&in->maps);
	INIT_LIST_HEAD(&in->hooks);
	INIT_LIST_HEAD(&in->slots);
	in->nmaps = 0;
	in->nhooks = 0;
	return 0;
}

/* No packet enters a hook once this returns (and a grace period passed). */
static void __net_exit nf_ila_net_pre_exit(struct net *net)
{
	struct nf_ila_net *in = nf_ila_pernet(net);

	mutex_lock(&in->lock);
	nf_ila_hook_net_pre_exit(net, in);
	mutex_unlock(&in->lock);
}

/* Hooks first: they hold maps. Rules holding maps free them on destroy. */
static void __net_exit nf_ila_net_exit(struct net *net)
{
	struct nf_ila_net *in = nf_ila_pernet(net);

	mutex_lock(&in->lock);
	nf_ila_hook_net_exit(in);
	nf_ila_map_net_exit(in);
	mutex_unlock(&in->lock);
	mutex_destroy(&in->lock);
}

static struct pernet_operations nf_ila_net_ops = {
	.init		= nf_ila_net_init,
	.pre_exit	= nf_ila_net_pre_exit,
	.exit		= nf_ila_net_exit,
	.id		= &nf_ila_net_id,
	.size		= sizeof(struct nf_ila_net),
};

static int __init nf_ila_init(void)
{
	int err;

	err = nf_ila_map_init();
	if (err)
		return err;
	if (nf_ila_selftest) {
		err = nf_ila_map_selftest();
		if (err)
			goto err_map;
	}
	err = register_pernet_subsys(&nf_ila_net_ops);
	if (err)
		goto err_map;
	err = genl_register_family(&nf_ila_map_family);
	if (err)
		goto err_pernet;
	err = genl_register_family(&nf_ila_hook_family);
	if (err)
		goto err_map_family;
	return 0;

err_map_family:
	genl_unregister_family(&nf_ila_map_family);
err_pernet:
	unregister_pernet_subsys(&nf_ila_net_ops);
err_map:
	nf_ila_map_exit();
	return err;
}

static void __exit nf_ila_exit(void)
{
	genl_unregister_family(&nf_ila_hook_family);
	genl_unregister_family(&nf_ila_map_family);
	unregister_pernet_subsys(&nf_ila_net_ops);
	nf_ila_map_exit();
}

module_init(nf_ila_init);
module_exit(nf_ila_exit);

MODULE_LICENSE("GPL");
MODULE_AUTHOR("nf-ila-rtcache contributors");
MODULE_DESCRIPTION("ILA / NPTv6 (draft-herbert-intarea-ila, RFC 6296): identifier-to-locator maps and direct netfilter hooks (generic netlink " ILA_MAP_GENL_NAME ", " ILA_HOOK_GENL_NAME ")");
MODULE_ALIAS_GENL_FAMILY(ILA_MAP_GENL_NAME);
MODULE_ALIAS_GENL_FAMILY(ILA_HOOK_GENL_NAME);
