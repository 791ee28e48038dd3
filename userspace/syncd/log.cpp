// SPDX-License-Identifier: GPL-2.0
#include "log.h"

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <mutex>

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

void log(Level level, const std::string &msg)
{
	if (level == Level::Debug && !verbose_log)
		return;
	std::string line;
	if (to_journal) {
		// journald reads the priority from a "<N>" prefix
		line = "<" + std::to_string(int(level)) + ">" + (map_name.empty() ? "" : map_name + ": ") + msg + "\n";
	} else {
		auto now = std::chrono::system_clock::now();
		std::time_t t = std::chrono::system_clock::to_time_t(now);
		int ms = int(std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000);
		struct tm tm;
		localtime_r(&t, &tm);
		char ts[40];
		std::strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%S", &tm);
		char msec[8];
		std::snprintf(msec, sizeof(msec), ".%03d", ms);
		line = std::string(ts) + msec + " ila-syncd" + (map_name.empty() ? "" : " " + map_name) + ": " +
		       level_word(level) + msg + "\n";
	}
	std::lock_guard lock(mu);
	(void)!write(STDERR_FILENO, line.data(), line.size());
}

void notify_service_manager(const std::string &state)
{
	const char *path = std::getenv("NOTIFY_SOCKET");
	if (!path || !*path)
		return;
	sockaddr_un sa;
	std::memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	std::size_t n = std::strlen(path);
	if (n >= sizeof(sa.sun_path) || (path[0] != '/' && path[0] != '@'))
		return;
	std::memcpy(sa.sun_path, path, n);
	if (path[0] == '@')
		sa.sun_path[0] = '\0'; // abstract
	int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return;
	(void)!sendto(fd, state.data(), state.size(), MSG_NOSIGNAL, reinterpret_cast<sockaddr *>(&sa),
		      socklen_t(offsetof(sockaddr_un, sun_path) + n));
	close(fd);
}

} // namespace syncd
