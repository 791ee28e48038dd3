// SPDX-License-Identifier: GPL-2.0-only
//
// libxt_rtcache: iptables/ip6tables plugin for the "rtcache" match
// (kernel module xt_rtcache, route cache nf_conntrack_rtcache).
//
//   -m rtcache              packet's connection has a valid cached route for
//                           this direction and input interface
//   -m rtcache ! --cached   it has not
#include <cstdio>
#include <xtables.h>
#include <linux/netfilter/xt_rtcache.h>

namespace {

enum { O_CACHED = 0 };

const struct xt_option_entry rtcache_opts[] = {
	{.name = "cached", .type = XTTYPE_NONE, .id = O_CACHED,
	 .flags = XTOPT_INVERT},
	XTOPT_TABLEEND,
};

void rtcache_help()
{
	std::printf(
"rtcache match options:\n"
"[!] --cached    the packet's connection has a valid cached route\n"
"                (nf_conntrack_rtcache) for this direction and input\n"
"                interface (the default without options)\n");
}

void rtcache_parse(struct xt_option_call *cb)
{
	auto *info = static_cast<struct xt_rtcache_info *>(cb->data);

	xtables_option_parse(cb);
	if (cb->entry->id == O_CACHED && cb->invert)
		info->flags |= XT_RTCACHE_INVERT;
}

bool inverted(const struct xt_entry_match *match)
{
	const auto *info = reinterpret_cast<const struct xt_rtcache_info *>(match->data);

	return info->flags & XT_RTCACHE_INVERT;
}

void rtcache_print(const void *, const struct xt_entry_match *match, int)
{
	std::printf(inverted(match) ? " rtcache ! cached" : " rtcache cached");
}

void rtcache_save(const void *, const struct xt_entry_match *match)
{
	if (inverted(match))
		std::printf(" ! --cached");
}

struct xtables_match rtcache_match = {
	.version	= XTABLES_VERSION,
	.name		= "rtcache",
	.revision	= 0,
	.family		= NFPROTO_UNSPEC,
	.size		= XT_ALIGN(sizeof(struct xt_rtcache_info)),
	.userspacesize	= XT_ALIGN(sizeof(struct xt_rtcache_info)),
	.help		= rtcache_help,
	.print		= rtcache_print,
	.save		= rtcache_save,
	.x6_parse	= rtcache_parse,
	.x6_options	= rtcache_opts,
};

} // namespace

__attribute__((constructor)) static void rtcache_register()
{
	xtables_register_match(&rtcache_match);
}
