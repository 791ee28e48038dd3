// SPDX-License-Identifier: GPL-2.0
#include "progress.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <ostream>

namespace ila {

namespace {

constexpr double kInterval = 0.2; // s between two lines
constexpr double kAutoDelay = 1.0; // s of quiet in Auto mode

// 6s, 1m05s, 2h03m
std::string duration(double secs)
{
	auto s = static_cast<unsigned long long>(secs + 0.5);
	char buf[64];
	if (s < 60)
		std::snprintf(buf, sizeof(buf), "%llus", s);
	else if (s < 3600)
		std::snprintf(buf, sizeof(buf), "%llum%02llus", s / 60, s % 60);
	else
		std::snprintf(buf, sizeof(buf), "%lluh%02llum", s / 3600, s / 60 % 60);
	return buf;
}

} // namespace

double Progress::steady_seconds()
{
	return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

Progress::Mode Progress::mode_for_stderr(bool force)
{
	if (force)
		return Forced;
	return isatty(STDERR_FILENO) ? Auto : Off;
}

Progress::Progress(std::ostream &out, std::string what, std::size_t total, Mode mode, std::string unit,
		   Clock clock)
	: out_(out), what_(std::move(what)), unit_(std::move(unit)), total_(total), mode_(mode),
	  clock_(std::move(clock)),
	  start_(clock_())
{
	if (mode_ == Forced)
		show(0, false);
}

Progress::~Progress()
{
	if (!finished_)
		finish(last_done_);
}

std::string Progress::line(const std::string &what, std::size_t done, std::size_t total, double secs,
			   bool final, const std::string &unit)
{
	std::string s = "ilactl: " + what + ": ";
	if (total) // "1/2 entries": the plural of the total
		s += std::to_string(done) + "/" + plural(total, unit);
	else
		s += plural(done, unit);
	if (total)
		s += " (" + std::to_string(done >= total ? 100 : done * 100 / total) + "%)";
	double rate = secs > 0 ? double(done) / secs : 0;
	char buf[64];
	std::snprintf(buf, sizeof(buf), ", %.0f/s", rate);
	s += buf;
	if (final) {
		std::snprintf(buf, sizeof(buf), ", %.1f s", secs);
		s += buf;
	} else if (total && done < total && rate > 0) {
		s += ", ETA " + duration(double(total - done) / rate);
	} else if (total && done < total) {
		s += ", ETA -";
	}
	return s;
}

void Progress::show(std::size_t done, bool final)
{
	double now = clock_();
	std::string l = line(what_, done, total_, now - start_, final, unit_);
	std::size_t len = l.size();
	if (len < last_len_)
		l.append(last_len_ - len, ' '); // over what the longer line before left
	out_ << '\r' << l;
	if (final)
		out_ << '\n';
	out_.flush();
	last_len_ = len;
	last_shown_ = now;
	shown_ = true;
}

void Progress::update(std::size_t done)
{
	last_done_ = done;
	if (mode_ == Off || finished_)
		return;
	double now = clock_();
	if (mode_ == Auto && !shown_ && now - start_ < kAutoDelay)
		return;
	if (shown_ && now - last_shown_ < kInterval)
		return;
	show(done, false);
}

void Progress::finish(std::size_t done)
{
	if (finished_)
		return;
	finished_ = true;
	last_done_ = done;
	if (mode_ == Forced || (mode_ == Auto && shown_))
		show(done, true);
}

} // namespace ila
