/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * ila.h - what the files of nf_ila.ko share among themselves (not used by
 * xt_ILA, which sees ila_map.h and ila_xlat.h):
 *
 *   ila_main.c  module and per-netns state, the two generic netlink
 *               families, the one lock
 *   ila_map.c   maps (ILA_MAP): tables, entries, commands, dumps, events
 *   ila_hook.c  direct hooks (ILA_HOOK): one netfilter hook per (netns,
 *               point, priority) serving a table of named hooks
 *   ila_xlat.c  the out-of-line translation of one packet (everything the
 *               inline fast path in ila_xlat.h leaves to it)
 */
#ifndef _NFILR_ILA_H
#define _NFILR_ILA_H

#include <linux/list.h>
#include <linux/mutex.h>
#include <net/genetlink.h>
#include <net/net_namespace.h>

/*
 * Per-netns state. One mutex serialises every change to the maps and the
 * hooks of a netns (and the hooks' references on maps); packets never take
 * it. Both generic netlink families are parallel_ops: commands of
 * different netns do not wait for each other.
 */
struct nf_ila_net {
	struct mutex		lock;
	struct list_head	maps;		/* struct nf_ila_map.list */
	unsigned int		nmaps;
	struct list_head	hooks;		/* struct ila_hook.list, by name */
	unsigned int		nhooks;
	struct list_head	slots;		/* struct ila_hook_slot.list */
};

/* Per-netns limits (stated in ilactl(8)). */
/*
 * Memory a configuration request allocates (maps, tables, entries, hooks):
 * charged to the requester's memory cgroup; at the cgroup's limit the
 * request fails with -ENOMEM rather than waking the cgroup's OOM killer
 * (__GFP_NORETRY), as a netlink add should.
 */
#define NF_ILA_GFP	(GFP_KERNEL_ACCOUNT | __GFP_NORETRY | __GFP_NOWARN)

#define NF_ILA_MAX_MAPS		1024
#define NF_ILA_MAX_HOOKS	256

struct nf_ila_net *nf_ila_pernet(const struct net *net);

/* ila_map.c: family ILA_MAP (registered by ila_main.c) */
extern struct genl_family nf_ila_map_family;
int nf_ila_map_init(void);
void nf_ila_map_exit(void);
void nf_ila_map_net_exit(struct nf_ila_net *in);
struct nf_ila_map *nf_ila_map_get_locked(struct nf_ila_net *in,
					 const char *name);

/* ila_hook.c: family ILA_HOOK (registered by ila_main.c) */
extern struct genl_family nf_ila_hook_family;
void nf_ila_hook_net_pre_exit(struct net *net, struct nf_ila_net *in);
void nf_ila_hook_net_exit(struct nf_ila_net *in);

/* ila_map.c: the map selftest (module parameter selftest=1) */
int nf_ila_map_selftest(void);

#endif /* _NFILR_ILA_H */
