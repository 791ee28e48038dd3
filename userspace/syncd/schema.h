// SPDX-License-Identifier: GPL-2.0
// The etcd key schema of ila-syncd (stable, documented in ila-syncd(8)):
//
//   PREFIX/maps/NAME/IDENTIFIER  ->  "LOCATOR [csum-mode MODE]"
//
// IDENTIFIER in the canonical notation of `ilactl map show` (four groups of
// lower-case hex without leading zeroes: 0:0:0:5); any other spelling of a
// key is malformed. The value is in the words of `ilactl map add` after the
// identifier: a locator in ILA notation or as an address whose low 64 bits
// are zero, then optionally "csum-mode MODE" (default adjust-transport).
// Pure logic: no etcd, no netlink (unit-tested on the host).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace syncd {

// One mapping as the map holds it.
struct Mapping {
	std::uint64_t locator = 0; // host order, first group most significant
	std::uint8_t csum_mode = 0;
	bool operator==(const Mapping &) const = default;
};

// A parse result: the value, or why not (error non-empty).
template <class T> struct Parsed {
	std::optional<T> value;
	std::string error;
	explicit operator bool() const { return value.has_value(); }
};

// PREFIX as keys use it: trailing '/' removed ("/ila/" and "/ila" are the
// same prefix). Empty is allowed (keys then start with "/maps/").
std::string normalize_prefix(std::string_view prefix);
// Whether PREFIX may be used (no NUL, at most 512 bytes).
bool valid_prefix(std::string_view prefix, std::string &why);

// "PREFIX/maps/" and "PREFIX/maps/NAME/": the ranges ila-syncd reads.
std::string maps_key_prefix(std::string_view prefix);
std::string map_key_prefix(std::string_view prefix, std::string_view map);
// The key of IDENT in MAP.
std::string mapping_key(std::string_view prefix, std::string_view map, std::uint64_t ident);
// etcd's range end for "every key starting with KEY_PREFIX" (the prefix
// with its last byte incremented; "\0" means "to the end").
std::string prefix_range_end(std::string_view key_prefix);

// The identifier of a key below map_key_prefix() (REST is what follows
// it): canonical notation only.
Parsed<std::uint64_t> parse_key_identifier(std::string_view rest);
// A value: "LOCATOR [csum-mode MODE]" (blanks around and between words
// allowed; a trailing newline too).
Parsed<Mapping> parse_value(std::string_view value);
// The canonical value: "LOCATOR csum-mode MODE".
std::string format_value(const Mapping &m);

// A key below maps_key_prefix() split into map name and identifier text
// (REST is what follows "PREFIX/maps/"); error when there is no valid map
// name followed by '/'.
struct MapKey {
	std::string map;
	std::string ident_text;
};
Parsed<MapKey> split_map_key(std::string_view rest);

// KEY for log messages: printable ASCII kept, other bytes as \xNN, at most
// MAX bytes of the key shown ("..." after).
std::string printable(std::string_view key, std::size_t max = 256);

} // namespace syncd
