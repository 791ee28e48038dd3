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
#include <linux/netfilter/xt_ILA.h>
#include <common/ila_csum.h>

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

struct name_value {
	const char *name;
	unsigned int value;
};

/* The first name of each value is the canonical one (print, save). */
constexpr name_value csum_modes[] = {
	{"adjust-transport", XT_ILA_CSUM_ADJUST_TRANSPORT},
	{"neutral-map", XT_ILA_CSUM_NEUTRAL_MAP},
	{"none", XT_ILA_CSUM_NO_ACTION},
	{"neutral-map-auto", XT_ILA_CSUM_NEUTRAL_MAP_AUTO},
	{"rfc6296", XT_ILA_CSUM_RFC6296},
	/* the names ip-route(8) and ip-ila(8) use for the same modes */
	{"adj-transport", XT_ILA_CSUM_ADJUST_TRANSPORT},
	{"no-action", XT_ILA_CSUM_NO_ACTION},
};

constexpr name_value directions[] = {
	{"sir2ila", 0},
	{"ila2sir", XT_ILA_F_ILA2SIR},
};

/* what a miss does: accept or drop, and whether ilactl monitor hears of it */
constexpr name_value misses[] = {
	{"accept", 0},
	{"drop", XT_ILA_F_MISS_DROP},
	{"notify", XT_ILA_F_MISS_NOTIFY},
	{"drop,notify", XT_ILA_F_MISS_DROP | XT_ILA_F_MISS_NOTIFY},
	{"accept,notify", XT_ILA_F_MISS_NOTIFY},
	{"notify,accept", XT_ILA_F_MISS_NOTIFY},
	{"notify,drop", XT_ILA_F_MISS_DROP | XT_ILA_F_MISS_NOTIFY},
};
constexpr unsigned int miss_flags = XT_ILA_F_MISS_DROP | XT_ILA_F_MISS_NOTIFY;

constexpr name_value translations[] = {
	{"dst", XT_ILA_TRANSLATE_DST},
	{"src", XT_ILA_TRANSLATE_SRC},
};

template <std::size_t N>
const char *name_of(const name_value (&table)[N], unsigned int value)
{
	for (const auto &e : table)
		if (e.value == value)
			return e.name;
	return "?";
}

template <std::size_t N>
unsigned int value_of(const name_value (&table)[N], const char *option,
		      std::string_view arg)
{
	for (const auto &e : table)
		if (arg == e.name)
			return e.value;
	std::string known;
	for (std::size_t i = 0; i < N; i++) {
		bool dup = false;
		for (std::size_t j = 0; j < i; j++)
			dup |= table[j].value == table[i].value;
		if (!dup)
			known += std::string(known.empty() ? "" : ", ") + table[i].name;
	}
	xtables_error(PARAMETER_PROBLEM, "ILA: %s: unknown value \"%.*s\" (one of: %s)",
		      option, static_cast<int>(arg.size()), arg.data(), known.c_str());
	return 0;
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
	auto slash = s.find('/');
	if (slash == std::string_view::npos)
		xtables_error(PARAMETER_PROBLEM,
			      "ILA: %s \"%s\": prefix length missing (expected ADDR/LEN)",
			      option, arg);

	std::string addr(s.substr(0, slash));
	if (inet_pton(AF_INET6, addr.c_str(), pfx) != 1)
		xtables_error(PARAMETER_PROBLEM, "ILA: %s \"%s\": bad IPv6 address \"%s\"",
			      option, arg, addr.c_str());

	unsigned int n;
	std::string lenstr(s.substr(slash + 1));
	/* decimal only: no sign, no 0x, no leading zero (octal to strtoul) */
	bool digits = !lenstr.empty() && lenstr.size() <= 3 &&
		      lenstr.find_first_not_of("0123456789") == std::string::npos &&
		      (lenstr.size() == 1 || lenstr[0] != '0');
	if (!digits || !xtables_strtoui(lenstr.c_str(), nullptr, &n, 0, 128))
		xtables_error(PARAMETER_PROBLEM, "ILA: %s \"%s\": bad prefix length \"%s\"",
			      option, arg, lenstr.c_str());
	if (n > ILA_MAX_PFX_LEN)
		xtables_error(PARAMETER_PROBLEM,
			      "ILA: %s \"%s\": prefix length %u is longer than %u (the locator)",
			      option, arg, n, ILA_MAX_PFX_LEN);
	if (n == 0)
		xtables_error(PARAMETER_PROBLEM,
			      "ILA: %s \"%s\": prefix length 0 would translate every address (1..%u)",
			      option, arg, ILA_MAX_PFX_LEN);
	if (!ila_pfx_host_bits_clear(pfx->s6_addr, n)) {
		in6_addr net = *pfx;
		__u8 mask[16];

		ila_pfx_mask(mask, n);
		for (int i = 0; i < 16; i++)
			net.s6_addr[i] &= mask[i];
		xtables_error(PARAMETER_PROBLEM,
			      "ILA: %s \"%s\": host bits set (did you mean %s/%u?)",
			      option, arg, addr_str(net).c_str(), n);
	}
	*len = static_cast<__u8>(n);
}

/* --map NAME: 1-31 characters of A-Z a-z 0-9 _ . - (as ilactl(8) allows) */
void parse_map_name(const char *arg, xt_ila_tginfo *info)
{
	std::string_view name(arg);
	bool ok = !name.empty() && name.size() < sizeof(info->map);

	for (char c : name)
		ok = ok && ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			    (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '-');
	if (!ok)
		xtables_error(PARAMETER_PROBLEM,
			      "ILA: --map \"%s\": bad map name (1-%zu characters of A-Z a-z 0-9 _ . -)",
			      arg, sizeof(info->map) - 1);
	std::memcpy(info->map, name.data(), name.size());
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
		info->translate = static_cast<__u8>(value_of(translations, "--translate", cb->arg));
		break;
	case O_CSUM_MODE:
		info->csum_mode = static_cast<__u8>(value_of(csum_modes, "--csum-mode", cb->arg));
		break;
	case O_MAP:
		parse_map_name(cb->arg, info);
		break;
	case O_MISS:
		info->flags |= value_of(misses, "--miss", cb->arg);
		break;
	case O_DIRECTION:
		info->flags |= value_of(directions, "--direction", cb->arg);
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
		std::printf(" translate %s map %.*s miss %s", name_of(translations, info->translate),
			    static_cast<int>(strnlen(info->map, sizeof(info->map))), info->map,
			    name_of(misses, info->flags & miss_flags));
	} else {
		std::printf(" translate %s src-pfx %s/%u dst-pfx %s/%u csum-mode %s",
			    name_of(translations, info->translate),
			    addr_str(info->src_pfx.in6).c_str(), info->src_pfx_len,
			    addr_str(info->dst_pfx.in6).c_str(), info->dst_pfx_len,
			    name_of(csum_modes, info->csum_mode));
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
			    name_of(translations, info->translate),
			    name_of(misses, info->flags & miss_flags));
	} else {
		std::printf(" --src-pfx %s/%u --dst-pfx %s/%u --translate %s --csum-mode %s",
			    addr_str(info->src_pfx.in6).c_str(), info->src_pfx_len,
			    addr_str(info->dst_pfx.in6).c_str(), info->dst_pfx_len,
			    name_of(translations, info->translate),
			    name_of(csum_modes, info->csum_mode));
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

	const char *field = info->translate == XT_ILA_TRANSLATE_SRC ? "saddr" : "daddr";
	xt_xlate_add(xl, "ip6 %s %s/%u ip6 %s set ip6 %s & %s | %s", field,
		     addr_str(info->src_pfx.in6).c_str(), info->src_pfx_len, field, field,
		     addr_str(host).c_str(), addr_str(info->dst_pfx.in6).c_str());
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
