// SPDX-License-Identifier: GPL-2.0
#include "netlink.h"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <system_error>

#ifndef NETLINK_EXT_ACK
#define NETLINK_EXT_ACK 11
#endif
#ifndef NETLINK_CAP_ACK
#define NETLINK_CAP_ACK 10
#endif

namespace stress {

namespace {

constexpr std::size_t align4(std::size_t n) { return (n + 3) & ~std::size_t(3); }

void put16(Bytes &b, std::uint16_t v)
{
	b.insert(b.end(), reinterpret_cast<const std::uint8_t *>(&v),
		 reinterpret_cast<const std::uint8_t *>(&v) + 2);
}

void put32(Bytes &b, std::uint32_t v)
{
	b.insert(b.end(), reinterpret_cast<const std::uint8_t *>(&v),
		 reinterpret_cast<const std::uint8_t *>(&v) + 4);
}

template <typename T> Attr attr_raw(std::uint16_t type, T v)
{
	Attr a;
	a.type = type;
	a.data.resize(sizeof(T));
	std::memcpy(a.data.data(), &v, sizeof(T));
	return a;
}

} // namespace

Attr attr_u8(std::uint16_t type, std::uint8_t v) { return attr_raw(type, v); }
Attr attr_u32(std::uint16_t type, std::uint32_t v) { return attr_raw(type, v); }
Attr attr_s32(std::uint16_t type, std::int32_t v) { return attr_raw(type, v); }
Attr attr_u64(std::uint16_t type, std::uint64_t v) { return attr_raw(type, v); }

Attr attr_str(std::uint16_t type, const std::string &s)
{
	Attr a;
	a.type = type;
	a.data.assign(s.begin(), s.end());
	a.data.push_back(0);
	return a;
}

Attr attr_flag(std::uint16_t type)
{
	Attr a;
	a.type = type;
	return a;
}

Attr attr_bin(std::uint16_t type, const void *p, std::size_t n)
{
	Attr a;
	a.type = type;
	a.data.assign(static_cast<const std::uint8_t *>(p), static_cast<const std::uint8_t *>(p) + n);
	return a;
}

std::size_t encoded_len(const Request &req)
{
	std::size_t n = NLMSG_HDRLEN + GENL_HDRLEN;
	for (const auto &a : req.attrs)
		n += align4(NLA_HDRLEN + a.data.size());
	return n + req.trailer.size();
}

std::size_t attr_offset(const Request &req, std::size_t i)
{
	std::size_t n = NLMSG_HDRLEN + GENL_HDRLEN;
	for (std::size_t k = 0; k < i && k < req.attrs.size(); k++)
		n += align4(NLA_HDRLEN + req.attrs[k].data.size());
	return n;
}

void encode(const Request &req, std::uint32_t seq, Bytes &out)
{
	const std::size_t start = out.size();
	const std::size_t len = encoded_len(req);
	put32(out, req.nlmsg_len.value_or(std::uint32_t(len)));
	put16(out, req.nl_type);
	put16(out, req.flags);
	put32(out, seq);
	put32(out, 0);
	out.push_back(req.cmd);
	out.push_back(req.version);
	put16(out, req.reserved);
	for (const auto &a : req.attrs) {
		put16(out, a.raw_len.value_or(std::uint16_t(NLA_HDRLEN + a.data.size())));
		put16(out, a.type);
		out.insert(out.end(), a.data.begin(), a.data.end());
		out.resize(align4(out.size()), 0);
	}
	out.insert(out.end(), req.trailer.begin(), req.trailer.end());
	if (out.size() - start != len)
		throw std::logic_error("encode: length mismatch");
	if (req.cut && req.nlmsg_len && *req.nlmsg_len < len)
		out.resize(start + *req.nlmsg_len);
	out.resize(align4(out.size()), 0);
}

bool split_datagram(const std::uint8_t *p, std::size_t n, std::vector<Message> &out,
		    std::string &problem)
{
	std::size_t off = 0;
	while (off < n) {
		if (n - off < NLMSG_HDRLEN) {
			problem = "datagram: " + std::to_string(n - off) + " bytes after the last message";
			return false;
		}
		Message m;
		std::memcpy(&m.hdr, p + off, sizeof(m.hdr));
		if (m.hdr.nlmsg_len < NLMSG_HDRLEN || m.hdr.nlmsg_len > n - off) {
			problem = "datagram: nlmsg_len " + std::to_string(m.hdr.nlmsg_len) + " with " +
				  std::to_string(n - off) + " bytes left";
			return false;
		}
		m.payload.assign(p + off + NLMSG_HDRLEN, p + off + m.hdr.nlmsg_len);
		off += align4(m.hdr.nlmsg_len);
		out.push_back(std::move(m));
	}
	return true;
}

bool parse_attrs(const std::uint8_t *p, std::size_t n, std::vector<AttrView> &out,
		 std::string &problem)
{
	std::size_t off = 0;
	while (off < n) {
		nlattr a;
		if (n - off < sizeof(a)) {
			problem = "attributes: " + std::to_string(n - off) + " stray bytes";
			return false;
		}
		std::memcpy(&a, p + off, sizeof(a));
		if (a.nla_len < NLA_HDRLEN || a.nla_len > n - off) {
			problem = "attribute " + std::to_string(a.nla_type) + ": nla_len " +
				  std::to_string(a.nla_len) + " with " + std::to_string(n - off) +
				  " bytes left";
			return false;
		}
		out.push_back({std::uint16_t(a.nla_type & NLA_TYPE_MASK), p + off + NLA_HDRLEN,
			       std::size_t(a.nla_len - NLA_HDRLEN)});
		off += align4(a.nla_len);
	}
	return true;
}

bool genl_attrs(const Message &m, std::uint8_t &cmd, std::vector<AttrView> &out,
		std::string &problem)
{
	if (m.payload.size() < GENL_HDRLEN) {
		problem = "message shorter than a genl header";
		return false;
	}
	cmd = m.payload[0];
	return parse_attrs(m.payload.data() + GENL_HDRLEN, m.payload.size() - GENL_HDRLEN, out,
			   problem);
}

const AttrView *find_attr(const std::vector<AttrView> &v, std::uint16_t type)
{
	const AttrView *found = nullptr;
	for (const auto &a : v)
		if (a.type == type)
			found = &a;
	return found;
}

namespace {

// The TLVs of an extended ack at OFF of M's payload.
bool parse_ack_tlvs(const Message &m, std::size_t off, std::uint32_t orig_len, Ack &ack,
		    std::string &problem)
{
	if (!(m.hdr.nlmsg_flags & NLM_F_ACK_TLVS))
		return true;
	if (off > m.payload.size()) {
		problem = "ack: TLV flag but no room for TLVs";
		return false;
	}
	std::vector<AttrView> tlvs;
	if (!parse_attrs(m.payload.data() + off, m.payload.size() - off, tlvs, problem)) {
		problem = "ack TLVs: " + problem;
		return false;
	}
	for (const auto &t : tlvs) {
		if (t.type == NLMSGERR_ATTR_MSG) {
			if (!t.len || t.data[t.len - 1] != 0 ||
			    std::memchr(t.data, 0, t.len) != t.data + t.len - 1) {
				problem = "ack: extended ack message not a NUL-terminated string";
				return false;
			}
			ack.msg.assign(reinterpret_cast<const char *>(t.data), t.len - 1);
		} else if (t.type == NLMSGERR_ATTR_OFFS) {
			if (t.len != 4) {
				problem = "ack: NLMSGERR_ATTR_OFFS of " + std::to_string(t.len) + " bytes";
				return false;
			}
			std::memcpy(&ack.offs, t.data, 4);
			ack.has_offs = true;
			if (orig_len && ack.offs >= orig_len) {
				problem = "ack: NLMSGERR_ATTR_OFFS " + std::to_string(ack.offs) +
					  " beyond the request (" + std::to_string(orig_len) + " bytes)";
				return false;
			}
		}
	}
	return true;
}

} // namespace

bool parse_error(const Message &m, Ack &ack, std::string &problem)
{
	nlmsgerr e;
	if (m.payload.size() < sizeof(e)) {
		problem = "NLMSG_ERROR of " + std::to_string(m.payload.size()) + " bytes";
		return false;
	}
	std::memcpy(&e, m.payload.data(), sizeof(e));
	if (e.error > 0 || e.error < -4095) {
		problem = "NLMSG_ERROR with error " + std::to_string(e.error);
		return false;
	}
	ack.error = -e.error;
	ack.orig_seq = e.msg.nlmsg_seq;
	if (e.msg.nlmsg_seq != m.hdr.nlmsg_seq) {
		problem = "NLMSG_ERROR: seq " + std::to_string(m.hdr.nlmsg_seq) +
			  " but the quoted request has " + std::to_string(e.msg.nlmsg_seq);
		return false;
	}
	std::size_t off = sizeof(e);
	const bool capped = m.hdr.nlmsg_flags & NLM_F_CAPPED;
	if (!ack.error && !capped) {
		problem = "ack (error 0) not capped";
		return false;
	}
	if (!capped)
		off += align4(e.msg.nlmsg_len - NLMSG_HDRLEN);
	if (!capped && off > align4(m.payload.size())) {
		problem = "NLMSG_ERROR: quoted request (" + std::to_string(e.msg.nlmsg_len) +
			  " bytes) does not fit";
		return false;
	}
	return parse_ack_tlvs(m, off, e.msg.nlmsg_len, ack, problem);
}

bool parse_done(const Message &m, Ack &ack, std::string &problem)
{
	int err;
	if (m.payload.size() < sizeof(err)) {
		problem = "NLMSG_DONE of " + std::to_string(m.payload.size()) + " bytes";
		return false;
	}
	std::memcpy(&err, m.payload.data(), sizeof(err));
	if (err > 0 || err < -4095) {
		problem = "NLMSG_DONE with error " + std::to_string(err);
		return false;
	}
	ack.error = -err;
	return parse_ack_tlvs(m, sizeof(err), 0, ack, problem);
}

Socket::Socket(bool ext_ack, bool cap_ack) : cap_ack_(cap_ack)
{
	fd_ = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_GENERIC);
	if (fd_ < 0)
		throw std::system_error(errno, std::generic_category(), "socket(NETLINK_GENERIC)");
	sockaddr_nl sa{};
	sa.nl_family = AF_NETLINK;
	socklen_t sl = sizeof(sa);
	int one = 1;
	if (bind(fd_, reinterpret_cast<sockaddr *>(&sa), sizeof(sa)) < 0 ||
	    getsockname(fd_, reinterpret_cast<sockaddr *>(&sa), &sl) < 0 ||
	    (ext_ack && setsockopt(fd_, SOL_NETLINK, NETLINK_EXT_ACK, &one, sizeof(one)) < 0) ||
	    (cap_ack && setsockopt(fd_, SOL_NETLINK, NETLINK_CAP_ACK, &one, sizeof(one)) < 0)) {
		int e = errno;
		close(fd_);
		throw std::system_error(e, std::generic_category(), "netlink socket setup");
	}
	portid_ = sa.nl_pid;
	// room for the answers of a batch (best effort: the kernel clamps it
	// to net.core.rmem_max, doubled)
	int rcvbuf = 1 << 20;
	setsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
}

Socket::~Socket()
{
	if (fd_ >= 0)
		close(fd_);
}

int Socket::send(const Bytes &b)
{
	sockaddr_nl sa{};
	sa.nl_family = AF_NETLINK;
	ssize_t n = sendto(fd_, b.data(), b.size(), 0, reinterpret_cast<sockaddr *>(&sa), sizeof(sa));
	if (n < 0)
		return errno;
	return n == ssize_t(b.size()) ? 0 : EIO;
}

long Socket::recv(Bytes &buf, int timeout_ms)
{
	pollfd p{fd_, POLLIN, 0};
	int r;
	do
		r = poll(&p, 1, timeout_ms);
	while (r < 0 && errno == EINTR);
	if (r < 0)
		return -errno;
	if (r == 0)
		return 0;
	ssize_t n;
	do
		n = ::recv(fd_, buf.data(), buf.size(), MSG_TRUNC | MSG_DONTWAIT);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return errno == EAGAIN ? recv(buf, timeout_ms) : -errno;
	if (std::size_t(n) > buf.size())
		return -EMSGSIZE;
	return n;
}

int Socket::join(std::uint32_t group)
{
	return setsockopt(fd_, SOL_NETLINK, NETLINK_ADD_MEMBERSHIP, &group, sizeof(group)) < 0 ? errno
											       : 0;
}

bool resolve_family(Socket &sock, const std::string &name, Family &f, std::string &problem)
{
	Request r;
	r.nl_type = GENL_ID_CTRL;
	r.cmd = CTRL_CMD_GETFAMILY;
	r.attrs.push_back(attr_str(CTRL_ATTR_FAMILY_NAME, name));
	const std::uint32_t seq = sock.next_seq();
	Bytes out;
	encode(r, seq, out);
	if (int e = sock.send(out)) {
		problem = "resolve " + name + ": send: " + std::strerror(e);
		return false;
	}
	Bytes buf(65536);
	for (;;) {
		long n = sock.recv(buf, 60000);
		if (n <= 0) {
			problem = "resolve " + name + ": " + (n ? std::strerror(int(-n)) : "no answer");
			return false;
		}
		std::vector<Message> msgs;
		if (!split_datagram(buf.data(), std::size_t(n), msgs, problem))
			return false;
		for (const auto &m : msgs) {
			if (m.hdr.nlmsg_seq != seq)
				continue;
			if (m.hdr.nlmsg_type == NLMSG_ERROR) {
				Ack a;
				if (!parse_error(m, a, problem))
					return false;
				if (a.error) {
					problem = "resolve " + name + ": " + std::strerror(a.error);
					return false;
				}
				return f.id != 0;
			}
			std::uint8_t cmd;
			std::vector<AttrView> at;
			if (!genl_attrs(m, cmd, at, problem))
				return false;
			if (auto *id = find_attr(at, CTRL_ATTR_FAMILY_ID); id && id->len == 2)
				std::memcpy(&f.id, id->data, 2);
			if (auto *v = find_attr(at, CTRL_ATTR_VERSION); v && v->len == 4)
				std::memcpy(&f.version, v->data, 4);
			if (auto *g = find_attr(at, CTRL_ATTR_MCAST_GROUPS)) {
				std::vector<AttrView> grps;
				if (!parse_attrs(g->data, g->len, grps, problem))
					return false;
				for (const auto &grp : grps) {
					std::vector<AttrView> ga;
					if (!parse_attrs(grp.data, grp.len, ga, problem))
						return false;
					auto *gn = find_attr(ga, CTRL_ATTR_MCAST_GRP_NAME);
					auto *gi = find_attr(ga, CTRL_ATTR_MCAST_GRP_ID);
					if (gn && gi && gi->len == 4 &&
					    std::string(reinterpret_cast<const char *>(gn->data)) == "events")
						std::memcpy(&f.events_group, gi->data, 4);
				}
			}
		}
	}
}

std::string hex(const std::uint8_t *p, std::size_t n, std::size_t max)
{
	std::string s;
	char b[4];
	for (std::size_t i = 0; i < n && i < max; i++) {
		std::snprintf(b, sizeof(b), "%02x", p[i]);
		s += b;
	}
	if (n > max)
		s += "...";
	return s;
}

} // namespace stress
