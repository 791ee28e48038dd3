// SPDX-License-Identifier: GPL-2.0-only
/*
 * nf_conntrack_rtcache: route cache for forwarded connections.
 *
 * One hook, at the end of PRE_ROUTING, after every mangle/NAT/ILA rewrite.
 * For a packet of a confirmed connection it builds the inputs of the route
 * lookup that follows (struct rtc_key: destination and source address,
 * input interface, mark, DSCP, IPv6 flow label and first next header,
 * rp_filter, and the connection's protocol and ports, which fib rules and
 * the L4 multipath hash may use) and looks for the route recorded for the connection's
 * direction under equal inputs:
 *  - hit: the route is attached and ip_rcv_finish / ip6_rcv_finish skip the
 *    FIB lookup (and, with rp_filter=1, the reverse-path lookup);
 *  - miss (nothing recorded, other inputs: a locator moved by `ilactl map
 *    replace`, a new DNPT rule, another mark; or the route went stale): the
 *    hook routes the packet itself with the function the kernel would call
 *    next (ip_route_input_noref, ipv6_stub->ipv6_route_input), leaves the
 *    result attached and records it under the inputs it was given.
 *    Routes the kernel must handle per packet (local delivery, redirects,
 *    LWT/SRv6 and other reroutes, xfrm, errors) are recorded as "pass":
 *    later packets with those inputs are left alone, so the kernel's early
 *    demux and its own lookup run as without the cache.
 * Nothing is recorded from FORWARD or later, so FORWARD-chain mangling
 * (DSCP, CONNMARK) and re-routing after PRE_ROUTING cannot poison an entry.
 *
 * The kernel no longer lets a module add a conntrack extension, so the table
 * lives here:
 *  - an rhashtable per netns keyed by the nf_conn address. nf_conn objects are
 *    SLAB_TYPESAFE_BY_RCU and recycled: an entry found under the address may
 *    have been recorded for an earlier connection, of either family (one
 *    slab cache serves IPv4 and IPv6). That is harmless on the packet path,
 *    whose key holds the family and every routing input (a route is a
 *    function of its inputs, not of the connection), and every hit checks
 *    that the route is of the packet's family; recording and reclaim compare
 *    the stored tuples. No reference on the conntrack is held: connections
 *    are never delayed or killed by this module (rmmod leaves them alone).
 *  - entries are immutable once published (but for the time of the last
 *    hit, a hint for reclaim); changing a direction replaces the
 *    entry (rhashtable_replace_fast), whoever unlinks an entry frees it after
 *    an RCU grace period, releasing the dst references it holds.
 *  - a per-netns worker reclaims entries whose connection died (conntrack
 *    -F, timeouts) or whose routes went stale, without waiting for traffic:
 *    passes over the table in slices of bounded cost (see RTC_GC_SLICE), a
 *    pass at most once per second. Inserts are refused while the table holds
 *    as many entries as there are live conntracks, and bring the next slice
 *    in.
 *  - each entry holds a reference on its dsts; they are dropped on replace,
 *    reclaim, flush (sysctl), sysctl off, netns exit and rmmod, and by a walk
 *    of the worker after a device used by the entry went down, lost its
 *    carrier or was unregistered.
 *  - device events cost O(1) under RTNL: the notifier moves the device's
 *    generation (rtc_net.dev_gen), which every hit compares with the one
 *    its direction was recorded under (output and input device), and leaves
 *    the walk that releases references to the worker. A carrier loss
 *    matters for IPv6: the kernel marks the routes of the device
 *    RTNH_F_LINKDOWN without renumbering their fib6 node, so a cookie alone
 *    would keep a cached flow on the dead link (ignore_routes_with_linkdown).
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
#include <linux/memcontrol.h>
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
#include <linux/sched/mm.h>
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
#include <net/ipv6_stubs.h>
#include <net/l3mdev.h>
#include <net/neighbour.h>
#include <net/net_namespace.h>
#include <net/netevent.h>
#include <net/netns/generic.h>
#include <net/route.h>
#include <net/netfilter/nf_conntrack.h>
#include <net/netfilter/nf_conntrack_core.h>
#include <net/netfilter/nf_conntrack_tuple.h>
#include <net/netfilter/nf_conntrack_zones.h>

#include "compat.h"
#include "nf_conntrack_rtcache.h"

#define RTC_WALK_BATCH		256
/*
 * Reclaim runs in slices of bounded cost. An entry that served a packet
 * within RTC_USED_RECENTLY is alive (that packet's conntrack was the
 * entry's) and its routes are checked on every hit: visiting it costs a few
 * dozen instructions. Any other entry is checked: its connection looked up
 * by tuple (about 850 instructions) and its routes validated. A slice visits
 * at most RTC_GC_VISITS entries and checks at most RTC_GC_CHECKS; slices
 * follow each other RTC_GC_SLICE apart, and a pass over the table starts at
 * most once per RTC_GC_INTERVAL. At HZ=250 that is at most about 36,000
 * visits and 2,300 checks a second (some 4 million instructions) whatever
 * the table's size: a table of 1,000,000 idle connections takes 7 minutes a
 * pass. While inserts are refused for lack of room (never more entries than
 * connections), and after a slice in which most checked entries were dead
 * (conntrack -F, a mass timeout: reclaiming is then work that frees memory,
 * once per connection), the slices run one jiffy apart with four times the
 * checks.
 */
#define RTC_GC_INTERVAL		HZ
#define RTC_GC_SLICE		(HZ / 32 ?: 1)
#define RTC_GC_VISITS		1024
#define RTC_GC_CHECKS		64
#define RTC_GC_CHECKS_KICKED	(4 * RTC_GC_CHECKS)
#define RTC_USED_RECENTLY	(2 * HZ)
/*
 * A direction whose routing inputs change (a sender that varies the flow
 * label or DSCP per packet) is recorded again at most RTC_CHURN_BURST times
 * per RTC_CHURN_WINDOW; the other packets are routed as without the cache
 * (one lookup, no allocation, no entry replaced). Bounded per connection,
 * and a connection whose inputs changed once or twice (a mark set mid-flow,
 * a locator moved) is recorded again at once.
 */
#define RTC_CHURN_WINDOW	HZ
#define RTC_CHURN_BURST		8
/*
 * Device generations, indexed by ifindex: a netns's devices have small,
 * mostly consecutive ifindexes, so a collision is rare, and costs only
 * records of another device's connections again.
 */
#define RTC_DEV_GENS		64
#define RTC_DEV_BKT(ifindex)	((u32)(ifindex) & (RTC_DEV_GENS - 1))
/* rtc_net.gc_kicked bits */
#define RTC_KICK_SLICE		0	/* a reclaim slice is pulled in */
#define RTC_KICK_WALK		1	/* devices changed: release stale entries */

/*
 * The inputs of a route lookup, as they are at the end of PRE_ROUTING, and
 * the connection's protocol and ports (fib rules and the L4 multipath hash
 * use them). Compared word by word: no holes, a multiple of 8 bytes.
 */
struct rtc_key {
	union nf_inet_addr daddr;
	union nf_inet_addr saddr;
	u32 mark;		/* skb->mark */
	int iif;		/* input interface */
	__be32 flowlabel;	/* IPv6: the multipath hash uses it */
	u8 dsfield;		/* DSCP (ECN masked) */
	union {
		u8 rpf;		/* IPv4: rp_filter of the input device */
		/*
		 * IPv6: the first next header, which ip6_route_input() puts in
		 * flowi6_proto (the L3 multipath hash uses it; an extension
		 * header in some packets of a connection is another input)
		 */
		u8 nexthdr;
	};
	u8 proto;		/* the connection's layer 4 protocol */
	u8 family;		/* NFPROTO_IPV4 or NFPROTO_IPV6 (= AF_INET, AF_INET6) */
	u64 ports;		/* both tuples' ports (or ICMP id/type/code) */
};

/* What is cached for one direction of a connection. */
struct rtc_dir {
	struct rtc_key key;	/* what the lookup that chose dst was given */
	struct dst_entry *dst;	/* holds a reference; NULL: nothing cached */
	u32 cookie;		/* IPv6: rt6_get_cookie() when cached */
	bool attach;		/* forwarded: serve dst; else leave to the kernel */
	bool multipath;		/* it chose among ECMP nexthops */
	u8 churn;		/* records with new inputs in the current window */
	u8 obkt;		/* RTC_DEV_BKT() of the output device */
	u32 gen;		/* rtc_dir_gen() when recorded */
	u32 stamp;		/* jiffies (low 32 bits) when recorded */
};

struct rtc_entry {
	struct rhash_head node;
	const struct nf_conn *ct;	/* key: address only, never read */
	struct rtc_dir dir[IP_CT_DIR_MAX];
	struct nf_conntrack_tuple tuple[IP_CT_DIR_MAX];
	struct nf_conntrack_zone zone;	/* with tuple[0]: finds the conntrack */
	u32 used;			/* jiffies of a recent hit (reclaim) */
	struct rcu_head rcu;
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
	unsigned int churn_limited;
};

struct rtc_net {
	struct rhashtable ht;
	struct nf_hook_ops ops[2];	/* priv: this struct */
	atomic_t count;
	/*
	 * Moves when the choice among ECMP nexthops may change without the
	 * route changing: multipath hash policy, fields or seed (netevent
	 * *_MPATH_HASH_UPDATE), a neighbour's state with IPv4
	 * fib_multipath_use_neigh. Multipath entries recorded before are stale.
	 */
	atomic_t mp_gen;
	/*
	 * Per device (RTC_DEV_BKT): moves when the device goes down, loses or
	 * regains its carrier or is unregistered; written under RTNL inside
	 * dev_seq, which a record checks around its route lookup.
	 */
	u32 dev_gen[RTC_DEV_GENS];
	seqcount_t dev_seq;
	struct mem_cgroup *memcg;	/* charged for the entries, or NULL */
	int enabled;			/* sysctl net.netfilter.nf_conntrack_rtcache */
	bool dead;			/* netns going away: no more lookups */
	struct rtc_stat __percpu *stat;
	struct delayed_work gc_work;
	/* reclaim: where the pass is (worker only), when it began */
	struct rhashtable_iter gc_iter;
	unsigned long gc_pass_start;
	unsigned long gc_kicked;	/* RTC_KICK_* */
	bool gc_dead;			/* the last slice found mostly dead ones */
	struct ctl_table_header *sysctl_hdr;
	struct ctl_table *sysctl_table;
	struct net *net;
};

static unsigned int rtc_net_id __read_mostly;
static bool rtc_unloading;	/* rmmod: netdev events need no work */
static struct kmem_cache *rtc_cachep __read_mostly;

/* The table is keyed by an object address: a multiplicative hash is enough. */
static u32 rtc_hashfn(const void *data, u32 len, u32 seed)
{
	return hash_64((unsigned long)*(const struct nf_conn * const *)data ^ seed,
		       32);
}

/* The key compared inline (rhashtable's default calls memcmp). */
static int rtc_obj_cmpfn(struct rhashtable_compare_arg *arg, const void *obj)
{
	const struct rtc_entry *e = obj;

	return *(const struct nf_conn * const *)arg->key != e->ct;
}

static const struct rhashtable_params rtc_params = {
	.head_offset		= offsetof(struct rtc_entry, node),
	.key_offset		= offsetof(struct rtc_entry, ct),
	.key_len		= sizeof(const struct nf_conn *),
	.hashfn			= rtc_hashfn,
	.obj_cmpfn		= rtc_obj_cmpfn,
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

#if IS_ENABLED(CONFIG_IPV6) && NFILR_IP6_DST_CHECK_INLINE
/*
 * ip6_dst_check() -> rt6_dst_from_check() for the per-CPU copy of a fib6
 * route (what input routing hands out), inline: 1 valid, 0 stale, -1 not
 * such a route (the caller takes dst_check()). A copy of kernel logic,
 * compiled only for the versions compat.h lists; the reclaim worker
 * compares it with dst_check() on every cached IPv6 route
 * (rtc_ip6_check_agrees).
 */
static __always_inline int rtc_ip6_pcpu_check(const struct dst_entry *dst,
					      u32 cookie)
{
	const struct rt6_info *rt = (const struct rt6_info *)dst;
	const struct fib6_info *from = rcu_dereference(rt->from);
	u32 now;

	if (likely(!rt->sernum && (rt->rt6i_flags & RTF_PCPU) && from &&
		   dst->obsolete == DST_OBSOLETE_FORCE_CHK &&
		   !(from->fib6_flags & RTF_EXPIRES) &&
		   fib6_get_cookie_safe(from, &now)))
		return now == cookie;
	return -1;
}
#endif

/*
 * The generation @d is valid under: its output and input devices' (a sum
 * of counters that only grow moves when either does), and for an ECMP
 * choice the multipath generation. @obkt: RTC_DEV_BKT of the output device.
 */
static __always_inline u32 rtc_dir_gen(const struct rtc_net *rn,
				       const struct rtc_key *k, u8 obkt,
				       bool multipath)
{
	u32 gen = READ_ONCE(rn->dev_gen[obkt]) +
		  READ_ONCE(rn->dev_gen[RTC_DEV_BKT(k->iif)]);

	if (multipath)
		gen += (u32)atomic_read(&rn->mp_gen);
	return gen;
}

/* @dst (cached in @d) if it is still valid, else NULL. */
static __always_inline struct dst_entry *
rtc_dir_dst(const struct rtc_net *rn, const struct rtc_dir *d,
	    struct dst_entry *dst, u8 pf)
{
	/*
	 * a device of the route went down or lost its carrier, or the ECMP
	 * choice was made under another hash or neighbour state
	 */
	if (unlikely(d->gen != rtc_dir_gen(rn, &d->key, d->obkt, d->multipath)))
		return NULL;
	/*
	 * A route of the packet's family, whatever the key said: the checks
	 * below read family-specific fields, and an IPv4 route on an IPv6
	 * packet would run ip_forward() on it. (NFPROTO_IPV4/6 equal
	 * AF_INET/AF_INET6.)
	 */
	if (unlikely(dst->ops->family != pf))
		return NULL;
	/* ipv4_dst_check(), without the call */
	if (pf == NFPROTO_IPV4 && likely(dst->obsolete == DST_OBSOLETE_FORCE_CHK))
		return ((const struct rtable *)dst)->rt_genid ==
		       rt_genid_ipv4(dev_net(dst->dev)) ? dst : NULL;
#if IS_ENABLED(CONFIG_IPV6) && NFILR_IP6_DST_CHECK_INLINE
	/*
	 * ip6_dst_check() of the per-CPU copy of a fib6 route, what input
	 * routing hands out (rt6_dst_from_check()), without the call; other
	 * IPv6 routes take dst_check() below.
	 */
	if (pf == NFPROTO_IPV6) {
		int valid = rtc_ip6_pcpu_check(dst, d->cookie);

		if (likely(valid >= 0))
			return valid ? dst : NULL;
	}
#endif
	/*
	 * IPv4: route generation. IPv6: the cookie stored when caching, the
	 * serial number of the route's fib6 node, as sockets check their
	 * cached routes: a route change or a path MTU exception renumbers the
	 * nodes it affects, a rule change or flush every node. Not the
	 * netns-wide fib6_sernum (rt_genid_ipv6): it moves on every exception
	 * anywhere and would drop every entry each time.
	 */
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

/* Both tuples' ports: with the addresses, what fib rules may look at. */
static u64 rtc_ct_ports(const struct nf_conn *ct)
{
	const struct nf_conntrack_tuple *o = &ct->tuplehash[IP_CT_DIR_ORIGINAL].tuple;
	const struct nf_conntrack_tuple *r = &ct->tuplehash[IP_CT_DIR_REPLY].tuple;

	return (u64)(__force u16)o->src.u.all << 48 |
	       (u64)(__force u16)o->dst.u.all << 32 |
	       (u64)(__force u16)r->src.u.all << 16 |
	       (__force u16)r->dst.u.all;
}

/* The routing inputs of @skb (of connection @ct) as they are now. */
static void rtc_key_of(struct rtc_key *k, const struct sk_buff *skb,
		       const struct nf_conn *ct, const struct net_device *in,
		       u8 pf)
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
		k->nexthdr = ip6h->nexthdr;
	}
	k->mark = skb->mark;
	k->iif = in->ifindex;
	k->dsfield = rtc_dsfield(skb, pf);
	if (pf == NFPROTO_IPV4)
		k->rpf = rtc_rpf(in, pf);
	k->proto = nf_ct_protonum(ct);
	k->family = pf;
	k->ports = rtc_ct_ports(ct);
}

/*
 * Are the routing inputs of @skb those of @k? rtc_key_of() compared with
 * @k, without building the key: this runs for every packet.
 */
static __always_inline bool rtc_key_match(const struct rtc_key *k,
					  const struct sk_buff *skb,
					  const struct nf_conn *ct,
					  const struct net_device *in, u8 pf)
{
	u64 diff;

	if (pf == NFPROTO_IPV4) {
		const struct iphdr *iph = ip_hdr(skb);

		diff = (k->daddr.ip ^ iph->daddr) | (k->saddr.ip ^ iph->saddr) |
		       (k->rpf ^ rtc_rpf(in, pf));
	} else {
		const struct ipv6hdr *ip6h = ipv6_hdr(skb);

		if (!(ipv6_addr_equal(&k->daddr.in6, &ip6h->daddr) &
		      ipv6_addr_equal(&k->saddr.in6, &ip6h->saddr)))
			return false;
		diff = (k->flowlabel ^ ip6_flowlabel(ip6h)) |
		       (k->nexthdr ^ ip6h->nexthdr);
	}
	diff |= (k->mark ^ skb->mark) | (k->iif ^ in->ifindex) |
		(k->dsfield ^ rtc_dsfield(skb, pf)) |
		(k->proto ^ nf_ct_protonum(ct)) | (k->family ^ pf) |
		(k->ports ^ rtc_ct_ports(ct));
	return !diff;
}

/* ---- packet path ----------------------------------------------------------- */

static bool rtc_ctinfo_ok(enum ip_conntrack_info ctinfo)
{
	/* not RELATED: ICMP errors carry another source address */
	return ctinfo == IP_CT_NEW || ctinfo == IP_CT_ESTABLISHED ||
	       ctinfo == IP_CT_ESTABLISHED_REPLY;
}

/* Packet properties that leave the packet to the kernel's own routing. */
static __always_inline bool rtc_skb_ok(const struct sk_buff *skb,
				       const struct net_device *in, u8 pf)
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

/* Common checks; returns the conntrack or NULL if the packet is not ours. */
static __always_inline struct nf_conn *
rtc_skb_ct(const struct sk_buff *skb, enum ip_conntrack_dir *dir)
{
	enum ip_conntrack_info ctinfo;
	struct nf_conn *ct = nf_ct_get(skb, &ctinfo);

	if (!ct || !rtc_ctinfo_ok(ctinfo) || !nf_ct_is_confirmed(ct) ||
	    nf_ct_is_template(ct))
		return NULL;
	*dir = CTINFO2DIR(ctinfo);
	return ct;
}

/*
 * The route recorded for @ct/@dir under the inputs @skb has now, if it is
 * still valid; *@dp: that direction of the entry, if there is an entry.
 */
static __always_inline struct dst_entry *
rtc_lookup(struct rtc_net *rn, const struct sk_buff *skb,
	   const struct nf_conn *ct, enum ip_conntrack_dir dir,
	   const struct net_device *in, u8 pf, struct rtc_entry **ep,
	   const struct rtc_dir **dp)
{
	struct rtc_entry *e;
	const struct rtc_dir *d;
	struct dst_entry *dst;

	*dp = NULL;
	e = rhashtable_lookup(&rn->ht, &ct, rtc_params);
	*ep = e;
	if (!e)
		return NULL;
	/*
	 * No check that @e was recorded for this incarnation of the recycled
	 * nf_conn: the key holds the family and every input the route
	 * depends on.
	 */
	d = &e->dir[dir];
	*dp = d;
	dst = READ_ONCE(d->dst);
	if (!dst || !rtc_key_match(&d->key, skb, ct, in, pf))
		return NULL;
	return rtc_dir_dst(rn, d, dst, pf);
}

/* May later packets with the inputs of @skb be given @dst straight away? */
static bool rtc_dst_attachable(const struct sk_buff *skb,
			       const struct dst_entry *dst, u8 pf)
{
	if (dst->error || dst->lwtstate || dst_xfrm(dst) ||
	    dst->flags & (DST_FAKE_RTABLE | DST_METADATA))
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

/*
 * Whether every packet of a connection direction gets one multipath hash:
 * the L3 and L4 policies hash what the key holds (addresses, flow label,
 * protocol, ports); the inner-header and custom policies (2, 3) may hash
 * the headers of a tunnel's inner flows, which differ packet by packet.
 */
static bool rtc_mp_hash_per_flow(const struct net *net, u8 pf)
{
	if (pf == NFPROTO_IPV6)
		return ip6_multipath_hash_policy(net) <= 1;
#ifdef CONFIG_IP_ROUTE_MULTIPATH
	return READ_ONCE(net->ipv4.sysctl_fib_multipath_hash_policy) <= 1;
#else
	return true;
#endif
}

/*
 * Recording @fresh for @ct/@dir replaces @old (recorded for the connection):
 * may it, and how many records with new inputs does the window then hold?
 * A stale route (same inputs) or a first record always may.
 */
static bool rtc_churn_ok(const struct rtc_dir *old, struct rtc_dir *fresh)
{
	if (!old->dst || !memcmp(&old->key, &fresh->key, sizeof(fresh->key)))
		return true;
	if ((s32)(fresh->stamp - old->stamp) >= RTC_CHURN_WINDOW) {
		fresh->churn = 0;	/* a new window */
		return true;
	}
	if (old->churn + 1 >= RTC_CHURN_BURST)
		return false;
	fresh->churn = old->churn + 1;
	fresh->stamp = old->stamp;	/* the window runs from its first */
	return true;
}

/*
 * Inserts are refused for lack of room: bring the next reclaim slice in to
 * the next jiffy. The bit keeps a flood of refused inserts to one timer
 * change; the worker clears it.
 */
static void rtc_gc_kick(struct rtc_net *rn)
{
	if (!test_and_set_bit(RTC_KICK_SLICE, &rn->gc_kicked))
		mod_delayed_work(system_power_efficient_wq, &rn->gc_work, 1);
}

/* An entry, charged to the memory cgroup of the netns's creator. */
static struct rtc_entry *rtc_entry_alloc(const struct rtc_net *rn)
{
	struct rtc_entry *n;
#ifdef CONFIG_MEMCG
	struct mem_cgroup *old = set_active_memcg(rn->memcg);

	n = kmem_cache_zalloc(rtc_cachep, GFP_ATOMIC | __GFP_ACCOUNT);
	set_active_memcg(old);
#else
	n = kmem_cache_zalloc(rtc_cachep, GFP_ATOMIC);
#endif
	return n;
}

/* Record @fresh (its dst, not yet held) for @ct/@dir; under RCU. */
static void rtc_store(struct rtc_net *rn, const struct nf_conn *ct,
		      enum ip_conntrack_dir dir, struct rtc_dir *fresh)
{
	struct rtc_entry *e, *n;
	bool owned;
	int err;

	e = rhashtable_lookup(&rn->ht, &ct, rtc_params);
	owned = e && rtc_owns(e, ct);
	fresh->stamp = (u32)jiffies;
	if (owned && !rtc_churn_ok(&e->dir[dir], fresh)) {
		/* routed (the dst stays attached), not recorded */
		RTC_STAT_INC(rn, churn_limited);
		return;
	}
	if (!e && atomic_read(&rn->count) >= nf_conntrack_count(rn->net)) {
		/* never more entries than live connections: reclaim first */
		RTC_STAT_INC(rn, insert_failed);
		rtc_gc_kick(rn);
		return;
	}
	if (!dst_hold_safe(fresh->dst))
		return;
	n = rtc_entry_alloc(rn);
	if (!n) {
		dst_release(fresh->dst);
		RTC_STAT_INC(rn, insert_failed);
		return;
	}
	n->ct = ct;
	n->tuple[IP_CT_DIR_ORIGINAL] = ct->tuplehash[IP_CT_DIR_ORIGINAL].tuple;
	n->tuple[IP_CT_DIR_REPLY] = ct->tuplehash[IP_CT_DIR_REPLY].tuple;
	n->zone = *nf_ct_zone(ct);
	n->used = fresh->stamp;
	n->dir[dir] = *fresh;
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

/*
 * A miss: route @skb now, as ip_rcv_finish()/ip6_rcv_finish() would right
 * after this hook (the same function, the same inputs), leave the result
 * attached so they do not route it again, and record it under @key.
 */
static noinline void rtc_route(struct rtc_net *rn, struct sk_buff *skb,
			       const struct nf_conn *ct,
			       enum ip_conntrack_dir dir,
			       const struct rtc_key *key,
			       const struct nf_hook_state *state)
{
	struct rtc_dir fresh = { .key = *key };
	/* before the lookup: a change during it makes the entry stale */
	u32 mp_gen = atomic_read(&rn->mp_gen);
	unsigned int seq = read_seqcount_begin(&rn->dev_seq);
	struct dst_entry *dst;
	int err;

	if (state->pf == NFPROTO_IPV4) {
		const struct iphdr *iph = ip_hdr(skb);

		err = ip_route_input_noref(skb, iph->daddr, iph->saddr,
					   iph->tos, state->in);
		if (err) {
			/* the kernel routes it again and drops it, counted */
			skb_dst_drop(skb);
			return;
		}
		fresh.multipath = IPCB(skb)->flags & IPSKB_MULTIPATH;
	} else {
		if (!ipv6_stub->ipv6_route_input)
			return;
		/* error routes are attached too and handled by the kernel */
		ipv6_stub->ipv6_route_input(skb);
		fresh.multipath = IP6CB(skb)->flags & IP6SKB_MULTIPATH;
	}
	dst = skb_dst(skb);
	if (!dst)
		return;
	fresh.dst = dst;
	fresh.attach = rtc_dst_attachable(skb, dst, state->pf) &&
		       (!fresh.multipath ||
			rtc_mp_hash_per_flow(state->net, state->pf));
	if (state->pf == NFPROTO_IPV6)
		fresh.cookie = rt6_get_cookie((const struct rt6_info *)dst);
	fresh.obkt = RTC_DEV_BKT(dst->dev->ifindex);
	fresh.gen = rtc_dir_gen(rn, key, fresh.obkt, false);
	/* a device changed during the lookup: routed, not recorded */
	if (read_seqcount_retry(&rn->dev_seq, seq))
		return;
	if (fresh.multipath)
		fresh.gen += mp_gen;
	rtc_store(rn, ct, dir, &fresh);
}

/* A miss: count it (@d: the entry's direction, if any), route, record. */
static noinline void rtc_miss(struct rtc_net *rn, struct sk_buff *skb,
			      const struct nf_conn *ct,
			      enum ip_conntrack_dir dir, const struct rtc_dir *d,
			      const struct nf_hook_state *state)
{
	struct rtc_key key;

	rtc_key_of(&key, skb, ct, state->in, state->pf);
	RTC_STAT_INC(rn, misses);
	if (d && d->dst) {
		if (!memcmp(&d->key, &key, sizeof(key)))
			RTC_STAT_INC(rn, stale);
		else if (d->key.iif != key.iif)
			RTC_STAT_INC(rn, wrong_iif);
	}
	rtc_route(rn, skb, ct, dir, &key, state);
}

static __always_inline unsigned int
rtc_prerouting(struct rtc_net *rn, struct sk_buff *skb,
	       const struct nf_hook_state *state, u8 pf)
{
	const struct net_device *in = state->in;
	const struct rtc_dir *d;
	enum ip_conntrack_dir dir;
	struct dst_entry *dst;
	struct rtc_entry *e;
	struct nf_conn *ct;
	u32 now;

	if (skb_dst(skb))
		return NF_ACCEPT;
	ct = rtc_skb_ct(skb, &dir);
	if (!ct || !rtc_skb_ok(skb, in, pf) || !READ_ONCE(rn->enabled))
		return NF_ACCEPT;

	dst = rtc_lookup(rn, skb, ct, dir, in, pf, &e, &d);
	if (unlikely(!dst)) {
		rtc_miss(rn, skb, ct, dir, d, state);
		return NF_ACCEPT;
	}
	if (unlikely(!d->attach))	/* the kernel's own path, as without us */
		return NF_ACCEPT;
	/* as the route lookup would: no list-receive route hint for ECMP */
	if (d->multipath) {
		if (pf == NFPROTO_IPV4)
			IPCB(skb)->flags |= IPSKB_MULTIPATH;
		else
			IP6CB(skb)->flags |= IP6SKB_MULTIPATH;
	}
	/* See the comment at the top: the dst outlives the RCU section. */
	skb_dst_set_noref(skb, dst);
	RTC_STAT_INC(rn, hits);
	/* alive: reclaim skips the lookup (written a few times a second) */
	now = (u32)jiffies;
	if (unlikely(now - READ_ONCE(e->used) >= RTC_USED_RECENTLY / 4))
		WRITE_ONCE(e->used, now);
	return NF_ACCEPT;
}

static unsigned int rtc_prerouting4(void *priv, struct sk_buff *skb,
				    const struct nf_hook_state *state)
{
	return rtc_prerouting(priv, skb, state, NFPROTO_IPV4);
}

static unsigned int rtc_prerouting6(void *priv, struct sk_buff *skb,
				    const struct nf_hook_state *state)
{
	return rtc_prerouting(priv, skb, state, NFPROTO_IPV6);
}

bool nf_conntrack_rtcache_cached(struct net *net, const struct sk_buff *skb,
				 const struct net_device *in, u8 pf)
{
	struct rtc_net *rn = rtc_pernet(net);
	const struct rtc_dir *d;
	enum ip_conntrack_dir dir;
	struct rtc_entry *e;
	struct nf_conn *ct;

	if (pf != NFPROTO_IPV4 && pf != NFPROTO_IPV6)
		return false;
	ct = rtc_skb_ct(skb, &dir);
	if (!ct || !rtc_skb_ok(skb, in, pf))
		return false;
	if (READ_ONCE(rn->dead) || !READ_ONCE(rn->enabled))
		return false;
	if (pf == NFPROTO_IPV4)
		return rtc_lookup(rn, skb, ct, dir, in, NFPROTO_IPV4, &e, &d) &&
		       d->attach;
	return rtc_lookup(rn, skb, ct, dir, in, NFPROTO_IPV6, &e, &d) &&
	       d->attach;
}
EXPORT_SYMBOL_GPL(nf_conntrack_rtcache_cached);

/* Registered per netns with priv = its struct rtc_net (rtc_net_init). */
static const struct nf_hook_ops rtc_hook_ops[] = {
	{
		.hook		= rtc_prerouting4,
		.pf		= NFPROTO_IPV4,
		.hooknum	= NF_INET_PRE_ROUTING,
		.priority	= NF_IP_PRI_LAST,
	},
	{
		.hook		= rtc_prerouting6,
		.pf		= NFPROTO_IPV6,
		.hooknum	= NF_INET_PRE_ROUTING,
		.priority	= NF_IP6_PRI_LAST,
	},
};

/* ---- table walks: flush, netdev events, reclaim ------------------------------ */

enum rtc_walk_mode { RTC_WALK_FLUSH, RTC_WALK_STALE };

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

#if IS_ENABLED(CONFIG_IPV6) && NFILR_IP6_DST_CHECK_INLINE
/*
 * Does the inline check agree with the kernel's ip6_dst_check() on @d?
 * Validity only ever goes from valid to stale, so the inline verdict is
 * taken first and, when the kernel says stale, again after it: a route
 * that went stale in between is no disagreement.
 */
static bool rtc_ip6_check_agrees(const struct rtc_dir *d)
{
	int inl = rtc_ip6_pcpu_check(d->dst, d->cookie);
	bool kern;

	if (inl < 0)
		return true;
	kern = dst_check(d->dst, d->cookie);
	if (kern)
		return inl == 1;
	return rtc_ip6_pcpu_check(d->dst, d->cookie) == 0;
}
#endif

static bool rtc_entry_stale(const struct rtc_net *rn, const struct rtc_entry *e)
{
	u8 pf = e->tuple[IP_CT_DIR_ORIGINAL].src.l3num;
	int i;

	for (i = 0; i < IP_CT_DIR_MAX; i++) {
		const struct rtc_dir *d = &e->dir[i];

		if (!d->dst)
			continue;
#if IS_ENABLED(CONFIG_IPV6) && NFILR_IP6_DST_CHECK_INLINE
		/* a kernel whose ip6_dst_check() changed: fail loudly */
		if (pf == NFPROTO_IPV6 && d->dst->ops->family == AF_INET6)
			WARN_ONCE(!rtc_ip6_check_agrees(d),
				  "nf_conntrack_rtcache: the inline ip6_dst_check() disagrees with this kernel's (see compat.h)\n");
#endif
		if (!rtc_dir_dst(rn, d, d->dst, pf))
			return true;
	}
	return false;
}

static void rtc_walk(struct rtc_net *rn, enum rtc_walk_mode mode)
{
	unsigned int seen = 0, flushed = 0;
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
		case RTC_WALK_STALE:
			if (rtc_entry_stale(rn, e))
				flushed += rtc_unlink(rn, e);
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
}

/*
 * One slice of the reclaim pass: continue the walk where the last slice
 * stopped, unlink entries of connections that are gone and entries whose
 * routes went stale (everything while the cache is switched off), checking
 * at most @max_checks entries. Returns true when the pass reached the end
 * of the table.
 */
static bool rtc_gc_slice(struct rtc_net *rn, unsigned int max_checks,
			 bool *mostly_dead)
{
	unsigned int visits = 0, checks = 0;
	unsigned int flushed = 0, reclaimed = 0, stale = 0;
	struct rhashtable_iter *iter = &rn->gc_iter;
	bool enabled = READ_ONCE(rn->enabled);
	u32 now = (u32)jiffies;
	struct rtc_entry *e;

	rhashtable_walk_start(iter);
	while (visits < RTC_GC_VISITS && checks < max_checks) {
		e = rhashtable_walk_next(iter);
		if (!e)
			break;
		if (IS_ERR(e)) {	/* -EAGAIN: resized, the walk restarts */
			if (PTR_ERR(e) == -EAGAIN)
				continue;
			e = NULL;
			break;
		}
		visits++;
		if (!enabled) {
			flushed += rtc_unlink(rn, e);
			continue;
		}
		if (now - READ_ONCE(e->used) < RTC_USED_RECENTLY)
			continue;
		checks++;
		if (rtc_entry_dead(rn, e))
			reclaimed += rtc_unlink(rn, e);
		else if (rtc_entry_stale(rn, e))
			stale += rtc_unlink(rn, e);
	}
	rhashtable_walk_stop(iter);

	RTC_STAT_ADD(rn, flushes, flushed);
	RTC_STAT_ADD(rn, reclaimed, reclaimed);
	RTC_STAT_ADD(rn, stale, stale);
	*mostly_dead = checks >= RTC_GC_CHECKS / 2 && reclaimed * 2 > checks;
	return !e;
}

static void rtc_gc_work(struct work_struct *work)
{
	struct rtc_net *rn = container_of(to_delayed_work(work),
					  struct rtc_net, gc_work);
	unsigned long delay = RTC_GC_SLICE;
	bool kicked, dead;

	if (READ_ONCE(rn->dead))
		return;
	/* a device changed: release the references of what it made stale */
	if (test_and_clear_bit(RTC_KICK_WALK, &rn->gc_kicked))
		rtc_walk(rn, RTC_WALK_STALE);
	kicked = test_and_clear_bit(RTC_KICK_SLICE, &rn->gc_kicked) ||
		 rn->gc_dead;
	if (rtc_gc_slice(rn, kicked ? RTC_GC_CHECKS_KICKED : RTC_GC_CHECKS,
			 &dead)) {
		/* the pass is over; the next starts from the table's start */
		rhashtable_walk_exit(&rn->gc_iter);
		rhashtable_walk_enter(&rn->ht, &rn->gc_iter);
		delay = rn->gc_pass_start + RTC_GC_INTERVAL - jiffies;
		if ((long)delay < RTC_GC_SLICE)
			delay = RTC_GC_SLICE;
		rn->gc_pass_start = jiffies + delay;
	}
	rn->gc_dead = dead;
	if (dead)
		delay = 1;
	if (!atomic_read(&rn->count) || READ_ONCE(rn->dead))
		return;
	/* a kick that came during the slice keeps its one-jiffy delay */
	if (!rn->gc_kicked)
		queue_delayed_work(system_power_efficient_wq, &rn->gc_work,
				   delay);
}

/*
 * A device went down, changed its carrier or is being unregistered: the
 * routes recorded through it (output or input) are stale from now on, at
 * the cost of one generation store, whatever the table's size. The
 * references they hold are released by the worker's walk, without RTNL
 * (an unregistration waits for them in netdev_run_todo(), RTNL released).
 * Runs after the kernel's own notifiers (registered earlier at the same
 * priority) changed the routes: a record whose lookup ran before the
 * change sees dev_seq move.
 */
static int rtc_netdev_event(struct notifier_block *nb, unsigned long event,
			    void *ptr)
{
	struct net_device *dev = netdev_notifier_info_to_dev(ptr);
	struct rtc_net *rn;
	u32 *gen;

	if ((event != NETDEV_DOWN && event != NETDEV_UNREGISTER &&
	     event != NETDEV_CHANGE) || READ_ONCE(rtc_unloading))
		return NOTIFY_DONE;
	/* RTNL held: rtc_net_exit waits for it before stopping the worker */
	rn = rtc_pernet(dev_net(dev));
	if (READ_ONCE(rn->dead))
		return NOTIFY_DONE;
	gen = &rn->dev_gen[RTC_DEV_BKT(dev->ifindex)];
	/* readers run in softirq: none may spin on this CPU's open write */
	local_bh_disable();
	write_seqcount_begin(&rn->dev_seq);
	WRITE_ONCE(*gen, *gen + 1);
	write_seqcount_end(&rn->dev_seq);
	local_bh_enable();
	/* a carrier that came back leaves nothing to release */
	if (!atomic_read(&rn->count) ||
	    (event == NETDEV_CHANGE && netif_carrier_ok(dev)))
		return NOTIFY_DONE;
	if (!test_and_set_bit(RTC_KICK_WALK, &rn->gc_kicked))
		mod_delayed_work(system_power_efficient_wq, &rn->gc_work, 0);
	return NOTIFY_DONE;
}

static struct notifier_block rtc_netdev_nb = {
	.notifier_call = rtc_netdev_event,
};

/*
 * ECMP entries were recorded for one choice among the nexthops; the choice
 * moves without the route changing when the multipath hash changes
 * (policy, fields, 6.11+: seed) or, with IPv4 fib_multipath_use_neigh, when
 * a gateway's neighbour becomes (in)valid. Multipath entries recorded
 * before are then stale (rtc_dir_dst) and re-recorded on their next packet.
 * (IPv6 forwarding does not look at neighbour states in its choice.) Runs
 * in atomic context: one increment, no walk.
 */
static int rtc_netevent(struct notifier_block *nb, unsigned long event,
			void *ptr)
{
	struct net *net;

	switch (event) {
	case NETEVENT_IPV4_MPATH_HASH_UPDATE:
	case NETEVENT_IPV6_MPATH_HASH_UPDATE:
		net = ptr;
		break;
	case NETEVENT_NEIGH_UPDATE: {
		struct neighbour *n = ptr;

		if (n->tbl->family != AF_INET)
			return NOTIFY_DONE;
		net = dev_net(n->dev);
#ifdef CONFIG_IP_ROUTE_MULTIPATH
		if (!READ_ONCE(net->ipv4.sysctl_fib_multipath_use_neigh))
			return NOTIFY_DONE;
		break;
#else
		return NOTIFY_DONE;
#endif
	}
	default:
		return NOTIFY_DONE;
	}
	atomic_inc(&rtc_pernet(net)->mp_gen);
	return NOTIFY_DONE;
}

static struct notifier_block rtc_netevent_nb = {
	.notifier_call = rtc_netevent,
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
		rtc_walk(rn, RTC_WALK_FLUSH);
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
	rtc_walk(rn, RTC_WALK_FLUSH);
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

	table = kmemdup(rtc_sysctl_table, sizeof(rtc_sysctl_table),
			GFP_KERNEL_ACCOUNT);
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
		seq_puts(seq, "entries hits misses inserts stale flushes reclaimed wrong_iif insert_failed churn_limited\n");
		return 0;
	}
	seq_printf(seq, "%08x %08x %08x %08x %08x %08x %08x %08x %08x %08x\n",
		   atomic_read(&rn->count), st->hits, st->misses, st->inserts,
		   st->stale, st->flushes, st->reclaimed, st->wrong_iif,
		   st->insert_failed, st->churn_limited);
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
	atomic_set(&rn->mp_gen, 0);
	memset(rn->dev_gen, 0, sizeof(rn->dev_gen));
	seqcount_init(&rn->dev_seq);
	INIT_DELAYED_WORK(&rn->gc_work, rtc_gc_work);
	/*
	 * Entries are allocated in softirq context, where no task's cgroup
	 * applies: they are charged to the cgroup of the task that created the
	 * netns (for the netns that exist when the module loads: the loader's;
	 * for init_net: nobody's).
	 */
	rn->memcg = NULL;
#ifdef CONFIG_MEMCG
	if (!net_eq(net, &init_net))
		rn->memcg = get_mem_cgroup_from_mm(current->mm);
#endif

	rn->stat = alloc_percpu_gfp(struct rtc_stat, GFP_KERNEL_ACCOUNT);
	if (!rn->stat) {
		err = -ENOMEM;
		goto err_memcg;
	}
	err = rhashtable_init(&rn->ht, &rtc_params);
	if (err)
		goto err_stat;
	rhashtable_walk_enter(&rn->ht, &rn->gc_iter);
	rn->gc_pass_start = jiffies;
	rn->gc_kicked = 0;
	rn->gc_dead = false;
	err = rtc_sysctl_init(rn);
	if (err)
		goto err_ht;
	if (!proc_create_net("nf_conntrack_rtcache", 0444, net->proc_net_stat,
			     &rtc_seq_ops, sizeof(struct seq_net_private))) {
		err = -ENOMEM;
		goto err_sysctl;
	}
	BUILD_BUG_ON(ARRAY_SIZE(rn->ops) != ARRAY_SIZE(rtc_hook_ops));
	BUILD_BUG_ON(NFPROTO_IPV4 != AF_INET || NFPROTO_IPV6 != AF_INET6);
	memcpy(rn->ops, rtc_hook_ops, sizeof(rn->ops));
	rn->ops[0].priv = rn;
	rn->ops[1].priv = rn;
	err = nf_register_net_hooks(net, rn->ops, ARRAY_SIZE(rn->ops));
	if (err)
		goto err_proc;
	return 0;

err_proc:
	remove_proc_entry("nf_conntrack_rtcache", net->proc_net_stat);
err_sysctl:
	rtc_sysctl_exit(rn);
err_ht:
	rhashtable_walk_exit(&rn->gc_iter);
	rhashtable_destroy(&rn->ht);
err_stat:
	free_percpu(rn->stat);
err_memcg:
#ifdef CONFIG_MEMCG
	mem_cgroup_put(rn->memcg);
#endif
	return err;
}

static void __net_exit rtc_net_pre_exit(struct net *net)
{
	struct rtc_net *rn = rtc_pernet(net);

	/* a grace period passes before .exit: lookups that saw !dead are done */
	WRITE_ONCE(rn->dead, true);
	nf_unregister_net_hooks(net, rn->ops, ARRAY_SIZE(rn->ops));
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
	/*
	 * netdev notifiers run under RTNL and queue the worker unless they
	 * see dead (set in .pre_exit): once RTNL was ours, none will
	 */
	rtnl_lock();
	rtnl_unlock();
	cancel_delayed_work_sync(&rn->gc_work);
	rhashtable_walk_exit(&rn->gc_iter);
	rhashtable_free_and_destroy(&rn->ht, rtc_destroy_entry, NULL);
	atomic_set(&rn->count, 0);
	free_percpu(rn->stat);
}

/*
 * Entries unlinked before .exit (replaced on the packet path, reclaimed by
 * a walk that was running when the netns began to go, dropped for a device
 * being unregistered) are freed by RCU callbacks that release their dst
 * references. Those dsts include IPv6's per-netns ip6_null_entry (recorded
 * for unreachable destinations), which ip6_route_net_exit() frees, and
 * count in per-netns dst_ops counters it destroys; IPv6's exit runs after
 * this one (it registered first), with no RCU barrier in between. Wait for
 * the callbacks here, once per batch of namespaces.
 */
static void __net_exit rtc_net_exit_batch(struct list_head *net_exit_list)
{
	struct net *net;

	rcu_barrier();
#ifdef CONFIG_MEMCG
	/* the entries are freed: nothing is charged any more */
	list_for_each_entry(net, net_exit_list, exit_list) {
		struct rtc_net *rn = rtc_pernet(net);

		mem_cgroup_put(rn->memcg);
		rn->memcg = NULL;
	}
#endif
}

static struct pernet_operations rtc_net_ops = {
	.init		= rtc_net_init,
	.pre_exit	= rtc_net_pre_exit,
	.exit		= rtc_net_exit,
	.exit_batch	= rtc_net_exit_batch,
	.id		= &rtc_net_id,
	.size		= sizeof(struct rtc_net),
};

static int __init rtc_init(void)
{
	int err;

	rtc_cachep = kmem_cache_create("nf_conntrack_rtcache",
				       sizeof(struct rtc_entry), 0, SLAB_ACCOUNT,
				       NULL);
	if (!rtc_cachep)
		return -ENOMEM;
	err = register_pernet_subsys(&rtc_net_ops);
	if (err)
		goto err_cache;
	err = register_netdevice_notifier(&rtc_netdev_nb);
	if (err)
		goto err_pernet;
	err = register_netevent_notifier(&rtc_netevent_nb);
	if (err)
		goto err_netdev;
	return 0;

err_netdev:
	WRITE_ONCE(rtc_unloading, true);
	unregister_netdevice_notifier(&rtc_netdev_nb);
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
	unregister_netevent_notifier(&rtc_netevent_nb);
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
