/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Kernel-internal interface of nf_conntrack_rtcache, used by xt_rtcache.
 */
#ifndef _NF_CONNTRACK_RTCACHE_H
#define _NF_CONNTRACK_RTCACHE_H

#include <linux/types.h>
#include <linux/skbuff.h>
#include <linux/netdevice.h>
#include <net/netfilter/nf_conntrack.h>

/**
 * nf_conntrack_rtcache_cached - does this packet's connection have a valid
 *	cached route for its direction and input interface?
 * @net: network namespace of the packet
 * @skb: the packet (mark and DSCP are compared with the cached ones)
 * @in: input interface
 * @pf: NFPROTO_IPV4 or NFPROTO_IPV6
 *
 * True when the route cache holds, for the connection attached to @skb and
 * the packet's direction, a route to forward on that was recorded for a
 * packet arriving on @in with the same routing inputs (addresses, mark,
 * DSCP, IPv6 flow label, rp_filter), and that route is still valid (IPv4
 * route generation, IPv6 cookie unchanged). Must be called under
 * rcu_read_lock() (netfilter hooks are).
 */
bool nf_conntrack_rtcache_cached(struct net *net, const struct sk_buff *skb,
				 const struct net_device *in, u8 pf);

#endif /* _NF_CONNTRACK_RTCACHE_H */
