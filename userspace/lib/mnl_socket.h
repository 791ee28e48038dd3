// SPDX-License-Identifier: GPL-2.0
// RAII libmnl socket with netlink errors mapped to exceptions.
#pragma once

#include <libmnl/libmnl.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <system_error>

struct nlmsghdr;

namespace ila {

// A failed netlink operation: code() is the errno, what() names the
// operation and, where the kernel gave one, its extended-ack message.
class NetlinkError : public std::system_error {
public:
	NetlinkError(int err, const std::string &op, const std::string &kernel_msg = {});
	const std::string &operation() const { return op_; }
	const std::string &kernel_message() const { return kmsg_; }
	// "OP: strerror (kernel: MESSAGE)"
	const char *what() const noexcept override { return full_.c_str(); }

private:
	std::string op_, kmsg_, full_;
};

// The errno and extended-ack message of an NLMSG_ERROR message.
struct NlAck {
	int error = 0; // 0 or a positive errno
	std::uint32_t seq = 0;
	std::string message;
};
NlAck parse_ack(const nlmsghdr *nlh);

// Whether a whole message starts at NLH with LEN bytes left. Unlike
// mnl_nlmsg_ok() (which compares nlmsg_len as a signed int, so a length
// of 2^31 or more passes and mnl_nlmsg_next() jumps far outside the buffer),
// every length is bounded by what is left.
inline bool nlmsg_fits(const nlmsghdr *nlh, int len)
{
	return len >= int(sizeof(nlmsghdr)) && nlh->nlmsg_len >= sizeof(nlmsghdr) &&
	       nlh->nlmsg_len <= unsigned(len);
}

class MnlSocket {
public:
	explicit MnlSocket(int bus);
	MnlSocket(const MnlSocket &) = delete;
	MnlSocket &operator=(const MnlSocket &) = delete;

	std::uint32_t portid() const { return portid_; }
	mnl_socket *get() const { return sock_.get(); }

	// Sends LEN bytes (one or many messages); throws NetlinkError(OP).
	void send(const void *buf, std::size_t len, const std::string &op);
	// Receives one datagram; throws NetlinkError(OP) on failure.
	std::size_t recv(void *buf, std::size_t len, const std::string &op);
	// Best-effort socket buffer sizes (SO_*BUFFORCE when permitted).
	void set_buffers(int sndbuf, int rcvbuf);
	// Joins multicast group GROUP; throws NetlinkError(OP).
	void join(std::uint32_t group, const std::string &op);

private:
	struct Closer {
		void operator()(mnl_socket *s) const { mnl_socket_close(s); }
	};
	std::unique_ptr<mnl_socket, Closer> sock_;
	std::uint32_t portid_ = 0;
};

} // namespace ila
