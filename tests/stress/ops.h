// SPDX-License-Identifier: GPL-2.0
// The requests of ILA_MAP and ILA_HOOK as meanings (MapOp, HookOp), their
// encoding, the ways to spoil an encoded request (mutate), what a request
// is refused for whatever the state (static_errors), and the checks of
// what the kernel sends back.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "engine.h"

namespace stress {

using Pfx = std::array<std::uint8_t, 16>;

struct MapOp {
	std::uint8_t cmd = 0;
	bool dump = false;
	std::optional<std::string> name, name2; // as the kernel reads them
	std::optional<std::uint64_t> ident, locator; // the 8 bytes, as sent
	std::optional<std::uint8_t> csum;
	std::optional<std::uint32_t> max;
	bool replace = false, notify = false;
};

struct HookOp {
	std::uint8_t cmd = 0;
	bool dump = false;
	std::optional<std::string> name;
	std::optional<std::uint8_t> point, translate, pfx_len, csum, dir;
	std::optional<std::int32_t> prio;
	std::optional<Pfx> src, dst;
	std::optional<std::string> map;
	bool miss_drop = false, miss_notify = false, replace = false;
};

// What a hook is, with the defaults applied (as GETHOOK reports it).
struct HookState {
	std::uint8_t point = 0;
	std::int32_t prio = 0;
	std::uint8_t translate = 0;
	Pfx src{};
	std::uint8_t pfx_len = 0;
	std::uint8_t dir = 0;
	std::string map; // empty: static prefixes
	bool miss_drop = false, miss_notify = false;
	Pfx dst{};
	std::uint8_t csum = 0;
	bool operator==(const HookState &) const = default;
	std::string str() const;
};
HookState effective(const HookOp &op);

struct MapInfo {
	std::string name;
	std::uint32_t entries = 0, max = 0, rules = 0;
	bool notify = false;
};
struct EntryInfo {
	std::uint64_t ident = 0, locator = 0, hits = 0;
	std::uint8_t csum = 0;
	std::string name;
};

bool valid_name(const std::string &s); // 1..31 of [A-Za-z0-9_.-]
bool map_cmd_writes(std::uint8_t cmd);
bool hook_cmd_writes(std::uint8_t cmd);
std::string map_label(std::uint8_t cmd, bool dump);
std::string hook_label(std::uint8_t cmd, bool dump);
const char *point_name(std::uint8_t point);
bool point_src(std::uint8_t point);
bool host_bits_clear(const Pfx &p, unsigned len);
std::string pfx_str(const Pfx &p, unsigned len);

Request build(const MapOp &op, Rng &rng);
Request build(const HookOp &op, Rng &rng);

// Reasons a request with these attributes is refused in any state
// (missing or refused values); the state adds NoSuch, Exists, ...
ErrSet static_errors(const MapOp &op);
ErrSet static_errors(const HookOp &op);

enum class MutKind : std::uint8_t { None, Malformed, Ignored, Dropped };
struct Mutation {
	MutKind kind = MutKind::None;
	Why why = Why::Ok;	  // Malformed: the class
	std::string what;	  // for failure reports
	bool last_only = false;	  // must be the last message of its datagram
	bool dump_flag = false;	  // the mutation set NLM_F_DUMP on a do-only command
};
// Benign changes (attribute order, duplicates whose last copy is the real
// one, NLA_F_NET_BYTEORDER, junk after a string's NUL, ECHO, no ACK, the
// genl version), and with MALFORMED one way to make the request wrong.
// LAST_OK: the request may be the last of its datagram (truncations).
Mutation mutate(Request &r, bool is_map, bool is_dump, bool malformed, bool last_ok, Rng &rng);

// Reply checks: "" or what is wrong. They fill OUT when given.
std::string check_map_reply(const std::vector<AttrView> &at, MapInfo *out);
std::string check_entry_reply(const std::vector<AttrView> &at, EntryInfo *out);
std::string check_hook_reply(const std::vector<AttrView> &at, HookState *out, std::string *name);
std::string check_map_event(std::uint8_t cmd, const std::vector<AttrView> &at);
std::string check_hook_event(std::uint8_t cmd, const std::vector<AttrView> &at);

// The Pending of OP: label, request, mode, reply checks.
PendingP make_pending(const MapOp &op, Rng &rng);
PendingP make_pending(const HookOp &op, Rng &rng);

} // namespace stress
