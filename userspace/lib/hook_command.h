// SPDX-License-Identifier: GPL-2.0
// ilactl hook: the grammar of the hook commands (the words on the command
// line and in batch files), as command.h is for the map commands.
//
//   hook add|replace NAME HOOK [translate dst|src] src-pfx P/L dst-pfx Q/L
//            [csum-mode MODE] [direction sir2ila|ila2sir] [priority N]
//   hook add|replace NAME HOOK [translate dst|src] src-pfx P/L map MAP
//            [miss accept|drop[,notify]] [direction sir2ila|ila2sir] [priority N]
//   hook del NAME
//   hook list | show
//   hook help
//   HOOK := prerouting | input | output | postrouting
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ila {

enum class HookOp { Add, Replace, Del, List, Help };

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
	bool replaced = false; // an event: NEWHOOK with REPLACE
	std::uint64_t packets = 0, bytes = 0, misses = 0, drops = 0;
};

struct HookCommand {
	HookOp op = HookOp::List;
	Hook hook;
	bool is_write() const { return op == HookOp::Add || op == HookOp::Replace || op == HookOp::Del; }
};

// Parses WORDS (starting at "hook"); throws UsageError naming the word
// and the one grammar line it breaks.
HookCommand parse_hook_command(const std::vector<std::string_view> &words);

// The grammar of the hook commands, one line each (hook help).
extern const char kHookHelp[];

std::string_view hook_point_name(std::uint8_t point);
// "del", "add", "replace" ...
std::string_view hook_op_name(HookOp op);
// What a miss does: "accept", "drop,notify" ...
std::string_view hook_miss_word(const Hook &h);
// "ADDR/LEN"
std::string pfx_text(const std::array<std::uint8_t, 16> &p, unsigned len);

} // namespace ila
