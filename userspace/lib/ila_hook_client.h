// SPDX-License-Identifier: GPL-2.0
// ilactl hook: the grammar of the hook commands and a client for the
// ILA_HOOK generic netlink family of nf_ila_hook (<linux/ila_hook.h>).
//
//   hook add NAME HOOK [translate dst|src] src-pfx P/L dst-pfx Q/L
//            [csum-mode MODE] [direction sir2ila|ila2sir] [priority N]
//   hook add NAME HOOK [translate dst|src] src-pfx P/L map MAP
//            [miss accept|drop[,notify]] [direction sir2ila|ila2sir] [priority N]
//   hook del NAME
//   hook list
//   HOOK := prerouting | input | output | postrouting
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "genl_client.h"

namespace ila {

enum class HookOp { Add, Del, List };

struct Hook {
	std::string name;
	std::uint8_t point = 0;	// enum ila_hook_point
	std::optional<std::int32_t> priority;
	std::optional<std::uint8_t> translate;
	std::array<std::uint8_t, 16> src_pfx{}, dst_pfx{};
	std::uint8_t pfx_len = 0;
	bool has_dst = false;
	std::optional<std::uint8_t> csum_mode, direction;
	std::string map;
	bool miss_drop = false;
	bool miss_notify = false; // misses reported to ilactl monitor
	// reply only
	std::uint64_t packets = 0, bytes = 0, misses = 0, drops = 0;
};

struct HookCommand {
	HookOp op = HookOp::List;
	Hook hook;
};

// Parses WORDS (starting at "hook"); throws UsageError naming the word.
HookCommand parse_hook_command(const std::vector<std::string_view> &words);

// One GETHOOK reply; NetlinkError(EPROTO) without name or target, or with
// values out of range.
Hook parse_hook(const nlmsghdr *nlh);

std::string_view hook_point_name(std::uint8_t point);
// "NAME prerouting priority -250 translate dst src-pfx ... packets N ..."
std::string hook_text(const Hook &h);
// The same without the counters: the words `hook add` takes after "hook add".
std::string hook_spec(const Hook &h);
std::string hook_json(const Hook &h);
// hook_json without the counters (monitor's events)
std::string hook_spec_json(const Hook &h);
// "hook add SPEC" / "hook del NAME": a NEWHOOK/DELHOOK event (parse_hook
// of a message of the "events" group) as the command that makes it.
std::string hook_event_text(std::uint8_t cmd, const Hook &h);
std::string hook_event_json(std::uint8_t cmd, const Hook &h);

class IlaHookClient {
public:
	IlaHookClient();
	void add(const Hook &h);
	void del(const std::string &name);
	std::vector<Hook> list();
	std::uint16_t family_id() const { return genl_.family_id(); }
	// the "events" group (NEWHOOK/DELHOOK after each change)
	std::uint32_t events_group() const;

private:
	GenlClient genl_;
};

} // namespace ila
