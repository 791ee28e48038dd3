// SPDX-License-Identifier: GPL-2.0
// ilactl: the netlink reply parser against crafted, malformed replies.
#include <gtest/gtest.h>

#include <linux/netlink.h>

#include <climits>
#include <cstring>
#include <vector>

#include "mnl_socket.h"

namespace {

// An NLMSG_ERROR message: error, echoed request header of INNER_LEN
// (payload not included unless CAPPED is off and EXTRA bytes follow), then
// the TLVs in TLV (already formatted).
std::vector<char> error_msg(int error, std::uint16_t flags, std::uint32_t inner_len,
			    const std::vector<char> &between, const std::vector<char> &tlv)
{
	std::vector<char> buf(NLMSG_HDRLEN + sizeof(nlmsgerr));
	auto *err = reinterpret_cast<nlmsgerr *>(buf.data() + NLMSG_HDRLEN);
	err->error = error;
	err->msg.nlmsg_len = inner_len;
	buf.insert(buf.end(), between.begin(), between.end());
	buf.insert(buf.end(), tlv.begin(), tlv.end());
	auto *nlh = reinterpret_cast<nlmsghdr *>(buf.data());
	nlh->nlmsg_len = std::uint32_t(buf.size());
	nlh->nlmsg_type = NLMSG_ERROR;
	nlh->nlmsg_flags = flags;
	nlh->nlmsg_seq = 7;
	return buf;
}

std::vector<char> msg_tlv(const char *text)
{
	std::size_t n = std::strlen(text) + 1, len = NLA_HDRLEN + n;
	std::vector<char> v(NLA_ALIGN(len));
	auto *a = reinterpret_cast<nlattr *>(v.data());
	a->nla_len = std::uint16_t(len);
	a->nla_type = NLMSGERR_ATTR_MSG;
	std::memcpy(v.data() + NLA_HDRLEN, text, n);
	return v;
}

const nlmsghdr *hdr(const std::vector<char> &b) { return reinterpret_cast<const nlmsghdr *>(b.data()); }

TEST(IlactlNetlink, ExtendedAckMessage)
{
	auto b = error_msg(-EEXIST, NLM_F_ACK_TLVS | NLM_F_CAPPED, 20, {}, msg_tlv("map exists"));
	auto ack = ila::parse_ack(hdr(b));
	EXPECT_EQ(ack.error, EEXIST);
	EXPECT_EQ(ack.message, "map exists");
	EXPECT_EQ(ack.seq, 7u);
}

TEST(IlactlNetlink, UncappedEchoSkipped)
{
	std::vector<char> echoed(8, 'x'); // request payload echoed back
	auto b = error_msg(-ENOENT, NLM_F_ACK_TLVS, sizeof(nlmsghdr) + 8, echoed, msg_tlv("no such map"));
	auto ack = ila::parse_ack(hdr(b));
	EXPECT_EQ(ack.error, ENOENT);
	EXPECT_EQ(ack.message, "no such map");
}

TEST(IlactlNetlink, EchoLengthBeyondTheMessageIsNotFollowed)
{
	for (std::uint32_t inner : {0u, 3u, 0xffffffffu, 0x7fffffffu, 4096u}) {
		auto b = error_msg(-EINVAL, NLM_F_ACK_TLVS, inner, {}, msg_tlv("x"));
		auto ack = ila::parse_ack(hdr(b));
		EXPECT_EQ(ack.error, EINVAL) << inner;
		// no message read from outside the buffer (ASan would see it too)
		EXPECT_TRUE(ack.message.empty() || ack.message == "x") << inner;
	}
}

TEST(IlactlNetlink, OddErrorValues)
{
	auto b = error_msg(INT_MIN, 0, 20, {}, {});
	EXPECT_EQ(ila::parse_ack(hdr(b)).error, EPROTO);
	b = error_msg(5, 0, 20, {}, {});
	EXPECT_EQ(ila::parse_ack(hdr(b)).error, EPROTO);
	b = error_msg(0, 0, 20, {}, {});
	EXPECT_EQ(ila::parse_ack(hdr(b)).error, 0);
}

TEST(IlactlNetlink, TruncatedError)
{
	std::vector<char> b(NLMSG_HDRLEN + 4);
	auto *nlh = reinterpret_cast<nlmsghdr *>(b.data());
	nlh->nlmsg_len = std::uint32_t(b.size());
	nlh->nlmsg_type = NLMSG_ERROR;
	auto ack = ila::parse_ack(nlh);
	EXPECT_EQ(ack.error, EBADMSG);
}

TEST(IlactlNetlink, MalformedTlvsIgnored)
{
	std::vector<char> bad(8, 0);
	reinterpret_cast<nlattr *>(bad.data())->nla_len = 200; // longer than the message
	reinterpret_cast<nlattr *>(bad.data())->nla_type = NLMSGERR_ATTR_MSG;
	auto b = error_msg(-EPERM, NLM_F_ACK_TLVS | NLM_F_CAPPED, 20, {}, bad);
	auto ack = ila::parse_ack(hdr(b));
	EXPECT_EQ(ack.error, EPERM);
	EXPECT_TRUE(ack.message.empty());
}

} // namespace
