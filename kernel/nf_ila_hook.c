// SPDX-License-Identifier: GPL-2.0-only
/*
 * nf_ila_hook.c - ILA / NPTv6 translation in netfilter hooks of its own.
 *
 * `-j ILA` pays for the ruleset around it: a base chain, rule evaluation,
 * the target call. A direct hook pays one indirect call: each hook created
 * here (ilactl hook add, generic netlink family ILA_HOOK, <linux/ila_hook.h>)
 * registers its own nf_hook_ops in its netns and runs the same per-packet
 * translation as the target (ila_xlat.h): a static prefix pair in any
 * checksum mode, or a lookup in an nf_ila_map map, ICMPv6 errors included.
 *
 * Lifetime: a hook belongs to its netns list and is changed only under the
 * per-netns mutex. Deleting it unregisters the ops and waits for packets
 * still inside it (synchronize_net) before freeing it and dropping its map
 * reference; netns exit and rmmod delete every hook the same way.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/ctype.h>
#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/netfilter.h>
#include <linux/netfilter_ipv6.h>
#include <linux/percpu.h>
#include <linux/slab.h>
#include <net/genetlink.h>
#include <net/net_namespace.h>
#include <net/netns/generic.h>
#include <linux/ila_hook.h>
#include <linux/ila_map.h>

#include "compat.h"
#include "ila_xlat.h"
#include "nf_ila_map.h"

#define NF_ILA_HOOK_MAX_PER_NET	256

static_assert(ILA_MAP_CSUM_MAX + 1 == ILA_MODE_COUNT);

struct nf_ila_hook_pcpu {
	u64	packets;
	u64	bytes;
	u64	misses;
	u64	drops;
};

struct nf_ila_hook {
	struct list_head		list;	/* nf_ila_hook_net.hooks */
	struct nf_hook_ops		ops;	/* .priv = this hook */
	struct ila_xlat			xlat;	/* static: the rule; map: the prefix */
	struct nf_ila_map		*map;	/* NULL: static prefix pair */
	struct nf_ila_hook_pcpu __percpu *stats;
	u8				point;	/* enum ila_hook_point */
	u8				translate;
	u8				pfx_len;
	u16				src_sum;	/* ila_sum16(src_pfx, 4) */
	u8				csum_mode;
	u8				dir;
	bool				miss_drop;
	bool				miss_notify;
	u8				src_pfx[16];
	u8				dst_pfx[16];
	char				name[ILA_HOOK_NAMSIZ];
	char				map_name[ILA_MAP_NAMSIZ];
};

struct nf_ila_hook_net {
	struct mutex		lock;
	struct list_head	hooks;
	unsigned int		count;
};

static unsigned int nf_ila_hook_net_id __read_mostly;
static struct genl_family nf_ila_hook_family;

static struct nf_ila_hook_net *nf_ila_hook_pernet(struct net *net)
{
	return net_generic(net, nf_ila_hook_net_id);
}

static const unsigned int nf_ila_hook_nf[__ILA_HOOK_POINT_MAX] = {
	[ILA_HOOK_PREROUTING]	= NF_INET_PRE_ROUTING,
	[ILA_HOOK_INPUT]	= NF_INET_LOCAL_IN,
	[ILA_HOOK_OUTPUT]	= NF_INET_LOCAL_OUT,
	[ILA_HOOK_POSTROUTING]	= NF_INET_POST_ROUTING,
};

static bool nf_ila_hook_point_src(u8 point)
{
	return point == ILA_HOOK_INPUT || point == ILA_HOOK_POSTROUTING;
}

/* ---- packet path ----------------------------------------------------------- */

/*
 * --map: the translation of the address at @addr (inside the hook's
 * prefix) to the locator its identifier maps to; false on a miss.
 */
static bool nf_ila_hook_map_xlat(const struct nf_ila_hook *h, const u8 *addr,
				 struct ila_xlat *mx)
{
	const struct nf_ila_map_entry *e;
	__be64 ident;

	memcpy(&ident, addr + 8, sizeof(ident));
	e = nf_ila_map_lookup(h->map, ident, h->miss_notify);
	if (!e)
		return false;
	ila_xlat_init64s(mx, addr, (const u8 *)&e->locator, e->loc_sum,
			 e->csum_mode, h->translate, h->dir);
	return true;
}

/*
 * --map and an ICMPv6 error whose outer address is not in the prefix (the
 * router's own Packet Too Big): the quoted address's identifier decides.
 */
static const u8 *nf_ila_hook_quoted(const struct nf_ila_hook *h,
				    const struct sk_buff *skb, u8 *buf)
{
	const unsigned int off = skb_network_offset(skb) + sizeof(struct ipv6hdr);
	const struct ipv6hdr *ip6h = ipv6_hdr(skb);
	const u8 *type, *qaddr;
	u8 _type;

	if (ip6h->nexthdr != IPPROTO_ICMPV6)
		return NULL;
	type = skb_header_pointer(skb, off, sizeof(_type), &_type);
	if (!type || (*type & ICMPV6_INFOMSG_MASK))
		return NULL;
	qaddr = skb_header_pointer(skb, off + ILA_ICMP6_HLEN + h->xlat.qoff,
				   16, buf);
	return qaddr && ila_match(&h->xlat, qaddr) ? qaddr : NULL;
}

/*
 * The general case, out of line so that the fast path keeps a small stack
 * frame: ila_xlat_skb() with x (outer: the packet's own address is in the
 * prefix) and the counters.
 */
static noinline unsigned int nf_ila_hook_general(const struct nf_ila_hook *h,
						 struct sk_buff *skb,
						 const struct ila_xlat *x,
						 bool outer)
{
	const unsigned int len = skb->len;

	if (unlikely(!ila_xlat_skb(skb, x, outer && h->map))) {
		this_cpu_inc(h->stats->drops);
		return NF_DROP;
	}
	if (outer) {
		this_cpu_inc(h->stats->packets);
		this_cpu_add(h->stats->bytes, len);
	}
	return NF_ACCEPT;
}

/*
 * A map hook and a packet whose own address is not in the prefix: an
 * ICMPv6 error quoting one that is (the router's own Packet Too Big) is
 * translated with the entry of the quoted identifier.
 */
static noinline unsigned int nf_ila_hook_map_quoted(const struct nf_ila_hook *h,
						    struct sk_buff *skb)
{
	struct ila_xlat mx;
	const u8 *key;
	u8 qbuf[16];

	key = nf_ila_hook_quoted(h, skb, qbuf);
	if (!key)
		return NF_ACCEPT;
	if (!nf_ila_hook_map_xlat(h, key, &mx)) {
		this_cpu_inc(h->stats->misses);
		return NF_ACCEPT;
	}
	return nf_ila_hook_general(h, skb, &mx, false);
}

/* A static prefix pair (no map) in a neutral mode: no call on the common path. */
static unsigned int nf_ila_hook_static_fn(void *priv, struct sk_buff *skb,
					  const struct nf_hook_state *state)
{
	const struct nf_ila_hook *h = priv;
	const struct ipv6hdr *ip6h = ipv6_hdr(skb);
	const unsigned int len = skb->len;

	if (!ila_match(&h->xlat, (const u8 *)ip6h + h->xlat.aoff)) {
		/* only an ICMPv6 error (its quoted header) can need work */
		if (likely(ip6h->nexthdr == IPPROTO_TCP ||
			   ip6h->nexthdr == IPPROTO_UDP))
			return NF_ACCEPT;
		return nf_ila_hook_general(h, skb, &h->xlat, false);
	}
	if (likely(ila_xlat_skb_fast(skb, &h->xlat))) {
		this_cpu_inc(h->stats->packets);
		this_cpu_add(h->stats->bytes, len);
		return NF_ACCEPT;
	}
	return nf_ila_hook_general(h, skb, &h->xlat, true);
}

/* A packet that could not be made writable. */
static noinline unsigned int nf_ila_hook_drop(const struct nf_ila_hook *h)
{
	this_cpu_inc(h->stats->drops);
	return NF_DROP;
}

/* Packets and bytes translated: the common path's counters. */
static __always_inline void nf_ila_hook_count(const struct nf_ila_hook *h,
					      const struct sk_buff *skb)
{
	struct nf_ila_hook_pcpu __percpu *stats = h->stats;

	this_cpu_inc(stats->packets);
	this_cpu_add(stats->bytes, skb->len);
}

/*
 * The locator-only modes (adjust-transport, no-action; the default): the
 * translation is the prefix's new upper 64 bits and the precomputed sum
 * change (ila_xlat_skb_loc()). Instances for each mode and for /64
 * prefixes (the new upper 64 bits are the destination prefix), so that
 * both are constants.
 */
static __always_inline unsigned int
nf_ila_hook_loc(const struct nf_ila_hook *h, struct sk_buff *skb, bool adjust,
		bool pfx64)
{
	const struct ila_xlat *x = &h->xlat;
	u64 loc = ila_get64(skb_network_header(skb) + x->aoff);
	unsigned int coff;

	if (!ila_match64(x, loc)) {
		if (likely(ipv6_hdr(skb)->nexthdr == IPPROTO_TCP ||
			   ipv6_hdr(skb)->nexthdr == IPPROTO_UDP))
			return NF_ACCEPT;
		return nf_ila_hook_general(h, skb, x, false);
	}
	coff = ila_loc_coff(skb);
	if (unlikely(!coff))
		return nf_ila_hook_general(h, skb, x, true);
	if (unlikely(!ila_loc_unshare(skb, coff)))
		return nf_ila_hook_drop(h);
	loc = pfx64 ? ila_get64(x->dst) : ila_xlat_loc(x, loc);
	if (unlikely(!ila_xlat_skb_loc(skb, coff, x->aoff, loc, x->diff, adjust)))
		return nf_ila_hook_general(h, skb, x, true);
	nf_ila_hook_count(h, skb);
	return NF_ACCEPT;
}

static unsigned int nf_ila_hook_static_at_fn(void *priv, struct sk_buff *skb,
					     const struct nf_hook_state *state)
{
	return nf_ila_hook_loc(priv, skb, true, false);
}

static unsigned int nf_ila_hook_static_at64_fn(void *priv, struct sk_buff *skb,
					       const struct nf_hook_state *state)
{
	return nf_ila_hook_loc(priv, skb, true, true);
}

static unsigned int nf_ila_hook_static_na_fn(void *priv, struct sk_buff *skb,
					     const struct nf_hook_state *state)
{
	return nf_ila_hook_loc(priv, skb, false, false);
}

static unsigned int nf_ila_hook_static_na64_fn(void *priv, struct sk_buff *skb,
					       const struct nf_hook_state *state)
{
	return nf_ila_hook_loc(priv, skb, false, true);
}

/* A map and a packet whose identifier has no entry. */
static noinline unsigned int nf_ila_hook_map_missed(const struct nf_ila_hook *h,
						    struct sk_buff *skb)
{
	__be64 ident;

	memcpy(&ident, skb_network_header(skb) + h->xlat.aoff + 8,
	       sizeof(ident));
	nf_ila_map_miss(h->map, ident, h->miss_notify);
	this_cpu_inc(h->stats->misses);
	if (!h->miss_drop)
		return NF_ACCEPT;
	this_cpu_inc(h->stats->drops);
	return NF_DROP;
}

/* A map hit that the locator-only path does not take: the general case. */
static noinline unsigned int nf_ila_hook_map_entry(const struct nf_ila_hook *h,
						   struct sk_buff *skb,
						   const struct nf_ila_map_entry *e)
{
	const u8 *addr = skb_network_header(skb) + h->xlat.aoff;
	struct ila_xlat mx;

	ila_xlat_init64s(&mx, addr, (const u8 *)&e->locator, e->loc_sum,
			 e->csum_mode, h->translate, h->dir);
	if (likely(ila_xlat_skb_fast(skb, &mx))) {
		nf_ila_hook_count(h, skb);
		return NF_ACCEPT;
	}
	return nf_ila_hook_general(h, skb, &mx, true);
}

/*
 * A map: the identifier's entry gives the translation of this packet. With
 * a /64 prefix every packet's locator is the prefix, whose sum the hook
 * keeps (pfx64: an instance of its own).
 */
static __always_inline unsigned int
nf_ila_hook_map(const struct nf_ila_hook *h, struct sk_buff *skb, bool pfx64)
{
	const u8 *nh = skb_network_header(skb);
	const u64 a = ila_get64(nh + h->xlat.aoff);
	struct nf_ila_map_entry *e;
	unsigned int coff;
	u16 diff;

	if (!ila_match64(&h->xlat, a)) {
		if (likely(nh[offsetof(struct ipv6hdr, nexthdr)] == IPPROTO_TCP ||
			   nh[offsetof(struct ipv6hdr, nexthdr)] == IPPROTO_UDP))
			return NF_ACCEPT;
		return nf_ila_hook_map_quoted(h, skb);
	}
	e = nf_ila_map_entry_find(h->map,
			    (__force __be64)ila_get64(nh + h->xlat.aoff + 8));
	if (unlikely(!e))
		return nf_ila_hook_map_missed(h, skb);
	nf_ila_map_hit(h->map, e);
	if (unlikely(!ila_mode_loc_only(e->csum_mode)))
		return nf_ila_hook_map_entry(h, skb, e);
	coff = ila_loc_coff(skb);
	if (unlikely(!coff))
		return nf_ila_hook_map_entry(h, skb, e);
	if (unlikely(!ila_loc_unshare(skb, coff)))
		return nf_ila_hook_drop(h);
	diff = pfx64 ? ila_canon16(ila_sub16(e->loc_sum, h->src_sum)) :
		       ila_loc_diff(e->loc_sum, a);
	if (unlikely(!ila_xlat_skb_loc(skb, coff, h->xlat.aoff,
				       (__force u64)e->locator, diff,
				       e->csum_mode == ILA_MODE_ADJUST_TRANSPORT)))
		return nf_ila_hook_map_entry(h, skb, e);
	nf_ila_hook_count(h, skb);
	return NF_ACCEPT;
}

static unsigned int nf_ila_hook_map_fn(void *priv, struct sk_buff *skb,
				       const struct nf_hook_state *state)
{
	return nf_ila_hook_map(priv, skb, false);
}

static unsigned int nf_ila_hook_map64_fn(void *priv, struct sk_buff *skb,
					 const struct nf_hook_state *state)
{
	return nf_ila_hook_map(priv, skb, true);
}

/* ---- lifetime ------------------------------------------------------------ */

static void nf_ila_hook_free(struct nf_ila_hook *h)
{
	if (h->map)
		nf_ila_map_put(h->map);
	free_percpu(h->stats);
	kfree(h);
}

/* Unregister and free every hook on @list (taken off its netns list). */
static void nf_ila_hook_release(struct net *net, struct list_head *list)
{
	struct nf_ila_hook *h, *tmp;

	if (list_empty(list))
		return;
	list_for_each_entry(h, list, list)
		nf_unregister_net_hook(net, &h->ops);
	synchronize_net();	/* no packet is inside one of them any more */
	list_for_each_entry_safe(h, tmp, list, list) {
		list_del(&h->list);
		nf_ila_hook_free(h);
	}
}

static struct nf_ila_hook *nf_ila_hook_find(struct nf_ila_hook_net *hn,
					    const char *name)
{
	struct nf_ila_hook *h;

	list_for_each_entry(h, &hn->hooks, list)
		if (!strcmp(h->name, name))
			return h;
	return NULL;
}

/* ---- generic netlink ------------------------------------------------------- */

static const struct nla_policy nf_ila_hook_policy[ILA_HOOK_A_MAX + 1] = {
	[ILA_HOOK_A_NAME]	= { .type = NLA_NUL_STRING, .len = ILA_HOOK_NAMSIZ - 1 },
	[ILA_HOOK_A_POINT]	= NLA_POLICY_MAX(NLA_U8, __ILA_HOOK_POINT_MAX - 1),
	[ILA_HOOK_A_PRIORITY]	= { .type = NLA_S32 },
	[ILA_HOOK_A_TRANSLATE]	= NLA_POLICY_MAX(NLA_U8, 1),
	[ILA_HOOK_A_SRC_PFX]	= NLA_POLICY_EXACT_LEN(16),
	[ILA_HOOK_A_DST_PFX]	= NLA_POLICY_EXACT_LEN(16),
	[ILA_HOOK_A_PFX_LEN]	= NLA_POLICY_RANGE(NLA_U8, 1, ILA_MAX_PFX_LEN),
	[ILA_HOOK_A_CSUM_MODE]	= NLA_POLICY_MAX(NLA_U8, ILA_MAP_CSUM_MAX),
	[ILA_HOOK_A_DIRECTION]	= NLA_POLICY_MAX(NLA_U8, 1),
	[ILA_HOOK_A_MAP]	= { .type = NLA_NUL_STRING, .len = ILA_MAP_NAMSIZ - 1 },
	[ILA_HOOK_A_MISS_DROP]	= { .type = NLA_FLAG },
	[ILA_HOOK_A_MISS_NOTIFY] = { .type = NLA_FLAG },
};

static bool nf_ila_hook_name_ok(const char *name)
{
	const char *p;

	if (!*name)
		return false;
	for (p = name; *p; p++)
		if (!isalnum(*p) && *p != '_' && *p != '.' && *p != '-')
			return false;
	return true;
}

/* Everything NEWHOOK needs, checked; the hook is filled but not registered. */
static int nf_ila_hook_parse(struct net *net, struct genl_info *info,
			     struct nf_ila_hook *h)
{
	struct nlattr **a = info->attrs;
	struct netlink_ext_ack *ext = info->extack;
	bool src;
	s32 pri;

	if (GENL_REQ_ATTR_CHECK(info, ILA_HOOK_A_NAME) ||
	    GENL_REQ_ATTR_CHECK(info, ILA_HOOK_A_POINT) ||
	    GENL_REQ_ATTR_CHECK(info, ILA_HOOK_A_SRC_PFX) ||
	    GENL_REQ_ATTR_CHECK(info, ILA_HOOK_A_PFX_LEN))
		return -EINVAL;
	nla_strscpy(h->name, a[ILA_HOOK_A_NAME], sizeof(h->name));
	if (!nf_ila_hook_name_ok(h->name)) {
		NL_SET_ERR_MSG_ATTR(ext, a[ILA_HOOK_A_NAME],
				    "hook names are 1-31 characters of A-Z a-z 0-9 _ . -");
		return -EINVAL;
	}
	h->point = nla_get_u8(a[ILA_HOOK_A_POINT]);
	src = nf_ila_hook_point_src(h->point);
	h->translate = src;
	if (a[ILA_HOOK_A_TRANSLATE] &&
	    nla_get_u8(a[ILA_HOOK_A_TRANSLATE]) != h->translate) {
		if (src)
			NL_SET_ERR_MSG_ATTR(ext, a[ILA_HOOK_A_TRANSLATE],
					    "input and postrouting translate the source (translate src)");
		else
			NL_SET_ERR_MSG_ATTR(ext, a[ILA_HOOK_A_TRANSLATE],
					    "prerouting and output translate the destination (translate dst)");
		return -EINVAL;
	}
	pri = src ? ILA_HOOK_PRI_SRC : ILA_HOOK_PRI_DST;
	if (a[ILA_HOOK_A_PRIORITY])
		pri = nla_get_s32(a[ILA_HOOK_A_PRIORITY]);
	if (pri <= NF_IP6_PRI_FIRST || pri >= NF_IP6_PRI_LAST) {
		NL_SET_ERR_MSG_ATTR(ext, a[ILA_HOOK_A_PRIORITY],
				    "priority out of range");
		return -EINVAL;
	}
	h->pfx_len = nla_get_u8(a[ILA_HOOK_A_PFX_LEN]);
	nla_memcpy(h->src_pfx, a[ILA_HOOK_A_SRC_PFX], sizeof(h->src_pfx));
	if (!ila_pfx_host_bits_clear(h->src_pfx, h->pfx_len)) {
		NL_SET_ERR_MSG_ATTR(ext, a[ILA_HOOK_A_SRC_PFX],
				    "src-pfx: bits set after the prefix length");
		return -EINVAL;
	}
	if (a[ILA_HOOK_A_DIRECTION])
		h->dir = nla_get_u8(a[ILA_HOOK_A_DIRECTION]);

	if (a[ILA_HOOK_A_MAP]) {
		if (a[ILA_HOOK_A_DST_PFX] || a[ILA_HOOK_A_CSUM_MODE]) {
			NL_SET_ERR_MSG_ATTR(ext, a[ILA_HOOK_A_MAP],
					    "map replaces dst-pfx and csum-mode");
			return -EINVAL;
		}
		nla_strscpy(h->map_name, a[ILA_HOOK_A_MAP], sizeof(h->map_name));
		h->miss_drop = nla_get_flag(a[ILA_HOOK_A_MISS_DROP]);
		h->miss_notify = nla_get_flag(a[ILA_HOOK_A_MISS_NOTIFY]);
		h->map = nf_ila_map_get(net, h->map_name);
		if (IS_ERR(h->map)) {
			h->map = NULL;
			NL_SET_ERR_MSG_ATTR(ext, a[ILA_HOOK_A_MAP],
					    "no such map in this netns");
			return -ENOENT;
		}
		/* the prefix selects what is looked up: dst unused */
		memcpy(h->dst_pfx, h->src_pfx, sizeof(h->dst_pfx));
	} else {
		if (GENL_REQ_ATTR_CHECK(info, ILA_HOOK_A_DST_PFX))
			return -EINVAL;
		if (a[ILA_HOOK_A_MISS_DROP] || a[ILA_HOOK_A_MISS_NOTIFY]) {
			NL_SET_ERR_MSG_ATTR(ext, a[ILA_HOOK_A_MISS_DROP] ?:
					    a[ILA_HOOK_A_MISS_NOTIFY],
					    "miss needs a map");
			return -EINVAL;
		}
		nla_memcpy(h->dst_pfx, a[ILA_HOOK_A_DST_PFX], sizeof(h->dst_pfx));
		if (!ila_pfx_host_bits_clear(h->dst_pfx, h->pfx_len)) {
			NL_SET_ERR_MSG_ATTR(ext, a[ILA_HOOK_A_DST_PFX],
					    "dst-pfx: bits set after the prefix length");
			return -EINVAL;
		}
		if (a[ILA_HOOK_A_CSUM_MODE])
			h->csum_mode = nla_get_u8(a[ILA_HOOK_A_CSUM_MODE]);
		if (h->dir && h->csum_mode != ILA_MODE_NEUTRAL_MAP) {
			NL_SET_ERR_MSG_ATTR(ext, a[ILA_HOOK_A_DIRECTION],
					    "direction only applies to csum-mode neutral-map or a map");
			return -EINVAL;
		}
	}
	ila_xlat_init(&h->xlat, h->src_pfx, h->dst_pfx, h->pfx_len,
		      h->csum_mode, h->translate, h->dir);

	h->src_sum = ila_sum16(h->src_pfx, 4);
	if (h->map)
		h->ops.hook = h->pfx_len == 64 ? nf_ila_hook_map64_fn :
						 nf_ila_hook_map_fn;
	else if (h->csum_mode == ILA_MODE_ADJUST_TRANSPORT)
		h->ops.hook = h->pfx_len == 64 ? nf_ila_hook_static_at64_fn :
						 nf_ila_hook_static_at_fn;
	else if (h->csum_mode == ILA_MODE_NO_ACTION)
		h->ops.hook = h->pfx_len == 64 ? nf_ila_hook_static_na64_fn :
						 nf_ila_hook_static_na_fn;
	else
		h->ops.hook = nf_ila_hook_static_fn;
	h->ops.pf = NFPROTO_IPV6;
	h->ops.hooknum = nf_ila_hook_nf[h->point];
	h->ops.priority = pri;
	h->ops.priv = h;
	return 0;
}

static void nf_ila_hook_notify(struct genl_info *info,
			       const struct nf_ila_hook *h, u8 cmd);

static int nf_ila_hook_cmd_new(struct sk_buff *skb, struct genl_info *info)
{
	struct net *net = genl_info_net(info);
	struct nf_ila_hook_net *hn = nf_ila_hook_pernet(net);
	struct nf_ila_hook *h;
	int err;

	h = kzalloc(sizeof(*h), GFP_KERNEL);
	if (!h)
		return -ENOMEM;
	h->stats = alloc_percpu(struct nf_ila_hook_pcpu);
	if (!h->stats) {
		kfree(h);
		return -ENOMEM;
	}
	err = nf_ila_hook_parse(net, info, h);
	if (err)
		goto err_free;

	mutex_lock(&hn->lock);
	if (nf_ila_hook_find(hn, h->name)) {
		NL_SET_ERR_MSG_ATTR(info->extack, info->attrs[ILA_HOOK_A_NAME],
				    "hook exists");
		err = -EEXIST;
		goto err_unlock;
	}
	if (hn->count >= NF_ILA_HOOK_MAX_PER_NET) {
		NL_SET_ERR_MSG(info->extack, "too many hooks in this netns");
		err = -ENOSPC;
		goto err_unlock;
	}
	err = nf_register_net_hook(net, &h->ops);
	if (err)
		goto err_unlock;
	list_add_tail(&h->list, &hn->hooks);
	hn->count++;
	nf_ila_hook_notify(info, h, ILA_HOOK_CMD_NEWHOOK);
	mutex_unlock(&hn->lock);
	return 0;

err_unlock:
	mutex_unlock(&hn->lock);
err_free:
	nf_ila_hook_free(h);
	return err;
}

static int nf_ila_hook_cmd_del(struct sk_buff *skb, struct genl_info *info)
{
	struct net *net = genl_info_net(info);
	struct nf_ila_hook_net *hn = nf_ila_hook_pernet(net);
	struct nf_ila_hook *h;
	char name[ILA_HOOK_NAMSIZ];
	LIST_HEAD(gone);

	if (GENL_REQ_ATTR_CHECK(info, ILA_HOOK_A_NAME))
		return -EINVAL;
	nla_strscpy(name, info->attrs[ILA_HOOK_A_NAME], sizeof(name));
	mutex_lock(&hn->lock);
	h = nf_ila_hook_find(hn, name);
	if (!h) {
		mutex_unlock(&hn->lock);
		NL_SET_ERR_MSG_ATTR(info->extack, info->attrs[ILA_HOOK_A_NAME],
				    "no such hook");
		return -ENOENT;
	}
	list_move(&h->list, &gone);
	hn->count--;
	nf_ila_hook_notify(info, h, ILA_HOOK_CMD_DELHOOK);
	nf_ila_hook_release(net, &gone);
	mutex_unlock(&hn->lock);
	return 0;
}

static int nf_ila_hook_fill(struct sk_buff *skb, const struct nf_ila_hook *h,
			    u32 portid, u32 seq, int flags, u8 cmd)
{
	struct nf_ila_hook_pcpu sum = {};
	struct nlattr *nest;
	void *hdr;
	int cpu;

	hdr = genlmsg_put(skb, portid, seq, &nf_ila_hook_family, flags, cmd);
	if (!hdr)
		return -EMSGSIZE;
	for_each_possible_cpu(cpu) {
		const struct nf_ila_hook_pcpu *c = per_cpu_ptr(h->stats, cpu);

		sum.packets += READ_ONCE(c->packets);
		sum.bytes += READ_ONCE(c->bytes);
		sum.misses += READ_ONCE(c->misses);
		sum.drops += READ_ONCE(c->drops);
	}
	if (nla_put_string(skb, ILA_HOOK_A_NAME, h->name) ||
	    nla_put_u8(skb, ILA_HOOK_A_POINT, h->point) ||
	    nla_put_s32(skb, ILA_HOOK_A_PRIORITY, h->ops.priority) ||
	    nla_put_u8(skb, ILA_HOOK_A_TRANSLATE, h->translate) ||
	    nla_put(skb, ILA_HOOK_A_SRC_PFX, 16, h->src_pfx) ||
	    nla_put_u8(skb, ILA_HOOK_A_PFX_LEN, h->pfx_len) ||
	    nla_put_u8(skb, ILA_HOOK_A_DIRECTION, h->dir))
		goto cancel;
	if (h->map) {
		if (nla_put_string(skb, ILA_HOOK_A_MAP, h->map_name) ||
		    (h->miss_drop && nla_put_flag(skb, ILA_HOOK_A_MISS_DROP)) ||
		    (h->miss_notify && nla_put_flag(skb, ILA_HOOK_A_MISS_NOTIFY)))
			goto cancel;
	} else if (nla_put(skb, ILA_HOOK_A_DST_PFX, 16, h->dst_pfx) ||
		   nla_put_u8(skb, ILA_HOOK_A_CSUM_MODE, h->csum_mode)) {
		goto cancel;
	}
	nest = nla_nest_start(skb, ILA_HOOK_A_STATS);
	if (!nest ||
	    nla_put_u64_64bit(skb, ILA_HOOK_STATS_PACKETS, sum.packets, ILA_HOOK_STATS_PAD) ||
	    nla_put_u64_64bit(skb, ILA_HOOK_STATS_BYTES, sum.bytes, ILA_HOOK_STATS_PAD) ||
	    nla_put_u64_64bit(skb, ILA_HOOK_STATS_MISSES, sum.misses, ILA_HOOK_STATS_PAD) ||
	    nla_put_u64_64bit(skb, ILA_HOOK_STATS_DROPS, sum.drops, ILA_HOOK_STATS_PAD))
		goto cancel;
	nla_nest_end(skb, nest);
	genlmsg_end(skb, hdr);
	return 0;

cancel:
	genlmsg_cancel(skb, hdr);
	return -EMSGSIZE;
}

static const struct genl_multicast_group nf_ila_hook_mcgrps[] = {
	{ .name = ILA_HOOK_MCGRP_EVENTS },
};

/*
 * Tell the "events" group (ilactl monitor) that hook H was added or is
 * being deleted (CMD). Under hn->lock; builds nothing while no one listens.
 */
static void nf_ila_hook_notify(struct genl_info *info,
			       const struct nf_ila_hook *h, u8 cmd)
{
	struct net *net = genl_info_net(info);
	struct sk_buff *skb;

	if (!genl_has_listeners(&nf_ila_hook_family, net, 0))
		return;
	skb = genlmsg_new(NLMSG_DEFAULT_SIZE, GFP_KERNEL);
	if (!skb)
		return;
	if (nf_ila_hook_fill(skb, h, info->snd_portid, info->snd_seq, 0, cmd)) {
		nlmsg_free(skb);
		return;
	}
	genlmsg_multicast_netns(&nf_ila_hook_family, net, skb, 0, 0, GFP_KERNEL);
}

static int nf_ila_hook_cmd_get(struct sk_buff *skb, struct genl_info *info)
{
	struct nf_ila_hook_net *hn = nf_ila_hook_pernet(genl_info_net(info));
	char name[ILA_HOOK_NAMSIZ];
	struct nf_ila_hook *h;
	struct sk_buff *msg;
	int err;

	if (GENL_REQ_ATTR_CHECK(info, ILA_HOOK_A_NAME))
		return -EINVAL;
	nla_strscpy(name, info->attrs[ILA_HOOK_A_NAME], sizeof(name));
	msg = nlmsg_new(NLMSG_GOODSIZE, GFP_KERNEL);
	if (!msg)
		return -ENOMEM;
	mutex_lock(&hn->lock);
	h = nf_ila_hook_find(hn, name);
	err = h ? nf_ila_hook_fill(msg, h, info->snd_portid, info->snd_seq, 0,
				   ILA_HOOK_CMD_GETHOOK)
		: -ENOENT;
	mutex_unlock(&hn->lock);
	if (err) {
		nlmsg_free(msg);
		if (err == -ENOENT)
			NL_SET_ERR_MSG_ATTR(info->extack, info->attrs[ILA_HOOK_A_NAME],
					    "no such hook");
		return err;
	}
	return genlmsg_reply(msg, info);
}

static int nf_ila_hook_dump(struct sk_buff *skb, struct netlink_callback *cb)
{
	struct nf_ila_hook_net *hn = nf_ila_hook_pernet(sock_net(skb->sk));
	struct nf_ila_hook *h;
	long i = 0, skip = cb->args[0];

	mutex_lock(&hn->lock);
	list_for_each_entry(h, &hn->hooks, list) {
		if (i++ < skip)
			continue;
		if (nf_ila_hook_fill(skb, h, NETLINK_CB(cb->skb).portid,
				     cb->nlh->nlmsg_seq, NLM_F_MULTI,
				     ILA_HOOK_CMD_GETHOOK)) {
			i--;
			break;
		}
	}
	mutex_unlock(&hn->lock);
	cb->args[0] = i;
	return skb->len;
}

static const struct genl_ops nf_ila_hook_ops[] = {
	{
		.cmd	= ILA_HOOK_CMD_NEWHOOK,
		.doit	= nf_ila_hook_cmd_new,
		.flags	= GENL_UNS_ADMIN_PERM,
	},
	{
		.cmd	= ILA_HOOK_CMD_DELHOOK,
		.doit	= nf_ila_hook_cmd_del,
		.flags	= GENL_UNS_ADMIN_PERM,
	},
	{
		.cmd	= ILA_HOOK_CMD_GETHOOK,
		.doit	= nf_ila_hook_cmd_get,
		.dumpit	= nf_ila_hook_dump,
	},
};

static struct genl_family nf_ila_hook_family __ro_after_init = {
	.name		= ILA_HOOK_GENL_NAME,
	.version	= ILA_HOOK_GENL_VERSION,
	.maxattr	= ILA_HOOK_A_MAX,
	.policy		= nf_ila_hook_policy,
	.netnsok	= true,
	.module		= THIS_MODULE,
	.ops		= nf_ila_hook_ops,
	.n_ops		= ARRAY_SIZE(nf_ila_hook_ops),
	.mcgrps		= nf_ila_hook_mcgrps,
	.n_mcgrps	= ARRAY_SIZE(nf_ila_hook_mcgrps),
};

/* ---- netns --------------------------------------------------------------- */

static int __net_init nf_ila_hook_net_init(struct net *net)
{
	struct nf_ila_hook_net *hn = nf_ila_hook_pernet(net);

	mutex_init(&hn->lock);
	INIT_LIST_HEAD(&hn->hooks);
	hn->count = 0;
	return 0;
}

static void __net_exit nf_ila_hook_net_exit(struct net *net)
{
	struct nf_ila_hook_net *hn = nf_ila_hook_pernet(net);
	LIST_HEAD(gone);

	mutex_lock(&hn->lock);
	list_splice_init(&hn->hooks, &gone);
	hn->count = 0;
	nf_ila_hook_release(net, &gone);
	mutex_unlock(&hn->lock);
	mutex_destroy(&hn->lock);
}

static struct pernet_operations nf_ila_hook_net_ops = {
	.init	= nf_ila_hook_net_init,
	.exit	= nf_ila_hook_net_exit,
	.id	= &nf_ila_hook_net_id,
	.size	= sizeof(struct nf_ila_hook_net),
};

static int __init nf_ila_hook_init(void)
{
	int err;

	err = register_pernet_subsys(&nf_ila_hook_net_ops);
	if (err)
		return err;
	err = genl_register_family(&nf_ila_hook_family);
	if (err)
		unregister_pernet_subsys(&nf_ila_hook_net_ops);
	return err;
}

static void __exit nf_ila_hook_exit(void)
{
	genl_unregister_family(&nf_ila_hook_family);
	unregister_pernet_subsys(&nf_ila_hook_net_ops);
}

module_init(nf_ila_hook_init);
module_exit(nf_ila_hook_exit);

MODULE_LICENSE("GPL");
MODULE_AUTHOR("nf-ila-rtcache contributors");
MODULE_DESCRIPTION("ILA / NPTv6 translation in direct netfilter hooks (generic netlink " ILA_HOOK_GENL_NAME ")");
MODULE_ALIAS_GENL_FAMILY(ILA_HOOK_GENL_NAME);
