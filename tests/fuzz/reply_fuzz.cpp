// SPDX-License-Identifier: GPL-2.0
// libFuzzer target: what ilactl does with bytes the kernel sends back. The
// input is a netlink receive buffer; every message in it goes through the
// parser ilactl would use (acks/errors with extended-ack TLVs, map, entry
// and hook replies) and the parsed values through the text and JSON
// formatting. Malformed input may only end in ila::NetlinkError.
//
//   make fuzz [FUZZ_SECS=60]   (clang's -fsanitize=fuzzer,address,undefined)
//
// The unit test binary links this file too (without libFuzzer; declared in
// reply_fuzz.h) and replays seed replies and deterministic mutations of
// them (ilactl_reply_fuzz_test.cpp).
#include <libmnl/libmnl.h>
#include <linux/netlink.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "reply_fuzz.h"

#include "command.h"
#include "ila_hook_client.h"
#include "ila_map_client.h"
#include "ila_notation.h"
#include "json.h"
#include "mnl_socket.h"
#include "print.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size)
{
	// an aligned copy, as a receive buffer is
	std::vector<std::uint64_t> store(size / 8 + 1);
	std::memcpy(store.data(), data, size);
	auto *buf = reinterpret_cast<const char *>(store.data());
	int len = int(size);
	std::size_t sink = 0;

	for (auto *nlh = reinterpret_cast<const nlmsghdr *>(buf); ila::nlmsg_fits(nlh, len);
	     nlh = mnl_nlmsg_next(nlh, &len)) {
		if (nlh->nlmsg_type == NLMSG_ERROR || nlh->nlmsg_type == NLMSG_DONE) {
			if (nlh->nlmsg_type == NLMSG_ERROR) {
				auto ack = ila::parse_ack(nlh);
				sink += ack.message.size() + unsigned(ack.error);
			}
			continue;
		}
		try {
			auto e = ila::parse_entry(nlh);
			sink += ila::format_half(e.ident).size() + ila::format_half(e.locator).size() +
				ila::csum_mode_name(e.csum_mode).size();
		} catch (const ila::NetlinkError &) {
		}
		try {
			auto c = ila::parse_event(nlh);
			for (bool json : {false, true}) {
				ila::FieldPrinter p(json);
				ila::print_map_event(p, c);
				sink += p.take().size();
			}
		} catch (const ila::NetlinkError &) {
		}
		try {
			auto m = ila::parse_map(nlh);
			for (bool json : {false, true}) {
				ila::FieldPrinter p(json);
				ila::print_map(p, m);
				sink += p.take().size();
			}
		} catch (const ila::NetlinkError &) {
		}
		try {
			auto h = ila::parse_hook(nlh);
			for (bool json : {false, true}) {
				ila::FieldPrinter p(json);
				ila::print_hook(p, h, true);
				ila::print_hook_event(p, h.replaced ? ila::HookOp::Replace : ila::HookOp::Add, h);
				std::string out = p.take();
				sink += out.size() + (json ? ila::pretty_json(out).size() : 0);
			}
			sink += ila::hook_spec(h).size();
		} catch (const ila::NetlinkError &) {
		}
	}
	return sink == std::size_t(-1);
}
