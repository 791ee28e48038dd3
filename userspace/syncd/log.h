// SPDX-License-Identifier: GPL-2.0
// ila-syncd's log: one line per message on stderr, with the time; when
// stderr is connected to the journal (JOURNAL_STREAM), with the message's
// priority as a "<N>" prefix instead, which journald records. And the
// service manager's readiness protocol (sd_notify(3): a datagram to
// $NOTIFY_SOCKET). Thread-safe.
#pragma once

#include <string>

namespace syncd {

enum class Level { Err = 3, Warning = 4, Notice = 5, Info = 6, Debug = 7 };

// MAP names the daemon's map in every message ("" for the one-shot
// commands); VERBOSE lets Debug messages through.
void log_init(const std::string &map, bool verbose);
void log(Level level, const std::string &msg);

// "READY=1", "STATUS=...", "STOPPING=1" to systemd (nothing without
// $NOTIFY_SOCKET).
void notify_service_manager(const std::string &state);

} // namespace syncd
