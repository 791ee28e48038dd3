/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * ila_map.h - generic netlink API of nf_ila_map: named, per-netns ILA maps
 * from identifier (low 64 bits of an IPv6 address) to locator (high 64 bits)
 * and checksum mode, used by "ip6tables -j ILA --map NAME".
 *
 * Family ILA_MAP_GENL_NAME, version ILA_MAP_GENL_VERSION. Every command takes
 * ILA_MAP_A_NAME. Identifier and locator are NLA_U64 attributes whose 8 bytes
 * are the address half in network byte order (as in <linux/ila.h>).
 *
 *   NEWMAP   NAME [MAX_ENTRIES]                   create a map
 *   DELMAP   NAME                                 destroy (EBUSY while a rule uses it)
 *   GETMAP   NAME | dump                          NAME ENTRIES MAX_ENTRIES RULES STATS
 *   FLUSH    NAME                                 delete every entry
 *   NEWENTRY NAME IDENT LOCATOR [CSUM_MODE] [REPLACE]
 *                                                add; with REPLACE: add or replace
 *   DELENTRY NAME IDENT
 *   GETENTRY NAME IDENT | NAME + NLM_F_DUMP       IDENT LOCATOR CSUM_MODE
 *   SWAP     NAME NAME2                           exchange the two maps' entries
 *                                                 and max-entries atomically
 *
 * Headers are checked strictly: genlmsghdr.reserved must be 0 and
 * nlmsg_flags may only hold NLM_F_REQUEST, NLM_F_ACK, NLM_F_ECHO, and
 * NLM_F_DUMP for a dump; a request with another flag (NLM_F_CREATE,
 * NLM_F_EXCL, NLM_F_REPLACE: a replace is ILA_MAP_A_REPLACE) is refused
 * with EINVAL (the generic netlink core checks both, as for every family
 * since 6.0).
 * Write commands and entry reads (GETENTRY, its dumps) need CAP_NET_ADMIN in
 * the user namespace owning the netns; the map list and counters are open,
 * as route dumps are. Dumps may be marked
 * NLM_F_DUMP_INTR when the table was resized under them; repeat them then.
 */
#ifndef _UAPI_LINUX_ILA_MAP_H
#define _UAPI_LINUX_ILA_MAP_H

#include <linux/types.h>
#include <linux/nf_ila.h>

#define ILA_MAP_GENL_NAME	"ILA_MAP"
#define ILA_MAP_GENL_VERSION	1

/*
 * Multicast group of the family: every successful change (NEWMAP, DELMAP,
 * FLUSH, SWAP, NEWENTRY with REPLACE when it replaced, DELENTRY,
 * RESET_COUNTERS) is sent to it as the command, with the map's NAME (and
 * NAME2, IDENT, LOCATOR, CSUM_MODE as they apply; NEWMAP with MAX_ENTRIES
 * and NOTIFY_MISS as created, so that a replay makes the same map); for a
 * map created with
 * NOTIFY_MISS, a MISS (NAME, IDENT) for an identifier a packet did not
 * find, at most 100 a second per map.
 */
#define ILA_MAP_MCGRP_EVENTS	"events"

/* map names: 1..31 characters from [A-Za-z0-9_.-], NUL-terminated */
#define ILA_MAP_NAMSIZ		NF_ILA_NAMSIZ

/* default and largest ILA_MAP_A_MAX_ENTRIES */
#define ILA_MAP_DEFAULT_MAX_ENTRIES	(1U << 24)
#define ILA_MAP_LIMIT_MAX_ENTRIES	(1U << 28)

enum ila_map_cmd {
	ILA_MAP_CMD_UNSPEC,
	ILA_MAP_CMD_NEWMAP,
	ILA_MAP_CMD_DELMAP,
	ILA_MAP_CMD_GETMAP,
	ILA_MAP_CMD_FLUSH,
	ILA_MAP_CMD_NEWENTRY,
	ILA_MAP_CMD_DELENTRY,
	ILA_MAP_CMD_GETENTRY,
	ILA_MAP_CMD_SWAP,
	ILA_MAP_CMD_RESET_COUNTERS,	/* NAME: map and per-entry counters to 0 */
	ILA_MAP_CMD_MISS,	/* event only: NAME IDENT missed (NOTIFY_MISS) */
	__ILA_MAP_CMD_MAX,
};
#define ILA_MAP_CMD_MAX		(__ILA_MAP_CMD_MAX - 1)

enum ila_map_attr {
	ILA_MAP_A_UNSPEC,
	ILA_MAP_A_PAD,
	ILA_MAP_A_NAME,		/* NUL string, < ILA_MAP_NAMSIZ */
	ILA_MAP_A_IDENT,	/* u64, network byte order */
	ILA_MAP_A_LOCATOR,	/* u64, network byte order */
	ILA_MAP_A_CSUM_MODE,	/* u8, enum nf_ila_csum_mode */
	ILA_MAP_A_MAX_ENTRIES,	/* u32 */
	ILA_MAP_A_ENTRIES,	/* u32, reply only */
	ILA_MAP_A_RULES,	/* u32, reply only: rules using the map */
	ILA_MAP_A_STATS,	/* nested ILA_MAP_STATS_*, reply only */
	ILA_MAP_A_REPLACE,	/* flag: NEWENTRY may replace an entry */
	ILA_MAP_A_NAME2,	/* NUL string: SWAP's second map */
	ILA_MAP_A_HITS,		/* u64, reply only: packets that hit the entry */
	ILA_MAP_A_NOTIFY_MISS,	/* flag, NEWMAP/GETMAP: misses go to "events" */
	__ILA_MAP_A_MAX,
};
#define ILA_MAP_A_MAX		(__ILA_MAP_A_MAX - 1)

enum ila_map_stats_attr {
	ILA_MAP_STATS_UNSPEC,
	ILA_MAP_STATS_PAD,
	ILA_MAP_STATS_LOOKUPS,	/* u64 */
	ILA_MAP_STATS_HITS,	/* u64 */
	ILA_MAP_STATS_MISSES,	/* u64 */
	__ILA_MAP_STATS_MAX,
};
#define ILA_MAP_STATS_MAX	(__ILA_MAP_STATS_MAX - 1)

/* checksum modes: enum nf_ila_csum_mode (<linux/nf_ila.h>), the same values */
#define ILA_MAP_CSUM_ADJUST_TRANSPORT	NF_ILA_CSUM_ADJUST_TRANSPORT
#define ILA_MAP_CSUM_NEUTRAL_MAP	NF_ILA_CSUM_NEUTRAL_MAP
#define ILA_MAP_CSUM_NO_ACTION		NF_ILA_CSUM_NO_ACTION
#define ILA_MAP_CSUM_NEUTRAL_MAP_AUTO	NF_ILA_CSUM_NEUTRAL_MAP_AUTO
#define ILA_MAP_CSUM_RFC6296		NF_ILA_CSUM_RFC6296
#define ILA_MAP_CSUM_MAX		NF_ILA_CSUM_MAX

#endif /* _UAPI_LINUX_ILA_MAP_H */
