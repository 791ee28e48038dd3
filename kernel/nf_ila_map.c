// SPDX-License-Identifier: GPL-2.0
/*
 * nf_ila_map.c - named per-netns ILA maps: identifier -> locator + checksum
 * mode, for "ip6tables -j ILA --map NAME".
 *
 * Each network namespace has its own set of maps, created and filled over
 * the generic netlink family ILA_MAP (<linux/ila_map.h>, tool: ilactl(8)).
 * A map is an rhashtable keyed by the 64-bit identifier: lookups from the
 * packet path are lock-free under RCU and O(1) at any size, updates are
 * serialised by a per-netns mutex and never block readers (an entry is never
 * changed in place; replace swaps in a new entry and frees the old one after
 * a grace period).
 *
 * Lifetime: a map is referenced by its netns list, by every rule using it and
 * by every dump in progress; the last reference frees it after an RCU grace
 * period. Destroying a map that rules still use is refused with EBUSY.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/ratelimit.h>
#include <linux/mutex.h>
#include <linux/percpu.h>
#include <linux/refcount.h>
#include <linux/rhashtable.h>
#include <linux/slab.h>
#include <linux/workqueue.h>
#include <net/genetlink.h>
#include <net/net_namespace.h>
#include <net/netns/generic.h>
#include <net/sock.h>
#include <linux/ila_map.h>
#include <linux/netfilter/xt_ILA.h>

#include <common/ila_csum.h>

#include "compat.h"
#include "nf_ila_map.h"

/* entries carry the mode xt_ILA applies: one numbering */
static_assert((int)ILA_MAP_CSUM_ADJUST_TRANSPORT == (int)XT_ILA_CSUM_ADJUST_TRANSPORT);
static_assert((int)ILA_MAP_CSUM_NEUTRAL_MAP == (int)XT_ILA_CSUM_NEUTRAL_MAP);
static_assert((int)ILA_MAP_CSUM_NO_ACTION == (int)XT_ILA_CSUM_NO_ACTION);
static_assert((int)ILA_MAP_CSUM_NEUTRAL_MAP_AUTO == (int)XT_ILA_CSUM_NEUTRAL_MAP_AUTO);
static_assert((int)ILA_MAP_CSUM_RFC6296 == (int)XT_ILA_CSUM_RFC6296);
static_assert(ILA_MAP_NAMSIZ == XT_ILA_MAP_NAMELEN);

#define NF_ILA_MAP_MAX_PER_NET	1024

/* struct nf_ila_map and its entries: nf_ila_map.h (users inline lookups) */

struct nf_ila_map_net {
	struct mutex		lock;	/* maps list and all updates */
	struct list_head	maps;
	unsigned int		count;
};

struct nf_ila_map_dump {
	struct rhashtable_iter	iter;
	struct nf_ila_map	*map;
	bool			pending;	/* iter's current entry not sent */
};

/*
 * The identifier's bucket: ila_map_hash64() (include/common/ila_map_hash.h,
 * whose spread the unit tests measure), as nf_ila_map_entry_find() hashes.
 */
static u32 nf_ila_map_hashfn(const void *data, u32 len, u32 seed)
{
	u64 k;

	memcpy(&k, data, sizeof(k));
	return ila_map_hash64(k, seed);
}

/* The key compared inline (rhashtable's default calls memcmp); the packet
 * paths walk the table themselves (nf_ila_map_entry_find()).
 */
static inline int nf_ila_map_obj_cmpfn(struct rhashtable_compare_arg *arg,
				       const void *obj)
{
	const struct nf_ila_map_entry *e = obj;

	return *(const __be64 *)arg->key != e->ident;
}

static const struct rhashtable_params nf_ila_map_params = {
	.head_offset		= offsetof(struct nf_ila_map_entry, node),
	.key_offset		= offsetof(struct nf_ila_map_entry, ident),
	.key_len		= sizeof(__be64),
	.hashfn			= nf_ila_map_hashfn,
	.obj_cmpfn		= nf_ila_map_obj_cmpfn,
	.automatic_shrinking	= true,
};

static unsigned int nf_ila_map_net_id __read_mostly;
static struct kmem_cache *nf_ila_map_cachep __read_mostly;
static struct workqueue_struct *nf_ila_map_wq __read_mostly;

/*
 * Per-entry hit counters on (default) or off: for hosts where many CPUs hit
 * one identifier at line rate (the shared counter's cache line bounces), and
 * for `make bench`, which measures what the counters cost.
 */
bool nf_ila_map_entry_hits __read_mostly = true;
EXPORT_SYMBOL_GPL(nf_ila_map_entry_hits);
module_param_named(entry_hits, nf_ila_map_entry_hits, bool, 0644);
MODULE_PARM_DESC(entry_hits, "count hits per map entry (ilactl map show -s); default Y");

static struct genl_family nf_ila_map_family __ro_after_init;

static struct nf_ila_map_net *nf_ila_map_pernet(struct net *net)
{
	return net_generic(net, nf_ila_map_net_id);
}

/*
 * The table of a map for a writer: every change of map->tbl (swap) and of
 * its contents happens under the per-netns mutex, which callers hold (or
 * the map is unreachable: free, an entry dump that blocks swaps).
 */
static struct nf_ila_map_tbl *nf_ila_map_tbl(const struct nf_ila_map *map)
{
	return rcu_dereference_protected(map->tbl, true);
}

static struct rhashtable *nf_ila_map_ht(const struct nf_ila_map *map)
{
	return &nf_ila_map_tbl(map)->ht;
}

/* ---- lifetime ----------------------------------------------------------- */

static void nf_ila_map_entry_free(void *ptr, void *arg)
{
	kmem_cache_free(nf_ila_map_cachep, ptr);
}

static void nf_ila_map_entry_free_rcu(struct rcu_head *head)
{
	kmem_cache_free(nf_ila_map_cachep,
			container_of(head, struct nf_ila_map_entry, rcu));
}

static void nf_ila_map_free_work(struct work_struct *work)
{
	struct nf_ila_map *map = container_of(to_rcu_work(work),
					      struct nf_ila_map, free_work);

	rhashtable_free_and_destroy(nf_ila_map_ht(map), nf_ila_map_entry_free, NULL);
	kfree(nf_ila_map_tbl(map));
	free_percpu(map->stats);
	kfree(map);
}

static void nf_ila_map_release(struct nf_ila_map *map)
{
	if (!refcount_dec_and_test(&map->refcnt))
		return;
	/* packets may still be looking it up: free after a grace period */
	INIT_RCU_WORK(&map->free_work, nf_ila_map_free_work);
	queue_rcu_work(nf_ila_map_wq, &map->free_work);
}

static struct nf_ila_map *nf_ila_map_find(struct nf_ila_map_net *mn,
					  const char *name)
{
	struct nf_ila_map *map;

	lockdep_assert_held(&mn->lock);
	list_for_each_entry(map, &mn->maps, list)
		if (!strcmp(map->name, name))
			return map;
	return NULL;
}

/* ---- API for xt_ILA ------------------------------------------------------ */

struct nf_ila_map *nf_ila_map_get(struct net *net, const char *name)
{
	struct nf_ila_map_net *mn = nf_ila_map_pernet(net);
	struct nf_ila_map *map;

	mutex_lock(&mn->lock);
	map = nf_ila_map_find(mn, name);
	if (map) {
		refcount_inc(&map->refcnt);
		atomic_inc(&map->rules);
	}
	mutex_unlock(&mn->lock);
	return map ?: ERR_PTR(-ENOENT);
}
EXPORT_SYMBOL_GPL(nf_ila_map_get);

void nf_ila_map_put(struct nf_ila_map *map)
{
	atomic_dec(&map->rules);
	nf_ila_map_release(map);
}
EXPORT_SYMBOL_GPL(nf_ila_map_put);

static void nf_ila_map_miss_notify(struct nf_ila_map *map, __be64 ident);

void nf_ila_map_miss(struct nf_ila_map *map, __be64 ident, bool notify_miss)
{
	this_cpu_inc(map->stats->misses);
	if (unlikely(notify_miss || map->notify_miss))
		nf_ila_map_miss_notify(map, ident);
}
EXPORT_SYMBOL_GPL(nf_ila_map_miss);

struct nf_ila_map_entry *nf_ila_map_find_nested(struct rhashtable *ht,
						__be64 ident)
{
	return rhashtable_lookup(ht, &ident, nf_ila_map_params);
}
EXPORT_SYMBOL_GPL(nf_ila_map_find_nested);

/* ---- netlink helpers ----------------------------------------------------- */

static const struct genl_multicast_group nf_ila_map_mcgrps[] = {
	{ .name = ILA_MAP_MCGRP_EVENTS },
};

/*
 * Tell the "events" group (ilactl monitor) what a successful command
 * changed, as the command itself: cmd, the map's name (NEWMAP: and how it
 * was created), NAME2 of a swap, the entry written or removed (REPLACE when
 * an entry was replaced). Called under mn->lock; builds nothing while no
 * one listens.
 */
static void nf_ila_map_notify(struct genl_info *info, u8 cmd,
			      const struct nf_ila_map *map, const char *name2,
			      const struct nf_ila_map_entry *e, bool replaced)
{
	struct net *net = genl_info_net(info);
	struct sk_buff *skb;
	void *hdr;

	if (!genl_has_listeners(&nf_ila_map_family, net, 0))
		return;
	skb = genlmsg_new(NLMSG_DEFAULT_SIZE, GFP_KERNEL);
	if (!skb)
		return;
	hdr = genlmsg_put(skb, info->snd_portid, info->snd_seq,
			  &nf_ila_map_family, 0, cmd);
	if (!hdr ||
	    nla_put_string(skb, ILA_MAP_A_NAME, map->name) ||
	    (name2 && nla_put_string(skb, ILA_MAP_A_NAME2, name2)) ||
	    (cmd == ILA_MAP_CMD_NEWMAP &&
	     (nla_put_u32(skb, ILA_MAP_A_MAX_ENTRIES,
			  nf_ila_map_tbl(map)->max_entries) ||
	      (map->notify_miss &&
	       nla_put_flag(skb, ILA_MAP_A_NOTIFY_MISS)))) ||
	    (e && (nla_put_u64_64bit(skb, ILA_MAP_A_IDENT, (__force u64)e->ident,
				     ILA_MAP_A_PAD) ||
		   (cmd == ILA_MAP_CMD_NEWENTRY &&
		    (nla_put_u64_64bit(skb, ILA_MAP_A_LOCATOR,
				       (__force u64)e->locator, ILA_MAP_A_PAD) ||
		     nla_put_u8(skb, ILA_MAP_A_CSUM_MODE, e->csum_mode))))) ||
	    (replaced && nla_put_flag(skb, ILA_MAP_A_REPLACE))) {
		nlmsg_free(skb);
		return;
	}
	genlmsg_end(skb, hdr);
	genlmsg_multicast_netns(&nf_ila_map_family, net, skb, 0, 0, GFP_KERNEL);
}

/* A packet's lookup of ident missed: MISS to "events", <= 100/s per map. */
static void nf_ila_map_miss_notify(struct nf_ila_map *map, __be64 ident)
{
	struct net *net = read_pnet(&map->net);
	struct sk_buff *skb;
	void *hdr;

	if (!genl_has_listeners(&nf_ila_map_family, net, 0) ||
	    !__ratelimit(&map->miss_rs))
		return;
	skb = genlmsg_new(nla_total_size(ILA_MAP_NAMSIZ) +
			  nla_total_size_64bit(sizeof(u64)), GFP_ATOMIC);
	if (!skb)
		return;
	hdr = genlmsg_put(skb, 0, 0, &nf_ila_map_family, 0, ILA_MAP_CMD_MISS);
	if (!hdr || nla_put_string(skb, ILA_MAP_A_NAME, map->name) ||
	    nla_put_u64_64bit(skb, ILA_MAP_A_IDENT, (__force u64)ident,
			      ILA_MAP_A_PAD)) {
		nlmsg_free(skb);
		return;
	}
	genlmsg_end(skb, hdr);
	genlmsg_multicast_netns(&nf_ila_map_family, net, skb, 0, 0, GFP_ATOMIC);
}

static struct netlink_range_validation nf_ila_map_max_range __ro_after_init = {
	.min = 1,
	.max = ILA_MAP_LIMIT_MAX_ENTRIES,
};

static const struct nla_policy nf_ila_map_policy[ILA_MAP_A_MAX + 1] = {
	[ILA_MAP_A_NAME]	= { .type = NLA_NUL_STRING,
				    .len = ILA_MAP_NAMSIZ - 1 },
	[ILA_MAP_A_IDENT]	= { .type = NLA_U64 },
	[ILA_MAP_A_LOCATOR]	= { .type = NLA_U64 },
	[ILA_MAP_A_CSUM_MODE]	= NLA_POLICY_MAX(NLA_U8, ILA_MAP_CSUM_MAX),
	[ILA_MAP_A_MAX_ENTRIES]	= NLA_POLICY_FULL_RANGE(NLA_U32,
							&nf_ila_map_max_range),
	[ILA_MAP_A_ENTRIES]	= { .type = NLA_REJECT },
	[ILA_MAP_A_RULES]	= { .type = NLA_REJECT },
	[ILA_MAP_A_STATS]	= { .type = NLA_REJECT },
	[ILA_MAP_A_REPLACE]	= { .type = NLA_FLAG },
	[ILA_MAP_A_NAME2]	= { .type = NLA_NUL_STRING,
				    .len = ILA_MAP_NAMSIZ - 1 },
	[ILA_MAP_A_HITS]	= { .type = NLA_REJECT },
	[ILA_MAP_A_NOTIFY_MISS]	= { .type = NLA_FLAG },
};

static bool nf_ila_map_name_ok(const char *name)
{
	if (!*name)
		return false;
	for (; *name; name++)	/* ASCII only: the kernel's ctype knows Latin-1 */
		if (!(*name >= 'a' && *name <= 'z') &&
		    !(*name >= 'A' && *name <= 'Z') &&
		    !(*name >= '0' && *name <= '9') && !strchr("_.-", *name))
			return false;
	return true;
}

/* Map named by ILA_MAP_A_NAME, or an ERR_PTR with the reason in extack. */
static struct nf_ila_map *nf_ila_map_from_attrs(struct nf_ila_map_net *mn,
						struct nlattr **attrs,
						struct netlink_ext_ack *extack)
{
	struct nf_ila_map *map;

	if (NL_REQ_ATTR_CHECK(extack, NULL, attrs, ILA_MAP_A_NAME))
		return ERR_PTR(-EINVAL);
	map = nf_ila_map_find(mn, nla_data(attrs[ILA_MAP_A_NAME]));
	if (!map) {
		NL_SET_ERR_MSG_ATTR(extack, attrs[ILA_MAP_A_NAME],
				    "no such map");
		return ERR_PTR(-ENOENT);
	}
	return map;
}

static void nf_ila_map_read_stats(const struct nf_ila_map *map,
				  u64 *hits, u64 *misses)
{
	int cpu;

	*hits = 0;
	*misses = 0;
	for_each_possible_cpu(cpu) {
		const struct nf_ila_map_pcpu *st = per_cpu_ptr(map->stats, cpu);

		*hits += READ_ONCE(st->hits);
		*misses += READ_ONCE(st->misses);
	}
}

static int nf_ila_map_fill_map(struct sk_buff *skb, u32 portid, u32 seq,
			       int flags, const struct nf_ila_map *map)
{
	struct nlattr *nest;
	u64 hits, misses;
	void *hdr;

	hdr = genlmsg_put(skb, portid, seq, &nf_ila_map_family, flags,
			  ILA_MAP_CMD_GETMAP);
	if (!hdr)
		return -EMSGSIZE;
	nf_ila_map_read_stats(map, &hits, &misses);
	if (nla_put_string(skb, ILA_MAP_A_NAME, map->name) ||
	    nla_put_u32(skb, ILA_MAP_A_ENTRIES,
			atomic_read(&nf_ila_map_ht(map)->nelems)) ||
	    nla_put_u32(skb, ILA_MAP_A_MAX_ENTRIES,
			nf_ila_map_tbl(map)->max_entries) ||
	    nla_put_u32(skb, ILA_MAP_A_RULES, atomic_read(&map->rules)) ||
	    (map->notify_miss && nla_put_flag(skb, ILA_MAP_A_NOTIFY_MISS)))
		goto cancel;
	nest = nla_nest_start(skb, ILA_MAP_A_STATS);
	if (!nest ||
	    nla_put_u64_64bit(skb, ILA_MAP_STATS_LOOKUPS, hits + misses,
			      ILA_MAP_STATS_PAD) ||
	    nla_put_u64_64bit(skb, ILA_MAP_STATS_HITS, hits,
			      ILA_MAP_STATS_PAD) ||
	    nla_put_u64_64bit(skb, ILA_MAP_STATS_MISSES, misses,
			      ILA_MAP_STATS_PAD))
		goto cancel;
	nla_nest_end(skb, nest);
	genlmsg_end(skb, hdr);
	return 0;
cancel:
	genlmsg_cancel(skb, hdr);
	return -EMSGSIZE;
}

static int nf_ila_map_fill_entry(struct sk_buff *skb, u32 portid, u32 seq,
				 int flags, const struct nf_ila_map_entry *e,
				 const char *name)
{
	void *hdr;

	hdr = genlmsg_put(skb, portid, seq, &nf_ila_map_family, flags,
			  ILA_MAP_CMD_GETENTRY);
	if (!hdr)
		return -EMSGSIZE;
	if ((name && nla_put_string(skb, ILA_MAP_A_NAME, name)) ||
	    nla_put_u64_64bit(skb, ILA_MAP_A_IDENT, (__force u64)e->ident,
			      ILA_MAP_A_PAD) ||
	    nla_put_u64_64bit(skb, ILA_MAP_A_LOCATOR, (__force u64)e->locator,
			      ILA_MAP_A_PAD) ||
	    nla_put_u8(skb, ILA_MAP_A_CSUM_MODE, e->csum_mode) ||
	    nla_put_u64_64bit(skb, ILA_MAP_A_HITS, atomic64_read(&e->hits),
			      ILA_MAP_A_PAD)) {
		genlmsg_cancel(skb, hdr);
		return -EMSGSIZE;
	}
	genlmsg_end(skb, hdr);
	return 0;
}

/* ---- map commands -------------------------------------------------------- */

static int nf_ila_map_cmd_newmap(struct sk_buff *skb, struct genl_info *info)
{
	struct nf_ila_map_net *mn = nf_ila_map_pernet(genl_info_net(info));
	struct nlattr *name_attr = info->attrs[ILA_MAP_A_NAME];
	struct nf_ila_map_tbl *tbl;
	struct nf_ila_map *map;
	int err;

	if (GENL_REQ_ATTR_CHECK(info, ILA_MAP_A_NAME))
		return -EINVAL;
	if (!nf_ila_map_name_ok(nla_data(name_attr))) {
		NL_SET_ERR_MSG_ATTR(info->extack, name_attr,
				    "map name: use 1-31 characters of A-Z a-z 0-9 _ . -");
		return -EINVAL;
	}

	map = kzalloc(sizeof(*map), GFP_KERNEL_ACCOUNT);
	if (!map)
		return -ENOMEM;
	map->stats = alloc_percpu_gfp(struct nf_ila_map_pcpu, GFP_KERNEL_ACCOUNT);
	if (!map->stats) {
		err = -ENOMEM;
		goto err_free_map;
	}
	tbl = kzalloc(sizeof(*tbl), GFP_KERNEL_ACCOUNT);
	if (!tbl) {
		err = -ENOMEM;
		goto err_free_stats;
	}
	err = rhashtable_init(&tbl->ht, &nf_ila_map_params);
	if (err) {
		kfree(tbl);
		goto err_free_stats;
	}
	tbl->max_entries = ILA_MAP_DEFAULT_MAX_ENTRIES;
	if (info->attrs[ILA_MAP_A_MAX_ENTRIES])
		tbl->max_entries = nla_get_u32(info->attrs[ILA_MAP_A_MAX_ENTRIES]);
	RCU_INIT_POINTER(map->tbl, tbl);
	nla_strscpy(map->name, name_attr, sizeof(map->name));
	refcount_set(&map->refcnt, 1);
	map->notify_miss = nla_get_flag(info->attrs[ILA_MAP_A_NOTIFY_MISS]);
	ratelimit_state_init(&map->miss_rs, HZ, 100);
	/* no "callbacks suppressed" lines in the kernel log */
	ratelimit_set_flags(&map->miss_rs, RATELIMIT_MSG_ON_RELEASE);
	write_pnet(&map->net, genl_info_net(info));

	mutex_lock(&mn->lock);
	if (nf_ila_map_find(mn, map->name)) {
		NL_SET_ERR_MSG_ATTR(info->extack, name_attr, "map exists");
		err = -EEXIST;
		goto err_unlock;
	}
	if (mn->count >= NF_ILA_MAP_MAX_PER_NET) {
		NL_SET_ERR_MSG(info->extack, "too many maps in this netns");
		err = -ENOSPC;
		goto err_unlock;
	}
	list_add_tail(&map->list, &mn->maps);
	mn->count++;
	nf_ila_map_notify(info, ILA_MAP_CMD_NEWMAP, map, NULL, NULL, false);
	mutex_unlock(&mn->lock);
	return 0;

err_unlock:
	mutex_unlock(&mn->lock);
	rhashtable_destroy(&tbl->ht);
	kfree(tbl);
err_free_stats:
	free_percpu(map->stats);
err_free_map:
	kfree(map);
	return err;
}

static int nf_ila_map_cmd_delmap(struct sk_buff *skb, struct genl_info *info)
{
	struct nf_ila_map_net *mn = nf_ila_map_pernet(genl_info_net(info));
	struct nf_ila_map *map;
	int err = 0;

	mutex_lock(&mn->lock);
	map = nf_ila_map_from_attrs(mn, info->attrs, info->extack);
	if (IS_ERR(map)) {
		err = PTR_ERR(map);
	} else if (atomic_read(&map->rules)) {
		NL_SET_ERR_MSG_ATTR(info->extack, info->attrs[ILA_MAP_A_NAME],
				    "map is in use by ip6tables rules");
		err = -EBUSY;
	} else {
		nf_ila_map_notify(info, ILA_MAP_CMD_DELMAP, map, NULL,
				  NULL, false);
		list_del(&map->list);
		mn->count--;
		nf_ila_map_release(map);
	}
	mutex_unlock(&mn->lock);
	return err;
}

static int nf_ila_map_cmd_getmap(struct sk_buff *skb, struct genl_info *info)
{
	struct nf_ila_map_net *mn = nf_ila_map_pernet(genl_info_net(info));
	struct nf_ila_map *map;
	struct sk_buff *msg;
	int err;

	msg = genlmsg_new(NLMSG_DEFAULT_SIZE, GFP_KERNEL);
	if (!msg)
		return -ENOMEM;
	mutex_lock(&mn->lock);
	map = nf_ila_map_from_attrs(mn, info->attrs, info->extack);
	err = IS_ERR(map) ? PTR_ERR(map) :
	      nf_ila_map_fill_map(msg, info->snd_portid, info->snd_seq, 0, map);
	mutex_unlock(&mn->lock);
	if (err) {
		nlmsg_free(msg);
		return err;
	}
	return genlmsg_reply(msg, info);
}

static int nf_ila_map_dump_maps(struct sk_buff *skb, struct netlink_callback *cb)
{
	struct nf_ila_map_net *mn = nf_ila_map_pernet(sock_net(skb->sk));
	struct nf_ila_map *map;
	long idx = 0, skip = cb->args[0];

	mutex_lock(&mn->lock);
	list_for_each_entry(map, &mn->maps, list) {
		if (idx++ < skip)
			continue;
		if (nf_ila_map_fill_map(skb, NETLINK_CB(cb->skb).portid,
					cb->nlh->nlmsg_seq, NLM_F_MULTI, map)) {
			idx--;
			break;
		}
	}
	mutex_unlock(&mn->lock);
	cb->args[0] = idx;
	return skb->len;
}

/*
 * Call fn on every entry of map's table (mn->lock held), rescheduling now
 * and then. A resize rewinds the walk, so fn may see an entry twice.
 */
static void nf_ila_map_walk_locked(struct nf_ila_map *map,
				   void (*fn)(struct rhashtable *ht,
					      struct nf_ila_map_entry *e))
{
	struct rhashtable *ht = nf_ila_map_ht(map);
	struct rhashtable_iter iter;
	struct nf_ila_map_entry *e;
	unsigned int n = 0;

	rhashtable_walk_enter(ht, &iter);
	rhashtable_walk_start(&iter);
	while ((e = rhashtable_walk_next(&iter)) != NULL) {
		if (IS_ERR(e))
			continue;	/* resized: rewound */
		fn(ht, e);
		if (++n % 1024 == 0) {
			rhashtable_walk_stop(&iter);
			cond_resched();
			rhashtable_walk_start(&iter);
		}
	}
	rhashtable_walk_stop(&iter);
	rhashtable_walk_exit(&iter);
}

static void nf_ila_map_entry_remove(struct rhashtable *ht,
				    struct nf_ila_map_entry *e)
{
	if (!rhashtable_remove_fast(ht, &e->node, nf_ila_map_params))
		call_rcu(&e->rcu, nf_ila_map_entry_free_rcu);
}

/* Deletes every entry; readers see each entry until it is unlinked. */
static void nf_ila_map_flush_locked(struct nf_ila_map *map)
{
	while (atomic_read(&nf_ila_map_ht(map)->nelems))
		nf_ila_map_walk_locked(map, nf_ila_map_entry_remove);
}

/*
 * SWAP NAME NAME2: exchange the contents (entries, max-entries) of two maps
 * with one pointer store each. A packet looks the table up once: it sees
 * the old contents or the new ones, never an empty map, so a map can be
 * reloaded under traffic (fill a scratch map, swap, destroy the scratch).
 * The counters stay with the names. Refused while an entry dump walks one
 * of them.
 */
static int nf_ila_map_cmd_swap(struct sk_buff *skb, struct genl_info *info)
{
	struct nf_ila_map_net *mn = nf_ila_map_pernet(genl_info_net(info));
	struct nf_ila_map_tbl *ta, *tb;
	struct nf_ila_map *a, *b;
	int err = 0;

	if (GENL_REQ_ATTR_CHECK(info, ILA_MAP_A_NAME2))
		return -EINVAL;
	mutex_lock(&mn->lock);
	a = nf_ila_map_from_attrs(mn, info->attrs, info->extack);
	if (IS_ERR(a)) {
		err = PTR_ERR(a);
		goto out;
	}
	b = nf_ila_map_find(mn, nla_data(info->attrs[ILA_MAP_A_NAME2]));
	if (!b) {
		NL_SET_ERR_MSG_ATTR(info->extack, info->attrs[ILA_MAP_A_NAME2],
				    "no such map");
		err = -ENOENT;
		goto out;
	}
	if (a == b)
		goto out;
	if (atomic_read(&a->dumps) || atomic_read(&b->dumps)) {
		NL_SET_ERR_MSG(info->extack, "a dump of one of the maps is in progress");
		err = -EBUSY;
		goto out;
	}
	ta = nf_ila_map_tbl(a);
	tb = nf_ila_map_tbl(b);
	rcu_assign_pointer(a->tbl, tb);
	rcu_assign_pointer(b->tbl, ta);
	nf_ila_map_notify(info, ILA_MAP_CMD_SWAP, a, b->name, NULL, false);
out:
	mutex_unlock(&mn->lock);
	return err;
}

static int nf_ila_map_cmd_flush(struct sk_buff *skb, struct genl_info *info)
{
	struct nf_ila_map_net *mn = nf_ila_map_pernet(genl_info_net(info));
	struct nf_ila_map *map;
	int err = 0;

	mutex_lock(&mn->lock);
	map = nf_ila_map_from_attrs(mn, info->attrs, info->extack);
	if (IS_ERR(map))
		err = PTR_ERR(map);
	else {
		nf_ila_map_flush_locked(map);
		nf_ila_map_notify(info, ILA_MAP_CMD_FLUSH, map, NULL,
				  NULL, false);
	}
	mutex_unlock(&mn->lock);
	return err;
}

static void nf_ila_map_entry_reset(struct rhashtable *ht,
				   struct nf_ila_map_entry *e)
{
	atomic64_set(&e->hits, 0);
}

/*
 * RESET_COUNTERS NAME: the map's lookup counters and every entry's hits
 * to zero. Packets counted while it runs may survive the reset.
 */
static int nf_ila_map_cmd_reset_counters(struct sk_buff *skb,
					 struct genl_info *info)
{
	struct nf_ila_map_net *mn = nf_ila_map_pernet(genl_info_net(info));
	struct nf_ila_map *map;
	int cpu;

	mutex_lock(&mn->lock);
	map = nf_ila_map_from_attrs(mn, info->attrs, info->extack);
	if (IS_ERR(map)) {
		mutex_unlock(&mn->lock);
		return PTR_ERR(map);
	}
	for_each_possible_cpu(cpu) {
		struct nf_ila_map_pcpu *st = per_cpu_ptr(map->stats, cpu);

		WRITE_ONCE(st->hits, 0);
		WRITE_ONCE(st->misses, 0);
	}
	nf_ila_map_walk_locked(map, nf_ila_map_entry_reset);
	nf_ila_map_notify(info, ILA_MAP_CMD_RESET_COUNTERS, map, NULL,
			  NULL, false);
	mutex_unlock(&mn->lock);
	return 0;
}

/* ---- entry commands ------------------------------------------------------ */

static int nf_ila_map_cmd_newentry(struct sk_buff *skb, struct genl_info *info)
{
	struct nf_ila_map_net *mn = nf_ila_map_pernet(genl_info_net(info));
	bool replace = nla_get_flag(info->attrs[ILA_MAP_A_REPLACE]);
	struct nf_ila_map_entry *e, *old;
	struct nf_ila_map *map;
	int err;

	if (GENL_REQ_ATTR_CHECK(info, ILA_MAP_A_IDENT) ||
	    GENL_REQ_ATTR_CHECK(info, ILA_MAP_A_LOCATOR))
		return -EINVAL;

	e = kmem_cache_zalloc(nf_ila_map_cachep, GFP_KERNEL);
	if (!e)
		return -ENOMEM;
	e->ident = (__force __be64)nla_get_u64(info->attrs[ILA_MAP_A_IDENT]);
	e->locator = (__force __be64)nla_get_u64(info->attrs[ILA_MAP_A_LOCATOR]);
	e->loc_sum = ila_sum16(&e->locator, 4);
	e->csum_mode = ILA_MAP_CSUM_ADJUST_TRANSPORT;
	if (info->attrs[ILA_MAP_A_CSUM_MODE])
		e->csum_mode = nla_get_u8(info->attrs[ILA_MAP_A_CSUM_MODE]);

	mutex_lock(&mn->lock);
	map = nf_ila_map_from_attrs(mn, info->attrs, info->extack);
	if (IS_ERR(map)) {
		err = PTR_ERR(map);
		goto out_unlock;
	}
	if (replace) {
		old = rhashtable_lookup_fast(nf_ila_map_ht(map), &e->ident,
					     nf_ila_map_params);
		if (old) {
			/* without CSUM_MODE, replace keeps the entry's mode */
			if (!info->attrs[ILA_MAP_A_CSUM_MODE])
				e->csum_mode = old->csum_mode;
			/* the counter belongs to the identifier */
			atomic64_set(&e->hits, atomic64_read(&old->hits));
			err = rhashtable_replace_fast(nf_ila_map_ht(map), &old->node,
						      &e->node,
						      nf_ila_map_params);
			if (!err) {
				nf_ila_map_notify(info, ILA_MAP_CMD_NEWENTRY,
						  map, NULL, e, true);
				call_rcu(&old->rcu, nf_ila_map_entry_free_rcu);
				e = NULL;
			}
			goto out_unlock;
		}
	}
	if (atomic_read(&nf_ila_map_ht(map)->nelems) >=
	    nf_ila_map_tbl(map)->max_entries) {
		NL_SET_ERR_MSG_ATTR(info->extack, info->attrs[ILA_MAP_A_NAME],
				    "map is full (max-entries)");
		err = -ENOSPC;
		goto out_unlock;
	}
	err = rhashtable_lookup_insert_fast(nf_ila_map_ht(map), &e->node,
					    nf_ila_map_params);
	if (!err) {
		nf_ila_map_notify(info, ILA_MAP_CMD_NEWENTRY, map, NULL, e,
				  false);
		e = NULL;
	} else if (err == -EEXIST) {
		NL_SET_ERR_MSG_ATTR(info->extack, info->attrs[ILA_MAP_A_IDENT],
				    "identifier already mapped (use replace)");
	}
out_unlock:
	mutex_unlock(&mn->lock);
	if (e)
		kmem_cache_free(nf_ila_map_cachep, e);
	return err;
}

/* The entry ILA_MAP_A_IDENT of the map ILA_MAP_A_NAME; mn->lock held. */
static struct nf_ila_map_entry *
nf_ila_map_entry_from_info(struct nf_ila_map_net *mn, struct genl_info *info,
			   struct nf_ila_map **mapp)
{
	struct nf_ila_map_entry *e;
	struct nf_ila_map *map;
	__be64 ident;

	if (GENL_REQ_ATTR_CHECK(info, ILA_MAP_A_IDENT))
		return ERR_PTR(-EINVAL);
	map = nf_ila_map_from_attrs(mn, info->attrs, info->extack);
	if (IS_ERR(map))
		return ERR_CAST(map);
	ident = (__force __be64)nla_get_u64(info->attrs[ILA_MAP_A_IDENT]);
	e = rhashtable_lookup_fast(nf_ila_map_ht(map), &ident, nf_ila_map_params);
	if (!e) {
		NL_SET_ERR_MSG_ATTR(info->extack, info->attrs[ILA_MAP_A_IDENT],
				    "identifier not in map");
		return ERR_PTR(-ENOENT);
	}
	*mapp = map;
	return e;
}

static int nf_ila_map_cmd_delentry(struct sk_buff *skb, struct genl_info *info)
{
	struct nf_ila_map_net *mn = nf_ila_map_pernet(genl_info_net(info));
	struct nf_ila_map_entry *e;
	struct nf_ila_map *map;
	int err;

	mutex_lock(&mn->lock);
	e = nf_ila_map_entry_from_info(mn, info, &map);
	err = IS_ERR(e) ? PTR_ERR(e) :
	      rhashtable_remove_fast(nf_ila_map_ht(map), &e->node,
				     nf_ila_map_params);
	if (!err) {
		nf_ila_map_notify(info, ILA_MAP_CMD_DELENTRY, map, NULL,
				  e, false);
		call_rcu(&e->rcu, nf_ila_map_entry_free_rcu);
	}
	mutex_unlock(&mn->lock);
	return err;
}

static int nf_ila_map_cmd_getentry(struct sk_buff *skb, struct genl_info *info)
{
	struct nf_ila_map_net *mn = nf_ila_map_pernet(genl_info_net(info));
	struct nf_ila_map_entry *e;
	struct nf_ila_map *map;
	struct sk_buff *msg;
	int err;

	msg = genlmsg_new(NLMSG_DEFAULT_SIZE, GFP_KERNEL);
	if (!msg)
		return -ENOMEM;
	mutex_lock(&mn->lock);
	e = nf_ila_map_entry_from_info(mn, info, &map);
	err = IS_ERR(e) ? PTR_ERR(e) :
	      nf_ila_map_fill_entry(msg, info->snd_portid, info->snd_seq, 0,
				    e, map->name);
	mutex_unlock(&mn->lock);
	if (err) {
		nlmsg_free(msg);
		return err;
	}
	return genlmsg_reply(msg, info);
}

/* ---- entry dump: resumable walk over millions of entries ----------------- */

static int nf_ila_map_dump_entries_start(struct netlink_callback *cb)
{
	struct nf_ila_map_net *mn = nf_ila_map_pernet(sock_net(cb->skb->sk));
	struct nf_ila_map_dump *d;
	struct nf_ila_map *map;

	d = kzalloc(sizeof(*d), GFP_KERNEL);
	if (!d)
		return -ENOMEM;
	mutex_lock(&mn->lock);
	map = nf_ila_map_from_attrs(mn, nfilr_genl_dump_attrs(cb), cb->extack);
	if (!IS_ERR(map)) {
		refcount_inc(&map->refcnt);
		atomic_inc(&map->dumps);	/* no swap while we walk tbl */
		rhashtable_walk_enter(nf_ila_map_ht(map), &d->iter);
	}
	mutex_unlock(&mn->lock);
	if (IS_ERR(map)) {
		kfree(d);
		return PTR_ERR(map);
	}
	d->map = map;
	cb->args[0] = (long)d;
	cb->seq = 1;	/* bumped when a resize rewinds the walk */
	return 0;
}

static int nf_ila_map_dump_entries_done(struct netlink_callback *cb)
{
	struct nf_ila_map_dump *d = (struct nf_ila_map_dump *)cb->args[0];

	if (d) {
		rhashtable_walk_exit(&d->iter);
		atomic_dec(&d->map->dumps);
		nf_ila_map_release(d->map);
		kfree(d);
	}
	return 0;
}

static int nf_ila_map_dump_entries(struct sk_buff *skb,
				   struct netlink_callback *cb)
{
	struct nf_ila_map_dump *d = (struct nf_ila_map_dump *)cb->args[0];
	struct nf_ila_map_entry *e;
	unsigned int off;

	if (rhashtable_walk_start_check(&d->iter) == -EAGAIN) {
		d->pending = false;	/* rewound to the start */
		cb->seq++;
	}
	/* an entry that did not fit last time is the iterator's current one */
	e = d->pending ? rhashtable_walk_peek(&d->iter) :
			 rhashtable_walk_next(&d->iter);
	d->pending = false;
	for (; e; e = rhashtable_walk_next(&d->iter)) {
		if (IS_ERR(e)) {
			cb->seq++;	/* -EAGAIN: resized, rewound */
			continue;
		}
		off = skb->len;
		if (nf_ila_map_fill_entry(skb, NETLINK_CB(cb->skb).portid,
					  cb->nlh->nlmsg_seq, NLM_F_MULTI,
					  e, NULL)) {
			d->pending = true;
			break;
		}
		nl_dump_check_consistent(cb, (struct nlmsghdr *)(skb->data + off));
	}
	rhashtable_walk_stop(&d->iter);
	return skb->len;
}

/* ---- family -------------------------------------------------------------- */

static const struct genl_ops nf_ila_map_ops[] = {
	{
		.cmd	= ILA_MAP_CMD_NEWMAP,
		.doit	= nf_ila_map_cmd_newmap,
		.flags	= GENL_UNS_ADMIN_PERM,
	},
	{
		.cmd	= ILA_MAP_CMD_DELMAP,
		.doit	= nf_ila_map_cmd_delmap,
		.flags	= GENL_UNS_ADMIN_PERM,
	},
	{
		.cmd	= ILA_MAP_CMD_GETMAP,
		.doit	= nf_ila_map_cmd_getmap,
		.dumpit	= nf_ila_map_dump_maps,
	},
	{
		.cmd	= ILA_MAP_CMD_FLUSH,
		.doit	= nf_ila_map_cmd_flush,
		.flags	= GENL_UNS_ADMIN_PERM,
	},
	{
		.cmd	= ILA_MAP_CMD_SWAP,
		.doit	= nf_ila_map_cmd_swap,
		.flags	= GENL_UNS_ADMIN_PERM,
	},
	{
		.cmd	= ILA_MAP_CMD_RESET_COUNTERS,
		.doit	= nf_ila_map_cmd_reset_counters,
		.flags	= GENL_UNS_ADMIN_PERM,
	},
	{
		.cmd	= ILA_MAP_CMD_NEWENTRY,
		.doit	= nf_ila_map_cmd_newentry,
		.flags	= GENL_UNS_ADMIN_PERM,
	},
	{
		.cmd	= ILA_MAP_CMD_DELENTRY,
		.doit	= nf_ila_map_cmd_delentry,
		.flags	= GENL_UNS_ADMIN_PERM,
	},
	{
		.cmd	= ILA_MAP_CMD_GETENTRY,
		.doit	= nf_ila_map_cmd_getentry,
		.start	= nf_ila_map_dump_entries_start,
		.dumpit	= nf_ila_map_dump_entries,
		.done	= nf_ila_map_dump_entries_done,
	},
};

static struct genl_family nf_ila_map_family __ro_after_init = {
	.name		= ILA_MAP_GENL_NAME,
	.version	= ILA_MAP_GENL_VERSION,
	.maxattr	= ILA_MAP_A_MAX,
	.policy		= nf_ila_map_policy,
	.netnsok	= true,
	.parallel_ops	= true,
	.module		= THIS_MODULE,
	.ops		= nf_ila_map_ops,
	.n_ops		= ARRAY_SIZE(nf_ila_map_ops),
	.mcgrps		= nf_ila_map_mcgrps,
	.n_mcgrps	= ARRAY_SIZE(nf_ila_map_mcgrps),
};

/* ---- netns --------------------------------------------------------------- */

static int __net_init nf_ila_map_net_init(struct net *net)
{
	struct nf_ila_map_net *mn = nf_ila_map_pernet(net);

	mutex_init(&mn->lock);
	INIT_LIST_HEAD(&mn->maps);
	mn->count = 0;
	return 0;
}

static void __net_exit nf_ila_map_net_exit(struct net *net)
{
	struct nf_ila_map_net *mn = nf_ila_map_pernet(net);
	struct nf_ila_map *map, *tmp;

	/* rules of this netns may still hold maps: they free them on destroy */
	mutex_lock(&mn->lock);
	list_for_each_entry_safe(map, tmp, &mn->maps, list) {
		list_del(&map->list);
		nf_ila_map_release(map);
	}
	mn->count = 0;
	mutex_unlock(&mn->lock);
	mutex_destroy(&mn->lock);
}

static struct pernet_operations nf_ila_map_net_ops = {
	.init	= nf_ila_map_net_init,
	.exit	= nf_ila_map_net_exit,
	.id	= &nf_ila_map_net_id,
	.size	= sizeof(struct nf_ila_map_net),
};

static int __init nf_ila_map_init(void)
{
	int err;

	nf_ila_map_cachep = kmem_cache_create("nf_ila_map_entry",
					      sizeof(struct nf_ila_map_entry),
					      0, SLAB_ACCOUNT, NULL);
	if (!nf_ila_map_cachep)
		return -ENOMEM;
	nf_ila_map_wq = alloc_workqueue("nf_ila_map", WQ_UNBOUND, 0);
	if (!nf_ila_map_wq) {
		err = -ENOMEM;
		goto err_cache;
	}
	err = register_pernet_subsys(&nf_ila_map_net_ops);
	if (err)
		goto err_wq;
	err = genl_register_family(&nf_ila_map_family);
	if (err)
		goto err_pernet;
	return 0;

err_pernet:
	unregister_pernet_subsys(&nf_ila_map_net_ops);
err_wq:
	rcu_barrier();
	destroy_workqueue(nf_ila_map_wq);
err_cache:
	kmem_cache_destroy(nf_ila_map_cachep);
	return err;
}

static void __exit nf_ila_map_exit(void)
{
	genl_unregister_family(&nf_ila_map_family);
	unregister_pernet_subsys(&nf_ila_map_net_ops);
	rcu_barrier();			/* entry frees, queue_rcu_work */
	destroy_workqueue(nf_ila_map_wq);	/* drains map frees */
	kmem_cache_destroy(nf_ila_map_cachep);
}

module_init(nf_ila_map_init);
module_exit(nf_ila_map_exit);

MODULE_LICENSE("GPL");
MODULE_AUTHOR("nf-ila-rtcache contributors");
MODULE_DESCRIPTION("Named ILA identifier-to-locator maps for the xt_ILA target (generic netlink " ILA_MAP_GENL_NAME ")");
MODULE_ALIAS_GENL_FAMILY(ILA_MAP_GENL_NAME);
