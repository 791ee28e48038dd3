// SPDX-License-Identifier: GPL-2.0-only
/*
 * libxt_ILA: ip6tables plugin for the ILA target (kernel/xt_ILA.c).
 *
 *   ip6tables -t mangle -A PREROUTING -d 2001:db8:0:3::/64 -j ILA \
 *       --src-pfx 2001:db8:0:3::/64 --dst-pfx 3333:0:0:1::/64
 */
#include <arpa/inet.h>
#include <netinet/in.h>

#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

#include <xtables.h>
#include <linux/netfilter_ipv6/ip6_tables.h>
#include <linux/netfilter/xt_ILA.h>
#include <common/ila_csum.h>
#include <common/ila_names.h>

#include "ila_pfx.h"
#include "ila_words.h"

namespace {

enum : unsigned int {
	O_SRC_PFX = 0,
	O_DST_PFX,
	O_TRANSLATE,
	O_CSUM_MODE,
	O_MAP,
	O_MISS,
	O_DIRECTION,
};

/* what a miss does: the ILA_MISS_* bits of the word tables as target flags */
constexpr unsigned int miss_flags = XT_ILA_F_MISS_DROP | XT_ILA_F_MISS_NOTIFY;

unsigned int miss_to_flags(int bits)
{
	return (bits & ILA_MISS_DROP ? XT_ILA_F_MISS_DROP : 0) |
	       (bits & ILA_MISS_NOTIFY ? XT_ILA_F_MISS_NOTIFY : 0);
}

int flags_to_miss(unsigned int flags)
{
	return (flags & XT_ILA_F_MISS_DROP ? ILA_MISS_DROP : 0) |
	       (flags & XT_ILA_F_MISS_NOTIFY ? ILA_MISS_NOTIFY : 0);
}

/*
 * The word print and save write for VALUE, as ilactl writes it: the
 * canonical (first) word of a table, except misses, where ilactl writes
 * the shortest ("notify", not "accept,notify").
 */
const char *name_of(const ila_word *table, int value)
{
	const char *n = table == ila_miss_words() ? ila::shortest_word(table, value)
						  : ila_word_name(table, value);
	return n ? n : "?";
}

/* The value of ARG in TABLE; anything else exits naming the option. */
int value_of(const ila_word *table, const char *option, const char *arg)
{
	int v = ila_word_parse(table, arg);

	if (v < 0) {
		std::string known;
		for (const ila_word *w = table; w->name; w++)
			if (name_of(table, w->value) == w->name)
				known += std::string(known.empty() ? "" : ", ") + w->name;
		xtables_error(PARAMETER_PROBLEM, "ILA: %s: unknown value \"%s\" (one of: %s)",
			      option, arg, known.c_str());
	}
	return v;
}

std::string addr_str(const in6_addr &a)
{
	char buf[INET6_ADDRSTRLEN];

	return inet_ntop(AF_INET6, &a, buf, sizeof(buf)) ? buf : "?";
}

/* "ADDR/LEN", LEN <= 64, no host bits: anything else exits with a message. */
void parse_pfx(const char *option, const char *arg, in6_addr *pfx, __u8 *len)
{
	std::string_view s(arg);
	unsigned int n = 0;

	switch (ila::parse_pfx(s, pfx->s6_addr, n)) {
	case ila::PfxError::Ok:
		break;
	case ila::PfxError::NoLength:
		xtables_error(PARAMETER_PROBLEM,
			      "ILA: %s \"%s\": prefix length missing (expected ADDR/LEN)",
			      option, arg);
		break;
	case ila::PfxError::BadAddress:
		xtables_error(PARAMETER_PROBLEM, "ILA: %s \"%s\": bad IPv6 address \"%s\"",
			      option, arg, std::string(s.substr(0, s.find('/'))).c_str());
		break;
	case ila::PfxError::BadLength:
		xtables_error(PARAMETER_PROBLEM, "ILA: %s \"%s\": bad prefix length \"%s\"",
			      option, arg, std::string(s.substr(s.find('/') + 1)).c_str());
		break;
	case ila::PfxError::TooLong:
		xtables_error(PARAMETER_PROBLEM,
			      "ILA: %s \"%s\": prefix length %u is longer than %u (the locator)",
			      option, arg, n, ILA_MAX_PFX_LEN);
		break;
	case ila::PfxError::Zero:
		xtables_error(PARAMETER_PROBLEM,
			      "ILA: %s \"%s\": prefix length 0 would translate every address (1..%u)",
			      option, arg, ILA_MAX_PFX_LEN);
		break;
	case ila::PfxError::HostBits: {
		in6_addr net = *pfx;
		__u8 mask[16];

		ila_pfx_mask(mask, n);
		for (int i = 0; i < 16; i++)
			net.s6_addr[i] &= mask[i];
		xtables_error(PARAMETER_PROBLEM,
			      "ILA: %s \"%s\": host bits set (did you mean %s/%u?)",
			      option, arg, addr_str(net).c_str(), n);
		break;
	}
	}
	*len = static_cast<__u8>(n);
}

/* --map NAME: the name rule of ilactl(8) and the kernel */
void parse_map_name(const char *arg, xt_ila_tginfo *info)
{
	if (!ila_name_ok(arg))
		xtables_error(PARAMETER_PROBLEM,
			      "ILA: --map \"%s\": bad map name (" ILA_NAME_RULE ")", arg);
	std::memcpy(info->map, arg, std::strlen(arg));
	info->flags |= XT_ILA_F_MAP;
}

void ila_help()
{
	std::printf(
"ILA target options (ip6tables -t mangle):\n"
"  --src-pfx ADDR/LEN       addresses inside this prefix are translated ...\n"
"  --dst-pfx ADDR/LEN       ... into this one (same length, at most 64)\n"
"  --translate dst|src      which address: dst (default; PREROUTING, OUTPUT)\n"
"                           or src (POSTROUTING, INPUT); errors quoted in\n"
"                           ICMPv6 get the other address translated\n"
"  --csum-mode MODE         adjust-transport (default): fix TCP/UDP/ICMPv6\n"
"                           checksums; neutral-map: checksum-neutral, the\n"
"                           identifier's low 16 bits absorb the change and\n"
"                           the C-bit marks it; neutral-map-auto: the same\n"
"                           without C-bit; none: leave checksums alone;\n"
"                           rfc6296: NPTv6 checksum-neutral mapping, as\n"
"                           DNPT/SNPT (any length 1..64). Aliases as in\n"
"                           ip-route(8): adj-transport, no-action\n"
"  --direction sir2ila|ila2sir\n"
"                           neutral-map: sir2ila (default) adjusts and sets\n"
"                           the C-bit; ila2sir undoes it where the C-bit is\n"
"                           set and leaves other identifiers untouched\n"
"  --map NAME               instead of the prefixes: the locator (upper 64\n"
"                           bits) and checksum mode come from the entry for\n"
"                           the identifier (lower 64 bits) in the ILA map\n"
"                           NAME of this netns (see ilactl(8))\n"
"  --miss accept|drop[,notify]\n"
"                           with --map, for identifiers not in the map:\n"
"                           accept (default): continue untranslated; drop;\n"
"                           notify: also report the identifier to ilactl\n"
"                           monitor (at most 100/s per map); alone: accept\n");
}

const xt_option_entry ila_opts[] = {
	{.name = "src-pfx", .type = XTTYPE_STRING, .id = O_SRC_PFX},
	{.name = "dst-pfx", .type = XTTYPE_STRING, .id = O_DST_PFX},
	{.name = "translate", .type = XTTYPE_STRING, .id = O_TRANSLATE},
	{.name = "csum-mode", .type = XTTYPE_STRING, .id = O_CSUM_MODE},
	{.name = "map", .type = XTTYPE_STRING, .id = O_MAP,
	 .excl = (1U << O_SRC_PFX) | (1U << O_DST_PFX) | (1U << O_CSUM_MODE)},
	{.name = "miss", .type = XTTYPE_STRING, .id = O_MISS, .also = 1U << O_MAP},
	{.name = "direction", .type = XTTYPE_STRING, .id = O_DIRECTION},
	XTOPT_TABLEEND,
};

void ila_parse(xt_option_call *cb)
{
	auto *info = static_cast<xt_ila_tginfo *>(cb->data);

	xtables_option_parse(cb);
	switch (cb->entry->id) {
	case O_SRC_PFX:
		parse_pfx("--src-pfx", cb->arg, &info->src_pfx.in6, &info->src_pfx_len);
		break;
	case O_DST_PFX:
		parse_pfx("--dst-pfx", cb->arg, &info->dst_pfx.in6, &info->dst_pfx_len);
		break;
	case O_TRANSLATE:
		info->translate = static_cast<__u8>(value_of(ila_translate_words(), "--translate", cb->arg));
		break;
	case O_CSUM_MODE:
		info->csum_mode = static_cast<__u8>(value_of(ila_csum_mode_words(), "--csum-mode", cb->arg));
		break;
	case O_MAP:
		parse_map_name(cb->arg, info);
		break;
	case O_MISS:
		info->flags |= miss_to_flags(value_of(ila_miss_words(), "--miss", cb->arg));
		break;
	case O_DIRECTION:
		if (value_of(ila_direction_words(), "--direction", cb->arg) == NF_ILA_DIR_ILA2SIR)
			info->flags |= XT_ILA_F_ILA2SIR;
		break;
	}
}

void ila_fcheck(xt_fcheck_call *cb)
{
	const auto *info = static_cast<const xt_ila_tginfo *>(cb->data);

	if (cb->xflags & (1U << O_MAP))
		return; /* libxtables refused --src-pfx/--dst-pfx/--csum-mode */
	if ((cb->xflags & (1U << O_DIRECTION)) && info->csum_mode != XT_ILA_CSUM_NEUTRAL_MAP)
		xtables_error(PARAMETER_PROBLEM,
			      "ILA: --direction only applies to --csum-mode neutral-map (or --map)");
	if (cb->xflags & (1U << O_MISS))
		xtables_error(PARAMETER_PROBLEM, "ILA: --miss needs --map NAME");
	if (!(cb->xflags & (1U << O_SRC_PFX)))
		xtables_error(PARAMETER_PROBLEM, "ILA: --src-pfx ADDR/LEN is required");
	if (!(cb->xflags & (1U << O_DST_PFX)))
		xtables_error(PARAMETER_PROBLEM, "ILA: --dst-pfx ADDR/LEN is required");
	if (info->src_pfx_len != info->dst_pfx_len)
		xtables_error(PARAMETER_PROBLEM,
			      "ILA: --src-pfx (/%u) and --dst-pfx (/%u) must have the same prefix length",
			      info->src_pfx_len, info->dst_pfx_len);
}

void ila_print(const void *, const xt_entry_target *target, int)
{
	const auto *info = reinterpret_cast<const xt_ila_tginfo *>(target->data);

	if (info->flags & XT_ILA_F_MAP) {
		std::printf(" translate %s map %.*s miss %s", name_of(ila_translate_words(), info->translate),
			    static_cast<int>(strnlen(info->map, sizeof(info->map))), info->map,
			    name_of(ila_miss_words(), flags_to_miss(info->flags & miss_flags)));
	} else {
		std::printf(" translate %s src-pfx %s/%u dst-pfx %s/%u csum-mode %s",
			    name_of(ila_translate_words(), info->translate),
			    addr_str(info->src_pfx.in6).c_str(), info->src_pfx_len,
			    addr_str(info->dst_pfx.in6).c_str(), info->dst_pfx_len,
			    name_of(ila_csum_mode_words(), info->csum_mode));
	}
	if (info->flags & XT_ILA_F_ILA2SIR)
		std::printf(" direction ila2sir");
}

void ila_save(const void *, const xt_entry_target *target)
{
	const auto *info = reinterpret_cast<const xt_ila_tginfo *>(target->data);

	if (info->flags & XT_ILA_F_MAP) {
		std::printf(" --map %.*s --translate %s --miss %s",
			    static_cast<int>(strnlen(info->map, sizeof(info->map))), info->map,
			    name_of(ila_translate_words(), info->translate),
			    name_of(ila_miss_words(), flags_to_miss(info->flags & miss_flags)));
	} else {
		std::printf(" --src-pfx %s/%u --dst-pfx %s/%u --translate %s --csum-mode %s",
			    addr_str(info->src_pfx.in6).c_str(), info->src_pfx_len,
			    addr_str(info->dst_pfx.in6).c_str(), info->dst_pfx_len,
			    name_of(ila_translate_words(), info->translate),
			    name_of(ila_csum_mode_words(), info->csum_mode));
	}
	if (info->flags & XT_ILA_F_ILA2SIR)
		std::printf(" --direction ila2sir");
}

/*
 * adjust-transport has an exact native equivalent: nft's payload write of
 * the address with the pseudo-header checksum fix, guarded by the prefix
 * (the target leaves other addresses alone). The neutral modes and none
 * have none: nft cannot fold a checksum into the identifier or skip the
 * L4 fix.
 *
 * nft(8) also calls xlate, with numeric set, to print an iptables-nft rule
 * (nft_compat). There the kernel runs xt_ILA, not a payload statement, so
 * the rule is shown as what it is ("xt target ILA"), and a ruleset saved
 * with nft does not silently turn into the native rewrite. Only
 * ip6tables-translate (numeric 0) gets the translation.
 *
 * --map has no native equivalent at all (a per-identifier lookup that
 * rewrites the locator with a checksum mode per entry; an nft map could
 * only do adjust-transport, and not from ilactl's maps): returns 0.
 */
/*
 * Whether the rule's address match (-d for dst, -s for src; IP of
 * ip6tables-translate's params, an ip6t_entry) selects only addresses
 * inside PFX/LEN: its mask covers the prefix and its address is in it, not
 * inverted. ip6tables-translate prints that match itself ("ip6 daddr
 * P/64"); the guard would repeat it.
 */
bool rule_within_pfx(const void *ip, bool src, const in6_addr &pfx, unsigned int len)
{
	if (!ip)
		return false;
	const auto *e = static_cast<const ip6t_entry *>(ip);
	const in6_addr &addr = src ? e->ipv6.src : e->ipv6.dst;
	const in6_addr &msk = src ? e->ipv6.smsk : e->ipv6.dmsk;
	if (e->ipv6.invflags & (src ? IP6T_INV_SRCIP : IP6T_INV_DSTIP))
		return false;
	__u8 mask[16];
	ila_pfx_mask(mask, len);
	for (int i = 0; i < 16; i++)
		if ((msk.s6_addr[i] & mask[i]) != mask[i] ||
		    (addr.s6_addr[i] & mask[i]) != pfx.s6_addr[i])
			return false;
	return true;
}

int ila_xlate(xt_xlate *xl, const xt_xlate_tg_params *params)
{
	const auto *info = reinterpret_cast<const xt_ila_tginfo *>(params->target->data);

	if (params->numeric)
		return 0;
	if (info->csum_mode != XT_ILA_CSUM_ADJUST_TRANSPORT || info->flags ||
	    info->src_pfx_len == 0 || info->src_pfx_len != info->dst_pfx_len)
		return 0;

	in6_addr host{};
	__u8 mask[16];
	ila_pfx_mask(mask, info->src_pfx_len);
	for (int i = 0; i < 16; i++)
		host.s6_addr[i] = static_cast<__u8>(~mask[i]);

	const bool src = info->translate == XT_ILA_TRANSLATE_SRC;
	const char *field = src ? "saddr" : "daddr";
	/* the prefix guard, unless the rule's own -d (-s) already keeps to it */
	if (!rule_within_pfx(params->ip, src, info->src_pfx.in6, info->src_pfx_len))
		xt_xlate_add(xl, "ip6 %s %s/%u ", field, addr_str(info->src_pfx.in6).c_str(),
			     info->src_pfx_len);
	xt_xlate_add(xl, "ip6 %s set ip6 %s & %s | %s", field, field, addr_str(host).c_str(),
		     addr_str(info->dst_pfx.in6).c_str());
	return 1;
}

xtables_target ila_tg_reg = {
	.version	= XTABLES_VERSION,
	.name		= "ILA",
	.revision	= 1,
	.family		= NFPROTO_IPV6,
	.size		= XT_ALIGN(sizeof(xt_ila_tginfo)),
	.userspacesize	= offsetof(xt_ila_tginfo, kpriv),
	.help		= ila_help,
	.print		= ila_print,
	.save		= ila_save,
	.x6_parse	= ila_parse,
	.x6_fcheck	= ila_fcheck,
	.x6_options	= ila_opts,
	.xlate		= ila_xlate,
};

} // namespace

__attribute__((constructor)) static void libxt_ila_register()
{
	xtables_register_target(&ila_tg_reg);
}
