// SPDX-License-Identifier: GPL-2.0-only
/*
 * nf_conntrack_rtcache: route cache for forwarded connections.
 *
 * For every forwarded connection the route (dst) chosen for each direction is
 * recorded, together with every input routing used to choose it, in a
 * per-netns table keyed by the conntrack. The inputs (struct rtc_key: the
 * destination and source address, input interface, mark, DSCP, IPv6 flow
 * label, rp_filter) are taken at the end of PRE_ROUTING, after every
 * mangle/NAT/ILA rewrite, which is what the route lookup that follows
 * sees; FORWARD then stores the route under them, but only for the very
 * packet whose inputs were taken and only if its addresses are unchanged
 * (a packet re-routed after PRE_ROUTING, e.g. SRv6 End, is never cached).
 * A later packet of the same direction whose inputs are equal gets that
 * route attached at the end of PRE_ROUTING and skips the FIB lookup (and,
 * with rp_filter=1, the reverse-path lookup) in ip_rcv_finish /
 * ip6_rcv_finish; a packet with other inputs (a locator moved by
 * `ilactl map replace`, a new DNPT rule, another mark) takes the lookup.
 *
 * The kernel no longer lets a module add a conntrack extension, so the table
 * lives here:
 *  - an rhashtable per netns keyed by the nf_conn address. nf_conn objects are
 *    SLAB_TYPESAFE_BY_RCU, so an entry is only used when both conntrack tuples
 *    stored in it still equal the tuples of the connection attached to the
 *    packet. No reference on the conntrack is held: connections are never
 *    delayed or killed by this module (rmmod leaves them alone).
 *  - entries are immutable once published; changing a direction replaces the
 *    entry (rhashtable_replace_fast), whoever unlinks an entry frees it after
 *    an RCU grace period, releasing the dst references it holds.
 *  - a per-netns worker reclaims, once per second while the table is not
 *    empty, entries whose connection died (conntrack -F, timeouts) or whose
 *    routes went stale, without waiting for traffic. Inserts are refused while
 *    the table holds as many entries as there are live conntracks.
 *  - each entry holds a reference on its dsts; they are dropped on replace,
 *    reclaim, flush (sysctl), sysctl off, NETDEV_DOWN/UNREGISTER of the output
 *    or input device, netns exit and rmmod.
 *
 * The dst is attached without taking a reference (skb_dst_set_noref), like the
 * kernel's own input routes: the receive path runs under rcu_read_lock() and
 * a dst is only freed an RCU grace period after its last reference is
 * dropped, so the dst outlives the packet's use of it; skb_dst_force() takes
 * a real reference when the packet leaves the RCU section.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/hash.h>
#include <linux/inetdevice.h>
#include <linux/module.h>
#include <linux/kernel.h>
#include <linux/netdevice.h>
#include <linux/netfilter.h>
#include <linux/netfilter_ipv4.h>
#include <linux/netfilter_ipv6.h>
#include <linux/netfilter_bridge.h>
#include <linux/percpu.h>
#include <linux/proc_fs.h>
#include <linux/rhashtable.h>
#include <linux/rtnetlink.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/sysctl.h>
#include <linux/workqueue.h>
#include <net/dsfield.h>
#include <net/dst.h>
#include <net/inet_ecn.h>
#include <net/ip.h>
#include <net/ip6_fib.h>
#include <net/ipv6.h>
#include <net/ip6_route.h>
#include <net/l3mdev.h>
#include <net/net_namespace.h>
#include <net/netns/generic.h>
#include <net/route.h>
#include <net/netfilter/nf_conntrack.h>
#include <net/netfilter/nf_conntrack_core.h>
#include <net/netfilter/nf_conntrack_tuple.h>
#include <net/netfilter/nf_conntrack_zones.h>

#include "compat.h"
#include "nf_conntrack_rtcache.h"

#define RTC_GC_INTERVAL		HZ
#define RTC_WALK_BATCH		256

/* The inputs of a route lookup, as they are at the end of PRE_ROUTING. */
struct rtc_key {
	union nf_inet_addr daddr;
	union nf_inet_addr saddr;
	u32 mark;		/* skb->mark */
	__be32 flowlabel;	/* IPv6: the multipath hash uses it */
	int iif;		/* input interface */
	u8 dsfield;		/* DSCP (ECN masked) */
	u8 rpf;			/* IPv4: rp_filter of the input device */
};

/* What is cached for one direction of a connection. */
struct rtc_dir {
	struct dst_entry *dst;	/* holds a reference; NULL: nothing cached */
	u32 cookie;		/* IPv6: rt6_get_cookie() when cached */
	u32 gen;		/* IPv6: fib6 serial + route genid when cached */
	struct rtc_key key;	/* what the lookup that chose dst was given */
	bool multipath;		/* it chose among ECMP nexthops */
};

struct rtc_entry {
	struct rhash_head node;
	const struct nf_conn *ct;	/* key: address only, never read */
	struct rtc_dir dir[IP_CT_DIR_MAX];
	struct nf_conntrack_tuple tuple[IP_CT_DIR_MAX];
	struct nf_conntrack_zone zone;	/* with tuple[0]: finds the conntrack */
	struct rcu_head rcu;
};

/* Routing inputs taken in PRE_ROUTING, for FORWARD to store (per CPU). */
struct rtc_pending {
	const struct sk_buff *skb;
	struct rtc_key key;
};

/* Per-CPU statistics, /proc/net/stat/nf_conntrack_rtcache. */
struct rtc_stat {
	unsigned int hits;
	unsigned int misses;
	unsigned int inserts;
	unsigned int stale;
	unsigned int flushes;
	unsigned int reclaimed;
	unsigned int wrong_iif;
	unsigned int insert_failed;
};

struct rtc_net {
	struct rhashtable ht;
	atomic_t count;
	int enabled;			/* sysctl net.netfilter.nf_conntrack_rtcache */
	bool dead;			/* netns going away: no more lookups */
	struct rtc_stat __percpu *stat;
	struct delayed_work gc_work;
	struct ctl_table_header *sysctl_hdr;
	struct ctl_table *sysctl_table;
	struct net *net;
};

static unsigned int rtc_net_id __read_mostly;
static bool rtc_unloading;	/* rmmod: netdev events need no work */
static struct kmem_cache *rtc_cachep __read_mostly;

/* Last packet given a cached route on this CPU: lets FORWARD skip the lookup. */
static DEFINE_PER_CPU(const struct sk_buff *, rtc_hit_skb);
/*
 * Packets that missed, with their routing inputs, per CPU, in a slot chosen
 * by the skb's address: list receive runs PRE_ROUTING for a whole batch
 * before routing and FORWARD for each packet, so one slot would only keep
 * the last packet of a batch. A slot is claimed (cleared) by every packet
 * that passes PRE_ROUTING, so it never offers another packet's inputs;
 * two packets of a batch in one slot only cost the first a later miss.
 */
#define RTC_PENDING_BITS	6
static DEFINE_PER_CPU(struct rtc_pending, rtc_pending[1 << RTC_PENDING_BITS]);

static struct rtc_pending *rtc_pending_slot(const struct sk_buff *skb)
{
	return this_cpu_ptr(&rtc_pending[hash_ptr(skb, RTC_PENDING_BITS)]);
}

static const struct rhashtable_params rtc_params = {
	.head_offset		= offsetof(struct rtc_entry, node),
	.key_offset		= offsetof(struct rtc_entry, ct),
	.key_len		= sizeof(const struct nf_conn *),
	.automatic_shrinking	= true,
};

static struct rtc_net *rtc_pernet(const struct net *net)
{
	return net_generic(net, rtc_net_id);
}

#define RTC_STAT_INC(rn, field)	this_cpu_inc((rn)->stat->field)
#define RTC_STAT_ADD(rn, field, n) this_cpu_add((rn)->stat->field, (n))

/* ---- entries ------------------------------------------------------------- */

static void rtc_entry_free(struct rtc_entry *e)
{
	dst_release(e->dir[IP_CT_DIR_ORIGINAL].dst);
	dst_release(e->dir[IP_CT_DIR_REPLY].dst);
	kmem_cache_free(rtc_cachep, e);
}

static void rtc_entry_free_rcu(struct rcu_head *head)
{
	rtc_entry_free(container_of(head, struct rtc_entry, rcu));
}

/* Is @e (found under @ct's address) really about this connection? */
static bool rtc_owns(const struct rtc_entry *e, const struct nf_conn *ct)
{
	return nf_ct_tuple_equal(&e->tuple[IP_CT_DIR_ORIGINAL],
				 &ct->tuplehash[IP_CT_DIR_ORIGINAL].tuple) &&
	       nf_ct_tuple_equal(&e->tuple[IP_CT_DIR_REPLY],
				 &ct->tuplehash[IP_CT_DIR_REPLY].tuple);
}

/* Unlink @e; only the caller that succeeds frees it. */
static bool rtc_unlink(struct rtc_net *rn, struct rtc_entry *e)
{
	if (rhashtable_remove_fast(&rn->ht, &e->node, rtc_params))
		return false;
	atomic_dec(&rn->count);
	call_rcu(&e->rcu, rtc_entry_free_rcu);
	return true;
}

static u32 rtc_gen6(const struct net *net)
{
#if IS_ENABLED(CONFIG_IPV6)
	/*
	 * Rule changes and flushes move the IPv6 route generation. Route
	 * changes are the per-route cookie's job (dst_check): they bump the
	 * serial number of the fib6 nodes they affect. Not the netns-wide
	 * fib6_sernum, which also moves on every PMTU exception and redirect
	 * and would drop every entry each time.
	 */
	return (u32)rt_genid_ipv6(net);
#else
	return 0;
#endif
}

/* The cached dst of @d if it is still valid, else NULL. */
static struct dst_entry *rtc_dir_dst(const struct rtc_dir *d,
				     const struct net *net, u8 pf)
{
	struct dst_entry *dst = d->dst;

	if (!dst)
		return NULL;
	if (pf == NFPROTO_IPV6 && d->gen != rtc_gen6(net))
		return NULL;
	/* IPv4: route generation; IPv6: the cookie stored when caching. */
	return dst_check(dst, d->cookie);
}

static u8 rtc_dsfield(const struct sk_buff *skb, u8 pf)
{
	u8 ds = pf == NFPROTO_IPV4 ? ipv4_get_dsfield(ip_hdr(skb)) :
				     ipv6_get_dsfield(ipv6_hdr(skb));

	return ds & ~INET_ECN_MASK;
}

/*
 * The kernel checks rp_filter per packet and does not flush routes when it
 * changes: a flow cached under another setting must meet the check again.
 */
static u8 rtc_rpf(const struct net_device *in, u8 pf)
{
	struct in_device *in_dev;

	if (pf != NFPROTO_IPV4)
		return 0;
	in_dev = __in_dev_get_rcu(in);
	return in_dev ? IN_DEV_RPFILTER(in_dev) : 0xff;
}

/* The routing inputs of @skb as they are now. */
static void rtc_key_of(struct rtc_key *k, const struct sk_buff *skb,
		       const struct net_device *in, u8 pf)
{
	memset(k, 0, sizeof(*k));
	if (pf == NFPROTO_IPV4) {
		k->daddr.ip = ip_hdr(skb)->daddr;
		k->saddr.ip = ip_hdr(skb)->saddr;
	} else {
		const struct ipv6hdr *ip6h = ipv6_hdr(skb);

		k->daddr.in6 = ip6h->daddr;
		k->saddr.in6 = ip6h->saddr;
		k->flowlabel = ip6_flowlabel(ip6h);
	}
	k->mark = skb->mark;
	k->iif = in->ifindex;
	k->dsfield = rtc_dsfield(skb, pf);
	k->rpf = rtc_rpf(in, pf);
}

static bool rtc_key_equal(const struct rtc_key *a, const struct rtc_key *b)
{
	return !memcmp(a, b, sizeof(*a));
}

/* ---- packet path ----------------------------------------------------------- */

static bool rtc_ctinfo_ok(enum ip_conntrack_info ctinfo)
{
	/* not RELATED: ICMP errors carry another source address */
	return ctinfo == IP_CT_NEW || ctinfo == IP_CT_ESTABLISHED ||
	       ctinfo == IP_CT_ESTABLISHED_REPLY;
}

/* Packet properties that make it unsuitable for the cache in either hook. */
static bool rtc_skb_ok(const struct sk_buff *skb, const struct net_device *in,
		       u8 pf)
{
	if (!in || skb->sk || skb->pkt_type != PACKET_HOST)
		return false;
	if (netif_is_l3_master(in) || netif_is_l3_slave(in))
		return false;
	if (nf_bridge_info_exists(skb))
		return false;
	if (pf == NFPROTO_IPV4)
		return ip_hdr(skb)->ihl == 5;	/* no IP options */
	return pf == NFPROTO_IPV6;
}

enum rtc_result { RTC_HIT, RTC_MISS, RTC_WRONG_IIF, RTC_STALE };

/* Look up the cached route of @skb's connection and direction. */
static struct dst_entry *rtc_find(struct rtc_net *rn, const struct nf_conn *ct,
				  enum ip_conntrack_dir dir,
				  const struct rtc_key *key, u8 pf,
				  enum rtc_result *res, bool *multipath)
{
	const struct rtc_entry *e;
	const struct rtc_dir *d;
	struct dst_entry *dst;

	*res = RTC_MISS;
	e = rhashtable_lookup(&rn->ht, &ct, rtc_params);
	if (!e || !rtc_owns(e, ct))
		return NULL;
	d = &e->dir[dir];
	if (!d->dst)
		return NULL;
	if (d->key.iif != key->iif) {
		*res = RTC_WRONG_IIF;
		return NULL;
	}
	if (!rtc_key_equal(&d->key, key))
		return NULL;
	dst = rtc_dir_dst(d, rn->net, pf);
	if (!dst) {
		*res = RTC_STALE;
		return NULL;
	}
	if (multipath)
		*multipath = d->multipath;
	*res = RTC_HIT;
	return dst;
}

/* Common checks; returns the conntrack or NULL if the packet is not ours. */
static struct nf_conn *rtc_skb_ct(const struct sk_buff *skb,
				  enum ip_conntrack_dir *dir)
{
	enum ip_conntrack_info ctinfo;
	struct nf_conn *ct = nf_ct_get(skb, &ctinfo);

	if (!ct || !rtc_ctinfo_ok(ctinfo) || !nf_ct_is_confirmed(ct) ||
	    nf_ct_is_template(ct))
		return NULL;
	*dir = CTINFO2DIR(ctinfo);
	return ct;
}

static unsigned int rtc_prerouting(void *priv, struct sk_buff *skb,
				   const struct nf_hook_state *state)
{
	struct rtc_pending *p = rtc_pending_slot(skb);
	struct rtc_net *rn;
	enum ip_conntrack_dir dir;
	enum rtc_result res;
	struct dst_entry *dst;
	struct nf_conn *ct;
	bool multipath;

	this_cpu_write(rtc_hit_skb, NULL);
	p->skb = NULL;
	if (skb_dst(skb))
		return NF_ACCEPT;
	ct = rtc_skb_ct(skb, &dir);
	if (!ct || !rtc_skb_ok(skb, state->in, state->pf))
		return NF_ACCEPT;
	rn = rtc_pernet(state->net);
	if (!READ_ONCE(rn->enabled))
		return NF_ACCEPT;

	rtc_key_of(&p->key, skb, state->in, state->pf);
	dst = rtc_find(rn, ct, dir, &p->key, state->pf, &res, &multipath);
	if (!dst) {
		RTC_STAT_INC(rn, misses);
		if (res == RTC_WRONG_IIF)
			RTC_STAT_INC(rn, wrong_iif);
		else if (res == RTC_STALE)
			RTC_STAT_INC(rn, stale);
		p->skb = skb;	/* FORWARD may store the route for this key */
		return NF_ACCEPT;
	}
	/* as the route lookup would: no list-receive route hint for ECMP */
	if (multipath) {
		if (state->pf == NFPROTO_IPV4)
			IPCB(skb)->flags |= IPSKB_MULTIPATH;
		else
			IP6CB(skb)->flags |= IP6SKB_MULTIPATH;
	}
	/* See the comment at the top: the dst outlives the RCU section. */
	skb_dst_set_noref(skb, dst);
	this_cpu_write(rtc_hit_skb, skb);
	RTC_STAT_INC(rn, hits);
	return NF_ACCEPT;
}

static bool rtc_dst_cacheable(const struct sk_buff *skb,
			      const struct dst_entry *dst, u8 pf)
{
	if (dst->flags & (DST_FAKE_RTABLE | DST_METADATA) || dst_xfrm(dst))
		return false;
	if (pf == NFPROTO_IPV4) {
		const struct rtable *rt = (const struct rtable *)dst;

		/* ip_forward() needs the per-packet redirect decision */
		return dst->ops->family == AF_INET &&
		       rt->rt_type == RTN_UNICAST &&
		       !(IPCB(skb)->flags & IPSKB_DOREDIRECT);
	}
	if (dst->ops->family == AF_INET6) {
		const struct rt6_info *rt = (const struct rt6_info *)dst;

		return !(rt->rt6i_flags & (RTF_LOCAL | RTF_ANYCAST | RTF_REJECT)) &&
		       !ipv6_addr_is_multicast(&ipv6_hdr(skb)->daddr);
	}
	return false;
}

/* Record @dst for @ct/@dir; called from FORWARD, under RCU. */
static void rtc_store(struct rtc_net *rn, const struct nf_conn *ct,
		      enum ip_conntrack_dir dir, struct dst_entry *dst,
		      const struct rtc_dir *fresh)
{
	struct rtc_entry *e, *n;
	bool owned;
	int err;

	e = rhashtable_lookup(&rn->ht, &ct, rtc_params);
	owned = e && rtc_owns(e, ct);
	if (owned) {
		const struct rtc_dir *d = &e->dir[dir];

		if (d->dst == dst && rtc_key_equal(&d->key, &fresh->key) &&
		    d->multipath == fresh->multipath &&
		    d->cookie == fresh->cookie && d->gen == fresh->gen)
			return;
	}
	if (!e && atomic_read(&rn->count) >= nf_conntrack_count(rn->net)) {
		/* never more entries than live connections: reclaim first */
		RTC_STAT_INC(rn, insert_failed);
		queue_delayed_work(system_power_efficient_wq, &rn->gc_work, 0);
		return;
	}
	if (!dst_hold_safe(dst))
		return;
	n = kmem_cache_zalloc(rtc_cachep, GFP_ATOMIC);
	if (!n) {
		dst_release(dst);
		RTC_STAT_INC(rn, insert_failed);
		return;
	}
	n->ct = ct;
	n->tuple[IP_CT_DIR_ORIGINAL] = ct->tuplehash[IP_CT_DIR_ORIGINAL].tuple;
	n->tuple[IP_CT_DIR_REPLY] = ct->tuplehash[IP_CT_DIR_REPLY].tuple;
	n->zone = *nf_ct_zone(ct);
	n->dir[dir] = *fresh;
	n->dir[dir].dst = dst;
	if (owned && e->dir[!dir].dst) {
		/* e is only freed after a grace period: its refs are alive */
		n->dir[!dir] = e->dir[!dir];
		dst_hold(n->dir[!dir].dst);
	}

	if (e) {
		err = rhashtable_replace_fast(&rn->ht, &e->node, &n->node,
					      rtc_params);
		if (err) {		/* lost a race; a later packet retries */
			rtc_entry_free(n);
			return;
		}
		call_rcu(&e->rcu, rtc_entry_free_rcu);
		if (!owned)
			RTC_STAT_INC(rn, stale);
	} else {
		err = rhashtable_lookup_insert_fast(&rn->ht, &n->node,
						    rtc_params);
		if (err) {
			rtc_entry_free(n);
			if (err != -EEXIST)
				RTC_STAT_INC(rn, insert_failed);
			return;
		}
		if (atomic_inc_return(&rn->count) == 1)
			queue_delayed_work(system_power_efficient_wq,
					   &rn->gc_work, RTC_GC_INTERVAL);
	}
	RTC_STAT_INC(rn, inserts);
}

static unsigned int rtc_forward(void *priv, struct sk_buff *skb,
				const struct nf_hook_state *state)
{
	struct rtc_pending *p = rtc_pending_slot(skb);
	struct dst_entry *dst = skb_dst(skb);
	enum ip_conntrack_dir dir;
	struct rtc_dir fresh = {};
	struct rtc_net *rn;
	struct nf_conn *ct;
	struct rtc_key now;

	if (this_cpu_read(rtc_hit_skb) == skb) {
		/* served from the cache in PRE_ROUTING: nothing to record */
		this_cpu_write(rtc_hit_skb, NULL);
		return NF_ACCEPT;
	}
	/* only the packet whose routing inputs PRE_ROUTING took */
	if (p->skb != skb)
		return NF_ACCEPT;
	p->skb = NULL;
	if (!dst)
		return NF_ACCEPT;
	ct = rtc_skb_ct(skb, &dir);
	if (!ct || !rtc_skb_ok(skb, state->in, state->pf) ||
	    !rtc_dst_cacheable(skb, dst, state->pf))
		return NF_ACCEPT;
	rn = rtc_pernet(state->net);
	if (!READ_ONCE(rn->enabled))
		return NF_ACCEPT;
	/*
	 * Re-routed after PRE_ROUTING (SRv6 End, LWT, a changed address):
	 * the route does not belong to the inputs PRE_ROUTING saw.
	 */
	rtc_key_of(&now, skb, state->in, state->pf);
	if (memcmp(&now.daddr, &p->key.daddr, sizeof(now.daddr)) ||
	    memcmp(&now.saddr, &p->key.saddr, sizeof(now.saddr)) ||
	    now.iif != p->key.iif)
		return NF_ACCEPT;

	/* FORWARD mangling (DSCP, CONNMARK) must not change what is stored */
	fresh.key = p->key;
	if (state->pf == NFPROTO_IPV4)
		fresh.multipath = IPCB(skb)->flags & IPSKB_MULTIPATH;
	else
		fresh.multipath = IP6CB(skb)->flags & IP6SKB_MULTIPATH;
	if (state->pf == NFPROTO_IPV6) {
		fresh.cookie = rt6_get_cookie((const struct rt6_info *)dst);
		fresh.gen = rtc_gen6(state->net);
	}
	rtc_store(rn, ct, dir, dst, &fresh);
	return NF_ACCEPT;
}

bool nf_conntrack_rtcache_cached(struct net *net, const struct sk_buff *skb,
				 const struct net_device *in, u8 pf)
{
	struct rtc_net *rn = rtc_pernet(net);
	enum ip_conntrack_dir dir;
	enum rtc_result res;
	struct rtc_key key;
	struct nf_conn *ct;

	if (pf != NFPROTO_IPV4 && pf != NFPROTO_IPV6)
		return false;
	ct = rtc_skb_ct(skb, &dir);
	if (!ct || !rtc_skb_ok(skb, in, pf))
		return false;
	if (READ_ONCE(rn->dead) || !READ_ONCE(rn->enabled))
		return false;
	rtc_key_of(&key, skb, in, pf);
	return rtc_find(rn, ct, dir, &key, pf, &res, NULL) != NULL;
}
EXPORT_SYMBOL_GPL(nf_conntrack_rtcache_cached);

static const struct nf_hook_ops rtc_hook_ops[] = {
	{
		.hook		= rtc_prerouting,
		.pf		= NFPROTO_IPV4,
		.hooknum	= NF_INET_PRE_ROUTING,
		.priority	= NF_IP_PRI_LAST,
	},
	{
		.hook		= rtc_forward,
		.pf		= NFPROTO_IPV4,
		.hooknum	= NF_INET_FORWARD,
		.priority	= NF_IP_PRI_LAST,
	},
	{
		.hook		= rtc_prerouting,
		.pf		= NFPROTO_IPV6,
		.hooknum	= NF_INET_PRE_ROUTING,
		.priority	= NF_IP6_PRI_LAST,
	},
	{
		.hook		= rtc_forward,
		.pf		= NFPROTO_IPV6,
		.hooknum	= NF_INET_FORWARD,
		.priority	= NF_IP6_PRI_LAST,
	},
};

/* ---- table walks: flush, netdev events, reclaim ------------------------------ */

enum rtc_walk_mode { RTC_WALK_FLUSH, RTC_WALK_DEV, RTC_WALK_GC };

static bool rtc_entry_uses_dev(const struct rtc_entry *e,
			       const struct net_device *dev)
{
	int i;

	for (i = 0; i < IP_CT_DIR_MAX; i++) {
		const struct rtc_dir *d = &e->dir[i];

		if (d->dst && (d->dst->dev == dev || d->key.iif == dev->ifindex))
			return true;
	}
	return false;
}

/*
 * Has the connection of @e gone? e->ct was stored long ago: the memory may
 * have been freed and its slab page returned since (SLAB_TYPESAFE_BY_RCU
 * only covers readers inside the grace period in which they found it), so
 * it is never read. The connection is looked up by tuple and zone instead;
 * it is @e's only if it is the same object with the same tuples.
 */
static bool rtc_entry_dead(const struct rtc_net *rn, const struct rtc_entry *e)
{
	const struct nf_conntrack_tuple_hash *h;
	struct nf_conn *ct;
	bool dead;

	h = nf_conntrack_find_get(rn->net, &e->zone,
				  &e->tuple[IP_CT_DIR_ORIGINAL]);
	if (!h)
		return true;
	ct = nf_ct_tuplehash_to_ctrack(h);
	dead = ct != e->ct || !nf_ct_is_confirmed(ct) || nf_ct_is_dying(ct) ||
	       !rtc_owns(e, ct);
	nf_ct_put(ct);
	return dead;
}

static bool rtc_entry_stale(const struct rtc_net *rn, const struct rtc_entry *e)
{
	u8 pf = e->tuple[IP_CT_DIR_ORIGINAL].src.l3num;
	int i;

	for (i = 0; i < IP_CT_DIR_MAX; i++)
		if (e->dir[i].dst && !rtc_dir_dst(&e->dir[i], rn->net, pf))
			return true;
	return false;
}

static void rtc_walk(struct rtc_net *rn, enum rtc_walk_mode mode,
		     const struct net_device *dev)
{
	unsigned int seen = 0, flushed = 0, reclaimed = 0, stale = 0;
	struct rhashtable_iter iter;
	struct rtc_entry *e;

	rhashtable_walk_enter(&rn->ht, &iter);
	rhashtable_walk_start(&iter);
	while ((e = rhashtable_walk_next(&iter)) != NULL) {
		if (IS_ERR(e)) {
			if (PTR_ERR(e) == -EAGAIN)
				continue;
			break;
		}
		switch (mode) {
		case RTC_WALK_FLUSH:
			flushed += rtc_unlink(rn, e);
			break;
		case RTC_WALK_DEV:
			if (rtc_entry_uses_dev(e, dev) || rtc_entry_stale(rn, e))
				flushed += rtc_unlink(rn, e);
			break;
		case RTC_WALK_GC:
			if (!READ_ONCE(rn->enabled))
				flushed += rtc_unlink(rn, e);
			else if (rtc_entry_dead(rn, e))
				reclaimed += rtc_unlink(rn, e);
			else if (rtc_entry_stale(rn, e))
				stale += rtc_unlink(rn, e);
			break;
		}
		if (++seen % RTC_WALK_BATCH == 0) {
			rhashtable_walk_stop(&iter);
			cond_resched();
			rhashtable_walk_start(&iter);
		}
	}
	rhashtable_walk_stop(&iter);
	rhashtable_walk_exit(&iter);

	RTC_STAT_ADD(rn, flushes, flushed);
	RTC_STAT_ADD(rn, reclaimed, reclaimed);
	RTC_STAT_ADD(rn, stale, stale);
}

static void rtc_gc_work(struct work_struct *work)
{
	struct rtc_net *rn = container_of(to_delayed_work(work),
					  struct rtc_net, gc_work);

	if (READ_ONCE(rn->dead))
		return;
	rtc_walk(rn, RTC_WALK_GC, NULL);
	if (atomic_read(&rn->count) && !READ_ONCE(rn->dead))
		queue_delayed_work(system_power_efficient_wq, &rn->gc_work,
				   RTC_GC_INTERVAL);
}

static int rtc_netdev_event(struct notifier_block *nb, unsigned long event,
			    void *ptr)
{
	struct net_device *dev = netdev_notifier_info_to_dev(ptr);
	struct rtc_net *rn;

	if ((event != NETDEV_DOWN && event != NETDEV_UNREGISTER) ||
	    READ_ONCE(rtc_unloading))
		return NOTIFY_DONE;
	/* RTNL held: serialised with the table's destruction in rtc_net_exit */
	rn = rtc_pernet(dev_net(dev));
	if (READ_ONCE(rn->dead) || !atomic_read(&rn->count))
		return NOTIFY_DONE;
	rtc_walk(rn, RTC_WALK_DEV, dev);
	return NOTIFY_DONE;
}

static struct notifier_block rtc_netdev_nb = {
	.notifier_call = rtc_netdev_event,
};

/* ---- sysctl ------------------------------------------------------------------ */

static int rtc_sysctl_enabled(NFILR_CTL_TABLE *table, int write,
			      void *buffer, size_t *lenp, loff_t *ppos)
{
	struct rtc_net *rn = table->data;
	int val = READ_ONCE(rn->enabled);
	struct ctl_table tmp = {
		.data	= &val,
		.maxlen	= sizeof(val),
		.mode	= table->mode,
		.extra1	= SYSCTL_ZERO,
		.extra2	= SYSCTL_ONE,
	};
	int ret;

	ret = proc_dointvec_minmax(&tmp, write, buffer, lenp, ppos);
	if (ret || !write)
		return ret;
	WRITE_ONCE(rn->enabled, val);
	if (!val)
		rtc_walk(rn, RTC_WALK_FLUSH, NULL);
	return 0;
}

static int rtc_sysctl_flush(NFILR_CTL_TABLE *table, int write,
			    void *buffer, size_t *lenp, loff_t *ppos)
{
	struct rtc_net *rn = table->data;
	int val = 0;
	struct ctl_table tmp = {
		.data	= &val,
		.maxlen	= sizeof(val),
		.mode	= table->mode,
	};
	int ret;

	if (!write)
		return -EINVAL;
	ret = proc_dointvec(&tmp, write, buffer, lenp, ppos);
	if (ret)
		return ret;
	rtc_walk(rn, RTC_WALK_FLUSH, NULL);
	return 0;
}

static struct ctl_table rtc_sysctl_table[] = {
	{
		.procname	= "nf_conntrack_rtcache",
		.maxlen		= sizeof(int),
		.mode		= 0644,
		.proc_handler	= rtc_sysctl_enabled,
	},
	{
		.procname	= "nf_conntrack_rtcache_flush",
		.maxlen		= sizeof(int),
		.mode		= 0200,
		.proc_handler	= rtc_sysctl_flush,
	},
	{ }
};

static int rtc_sysctl_init(struct rtc_net *rn)
{
	struct ctl_table *table;
	int i;

	table = kmemdup(rtc_sysctl_table, sizeof(rtc_sysctl_table), GFP_KERNEL);
	if (!table)
		return -ENOMEM;
	for (i = 0; table[i].procname; i++)
		table[i].data = rn;
	rn->sysctl_hdr = nfilr_register_net_sysctl(rn->net, "net/netfilter", table,
						   ARRAY_SIZE(rtc_sysctl_table) - 1);
	if (!rn->sysctl_hdr) {
		kfree(table);
		return -ENOMEM;
	}
	rn->sysctl_table = table;
	return 0;
}

static void rtc_sysctl_exit(struct rtc_net *rn)
{
	unregister_net_sysctl_table(rn->sysctl_hdr);
	kfree(rn->sysctl_table);
}

/* ---- /proc/net/stat/nf_conntrack_rtcache (lnstat format) --------------------- */

static void *rtc_seq_cpu(struct seq_file *seq, loff_t *pos, int cpu)
{
	struct rtc_net *rn = rtc_pernet(seq_file_net(seq));

	for (; cpu < nr_cpu_ids; cpu++) {
		if (!cpu_possible(cpu))
			continue;
		*pos = cpu + 1;
		return per_cpu_ptr(rn->stat, cpu);
	}
	return NULL;
}

static void *rtc_seq_start(struct seq_file *seq, loff_t *pos)
{
	if (*pos == 0)
		return SEQ_START_TOKEN;
	return rtc_seq_cpu(seq, pos, *pos - 1);
}

static void *rtc_seq_next(struct seq_file *seq, void *v, loff_t *pos)
{
	void *p = rtc_seq_cpu(seq, pos, *pos);

	if (!p)
		(*pos)++;
	return p;
}

static void rtc_seq_stop(struct seq_file *seq, void *v)
{
}

static int rtc_seq_show(struct seq_file *seq, void *v)
{
	const struct rtc_net *rn = rtc_pernet(seq_file_net(seq));
	const struct rtc_stat *st = v;

	/* lnstat: first line names the columns, the first column is not summed */
	if (v == SEQ_START_TOKEN) {
		seq_puts(seq, "entries hits misses inserts stale flushes reclaimed wrong_iif insert_failed\n");
		return 0;
	}
	seq_printf(seq, "%08x %08x %08x %08x %08x %08x %08x %08x %08x\n",
		   atomic_read(&rn->count), st->hits, st->misses, st->inserts,
		   st->stale, st->flushes, st->reclaimed, st->wrong_iif,
		   st->insert_failed);
	return 0;
}

static const struct seq_operations rtc_seq_ops = {
	.start	= rtc_seq_start,
	.next	= rtc_seq_next,
	.stop	= rtc_seq_stop,
	.show	= rtc_seq_show,
};

/* ---- per-netns setup ----------------------------------------------------------- */

static int __net_init rtc_net_init(struct net *net)
{
	struct rtc_net *rn = rtc_pernet(net);
	int err;

	rn->net = net;
	rn->enabled = 1;
	rn->dead = false;
	atomic_set(&rn->count, 0);
	INIT_DELAYED_WORK(&rn->gc_work, rtc_gc_work);

	rn->stat = alloc_percpu(struct rtc_stat);
	if (!rn->stat)
		return -ENOMEM;
	err = rhashtable_init(&rn->ht, &rtc_params);
	if (err)
		goto err_stat;
	err = rtc_sysctl_init(rn);
	if (err)
		goto err_ht;
	if (!proc_create_net("nf_conntrack_rtcache", 0444, net->proc_net_stat,
			     &rtc_seq_ops, sizeof(struct seq_net_private))) {
		err = -ENOMEM;
		goto err_sysctl;
	}
	err = nf_register_net_hooks(net, rtc_hook_ops, ARRAY_SIZE(rtc_hook_ops));
	if (err)
		goto err_proc;
	return 0;

err_proc:
	remove_proc_entry("nf_conntrack_rtcache", net->proc_net_stat);
err_sysctl:
	rtc_sysctl_exit(rn);
err_ht:
	rhashtable_destroy(&rn->ht);
err_stat:
	free_percpu(rn->stat);
	return err;
}

static void __net_exit rtc_net_pre_exit(struct net *net)
{
	struct rtc_net *rn = rtc_pernet(net);

	/* a grace period passes before .exit: lookups that saw !dead are done */
	WRITE_ONCE(rn->dead, true);
	nf_unregister_net_hooks(net, rtc_hook_ops, ARRAY_SIZE(rtc_hook_ops));
}

static void rtc_destroy_entry(void *ptr, void *arg)
{
	rtc_entry_free(ptr);
}

static void __net_exit rtc_net_exit(struct net *net)
{
	struct rtc_net *rn = rtc_pernet(net);

	remove_proc_entry("nf_conntrack_rtcache", net->proc_net_stat);
	rtc_sysctl_exit(rn);
	cancel_delayed_work_sync(&rn->gc_work);
	rtnl_lock();
	rhashtable_free_and_destroy(&rn->ht, rtc_destroy_entry, NULL);
	atomic_set(&rn->count, 0);
	rtnl_unlock();
	free_percpu(rn->stat);
}

static struct pernet_operations rtc_net_ops = {
	.init		= rtc_net_init,
	.pre_exit	= rtc_net_pre_exit,
	.exit		= rtc_net_exit,
	.id		= &rtc_net_id,
	.size		= sizeof(struct rtc_net),
};

static int __init rtc_init(void)
{
	int err;

	rtc_cachep = kmem_cache_create("nf_conntrack_rtcache",
				       sizeof(struct rtc_entry), 0, 0, NULL);
	if (!rtc_cachep)
		return -ENOMEM;
	err = register_pernet_subsys(&rtc_net_ops);
	if (err)
		goto err_cache;
	err = register_netdevice_notifier(&rtc_netdev_nb);
	if (err)
		goto err_pernet;
	return 0;

err_pernet:
	unregister_pernet_subsys(&rtc_net_ops);
	rcu_barrier();	/* rtc_entry_free_rcu callbacks of the netns exits */
err_cache:
	kmem_cache_destroy(rtc_cachep);
	return err;
}

static void __exit rtc_exit(void)
{
	/* the notifier replays DOWN/UNREGISTER: pernet exit drops all anyway */
	WRITE_ONCE(rtc_unloading, true);
	unregister_netdevice_notifier(&rtc_netdev_nb);
	unregister_pernet_subsys(&rtc_net_ops);
	rcu_barrier();	/* rtc_entry_free_rcu callbacks */
	kmem_cache_destroy(rtc_cachep);
}

module_init(rtc_init);
module_exit(rtc_exit);

MODULE_LICENSE("GPL");
MODULE_AUTHOR("nf-ila-rtcache contributors");
MODULE_DESCRIPTION("Netfilter: route cache for forwarded connections");
