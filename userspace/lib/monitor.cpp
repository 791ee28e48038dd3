// SPDX-License-Identifier: GPL-2.0
// ilactl monitor: every map and hook change of the netns as the command
// that makes it (a batch file that replays them), misses as comments.
#include <linux/genetlink.h>
#include <linux/ila_hook.h>

#include <iostream>
#include <optional>

#include "cli.h"
#include "ila_hook_client.h"
#include "ila_map_client.h"
#include "print.h"

namespace ila {

int run_monitor(const Words &words, const Output &o)
{
	if (words.size() > 1) {
		usage_error("monitor: unexpected \"" + std::string(words[1]) + "\"");
		return kExitUsage;
	}
	IlaMapClient client;
	int rc = 0;
	FieldPrinter p(o.json);
	auto print = [&] {
		rc = write_stdout(p.take() + "\n");
		return rc == 0;
	};
	// hook changes too, where the ILA_HOOK family is there; maps alone
	// otherwise
	std::vector<IlaMapClient::OtherEvents> others;
	std::optional<IlaHookClient> hooks;
	try {
		hooks.emplace();
		others.push_back({hooks->family_id(), hooks->events_group(), [&](const nlmsghdr *nlh) {
					  auto cmd = static_cast<const genlmsghdr *>(
							     mnl_nlmsg_get_payload(nlh))->cmd;
					  Hook h = parse_hook(nlh);
					  HookOp op = cmd == ILA_HOOK_CMD_DELHOOK ? HookOp::Del
						      : h.replaced		  ? HookOp::Replace
										  : HookOp::Add;
					  print_hook_event(p, op, h);
					  return print();
				  }});
	} catch (const NetlinkError &e) {
		if (o.verbose)
			std::cerr << "ilactl: monitor: no hook events: " << e.what() << std::endl;
	}
	client.monitor(
		[&] {
			if (o.verbose)
				std::cerr << "ilactl: monitoring map changes"
					  << (others.empty() ? "" : " and hook changes") << std::endl;
		},
		[&](const Command &c) {
			print_map_event(p, c);
			return print();
		},
		[&] { std::cerr << "ilactl: monitor: events lost (receive buffer overrun)" << std::endl; },
		others);
	return rc;
}

} // namespace ila
