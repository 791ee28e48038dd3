// SPDX-License-Identifier: GPL-2.0
#include "ila_hook_client.h"

#include <arpa/inet.h>
#include <linux/ila_hook.h>
#include <linux/ila_map.h>

#include <cstring>

#include "command.h"

namespace ila {

IlaHookClient::IlaHookClient() : genl_(ILA_HOOK_GENL_NAME, "nf_ila", ILA_HOOK_GENL_VERSION) {}

void IlaHookClient::add(const Hook &h, bool replace)
{
	nlmsghdr *nlh = genl_.start(ILA_HOOK_CMD_NEWHOOK, NLM_F_ACK);
	if (replace)
		mnl_attr_put(nlh, ILA_HOOK_A_REPLACE, 0, nullptr);
	mnl_attr_put_strz(nlh, ILA_HOOK_A_NAME, h.name.c_str());
	mnl_attr_put_u8(nlh, ILA_HOOK_A_POINT, h.point);
	if (h.priority)
		mnl_attr_put_u32(nlh, ILA_HOOK_A_PRIORITY, std::uint32_t(*h.priority));
	if (h.translate)
		mnl_attr_put_u8(nlh, ILA_HOOK_A_TRANSLATE, *h.translate);
	mnl_attr_put(nlh, ILA_HOOK_A_SRC_PFX, 16, h.src_pfx.data());
	mnl_attr_put_u8(nlh, ILA_HOOK_A_PFX_LEN, h.pfx_len);
	if (h.direction)
		mnl_attr_put_u8(nlh, ILA_HOOK_A_DIRECTION, *h.direction);
	if (!h.map.empty()) {
		mnl_attr_put_strz(nlh, ILA_HOOK_A_MAP, h.map.c_str());
		if (h.miss_drop)
			mnl_attr_put(nlh, ILA_HOOK_A_MISS_DROP, 0, nullptr);
		if (h.miss_notify)
			mnl_attr_put(nlh, ILA_HOOK_A_MISS_NOTIFY, 0, nullptr);
	} else {
		mnl_attr_put(nlh, ILA_HOOK_A_DST_PFX, 16, h.dst_pfx.data());
		if (h.csum_mode)
			mnl_attr_put_u8(nlh, ILA_HOOK_A_CSUM_MODE, *h.csum_mode);
	}
	genl_.transact(std::string(replace ? "hook replace " : "hook add ") + h.name);
}

std::uint32_t IlaHookClient::events_group() const
{
	return genl_.mcast_group(ILA_HOOK_MCGRP_EVENTS);
}

void IlaHookClient::del(const std::string &name)
{
	nlmsghdr *nlh = genl_.start(ILA_HOOK_CMD_DELHOOK, NLM_F_ACK);
	mnl_attr_put_strz(nlh, ILA_HOOK_A_NAME, name.c_str());
	genl_.transact("hook del " + name);
}

Hook parse_hook(const nlmsghdr *nlh)
{
	auto at = genl_attrs<ILA_HOOK_A_MAX>(nlh);
	Hook h;
	h.name = get_str(at[ILA_HOOK_A_NAME]);
	h.point = get_u8(at[ILA_HOOK_A_POINT]);
	h.priority = std::int32_t(get_u32(at[ILA_HOOK_A_PRIORITY]));
	h.translate = get_u8(at[ILA_HOOK_A_TRANSLATE]);
	h.pfx_len = get_u8(at[ILA_HOOK_A_PFX_LEN]);
	h.direction = get_u8(at[ILA_HOOK_A_DIRECTION]);
	if (const nlattr *a = at[ILA_HOOK_A_SRC_PFX]; a && mnl_attr_get_payload_len(a) == 16)
		std::memcpy(h.src_pfx.data(), mnl_attr_get_payload(a), 16);
	if (const nlattr *a = at[ILA_HOOK_A_DST_PFX]; a && mnl_attr_get_payload_len(a) == 16) {
		std::memcpy(h.dst_pfx.data(), mnl_attr_get_payload(a), 16);
		h.has_dst = true;
	}
	h.map = get_str(at[ILA_HOOK_A_MAP]);
	h.miss_drop = at[ILA_HOOK_A_MISS_DROP] != nullptr;
	h.miss_notify = at[ILA_HOOK_A_MISS_NOTIFY] != nullptr;
	h.replaced = at[ILA_HOOK_A_REPLACE] != nullptr;
	h.csum_mode = get_u8(at[ILA_HOOK_A_CSUM_MODE]);
	if (h.name.empty() || (!h.has_dst && h.map.empty()))
		throw NetlinkError(EPROTO, "hook list: reply without name or target");
	if (h.pfx_len > 128 || h.point >= __ILA_HOOK_POINT_MAX || *h.csum_mode > ILA_MAP_CSUM_MAX)
		throw NetlinkError(EPROTO, "hook list: reply with an out-of-range value");
	if (const nlattr *st = at[ILA_HOOK_A_STATS]; st && mnl_attr_validate(st, MNL_TYPE_NESTED) == 0) {
		auto s = nested_attrs<ILA_HOOK_STATS_MAX>(st);
		h.packets = get_u64(s[ILA_HOOK_STATS_PACKETS]);
		h.bytes = get_u64(s[ILA_HOOK_STATS_BYTES]);
		h.misses = get_u64(s[ILA_HOOK_STATS_MISSES]);
		h.drops = get_u64(s[ILA_HOOK_STATS_DROPS]);
	}
	return h;
}

std::vector<Hook> IlaHookClient::list()
{
	std::vector<Hook> out;
	genl_.start(ILA_HOOK_CMD_GETHOOK, NLM_F_DUMP);
	genl_.transact("hook list", [&](const nlmsghdr *nlh) { out.push_back(parse_hook(nlh)); });
	return out;
}

} // namespace ila
