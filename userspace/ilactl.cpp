// SPDX-License-Identifier: GPL-2.0
// ilactl - manage the ILA identifier -> locator maps and the ILA hooks of
// nf_ila, used by "ip6tables -t mangle ... -j ILA --map NAME" and by
// themselves. See ilactl(8).
//
// This file is the dispatcher: options, then the command's function in
// userspace/lib (cli.h). Exit status: 0 ok, 1 an operation failed, 2 usage
// error.
#include <getopt.h>

#include <cstring>
#include <iostream>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include <linux/ila_map.h>

#include "cli.h"

#ifndef NFILR_VERSION
#define NFILR_VERSION "unknown"
#endif

namespace {

using ila::kExitFail;
using ila::kExitUsage;

// Version of the JSON output's shape (ilactl(8), JSON OUTPUT): raised when a
// key changes meaning or goes away; new keys may appear within a version.
constexpr int kJsonSchema = 1;

const char kUsage[] =
	"Usage: ilactl [OPTIONS] map COMMAND ...      (ilactl map help)\n"
	"       ilactl [OPTIONS] hook COMMAND ...     (ilactl hook help)\n"
	"       ilactl [-n NETNS] [--progress] save [NAME...]\n"
	"       ilactl [-n NETNS] [-v] [--progress] restore [-c] [-exist] [FILE|-]\n"
	"       ilactl [-n NETNS] [-v] [--progress] [-c] [-f] [-exist] -b FILE|-\n"
	"       ilactl [-n NETNS] [-j] [-v] monitor [-t]\n"
	"\n"
	"Commands (the maps and hooks of the current network namespace):\n"
	"  map create NAME [max-entries N] [notify-miss]\n"
	"                                    new empty map (default max-entries 16777216);\n"
	"                                    notify-miss: monitor sees identifiers not found\n"
	"  map destroy NAME                  delete a map (refused while a rule uses it)\n"
	"  map list                          maps with entries, rules and counters\n"
	"  map add NAME IDENT LOCATOR [csum-mode MODE]\n"
	"                                    map an identifier (fails if it is mapped)\n"
	"  map replace NAME IDENT LOCATOR [csum-mode MODE]\n"
	"                                    add, or change an existing entry\n"
	"  map del NAME IDENT                remove an entry\n"
	"  map get NAME IDENT                show one entry\n"
	"  map show [NAME]                   every entry of NAME (without NAME: as list)\n"
	"  map flush NAME                    remove every entry\n"
	"  map stats NAME                    entries, lookups, hits, misses, rules\n"
	"  map swap NAME NAME2               exchange the entries of two maps atomically\n"
	"  map reset-counters NAME           lookups, hits, misses and per-entry hits to 0\n"
	"  hook add NAME HOOK [translate T] src-pfx P/L dst-pfx Q/L [csum-mode MODE] [direction D] [priority N]\n"
	"                                    translate in a netfilter hook of its own\n"
	"  hook add NAME HOOK [translate T] src-pfx P/L map MAP [miss M] [direction D] [priority N]\n"
	"                                    the same with a map (addresses in P/L looked up)\n"
	"  hook replace NAME HOOK [translate T] src-pfx P/L dst-pfx Q/L [csum-mode MODE] [direction D] [priority N]\n"
	"  hook replace NAME HOOK [translate T] src-pfx P/L map MAP [miss M] [direction D] [priority N]\n"
	"                                    as add, in place of the hook NAME in one step\n"
	"                                    (same HOOK and priority; counters start at 0)\n"
	"  hook del NAME                     remove a hook\n"
	"  hook list                         hooks with what they do and their counters\n"
	"  hook show                         the same\n"
	"  map help                          the grammar of the map commands\n"
	"  hook help                         the grammar of the hook commands\n"
	"  save [NAME...]                    maps (all, or the named ones) with their\n"
	"                                    entries, then hooks, as commands for restore\n"
	"  restore [-c] [-exist] [FILE]      apply what save printed (FILE or stdin);\n"
	"                                    -exist: update what exists instead of failing;\n"
	"                                    -c: check every line, change nothing\n"
	"  monitor [-t]                      print every map and hook change as the command\n"
	"                                    that makes it (replayable with -b), and misses\n"
	"                                    to be notified (# miss MAP IDENT), until killed;\n"
	"                                    -t: each with the time it came (# Timestamp: ...)\n"
	"\n"
	"HOOK: prerouting, input, output, postrouting.\n"
	"(prerouting and output translate the destination, default priority -250, before\n"
	"conntrack; input and postrouting the source, default priority 300.)\n"
	"T: dst, src.\n"
	"M: accept, drop, notify, drop,notify (notify: monitor sees identifiers not found).\n"
	"D: sir2ila, ila2sir.\n"
	"\n"
	"IDENT and LOCATOR: ILA notation, four 16-bit hex groups (2001:db8:0:1), or a\n"
	"full IPv6 address of which the low (IDENT) or high (LOCATOR) 64 bits are used.\n"
	"MODE: adjust-transport (default), neutral-map, none, neutral-map-auto, rfc6296\n"
	"(as -j ILA --csum-mode; adj-transport and no-action as in ip-route(8)).\n"
	"\n"
	"Options (ip's and ipset's single-dash spellings are accepted too: -batch,\n"
	"-force, -netns, -json, -pretty, -stats, -verbose, -help, -Version, -exist,\n"
	"-check, -timestamp):\n"
	"  -j, --json         JSON output for list, get, show, stats, hook list, monitor\n"
	"  -p, --pretty       indented JSON (implies -j)\n"
	"  -s, --stats        map show/get: each entry's hits too\n"
	"  -b, --batch FILE   run the commands in FILE (- = stdin), one per line, in file\n"
	"                     order (runs of map commands in large netlink batches): map\n"
	"                     create, destroy, add, replace, del, flush, swap,\n"
	"                     reset-counters; hook add, replace, del\n"
	"  -f, --force        with -b: go on after failing lines (as ip -force -batch)\n"
	"  -e, --exist        with -b or restore: update what exists (as ipset -exist)\n"
	"  -c, --check        with -b or restore: parse and check every line, report each\n"
	"                     bad one (FILE:LINE: reason), change nothing (as nft -c)\n"
	"      --progress     with -b, restore, save: entries done, rate and ETA on\n"
	"                     stderr even when it is no terminal (on a terminal: shown\n"
	"                     for work that lasts over a second)\n"
	"  -t, --timestamp    with monitor: the time of each event (as ip -t monitor)\n"
	"  -v, --verbose      with -b, restore: the number of commands and the rate;\n"
	"                     monitor: say when it listens\n"
	"  -h, --help         this text\n"
	"  -V, --version      version\n"
	"  -n, --netns NAME   run in network namespace NAME (ip netns), as ip -n\n"
	"\n"
	"Exit status: 0 ok, 1 operation failed, 2 usage error.\n";

// ip(8) and ipset(8) spell long options with one dash; getopt would read
// "-batch" as "-b atch". These are rewritten to their --long form.
constexpr struct {
	const char *word, *as;
} kSingleDash[] = {
	{"-batch", "--batch"},	 {"-force", "--force"},	    {"-netns", "--netns"},
	{"-json", "--json"},	 {"-pretty", "--pretty"},   {"-stats", "--stats"},
	{"-statistics", "--stats"}, {"-verbose", "--verbose"}, {"-help", "--help"},
	{"-version", "--version"}, {"-Version", "--version"}, {"-exist", "--exist"},
	{"-!", "--exist"},	 {"-check", "--check"},	    {"-timestamp", "--timestamp"},
	{"-progress", "--progress"},
};

// Rewrites the single-dash words before the command; a single-dash word
// that is neither one of them nor a cluster of flags (-jp) is refused by
// name (it would be misread as an option with an attached argument).
bool rewrite_single_dash(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		std::string_view a = argv[i];
		if (a == "--" || a.size() < 2 || a[0] != '-')
			return true; // the command starts
		if (a == "-b" || a == "-n" || a == "--batch" || a == "--netns") {
			i++; // its argument ("-b -": stdin)
			continue;
		}
		if (a[1] == '-' || a.size() == 2)
			continue;
		bool known = false;
		for (const auto &s : kSingleDash)
			if (a == s.word) {
				argv[i] = const_cast<char *>(s.as);
				known = true;
				if (a == "-batch" || a == "-netns")
					i++;
			}
		if (known)
			continue;
		if (a.substr(1).find_first_not_of("jpsfvhVect") != std::string_view::npos) {
			ila::usage_error("unknown option \"" + std::string(a) +
					 "\" (single-dash words: -batch -force -netns -json -pretty "
					 "-stats -verbose -help -Version -exist -check -timestamp "
					 "-progress)");
			return false;
		}
	}
	return true;
}

constexpr int kOptProgress = 0x100; // --progress: no short form

// The message for an option getopt_long refused: ARG is the word it was
// reading (argv[optind] before the call), OPT its optopt. A long option is
// named as written ("--json=yes": "--json takes no value"), never by the
// short letter it stands for.
std::string option_error(const char *arg, int opt, const option *opts)
{
	std::string_view a = arg ? arg : "";
	if (a.starts_with("--") && a.size() > 2) {
		std::string name(a.substr(0, a.find('=')));
		if (!opt)
			return "unknown option " + name;
		for (const option *o = opts; o->name; o++)
			if (o->val == opt && name.size() > 2 &&
			    std::string_view(o->name).starts_with(name.substr(2))) {
				std::string full = std::string("--") + o->name;
				std::string alias = opt < 0x100 ? std::string(", -") + char(opt) : "";
				if (a.find('=') != std::string_view::npos && o->has_arg == no_argument)
					return "option " + full + " takes no value (" + full + alias + ")";
				return "option " + full + " needs an argument (" + full + " ARG" + alias +
				       " ARG)";
			}
		return "bad option " + name;
	}
	for (const option *o = opts; o->name; o++)
		if (o->val == opt && o->has_arg == required_argument)
			return std::string("option -") + char(opt) + " needs an argument (--" + o->name + ")";
	if (opt > 0 && opt < 0x100)
		return std::string("unknown option -") + char(opt);
	return "unknown option " + std::string(a);
}

} // namespace

int main(int argc, char **argv)
{
	static const option opts[] = {
		{"json", no_argument, nullptr, 'j'},	{"batch", required_argument, nullptr, 'b'},
		{"verbose", no_argument, nullptr, 'v'}, {"help", no_argument, nullptr, 'h'},
		{"version", no_argument, nullptr, 'V'}, {"netns", required_argument, nullptr, 'n'},
		{"pretty", no_argument, nullptr, 'p'},	{"stats", no_argument, nullptr, 's'},
		{"force", no_argument, nullptr, 'f'},	{"exist", no_argument, nullptr, 'e'},
		{"check", no_argument, nullptr, 'c'},	{"timestamp", no_argument, nullptr, 't'},
		{"progress", no_argument, nullptr, kOptProgress},
		{nullptr, 0, nullptr, 0},
	};
	ila::Output o;
	bool force = false, exist = false, check = false;
	const char *batch = nullptr;
	int c;

	if (!rewrite_single_dash(argc, argv))
		return kExitUsage;
	opterr = 0;
	for (;;) {
		const char *arg = optind < argc ? argv[optind] : nullptr;
		c = getopt_long(argc, argv, "+jpsfecb:vhVn:t", opts, nullptr);
		if (c == -1)
			break;
		switch (c) {
		case 'c': check = true; break;
		case 't': o.timestamp = true; break;
		case kOptProgress: o.progress = true; break;
		case 'j': o.json = true; break;
		case 'p': o.json = o.pretty = true; break;
		case 's': o.stats = true; break;
		case 'f': force = true; break;
		case 'e': exist = true; break;
		case 'b': batch = optarg; break;
		case 'n':
			if (int rc = ila::enter_netns(optarg))
				return rc;
			break;
		case 'v': o.verbose = true; break;
		case 'h': return ila::write_stdout(kUsage);
		case 'V':
			return ila::write_stdout("ilactl (nf-ila-rtcache) " NFILR_VERSION ", " ILA_MAP_GENL_NAME
						 " genl version " + std::to_string(ILA_MAP_GENL_VERSION) +
						 ", JSON schema " + std::to_string(kJsonSchema) + "\n");
		default:
			ila::usage_error(option_error(arg, optopt, opts));
			return kExitUsage;
		}
	}

	try {
		ila::Words words(argv + optind, argv + argc);
		if (batch) {
			if (!words.empty()) {
				ila::usage_error("-b takes no command words");
				return kExitUsage;
			}
			if (o.timestamp) {
				ila::usage_error("-t (--timestamp) applies to monitor");
				return kExitUsage;
			}
			return ila::run_batch(batch, o, force, exist, check);
		}
		if (words.empty()) {
			ila::usage_error("missing command");
			return kExitUsage;
		}
		if (force || (exist && words[0] != "restore")) {
			ila::usage_error(std::string(force ? "-f" : "-exist") + " applies to -b" +
					 (force ? "" : " and restore"));
			return kExitUsage;
		}
		if (check && words[0] != "restore") {
			ila::usage_error("-c (--check) applies to -b and restore");
			return kExitUsage;
		}
		if (o.progress && words[0] != "restore" && words[0] != "save") {
			ila::usage_error("--progress applies to -b, restore and save");
			return kExitUsage;
		}
		if (o.timestamp && words[0] != "monitor") {
			ila::usage_error("-t (--timestamp) applies to monitor");
			return kExitUsage;
		}
		if (words[0] == "map")
			return ila::run_map(words, o);
		if (words[0] == "hook")
			return ila::run_hook(words, o);
		if (words[0] == "save")
			return ila::run_save(words, o, NFILR_VERSION);
		if (words[0] == "restore")
			return ila::run_restore(words, o, exist, check);
		if (words[0] == "monitor")
			return ila::run_monitor(words, o);
		ila::usage_error("unknown object \"" + std::string(words[0]) +
				 "\" (expected map, hook, save, restore or monitor)");
		return kExitUsage;
	} catch (const std::exception &e) {
		std::cerr << "ilactl: " << e.what() << "\n";
		return kExitFail;
	}
}
