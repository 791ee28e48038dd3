// SPDX-License-Identifier: GPL-2.0
#include "mnl_socket.h"

#include <linux/netlink.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstdint>
#include <cstring>

namespace ila {

NetlinkError::NetlinkError(int err, const std::string &op, const std::string &kernel_msg)
	: std::system_error(err, std::generic_category(), op), op_(op), kmsg_(kernel_msg),
	  full_(op + ": " + std::strerror(err) + (kernel_msg.empty() ? "" : " (kernel: " + kernel_msg + ")"))
{
}

NlAck parse_ack(const nlmsghdr *nlh)
{
	NlAck ack;
	ack.seq = nlh->nlmsg_seq;
	if (nlh->nlmsg_len < NLMSG_HDRLEN + sizeof(nlmsgerr)) {
		ack.error = EBADMSG;
		ack.message = "truncated netlink error message";
		return ack;
	}
	const auto *err = static_cast<const nlmsgerr *>(mnl_nlmsg_get_payload(nlh));
	// an error is 0 or a negative errno; anything else is not a reply we
	// understand (and -INT_MIN does not exist)
	if (err->error > 0 || err->error == INT32_MIN)
		ack.error = EPROTO;
	else
		ack.error = -err->error;
	if (!(nlh->nlmsg_flags & NLM_F_ACK_TLVS))
		return ack;
	// the TLVs follow the echoed request (all of it unless capped): every
	// offset is checked against the length of this message
	const std::size_t payload = nlh->nlmsg_len - NLMSG_HDRLEN;
	std::size_t off = sizeof(nlmsgerr);
	if (!(nlh->nlmsg_flags & NLM_F_CAPPED)) {
		if (err->msg.nlmsg_len < sizeof(nlmsghdr) ||
		    err->msg.nlmsg_len - sizeof(nlmsghdr) > payload - off)
			return ack;
		off += NLMSG_ALIGN(err->msg.nlmsg_len) - sizeof(nlmsghdr);
	}
	if (off >= payload)
		return ack;
	int missing = -1;
	const char *tail = static_cast<const char *>(mnl_nlmsg_get_payload_tail(nlh));
	for (auto *attr = static_cast<const nlattr *>(mnl_nlmsg_get_payload_offset(nlh, off));
	     mnl_attr_ok(attr, int(tail - reinterpret_cast<const char *>(attr)));
	     attr = mnl_attr_next(attr)) {
		switch (mnl_attr_get_type(attr)) {
		case NLMSGERR_ATTR_MSG:
			if (mnl_attr_validate(attr, MNL_TYPE_NUL_STRING) == 0)
				ack.message = mnl_attr_get_str(attr);
			break;
		case NLMSGERR_ATTR_MISS_TYPE:
			if (mnl_attr_validate(attr, MNL_TYPE_U32) == 0)
				missing = int(mnl_attr_get_u32(attr));
			break;
		default:
			break;
		}
	}
	if (ack.message.empty() && missing >= 0)
		ack.message = "missing attribute " + std::to_string(missing);
	return ack;
}

MnlSocket::MnlSocket(int bus) : sock_(mnl_socket_open(bus))
{
	if (!sock_)
		throw NetlinkError(errno, "open netlink socket");
	if (mnl_socket_bind(sock_.get(), 0, MNL_SOCKET_AUTOPID) < 0)
		throw NetlinkError(errno, "bind netlink socket");
	portid_ = mnl_socket_get_portid(sock_.get());
	int one = 1;
	// extended acks and capped acks: errors name the reason, stay small
	mnl_socket_setsockopt(sock_.get(), NETLINK_EXT_ACK, &one, sizeof(one));
	mnl_socket_setsockopt(sock_.get(), NETLINK_CAP_ACK, &one, sizeof(one));
}

void MnlSocket::send(const void *buf, std::size_t len, const std::string &op)
{
	ssize_t n = mnl_socket_sendto(sock_.get(), buf, len);
	if (n < 0)
		throw NetlinkError(errno, op);
	if (std::size_t(n) != len)
		throw NetlinkError(EIO, op + ": short send");
}

std::size_t MnlSocket::recv(void *buf, std::size_t len, const std::string &op)
{
	for (;;) {
		ssize_t n = mnl_socket_recvfrom(sock_.get(), buf, len);
		if (n >= 0)
			return std::size_t(n);
		if (errno == EINTR)
			continue;
		throw NetlinkError(errno, op);
	}
}

void MnlSocket::join(std::uint32_t group, const std::string &op)
{
	int g = int(group);
	if (mnl_socket_setsockopt(sock_.get(), NETLINK_ADD_MEMBERSHIP, &g, sizeof(g)) < 0)
		throw NetlinkError(errno, op);
}

void MnlSocket::set_buffers(int sndbuf, int rcvbuf)
{
	int fd = mnl_socket_get_fd(sock_.get());
	if (sndbuf > 0 && setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &sndbuf, sizeof(sndbuf)) < 0)
		setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof(sndbuf));
	if (rcvbuf > 0 && setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf, sizeof(rcvbuf)) < 0)
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
}

} // namespace ila
