// SPDX-License-Identifier: GPL-2.0
// Batch files for ilactl -b and restore: one command per line, as on the
// command line after the options ("map add m1 0:0:0:1 2001:db8:1:0",
// "hook del h"); blank lines and '#' comments are skipped. Only commands
// that change state are allowed. The lines are applied in file order.
#pragma once

#include <cstddef>
#include <functional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "command.h"
#include "hook_command.h"

namespace ila {

class BatchError : public std::runtime_error {
public:
	BatchError(std::size_t line, const std::string &reason)
		: std::runtime_error("line " + std::to_string(line) + ": " + reason), line_(line),
		  reason_(reason)
	{
	}
	std::size_t line() const { return line_; }
	const std::string &reason() const { return reason_; }

private:
	std::size_t line_;
	std::string reason_;
};

// The commands a batch file may hold, for messages.
extern const char kBatchCommands[];

// One command of a batch file: a map command or (HOOK) a hook command.
struct ScriptLine {
	std::size_t line = 0; // 1-based
	bool is_hook = false;
	Command map;
	HookCommand hook;
};

// Every command of TEXT, in file order. Throws BatchError naming the
// first bad line (1-based) and why; nothing is applied then.
std::vector<ScriptLine> parse_script(std::string_view text);
// The same, reading every line: each bad line is one BatchError in ERRORS
// (in line order) and is left out of the result. ON_LINES, when set, is
// called with the number of lines read so far, every 4096 lines and at the
// end (progress).
std::vector<ScriptLine> parse_script(std::string_view text, std::vector<BatchError> &errors,
				     const std::function<void(std::size_t)> &on_lines = {});

} // namespace ila
