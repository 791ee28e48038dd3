// SPDX-License-Identifier: GPL-2.0
// ilactl - manage the ILA identifier -> locator maps of nf_ila_map, used by
// "ip6tables -t mangle ... -j ILA --map NAME". See ilactl(8).
//
// Exit status: 0 ok, 1 an operation failed, 2 usage error.
#include <fcntl.h>
#include <getopt.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iostream>
#include <iterator>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include <libmnl/libmnl.h>
#include <linux/genetlink.h>
#include <linux/ila_map.h>

#ifndef NFILR_VERSION
#define NFILR_VERSION "unknown"
#endif

#include "batch.h"
#include "json.h"
#include "command.h"
#include "ila_hook_client.h"
#include "ila_map_client.h"
#include "ila_notation.h"

namespace {

constexpr int kExitFail = 1;
constexpr int kExitUsage = 2;
// Version of the JSON output's shape (ilactl(8), JSON OUTPUT): raised when a
// key changes meaning or goes away; new keys may appear within a version.
constexpr int kJsonSchema = 1;

struct Output {
	bool json = false, pretty = false, stats = false;
};

const char kUsage[] =
	"Usage: ilactl [-j [-p]] [-s] [-n NETNS] map|hook COMMAND ...\n"
	"       ilactl [-j] [-v] [-n NETNS] monitor\n"
	"       ilactl [-v] [-f] [-n NETNS] -b FILE|-\n"
	"\n"
	"Commands (the maps of the current network namespace):\n"
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
	"  map show NAME                     show every entry\n"
	"  map flush NAME                    remove every entry\n"
	"  map stats NAME                    entries, lookups, hits, misses, rules\n"
	"  map swap NAME NAME2               exchange the entries of two maps atomically\n"
	"  map reset-counters NAME           lookups, hits, misses and per-entry hits to 0\n"
	"  hook add NAME HOOK [translate T] src-pfx P/L dst-pfx Q/L [csum-mode MODE] [direction D] [priority N]\n"
	"                                    translate in a netfilter hook of its own\n"
	"  hook add NAME HOOK [translate T] src-pfx P/L map MAP [miss M] [direction D] [priority N]\n"
	"                                    the same with a map (addresses in P/L looked up)\n"
	"  hook del NAME                     remove a hook\n"
	"  hook list                         hooks with what they do and their counters\n"
	"  save [NAME...]                    maps (all, or the named ones) with their\n"
	"                                    entries, then hooks, as commands for restore\n"
	"  restore [-exist] [FILE]           apply what save printed (FILE or stdin);\n"
	"                                    -exist: update what exists instead of failing\n"
	"  monitor                           print every map and hook change as the command\n"
	"                                    that makes it (replayable with -b), and misses\n"
	"                                    to be notified (# miss MAP IDENT), until killed\n"
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
	"Options:\n"
	"  -j, --json         JSON output for list, get, show, stats, hook list\n"
	"  -p, --pretty       indented JSON (implies -j)\n"
	"  -s, --stats        map show/get: each entry's hits too\n"
	"  -b, --batch FILE   run the commands in FILE (- = stdin), one per line, in\n"
	"                     large netlink batches; create destroy add replace del flush\n"
	"                     swap reset-counters, hook add, hook del\n"
	"  -f, --force        with -b: go on after failing lines (as ip -force -batch)\n"
	"  -v, --verbose      with -b: report the number of commands and the rate\n"
	"  -h, --help         this text\n"
	"  -V, --version      version\n"
	"  -n, --netns NAME   run in network namespace NAME (ip netns), as ip -n\n"
	"\n"
	"Exit status: 0 ok, 1 operation failed, 2 usage error.\n";

void usage_error(const std::string &msg)
{
	std::cerr << "ilactl: " << msg << "\nTry 'ilactl --help' for more information.\n";
}

std::string map_json(const ila::MapInfo &m)
{
	return "{\"name\":" + ila::json_str(m.name) + ",\"entries\":" + std::to_string(m.entries) +
	       ",\"max_entries\":" + std::to_string(m.max_entries) +
	       ",\"rules\":" + std::to_string(m.rules) + ",\"lookups\":" + std::to_string(m.lookups) +
	       ",\"hits\":" + std::to_string(m.hits) + ",\"misses\":" + std::to_string(m.misses) +
	       ",\"notify_miss\":" + (m.notify_miss ? "true" : "false") + "}";
}

std::string map_text(const ila::MapInfo &m)
{
	return m.name + " entries " + std::to_string(m.entries) + " max-entries " +
	       std::to_string(m.max_entries) + " rules " + std::to_string(m.rules) + " lookups " +
	       std::to_string(m.lookups) + " hits " + std::to_string(m.hits) + " misses " +
	       std::to_string(m.misses) + (m.notify_miss ? " notify-miss" : "");
}

std::string entry_json(const ila::Entry &e)
{
	return "{\"identifier\":\"" + ila::format_half(e.ident) + "\",\"locator\":\"" +
	       ila::format_half(e.locator) + "\",\"csum_mode\":\"" +
	       std::string(ila::csum_mode_name(e.csum_mode)) + "\",\"hits\":" +
	       std::to_string(e.hits) + "}";
}

// Same words as "map add NAME" takes, so "show" output can be fed back
// (with -s, "hits N" follows).
std::string entry_text(const ila::Entry &e, bool stats = false)
{
	return ila::format_half(e.ident) + " " + ila::format_half(e.locator) + " csum-mode " +
	       std::string(ila::csum_mode_name(e.csum_mode)) +
	       (stats ? " hits " + std::to_string(e.hits) : "");
}

// Writes all of TEXT to stdout and flushes it: 0, or kExitFail with a
// message (a full disk, a closed pipe: never a truncated output with exit 0).
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

// Reads all of FILE ("-": stdin) into TEXT; false with a message naming
// the file on any read error (a directory, an I/O error).
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

int run_command(const ila::Command &cmd, const Output &o)
{
	const bool json = o.json;
	ila::IlaMapClient client;
	std::string out;

	switch (cmd.op) {
	case ila::Op::List: {
		auto maps = client.list();
		if (json) {
			out = "[";
			for (std::size_t i = 0; i < maps.size(); i++)
				out += (i ? "," : "") + map_json(maps[i]);
			out += "]\n";
		} else {
			for (const auto &m : maps)
				out += map_text(m) + "\n";
		}
		break;
	}
	case ila::Op::Stats: {
		auto m = client.stats(cmd.map);
		out = (json ? map_json(m) : map_text(m)) + "\n";
		break;
	}
	case ila::Op::Get: {
		auto e = client.get(cmd.map, cmd.ident);
		out = (json ? entry_json(e) : entry_text(e, o.stats)) + "\n";
		break;
	}
	case ila::Op::Show: {
		auto entries = client.show(cmd.map);
		out.reserve(entries.size() * 80 + 8);
		// JSON: {"name": MAP, "entries": [...]}, one entry a line
		if (json)
			out += "{\"name\":" + ila::json_str(cmd.map) + ",\"entries\":[\n";
		for (std::size_t i = 0; i < entries.size(); i++) {
			if (json)
				out += entry_json(entries[i]) + (i + 1 < entries.size() ? ",\n" : "\n");
			else
				out += entry_text(entries[i], o.stats) + "\n";
		}
		if (json)
			out += "]}\n";
		break;
	}
	default:
		client.execute(cmd);
		break;
	}
	return write_stdout(o.pretty ? ila::pretty_json(out) : out);
}

// The words of "map add|replace ... csum-mode M", "map del ...": what
// monitor prints for an event, so it can be replayed with -b.
std::string event_text(const ila::Command &c)
{
	std::string s = ila::describe(c);
	if (c.op == ila::Op::Add || c.op == ila::Op::Replace)
		s += " csum-mode " + std::string(ila::csum_mode_name(c.csum_mode.value_or(0)));
	return s;
}

std::string event_json(const ila::Command &c)
{
	std::string s = "{\"event\":\"" + std::string(ila::op_name(c.op)) + "\",\"name\":" +
			ila::json_str(c.map);
	switch (c.op) {
	case ila::Op::Swap:
		s += ",\"name2\":" + ila::json_str(c.map2);
		break;
	case ila::Op::Add:
	case ila::Op::Replace:
		s += ",\"identifier\":\"" + ila::format_half(c.ident) + "\",\"locator\":\"" +
		     ila::format_half(c.locator) + "\",\"csum_mode\":\"" +
		     std::string(ila::csum_mode_name(c.csum_mode.value_or(0))) + "\"";
		break;
	case ila::Op::Del:
	case ila::Op::Miss:
		s += ",\"identifier\":\"" + ila::format_half(c.ident) + "\"";
		break;
	default:
		break;
	}
	return s + "}";
}

// ilactl monitor: one line per change (JSON: one object per line).
int run_monitor(const std::vector<std::string_view> &words, const Output &o, bool verbose)
{
	if (words.size() > 1) {
		usage_error("monitor: unexpected \"" + std::string(words[1]) + "\"");
		return kExitUsage;
	}
	ila::IlaMapClient client;
	int rc = 0;
	auto print = [&](const std::string &line) {
		rc = write_stdout(line + "\n");
		return rc == 0;
	};
	// hook changes too, where nf_ila_hook is there (resolving its family
	// loads it); maps alone otherwise
	std::vector<ila::IlaMapClient::OtherEvents> others;
	std::optional<ila::IlaHookClient> hooks;
	try {
		hooks.emplace();
		others.push_back({hooks->family_id(), hooks->events_group(), [&](const nlmsghdr *nlh) {
					  auto cmd = static_cast<const genlmsghdr *>(
							     mnl_nlmsg_get_payload(nlh))->cmd;
					  ila::Hook h = ila::parse_hook(nlh);
					  return print(o.json ? ila::hook_event_json(cmd, h)
							      : ila::hook_event_text(cmd, h));
				  }});
	} catch (const ila::NetlinkError &e) {
		if (verbose)
			std::cerr << "ilactl: monitor: no hook events: " << e.what() << std::endl;
	}
	client.monitor(
		[&] {
			if (verbose)
				std::cerr << "ilactl: monitoring map changes"
					  << (others.empty() ? "" : " and hook changes") << std::endl;
		},
		[&](const ila::Command &c) { return print(o.json ? event_json(c) : event_text(c)); },
		[&] { std::cerr << "ilactl: monitor: events lost (receive buffer overrun)" << std::endl; },
		others);
	return rc;
}

// -n NAME: run in the network namespace NAME of `ip netns` (as ip -n).
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

int run_hook(const std::vector<std::string_view> &words, const Output &o)
{
	const bool json = o.json;
	ila::HookCommand cmd;
	try {
		cmd = ila::parse_hook_command(words);
	} catch (const ila::UsageError &e) {
		usage_error(e.what());
		return kExitUsage;
	}
	ila::IlaHookClient client;
	std::string out;
	switch (cmd.op) {
	case ila::HookOp::Add:
		client.add(cmd.hook);
		break;
	case ila::HookOp::Del:
		client.del(cmd.hook.name);
		break;
	case ila::HookOp::List: {
		auto hooks = client.list();
		if (json)
			out = "[";
		for (std::size_t i = 0; i < hooks.size(); i++)
			out += json ? (i ? "," : "") + ila::hook_json(hooks[i])
				    : ila::hook_text(hooks[i]) + "\n";
		if (json)
			out += "]\n";
		break;
	}
	}
	return write_stdout(o.pretty ? ila::pretty_json(out) : out);
}

// Map commands of TEXT in large batches. EXIST (restore -exist): a map
// that exists is not created again, add replaces.
int run_batch_text(const std::string &text, const std::string &src, bool verbose, bool exist,
		   bool force = false)
{
	// Check every line before changing anything.
	std::size_t count = 0;
	try {
		ila::for_each_batch_command(text, [&](std::size_t, const ila::Command &) { count++; });
	} catch (const ila::BatchError &e) {
		std::cerr << "ilactl: " << src << ":" << e.line() << ": " << e.reason() << "\n";
		return kExitUsage;
	}
	if (!count)
		return 0;

	auto t0 = std::chrono::steady_clock::now();
	ila::IlaMapClient client;
	std::vector<std::string> existing;
	if (exist)
		for (const auto &m : client.list())
			existing.push_back(m.name);
	ila::BatchSender sender(client, 128 * 1024, force);
	ila::for_each_batch_command(text, [&](std::size_t line, const ila::Command &c) {
		ila::Command cmd = c;
		if (exist && cmd.op == ila::Op::Create &&
		    std::find(existing.begin(), existing.end(), cmd.map) != existing.end())
			return;
		if (exist && cmd.op == ila::Op::Add)
			cmd.op = ila::Op::Replace;
		sender.add(cmd, line);
	});
	sender.finish();
	double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

	for (const auto &f : sender.failures()) {
		std::cerr << "ilactl: " << src << ":" << f.line << ": " << f.command << ": "
			  << std::strerror(f.error);
		if (!f.kernel_message.empty())
			std::cerr << (f.error == ENOBUFS ? " (" : " (kernel: ") << f.kernel_message << ")";
		std::cerr << "\n";
	}
	if (!sender.failures().empty()) {
		std::cerr << "ilactl: " << src << ": "
			  << (force ? "failed lines: " + std::to_string(sender.failures().size()) + "; "
				    : std::string("stopped after the batch with errors; "))
			  << "commands sent: " << sender.sent() << " of " << count << "\n";
		return kExitFail;
	}
	if (verbose)
		std::fprintf(stderr, "ilactl: %zu commands in %zu batches, %.3f s, %.0f commands/s\n",
			     sender.sent(), sender.batches(), secs, secs > 0 ? sender.sent() / secs : 0.0);
	return 0;
}


// ilactl save [NAME...]: every map (or the named ones) with its entries,
// then every hook (unless maps were named), as commands restore takes.
int run_save(const std::vector<std::string_view> &words)
{
	std::string out = "# ilactl save (nf-ila-rtcache " NFILR_VERSION ")\n";
	std::vector<std::string> names(words.begin() + 1, words.end());
	for (const auto &n : names)
		if (!ila::valid_map_name(n)) {
			usage_error("save: bad map name \"" + n + "\"");
			return kExitUsage;
		}
	ila::IlaMapClient maps;
	if (names.empty())
		for (const auto &m : maps.list())
			names.push_back(m.name);
	for (const auto &n : names) {
		auto info = maps.stats(n);
		out += "map create " + n + " max-entries " + std::to_string(info.max_entries) +
		       (info.notify_miss ? " notify-miss" : "") + "\n";
		for (const auto &e : maps.show(n))
			out += "map add " + n + " " + entry_text(e) + "\n";
	}
	if (words.size() == 1) {
		try {
			ila::IlaHookClient hooks;
			for (const auto &h : hooks.list())
				out += "hook add " + ila::hook_spec(h) + "\n";
		} catch (const ila::NetlinkError &e) {
			if (e.code().value() != ENOENT)	// no nf_ila_hook: no hooks
				throw;
		}
	}
	return write_stdout(out);
}

// Map and hook commands of TEXT (a batch file, or what save printed). Map
// commands go in netlink batches first, then the hook commands in order
// (hooks may use the maps). EXIST (restore -exist): maps and hooks that
// exist are updated instead of failing (like ipset restore -exist): entries
// are replaced, a hook with another definition is replaced, an identical
// one is left alone. RESTORE: only "hook add" lines.
int run_script(const std::string &text, const std::string &src, bool verbose, bool exist,
	       bool force, bool restore)
{
	// split: hook lines apart, map lines keep their line numbers
	std::string map_text;
	std::vector<std::pair<std::size_t, ila::HookCommand>> hooks;
	std::size_t lineno = 0, pos = 0;
	while (pos < text.size()) {
		std::size_t nl = text.find('\n', pos);
		std::string_view line(text.data() + pos,
				      (nl == std::string::npos ? text.size() : nl) - pos);
		pos = nl == std::string::npos ? text.size() : nl + 1;
		lineno++;
		auto w = ila::split_words(line);
		if (!w.empty() && w[0] == "hook") {
			try {
				auto hc = ila::parse_hook_command(w);
				if (hc.op == ila::HookOp::List)
					throw ila::UsageError("hook list is not a batch command");
				if (restore && hc.op != ila::HookOp::Add)
					throw ila::UsageError("only hook add is restored");
				hooks.emplace_back(lineno, hc);
			} catch (const ila::UsageError &e) {
				std::cerr << "ilactl: " << src << ":" << lineno << ": " << e.what() << "\n";
				return kExitUsage;
			}
			map_text += "\n";
		} else {
			map_text += std::string(line) + "\n";
		}
	}
	int rc = run_batch_text(map_text, src, verbose, exist, force);
	if (rc == kExitUsage || (rc && !force) || hooks.empty())
		return rc;
	ila::IlaHookClient client;
	std::vector<ila::Hook> have = exist ? client.list() : std::vector<ila::Hook>{};
	for (auto &[line, hc] : hooks) {
		try {
			if (hc.op == ila::HookOp::Del) {
				client.del(hc.hook.name);
				continue;
			}
			auto it = std::find_if(have.begin(), have.end(),
					       [&](const ila::Hook &h) { return h.name == hc.hook.name; });
			if (it != have.end()) {
				ila::Hook want = hc.hook;
				// compare as listed: the kernel's defaults filled in
				want.priority = want.priority.value_or(it->priority.value_or(0));
				want.translate = it->translate;
				if (!want.csum_mode)
					want.csum_mode = std::uint8_t(0);
				if (!want.direction)
					want.direction = std::uint8_t(0);
				if (ila::hook_spec(want) == ila::hook_spec(*it))
					continue;
				client.del(hc.hook.name);
			}
			client.add(hc.hook);
		} catch (const ila::NetlinkError &e) {
			std::cerr << "ilactl: " << src << ":" << line << ": " << e.what() << "\n";
			rc = kExitFail;
			if (!force)
				return rc;
		}
	}
	return rc;
}

int run_batch(const std::string &file, bool verbose, bool force)
{
	std::string text;
	if (!read_input(file, text))
		return kExitFail;
	return run_script(text, file == "-" ? "stdin" : file, verbose, false, force, false);
}

// ilactl restore [-exist] [FILE|-]: what save printed.
int run_restore(const std::vector<std::string_view> &words, bool verbose)
{
	bool exist = false;
	std::string file = "-";
	for (std::size_t i = 1; i < words.size(); i++) {
		if (words[i] == "-exist")
			exist = true;
		else if (file == "-" && i + 1 == words.size())
			file = std::string(words[i]);
		else {
			usage_error("restore: unexpected \"" + std::string(words[i]) +
				    "\" (restore [-exist] [FILE|-])");
			return kExitUsage;
		}
	}
	std::string text;
	if (!read_input(file, text))
		return kExitFail;
	return run_script(text, file == "-" ? "stdin" : file, verbose, exist, false, true);
}

} // namespace

int main(int argc, char **argv)
{
	static const option opts[] = {
		{"json", no_argument, nullptr, 'j'},   {"batch", required_argument, nullptr, 'b'},
		{"verbose", no_argument, nullptr, 'v'}, {"help", no_argument, nullptr, 'h'},
		{"version", no_argument, nullptr, 'V'}, {"netns", required_argument, nullptr, 'n'},
		{"pretty", no_argument, nullptr, 'p'},  {"stats", no_argument, nullptr, 's'},
		{"force", no_argument, nullptr, 'f'},   {nullptr, 0, nullptr, 0},
	};
	Output o;
	bool verbose = false, force = false;
	const char *batch = nullptr;
	int c;

	// ip(8) spells it -force
	for (int i = 1; i < argc && argv[i][0] == '-'; i++)
		if (std::strcmp(argv[i], "-force") == 0)
			argv[i] = const_cast<char *>("--force");
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+jpsfb:vhVn:", opts, nullptr)) != -1) {
		switch (c) {
		case 'j': o.json = true; break;
		case 'p': o.json = o.pretty = true; break;
		case 's': o.stats = true; break;
		case 'f': force = true; break;
		case 'b': batch = optarg; break;
		case 'n':
			if (int rc = enter_netns(optarg))
				return rc;
			break;
		case 'v': verbose = true; break;
		case 'h': return write_stdout(kUsage);
		case 'V':
			return write_stdout("ilactl (nf-ila-rtcache) " NFILR_VERSION ", " ILA_MAP_GENL_NAME
					    " genl version " + std::to_string(ILA_MAP_GENL_VERSION) +
					    ", JSON schema " + std::to_string(kJsonSchema) + "\n");
		default:
			usage_error(optopt ? std::string("bad option -") + char(optopt) + " or missing argument"
					   : std::string("bad option ") + argv[optind - 1]);
			return kExitUsage;
		}
	}

	try {
		if (batch) {
			if (optind < argc) {
				usage_error("-b takes no command words");
				return kExitUsage;
			}
			return run_batch(batch, verbose, force);
		}
		std::vector<std::string_view> words(argv + optind, argv + argc);
		if (words.empty()) {
			usage_error("missing command");
			return kExitUsage;
		}
		if (words[0] == "hook")
			return run_hook(words, o);
		if (words[0] == "save")
			return run_save(words);
		if (words[0] == "restore")
			return run_restore(words, verbose);
		if (words[0] == "monitor")
			return run_monitor(words, o, verbose);
		if (words[0] != "map") {
			usage_error("unknown object \"" + std::string(words[0]) +
				    "\" (expected map, hook, save, restore or monitor)");
			return kExitUsage;
		}
		ila::Command cmd;
		try {
			cmd = ila::parse_command(words);
		} catch (const ila::UsageError &e) {
			usage_error(e.what());
			return kExitUsage;
		}
		return run_command(cmd, o);
	} catch (const std::system_error &e) {
		std::cerr << "ilactl: " << e.what() << "\n";
		return kExitFail;
	} catch (const std::exception &e) {
		std::cerr << "ilactl: " << e.what() << "\n";
		return kExitFail;
	}
}
