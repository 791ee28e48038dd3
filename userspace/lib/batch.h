// SPDX-License-Identifier: GPL-2.0
// Batch files for ilactl -b: one command per line, as on the command line
// after the options ("map add m1 0:0:0:1 2001:db8:1:0"); blank lines and
// '#' comments are skipped. Only commands that change state are allowed.
#pragma once

#include <cstddef>
#include <functional>
#include <stdexcept>
#include <string>
#include <string_view>

#include "command.h"

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

// Calls FN(line_number, command) for each command in TEXT, in order.
// Throws BatchError naming the first bad line (1-based) and why.
void for_each_batch_command(std::string_view text,
			    const std::function<void(std::size_t, const Command &)> &fn);

} // namespace ila
