// SPDX-License-Identifier: GPL-2.0
// ilactl save, restore, -b: text that makes the state, and applying it.
#include <iostream>

#include "batch.h"
#include "cli.h"
#include "ila_hook_client.h"
#include "ila_map_client.h"
#include "ila_notation.h"
#include "print.h"
#include "progress.h"
#include "script.h"

namespace ila {

namespace {

// The lines of TEXT (the last one may lack its newline).
std::size_t count_lines(const std::string &text)
{
	std::size_t n = 0;
	for (char c : text)
		n += c == '\n';
	return n + (!text.empty() && text.back() != '\n');
}

// -b, restore; CHECK (-c): every line parsed and checked, nothing sent.
int apply(const std::string &file, const Output &o, bool exist, bool force, bool check)
{
	std::string text;
	if (!read_input(file, text))
		return kExitFail;
	ScriptOptions so;
	so.src = file == "-" ? "stdin" : file;
	so.verbose = o.verbose;
	so.force = force;
	so.exist = exist;
	so.progress = Progress::mode_for_stderr(o.progress);
	std::vector<BatchError> errors;
	std::vector<ScriptLine> lines;
	if (check) {
		// millions of lines take a while to parse: progress over the lines
		std::size_t total = count_lines(text);
		Progress progress(std::cerr, so.src + ": check", total, so.progress, "line");
		lines = parse_script(text, errors, [&](std::size_t n) { progress.update(n); });
		progress.finish(total);
	} else {
		lines = parse_script(text, errors); // every line checked before anything changes
	}
	for (const auto &e : errors)
		std::cerr << "ilactl: " << so.src << ":" << e.line() << ": " << e.reason() << "\n";
	if (!errors.empty()) {
		if (check || errors.size() > 1)
			std::cerr << "ilactl: " << so.src << ": " << plural(errors.size(), "bad line")
				  << (check ? "" : ", nothing applied") << "\n";
		return kExitUsage;
	}
	if (check) {
		if (o.verbose)
			std::cerr << "ilactl: " << so.src << ": " << plural(lines.size(), "command")
				  << ", no errors\n";
		return 0;
	}
	return run_script(lines, so, std::cerr);
}

} // namespace

int run_batch(const std::string &file, const Output &o, bool force, bool exist, bool check)
{
	return apply(file, o, exist, force, check);
}

int run_restore(const Words &words, const Output &o, bool exist, bool check)
{
	std::string file = "-";
	for (std::size_t i = 1; i < words.size(); i++) {
		if (words[i] == "-exist" || words[i] == "--exist")
			exist = true;
		else if (words[i] == "-c" || words[i] == "--check" || words[i] == "-check")
			check = true;
		else if (file == "-" && i + 1 == words.size())
			file = std::string(words[i]);
		else {
			usage_error("restore: unexpected \"" + std::string(words[i]) +
				    "\" (restore [-c] [-exist] [FILE|-])");
			return kExitUsage;
		}
	}
	return apply(file, o, exist, false, check);
}

int run_save(const Words &words, const Output &o, const std::string &version)
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
	std::vector<MapInfo> infos;
	std::size_t total = 0, done = 0;
	for (const auto &n : names) {
		infos.push_back(maps.stats(n));
		total += infos.back().entries;
	}
	Progress progress(std::cerr, "save", total, Progress::mode_for_stderr(o.progress));
	FieldPrinter p(false);
	for (std::size_t i = 0; i < names.size(); i++) {
		const auto &n = names[i];
		const auto &info = infos[i];
		Command create;
		create.op = Op::Create;
		create.map = n;
		create.max_entries = info.max_entries;
		create.notify_miss = info.notify_miss;
		print_map_event(p, create);
		out += p.take() + "\n";
		auto entries = maps.show(n, [&](std::size_t got) { progress.update(done + got); });
		for (const auto &e : entries) {
			print_entry(p, e, false);
			out += "map add " + n + " " + p.take() + "\n";
		}
		done += entries.size();
	}
	progress.finish(done);
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
