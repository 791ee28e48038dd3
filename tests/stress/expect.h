// SPDX-License-Identifier: GPL-2.0
// What the kernel may answer, in one table.
//
// Every request the generator sends is classified by why it should fail
// (or not): the classes below. The errnos each class allows are the table
// kExpect: the documented behaviour of <linux/ila_map.h>, <linux/ila_hook.h>
// and of the generic netlink core that checks headers, permissions and
// attribute policies before our code runs. When the kernel side changes
// what it answers, change the row here (and say why in its comment).
//
// A request can have several reasons to fail at once (an unknown map and a
// bad prefix): it may then fail with the errno of any of them, except that
// the core's checks come first (header, command, permission, policy), so
// a class of the core decides alone.
//
// Behaviour that is about to change is a Knob: "either" accepts both the
// old and the new answer but latches the first one seen, so one run can
// never mix them; "old" / "new" insist on one (ila_stress --expect
// NAME=old|new|either, or the STRESS_EXPECT environment variable).
#pragma once

#include <cerrno>
#include <cstdint>
#include <initializer_list>
#include <string>

namespace stress {

enum class Why : std::uint8_t {
	Ok,		// valid in the current state
	Policy,		// an attribute fails the family's nla_policy
	Missing,	// a required attribute is missing
	Invalid,	// a value the command refuses (name characters, prefix bits,
			// combinations, priority at the ends of s32)
	NoSuch,		// no such map, entry or hook
	Exists,		// the map, entry or hook exists (without REPLACE)
	Full,		// max-entries reached, too many maps or hooks in the netns
	InUse,		// DELMAP while a rule or a hook uses the map
	BadHeader,	// genlmsghdr.reserved != 0, nlmsg_flags outside REQUEST ACK ECHO
			// DUMP, nlmsg_len shorter than the genl header
	BadCmd,		// unknown command; DUMP on a do-only command
	BadFamily,	// nlmsg_type that is no family
	DumpRunning,	// a dump request while this socket's dump is unfinished
	Denied,		// write command without CAP_NET_ADMIN in the netns's owner userns
	Count,
};

struct ExpectRow {
	Why why;
	std::initializer_list<int> errnos;
	const char *what;
};

// The table. Order: as enum Why.
inline constexpr ExpectRow kExpect[] = {
	{Why::Ok, {0}, "success"},
	// lib/nlattr.c: wrong length for the type, NLA_REJECT (reply-only
	// attributes), NLA_UNSPEC under strict validation (PAD, unknown to the
	// policy), type 0 or above maxattr, NLA_F_NESTED on a plain attribute,
	// bytes left over, unterminated string: EINVAL; integer or binary length
	// out of range, string too long, flag with payload: ERANGE
	{Why::Policy, {EINVAL, ERANGE}, "attribute fails the policy"},
	{Why::Missing, {EINVAL}, "required attribute missing"},
	{Why::Invalid, {EINVAL}, "value refused by the command"},
	{Why::NoSuch, {ENOENT}, "no such map, entry or hook"},
	{Why::Exists, {EEXIST}, "exists"},
	{Why::Full, {ENOSPC}, "full"},
	{Why::InUse, {EBUSY}, "map in use by a rule or hook"},
	{Why::BadHeader, {EINVAL}, "bad netlink or genl header"},
	{Why::BadCmd, {EOPNOTSUPP}, "unknown command or operation"},
	{Why::BadFamily, {ENOENT}, "no such generic netlink family"},
	{Why::DumpRunning, {EBUSY}, "a dump is already running on the socket"},
	{Why::Denied, {EPERM}, "needs CAP_NET_ADMIN"},
};
static_assert(sizeof(kExpect) / sizeof(kExpect[0]) == std::size_t(Why::Count));

const char *why_name(Why w);

// A set of errnos (0 = success).
class ErrSet {
public:
	ErrSet() = default;
	ErrSet(std::initializer_list<int> l)
	{
		for (int e : l)
			add(e);
	}
	static ErrSet of(Why w)
	{
		ErrSet s;
		for (int e : kExpect[std::size_t(w)].errnos)
			s.add(e);
		return s;
	}
	void add(int e) { bits_[unsigned(e) / 64 % 4] |= 1ULL << (unsigned(e) % 64); }
	void add(Why w) { *this |= of(w); }
	bool has(int e) const { return e >= 0 && e < 256 && (bits_[e / 64] >> (e % 64) & 1); }
	bool empty() const { return !(bits_[0] | bits_[1] | bits_[2] | bits_[3]); }
	ErrSet &operator|=(const ErrSet &o)
	{
		for (int i = 0; i < 4; i++)
			bits_[i] |= o.bits_[i];
		return *this;
	}
	std::string str() const;

private:
	std::uint64_t bits_[4] = {};
};

// The behaviours being changed on the kernel side (see the top).
enum class Knob : std::uint8_t {
	// NEWHOOK with ILA_HOOK_A_REPLACE: old = refused by the policy (EINVAL);
	// new = replaces the hook NAME, ENOENT when there is none
	HookReplace,
	// GETENTRY (doit and dump) without CAP_NET_ADMIN: old = allowed (reads
	// are open); new = EPERM
	UnprivEntryRead,
	// joining the "events" groups without CAP_NET_ADMIN: old = allowed;
	// new = EPERM (GENL_MCAST_CAP_NET_ADMIN)
	UnprivJoin,
	// SWAP while an entry dump of one of the maps is open: old = EBUSY;
	// new = swaps (the dump keeps walking the table it started on)
	SwapUnderDump,
	Count,
};
enum class KnobMode : std::uint8_t { Either, Old, New };

const char *knob_name(Knob k);
// "NAME=old|new|either,..." ; false with a message on a bad word
bool set_knobs(const std::string &spec, std::string &problem);
KnobMode knob_mode(Knob k);
// Records that the kernel showed behaviour NEW (true) or OLD (false) for
// K; false when that contradicts the mode or an earlier observation.
bool knob_observe(Knob k, bool is_new);
// What is known so far: -1 nothing, 0 old, 1 new.
int knob_state(Knob k);
std::string knob_summary();

// Kernel bugs the run may be told to tolerate (--known-bugs NAME,... or
// STRESS_KNOWN_BUGS), so that a run can look for others while one is being
// fixed. Empty by default: every bug fails the run.
enum class Bug : std::uint8_t {
	// nf_ila (ila_hook.c) checks hook names with the kernel's isalnum(), which
	// takes Latin-1 letters (0xc0-0xff but 0xd7, 0xf7): names outside
	// the documented [A-Za-z0-9_.-] are accepted
	HookNameLatin1,
	Count,
};
const char *bug_name(Bug b);
bool set_known_bugs(const std::string &spec, std::string &problem);
bool known_bug(Bug b);

} // namespace stress
