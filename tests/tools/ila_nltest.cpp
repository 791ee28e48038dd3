// SPDX-License-Identifier: GPL-2.0
// ila_nltest - TEST TOOL, not for production use: sends malformed ILA_MAP
// generic netlink requests (wrong attribute types, missing, oversized,
// unknown and reply-only attributes, bad header fields, truncated messages)
// naming the map MAP, and checks that the kernel refuses every one of them.
// Used by tests/bats/ila_map.bats, which also checks that MAP is unchanged.
//
// Usage: ila_nltest MAP          exit 0: every request refused; 1: not
#include <endian.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>

#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include <linux/ila_map.h>

#include "ila_map_client.h"
#include "ila_notation.h"

namespace {

struct Case {
	const char *name;
	std::function<void(nlmsghdr *, genlmsghdr *)> build;
};

// A u32 where a u64 is expected, and similar raw attributes.
void put_raw(nlmsghdr *nlh, std::uint16_t type, const void *data, std::size_t len)
{
	mnl_attr_put(nlh, type, len, data);
}

} // namespace

int main(int argc, char **argv)
{
	if (argc != 2 || !ila::valid_map_name(argv[1])) {
		std::fprintf(stderr, "usage: ila_nltest MAP   (test tool: sends malformed requests)\n");
		return 2;
	}
	const std::string map = argv[1];
	const char *m = map.c_str();
	const std::uint64_t id = htobe64(0xdead), loc = htobe64(0x20010db8ffff0000ULL);

	// a well-formed "map add MAP 0:0:0:dead 2001:db8:ffff:0" that cases spoil
	auto good_add = [&](nlmsghdr *n, genlmsghdr *g) {
		g->cmd = ILA_MAP_CMD_NEWENTRY;
		mnl_attr_put_strz(n, ILA_MAP_A_NAME, m);
		mnl_attr_put_u64(n, ILA_MAP_A_IDENT, id);
		mnl_attr_put_u64(n, ILA_MAP_A_LOCATOR, loc);
	};

	std::vector<Case> cases = {
		{"ident as u32 (wrong type)",
		 [&](nlmsghdr *n, genlmsghdr *g) {
			 g->cmd = ILA_MAP_CMD_NEWENTRY;
			 mnl_attr_put_strz(n, ILA_MAP_A_NAME, m);
			 mnl_attr_put_u32(n, ILA_MAP_A_IDENT, 0xdead);
			 mnl_attr_put_u64(n, ILA_MAP_A_LOCATOR, loc);
		 }},
		{"locator of 16 bytes (oversized)",
		 [&](nlmsghdr *n, genlmsghdr *g) {
			 g->cmd = ILA_MAP_CMD_NEWENTRY;
			 mnl_attr_put_strz(n, ILA_MAP_A_NAME, m);
			 mnl_attr_put_u64(n, ILA_MAP_A_IDENT, id);
			 unsigned char big[16] = {0x20, 0x01};
			 put_raw(n, ILA_MAP_A_LOCATOR, big, sizeof(big));
		 }},
		{"missing locator",
		 [&](nlmsghdr *n, genlmsghdr *g) {
			 g->cmd = ILA_MAP_CMD_NEWENTRY;
			 mnl_attr_put_strz(n, ILA_MAP_A_NAME, m);
			 mnl_attr_put_u64(n, ILA_MAP_A_IDENT, id);
		 }},
		{"missing identifier",
		 [&](nlmsghdr *n, genlmsghdr *g) {
			 g->cmd = ILA_MAP_CMD_NEWENTRY;
			 mnl_attr_put_strz(n, ILA_MAP_A_NAME, m);
			 mnl_attr_put_u64(n, ILA_MAP_A_LOCATOR, loc);
		 }},
		{"missing map name",
		 [&](nlmsghdr *n, genlmsghdr *g) {
			 g->cmd = ILA_MAP_CMD_NEWENTRY;
			 mnl_attr_put_u64(n, ILA_MAP_A_IDENT, id);
			 mnl_attr_put_u64(n, ILA_MAP_A_LOCATOR, loc);
		 }},
		{"map name of 200 bytes (oversized)",
		 [&](nlmsghdr *n, genlmsghdr *g) {
			 g->cmd = ILA_MAP_CMD_NEWENTRY;
			 std::string longname = map + std::string(200, 'x');
			 mnl_attr_put_strz(n, ILA_MAP_A_NAME, longname.c_str());
			 mnl_attr_put_u64(n, ILA_MAP_A_IDENT, id);
			 mnl_attr_put_u64(n, ILA_MAP_A_LOCATOR, loc);
		 }},
		{"map name without NUL",
		 [&](nlmsghdr *n, genlmsghdr *g) {
			 g->cmd = ILA_MAP_CMD_NEWENTRY;
			 put_raw(n, ILA_MAP_A_NAME, m, map.size());
			 mnl_attr_put_u64(n, ILA_MAP_A_IDENT, id);
			 mnl_attr_put_u64(n, ILA_MAP_A_LOCATOR, loc);
		 }},
		{"csum mode 9 (out of range)",
		 [&](nlmsghdr *n, genlmsghdr *g) {
			 good_add(n, g);
			 mnl_attr_put_u8(n, ILA_MAP_A_CSUM_MODE, 9);
		 }},
		{"csum mode as u32 (wrong type)",
		 [&](nlmsghdr *n, genlmsghdr *g) {
			 good_add(n, g);
			 mnl_attr_put_u32(n, ILA_MAP_A_CSUM_MODE, 1);
		 }},
		{"unknown attribute type",
		 [&](nlmsghdr *n, genlmsghdr *g) {
			 good_add(n, g);
			 mnl_attr_put_u32(n, ILA_MAP_A_MAX + 7, 1);
		 }},
		{"reply-only attribute (entries) in a request",
		 [&](nlmsghdr *n, genlmsghdr *g) {
			 good_add(n, g);
			 mnl_attr_put_u32(n, ILA_MAP_A_ENTRIES, 1);
		 }},
		{"attribute length beyond the message (truncated)",
		 [&](nlmsghdr *n, genlmsghdr *g) {
			 g->cmd = ILA_MAP_CMD_NEWENTRY;
			 mnl_attr_put_strz(n, ILA_MAP_A_NAME, m);
			 mnl_attr_put_u64(n, ILA_MAP_A_LOCATOR, loc);
			 auto *a = static_cast<nlattr *>(mnl_nlmsg_get_payload_tail(n));
			 mnl_attr_put_u64(n, ILA_MAP_A_IDENT, id);
			 a->nla_len = 200; // claims more than was sent
		 }},
		{"trailing garbage after the attributes",
		 [&](nlmsghdr *n, genlmsghdr *g) {
			 good_add(n, g);
			 auto *tail = static_cast<unsigned char *>(mnl_nlmsg_get_payload_tail(n));
			 std::memset(tail, 0xab, 2);
			 n->nlmsg_len += 2;
		 }},
		{"reserved genl header field set",
		 [&](nlmsghdr *n, genlmsghdr *g) {
			 good_add(n, g);
			 g->reserved = 0x55;
		 }},
		{"reserved nlmsg flag (NLM_F_REPLACE) set",
		 [&](nlmsghdr *n, genlmsghdr *g) {
			 good_add(n, g);
			 n->nlmsg_flags |= NLM_F_REPLACE;
		 }},
		{"NLM_F_CREATE | NLM_F_EXCL on a new entry (rtnetlink's flags)",
		 [&](nlmsghdr *n, genlmsghdr *g) {
			 good_add(n, g);
			 n->nlmsg_flags |= NLM_F_CREATE | NLM_F_EXCL;
		 }},
		{"NLM_F_CREATE on a new map",
		 [&](nlmsghdr *n, genlmsghdr *g) {
			 g->cmd = ILA_MAP_CMD_NEWMAP;
			 mnl_attr_put_strz(n, ILA_MAP_A_NAME, "nltest-create");
			 n->nlmsg_flags |= NLM_F_CREATE;
		 }},
		{"replace flag with a payload",
		 [&](nlmsghdr *n, genlmsghdr *g) {
			 g->cmd = ILA_MAP_CMD_NEWENTRY;
			 mnl_attr_put_strz(n, ILA_MAP_A_NAME, m);
			 mnl_attr_put_u64(n, ILA_MAP_A_IDENT, htobe64(1));
			 mnl_attr_put_u64(n, ILA_MAP_A_LOCATOR, loc);
			 mnl_attr_put_u32(n, ILA_MAP_A_REPLACE, 1);
		 }},
		{"unknown command 200",
		 [&](nlmsghdr *n, genlmsghdr *g) {
			 g->cmd = 200;
			 mnl_attr_put_strz(n, ILA_MAP_A_NAME, m);
		 }},
		{"delete with identifier as string (wrong type)",
		 [&](nlmsghdr *n, genlmsghdr *g) {
			 g->cmd = ILA_MAP_CMD_DELENTRY;
			 mnl_attr_put_strz(n, ILA_MAP_A_NAME, m);
			 mnl_attr_put_strz(n, ILA_MAP_A_IDENT, "0:0:0:0:1");
		 }},
		{"flush with map name as u64 without NUL (wrong type)",
		 [&](nlmsghdr *n, genlmsghdr *g) {
			 g->cmd = ILA_MAP_CMD_FLUSH;
			 mnl_attr_put_u64(n, ILA_MAP_A_NAME, 0x4141414141414141ULL);
		 }},
		{"destroy with empty map name",
		 [&](nlmsghdr *n, genlmsghdr *g) {
			 g->cmd = ILA_MAP_CMD_DELMAP;
			 mnl_attr_put_strz(n, ILA_MAP_A_NAME, "");
		 }},
		{"create with max-entries 0 (out of range)",
		 [&](nlmsghdr *n, genlmsghdr *g) {
			 g->cmd = ILA_MAP_CMD_NEWMAP;
			 mnl_attr_put_strz(n, ILA_MAP_A_NAME, "nltest-new");
			 mnl_attr_put_u32(n, ILA_MAP_A_MAX_ENTRIES, 0);
		 }},
		{"create with an invalid map name",
		 [&](nlmsghdr *n, genlmsghdr *g) {
			 g->cmd = ILA_MAP_CMD_NEWMAP;
			 mnl_attr_put_strz(n, ILA_MAP_A_NAME, "bad name/");
		 }},
	};

	int failed = 0;
	try {
		ila::IlaMapClient client;
		std::vector<char> buf(MNL_SOCKET_BUFFER_SIZE), rx(65536);
		for (const auto &c : cases) {
			std::memset(buf.data(), 0, buf.size());
			nlmsghdr *nlh = mnl_nlmsg_put_header(buf.data());
			nlh->nlmsg_type = client.family_id();
			nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
			nlh->nlmsg_seq = client.next_seq();
			auto *g = static_cast<genlmsghdr *>(mnl_nlmsg_put_extra_header(nlh, sizeof(genlmsghdr)));
			g->version = ILA_MAP_GENL_VERSION;
			c.build(nlh, g);
			client.socket().send(buf.data(), nlh->nlmsg_len, c.name);
			// wait for the ack/error of this request
			ila::NlAck ack;
			bool done = false;
			while (!done) {
				int len = int(client.socket().recv(rx.data(), rx.size(), c.name));
				for (auto *r = reinterpret_cast<const nlmsghdr *>(rx.data());
				     ila::nlmsg_fits(r, len); r = mnl_nlmsg_next(r, &len)) {
					if (r->nlmsg_seq == nlh->nlmsg_seq && r->nlmsg_type == NLMSG_ERROR) {
						ack = ila::parse_ack(r);
						done = true;
					}
				}
			}
			if (ack.error) {
				std::printf("ok   %-48s refused: %s%s%s\n", c.name, std::strerror(ack.error),
					    ack.message.empty() ? "" : " - ", ack.message.c_str());
			} else {
				std::printf("FAIL %-48s accepted\n", c.name);
				failed++;
			}
		}
	} catch (const std::exception &e) {
		std::fprintf(stderr, "ila_nltest: %s\n", e.what());
		return 1;
	}
	std::printf("%zu malformed requests, %d accepted\n", cases.size(), failed);
	return failed ? 1 : 0;
}
