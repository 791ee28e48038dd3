// SPDX-License-Identifier: GPL-2.0
// ilactl hook ...: parse (hook_command.h), run (ila_hook_client.h), print
// (print.h); the same shape as cli_map.cpp.
#include "cli.h"
#include "command.h"
#include "ila_hook_client.h"
#include "print.h"

namespace ila {

int run_hook(const Words &words, const Output &o)
{
	HookCommand cmd;
	try {
		cmd = parse_hook_command(words);
	} catch (const UsageError &e) {
		usage_error(e.what());
		return kExitUsage;
	}
	if (cmd.op == HookOp::Help)
		return write_stdout(kHookHelp);
	IlaHookClient client;
	FieldPrinter p(o.json);
	switch (cmd.op) {
	case HookOp::Add:
	case HookOp::Replace:
		client.add(cmd.hook, cmd.op == HookOp::Replace);
		return 0;
	case HookOp::Del:
		client.del(cmd.hook.name);
		return 0;
	case HookOp::List:
	case HookOp::Help:
		break;
	}
	p.open_array();
	for (const auto &h : client.list()) {
		print_hook(p, h, true);
		p.end_line();
	}
	p.close_array();
	return write_output(p.take() + (o.json ? "\n" : ""), o);
}

} // namespace ila
