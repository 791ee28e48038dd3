// SPDX-License-Identifier: GPL-2.0
// The commands of ilactl, one function per object, called by the
// dispatcher userspace/ilactl.cpp: map (cli_map.cpp), hook (cli_hook.cpp),
// save / restore / -b (cli_script.cpp), monitor (monitor.cpp). Each
// returns the exit status and writes its messages itself.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace ila {

constexpr int kExitFail = 1;
constexpr int kExitUsage = 2;

struct Output {
	bool json = false, pretty = false, stats = false, verbose = false;
	bool progress = false;	// --progress: shown even when stderr is no terminal
	bool timestamp = false; // -t: monitor prints when each event came
};

using Words = std::vector<std::string_view>;

int run_map(const Words &words, const Output &o);
int run_hook(const Words &words, const Output &o);
// save [NAME...]; VERSION goes in the first line (a comment)
int run_save(const Words &words, const Output &o, const std::string &version);
// restore [-c] [-exist] [FILE|-]; EXIST, CHECK: -exist, -c given before the
// command. CHECK: every line parsed and checked, each bad one reported,
// nothing sent to the kernel.
int run_restore(const Words &words, const Output &o, bool exist, bool check);
// -b FILE|- (FORCE: -f, EXIST: -exist, CHECK: -c as for restore)
int run_batch(const std::string &file, const Output &o, bool force, bool exist, bool check);
int run_monitor(const Words &words, const Output &o);

// "ilactl: MSG" and the --help hint, on stderr.
void usage_error(const std::string &msg);
// Writes all of TEXT to stdout and flushes it: 0, or kExitFail with a
// message (a full disk, a closed pipe: never a truncated output with exit 0).
int write_stdout(std::string_view text);
// Compact JSON made pretty when asked, then write_stdout.
int write_output(const std::string &text, const Output &o);
// Reads all of FILE ("-": stdin) into TEXT; false with a message naming
// the file on any read error (a directory, an I/O error).
bool read_input(const std::string &file, std::string &text);
// -n NAME: enters the network namespace NAME of `ip netns` (as ip -n).
int enter_netns(const std::string &name);

} // namespace ila
