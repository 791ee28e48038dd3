// SPDX-License-Identifier: GPL-2.0
#include "json.h"

#include <algorithm>
#include <cstdio>

namespace ila {

std::string json_str(std::string_view s)
{
	std::string out = "\"";
	for (unsigned char c : s) {
		if (c == '"' || c == '\\') {
			out += '\\';
			out += char(c);
		} else if (c < 0x20) {
			char b[8];
			std::snprintf(b, sizeof(b), "\\u%04x", c);
			out += b;
		} else {
			out += char(c);
		}
	}
	return out + "\"";
}

std::string pretty_json(std::string_view text)
{
	std::string out;
	int depth = 0;
	bool in_str = false, esc = false;
	auto newline = [&] { out += '\n'; out.append(std::size_t(2 * std::max(depth, 0)), ' '); };
	for (std::size_t i = 0; i < text.size(); i++) {
		char c = text[i];
		if (in_str) {
			out += c;
			if (esc)
				esc = false;
			else if (c == '\\')
				esc = true;
			else if (c == '"')
				in_str = false;
			continue;
		}
		switch (c) {
		case '"': in_str = true; out += c; break;
		case '{':
		case '[': {
			// empty object/array stays on one line
			std::size_t j = i + 1;
			while (j < text.size() && (text[j] == '\n' || text[j] == ' '))
				j++;
			if (j < text.size() && (text[j] == '}' || text[j] == ']')) {
				out += c;
				out += text[j];
				i = j;
				break;
			}
			out += c;
			depth++;
			newline();
			break;
		}
		case '}':
		case ']': depth--; newline(); out += c; break;
		case ',': out += c; newline(); break;
		case ':': out += ": "; break;
		case '\n':
		case ' ':
		case '\t': break;
		default: out += c; break;
		}
	}
	if (!out.empty() && out.back() != '\n')
		out += '\n';
	return out;
}

} // namespace ila
