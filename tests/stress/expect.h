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
	Denied,		// write command, or an entry read (GETENTRY, its dump), without
			// CAP_NET_ADMIN in the user namespace owning the netns
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
	// DELMAP only: swap, flush and destroy never wait for entry dumps (a
	// dump walks the table it started on, which it holds)
	{Why::InUse, {EBUSY}, "map in use by a rule or hook"},
	{Why::BadHeader, {EINVAL}, "bad netlink or genl header"},
	{Why::BadCmd, {EOPNOTSUPP}, "unknown command or operation"},
	{Why::BadFamily, {ENOENT}, "no such generic netlink family"},
	{Why::DumpRunning, {EBUSY}, "a dump is already running on the socket"},
	// GENL_UNS_ADMIN_PERM on every write and on GETENTRY (doit and dump);
	// GETMAP and GETHOOK stay open, as route dumps are
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

} // namespace stress
