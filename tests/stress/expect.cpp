// SPDX-License-Identifier: GPL-2.0
#include "expect.h"

#include <cstring>

namespace stress {

namespace {

constexpr const char *kWhyNames[] = {
	"ok",	  "policy",	"missing", "invalid", "nosuch",	      "exists", "full",
	"in-use", "bad-header", "bad-cmd", "bad-family", "dump-running", "denied",
};
static_assert(sizeof(kWhyNames) / sizeof(kWhyNames[0]) == std::size_t(Why::Count));

} // namespace

const char *why_name(Why w) { return kWhyNames[std::size_t(w)]; }

std::string ErrSet::str() const
{
	std::string s;
	for (int e = 0; e < 256; e++) {
		if (!has(e))
			continue;
		if (!s.empty())
			s += "|";
		if (e == 0) {
			s += "0";
			continue;
		}
		const char *n = strerrorname_np(e);
		s += n ? n : std::to_string(e);
	}
	return s.empty() ? "{}" : s;
}

} // namespace stress
