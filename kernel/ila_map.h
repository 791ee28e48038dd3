/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * ila_map.h - ILA maps (ila_map.c) as their users see them: the -j ILA
 * --map target (xt_ILA) and the map hooks (ila_hook.c).
 *
 * A user takes a reference on a map by (netns, name) when its rule or hook
 * is created and drops it when it goes; while it holds one, the map cannot
 * be destroyed. Lookups run under rcu_read_lock() (the netfilter hook path)
 * and never take a lock. The types are here so that the lookup is inlined
 * into the packet paths (nf_ila_map_entry_find()).
 */
#ifndef _NFILR_ILA_MAP_H
#define _NFILR_ILA_MAP_H

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

#include "compat.h"

struct nf_ila_map_entry {
	struct rhash_head	node;
	__be64			ident;
	__be64			locator;
	u16			loc_sum;	/* ila_sum16(&locator, 4) */
	u8			csum_mode;	/* enum nf_ila_csum_mode */
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
 * The contents of a map, held by the map and by every entry dump walking
 * it: `map swap` exchanges two maps' tables and `map flush` puts an empty
 * table in place (one pointer store each), so packets see the old contents
 * or the new ones, never a half-changed map, and neither waits for a dump:
 * a dump goes on walking the table it started on. Freed, entries and all,
 * an RCU grace period after the last reference is dropped.
 */
struct nf_ila_map_tbl {
	struct rhashtable	ht;
	u32			max_entries;
	refcount_t		refcnt;
	struct rcu_work		free_work;
};

struct nf_ila_map {
	struct nf_ila_map_tbl __rcu	*tbl;	/* changed under the netns lock */
	struct nf_ila_map_pcpu __percpu	*stats;
	struct list_head		list;	/* nf_ila_net.maps */
	refcount_t			refcnt;	/* list + rules and hooks */
	atomic_t			users;	/* rules and hooks using the map */
	char				name[ILA_MAP_NAMSIZ];
	struct rcu_work			free_work;
	/* NOTIFY_MISS: misses to the "events" group, rate-limited */
	bool				notify_miss;
	struct ratelimit_state		miss_rs;
	possible_net_t			net;
};

/* nf_ila's parameter entry_hits: count hits per entry (default on) */
extern bool nf_ila_map_entry_hits;

/*
 * nf_ila_map_get - find the map NAME in NET and hold it for a rule or a
 * hook. Returns the map or ERR_PTR(-ENOENT). Process context, takes the
 * netns lock.
 */
struct nf_ila_map *nf_ila_map_get(struct net *net, const char *name);

/* nf_ila_map_put - drop the reference taken by nf_ila_map_get. Any context. */
void nf_ila_map_put(struct nf_ila_map *map);

/*
 * nf_ila_map_miss - count a miss of IDENT; report it to ilactl monitor
 * (once, rate-limited) when NOTIFY_MISS or the map's notify-miss asks.
 */
void nf_ila_map_miss(struct nf_ila_map *map, __be64 ident, bool notify_miss);

/* The lookup in any table (nested buckets; unknown kernels): out of line. */
struct nf_ila_map_entry *nf_ila_map_find_slow(struct rhashtable *ht,
					      __be64 ident);

/*
 * nf_ila_map_entry_find - the entry of identifier IDENT, or NULL; counts
 * nothing. rhashtable_lookup() written out so that all of it is inlined (the
 * compiler keeps the generic one out of line): hash, bucket, chain walk
 * with the key compared in place, and the same retries while a resize
 * moves entries (the chain's nulls marker, the future table). It reads
 * rhashtable internals, so compat.h enables it only for the kernel
 * versions it was checked against (NFILR_RHT_INLINE_WALK), and the
 * module's selftest (selftest=1, run by the test suite) compares it with
 * rhashtable_lookup() over random tables; elsewhere, and for a table with
 * nested buckets (only after a failed large allocation), the generic
 * lookup runs. Caller holds rcu_read_lock().
 */
static __always_inline struct nf_ila_map_entry *
nf_ila_map_entry_find(const struct nf_ila_map *map, __be64 ident)
{
	struct rhashtable *ht = &rcu_dereference(map->tbl)->ht;
#if NFILR_RHT_INLINE_WALK
	struct rhash_lock_head __rcu *const *bkt;
	const struct bucket_table *tbl;
	struct rhash_head *he;
	unsigned int hash;

	tbl = rht_dereference_rcu(ht->tbl, ht);
	do {
		if (unlikely(tbl->nest))
			return nf_ila_map_find_slow(ht, ident);
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
#else
	return nf_ila_map_find_slow(ht, ident);
#endif
}

/* nf_ila_map_hit - count a hit of entry E, found by nf_ila_map_entry_find() */
static __always_inline void nf_ila_map_hit(struct nf_ila_map *map,
					   struct nf_ila_map_entry *e)
{
	this_cpu_inc(map->stats->hits);
	if (READ_ONCE(nf_ila_map_entry_hits))
		atomic64_inc(&e->hits);
}

#endif /* _NFILR_ILA_MAP_H */
