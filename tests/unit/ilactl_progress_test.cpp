// SPDX-License-Identifier: GPL-2.0
// ilactl: the progress line (--progress), counts in words, monitor -t's
// timestamps, and -c's report of every bad line.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <ctime>
#include <sstream>
#include <string>
#include <vector>

#include "batch.h"
#include "print.h"
#include "progress.h"

namespace {

// every line written: the text between carriage returns / the newline,
// without the blanks that pad it over a longer line before it
std::vector<std::string> records(const std::string &out)
{
	std::vector<std::string> r;
	std::string cur;
	for (char c : out) {
		if (c == '\r' || c == '\n') {
			cur.erase(cur.find_last_not_of(' ') + 1);
			if (!cur.empty())
				r.push_back(cur);
			cur.clear();
		} else {
			cur += c;
		}
	}
	if (!cur.empty())
		r.push_back(cur);
	return r;
}

} // namespace

TEST(IlactlProgress, Plural)
{
	EXPECT_EQ(ila::plural(0, "transaction"), "0 transactions");
	EXPECT_EQ(ila::plural(1, "transaction"), "1 transaction");
	EXPECT_EQ(ila::plural(2, "transaction"), "2 transactions");
	EXPECT_EQ(ila::plural(1, "entry"), "1 entry");
	EXPECT_EQ(ila::plural(3, "entry"), "3 entries");
	EXPECT_EQ(ila::plural(2, "key"), "2 keys");
	EXPECT_EQ(ila::plural(1, "batch"), "1 batch");
	EXPECT_EQ(ila::plural(4, "batch"), "4 batches");
	EXPECT_EQ(ila::plural(5, "bad line"), "5 bad lines");
}

TEST(IlactlProgress, LineShowsDoneRateAndEta)
{
	EXPECT_EQ(ila::Progress::line("f", 250000, 1000000, 2.0, false),
		  "ilactl: f: 250000/1000000 entries (25%), 125000/s, ETA 6s");
	EXPECT_EQ(ila::Progress::line("f", 1000000, 1000000, 8.0, true),
		  "ilactl: f: 1000000/1000000 entries (100%), 125000/s, 8.0 s");
	// minutes and hours
	EXPECT_EQ(ila::Progress::line("f", 1000, 100000, 1.0, false),
		  "ilactl: f: 1000/100000 entries (1%), 1000/s, ETA 1m39s");
	EXPECT_EQ(ila::Progress::line("f", 1, 10000, 1.0, false),
		  "ilactl: f: 1/10000 entries (0%), 1/s, ETA 2h46m");
	// no total: no percentage, no ETA; singular by count
	EXPECT_EQ(ila::Progress::line("save", 1, 0, 1.0, false), "ilactl: save: 1 entry, 1/s");
	EXPECT_EQ(ila::Progress::line("x: check", 2, 2, 1.0, true, "line"),
		  "ilactl: x: check: 2/2 lines (100%), 2/s, 1.0 s");
	// nothing done yet: no ETA to give
	EXPECT_EQ(ila::Progress::line("f", 0, 10, 0.0, false), "ilactl: f: 0/10 entries (0%), 0/s, ETA -");
}

TEST(IlactlProgress, ForcedRewritesOneLineAndEndsWithNewline)
{
	double now = 100.0;
	std::ostringstream out;
	{
		ila::Progress p(out, "f", 1000, ila::Progress::Forced, "entry", [&] { return now; });
		now += 0.1;
		p.update(100); // within 0.2 s of the first line: not shown
		now += 0.2;
		p.update(300);
		now += 0.7;
		p.finish(1000);
		p.update(1000); // after finish: nothing
		p.finish(1000);
	}
	const std::string s = out.str();
	auto r = records(s);
	ASSERT_EQ(r.size(), 3u) << s;
	EXPECT_EQ(r[0], "ilactl: f: 0/1000 entries (0%), 0/s, ETA -");
	EXPECT_EQ(r[1], "ilactl: f: 300/1000 entries (30%), 1000/s, ETA 1s");
	EXPECT_EQ(r[2], "ilactl: f: 1000/1000 entries (100%), 1000/s, 1.0 s");
	EXPECT_EQ(s.front(), '\r');
	EXPECT_EQ(s.back(), '\n');
	EXPECT_EQ(std::count(s.begin(), s.end(), '\n'), 1);
}

TEST(IlactlProgress, ShorterLinePadsOverTheLongerOne)
{
	double now = 0;
	std::ostringstream out;
	ila::Progress p(out, "f", 100000, ila::Progress::Forced, "entry", [&] { return now; });
	now = 1;
	p.update(1); // "... ETA 27h46m"
	now = 100;
	p.finish(100000);
	const std::string s = out.str();
	auto last = s.substr(s.rfind('\r') + 1);
	auto before = s.substr(0, s.rfind('\r'));
	before = before.substr(before.rfind('\r') + 1);
	EXPECT_GE(last.size() - 1, before.size()) << s; // the newline aside
}

TEST(IlactlProgress, AutoIsQuietForShortWorkAndShowsLongWork)
{
	double now = 0;
	std::ostringstream quiet;
	{
		ila::Progress p(quiet, "f", 10, ila::Progress::Auto, "entry", [&] { return now; });
		now = 0.5;
		p.update(5);
		p.finish(10);
	}
	EXPECT_EQ(quiet.str(), "");

	now = 0;
	std::ostringstream shown;
	{
		ila::Progress p(shown, "f", 10, ila::Progress::Auto, "entry", [&] { return now; });
		now = 1.5;
		p.update(5);
		now = 2.0;
	} // the destructor ends the line with the last count
	auto r = records(shown.str());
	ASSERT_EQ(r.size(), 2u) << shown.str();
	EXPECT_EQ(r[1], "ilactl: f: 5/10 entries (50%), 2/s, 2.0 s");
	EXPECT_EQ(shown.str().back(), '\n');

	std::ostringstream off;
	{
		ila::Progress p(off, "f", 10, ila::Progress::Off, "entry", [&] { return now; });
		now = 10;
		p.update(5);
		p.finish(10);
	}
	EXPECT_EQ(off.str(), "");
}

TEST(IlactlMonitorTimestamp, AsIpMonitorT)
{
	const char *old = std::getenv("TZ");
	std::string saved = old ? old : "";
	setenv("TZ", "UTC", 1);
	tzset();
	// 2026-12-07 22:41:42 UTC
	EXPECT_EQ(ila::timestamp_text(1796683302, 123456), "# Timestamp: Mon Dec  7 22:41:42 2026 123456 usec");
	EXPECT_EQ(ila::timestamp_text(1796683302, 5), "# Timestamp: Mon Dec  7 22:41:42 2026 5 usec");
	EXPECT_EQ(ila::timestamp_json(1796683302, 5), "2026-12-07T22:41:42.000005Z");
	// text in local time (as ip), JSON in UTC
	setenv("TZ", "CET-1", 1);
	tzset();
	EXPECT_EQ(ila::timestamp_text(1796683302, 1), "# Timestamp: Mon Dec  7 23:41:42 2026 1 usec");
	EXPECT_EQ(ila::timestamp_json(1796683302, 1), "2026-12-07T22:41:42.000001Z");
	if (old)
		setenv("TZ", saved.c_str(), 1);
	else
		unsetenv("TZ");
	tzset();
}

TEST(IlactlCheck, EveryBadLineIsReportedAndTheGoodOnesKept)
{
	std::vector<ila::BatchError> errors;
	std::size_t seen = 0;
	auto lines = ila::parse_script("map create m\n"
				       "map add m 1:: 2001:db8:1:0\n"
				       "map list\n"
				       "\n"
				       "# a comment\n"
				       "hook add h prerouting src-pfx 2001:db8::/64\n"
				       "map add m 0:0:0:2 2001:db8:1:0\n"
				       "hook list\n"
				       "map bogus",
				       errors, [&](std::size_t n) { seen = n; });
	ASSERT_EQ(errors.size(), 5u);
	std::vector<std::size_t> bad;
	for (const auto &e : errors)
		bad.push_back(e.line());
	EXPECT_EQ(bad, (std::vector<std::size_t>{2, 3, 6, 8, 9}));
	EXPECT_NE(errors[0].reason().find("bad identifier \"1::\""), std::string::npos);
	ASSERT_EQ(lines.size(), 2u);
	EXPECT_EQ(lines[0].line, 1u);
	EXPECT_EQ(lines[1].line, 7u);
	EXPECT_EQ(seen, 9u); // the last call counts every line

	// the one-error form still throws the first bad line
	try {
		ila::parse_script("map create m\nmap list\nmap bogus\n");
		FAIL() << "no BatchError";
	} catch (const ila::BatchError &e) {
		EXPECT_EQ(e.line(), 2u);
	}

	errors.clear();
	lines = ila::parse_script("map create m\nmap add m 0:0:0:1 2001:db8:1:0\n", errors);
	EXPECT_TRUE(errors.empty());
	EXPECT_EQ(lines.size(), 2u);
}
