/* SPDX-License-Identifier: GPL-2.0 */
/*
 * nf_ila_map.h - kernel API of nf_ila_map for its users (xt_ILA --map,
 * nf_ila_hook).
 *
 * A user takes a reference on a map by (netns, name) when its rule or hook
 * is created and drops it when it goes; while it holds one, the map cannot
 * be destroyed. Lookups run under rcu_read_lock() (the netfilter hook path)
 * and never take a lock. The map and its entries are defined here so the
 * lookup is inlined into the users' packet paths (nf_ila_map_entry_find;
 * nf_ila_map_lookup adds the counting).
 */
#ifndef _NF_ILA_MAP_H
#define _NF_ILA_MAP_H

#include <linux/types.h>
#include <linux/atomic.h>
#include <linux/list.h>
#include <linux/percpu.h>
#include <linux/ratelimit.h>
#include <linux/refcount.h>
#include <linux/rhashtable.h>
#include <linux/workqueue.h>
#include <net/net_namespace.h>
#include <linux/ila_map.h>

#include <common/ila_map_hash.h>

struct nf_ila_map_entry {
	struct rhash_head	node;
	__be64			ident;
	__be64			locator;
	u16			loc_sum;	/* ila_sum16(&locator, 4) */
	u8			csum_mode;
	/*
	 * Packets that hit the entry. One shared counter (a per-CPU one per
	 * entry would cost more memory than the entry): exact, and cheap while
	 * an identifier's packets come in on one CPU, as RSS keeps a flow.
	 */
	atomic64_t		hits;
	struct rcu_head		rcu;
};

/*
 * Per-CPU packet counters, bumped with this_cpu_inc(): safe from softirq
 * (PREROUTING) and from process context with preemption enabled (OUTPUT
 * under nft_compat) alike. Readers sum them; lookups = hits + misses.
 */
struct nf_ila_map_pcpu {
	u64	hits;
	u64	misses;
};

/*
 * The contents of a map: what `ilactl map swap` exchanges between two maps
 * (one pointer store each), so rules and hooks that hold a map see the
 * other contents from the next packet on, with no window of misses.
 */
struct nf_ila_map_tbl {
	struct rhashtable		ht;
	u32				max_entries;
};

struct nf_ila_map {
	struct nf_ila_map_tbl __rcu	*tbl;	/* changed under mn->lock */
	struct nf_ila_map_pcpu __percpu	*stats;
	struct list_head		list;	/* nf_ila_map_net.maps */
	refcount_t			refcnt;	/* list + rules + dumps */
	atomic_t			rules;	/* rules using the map */
	atomic_t			dumps;	/* entry dumps walking tbl */
	char				name[ILA_MAP_NAMSIZ];
	struct rcu_work			free_work;
	/* NOTIFY_MISS: misses to the "events" group, rate-limited */
	bool				notify_miss;
	struct ratelimit_state		miss_rs;
	possible_net_t			net;
};

/* nf_ila_map's parameter entry_hits: count hits per entry (default on) */
extern bool nf_ila_map_entry_hits;

/*
 * nf_ila_map_get - find the map NAME in NET and hold it for a rule.
 * Returns the map or ERR_PTR(-ENOENT). Process context.
 */
struct nf_ila_map *nf_ila_map_get(struct net *net, const char *name);

/* nf_ila_map_put - drop the reference taken by nf_ila_map_get. */
void nf_ila_map_put(struct nf_ila_map *map);

/*
 * nf_ila_map_miss - count a miss of IDENT; report it to ilactl monitor
 * (once, rate-limited) when NOTIFY_MISS or the map's notify-miss asks.
 */
void nf_ila_map_miss(struct nf_ila_map *map, __be64 ident, bool notify_miss);

/* nf_ila_map_entry_find() in a table with nested buckets: out of line */
struct nf_ila_map_entry *nf_ila_map_find_nested(struct rhashtable *ht,
						__be64 ident);

/*
 * nf_ila_map_entry_find - the entry of identifier IDENT, or NULL; counts
 * nothing. rhashtable_lookup() written out so that all of it is inlined (the
 * compiler keeps the generic one out of line): hash, bucket, chain walk
 * with the key compared in place, and the same retries while a resize
 * moves entries (the chain's nulls marker, the future table). A table
 * with nested buckets (only after a failed large allocation) takes the
 * generic lookup. Caller holds rcu_read_lock().
 */
static __always_inline struct nf_ila_map_entry *
nf_ila_map_entry_find(const struct nf_ila_map *map, __be64 ident)
{
	struct rhashtable *ht = &rcu_dereference(map->tbl)->ht;
	struct rhash_lock_head __rcu *const *bkt;
	const struct bucket_table *tbl;
	struct rhash_head *he;
	unsigned int hash;

	tbl = rht_dereference_rcu(ht->tbl, ht);
	do {
		if (unlikely(tbl->nest))
			return nf_ila_map_find_nested(ht, ident);
		/* rht_key_hashfn() (not inlined by the compiler) */
		hash = ila_map_hash64((__force u64)ident, tbl->hash_rnd) &
		       (tbl->size - 1);
		bkt = &tbl->buckets[hash];
		do {
			rht_for_each_rcu_from(he, rht_ptr_rcu(bkt), tbl, hash) {
				struct nf_ila_map_entry *e =
					container_of(he, struct nf_ila_map_entry, node);

				if (e->ident == ident)
					return e;
			}
		} while (he != RHT_NULLS_MARKER(bkt));
		smp_rmb();	/* see any new table */
		tbl = rht_dereference_rcu(tbl->future_tbl, ht);
	} while (unlikely(tbl));
	return NULL;
}

/* nf_ila_map_hit - count a hit of entry E, found by nf_ila_map_entry_find() */
static __always_inline void nf_ila_map_hit(struct nf_ila_map *map,
					   struct nf_ila_map_entry *e)
{
	this_cpu_inc(map->stats->hits);
	if (READ_ONCE(nf_ila_map_entry_hits))
		atomic64_inc(&e->hits);
}

/*
 * nf_ila_map_lookup - the entry of identifier IDENT, or NULL (a miss, counted
 * and reported as nf_ila_map_miss does). Counts a hit in the map's per-CPU
 * counters and the entry's. Caller holds rcu_read_lock() with BH disabled
 * (netfilter hooks do); the entry is valid until it drops it.
 */
static __always_inline const struct nf_ila_map_entry *
nf_ila_map_lookup(struct nf_ila_map *map, __be64 ident, bool notify_miss)
{
	struct nf_ila_map_entry *e = nf_ila_map_entry_find(map, ident);

	if (unlikely(!e)) {
		nf_ila_map_miss(map, ident, notify_miss);
		return NULL;
	}
	nf_ila_map_hit(map, e);
	return e;
}

#endif /* _NF_ILA_MAP_H */
