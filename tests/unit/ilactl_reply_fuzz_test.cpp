// SPDX-License-Identifier: GPL-2.0
// The reply fuzz target (tests/fuzz/reply_fuzz.cpp) run on seed replies and
// on deterministic mutations of them (bytes flipped, lengths changed,
// truncated, concatenated), so every `make check` exercises it without
// libFuzzer; `make fuzz` runs it under libFuzzer with sanitizers.
#include <gtest/gtest.h>

#include <endian.h>
#include <libmnl/libmnl.h>
#include <linux/genetlink.h>
#include <linux/ila_hook.h>
#include <linux/ila_map.h>

#include <cstring>
#include <random>
#include <vector>

#include "../fuzz/reply_fuzz.h"

namespace {

std::vector<std::uint8_t> genl_msg(std::uint8_t cmd, void (*fill)(nlmsghdr *))
{
	std::vector<char> b(1024, 0);
	nlmsghdr *nlh = mnl_nlmsg_put_header(b.data());
	nlh->nlmsg_type = 0x20;
	auto *g = static_cast<genlmsghdr *>(mnl_nlmsg_put_extra_header(nlh, sizeof(genlmsghdr)));
	g->cmd = cmd;
	fill(nlh);
	return {b.begin(), b.begin() + nlh->nlmsg_len};
}

std::vector<std::vector<std::uint8_t>> seeds()
{
	std::vector<std::vector<std::uint8_t>> s;
	s.push_back(genl_msg(ILA_MAP_CMD_GETENTRY, [](nlmsghdr *n) {
		mnl_attr_put_strz(n, ILA_MAP_A_NAME, "hosts");
		mnl_attr_put_u64(n, ILA_MAP_A_IDENT, htobe64(0x11));
		mnl_attr_put_u64(n, ILA_MAP_A_LOCATOR, htobe64(0x20010db800010000ull));
		mnl_attr_put_u8(n, ILA_MAP_A_CSUM_MODE, 1);
		mnl_attr_put_u64(n, ILA_MAP_A_HITS, 7);
	}));
	s.push_back(genl_msg(ILA_MAP_CMD_GETMAP, [](nlmsghdr *n) {
		mnl_attr_put_strz(n, ILA_MAP_A_NAME, "hosts");
		mnl_attr_put_u32(n, ILA_MAP_A_ENTRIES, 2);
		mnl_attr_put_u32(n, ILA_MAP_A_MAX_ENTRIES, 16);
		auto *nest = mnl_attr_nest_start(n, ILA_MAP_A_STATS);
		mnl_attr_put_u64(n, ILA_MAP_STATS_LOOKUPS, 3);
		mnl_attr_put_u64(n, ILA_MAP_STATS_HITS, 2);
		mnl_attr_nest_end(n, nest);
	}));
	s.push_back(genl_msg(ILA_HOOK_CMD_GETHOOK, [](nlmsghdr *n) {
		unsigned char pfx[16] = {0x20, 0x01, 0x0d, 0xb8, 0xff, 0xff};
		mnl_attr_put_strz(n, ILA_HOOK_A_NAME, "h1");
		mnl_attr_put_u8(n, ILA_HOOK_A_POINT, 0);
		mnl_attr_put_u32(n, ILA_HOOK_A_PRIORITY, std::uint32_t(-250));
		mnl_attr_put_u8(n, ILA_HOOK_A_PFX_LEN, 64);
		mnl_attr_put(n, ILA_HOOK_A_SRC_PFX, 16, pfx);
		mnl_attr_put(n, ILA_HOOK_A_DST_PFX, 16, pfx);
		auto *nest = mnl_attr_nest_start(n, ILA_HOOK_A_STATS);
		mnl_attr_put_u64(n, ILA_HOOK_STATS_PACKETS, 9);
		mnl_attr_nest_end(n, nest);
	}));
	// an error with an extended-ack message
	std::vector<char> e(256, 0);
	nlmsghdr *nlh = mnl_nlmsg_put_header(e.data());
	nlh->nlmsg_type = NLMSG_ERROR;
	nlh->nlmsg_flags = NLM_F_ACK_TLVS | NLM_F_CAPPED;
	auto *err = static_cast<nlmsgerr *>(mnl_nlmsg_put_extra_header(nlh, sizeof(nlmsgerr)));
	err->error = -EEXIST;
	err->msg.nlmsg_len = sizeof(nlmsghdr);
	mnl_attr_put_strz(nlh, NLMSGERR_ATTR_MSG, "map exists");
	s.emplace_back(e.begin(), e.begin() + nlh->nlmsg_len);
	return s;
}

TEST(IlactlReplyFuzz, SeedsParse)
{
	for (const auto &s : seeds())
		EXPECT_EQ(LLVMFuzzerTestOneInput(s.data(), s.size()), 0);
}

TEST(IlactlReplyFuzz, DeterministicMutationsNeverCrash)
{
	std::mt19937 rng(12345);
	auto all = seeds();
	for (int round = 0; round < 200000; round++) {
		auto in = all[rng() % all.size()];
		switch (rng() % 5) {
		case 0: // flip bytes
			for (unsigned k = rng() % 4 + 1; k; k--)
				in[rng() % in.size()] ^= std::uint8_t(1u << (rng() % 8));
			break;
		case 1: // any byte to any value, lengths included
			in[rng() % in.size()] = std::uint8_t(rng());
			break;
		case 2: // truncated
			in.resize(rng() % in.size());
			break;
		case 3: { // two messages back to back
			const auto &more = all[rng() % all.size()];
			in.insert(in.end(), more.begin(), more.end());
			in[rng() % in.size()] = std::uint8_t(rng());
			break;
		}
		default: // a 16-bit length field anywhere
			if (in.size() > 2) {
				std::uint16_t v = std::uint16_t(rng());
				std::memcpy(&in[rng() % (in.size() - 1)], &v, 2);
			}
			break;
		}
		LLVMFuzzerTestOneInput(in.data(), in.size());
	}
}

} // namespace
