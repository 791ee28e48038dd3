// SPDX-License-Identifier: GPL-2.0
// ilactl map ...: parse (command.h), run (ila_map_client.h), print (print.h).
#include <iostream>

#include "cli.h"
#include "command.h"
#include "ila_map_client.h"
#include "print.h"

namespace ila {

int run_map(const Words &words, const Output &o)
{
	if (words.size() == 2 && words[1] == "help")
		return write_stdout(kMapHelp);
	Command cmd;
	try {
		cmd = parse_command(words);
	} catch (const UsageError &e) {
		usage_error(e.what());
		return kExitUsage;
	}
	IlaMapClient client;
	FieldPrinter p(o.json);

	switch (cmd.op) {
	case Op::List:
		p.open_array();
		for (const auto &m : client.list()) {
			print_map(p, m);
			p.end_line();
		}
		p.close_array();
		break;
	case Op::Stats:
		print_map(p, client.stats(cmd.map));
		break;
	case Op::Get:
		print_entry(p, client.get(cmd.map, cmd.ident), o.stats);
		break;
	case Op::Show: {
		auto entries = client.show(cmd.map);
		// JSON: {"name": MAP, "entries": [...]}, one entry a line
		p.open();
		p.str("name", "", cmd.map, FieldPrinter::Json);
		p.open_array("entries");
		p.end_line(true);
		for (const auto &e : entries) {
			print_entry(p, e, o.stats);
			p.end_line(true);
		}
		p.close_array();
		p.close();
		break;
	}
	default:
		client.execute(cmd);
		return 0;
	}
	std::string out = p.take();
	if (o.json || (cmd.op != Op::List && cmd.op != Op::Show))
		out += "\n";
	return write_output(out, o);
}

} // namespace ila
