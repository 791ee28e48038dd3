/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * compat.h: the one place that knows kernel versions.
 *
 * nf-ila-rtcache builds against Debian's stock 6.1 (bookworm) and 6.12
 * (trixie, bookworm-backports) kernels. Where an API changed between them,
 * the feature code uses the name defined here instead of testing
 * LINUX_VERSION_CODE itself. Each entry says what changed and when.
 */
#ifndef NFILR_COMPAT_H
#define NFILR_COMPAT_H

#include <linux/version.h>
#include <linux/sysctl.h>
#include <net/genetlink.h>
#include <net/net_namespace.h>

/*
 * 6.11: proc_handler takes a const struct ctl_table * (commit 78eb4ea25cd5
 * "sysctl: treewide: constify the ctl_table argument of proc_handlers").
 */
#if KERNEL_VERSION(6, 11, 0) <= LINUX_VERSION_CODE
#define NFILR_CTL_TABLE		const struct ctl_table
#else
#define NFILR_CTL_TABLE		struct ctl_table
#endif

/*
 * 6.6: register_net_sysctl() became a macro taking ARRAY_SIZE() of its
 * argument, which must then be an array; a per-netns copy (a pointer) is
 * registered with register_net_sysctl_sz() and its number of entries
 * (without the empty sentinel, which older kernels need at the end).
 */
static inline struct ctl_table_header *
nfilr_register_net_sysctl(struct net *net, const char *path,
			  struct ctl_table *table, size_t entries)
{
#if KERNEL_VERSION(6, 6, 0) <= LINUX_VERSION_CODE
	return register_net_sysctl_sz(net, path, table, entries);
#else
	return register_net_sysctl(net, path, table);
#endif
}

/*
 * 6.2: the attributes parsed for a generic netlink dump moved into
 * genl_dumpit_info::info (commit "genetlink: use genl_info in dumpit").
 */
static inline struct nlattr **nfilr_genl_dump_attrs(struct netlink_callback *cb)
{
#if KERNEL_VERSION(6, 2, 0) <= LINUX_VERSION_CODE
	return genl_dumpit_info(cb)->info.attrs;
#else
	return genl_dumpit_info(cb)->attrs;
#endif
}

/*
 * 6.2: extack messages can be formatted (NL_SET_ERR_MSG_FMT_MOD, commit
 * "netlink: add support for formatted extack messages"); 6.1 gets the plain
 * message.
 */
#ifdef NL_SET_ERR_MSG_FMT_MOD
#define NFILR_ERR_MSG_FMT(extack, plain, fmt, ...) \
	NL_SET_ERR_MSG_FMT_MOD(extack, fmt, ##__VA_ARGS__)
#else
#define NFILR_ERR_MSG_FMT(extack, plain, fmt, ...) \
	NL_SET_ERR_MSG_MOD(extack, plain)
#endif

/*
 * ILA maps walk rhashtable buckets inline (ila_map.h:
 * nf_ila_map_entry_find()): struct bucket_table, rht_ptr_rcu(),
 * RHT_NULLS_MARKER() and the future_tbl/nest protocol, as in <linux/
 * rhashtable.h> of 6.1 to 6.12 (compared line by line; the module's
 * selftest=1 checks the walk against rhashtable_lookup() on the running
 * kernel). Other versions take the generic rhashtable_lookup() until the
 * walk has been checked against them.
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 1, 0) && \
	LINUX_VERSION_CODE < KERNEL_VERSION(6, 13, 0)
#define NFILR_RHT_INLINE_WALK	1
#else
#define NFILR_RHT_INLINE_WALK	0
#endif

/*
 * rtcache validates cached IPv6 input routes with an inline copy of
 * ip6_dst_check() -> rt6_dst_from_check() for per-CPU fib6 route copies
 * (nf_conntrack_rtcache.c: rtc_ip6_pcpu_check(): rt6_info::sernum/from,
 * RTF_PCPU, fib6_get_cookie_safe()), as in net/ipv6/route.c of 6.1 to
 * 6.12 (compared line by line). The reclaim worker compares it with the
 * kernel's dst_check() on every cached IPv6 route and warns once if they
 * disagree. Other versions call dst_check() until the copy has been
 * checked against them.
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 1, 0) && \
	LINUX_VERSION_CODE < KERNEL_VERSION(6, 13, 0)
#define NFILR_IP6_DST_CHECK_INLINE	1
#else
#define NFILR_IP6_DST_CHECK_INLINE	0
#endif

#endif /* NFILR_COMPAT_H */
