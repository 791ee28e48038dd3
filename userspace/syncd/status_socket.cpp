// SPDX-License-Identifier: GPL-2.0
#include "status_socket.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <stdexcept>

namespace syncd {

namespace {

const std::string kPrefix = "ila-syncd/";

socklen_t make_addr(const std::string &map, sockaddr_un &sa)
{
	std::memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	const std::string name = kPrefix + map;
	// abstract: a leading NUL, the name without a terminating NUL
	std::memcpy(sa.sun_path + 1, name.data(), name.size());
	return socklen_t(offsetof(sockaddr_un, sun_path) + 1 + name.size());
}

std::string errno_text(const std::string &what)
{
	return what + ": " + std::strerror(errno);
}

bool write_all(int fd, const std::string &s)
{
	std::size_t off = 0;
	while (off < s.size()) {
		ssize_t n = send(fd, s.data() + off, s.size() - off, MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return false;
		off += std::size_t(n);
	}
	return true;
}

// Reads until EOF, waiting at most TIMEOUT_MS for each piece.
bool read_all(int fd, std::string &out, int timeout_ms, std::size_t max)
{
	char buf[4096];
	for (;;) {
		pollfd p{fd, POLLIN, 0};
		int r = poll(&p, 1, timeout_ms);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return false;
		ssize_t n = recv(fd, buf, sizeof(buf), 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return false;
		if (n == 0)
			return true;
		out.append(buf, std::size_t(n));
		if (out.size() > max)
			return false;
	}
}

} // namespace

StatusServer::StatusServer(const std::string &map)
{
	fd_ = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd_ < 0)
		throw std::runtime_error(errno_text("status socket"));
	sockaddr_un sa;
	socklen_t len = make_addr(map, sa);
	if (bind(fd_, reinterpret_cast<sockaddr *>(&sa), len) < 0) {
		int err = errno;
		close(fd_);
		fd_ = -1;
		if (err == EADDRINUSE)
			throw std::runtime_error("another ila-syncd keeps map " + map +
						 " in this network namespace (ila-syncd status)");
		errno = err;
		throw std::runtime_error(errno_text("status socket @" + kPrefix + map));
	}
	if (listen(fd_, 16) < 0 || pipe2(stop_pipe_, O_CLOEXEC) < 0) {
		int err = errno;
		close(fd_);
		fd_ = -1;
		errno = err;
		throw std::runtime_error(errno_text("status socket"));
	}
}

StatusServer::~StatusServer()
{
	if (fd_ >= 0)
		close(fd_);
	for (int fd : stop_pipe_)
		if (fd >= 0)
			close(fd);
}

void StatusServer::stop()
{
	char c = 0;
	(void)!write(stop_pipe_[1], &c, 1);
}

void StatusServer::serve(const std::function<std::string(bool json)> &render)
{
	for (;;) {
		pollfd p[2] = {{fd_, POLLIN, 0}, {stop_pipe_[0], POLLIN, 0}};
		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			return;
		}
		if (p[1].revents)
			return;
		int c = accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
		if (c < 0)
			continue;
		std::string req;
		char buf[64];
		pollfd cp{c, POLLIN, 0};
		while (req.find('\n') == std::string::npos && req.size() < sizeof(buf) && poll(&cp, 1, 1000) > 0) {
			ssize_t n = recv(c, buf, sizeof(buf), 0);
			if (n <= 0)
				break;
			req.append(buf, std::size_t(n));
		}
		if (req == "json\n" || req == "text\n")
			write_all(c, render(req == "json\n"));
		close(c);
	}
}

std::vector<std::string> running_daemons()
{
	std::vector<std::string> maps;
	std::ifstream f("/proc/net/unix");
	std::string line;
	std::getline(f, line); // header
	while (std::getline(f, line)) {
		// Num RefCount Protocol Flags Type St Inode Path
		auto at = line.find(" @" + kPrefix);
		if (at == std::string::npos)
			continue;
		std::string name = line.substr(at + 2 + kPrefix.size());
		while (!name.empty() && (name.back() == ' ' || name.back() == '\n'))
			name.pop_back();
		// listening sockets only: flags 00010000 (__SO_ACCEPTCON)
		if (line.find(" 00010000 ") == std::string::npos)
			continue;
		maps.push_back(name);
	}
	std::sort(maps.begin(), maps.end());
	maps.erase(std::unique(maps.begin(), maps.end()), maps.end());
	return maps;
}

std::string query_daemon(const std::string &map, bool json, double timeout_s)
{
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		throw std::runtime_error(errno_text("socket"));
	struct Closer {
		int fd;
		~Closer() { close(fd); }
	} closer{fd};
	sockaddr_un sa;
	socklen_t len = make_addr(map, sa);
	if (connect(fd, reinterpret_cast<sockaddr *>(&sa), len) < 0)
		throw std::runtime_error(errno == ECONNREFUSED || errno == ENOENT
						 ? "no ila-syncd keeps map " + map + " in this network namespace"
						 : errno_text("map " + map + ": connect"));
	ucred cred;
	socklen_t cl = sizeof(cred);
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &cl) < 0)
		throw std::runtime_error(errno_text("map " + map + ": SO_PEERCRED"));
	if (cred.uid != 0 && cred.uid != getuid())
		throw std::runtime_error("map " + map + ": the status socket belongs to uid " +
					 std::to_string(cred.uid) + ", not to root: ignored");
	if (!write_all(fd, json ? "json\n" : "text\n"))
		throw std::runtime_error(errno_text("map " + map + ": send"));
	std::string out;
	if (!read_all(fd, out, int(timeout_s * 1000), 1 << 20) || out.empty())
		throw std::runtime_error("map " + map + ": no answer from its ila-syncd");
	return out;
}

} // namespace syncd
