// SPDX-License-Identifier: GPL-2.0
#include "command.h"

#include <linux/ila_map.h>

#include "ila_notation.h"

#include <common/ila_names.h>

namespace ila {

namespace {

struct Verb {
	std::string_view name;
	Op op;
	const char *args; // for messages
};

constexpr Verb kVerbs[] = {
	{"create", Op::Create, "NAME [max-entries N] [notify-miss]"},
	{"destroy", Op::Destroy, "NAME"},
	{"list", Op::List, ""},
	{"add", Op::Add, "NAME IDENT LOCATOR [csum-mode MODE]"},
	{"replace", Op::Replace, "NAME IDENT LOCATOR [csum-mode MODE]"},
	{"del", Op::Del, "NAME IDENT"},
	{"get", Op::Get, "NAME IDENT"},
	{"show", Op::Show, "[NAME]"},
	{"flush", Op::Flush, "NAME"},
	{"stats", Op::Stats, "NAME"},
	{"swap", Op::Swap, "NAME NAME2"},
	{"reset-counters", Op::ResetCounters, "NAME"},
};

const Verb &verb_of(Op op)
{
	for (const auto &v : kVerbs)
		if (v.op == op)
			return v;
	return kVerbs[0];
}

[[noreturn]] void usage(const Verb &v, const std::string &why)
{
	throw UsageError(why + " (usage: map " + std::string(v.name) +
			 (*v.args ? " " : "") + v.args + ")");
}

std::uint64_t half_arg(const Verb &v, std::string_view word, Half half)
{
	try {
		return parse_half(word, half);
	} catch (const std::invalid_argument &e) {
		usage(v, e.what());
	}
}

} // namespace

const char kMapHelp[] =
	"Usage: ilactl [-n NETNS] map create NAME [max-entries N] [notify-miss]\n"
	"       ilactl [-n NETNS] map destroy NAME\n"
	"       ilactl [-j [-p]] [-n NETNS] map { list | show }\n"
	"       ilactl [-n NETNS] map { add | replace } NAME IDENT LOCATOR [csum-mode MODE]\n"
	"       ilactl [-n NETNS] map del NAME IDENT\n"
	"       ilactl [-j [-p]] [-s] [-n NETNS] map get NAME IDENT\n"
	"       ilactl [-j [-p]] [-s] [-n NETNS] map show NAME\n"
	"       ilactl [-n NETNS] map { flush | reset-counters } NAME\n"
	"       ilactl [-j [-p]] [-n NETNS] map stats NAME\n"
	"       ilactl [-n NETNS] map swap NAME NAME2\n"
	"       ilactl map help\n"
	"IDENT := four 16-bit hex groups (0:0:0:5) or an IPv6 address (::5)\n"
	"LOCATOR := four 16-bit hex groups (2001:db8:0:1) or an IPv6 address (2001:db8:0:1::)\n"
	"MODE := adjust-transport | neutral-map | none | neutral-map-auto | rfc6296\n";

bool Command::is_write() const
{
	switch (op) {
	case Op::Create:
	case Op::Destroy:
	case Op::Add:
	case Op::Replace:
	case Op::Del:
	case Op::Flush:
	case Op::Swap:
	case Op::ResetCounters:
		return true;
	default:
		return false;
	}
}

std::vector<std::string_view> split_words(std::string_view line)
{
	std::vector<std::string_view> words;
	std::size_t i = 0, n = line.size();

	while (i < n) {
		while (i < n && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r'))
			i++;
		if (i >= n || line[i] == '#')
			break;
		std::size_t start = i;
		while (i < n && line[i] != ' ' && line[i] != '\t' && line[i] != '\r')
			i++;
		words.push_back(line.substr(start, i - start));
	}
	return words;
}

Command parse_command(const std::vector<std::string_view> &words)
{
	std::size_t i = 0;
	Command cmd;

	if (i < words.size() && words[i] == "map")
		i++;
	if (i >= words.size())
		throw UsageError("missing command (create, destroy, list, add, replace, del, "
				 "get, show, flush, stats, swap, reset-counters, help)");
	const Verb *verb = nullptr;
	for (const auto &v : kVerbs)
		if (v.name == words[i])
			verb = &v;
	if (!verb)
		throw UsageError("unknown command \"" + std::string(words[i]) +
				 "\" (create, destroy, list, add, replace, del, get, show, flush, "
				 "stats, swap, reset-counters, help)");
	i++;
	cmd.op = verb->op;

	auto need = [&](const char *what) -> std::string_view {
		if (i >= words.size())
			usage(*verb, std::string("missing ") + what);
		return words[i++];
	};

	// "map show" alone lists the maps, as "map list" (ip's show/list)
	if (cmd.op == Op::Show && i == words.size())
		cmd.op = Op::List;
	if (cmd.op != Op::List) {
		std::string_view name = need("map name");
		if (!valid_map_name(name))
			usage(*verb, "bad map name \"" + std::string(name) + "\": use " ILA_NAME_RULE);
		cmd.map = std::string(name);
	}
	switch (cmd.op) {
	case Op::Swap: {
		std::string_view name = need("second map name");
		if (!valid_map_name(name))
			usage(*verb, "bad map name \"" + std::string(name) + "\": use " ILA_NAME_RULE);
		cmd.map2 = std::string(name);
		break;
	}
	case Op::Add:
	case Op::Replace:
		cmd.ident = half_arg(*verb, need("identifier"), Half::Identifier);
		cmd.locator = half_arg(*verb, need("locator"), Half::Locator);
		break;
	case Op::Del:
	case Op::Get:
		cmd.ident = half_arg(*verb, need("identifier"), Half::Identifier);
		break;
	default:
		break;
	}
	while (i < words.size()) {
		std::string_view key = words[i++];
		if ((cmd.op == Op::Add || cmd.op == Op::Replace) && key == "csum-mode" &&
		    !cmd.csum_mode) {
			std::string_view m = need("checksum mode");
			cmd.csum_mode = parse_csum_mode(m);
			if (!cmd.csum_mode)
				usage(*verb, "bad csum-mode \"" + std::string(m) +
						     "\": use " ILA_CSUM_MODE_LIST);
		} else if (cmd.op == Op::Create && key == "notify-miss" && !cmd.notify_miss) {
			cmd.notify_miss = true;
		} else if (cmd.op == Op::Create && key == "max-entries" && !cmd.max_entries) {
			std::string_view m = need("max-entries value");
			auto v = parse_uint(m, 1, ILA_MAP_LIMIT_MAX_ENTRIES);
			if (!v)
				usage(*verb, "bad max-entries \"" + std::string(m) + "\": use 1.." +
						     std::to_string(ILA_MAP_LIMIT_MAX_ENTRIES));
			cmd.max_entries = static_cast<std::uint32_t>(*v);
		} else {
			usage(*verb, "unexpected \"" + std::string(key) + "\"");
		}
	}
	return cmd;
}

std::string_view op_name(Op op)
{
	return op == Op::Miss ? "miss" : verb_of(op).name;
}

std::string describe(const Command &cmd)
{
	if (cmd.op == Op::Miss) // a comment line in a batch file
		return "# miss " + cmd.map + " " + format_half(cmd.ident);
	std::string s = "map " + std::string(verb_of(cmd.op).name);
	if (cmd.op != Op::List)
		s += " " + cmd.map;
	switch (cmd.op) {
	case Op::Add:
	case Op::Replace:
		s += " " + format_half(cmd.ident) + " " + format_half(cmd.locator);
		break;
	case Op::Del:
	case Op::Get:
		s += " " + format_half(cmd.ident);
		break;
	case Op::Swap:
		s += " " + cmd.map2;
		break;
	default:
		break;
	}
	return s;
}

} // namespace ila
