// SPDX-License-Identifier: GPL-2.0
// ILA notation: parse and format the 64-bit halves of IPv6 addresses
// (locator = high half, identifier = low half) and ILA checksum modes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace ila {

enum class Half { Locator, Identifier };

// Parses TEXT as one half of an IPv6 address:
//  - ILA notation: exactly four groups of 1-4 hex digits, "2001:db8:0:1"
//    (as `ip ila` prints them), or
//  - a full IPv6 address whose other half is zero: "::5" as an identifier,
//    "2001:db8:0:1::" as a locator. An address with bits in both halves is
//    refused (it would silently lose the half not used); so is a NUL.
// Returns the value with the first group most significant (host order).
// Throws std::invalid_argument with a reason on bad input.
std::uint64_t parse_half(std::string_view text, Half half);

// "2001:db8:0:1": four groups, lower-case hex, no leading zeroes.
std::string format_half(std::uint64_t value);
// TEXT if it is exactly what format_half() writes for its value, else
// nullopt (one pass, no allocation).
std::optional<std::uint64_t> parse_canonical_half(std::string_view text);
// The same into BUF (no allocation, not NUL-terminated): its length.
constexpr std::size_t kHalfTextMax = 19; // ffff:ffff:ffff:ffff
std::size_t format_half(std::uint64_t value, char (&buf)[kHalfTextMax]);

// Checksum modes, named as in xt_ILA's --csum-mode: adjust-transport,
// neutral-map, none, neutral-map-auto, rfc6296 (numbers as <linux/ila.h>,
// then rfc6296); iproute2's adj-transport and no-action are accepted.
std::optional<std::uint8_t> parse_csum_mode(std::string_view name);
std::string_view csum_mode_name(std::uint8_t mode);

// What a map miss does (ILA_MISS_DROP | ILA_MISS_NOTIFY of
// <common/ila_names.h>) as the shortest word: accept, drop, notify,
// drop,notify.
std::string_view miss_word(int value);

// Map names: 1-31 characters of A-Z a-z 0-9 _ . - (the kernel checks too).
bool valid_map_name(std::string_view name);

// Parses a decimal unsigned integer in [min, max]; nullopt otherwise.
std::optional<std::uint64_t> parse_uint(std::string_view text, std::uint64_t min,
					std::uint64_t max);

} // namespace ila
