// SPDX-License-Identifier: GPL-2.0
// ilactl save, restore, -b: text that makes the state, and applying it.
#include <iostream>

#include "batch.h"
#include "cli.h"
#include "ila_hook_client.h"
#include "ila_map_client.h"
#include "ila_notation.h"
#include "print.h"
#include "script.h"

namespace ila {

namespace {

int apply(const std::string &file, const Output &o, bool exist, bool force)
{
	std::string text;
	if (!read_input(file, text))
		return kExitFail;
	ScriptOptions so;
	so.src = file == "-" ? "stdin" : file;
	so.verbose = o.verbose;
	so.force = force;
	so.exist = exist;
	std::vector<ScriptLine> lines;
	try {
		lines = parse_script(text); // every line checked before anything changes
	} catch (const BatchError &e) {
		std::cerr << "ilactl: " << so.src << ":" << e.line() << ": " << e.reason() << "\n";
		return kExitUsage;
	}
	return run_script(lines, so, std::cerr);
}

} // namespace

int run_batch(const std::string &file, const Output &o, bool force, bool exist)
{
	return apply(file, o, exist, force);
}

int run_restore(const Words &words, const Output &o, bool exist)
{
	std::string file = "-";
	for (std::size_t i = 1; i < words.size(); i++) {
		if (words[i] == "-exist" || words[i] == "--exist")
			exist = true;
		else if (file == "-" && i + 1 == words.size())
			file = std::string(words[i]);
		else {
			usage_error("restore: unexpected \"" + std::string(words[i]) +
				    "\" (restore [-exist] [FILE|-])");
			return kExitUsage;
		}
	}
	return apply(file, o, exist, false);
}

int run_save(const Words &words, const std::string &version)
{
	std::string out = "# ilactl save (nf-ila-rtcache " + version + ")\n";
	std::vector<std::string> names(words.begin() + 1, words.end());
	for (const auto &n : names)
		if (!valid_map_name(n)) {
			usage_error("save: bad map name \"" + n + "\"");
			return kExitUsage;
		}
	IlaMapClient maps;
	if (names.empty())
		for (const auto &m : maps.list())
			names.push_back(m.name);
	FieldPrinter p(false);
	for (const auto &n : names) {
		auto info = maps.stats(n);
		Command create;
		create.op = Op::Create;
		create.map = n;
		create.max_entries = info.max_entries;
		create.notify_miss = info.notify_miss;
		print_map_event(p, create);
		out += p.take() + "\n";
		for (const auto &e : maps.show(n)) {
			print_entry(p, e, false);
			out += "map add " + n + " " + p.take() + "\n";
		}
	}
	if (words.size() == 1) {
		try {
			IlaHookClient hooks;
			for (const auto &h : hooks.list())
				out += "hook add " + hook_spec(h) + "\n";
		} catch (const NetlinkError &e) {
			if (e.code().value() != ENOENT) // no ILA_HOOK family: no hooks
				throw;
		}
	}
	return write_stdout(out);
}

} // namespace ila
