/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * ila_hook.h - generic netlink API of nf_ila_hook: ILA / NPTv6 translation
 * in a netfilter hook of its own (no rule evaluation on the packet path),
 * per network namespace. Tool: ilactl hook add|del|list.
 *
 * Family ILA_HOOK_GENL_NAME, version ILA_HOOK_GENL_VERSION.
 *
 *   NEWHOOK NAME POINT [TRANSLATE] SRC_PFX PFX_LEN (DST_PFX [CSUM_MODE]
 *           [DIRECTION] | MAP [MISS_DROP] [DIRECTION]) [PRIORITY]
 *           [REPLACE]
 *   DELHOOK NAME
 *   GETHOOK NAME | dump      every attribute above + STATS
 *
 * Prefixes are 16-byte IPv6 addresses with the bits after PFX_LEN (1..64)
 * zero. With MAP, SRC_PFX/PFX_LEN select the addresses whose identifier is
 * looked up in the ILA map MAP of the netns (<linux/ila_map.h>); the map
 * cannot be destroyed while a hook uses it. NEWHOOK with REPLACE puts the
 * new hook in place of the existing hook NAME (ENOENT if there is none) in
 * one step: every packet meets the old hook or the new one, never neither
 * or both; the counters start from zero. Write commands need
 * CAP_NET_ADMIN in the user namespace owning the netns. Headers are
 * checked as <linux/ila_map.h> says: genlmsghdr.reserved 0, nlmsg_flags
 * only NLM_F_REQUEST, NLM_F_ACK, NLM_F_ECHO (and NLM_F_DUMP for a dump),
 * else EINVAL.
 */
#ifndef _UAPI_LINUX_ILA_HOOK_H
#define _UAPI_LINUX_ILA_HOOK_H

#include <linux/types.h>
#include <linux/nf_ila.h>

#define ILA_HOOK_GENL_NAME	"ILA_HOOK"
#define ILA_HOOK_GENL_VERSION	1

/* hook names: 1..31 characters from [A-Za-z0-9_.-], NUL-terminated */
#define ILA_HOOK_NAMSIZ		NF_ILA_NAMSIZ

enum ila_hook_cmd {
	ILA_HOOK_CMD_UNSPEC,
	ILA_HOOK_CMD_NEWHOOK,
	ILA_HOOK_CMD_DELHOOK,
	ILA_HOOK_CMD_GETHOOK,
	__ILA_HOOK_CMD_MAX,
};
#define ILA_HOOK_CMD_MAX	(__ILA_HOOK_CMD_MAX - 1)

/*
 * Multicast group of the family: after a successful NEWHOOK, a NEWHOOK
 * message describing the hook as GETHOOK does (counters zero); after a
 * successful DELHOOK, a DELHOOK message with the same attributes (counters
 * as they were); after a REPLACE, NEWHOOK with the REPLACE flag. Misses of hooks with MISS_NOTIFY go to nf_ila_map's
 * "events" group (ILA_MAP_CMD_MISS), with the other misses of the map.
 */
#define ILA_HOOK_MCGRP_EVENTS	"events"

/* where the hook runs */
enum ila_hook_point {
	ILA_HOOK_PREROUTING,	/* translate dst */
	ILA_HOOK_INPUT,		/* translate src */
	ILA_HOOK_OUTPUT,	/* translate dst */
	ILA_HOOK_POSTROUTING,	/* translate src */
	__ILA_HOOK_POINT_MAX,
};

/*
 * Default priorities: conntrack (-200 in PREROUTING and OUTPUT, confirm
 * last in POSTROUTING and INPUT) always sees the locator (wire) view of a
 * connection: dst translation runs before it, src translation after NAT
 * and filtering. rtcache sees the translated destination.
 */
#define ILA_HOOK_PRI_DST	(-250)	/* PREROUTING, OUTPUT */
#define ILA_HOOK_PRI_SRC	300	/* INPUT, POSTROUTING */

enum ila_hook_attr {
	ILA_HOOK_A_UNSPEC,
	ILA_HOOK_A_PAD,
	ILA_HOOK_A_NAME,	/* NUL string, < ILA_HOOK_NAMSIZ */
	ILA_HOOK_A_POINT,	/* u8, enum ila_hook_point */
	ILA_HOOK_A_PRIORITY,	/* s32 */
	ILA_HOOK_A_TRANSLATE,	/* u8, 0 dst, 1 src (as xt_ILA) */
	ILA_HOOK_A_SRC_PFX,	/* binary, 16 bytes */
	ILA_HOOK_A_DST_PFX,	/* binary, 16 bytes */
	ILA_HOOK_A_PFX_LEN,	/* u8, 1..64 */
	ILA_HOOK_A_CSUM_MODE,	/* u8, enum nf_ila_csum_mode */
	ILA_HOOK_A_DIRECTION,	/* u8, 0 sir2ila, 1 ila2sir (neutral-map) */
	ILA_HOOK_A_MAP,		/* NUL string: the map */
	ILA_HOOK_A_MISS_DROP,	/* flag: with MAP, drop identifiers not in it */
	ILA_HOOK_A_STATS,	/* nested ILA_HOOK_STATS_*, reply only */
	ILA_HOOK_A_MISS_NOTIFY,	/* flag: with MAP, report misses (ILA_MAP_CMD_MISS) */
	ILA_HOOK_A_REPLACE,	/* flag, NEWHOOK: replace the hook NAME atomically */
	__ILA_HOOK_A_MAX,
};
#define ILA_HOOK_A_MAX		(__ILA_HOOK_A_MAX - 1)

enum ila_hook_stats_attr {
	ILA_HOOK_STATS_UNSPEC,
	ILA_HOOK_STATS_PAD,
	ILA_HOOK_STATS_PACKETS,	/* u64: packets translated */
	ILA_HOOK_STATS_BYTES,	/* u64: their bytes */
	ILA_HOOK_STATS_MISSES,	/* u64: with MAP, identifiers not in it */
	ILA_HOOK_STATS_DROPS,	/* u64: dropped (miss drop, not translatable) */
	__ILA_HOOK_STATS_MAX,
};
#define ILA_HOOK_STATS_MAX	(__ILA_HOOK_STATS_MAX - 1)

#endif /* _UAPI_LINUX_ILA_HOOK_H */
