// SPDX-License-Identifier: GPL-2.0
#include <fcntl.h>
#include <sched.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>

#include "cli.h"
#include "json.h"

namespace ila {

void usage_error(const std::string &msg)
{
	std::cerr << "ilactl: " << msg << "\nTry 'ilactl --help' for more information.\n";
}

int write_stdout(std::string_view text)
{
	errno = 0;
	if (std::fwrite(text.data(), 1, text.size(), stdout) != text.size() ||
	    std::fflush(stdout) != 0 || std::ferror(stdout)) {
		std::cerr << "ilactl: write error on standard output: "
			  << std::strerror(errno ? errno : EIO) << "\n";
		return kExitFail;
	}
	return 0;
}

int write_output(const std::string &text, const Output &o)
{
	return write_stdout(o.pretty ? pretty_json(text) : text);
}

bool read_input(const std::string &file, std::string &text)
{
	const std::string name = file == "-" ? "standard input" : file;
	std::FILE *f = file == "-" ? stdin : std::fopen(file.c_str(), "rb");
	if (!f) {
		std::cerr << "ilactl: " << name << ": " << std::strerror(errno) << "\n";
		return false;
	}
	char buf[65536];
	std::size_t n;
	errno = 0;
	while ((n = std::fread(buf, 1, sizeof(buf), f)) > 0)
		text.append(buf, n);
	bool ok = !std::ferror(f);
	int err = errno ? errno : EIO;
	if (f != stdin)
		std::fclose(f);
	if (!ok)
		std::cerr << "ilactl: " << name << ": read error: " << std::strerror(err) << "\n";
	return ok;
}

int enter_netns(const std::string &name)
{
	if (name.empty() || name.find('/') != std::string::npos || name == "." || name == "..") {
		usage_error("-n: bad network namespace name \"" + name + "\"");
		return kExitUsage;
	}
	std::string path = "/run/netns/" + name;
	int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		std::cerr << "ilactl: -n " << name << ": " << path << ": " << std::strerror(errno) << "\n";
		return kExitFail;
	}
	int rc = setns(fd, CLONE_NEWNET);
	int err = errno;
	close(fd);
	if (rc < 0) {
		std::cerr << "ilactl: -n " << name << ": setns: " << std::strerror(err) << "\n";
		return kExitFail;
	}
	return 0;
}

} // namespace ila
