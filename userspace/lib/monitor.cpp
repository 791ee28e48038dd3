// SPDX-License-Identifier: GPL-2.0
// ilactl monitor: every map and hook change of the netns as the command
// that makes it (a batch file that replays them), misses as comments.
#include <linux/genetlink.h>
#include <linux/ila_hook.h>

#include <sys/time.h>

#include <iostream>
#include <optional>
#include <string>

#include "cli.h"
#include "ila_hook_client.h"
#include "ila_map_client.h"
#include "print.h"

namespace ila {

int run_monitor(const Words &words, const Output &o)
{
	bool timestamp = o.timestamp;
	for (std::size_t i = 1; i < words.size(); i++) {
		if (words[i] == "-t" || words[i] == "--timestamp" || words[i] == "-timestamp") {
			timestamp = true;
			continue;
		}
		usage_error("monitor: unexpected \"" + std::string(words[i]) + "\" (monitor [-t])");
		return kExitUsage;
	}
	IlaMapClient client;
	int rc = 0;
	FieldPrinter p(o.json);
	// monitor -t: when the event was read, as ip monitor -t (text: a line
	// before the event; JSON: a key of the event)
	std::string ts_text, ts_json;
	auto stamp = [&]() -> std::string_view {
		if (!timestamp)
			return {};
		timeval tv{};
		gettimeofday(&tv, nullptr);
		if (o.json)
			return ts_json = timestamp_json(tv.tv_sec, tv.tv_usec);
		ts_text = timestamp_text(tv.tv_sec, tv.tv_usec) + "\n";
		return {};
	};
	auto print = [&] {
		rc = write_stdout(ts_text + p.take() + "\n");
		ts_text.clear();
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
					  print_hook_event(p, op, h, stamp());
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
			print_map_event(p, c, stamp());
			return print();
		},
		[&] { std::cerr << "ilactl: monitor: events lost (receive buffer overrun)" << std::endl; },
		others);
	return rc;
}

} // namespace ila
