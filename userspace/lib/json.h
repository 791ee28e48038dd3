// SPDX-License-Identifier: GPL-2.0
// JSON text helpers for ilactl's output.
#pragma once

#include <string>
#include <string_view>

namespace ila {

// S as a JSON string literal (quotes, escapes).
std::string json_str(std::string_view s);

// Compact JSON TEXT indented (2 spaces a level, one member a line; empty
// objects and arrays stay "{}" / "[]"; strings are left alone).
std::string pretty_json(std::string_view text);

} // namespace ila
