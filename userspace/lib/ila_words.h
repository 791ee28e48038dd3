// SPDX-License-Identifier: GPL-2.0
// Userspace helpers over the word tables of <common/ila_names.h>, header
// only so that the ip6tables plugin (not linked with ilactl's library)
// uses them too.
#pragma once

#include <cstring>
#include <string>

#include <common/ila_names.h>

namespace ila {

// The shortest word for VALUE in TABLE ("notify" rather than
// "accept,notify"; the first of equal length), or nullptr.
inline const char *shortest_word(const ila_word *table, int value)
{
	const char *best = nullptr;
	for (; table->name; table++)
		if (table->value == value && (!best || std::strlen(table->name) < std::strlen(best)))
			best = table->name;
	return best;
}

// "a, b or c": the canonical word of each value in TABLE, for messages.
inline std::string word_list(const ila_word *table)
{
	std::string out;
	int n = 0;
	for (const ila_word *w = table; w->name; w++)
		if (ila_word_name(table, w->value) == w->name)
			n++;
	int i = 0;
	for (const ila_word *w = table; w->name; w++) {
		if (ila_word_name(table, w->value) != w->name)
			continue;
		if (i)
			out += i + 1 == n ? " or " : ", ";
		out += w->name;
		i++;
	}
	return out;
}

} // namespace ila
