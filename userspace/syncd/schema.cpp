// SPDX-License-Identifier: GPL-2.0
#include "schema.h"

#include <stdexcept>
#include <vector>

#include <common/ila_names.h>

#include "ila_notation.h"

namespace syncd {

namespace {

constexpr std::size_t kMaxPrefix = 512;
// A value longer than this is not "LOCATOR csum-mode MODE".
constexpr std::size_t kMaxValue = 256;

bool blank(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

// The first four words of S (a value has at most three: what follows the
// fourth is never looked at); no allocation, values are parsed per key.
struct Words {
	std::string_view w[4];
	std::size_t n = 0;
	std::size_t size() const { return n; }
	bool empty() const { return n == 0; }
	std::string_view operator[](std::size_t i) const { return w[i]; }
};

Words words(std::string_view s)
{
	Words w;
	std::size_t i = 0;
	while (i < s.size() && w.n < 4) {
		while (i < s.size() && blank(s[i]))
			i++;
		std::size_t j = i;
		while (j < s.size() && !blank(s[j]))
			j++;
		if (j > i)
			w.w[w.n++] = s.substr(i, j - i);
		i = j;
	}
	return w;
}

} // namespace

std::string normalize_prefix(std::string_view prefix)
{
	while (!prefix.empty() && prefix.back() == '/')
		prefix.remove_suffix(1);
	return std::string(prefix);
}

bool valid_prefix(std::string_view prefix, std::string &why)
{
	if (prefix.find('\0') != std::string_view::npos) {
		why = "contains a NUL byte";
		return false;
	}
	if (prefix.size() > kMaxPrefix) {
		why = "longer than " + std::to_string(kMaxPrefix) + " bytes";
		return false;
	}
	return true;
}

std::string maps_key_prefix(std::string_view prefix)
{
	return normalize_prefix(prefix) + "/maps/";
}

std::string map_key_prefix(std::string_view prefix, std::string_view map)
{
	return maps_key_prefix(prefix) + std::string(map) + "/";
}

std::string mapping_key(std::string_view prefix, std::string_view map, std::uint64_t ident)
{
	return map_key_prefix(prefix, map) + ila::format_half(ident);
}

std::string prefix_range_end(std::string_view key_prefix)
{
	std::string end(key_prefix);
	while (!end.empty()) {
		unsigned char c = static_cast<unsigned char>(end.back());
		if (c < 0xff) {
			end.back() = static_cast<char>(c + 1);
			return end;
		}
		end.pop_back();
	}
	return std::string(1, '\0');
}

Parsed<std::uint64_t> parse_key_identifier(std::string_view rest)
{
	Parsed<std::uint64_t> r;
	if (auto id = ila::parse_canonical_half(rest)) {
		r.value = *id;
		return r;
	}
	if (rest.empty()) {
		r.error = "no identifier after the map name";
		return r;
	}
	if (rest.find('/') != std::string_view::npos) {
		r.error = "more than one level below the map name";
		return r;
	}
	std::uint64_t id;
	try {
		id = ila::parse_half(rest, ila::Half::Identifier);
	} catch (const std::invalid_argument &e) {
		r.error = e.what();
		return r;
	}
	char canon[ila::kHalfTextMax];
	const std::string_view c(canon, ila::format_half(id, canon));
	if (c != rest) {
		r.error = "identifier not in canonical notation (the key of this identifier is \"" +
			  std::string(c) + "\")";
		return r;
	}
	r.value = id;
	return r;
}

Parsed<Mapping> parse_value(std::string_view value)
{
	Parsed<Mapping> r;
	if (value.size() > kMaxValue) {
		r.error = "value longer than " + std::to_string(kMaxValue) + " bytes";
		return r;
	}
	if (value.find('\0') != std::string_view::npos) {
		r.error = "value contains a NUL byte";
		return r;
	}
	auto w = words(value);
	if (w.empty()) {
		r.error = "empty value (expected \"LOCATOR [csum-mode MODE]\")";
		return r;
	}
	Mapping m;
	try {
		m.locator = ila::parse_half(w[0], ila::Half::Locator);
	} catch (const std::invalid_argument &e) {
		r.error = e.what();
		return r;
	}
	if (w.size() == 1) {
		r.value = m;
		return r;
	}
	if (w[1] != "csum-mode") {
		r.error = "unexpected \"" + std::string(w[1]) + "\" after the locator (expected csum-mode MODE)";
		return r;
	}
	if (w.size() < 3) {
		r.error = "csum-mode without a mode";
		return r;
	}
	auto mode = ila::parse_csum_mode(w[2]);
	if (!mode) {
		r.error = "unknown csum-mode \"" + std::string(w[2]) +
			  "\" (" ILA_CSUM_MODE_LIST ")";
		return r;
	}
	if (w.size() > 3) {
		r.error = "unexpected \"" + std::string(w[3]) + "\" after the csum-mode";
		return r;
	}
	m.csum_mode = *mode;
	r.value = m;
	return r;
}

std::string format_value(const Mapping &m)
{
	return ila::format_half(m.locator) + " csum-mode " + std::string(ila::csum_mode_name(m.csum_mode));
}

Parsed<MapKey> split_map_key(std::string_view rest)
{
	Parsed<MapKey> r;
	std::size_t slash = rest.find('/');
	if (slash == std::string_view::npos) {
		r.error = "no '/' after the map name";
		return r;
	}
	std::string_view name = rest.substr(0, slash);
	if (!ila::valid_map_name(name)) {
		r.error = "bad map name (1-31 characters of A-Z a-z 0-9 _ . -)";
		return r;
	}
	r.value = MapKey{std::string(name), std::string(rest.substr(slash + 1))};
	return r;
}

std::string printable(std::string_view key, std::size_t max)
{
	static const char hex[] = "0123456789abcdef";
	std::string out;
	std::size_t n = 0;
	for (char ch : key) {
		if (n++ == max) {
			out += "...";
			break;
		}
		unsigned char c = static_cast<unsigned char>(ch);
		if (c >= 0x20 && c < 0x7f && c != '\\') {
			out += ch;
		} else {
			out += "\\x";
			out += hex[c >> 4];
			out += hex[c & 15];
		}
	}
	return out;
}

} // namespace syncd
