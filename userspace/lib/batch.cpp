// SPDX-License-Identifier: GPL-2.0
#include "batch.h"

namespace ila {

const char kBatchCommands[] = "map create, destroy, add, replace, del, flush, swap, "
			      "reset-counters; hook add, replace, del";

std::vector<ScriptLine> parse_script(std::string_view text)
{
	std::vector<BatchError> errors;
	auto out = parse_script(text, errors);
	if (!errors.empty())
		throw errors.front();
	return out;
}

std::vector<ScriptLine> parse_script(std::string_view text, std::vector<BatchError> &errors,
				     const std::function<void(std::size_t)> &on_lines)
{
	std::vector<ScriptLine> out;
	std::size_t lineno = 0, pos = 0;

	while (pos < text.size()) {
		std::size_t nl = text.find('\n', pos);
		std::string_view line =
			text.substr(pos, nl == std::string_view::npos ? std::string_view::npos : nl - pos);
		pos = nl == std::string_view::npos ? text.size() : nl + 1;
		lineno++;
		if (on_lines && lineno % 4096 == 0)
			on_lines(lineno);
		if (line.find('\0') != std::string_view::npos) {
			errors.emplace_back(lineno, "NUL byte in line");
			continue;
		}
		auto words = split_words(line);
		if (words.empty())
			continue;
		ScriptLine s;
		s.line = lineno;
		try {
			if (words[0] == "hook") {
				s.is_hook = true;
				s.hook = parse_hook_command(words);
				if (!s.hook.is_write())
					throw UsageError("hook " + std::string(hook_op_name(s.hook.op)) +
							 " is not a batch command (allowed: " +
							 kBatchCommands + ")");
			} else {
				s.map = parse_command(words);
				if (!s.map.is_write())
					throw UsageError("\"" + describe(s.map) + "\": only " +
							 kBatchCommands + " are allowed in a batch");
			}
		} catch (const UsageError &e) {
			errors.emplace_back(lineno, e.what());
			continue;
		}
		out.push_back(std::move(s));
	}
	if (on_lines)
		on_lines(lineno);
	return out;
}

} // namespace ila
