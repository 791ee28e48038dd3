// SPDX-License-Identifier: GPL-2.0
#include "netns.h"

#include <fcntl.h>
#include <sched.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <system_error>

namespace syncd {

namespace {

class Fd {
public:
	explicit Fd(int fd) : fd_(fd) {}
	~Fd()
	{
		if (fd_ >= 0)
			close(fd_);
	}
	int get() const { return fd_; }

private:
	int fd_;
};

} // namespace

void in_netns(const std::string &name, const std::function<void()> &fn)
{
	if (name.empty()) {
		fn();
		return;
	}
	const std::string path = "/run/netns/" + name;
	Fd target(open(path.c_str(), O_RDONLY | O_CLOEXEC));
	if (target.get() < 0)
		throw std::system_error(errno, std::generic_category(), "network namespace " + name + ": " + path);
	Fd self(open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC));
	if (self.get() < 0)
		throw std::system_error(errno, std::generic_category(), "/proc/thread-self/ns/net");
	if (setns(target.get(), CLONE_NEWNET) < 0)
		throw std::system_error(errno, std::generic_category(), "setns to network namespace " + name);
	struct Back {
		int fd;
		~Back()
		{
			// a thread stuck in the wrong namespace would talk to the
			// wrong maps: never go on
			if (setns(fd, CLONE_NEWNET) < 0) {
				std::perror("ila-syncd: setns back to the original network namespace");
				std::abort();
			}
		}
	} back{self.get()};
	fn();
}

} // namespace syncd
