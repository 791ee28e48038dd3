// SPDX-License-Identifier: GPL-2.0-only
/*
 * ila_map.c - named per-netns ILA maps: identifier -> locator + checksum
 * mode, for -j ILA --map and the map hooks. Part of nf_ila.ko.
 *
 * Each network namespace has its own set of maps, created and filled over
 * the generic netlink family ILA_MAP (<linux/ila_map.h>, tool: ilactl(8)).
 * A map's contents are an rhashtable keyed by the 64-bit identifier
 * (struct nf_ila_map_tbl): lookups from the packet path are lock-free under
 * RCU and O(1) at any size; updates are serialised by the netns lock and
 * never block readers (an entry is never changed in place: replace swaps in
 * a new entry and frees the old one after a grace period).
 *
 * Lifetime: a map is referenced by its netns list and by every rule and
 * hook using it; destroying a map in use is refused with EBUSY. Its table
 * is referenced by the map and by every entry dump walking it, so `map
 * swap` and `map flush` (which puts an empty table in place) never wait for
 * a reader; the last reference frees the table, entries and all, after an
 * RCU grace period.
 *
 * Memory: maps, tables and entries are charged to the memory cgroup of the
 * task that creates them (the rhashtable's bucket arrays, allocated by
 * rhashtable itself, are not: at most 16 bytes per entry more, bounded by
 * the entries that are charged). Limits per netns: NF_ILA_MAX_MAPS maps,
 * each at most max-entries (<= ILA_MAP_LIMIT_MAX_ENTRIES) entries.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/percpu.h>
#include <linux/random.h>
#include <linux/ratelimit.h>
#include <linux/refcount.h>
#include <linux/rhashtable.h>
#include <linux/slab.h>
#include <linux/workqueue.h>
#include <net/genetlink.h>
#include <net/net_namespace.h>
#include <net/sock.h>
#include <linux/ila_map.h>

#include <common/ila_csum.h>
#include <common/ila_names.h>

#include "compat.h"
#include "ila.h"
#include "ila_map.h"

/* struct nf_ila_map and its entries: ila_map.h (users inline lookups) */

struct nf_ila_map_dump {
	struct rhashtable_iter	iter;
	struct nf_ila_map_tbl	*tbl;		/* held: the table walked */
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
	/*
	 * An empty map starts with 4 buckets, not rhashtable's 64: the bucket
	 * arrays are rhashtable's own uncharged allocations, and a netns may
	 * hold 1024 maps.
	 */
	.nelem_hint		= 3,
};

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

/*
 * The table of a map for a writer: every change of map->tbl (swap, flush)
 * and of its contents happens under the netns lock, which callers hold (or
 * the map is unreachable: being freed).
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

/* A new empty table; process context, charged to the caller's memcg. */
static struct nf_ila_map_tbl *nf_ila_map_tbl_new(u32 max_entries)
{
	struct nf_ila_map_tbl *t;

	t = kzalloc(sizeof(*t), NF_ILA_GFP);
	if (!t)
		return NULL;
	if (rhashtable_init(&t->ht, &nf_ila_map_params)) {
		kfree(t);
		return NULL;
	}
	t->max_entries = max_entries;
	refcount_set(&t->refcnt, 1);
	return t;
}

static void nf_ila_map_tbl_free(struct nf_ila_map_tbl *t)
{
	rhashtable_free_and_destroy(&t->ht, nf_ila_map_entry_free, NULL);
	kfree(t);
}

static void nf_ila_map_tbl_free_work(struct work_struct *work)
{
	nf_ila_map_tbl_free(container_of(to_rcu_work(work),
					 struct nf_ila_map_tbl, free_work));
}

/*
 * Drop a reference on a table no map holds any more (swapped out, flushed,
 * or walked by a dump). The last one frees it, entries and all, in one
 * walk after an RCU grace period (packets that found it before it left its
 * map may still be looking entries up): no callback per entry.
 */
static void nf_ila_map_tbl_put(struct nf_ila_map_tbl *t)
{
	if (!refcount_dec_and_test(&t->refcnt))
		return;
	INIT_RCU_WORK(&t->free_work, nf_ila_map_tbl_free_work);
	queue_rcu_work(nf_ila_map_wq, &t->free_work);
}

static void nf_ila_map_free_work(struct work_struct *work)
{
	struct nf_ila_map *map = container_of(to_rcu_work(work),
					      struct nf_ila_map, free_work);
	struct nf_ila_map_tbl *t = nf_ila_map_tbl(map);

	/*
	 * A grace period has passed since the map, the last way packets found
	 * its table, went: unless a dump holds the table, free it now.
	 */
	if (refcount_dec_and_test(&t->refcnt))
		nf_ila_map_tbl_free(t);
	free_percpu(map->stats);
	kfree(map);
}

static void nf_ila_map_release(struct nf_ila_map *map)
{
	if (!refcount_dec_and_test(&map->refcnt))
		return;
	/* packets may still use it (its counters): free after a grace period */
	INIT_RCU_WORK(&map->free_work, nf_ila_map_free_work);
	queue_rcu_work(nf_ila_map_wq, &map->free_work);
}

static struct nf_ila_map *nf_ila_map_find(struct nf_ila_net *in,
					  const char *name)
{
	struct nf_ila_map *map;

	lockdep_assert_held(&in->lock);
	list_for_each_entry(map, &in->maps, list)
		if (!strcmp(map->name, name))
			return map;
	return NULL;
}

/* ---- API for rules and hooks ---------------------------------------------- */

struct nf_ila_map *nf_ila_map_get_locked(struct nf_ila_net *in,
					 const char *name)
{
	struct nf_ila_map *map = nf_ila_map_find(in, name);

	if (!map)
		return ERR_PTR(-ENOENT);
	refcount_inc(&map->refcnt);
	atomic_inc(&map->users);
	return map;
}

struct nf_ila_map *nf_ila_map_get(struct net *net, const char *name)
{
	struct nf_ila_net *in = nf_ila_pernet(net);
	struct nf_ila_map *map;

	mutex_lock(&in->lock);
	map = nf_ila_map_get_locked(in, name);
	mutex_unlock(&in->lock);
	return map;
}
EXPORT_SYMBOL_GPL(nf_ila_map_get);

void nf_ila_map_put(struct nf_ila_map *map)
{
	atomic_dec(&map->users);
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

struct nf_ila_map_entry *nf_ila_map_find_slow(struct rhashtable *ht,
					      __be64 ident)
{
	return rhashtable_lookup(ht, &ident, nf_ila_map_params);
}
EXPORT_SYMBOL_GPL(nf_ila_map_find_slow);

/* ---- netlink helpers ----------------------------------------------------- */

/*
 * Listeners need CAP_NET_ADMIN in the netns's user namespace: MISS events
 * tell which identifiers are in use, changes what the maps hold.
 */
static const struct genl_multicast_group nf_ila_map_mcgrps[] = {
	{ .name = ILA_MAP_MCGRP_EVENTS, .flags = GENL_MCAST_CAP_NET_ADMIN },
};

/*
 * Tell the "events" group (ilactl monitor) what a successful command
 * changed, as the command itself: cmd, the map's name (NEWMAP: and how it
 * was created), NAME2 of a swap, the entry written or removed (REPLACE when
 * an entry was replaced). Called under in->lock; builds nothing while no
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
	[ILA_MAP_A_CSUM_MODE]	= NLA_POLICY_MAX(NLA_U8, NF_ILA_CSUM_MAX),
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

/* Map named by ILA_MAP_A_NAME, or an ERR_PTR with the reason in extack. */
static struct nf_ila_map *nf_ila_map_from_attrs(struct nf_ila_net *in,
						struct nlattr **attrs,
						struct netlink_ext_ack *extack)
{
	struct nf_ila_map *map;

	if (NL_REQ_ATTR_CHECK(extack, NULL, attrs, ILA_MAP_A_NAME))
		return ERR_PTR(-EINVAL);
	map = nf_ila_map_find(in, nla_data(attrs[ILA_MAP_A_NAME]));
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
	    nla_put_u32(skb, ILA_MAP_A_RULES, atomic_read(&map->users)) ||
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
	struct nf_ila_net *in = nf_ila_pernet(genl_info_net(info));
	struct nlattr *name_attr = info->attrs[ILA_MAP_A_NAME];
	struct nf_ila_map_tbl *tbl;
	struct nf_ila_map *map;
	int err;

	if (GENL_REQ_ATTR_CHECK(info, ILA_MAP_A_NAME))
		return -EINVAL;
	if (!ila_name_ok(nla_data(name_attr))) {
		NL_SET_ERR_MSG_ATTR(info->extack, name_attr,
				    "map name: use " ILA_NAME_RULE);
		return -EINVAL;
	}

	map = kzalloc(sizeof(*map), NF_ILA_GFP);
	if (!map)
		return -ENOMEM;
	map->stats = alloc_percpu_gfp(struct nf_ila_map_pcpu, NF_ILA_GFP);
	if (!map->stats) {
		err = -ENOMEM;
		goto err_free_map;
	}
	tbl = nf_ila_map_tbl_new(info->attrs[ILA_MAP_A_MAX_ENTRIES] ?
				 nla_get_u32(info->attrs[ILA_MAP_A_MAX_ENTRIES]) :
				 ILA_MAP_DEFAULT_MAX_ENTRIES);
	if (!tbl) {
		err = -ENOMEM;
		goto err_free_stats;
	}
	RCU_INIT_POINTER(map->tbl, tbl);
	nla_strscpy(map->name, name_attr, sizeof(map->name));
	refcount_set(&map->refcnt, 1);
	map->notify_miss = nla_get_flag(info->attrs[ILA_MAP_A_NOTIFY_MISS]);
	ratelimit_state_init(&map->miss_rs, HZ, 100);
	/* no "callbacks suppressed" lines in the kernel log */
	ratelimit_set_flags(&map->miss_rs, RATELIMIT_MSG_ON_RELEASE);
	write_pnet(&map->net, genl_info_net(info));

	mutex_lock(&in->lock);
	if (nf_ila_map_find(in, map->name)) {
		NL_SET_ERR_MSG_ATTR(info->extack, name_attr, "map exists");
		err = -EEXIST;
		goto err_unlock;
	}
	if (in->nmaps >= NF_ILA_MAX_MAPS) {
		NL_SET_ERR_MSG(info->extack, "too many maps in this netns");
		err = -ENOSPC;
		goto err_unlock;
	}
	list_add_tail(&map->list, &in->maps);
	in->nmaps++;
	nf_ila_map_notify(info, ILA_MAP_CMD_NEWMAP, map, NULL, NULL, false);
	mutex_unlock(&in->lock);
	return 0;

err_unlock:
	mutex_unlock(&in->lock);
	rhashtable_destroy(&tbl->ht);
	kfree(tbl);	/* never published */
err_free_stats:
	free_percpu(map->stats);
err_free_map:
	kfree(map);
	return err;
}

static int nf_ila_map_cmd_delmap(struct sk_buff *skb, struct genl_info *info)
{
	struct nf_ila_net *in = nf_ila_pernet(genl_info_net(info));
	struct nf_ila_map *map;
	int err = 0;

	mutex_lock(&in->lock);
	map = nf_ila_map_from_attrs(in, info->attrs, info->extack);
	if (IS_ERR(map)) {
		err = PTR_ERR(map);
	} else if (atomic_read(&map->users)) {
		NL_SET_ERR_MSG_ATTR(info->extack, info->attrs[ILA_MAP_A_NAME],
				    "map is in use by ip6tables rules or ilactl hooks");
		err = -EBUSY;
	} else {
		nf_ila_map_notify(info, ILA_MAP_CMD_DELMAP, map, NULL,
				  NULL, false);
		list_del(&map->list);
		in->nmaps--;
		nf_ila_map_release(map);
	}
	mutex_unlock(&in->lock);
	return err;
}

static int nf_ila_map_cmd_getmap(struct sk_buff *skb, struct genl_info *info)
{
	struct nf_ila_net *in = nf_ila_pernet(genl_info_net(info));
	struct nf_ila_map *map;
	struct sk_buff *msg;
	int err;

	msg = genlmsg_new(NLMSG_DEFAULT_SIZE, GFP_KERNEL);
	if (!msg)
		return -ENOMEM;
	mutex_lock(&in->lock);
	map = nf_ila_map_from_attrs(in, info->attrs, info->extack);
	err = IS_ERR(map) ? PTR_ERR(map) :
	      nf_ila_map_fill_map(msg, info->snd_portid, info->snd_seq, 0, map);
	mutex_unlock(&in->lock);
	if (err) {
		nlmsg_free(msg);
		return err;
	}
	return genlmsg_reply(msg, info);
}

static int nf_ila_map_dump_maps(struct sk_buff *skb, struct netlink_callback *cb)
{
	struct nf_ila_net *in = nf_ila_pernet(sock_net(skb->sk));
	struct nf_ila_map *map;
	long idx = 0, skip = cb->args[0];

	mutex_lock(&in->lock);
	list_for_each_entry(map, &in->maps, list) {
		if (idx++ < skip)
			continue;
		if (nf_ila_map_fill_map(skb, NETLINK_CB(cb->skb).portid,
					cb->nlh->nlmsg_seq, NLM_F_MULTI, map)) {
			idx--;
			break;
		}
	}
	mutex_unlock(&in->lock);
	cb->args[0] = idx;
	return skb->len;
}

/*
 * Call fn on every entry of map's table (in->lock held), rescheduling now
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

/*
 * SWAP NAME NAME2: exchange the contents (entries, max-entries) of two maps
 * with one pointer store each. A packet looks the table up once: it sees
 * the old contents or the new ones, never an empty map, so a map can be
 * reloaded under traffic (fill a scratch map, swap, destroy the scratch).
 * The counters stay with the names. Entry dumps in progress go on walking
 * the table they started on.
 */
static int nf_ila_map_cmd_swap(struct sk_buff *skb, struct genl_info *info)
{
	struct nf_ila_net *in = nf_ila_pernet(genl_info_net(info));
	struct nf_ila_map_tbl *ta, *tb;
	struct nf_ila_map *a, *b;
	int err = 0;

	if (GENL_REQ_ATTR_CHECK(info, ILA_MAP_A_NAME2))
		return -EINVAL;
	mutex_lock(&in->lock);
	a = nf_ila_map_from_attrs(in, info->attrs, info->extack);
	if (IS_ERR(a)) {
		err = PTR_ERR(a);
		goto out;
	}
	b = nf_ila_map_find(in, nla_data(info->attrs[ILA_MAP_A_NAME2]));
	if (!b) {
		NL_SET_ERR_MSG_ATTR(info->extack, info->attrs[ILA_MAP_A_NAME2],
				    "no such map");
		err = -ENOENT;
		goto out;
	}
	if (a == b)
		goto out;
	ta = nf_ila_map_tbl(a);
	tb = nf_ila_map_tbl(b);
	rcu_assign_pointer(a->tbl, tb);
	rcu_assign_pointer(b->tbl, ta);
	nf_ila_map_notify(info, ILA_MAP_CMD_SWAP, a, b->name, NULL, false);
out:
	mutex_unlock(&in->lock);
	return err;
}

/*
 * FLUSH NAME: an empty table (same max-entries) takes the place of the
 * map's, as a swap does; the old one is freed as a whole once no packet
 * and no dump uses it.
 */
static int nf_ila_map_cmd_flush(struct sk_buff *skb, struct genl_info *info)
{
	struct nf_ila_net *in = nf_ila_pernet(genl_info_net(info));
	struct nf_ila_map_tbl *old, *empty;
	struct nf_ila_map *map;
	int err = 0;

	mutex_lock(&in->lock);
	map = nf_ila_map_from_attrs(in, info->attrs, info->extack);
	if (IS_ERR(map)) {
		err = PTR_ERR(map);
		goto out;
	}
	old = nf_ila_map_tbl(map);
	empty = nf_ila_map_tbl_new(old->max_entries);
	if (!empty) {
		err = -ENOMEM;
		goto out;
	}
	rcu_assign_pointer(map->tbl, empty);
	nf_ila_map_tbl_put(old);
	nf_ila_map_notify(info, ILA_MAP_CMD_FLUSH, map, NULL, NULL, false);
out:
	mutex_unlock(&in->lock);
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
	struct nf_ila_net *in = nf_ila_pernet(genl_info_net(info));
	struct nf_ila_map *map;
	int cpu;

	mutex_lock(&in->lock);
	map = nf_ila_map_from_attrs(in, info->attrs, info->extack);
	if (IS_ERR(map)) {
		mutex_unlock(&in->lock);
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
	mutex_unlock(&in->lock);
	return 0;
}

/* ---- entry commands ------------------------------------------------------ */

static int nf_ila_map_cmd_newentry(struct sk_buff *skb, struct genl_info *info)
{
	struct nf_ila_net *in = nf_ila_pernet(genl_info_net(info));
	bool replace = nla_get_flag(info->attrs[ILA_MAP_A_REPLACE]);
	struct nf_ila_map_entry *e, *old;
	struct nf_ila_map *map;
	int err;

	if (GENL_REQ_ATTR_CHECK(info, ILA_MAP_A_IDENT) ||
	    GENL_REQ_ATTR_CHECK(info, ILA_MAP_A_LOCATOR))
		return -EINVAL;

	e = kmem_cache_zalloc(nf_ila_map_cachep, NF_ILA_GFP);
	if (!e)
		return -ENOMEM;
	e->ident = (__force __be64)nla_get_u64(info->attrs[ILA_MAP_A_IDENT]);
	e->locator = (__force __be64)nla_get_u64(info->attrs[ILA_MAP_A_LOCATOR]);
	e->loc_sum = ila_sum16(&e->locator, 4);
	e->csum_mode = NF_ILA_CSUM_ADJUST_TRANSPORT;
	if (info->attrs[ILA_MAP_A_CSUM_MODE])
		e->csum_mode = nla_get_u8(info->attrs[ILA_MAP_A_CSUM_MODE]);

	mutex_lock(&in->lock);
	map = nf_ila_map_from_attrs(in, info->attrs, info->extack);
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
	mutex_unlock(&in->lock);
	if (e)
		kmem_cache_free(nf_ila_map_cachep, e);
	return err;
}

/* The entry ILA_MAP_A_IDENT of the map ILA_MAP_A_NAME; in->lock held. */
static struct nf_ila_map_entry *
nf_ila_map_entry_from_info(struct nf_ila_net *in, struct genl_info *info,
			   struct nf_ila_map **mapp)
{
	struct nf_ila_map_entry *e;
	struct nf_ila_map *map;
	__be64 ident;

	if (GENL_REQ_ATTR_CHECK(info, ILA_MAP_A_IDENT))
		return ERR_PTR(-EINVAL);
	map = nf_ila_map_from_attrs(in, info->attrs, info->extack);
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
	struct nf_ila_net *in = nf_ila_pernet(genl_info_net(info));
	struct nf_ila_map_entry *e;
	struct nf_ila_map *map;
	int err;

	mutex_lock(&in->lock);
	e = nf_ila_map_entry_from_info(in, info, &map);
	err = IS_ERR(e) ? PTR_ERR(e) :
	      rhashtable_remove_fast(nf_ila_map_ht(map), &e->node,
				     nf_ila_map_params);
	if (!err) {
		nf_ila_map_notify(info, ILA_MAP_CMD_DELENTRY, map, NULL,
				  e, false);
		call_rcu(&e->rcu, nf_ila_map_entry_free_rcu);
	}
	mutex_unlock(&in->lock);
	return err;
}

static int nf_ila_map_cmd_getentry(struct sk_buff *skb, struct genl_info *info)
{
	struct nf_ila_net *in = nf_ila_pernet(genl_info_net(info));
	struct nf_ila_map_entry *e;
	struct nf_ila_map *map;
	struct sk_buff *msg;
	int err;

	msg = genlmsg_new(NLMSG_DEFAULT_SIZE, GFP_KERNEL);
	if (!msg)
		return -ENOMEM;
	mutex_lock(&in->lock);
	e = nf_ila_map_entry_from_info(in, info, &map);
	err = IS_ERR(e) ? PTR_ERR(e) :
	      nf_ila_map_fill_entry(msg, info->snd_portid, info->snd_seq, 0,
				    e, map->name);
	mutex_unlock(&in->lock);
	if (err) {
		nlmsg_free(msg);
		return err;
	}
	return genlmsg_reply(msg, info);
}

/* ---- entry dump: resumable walk over millions of entries ----------------- */

/*
 * The dump holds the table it starts on, not the map: a swap or flush of
 * the map goes ahead, and the dump walks what the map held when it began.
 */
static int nf_ila_map_dump_entries_start(struct netlink_callback *cb)
{
	struct nf_ila_net *in = nf_ila_pernet(sock_net(cb->skb->sk));
	struct nf_ila_map_tbl *tbl = NULL;
	struct nf_ila_map_dump *d;
	struct nf_ila_map *map;

	d = kzalloc(sizeof(*d), NF_ILA_GFP);
	if (!d)
		return -ENOMEM;
	mutex_lock(&in->lock);
	map = nf_ila_map_from_attrs(in, nfilr_genl_dump_attrs(cb), cb->extack);
	if (!IS_ERR(map)) {
		tbl = nf_ila_map_tbl(map);
		refcount_inc(&tbl->refcnt);
		rhashtable_walk_enter(&tbl->ht, &d->iter);
	}
	mutex_unlock(&in->lock);
	if (IS_ERR(map)) {
		kfree(d);
		return PTR_ERR(map);
	}
	d->tbl = tbl;
	cb->args[0] = (long)d;
	cb->seq = 1;	/* bumped when a resize rewinds the walk */
	return 0;
}

static int nf_ila_map_dump_entries_done(struct netlink_callback *cb)
{
	struct nf_ila_map_dump *d = (struct nf_ila_map_dump *)cb->args[0];

	if (d) {
		rhashtable_walk_exit(&d->iter);
		nf_ila_map_tbl_put(d->tbl);
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

/* ---- selftest ------------------------------------------------------------ */

/*
 * nf_ila_map_selftest - the inline lookup (nf_ila_map_entry_find()) against
 * rhashtable_lookup() on tables of growing size, probed right after each
 * batch of inserts (so that some probes meet a resize in progress: the
 * future table), with identifiers present and absent. Run at module load
 * with selftest=1 (the test suite does); -EINVAL on any disagreement.
 */
int nf_ila_map_selftest(void)
{
	static const unsigned int sizes[] = { 1, 5, 64, 700, 5000, 30000 };
	unsigned int i, n = 0, probes = 0, bad = 0;
	struct nf_ila_map_tbl *tbl;
	struct nf_ila_map *map;
	__be64 *known;
	int err = 0;

	map = kzalloc(sizeof(*map), GFP_KERNEL);
	known = kvmalloc_array(sizes[ARRAY_SIZE(sizes) - 1], sizeof(*known),
			       GFP_KERNEL);
	tbl = nf_ila_map_tbl_new(U32_MAX);
	if (!map || !known || !tbl) {
		err = -ENOMEM;
		goto out;
	}
	RCU_INIT_POINTER(map->tbl, tbl);
	for (i = 0; i < ARRAY_SIZE(sizes); i++) {
		unsigned int p;

		for (; n < sizes[i]; n++) {
			struct nf_ila_map_entry *e;

			e = kmem_cache_zalloc(nf_ila_map_cachep, GFP_KERNEL);
			if (!e) {
				err = -ENOMEM;
				goto out;
			}
			e->ident = (__force __be64)get_random_u64();
			if (rhashtable_lookup_insert_fast(&tbl->ht, &e->node,
							  nf_ila_map_params)) {
				kmem_cache_free(nf_ila_map_cachep, e);
				n--;	/* a duplicate: draw again */
				continue;
			}
			known[n] = e->ident;
		}
		rcu_read_lock();
		for (p = 0; p < 4 * n + 64; p++) {
			__be64 id = p & 1 ? known[get_random_u32() % n] :
				    (__force __be64)get_random_u64();

			if (nf_ila_map_entry_find(map, id) !=
			    rhashtable_lookup(&tbl->ht, &id, nf_ila_map_params))
				bad++;
			probes++;
		}
		rcu_read_unlock();
		cond_resched();
	}
	if (bad) {
		pr_err("selftest: the inline map lookup disagrees with rhashtable_lookup() in %u of %u lookups: this kernel's rhashtable differs (see NFILR_RHT_INLINE_WALK in compat.h)\n",
		       bad, probes);
		err = -EINVAL;
	} else {
		pr_info("selftest: the inline map lookup agrees with rhashtable_lookup() in %u lookups, tables of 1 to %u entries\n",
			probes, n);
	}
out:
	if (tbl)
		rhashtable_free_and_destroy(&tbl->ht, nf_ila_map_entry_free, NULL);
	kfree(tbl);
	kvfree(known);
	kfree(map);
	return err;
}

/* ---- family ---------------------------------------------------------------- */

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
		/* names, sizes and counters: open, as route dumps are */
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
		/*
		 * Entries (which identifier is where) and their dumps, which
		 * walk millions of entries: CAP_NET_ADMIN, as for ipset and
		 * nft set listings.
		 */
		.cmd	= ILA_MAP_CMD_GETENTRY,
		.doit	= nf_ila_map_cmd_getentry,
		.start	= nf_ila_map_dump_entries_start,
		.dumpit	= nf_ila_map_dump_entries,
		.done	= nf_ila_map_dump_entries_done,
		.flags	= GENL_UNS_ADMIN_PERM,
	},
};

struct genl_family nf_ila_map_family __ro_after_init = {
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

/* ---- netns and module ---------------------------------------------------- */

/* The netns is going: its maps leave the list (rules still using one free it). */
void nf_ila_map_net_exit(struct nf_ila_net *in)
{
	struct nf_ila_map *map, *tmp;

	lockdep_assert_held(&in->lock);
	list_for_each_entry_safe(map, tmp, &in->maps, list) {
		list_del(&map->list);
		nf_ila_map_release(map);
	}
	in->nmaps = 0;
}

int nf_ila_map_init(void)
{
	nf_ila_map_cachep = kmem_cache_create("nf_ila_map_entry",
					      sizeof(struct nf_ila_map_entry),
					      0, SLAB_ACCOUNT, NULL);
	if (!nf_ila_map_cachep)
		return -ENOMEM;
	nf_ila_map_wq = alloc_workqueue("nf_ila_map", WQ_UNBOUND, 0);
	if (!nf_ila_map_wq) {
		kmem_cache_destroy(nf_ila_map_cachep);
		return -ENOMEM;
	}
	return 0;
}

/* After every netns is gone: the frees they queued, then the caches. */
void nf_ila_map_exit(void)
{
	rcu_barrier();			/* entry frees, queue_rcu_work */
	destroy_workqueue(nf_ila_map_wq);	/* drains table and map frees */
	kmem_cache_destroy(nf_ila_map_cachep);
}
