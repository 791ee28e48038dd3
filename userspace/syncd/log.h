// SPDX-License-Identifier: GPL-2.0
// ila-syncd's log: to the journal (structured: ILA_SYNCD_MAP and, for a
// bad key, ILA_SYNCD_KEY) when stderr is connected to it (JOURNAL_STREAM),
// else one line per message on stderr with the time. Thread-safe.
#pragma once

#include <string>

namespace syncd {

enum class Level { Err = 3, Warning = 4, Notice = 5, Info = 6, Debug = 7 };

// MAP names the daemon's map in every message ("" for the one-shot
// commands); VERBOSE lets Debug messages through.
void log_init(const std::string &map, bool verbose);
void log(Level level, const std::string &msg, const std::string &key = {});

} // namespace syncd
