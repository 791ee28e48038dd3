// SPDX-License-Identifier: GPL-2.0
#include "batch.h"

namespace ila {

void for_each_batch_command(std::string_view text,
			    const std::function<void(std::size_t, const Command &)> &fn)
{
	std::size_t lineno = 0, pos = 0;

	while (pos < text.size()) {
		std::size_t nl = text.find('\n', pos);
		std::string_view line =
			text.substr(pos, nl == std::string_view::npos ? std::string_view::npos : nl - pos);
		pos = nl == std::string_view::npos ? text.size() : nl + 1;
		lineno++;
		if (line.find('\0') != std::string_view::npos)
			throw BatchError(lineno, "NUL byte in line");
		auto words = split_words(line);
		if (words.empty())
			continue;
		Command cmd;
		try {
			cmd = parse_command(words);
		} catch (const UsageError &e) {
			throw BatchError(lineno, e.what());
		}
		if (!cmd.is_write())
			throw BatchError(lineno, "\"" + describe(cmd) +
							 "\": only create, destroy, add, replace, "
							 "del, flush and swap are allowed in a batch");
		fn(lineno, cmd);
	}
}

} // namespace ila
