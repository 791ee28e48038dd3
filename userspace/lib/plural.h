// SPDX-License-Identifier: GPL-2.0
// Counts in messages: "1 transaction", "2 transactions", "3 entries",
// "4 batches" (ilactl and ila-syncd alike).
#pragma once

#include <cstddef>
#include <string>

namespace ila {

// N and WORD (singular), made plural unless N is 1.
inline std::string plural(std::size_t n, const std::string &word)
{
	if (n == 1)
		return "1 " + word;
	std::string w = word;
	if (w.size() > 1 && w.back() == 'y' && std::string("aeiou").find(w[w.size() - 2]) == std::string::npos)
		w.replace(w.size() - 1, 1, "ies");
	else if (w.ends_with("s") || w.ends_with("x") || w.ends_with("ch") || w.ends_with("sh"))
		w += "es";
	else
		w += "s";
	return std::to_string(n) + " " + w;
}

} // namespace ila
