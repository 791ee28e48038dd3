// SPDX-License-Identifier: GPL-2.0
#include "ila_notation.h"

#include <arpa/inet.h>

#include <array>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <stdexcept>

#include <linux/ila_map.h>

#include <common/ila_names.h>

#include "ila_words.h"

namespace ila {

namespace {

int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

// Four groups of 1-4 hex digits; nullopt if TEXT is not of that shape
// (CANONICAL: lower case and no leading zeroes either, as format_half()).
std::optional<std::uint64_t> parse_four_groups(std::string_view text, bool canonical)
{
	std::uint64_t v = 0;
	unsigned group = 0;
	int groups = 1, digits = 0;

	for (char c : text) {
		if (c == ':') {
			if (digits == 0 || ++groups > 4)
				return std::nullopt;
			v = (v << 16) | group;
			group = 0;
			digits = 0;
			continue;
		}
		// (a second digit after a leading 0: digits 1, group 0)
		if (canonical && ((c >= 'A' && c <= 'F') || (digits == 1 && group == 0)))
			return std::nullopt;
		int h = hexval(c);
		if (h < 0 || ++digits > 4)
			return std::nullopt;
		group = group << 4 | unsigned(h);
	}
	if (groups != 4 || digits == 0)
		return std::nullopt;
	return (v << 16) | group;
}

} // namespace

std::uint64_t parse_half(std::string_view text, Half half)
{
	const bool loc = half == Half::Locator;
	const char *what = loc ? "locator" : "identifier";
	const char *forms = loc ? "four 16-bit hex groups (2001:db8:0:1) or an IPv6 address "
				  "whose low 64 bits are zero (2001:db8:0:1::)"
				: "four 16-bit hex groups (0:0:0:5) or an IPv6 address "
				  "whose high 64 bits are zero (::5)";
	auto bad = [&](const std::string &why) {
		std::string shown;
		for (char c : text)
			shown += c == '\0' ? std::string("\\0") : std::string(1, c);
		return std::invalid_argument(std::string("bad ") + what + " \"" + shown + "\": " + why +
					     "; expected " + forms);
	};

	if (text.empty())
		throw std::invalid_argument(std::string("empty ") + what + "; expected " + forms);
	if (text.find('\0') != std::string_view::npos)
		throw bad("contains a NUL character");
	if (auto v = parse_four_groups(text, false))
		return *v;
	if (text.size() >= INET6_ADDRSTRLEN)
		throw bad("too long");
	std::string s(text);
	in6_addr a{};
	if (inet_pton(AF_INET6, s.c_str(), &a) != 1)
		throw bad("not ILA notation nor an IPv6 address");
	std::uint64_t hi = 0, lo = 0;
	for (int i = 0; i < 8; i++) {
		hi = (hi << 8) | a.s6_addr[i];
		lo = (lo << 8) | a.s6_addr[8 + i];
	}
	// A full address is taken only when the half we do not use is zero:
	// anything else would silently drop bits the user typed.
	if (loc && lo)
		throw bad("an address whose low 64 bits are not zero is not a locator");
	if (!loc && hi)
		throw bad("an address whose high 64 bits are not zero is not an identifier");
	return loc ? hi : lo;
}

std::optional<std::uint64_t> parse_canonical_half(std::string_view text)
{
	return parse_four_groups(text, true);
}

std::size_t format_half(std::uint64_t value, char (&buf)[kHalfTextMax])
{
	// "%x:%x:%x:%x" of the four groups (called once per key of a sync or
	// save: no printf)
	static constexpr char hex[] = "0123456789abcdef";
	std::size_t n = 0;
	for (int g = 3; g >= 0; g--) {
		const unsigned v = unsigned(value >> (16 * g)) & 0xffff;
		bool lead = true;
		for (int d = 3; d >= 0; d--) {
			const unsigned h = (v >> (4 * d)) & 0xf;
			if (lead && h == 0 && d > 0)
				continue;
			lead = false;
			buf[n++] = hex[h];
		}
		if (g)
			buf[n++] = ':';
	}
	return n;
}

std::string format_half(std::uint64_t value)
{
	char buf[kHalfTextMax];
	return std::string(buf, format_half(value, buf));
}

std::optional<std::uint8_t> parse_csum_mode(std::string_view name)
{
	char buf[64]; // longer than every mode's name
	if (name.size() >= sizeof(buf) || name.find('\0') != std::string_view::npos)
		return std::nullopt;
	std::memcpy(buf, name.data(), name.size());
	buf[name.size()] = '\0';
	int v = ila_word_parse(ila_csum_mode_words(), buf);
	if (v < 0)
		return std::nullopt;
	return static_cast<std::uint8_t>(v);
}

std::string_view csum_mode_name(std::uint8_t mode)
{
	const char *n = ila_word_name(ila_csum_mode_words(), mode);
	return n ? n : "unknown";
}

std::string_view miss_word(int value)
{
	const char *w = shortest_word(ila_miss_words(), value);
	return w ? w : "accept";
}

bool valid_map_name(std::string_view name)
{
	return name.find('\0') == std::string_view::npos && ila_name_ok(std::string(name).c_str());
}

std::optional<std::uint64_t> parse_uint(std::string_view text, std::uint64_t min,
					std::uint64_t max)
{
	std::uint64_t v = 0;
	if (text.empty())
		return std::nullopt;
	auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v, 10);
	if (ec != std::errc() || p != text.data() + text.size() || v < min || v > max)
		return std::nullopt;
	return v;
}

} // namespace ila
