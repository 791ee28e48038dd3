// SPDX-License-Identifier: GPL-2.0
#include "expect.h"

#include <atomic>
#include <cstring>

namespace stress {

namespace {

constexpr const char *kWhyNames[] = {
	"ok",	  "policy",	"missing", "invalid", "nosuch",	      "exists", "full",
	"in-use", "bad-header", "bad-cmd", "bad-family", "dump-running", "denied",
};
static_assert(sizeof(kWhyNames) / sizeof(kWhyNames[0]) == std::size_t(Why::Count));

constexpr const char *kKnobNames[] = {
	"hook-replace",
	"unpriv-entry-read",
	"unpriv-join",
	"swap-under-dump",
};
static_assert(sizeof(kKnobNames) / sizeof(kKnobNames[0]) == std::size_t(Knob::Count));

KnobMode g_mode[std::size_t(Knob::Count)] = {};
std::atomic<int> g_state[std::size_t(Knob::Count)] = {-1, -1, -1, -1};

} // namespace

const char *why_name(Why w) { return kWhyNames[std::size_t(w)]; }
const char *knob_name(Knob k) { return kKnobNames[std::size_t(k)]; }

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

bool set_knobs(const std::string &spec, std::string &problem)
{
	std::size_t pos = 0;
	while (pos < spec.size()) {
		std::size_t end = spec.find(',', pos);
		if (end == std::string::npos)
			end = spec.size();
		const std::string item = spec.substr(pos, end - pos);
		pos = end + 1;
		if (item.empty())
			continue;
		const std::size_t eq = item.find('=');
		const std::string name = item.substr(0, eq), val = eq == std::string::npos ? "" : item.substr(eq + 1);
		std::size_t k = 0;
		while (k < std::size_t(Knob::Count) && name != kKnobNames[k])
			k++;
		if (k == std::size_t(Knob::Count)) {
			problem = "--expect: unknown behaviour \"" + name + "\"";
			return false;
		}
		if (val == "either")
			g_mode[k] = KnobMode::Either;
		else if (val == "old")
			g_mode[k] = KnobMode::Old;
		else if (val == "new")
			g_mode[k] = KnobMode::New;
		else {
			problem = "--expect " + name + ": \"" + val + "\" is not old, new or either";
			return false;
		}
	}
	for (std::size_t k = 0; k < std::size_t(Knob::Count); k++)
		g_state[k] = g_mode[k] == KnobMode::Old ? 0 : g_mode[k] == KnobMode::New ? 1 : -1;
	return true;
}

KnobMode knob_mode(Knob k) { return g_mode[std::size_t(k)]; }

int knob_state(Knob k) { return g_state[std::size_t(k)].load(); }

bool knob_observe(Knob k, bool is_new)
{
	int want = is_new ? 1 : 0, cur = -1;
	if (g_state[std::size_t(k)].compare_exchange_strong(cur, want))
		return true;
	return cur == want;
}

namespace {
constexpr const char *kBugNames[] = {"hook-name-latin1"};
static_assert(sizeof(kBugNames) / sizeof(kBugNames[0]) == std::size_t(Bug::Count));
bool g_bugs[std::size_t(Bug::Count)] = {};
} // namespace

const char *bug_name(Bug b) { return kBugNames[std::size_t(b)]; }

bool known_bug(Bug b) { return g_bugs[std::size_t(b)]; }

bool set_known_bugs(const std::string &spec, std::string &problem)
{
	std::size_t pos = 0;
	while (pos < spec.size()) {
		std::size_t end = spec.find(',', pos);
		if (end == std::string::npos)
			end = spec.size();
		const std::string item = spec.substr(pos, end - pos);
		pos = end + 1;
		if (item.empty())
			continue;
		std::size_t k = 0;
		while (k < std::size_t(Bug::Count) && item != kBugNames[k])
			k++;
		if (k == std::size_t(Bug::Count)) {
			problem = "--known-bugs: unknown bug \"" + item + "\"";
			return false;
		}
		g_bugs[k] = true;
	}
	return true;
}

std::string knob_summary()
{
	std::string s;
	for (std::size_t k = 0; k < std::size_t(Knob::Count); k++) {
		int st = g_state[k].load();
		s += std::string(s.empty() ? "" : " ") + kKnobNames[k] + "=" +
		     (st < 0 ? "unseen" : st ? "new" : "old");
	}
	return s;
}

} // namespace stress
