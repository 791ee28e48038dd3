// SPDX-License-Identifier: GPL-2.0
// ilactl commands: one parser for the command line and for batch lines.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace ila {

enum class Op { Create, Destroy, List, Add, Replace, Del, Get, Show, Flush, Stats, Swap, ResetCounters,
		Miss /* an event only */ };

struct Command {
	Op op = Op::List;
	std::string map;
	std::string map2; // swap
	std::uint64_t ident = 0;   // host order, first group most significant
	std::uint64_t locator = 0; // host order
	std::optional<std::uint8_t> csum_mode;
	std::optional<std::uint32_t> max_entries;
	bool notify_miss = false; // create

	bool is_write() const;
};

// Bad command: the message says what is wrong (and with which word).
class UsageError : public std::runtime_error {
public:
	using std::runtime_error::runtime_error;
};

// Parses "map create NAME [max-entries N]", "map add NAME IDENT LOCATOR
// [csum-mode M]", ... (the words after the options on the command line).
// The leading "map" may be omitted. Throws UsageError.
Command parse_command(const std::vector<std::string_view> &words);

// The grammar of the map commands, one line each (map help).
extern const char kMapHelp[];

// Splits a line at blanks (space, tab); '#' starts a comment.
std::vector<std::string_view> split_words(std::string_view line);

// The command word of OP ("add", "reset-counters"; "miss" for the event).
std::string_view op_name(Op op);

// "map add m1 0:0:0:1" style text of a command, for messages.
std::string describe(const Command &cmd);

} // namespace ila
