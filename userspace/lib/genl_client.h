// SPDX-License-Identifier: GPL-2.0
// A generic netlink client for one family: resolves it (naming the module
// that provides it when it is missing), builds requests, runs a request and
// reads its answer (acks, replies, dumps). Used by the ILA_MAP and ILA_HOOK
// clients; attribute parsing helpers for their replies.
#pragma once

#include <libmnl/libmnl.h>
#include <linux/genetlink.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "mnl_socket.h"

namespace ila {

class GenlClient {
public:
	// Opens a socket in the current netns and resolves FAMILY (at least
	// version MIN_VERSION); ENOENT names MODULE.
	GenlClient(std::string family, std::string module, std::uint32_t min_version);

	// Starts a request for CMD in the request buffer; returns its header.
	nlmsghdr *start(std::uint8_t cmd, std::uint16_t flags);
	// Puts a request header at BUF (for batches).
	nlmsghdr *put(char *buf, std::uint8_t cmd, std::uint16_t flags, std::uint32_t seq) const;
	// Sends the request buffer and processes the answer: data messages go
	// to FN; ends at the ack or DONE; throws NetlinkError(OP) on an error.
	// Returns true if a dump was marked interrupted (NLM_F_DUMP_INTR).
	bool transact(const std::string &op, const std::function<void(const nlmsghdr *)> &fn);
	bool transact(const std::string &op) { return transact(op, [](const nlmsghdr *) {}); }

	std::uint16_t family_id() const { return family_; }
	// The id of the family's multicast group NAME; NetlinkError(ENOENT)
	// when the kernel's family has none of that name (an older module).
	std::uint32_t mcast_group(const std::string &name) const;
	std::uint32_t family_version() const { return version_; }
	MnlSocket &socket() { return sock_; }
	std::uint32_t next_seq() { return ++seq_; }
	char *buf() { return buf_.data(); }

private:
	MnlSocket sock_;
	std::string name_;
	std::uint16_t family_ = 0;
	std::uint32_t version_ = 0;
	std::vector<std::pair<std::string, std::uint32_t>> groups_;
	std::uint32_t seq_ = 0;
	std::vector<char> buf_;
	std::vector<char> rxbuf_;
};

// Attributes of a message, indexed by type (nullptr when absent).
template <std::size_t N> struct Attrs {
	const nlattr *a[N + 1] = {};
	const nlattr *operator[](std::size_t i) const { return i <= N ? a[i] : nullptr; }
};

template <std::size_t N> Attrs<N> parse_attrs(const nlattr *first, const void *tail)
{
	Attrs<N> out;
	for (auto *attr = first;
	     mnl_attr_ok(attr, int(static_cast<const char *>(tail) - reinterpret_cast<const char *>(attr)));
	     attr = mnl_attr_next(attr)) {
		unsigned t = mnl_attr_get_type(attr);
		if (t <= N)
			out.a[t] = attr;
	}
	return out;
}

template <std::size_t N> Attrs<N> genl_attrs(const nlmsghdr *nlh)
{
	return parse_attrs<N>(static_cast<const nlattr *>(
				      mnl_nlmsg_get_payload_offset(nlh, sizeof(genlmsghdr))),
			      mnl_nlmsg_get_payload_tail(nlh));
}

template <std::size_t N> Attrs<N> nested_attrs(const nlattr *nest)
{
	return parse_attrs<N>(static_cast<const nlattr *>(mnl_attr_get_payload(nest)),
			      static_cast<const char *>(mnl_attr_get_payload(nest)) +
				      mnl_attr_get_payload_len(nest));
}

// Validated getters: 0 / empty when the attribute is absent or malformed.
std::uint64_t get_u64(const nlattr *a);
std::uint32_t get_u32(const nlattr *a);
std::uint8_t get_u8(const nlattr *a);
std::string get_str(const nlattr *a);

} // namespace ila
