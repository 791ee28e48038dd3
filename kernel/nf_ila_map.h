/* SPDX-License-Identifier: GPL-2.0 */
/*
 * nf_ila_map.h - kernel API of nf_ila_map for its users (xt_ILA --map).
 *
 * A rule takes a reference on a map by (netns, name) in checkentry and drops
 * it in destroy; while it holds one, the map cannot be destroyed. Lookups run
 * under rcu_read_lock() (the netfilter hook path) and never take a lock.
 */
#ifndef _NF_ILA_MAP_H
#define _NF_ILA_MAP_H

#include <linux/types.h>
#include <linux/ila_map.h>

struct net;
struct nf_ila_map;

struct nf_ila_map_result {
	__be64	locator;
	u16	loc_sum;	/* ila_sum16(&locator, 4), kept with the entry */
	u8	csum_mode;	/* enum ila_map_csum_mode */
};

/*
 * nf_ila_map_get - find the map NAME in NET and hold it for a rule.
 * Returns the map or ERR_PTR(-ENOENT). Process context.
 */
struct nf_ila_map *nf_ila_map_get(struct net *net, const char *name);

/* nf_ila_map_put - drop the reference taken by nf_ila_map_get. */
void nf_ila_map_put(struct nf_ila_map *map);

/*
 * nf_ila_map_lookup - identifier -> locator + checksum mode.
 * Caller holds rcu_read_lock() with BH disabled (netfilter hooks do).
 * Counts a hit or a miss in the map's per-CPU counters. A miss is reported
 * to ilactl monitor (once) when NOTIFY_MISS or the map's notify-miss asks.
 */
bool nf_ila_map_lookup(struct nf_ila_map *map, __be64 ident,
		       struct nf_ila_map_result *res, bool notify_miss);

#endif /* _NF_ILA_MAP_H */
