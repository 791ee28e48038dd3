// SPDX-License-Identifier: GPL-2.0
// Progress of long work (ilactl -b, restore, save, -c) on stderr: one line
// rewritten in place with a carriage return,
//   "ilactl: SRC: 250000/1000000 entries (25%), 125000/s, ETA 6s"
// and, when the work ends, the final figures and a newline,
//   "ilactl: SRC: 1000000/1000000 entries (100%), 124875/s, 8.0 s".
// Forced (--progress) it prints from the start and always ends with the
// final line; automatic (stderr is a terminal) it stays quiet for work that
// ends within its first second.
#pragma once

#include <cstddef>
#include <functional>
#include <iosfwd>
#include <string>

#include "plural.h"

namespace ila {

class Progress {
public:
	enum Mode { Off, Auto, Forced };
	// seconds from any fixed point (a monotonic clock; a fake one in tests)
	using Clock = std::function<double()>;

	// TOTAL: the entries expected, 0 when unknown (no percentage, no ETA);
	// UNIT: what is counted, singular ("entry", "line").
	Progress(std::ostream &out, std::string what, std::size_t total, Mode mode,
		 std::string unit = "entry", Clock clock = steady_seconds);
	Progress(const Progress &) = delete;
	Progress &operator=(const Progress &) = delete;

	// DONE entries so far; rewrites the line at most every 0.2 s.
	void update(std::size_t done);
	// The final line with DONE and a newline (once; nothing when nothing was
	// shown in Auto mode).
	void finish(std::size_t done);
	// finish() with the last count given to update(), when not called.
	~Progress();

	// The text of one line (without "\r" and padding).
	static std::string line(const std::string &what, std::size_t done, std::size_t total, double secs,
				bool final, const std::string &unit = "entry");
	// Off, or Auto when file descriptor 2 is a terminal; FORCE: Forced.
	static Mode mode_for_stderr(bool force);
	static double steady_seconds();

private:
	void show(std::size_t done, bool final);

	std::ostream &out_;
	std::string what_, unit_;
	std::size_t total_, last_done_ = 0, last_len_ = 0;
	Mode mode_;
	Clock clock_;
	double start_, last_shown_ = -1;
	bool shown_ = false, finished_ = false;
};

} // namespace ila
