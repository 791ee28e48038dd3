// SPDX-License-Identifier: GPL-2.0-only
/*
 * ila_hook.c - ILA / NPTv6 translation in netfilter hooks of its own
 * (ilactl hook add|replace|del|list, generic netlink family ILA_HOOK,
 * <linux/ila_hook.h>). Part of nf_ila.ko.
 *
 * `-j ILA` pays for the ruleset around it: a base chain, rule evaluation,
 * the target call. A named hook pays one lookup. Each (netns, hook point,
 * priority) that has named hooks registers ONE netfilter hook, a slot,
 * whose table maps a packet's address to the named hook whose prefix holds
 * it (longest prefix first; a slot with one hook compares its prefix
 * directly), so the cost per packet does not grow with the number of
 * prefixes served. The named hook then translates exactly as the target
 * does (ila_xlat.h: ila_rule_xlat()): a static prefix pair in any checksum
 * mode, or a lookup in a map, ICMPv6 errors included. Counters stay per
 * named hook.
 *
 * Changes: the slot's table is rebuilt under the netns lock and published
 * with one pointer store, so adding, replacing or deleting a named hook
 * is atomic for packets (each sees the old table or the new one). A
 * replaced or deleted hook is freed, and its map reference dropped, after
 * synchronize_net(); a slot is unregistered with its last hook.
 *
 * At OUTPUT the route was chosen for the untranslated destination: a packet
 * whose destination was translated is routed again (xfrm policies for the
 * locator apply then), as ip6t_mangle does after a rewrite.
 *
 * Memory: hooks, slots and tables are charged to the memory cgroup of the
 * task that creates them; at most NF_ILA_MAX_HOOKS named hooks per netns.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/icmpv6.h>
#include <linux/kernel.h>
#include <linux/log2.h>
#include <linux/module.h>
#include <linux/netfilter.h>
#include <linux/netfilter_ipv6.h>
#include <linux/percpu.h>
#include <linux/random.h>
#include <linux/slab.h>
#include <net/genetlink.h>
#include <net/net_namespace.h>
#include <linux/ila_hook.h>
#include <linux/ila_map.h>

#include <common/ila_names.h>

#include "compat.h"
#include "ila.h"
#include "ila_xlat.h"

struct ila_hook_pcpu {
	u64	packets;
	u64	bytes;
	u64	misses;
	u64	drops;
};

/* Which instance of ila_rule_xlat() a named hook runs. */
enum ila_hook_kind {
	ILA_HK_AT64,	/* adjust-transport, /64 */
	ILA_HK_AT,	/* adjust-transport */
	ILA_HK_NA64,	/* no-action (none), /64 */
	ILA_HK_NA,	/* no-action */
	ILA_HK_STATIC,	/* the neutral modes */
	ILA_HK_MAP64,	/* a map, /64 prefix */
	ILA_HK_MAP,	/* a map */
};

struct ila_hook_slot;

/* A named hook: what `ilactl hook add` creates. */
struct ila_hook {
	struct ila_rule			rule;
	u8				kind;	/* enum ila_hook_kind */
	u8				point;	/* enum ila_hook_point */
	u8				pfx_len;
	u8				csum_mode;
	bool				miss_drop;
	bool				miss_notify;
	s32				priority;
	struct ila_hook_pcpu __percpu	*stats;
	struct ila_hook_slot		*slot;
	struct list_head		list;	/* nf_ila_net.hooks */
	u8				src_pfx[16];
	u8				dst_pfx[16];
	char				name[ILA_HOOK_NAMSIZ];
	char				map_name[ILA_MAP_NAMSIZ];
};

/*
 * The named hooks of a slot, for the packet path: the only one, or an
 * open-addressing table keyed by (prefix length, prefix) probed once per
 * distinct prefix length, longest first. Immutable once published.
 */
struct ila_hook_tbl {
	struct ila_hook		*one;	/* the slot's only hook, else NULL */
	u64			mult;	/* odd, random: multiply-shift hash */
	u32			mask;	/* buckets - 1 */
	u32			shift;	/* 64 - log2(buckets) */
	unsigned int		nlens;
	u8			lens[ILA_MAX_PFX_LEN];	/* longest first */
	u64			lmask[ILA_MAX_PFX_LEN];	/* raw mask of each */
	struct ila_hook		*bkt[];
};

/* One netfilter hook: a (netns, point, priority) with named hooks. */
struct ila_hook_slot {
	struct ila_hook_tbl __rcu	*tbl;
	u8				aoff;	/* address the point translates */
	u8				point;
	unsigned int			nhooks;
	struct nf_hook_ops		ops;	/* .priv = this slot */
	struct list_head		list;	/* nf_ila_net.slots */
};

static const unsigned int ila_hook_nf[__ILA_HOOK_POINT_MAX] = {
	[ILA_HOOK_PREROUTING]	= NF_INET_PRE_ROUTING,
	[ILA_HOOK_INPUT]	= NF_INET_LOCAL_IN,
	[ILA_HOOK_OUTPUT]	= NF_INET_LOCAL_OUT,
	[ILA_HOOK_POSTROUTING]	= NF_INET_POST_ROUTING,
};

static bool ila_hook_point_src(u8 point)
{
	return point == ILA_HOOK_INPUT || point == ILA_HOOK_POSTROUTING;
}

/* ---- packet path ----------------------------------------------------------- */

/*
 * The bucket of a (prefix, length): multiply-shift with a random odd
 * multiplier. The table is built from the configured prefixes and only
 * probed by packets, so the spread that matters is the prefixes' own.
 */
static __always_inline unsigned int ila_hook_bkt(const struct ila_hook_tbl *t,
						 u64 pfx, unsigned int len)
{
	return ((pfx ^ len) * t->mult) >> t->shift;
}

/* The table's hook for an address whose upper 64 bits (raw) are a. */
static __always_inline struct ila_hook *
ila_hook_tbl_find(const struct ila_hook_tbl *t, u64 a)
{
	unsigned int i, idx;
	struct ila_hook *h;

	for (i = 0; i < t->nlens; i++) {
		const u64 k = a & t->lmask[i];

		idx = ila_hook_bkt(t, k, t->lens[i]);
		while ((h = t->bkt[idx])) {
			if (h->pfx_len == t->lens[i] &&
			    ila_get64(h->rule.x.src) == k)
				return h;
			idx = (idx + 1) & t->mask;
		}
	}
	return NULL;
}

/* Not translated: the reason in the counters, the verdict. */
static noinline unsigned int ila_hook_untranslated(const struct ila_hook *h,
						   enum ila_res res)
{
	switch (res) {
	case ILA_RES_PASS:
	case ILA_RES_XLAT:
		return NF_ACCEPT;
	case ILA_RES_MISS:
		this_cpu_inc(h->stats->misses);
		return NF_ACCEPT;
	case ILA_RES_MISS_DROP:
		this_cpu_inc(h->stats->misses);
		break;
	case ILA_RES_DROP:
		break;
	}
	this_cpu_inc(h->stats->drops);
	return NF_DROP;
}

/* A named hook translates skb: counters and verdict. */
static __always_inline unsigned int ila_hook_do(const struct ila_hook *h,
						struct sk_buff *skb,
						const unsigned int v)
{
	const enum ila_res res = ila_rule_xlat(skb, &h->rule, v);

	if (likely(res == ILA_RES_XLAT)) {
		this_cpu_inc(h->stats->packets);
		this_cpu_add(h->stats->bytes, skb->len);
		return NF_ACCEPT;
	}
	if (likely(res == ILA_RES_PASS))
		return NF_ACCEPT;
	return ila_hook_untranslated(h, res);
}

/*
 * One function per kind of hook, each with only the frame its own path
 * needs; the slots reach them by a tail call.
 */
#define ILA_HOOK_KIND_FN(name, v)					\
static noinline unsigned int name(const struct ila_hook *h,		\
				  struct sk_buff *skb)			\
{									\
	return ila_hook_do(h, skb, v);					\
}
ILA_HOOK_KIND_FN(ila_hook_at64, ILA_V_AT | ILA_V_PFX64)
ILA_HOOK_KIND_FN(ila_hook_at, ILA_V_AT)
ILA_HOOK_KIND_FN(ila_hook_na64, ILA_V_NA | ILA_V_PFX64)
ILA_HOOK_KIND_FN(ila_hook_na, ILA_V_NA)
ILA_HOOK_KIND_FN(ila_hook_static, ILA_V_STATIC)
ILA_HOOK_KIND_FN(ila_hook_map64, ILA_V_MAP | ILA_V_PFX64)
ILA_HOOK_KIND_FN(ila_hook_map, ILA_V_MAP)

static __always_inline unsigned int ila_hook_run(const struct ila_hook *h,
						 struct sk_buff *skb)
{
	switch (h->kind) {
	case ILA_HK_AT64:
		return ila_hook_at64(h, skb);
	case ILA_HK_MAP64:
		return ila_hook_map64(h, skb);
	case ILA_HK_AT:
		return ila_hook_at(h, skb);
	case ILA_HK_MAP:
		return ila_hook_map(h, skb);
	case ILA_HK_NA64:
		return ila_hook_na64(h, skb);
	case ILA_HK_NA:
		return ila_hook_na(h, skb);
	}
	return ila_hook_static(h, skb);
}

/*
 * An ICMPv6 error seen by a slot with several hooks: the header it quotes
 * may belong to another hook than its own address (or to one when its own
 * address belongs to none). h: the hook of its own address, or NULL.
 * Returns the verdict of translating the quoted header.
 */
static noinline unsigned int ila_hook_quoted(const struct ila_hook_slot *s,
					     const struct ila_hook_tbl *t,
					     const struct ila_hook *h,
					     struct sk_buff *skb)
{
	const unsigned int off = ila_icmp_err_off(skb);
	struct ila_hook *qh;
	const u8 *q;
	u8 _q[8];

	if (!off)
		return NF_ACCEPT;
	/* the quoted address on the other side: source for dst, and back */
	q = skb_header_pointer(skb, off + sizeof(struct icmp6hdr) +
			       (s->aoff == ILA_IP6_DADDR_OFF ? ILA_IP6_SADDR_OFF :
							       ILA_IP6_DADDR_OFF),
			       sizeof(_q), _q);
	if (!q)
		return NF_ACCEPT;
	qh = ila_hook_tbl_find(t, ila_get64(q));
	if (!qh || qh == h)
		return NF_ACCEPT;
	return ila_hook_untranslated(qh, ila_rule_slow(skb, &qh->rule, false));
}

/* A slot with several hooks: the table says which one the packet is for. */
static noinline unsigned int ila_hook_many(const struct ila_hook_slot *s,
					   const struct ila_hook_tbl *t,
					   struct sk_buff *skb)
{
	const u8 *nh = skb_network_header(skb);
	const u8 proto = nh[offsetof(struct ipv6hdr, nexthdr)];
	struct ila_hook *h;

	h = ila_hook_tbl_find(t, ila_get64(nh + s->aoff));
	if (unlikely(proto != IPPROTO_TCP && proto != IPPROTO_UDP) &&
	    ila_hook_quoted(s, t, h, skb) != NF_ACCEPT)
		return NF_DROP;
	if (!h)
		return NF_ACCEPT;
	return ila_hook_run(h, skb);
}

static __always_inline unsigned int ila_hook_slot(const struct ila_hook_slot *s,
						  struct sk_buff *skb)
{
	const struct ila_hook_tbl *t = rcu_dereference(s->tbl);

	if (likely(t->one))
		return ila_hook_run(t->one, skb);
	return ila_hook_many(s, t, skb);
}

static unsigned int ila_hook_slot_fn(void *priv, struct sk_buff *skb,
				     const struct nf_hook_state *state)
{
	return ila_hook_slot(priv, skb);
}

/*
 * OUTPUT: the packet was routed for its untranslated destination; when the
 * hook changed it, route it again, as ip6t_mangle does after a rewrite
 * (xfrm policies for the locator apply then).
 */
static unsigned int ila_hook_slot_out_fn(void *priv, struct sk_buff *skb,
					 const struct nf_hook_state *state)
{
	const struct in6_addr daddr = ipv6_hdr(skb)->daddr;
	unsigned int verdict = ila_hook_slot(priv, skb);
	int err;

	if (verdict != NF_ACCEPT || ipv6_addr_equal(&daddr, &ipv6_hdr(skb)->daddr))
		return verdict;
	err = nf_ip6_route_me_harder(state->net, state->sk, skb);
	return err ? NF_DROP_ERR(err) : NF_ACCEPT;
}

/* ---- tables and slots ------------------------------------------------------ */

/* Put h in table t (two or more hooks); -EEXIST if its prefix is taken. */
static int ila_hook_tbl_add(struct ila_hook_tbl *t, struct ila_hook *h,
			    struct netlink_ext_ack *ext)
{
	unsigned int i, j;
	u8 mask[16];

	/* its length in the list, longest first */
	for (i = 0; i < t->nlens && t->lens[i] > h->pfx_len; i++)
		;
	if (i == t->nlens || t->lens[i] != h->pfx_len) {
		memmove(&t->lens[i + 1], &t->lens[i], t->nlens - i);
		memmove(&t->lmask[i + 1], &t->lmask[i],
			(t->nlens - i) * sizeof(t->lmask[0]));
		ila_pfx_mask(mask, h->pfx_len);
		t->lens[i] = h->pfx_len;
		t->lmask[i] = ila_get64(mask);
		t->nlens++;
	}
	j = ila_hook_bkt(t, ila_get64(h->rule.x.src), h->pfx_len);
	for (; t->bkt[j]; j = (j + 1) & t->mask) {
		const struct ila_hook *o = t->bkt[j];

		if (o->pfx_len == h->pfx_len && !memcmp(o->src_pfx, h->src_pfx, 8)) {
			NFILR_ERR_MSG_FMT(ext,
					  "another hook translates this prefix at this point and priority",
					  /* fits the extack's 80 bytes with any name */
					  "prefix already translated here by hook %s",
					  o->name);
			return -EEXIST;
		}
	}
	t->bkt[j] = h;
	return 0;
}

/* The largest table: NF_ILA_MAX_HOOKS hooks in one slot. */
#define ILA_HOOK_TBL_MAX \
	(sizeof(struct ila_hook_tbl) + \
	 sizeof(struct ila_hook *) * roundup_pow_of_two(2 * NF_ILA_MAX_HOOKS))

/*
 * The table of slot s's hooks, with add added and skip left out (either
 * may be NULL; the slot keeps at least one hook). -EEXIST (said in ext) if
 * two hooks would serve the same prefix. Under the netns lock.
 *
 * A delete (add NULL) must not fail, whatever the memory cgroup's state:
 * its table, smaller than the one it replaces, is allocated without the
 * cgroup's charge and without failing (two pages at most, see
 * ILA_HOOK_TBL_MAX); an add is charged and fails with -ENOMEM at the limit.
 */
static struct ila_hook_tbl *ila_hook_tbl_build(struct nf_ila_net *in,
					       struct ila_hook_slot *s,
					       struct ila_hook *add,
					       struct ila_hook *skip,
					       struct netlink_ext_ack *ext)
{
	const gfp_t gfp = add ? NF_ILA_GFP : GFP_KERNEL | __GFP_NOFAIL;
	struct ila_hook **v, *h;
	unsigned int n = 0, i;
	struct ila_hook_tbl *t;
	int err = 0;

	BUILD_BUG_ON(ILA_HOOK_TBL_MAX > 2 * PAGE_SIZE);
	v = kmalloc_array(s->nhooks + 1, sizeof(*v),
			  add ? GFP_KERNEL : GFP_KERNEL | __GFP_NOFAIL);
	if (!v)
		return ERR_PTR(-ENOMEM);
	list_for_each_entry(h, &in->hooks, list)
		if (h->slot == s && h != skip)
			v[n++] = h;
	if (add)
		v[n++] = add;
	t = kzalloc(struct_size(t, bkt, n > 1 ? roundup_pow_of_two(2 * n) : 0),
		    gfp);
	if (!t) {
		err = -ENOMEM;
		goto out;
	}
	if (n == 1) {
		t->one = v[0];
		goto out;
	}
	t->mask = roundup_pow_of_two(2 * n) - 1;
	t->shift = 64 - ilog2(t->mask + 1);
	t->mult = get_random_u64() | 1;
	for (i = 0; i < n && !err; i++)
		err = ila_hook_tbl_add(t, v[i], ext);
out:
	kfree(v);
	if (err) {
		kfree(t);
		return ERR_PTR(err);
	}
	return t;
}

static struct ila_hook_slot *ila_hook_slot_find(struct nf_ila_net *in, u8 point,
						s32 priority)
{
	struct ila_hook_slot *s;

	list_for_each_entry(s, &in->slots, list)
		if (s->point == point && s->ops.priority == priority)
			return s;
	return NULL;
}

static struct ila_hook_slot *ila_hook_slot_new(u8 point, s32 priority)
{
	struct ila_hook_slot *s = kzalloc(sizeof(*s), NF_ILA_GFP);

	if (!s)
		return NULL;
	s->point = point;
	s->aoff = ila_hook_point_src(point) ? ILA_IP6_SADDR_OFF :
					      ILA_IP6_DADDR_OFF;
	s->ops.hook = point == ILA_HOOK_OUTPUT ? ila_hook_slot_out_fn :
						 ila_hook_slot_fn;
	s->ops.pf = NFPROTO_IPV6;
	s->ops.hooknum = ila_hook_nf[point];
	s->ops.priority = priority;
	s->ops.priv = s;
	return s;
}

static void ila_hook_free(struct ila_hook *h)
{
	if (h->rule.map)
		nf_ila_map_put(h->rule.map);
	free_percpu(h->stats);
	kfree(h);
}

static struct ila_hook *ila_hook_find(struct nf_ila_net *in, const char *name)
{
	struct ila_hook *h;

	list_for_each_entry(h, &in->hooks, list)
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
	[ILA_HOOK_A_CSUM_MODE]	= NLA_POLICY_MAX(NLA_U8, NF_ILA_CSUM_MAX),
	[ILA_HOOK_A_DIRECTION]	= NLA_POLICY_MAX(NLA_U8, NF_ILA_DIR_ILA2SIR),
	[ILA_HOOK_A_MAP]	= { .type = NLA_NUL_STRING, .len = ILA_MAP_NAMSIZ - 1 },
	[ILA_HOOK_A_MISS_DROP]	= { .type = NLA_FLAG },
	[ILA_HOOK_A_MISS_NOTIFY] = { .type = NLA_FLAG },
	[ILA_HOOK_A_REPLACE]	= { .type = NLA_FLAG },
};

/* Everything NEWHOOK needs, checked; the hook is filled, not placed. */
static int ila_hook_parse(struct net *net, struct genl_info *info,
			  struct ila_hook *h)
{
	struct nlattr **a = info->attrs;
	struct netlink_ext_ack *ext = info->extack;
	struct ila_rule *r = &h->rule;
	bool src;
	u8 dir = NF_ILA_DIR_SIR2ILA;

	if (GENL_REQ_ATTR_CHECK(info, ILA_HOOK_A_NAME) ||
	    GENL_REQ_ATTR_CHECK(info, ILA_HOOK_A_POINT) ||
	    GENL_REQ_ATTR_CHECK(info, ILA_HOOK_A_SRC_PFX) ||
	    GENL_REQ_ATTR_CHECK(info, ILA_HOOK_A_PFX_LEN))
		return -EINVAL;
	nla_strscpy(h->name, a[ILA_HOOK_A_NAME], sizeof(h->name));
	if (!ila_name_ok(h->name)) {
		NL_SET_ERR_MSG_ATTR(ext, a[ILA_HOOK_A_NAME],
				    "hook names are " ILA_NAME_RULE);
		return -EINVAL;
	}
	h->point = nla_get_u8(a[ILA_HOOK_A_POINT]);
	src = ila_hook_point_src(h->point);
	if (a[ILA_HOOK_A_TRANSLATE] &&
	    nla_get_u8(a[ILA_HOOK_A_TRANSLATE]) != src) {
		if (src)
			NL_SET_ERR_MSG_ATTR(ext, a[ILA_HOOK_A_TRANSLATE],
					    "input and postrouting translate the source (translate src)");
		else
			NL_SET_ERR_MSG_ATTR(ext, a[ILA_HOOK_A_TRANSLATE],
					    "prerouting and output translate the destination (translate dst)");
		return -EINVAL;
	}
	h->priority = src ? ILA_HOOK_PRI_SRC : ILA_HOOK_PRI_DST;
	if (a[ILA_HOOK_A_PRIORITY])
		h->priority = nla_get_s32(a[ILA_HOOK_A_PRIORITY]);
	if (h->priority <= NF_IP6_PRI_FIRST || h->priority >= NF_IP6_PRI_LAST) {
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
		dir = nla_get_u8(a[ILA_HOOK_A_DIRECTION]);

	if (a[ILA_HOOK_A_MAP]) {
		if (a[ILA_HOOK_A_DST_PFX] || a[ILA_HOOK_A_CSUM_MODE]) {
			NL_SET_ERR_MSG_ATTR(ext, a[ILA_HOOK_A_MAP],
					    "map replaces dst-pfx and csum-mode");
			return -EINVAL;
		}
		nla_strscpy(h->map_name, a[ILA_HOOK_A_MAP], sizeof(h->map_name));
		h->miss_drop = nla_get_flag(a[ILA_HOOK_A_MISS_DROP]);
		h->miss_notify = nla_get_flag(a[ILA_HOOK_A_MISS_NOTIFY]);
		r->map = nf_ila_map_get(net, h->map_name);
		if (IS_ERR(r->map)) {
			r->map = NULL;
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
		if (dir && h->csum_mode != NF_ILA_CSUM_NEUTRAL_MAP) {
			NL_SET_ERR_MSG_ATTR(ext, a[ILA_HOOK_A_DIRECTION],
					    "direction only applies to csum-mode neutral-map or a map");
			return -EINVAL;
		}
	}
	ila_xlat_init(&r->x, h->src_pfx, h->dst_pfx, h->pfx_len, h->csum_mode,
		      src, dir);
	r->src_sum = ila_sum16(h->src_pfx, 4);
	r->flags = (h->miss_drop ? ILA_RF_MISS_DROP : 0) |
		   (h->miss_notify ? ILA_RF_MISS_NOTIFY : 0);

	if (r->map)
		h->kind = h->pfx_len == 64 ? ILA_HK_MAP64 : ILA_HK_MAP;
	else if (h->csum_mode == NF_ILA_CSUM_ADJUST_TRANSPORT)
		h->kind = h->pfx_len == 64 ? ILA_HK_AT64 : ILA_HK_AT;
	else if (h->csum_mode == NF_ILA_CSUM_NO_ACTION)
		h->kind = h->pfx_len == 64 ? ILA_HK_NA64 : ILA_HK_NA;
	else
		h->kind = ILA_HK_STATIC;
	return 0;
}

static int ila_hook_fill(struct sk_buff *skb, const struct ila_hook *h,
			 u32 portid, u32 seq, int flags, u8 cmd, bool replaced)
{
	struct ila_hook_pcpu sum = {};
	struct nlattr *nest;
	void *hdr;
	int cpu;

	hdr = genlmsg_put(skb, portid, seq, &nf_ila_hook_family, flags, cmd);
	if (!hdr)
		return -EMSGSIZE;
	for_each_possible_cpu(cpu) {
		const struct ila_hook_pcpu *c = per_cpu_ptr(h->stats, cpu);

		sum.packets += READ_ONCE(c->packets);
		sum.bytes += READ_ONCE(c->bytes);
		sum.misses += READ_ONCE(c->misses);
		sum.drops += READ_ONCE(c->drops);
	}
	if (nla_put_string(skb, ILA_HOOK_A_NAME, h->name) ||
	    nla_put_u8(skb, ILA_HOOK_A_POINT, h->point) ||
	    nla_put_s32(skb, ILA_HOOK_A_PRIORITY, h->priority) ||
	    nla_put_u8(skb, ILA_HOOK_A_TRANSLATE, ila_hook_point_src(h->point)) ||
	    nla_put(skb, ILA_HOOK_A_SRC_PFX, 16, h->src_pfx) ||
	    nla_put_u8(skb, ILA_HOOK_A_PFX_LEN, h->pfx_len) ||
	    nla_put_u8(skb, ILA_HOOK_A_DIRECTION, h->rule.x.dir) ||
	    (replaced && nla_put_flag(skb, ILA_HOOK_A_REPLACE)))
		goto cancel;
	if (h->rule.map) {
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

/*
 * Listeners need CAP_NET_ADMIN in the netns's user namespace, as for the
 * maps' group.
 */
static const struct genl_multicast_group nf_ila_hook_mcgrps[] = {
	{ .name = ILA_HOOK_MCGRP_EVENTS, .flags = GENL_MCAST_CAP_NET_ADMIN },
};

/*
 * Tell the "events" group (ilactl monitor) that hook H was added, replaced
 * or is being deleted (CMD). Under the netns lock; builds nothing while no
 * one listens.
 */
static void ila_hook_notify(struct genl_info *info, const struct ila_hook *h,
			    u8 cmd, bool replaced)
{
	struct net *net = genl_info_net(info);
	struct sk_buff *skb;

	if (!genl_has_listeners(&nf_ila_hook_family, net, 0))
		return;
	skb = genlmsg_new(NLMSG_DEFAULT_SIZE, GFP_KERNEL);
	if (!skb)
		return;
	if (ila_hook_fill(skb, h, info->snd_portid, info->snd_seq, 0, cmd,
			  replaced)) {
		nlmsg_free(skb);
		return;
	}
	genlmsg_multicast_netns(&nf_ila_hook_family, net, skb, 0, 0, GFP_KERNEL);
}

/*
 * Put hook h in its slot: a new slot (registered once its table is ready)
 * or a new table for the existing one, with old (REPLACE) left out. On
 * success *old_tbl is the table to free after a grace period.
 */
static int ila_hook_place(struct net *net, struct nf_ila_net *in,
			  struct ila_hook *h, struct ila_hook *old,
			  struct ila_hook_tbl **old_tbl,
			  struct netlink_ext_ack *ext)
{
	struct ila_hook_slot *s = old ? old->slot :
				  ila_hook_slot_find(in, h->point, h->priority);
	struct ila_hook_tbl *t;
	int err;

	*old_tbl = NULL;
	if (!s) {
		s = ila_hook_slot_new(h->point, h->priority);
		if (!s)
			return -ENOMEM;
		t = ila_hook_tbl_build(in, s, h, NULL, ext);
		if (IS_ERR(t)) {
			kfree(s);
			return PTR_ERR(t);
		}
		RCU_INIT_POINTER(s->tbl, t);
		err = nf_register_net_hook(net, &s->ops);
		if (err) {
			kfree(t);
			kfree(s);
			return err;
		}
		list_add_tail(&s->list, &in->slots);
	} else {
		t = ila_hook_tbl_build(in, s, h, old, ext);
		if (IS_ERR(t))
			return PTR_ERR(t);
		*old_tbl = rcu_replace_pointer(s->tbl, t,
					       lockdep_is_held(&in->lock));
	}
	h->slot = s;
	if (!old)
		s->nhooks++;
	return 0;
}

static int ila_hook_cmd_new(struct sk_buff *skb, struct genl_info *info)
{
	struct net *net = genl_info_net(info);
	struct nf_ila_net *in = nf_ila_pernet(net);
	bool replace = nla_get_flag(info->attrs[ILA_HOOK_A_REPLACE]);
	struct ila_hook_tbl *old_tbl;
	struct ila_hook *h, *old;
	int err;

	h = kzalloc(sizeof(*h), NF_ILA_GFP);
	if (!h)
		return -ENOMEM;
	h->stats = alloc_percpu_gfp(struct ila_hook_pcpu, NF_ILA_GFP);
	if (!h->stats) {
		kfree(h);
		return -ENOMEM;
	}
	err = ila_hook_parse(net, info, h);
	if (err)
		goto err_free;

	mutex_lock(&in->lock);
	old = ila_hook_find(in, h->name);
	if (replace && !old) {
		NL_SET_ERR_MSG_ATTR(info->extack, info->attrs[ILA_HOOK_A_NAME],
				    "no such hook to replace");
		err = -ENOENT;
		goto err_unlock;
	}
	if (!replace && old) {
		NL_SET_ERR_MSG_ATTR(info->extack, info->attrs[ILA_HOOK_A_NAME],
				    "hook exists (use replace)");
		err = -EEXIST;
		goto err_unlock;
	}
	if (old && (old->point != h->point || old->priority != h->priority)) {
		NL_SET_ERR_MSG_ATTR(info->extack, info->attrs[ILA_HOOK_A_POINT],
				    "replace keeps the hook point and priority (delete and add to move a hook)");
		err = -EINVAL;
		goto err_unlock;
	}
	if (!old && in->nhooks >= NF_ILA_MAX_HOOKS) {
		NL_SET_ERR_MSG(info->extack, "too many hooks in this netns");
		err = -ENOSPC;
		goto err_unlock;
	}
	err = ila_hook_place(net, in, h, old, &old_tbl, info->extack);
	if (err)
		goto err_unlock;
	if (old) {
		list_replace(&old->list, &h->list);
	} else {
		list_add_tail(&h->list, &in->hooks);
		in->nhooks++;
	}
	ila_hook_notify(info, h, ILA_HOOK_CMD_NEWHOOK, old);
	mutex_unlock(&in->lock);
	if (old_tbl || old) {
		synchronize_net();	/* no packet uses them any more */
		kfree(old_tbl);
		if (old)
			ila_hook_free(old);
	}
	return 0;

err_unlock:
	mutex_unlock(&in->lock);
err_free:
	ila_hook_free(h);
	return err;
}

static int ila_hook_cmd_del(struct sk_buff *skb, struct genl_info *info)
{
	struct net *net = genl_info_net(info);
	struct nf_ila_net *in = nf_ila_pernet(net);
	struct ila_hook_tbl *t = NULL, *old_tbl;
	struct ila_hook_slot *s, *gone = NULL;
	char name[ILA_HOOK_NAMSIZ];
	struct ila_hook *h;

	if (GENL_REQ_ATTR_CHECK(info, ILA_HOOK_A_NAME))
		return -EINVAL;
	nla_strscpy(name, info->attrs[ILA_HOOK_A_NAME], sizeof(name));
	mutex_lock(&in->lock);
	h = ila_hook_find(in, name);
	if (!h) {
		mutex_unlock(&in->lock);
		NL_SET_ERR_MSG_ATTR(info->extack, info->attrs[ILA_HOOK_A_NAME],
				    "no such hook");
		return -ENOENT;
	}
	s = h->slot;
	if (s->nhooks > 1) {
		t = ila_hook_tbl_build(in, s, NULL, h, info->extack);
		if (IS_ERR(t)) {
			mutex_unlock(&in->lock);
			return PTR_ERR(t);
		}
	}
	ila_hook_notify(info, h, ILA_HOOK_CMD_DELHOOK, false);
	list_del(&h->list);
	in->nhooks--;
	s->nhooks--;
	if (t) {
		old_tbl = rcu_replace_pointer(s->tbl, t,
					      lockdep_is_held(&in->lock));
	} else {
		nf_unregister_net_hook(net, &s->ops);
		list_del(&s->list);
		old_tbl = rcu_dereference_protected(s->tbl, true);
		gone = s;
	}
	mutex_unlock(&in->lock);
	synchronize_net();	/* no packet is inside the hook or the slot */
	kfree(old_tbl);
	kfree(gone);
	ila_hook_free(h);
	return 0;
}

static int ila_hook_cmd_get(struct sk_buff *skb, struct genl_info *info)
{
	struct nf_ila_net *in = nf_ila_pernet(genl_info_net(info));
	char name[ILA_HOOK_NAMSIZ];
	struct ila_hook *h;
	struct sk_buff *msg;
	int err;

	if (GENL_REQ_ATTR_CHECK(info, ILA_HOOK_A_NAME))
		return -EINVAL;
	nla_strscpy(name, info->attrs[ILA_HOOK_A_NAME], sizeof(name));
	msg = nlmsg_new(NLMSG_GOODSIZE, GFP_KERNEL);
	if (!msg)
		return -ENOMEM;
	mutex_lock(&in->lock);
	h = ila_hook_find(in, name);
	err = h ? ila_hook_fill(msg, h, info->snd_portid, info->snd_seq, 0,
				ILA_HOOK_CMD_GETHOOK, false)
		: -ENOENT;
	mutex_unlock(&in->lock);
	if (err) {
		nlmsg_free(msg);
		if (err == -ENOENT)
			NL_SET_ERR_MSG_ATTR(info->extack, info->attrs[ILA_HOOK_A_NAME],
					    "no such hook");
		return err;
	}
	return genlmsg_reply(msg, info);
}

static int ila_hook_dump(struct sk_buff *skb, struct netlink_callback *cb)
{
	struct nf_ila_net *in = nf_ila_pernet(sock_net(skb->sk));
	struct ila_hook *h;
	long i = 0, skip = cb->args[0];

	mutex_lock(&in->lock);
	list_for_each_entry(h, &in->hooks, list) {
		if (i++ < skip)
			continue;
		if (ila_hook_fill(skb, h, NETLINK_CB(cb->skb).portid,
				  cb->nlh->nlmsg_seq, NLM_F_MULTI,
				  ILA_HOOK_CMD_GETHOOK, false)) {
			i--;
			break;
		}
	}
	mutex_unlock(&in->lock);
	cb->args[0] = i;
	return skb->len;
}

static const struct genl_ops nf_ila_hook_ops[] = {
	{
		.cmd	= ILA_HOOK_CMD_NEWHOOK,
		.doit	= ila_hook_cmd_new,
		.flags	= GENL_UNS_ADMIN_PERM,
	},
	{
		.cmd	= ILA_HOOK_CMD_DELHOOK,
		.doit	= ila_hook_cmd_del,
		.flags	= GENL_UNS_ADMIN_PERM,
	},
	{
		/* what is translated where: open, as route dumps are */
		.cmd	= ILA_HOOK_CMD_GETHOOK,
		.doit	= ila_hook_cmd_get,
		.dumpit	= ila_hook_dump,
	},
};

struct genl_family nf_ila_hook_family __ro_after_init = {
	.name		= ILA_HOOK_GENL_NAME,
	.version	= ILA_HOOK_GENL_VERSION,
	.maxattr	= ILA_HOOK_A_MAX,
	.policy		= nf_ila_hook_policy,
	.netnsok	= true,
	.parallel_ops	= true,
	.module		= THIS_MODULE,
	.ops		= nf_ila_hook_ops,
	.n_ops		= ARRAY_SIZE(nf_ila_hook_ops),
	.mcgrps		= nf_ila_hook_mcgrps,
	.n_mcgrps	= ARRAY_SIZE(nf_ila_hook_mcgrps),
};

/* ---- netns ----------------------------------------------------------------- */

/*
 * The netns is going (.pre_exit): every slot unregistered. The netns core
 * lets an RCU grace period pass, once for the whole batch of namespaces,
 * before .exit frees them (nf_ila_hook_net_exit): a netns that goes adds
 * no grace period of its own to the shared cleanup work.
 */
void nf_ila_hook_net_pre_exit(struct net *net, struct nf_ila_net *in)
{
	struct ila_hook_slot *s;

	lockdep_assert_held(&in->lock);
	list_for_each_entry(s, &in->slots, list)
		nf_unregister_net_hook(net, &s->ops);
}

/* The netns is gone (.exit): every hook and slot freed, no packet in them. */
void nf_ila_hook_net_exit(struct nf_ila_net *in)
{
	struct ila_hook_slot *s, *stmp;
	struct ila_hook *h, *htmp;

	lockdep_assert_held(&in->lock);
	list_for_each_entry_safe(h, htmp, &in->hooks, list) {
		list_del(&h->list);
		ila_hook_free(h);
	}
	list_for_each_entry_safe(s, stmp, &in->slots, list) {
		list_del(&s->list);
		kfree(rcu_dereference_protected(s->tbl, true));
		kfree(s);
	}
	in->nhooks = 0;
}
