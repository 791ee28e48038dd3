// SPDX-License-Identifier: GPL-2.0
// ila-syncd - keep ILA maps (module nf_ila) equal to a key range of an etcd v3
// cluster: the mapping-system client of ILA routers (full mode) and
// forwarding nodes (cache mode). See ila-syncd(8).
//
// Exit status: 0 ok, 1 failure, 2 usage error.
#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>
#include <thread>

#include <linux/ila_map.h>

#include "daemon.h"
#include "json.h"
#include "log.h"
#include "netns.h"
#include "options.h"
#include "status_format.h"
#include "status_socket.h"
#include "transfer.h"

#ifndef NFILR_VERSION
#define NFILR_VERSION "unknown"
#endif

namespace {

constexpr int kExitFail = 1;
constexpr int kExitUsage = 2;

std::string read_config(const std::string &path)
{
	std::ifstream f(path);
	if (!f)
		throw syncd::UsageError("--config " + path + ": " + std::strerror(errno));
	std::ostringstream ss;
	ss << f.rdbuf();
	return ss.str();
}

bool read_input(const std::string &file, std::string &text)
{
	std::istream *in = &std::cin;
	std::ifstream f;
	if (file != "-") {
		f.open(file, std::ios::binary);
		if (!f) {
			std::cerr << "ila-syncd: " << file << ": " << std::strerror(errno) << "\n";
			return false;
		}
		in = &f;
	}
	std::ostringstream ss;
	ss << in->rdbuf();
	if (in->bad()) {
		std::cerr << "ila-syncd: " << (file == "-" ? "standard input" : file) << ": read error\n";
		return false;
	}
	text = ss.str();
	return true;
}

// The password file should not be readable by others.
void check_password_file(const std::string &path)
{
	struct stat st;
	if (stat(path.c_str(), &st) == 0 && (st.st_mode & 0077))
		syncd::log(syncd::Level::Warning, "--password-file " + path + " is readable by group or others (chmod 600)");
}

int run_status(const syncd::Options &o)
{
	int rc = 0;
	std::string out;
	try {
		syncd::in_netns(o.netns, [&] {
			std::vector<std::string> maps = syncd::running_daemons();
			if (!o.map.empty()) {
				out = syncd::query_daemon(o.map, o.json, 10);
				return;
			}
			if (maps.empty()) {
				std::cerr << "ila-syncd: no ila-syncd runs in this network namespace\n";
				rc = kExitFail;
				if (o.json)
					out = "[]\n";
				return;
			}
			if (o.json)
				out = "[";
			for (std::size_t i = 0; i < maps.size(); i++) {
				std::string one;
				try {
					one = syncd::query_daemon(maps[i], o.json, 10);
				} catch (const std::exception &e) {
					std::cerr << "ila-syncd: " << e.what() << "\n";
					rc = kExitFail;
					continue;
				}
				if (o.json) {
					while (!one.empty() && one.back() == '\n')
						one.pop_back();
					out += (out.size() > 1 ? "," : "") + one;
				} else {
					out += one;
				}
			}
			if (o.json)
				out += "]\n";
		});
	} catch (const std::exception &e) {
		std::cerr << "ila-syncd: " << e.what() << "\n";
		return kExitFail;
	}
	if (o.pretty)
		out = ila::pretty_json(out);
	std::fwrite(out.data(), 1, out.size(), stdout);
	if (std::fflush(stdout) != 0) {
		std::cerr << "ila-syncd: write error on standard output\n";
		return kExitFail;
	}
	return rc;
}

int run_daemon(const syncd::Options &o)
{
	syncd::log_init(o.map, o.verbose);
	if (!o.password_file.empty())
		check_password_file(o.password_file);
	// Signals go to one thread, which stops or resyncs the daemon.
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &set, nullptr);
	signal(SIGPIPE, SIG_IGN);

	std::unique_ptr<syncd::Daemon> d;
	try {
		d = std::make_unique<syncd::Daemon>(o);
	} catch (const std::exception &e) {
		syncd::log(syncd::Level::Err, e.what());
		return kExitFail;
	}
	std::thread([&d, set] {
		for (;;) {
			int sig = 0;
			if (sigwait(&set, &sig) != 0)
				continue;
			if (sig == SIGHUP) {
				syncd::log(syncd::Level::Notice, "SIGHUP: full resync");
				d->resync();
				continue;
			}
			d->stop();
			return;
		}
	}).detach();
	int rc = d->run();
	std::fflush(stderr);
	// threads blocked in the kernel (miss notifications) end with the process
	_exit(rc);
}

} // namespace

int main(int argc, char **argv)
{
	syncd::Options o;
	try {
		o = syncd::parse_options(std::vector<std::string>(argv, argv + argc), read_config);
	} catch (const syncd::UsageError &e) {
		std::cerr << "ila-syncd: " << e.what() << "\nTry 'ila-syncd --help' for more information.\n";
		return kExitUsage;
	}
	switch (o.command) {
	case syncd::Command::Help:
		std::fputs(syncd::kUsage, stdout);
		return std::fflush(stdout) == 0 ? 0 : kExitFail;
	case syncd::Command::Version:
		std::printf("ila-syncd (nf-ila-rtcache) %s, %s genl version %d, status JSON schema %d\n", NFILR_VERSION,
			    ILA_MAP_GENL_NAME, ILA_MAP_GENL_VERSION, syncd::kStatusSchema);
		return std::fflush(stdout) == 0 ? 0 : kExitFail;
	case syncd::Command::Status:
		return run_status(o);
	case syncd::Command::Import: {
		std::string text;
		if (!read_input(o.files.at(0), text))
			return kExitFail;
		try {
			return syncd::run_import(o, text, o.files[0] == "-" ? "stdin" : o.files[0]);
		} catch (const std::exception &e) {
			std::cerr << "ila-syncd: import: " << e.what() << "\n";
			return kExitFail;
		}
	}
	case syncd::Command::Export:
		try {
			return syncd::run_export(o, std::cout);
		} catch (const std::exception &e) {
			std::cerr << "ila-syncd: export: " << e.what() << "\n";
			return kExitFail;
		}
	case syncd::Command::Run:
		return run_daemon(o);
	}
	return kExitFail;
}
