// SPDX-License-Identifier: GPL-2.0
// Raw generic netlink for the stress generator: requests are built byte by
// byte (so that any field can be wrong), sent on plain AF_NETLINK sockets,
// and every message the kernel sends back is checked for well-formedness
// before anyone looks at its content.
#pragma once

#include <linux/genetlink.h>
#include <linux/netlink.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace stress {

using Bytes = std::vector<std::uint8_t>;

// One attribute as it goes on the wire.
struct Attr {
	std::uint16_t type = 0; // with NLA_F_NESTED / NLA_F_NET_BYTEORDER as sent
	Bytes data;
	// nla_len written when set (malformed lengths); else NLA_HDRLEN + data
	std::optional<std::uint16_t> raw_len;
};

Attr attr_u8(std::uint16_t type, std::uint8_t v);
Attr attr_u32(std::uint16_t type, std::uint32_t v);
Attr attr_s32(std::uint16_t type, std::int32_t v);
// the 8 bytes of V as they are in memory (identifiers and locators are
// network byte order: pass htobe64(x))
Attr attr_u64(std::uint16_t type, std::uint64_t v);
Attr attr_str(std::uint16_t type, const std::string &s); // with the NUL
Attr attr_flag(std::uint16_t type);
Attr attr_bin(std::uint16_t type, const void *p, std::size_t n);

// One generic netlink request.
struct Request {
	std::uint16_t nl_type = 0; // family id, or a control / unknown type
	std::uint16_t flags = NLM_F_REQUEST | NLM_F_ACK;
	std::uint8_t cmd = 0;
	std::uint8_t version = 1;
	std::uint16_t reserved = 0;
	std::vector<Attr> attrs;
	Bytes trailer; // raw bytes after the attributes, counted in nlmsg_len
	// nlmsg_len written when set (truncated or cut messages); the bytes
	// sent stay those of the full message unless CUT: then only nlmsg_len
	// of them (a datagram that ends where the message says it does)
	std::optional<std::uint32_t> nlmsg_len;
	bool cut = false;
};

// Appends REQ with sequence number SEQ to OUT (aligned for the next one).
void encode(const Request &req, std::uint32_t seq, Bytes &out);
// The length REQ's message has when encoded (without nlmsg_len override).
std::size_t encoded_len(const Request &req);
// Byte offset of attribute I from the start of REQ's message.
std::size_t attr_offset(const Request &req, std::size_t i);

// A message received from the kernel (one of a datagram's).
struct Message {
	nlmsghdr hdr{};
	Bytes payload; // after the nlmsghdr, nlmsg_len - 16 bytes
};

// Splits a datagram; false (and PROBLEM) when a length is inconsistent.
bool split_datagram(const std::uint8_t *p, std::size_t n, std::vector<Message> &out,
		    std::string &problem);

// NLMSG_ERROR / NLMSG_DONE content.
struct Ack {
	int error = 0;		 // 0 or a positive errno
	std::uint32_t orig_seq = 0; // NLMSG_ERROR: the request's header copy
	std::string msg;	 // extended ack message
	bool has_offs = false;
	std::uint32_t offs = 0;
};
// Checks the layout (capped or not, TLVs); false and PROBLEM when broken.
bool parse_error(const Message &m, Ack &ack, std::string &problem);
bool parse_done(const Message &m, Ack &ack, std::string &problem);

// Attributes of a generic netlink message / nested attribute: every one
// must be well-formed and they must fill the payload exactly.
struct AttrView {
	std::uint16_t type; // without flag bits
	const std::uint8_t *data;
	std::size_t len;
};
bool parse_attrs(const std::uint8_t *p, std::size_t n, std::vector<AttrView> &out,
		 std::string &problem);
bool genl_attrs(const Message &m, std::uint8_t &cmd, std::vector<AttrView> &out,
		std::string &problem);
const AttrView *find_attr(const std::vector<AttrView> &v, std::uint16_t type);

// A generic netlink socket of the calling thread's netns and credentials.
class Socket {
public:
	Socket(bool ext_ack, bool cap_ack);
	Socket(const Socket &) = delete;
	Socket &operator=(const Socket &) = delete;
	~Socket();

	int fd() const { return fd_; }
	std::uint32_t portid() const { return portid_; }
	std::uint32_t next_seq() { return ++seq_; }
	bool cap_ack() const { return cap_ack_; }

	// 0 or the errno of sendto()
	int send(const Bytes &b);
	// One datagram into BUF: its length; 0 on timeout; -errno on error.
	long recv(Bytes &buf, int timeout_ms);
	// NETLINK_ADD_MEMBERSHIP: 0 or the errno
	int join(std::uint32_t group);

private:
	int fd_ = -1;
	std::uint32_t portid_ = 0;
	std::uint32_t seq_ = 0;
	bool cap_ack_ = false;
};

// What CTRL_CMD_GETFAMILY tells about a family.
struct Family {
	std::uint16_t id = 0;
	std::uint32_t version = 0;
	std::uint32_t events_group = 0; // 0: none
};
// Resolves NAME on SOCK; false and PROBLEM when it is not there.
bool resolve_family(Socket &sock, const std::string &name, Family &f, std::string &problem);

std::string hex(const std::uint8_t *p, std::size_t n, std::size_t max = 96);

} // namespace stress
