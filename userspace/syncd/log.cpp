// SPDX-License-Identifier: GPL-2.0
#include "log.h"

#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <mutex>

#include <systemd/sd-journal.h>

namespace syncd {

namespace {

std::mutex mu;
std::string map_name;
bool verbose_log = false;
bool to_journal = false;

// JOURNAL_STREAM is "DEV:INODE" of the stream systemd connected stderr to.
bool stderr_is_journal()
{
	const char *js = std::getenv("JOURNAL_STREAM");
	if (!js)
		return false;
	unsigned long long dev = 0, ino = 0;
	if (std::sscanf(js, "%llu:%llu", &dev, &ino) != 2)
		return false;
	struct stat st;
	if (fstat(STDERR_FILENO, &st) < 0)
		return false;
	return st.st_dev == dev && st.st_ino == ino;
}

const char *level_word(Level l)
{
	switch (l) {
	case Level::Err: return "error: ";
	case Level::Warning: return "warning: ";
	default: return "";
	}
}

} // namespace

void log_init(const std::string &map, bool verbose)
{
	std::lock_guard lock(mu);
	map_name = map;
	verbose_log = verbose;
	to_journal = stderr_is_journal();
}

void log(Level level, const std::string &msg, const std::string &key)
{
	if (level == Level::Debug && !verbose_log)
		return;
	std::lock_guard lock(mu);
	if (to_journal) {
		const std::string full = (map_name.empty() ? "" : map_name + ": ") + msg;
		if (key.empty())
			sd_journal_send("MESSAGE=%s", full.c_str(), "PRIORITY=%d", int(level),
					"SYSLOG_IDENTIFIER=ila-syncd", "ILA_SYNCD_MAP=%s", map_name.c_str(), nullptr);
		else
			sd_journal_send("MESSAGE=%s", full.c_str(), "PRIORITY=%d", int(level),
					"SYSLOG_IDENTIFIER=ila-syncd", "ILA_SYNCD_MAP=%s", map_name.c_str(),
					"ILA_SYNCD_KEY=%s", key.c_str(), nullptr);
		return;
	}
	auto now = std::chrono::system_clock::now();
	std::time_t t = std::chrono::system_clock::to_time_t(now);
	int ms = int(std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000);
	struct tm tm;
	localtime_r(&t, &tm);
	char ts[40];
	std::strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%S", &tm);
	std::fprintf(stderr, "%s.%03d ila-syncd%s%s: %s%s\n", ts, ms, map_name.empty() ? "" : " ",
		     map_name.c_str(), level_word(level), msg.c_str());
	std::fflush(stderr);
}

} // namespace syncd
