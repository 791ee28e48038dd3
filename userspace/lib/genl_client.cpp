// SPDX-License-Identifier: GPL-2.0
#include "genl_client.h"

#include <linux/netlink.h>

#include <cerrno>
#include <cstring>

namespace ila {

namespace {
constexpr std::size_t kRxSize = 64 * 1024;
}

std::uint64_t get_u64(const nlattr *a)
{
	return a && mnl_attr_validate(a, MNL_TYPE_U64) == 0 ? mnl_attr_get_u64(a) : 0;
}

std::uint32_t get_u32(const nlattr *a)
{
	return a && mnl_attr_validate(a, MNL_TYPE_U32) == 0 ? mnl_attr_get_u32(a) : 0;
}

std::uint8_t get_u8(const nlattr *a)
{
	return a && mnl_attr_validate(a, MNL_TYPE_U8) == 0 ? mnl_attr_get_u8(a) : 0;
}

std::string get_str(const nlattr *a)
{
	return a && mnl_attr_validate(a, MNL_TYPE_NUL_STRING) == 0 ? mnl_attr_get_str(a) : "";
}

GenlClient::GenlClient(std::string family, std::string module, std::uint32_t min_version)
	: sock_(NETLINK_GENERIC), name_(std::move(family)), buf_(MNL_SOCKET_BUFFER_SIZE),
	  rxbuf_(kRxSize)
{
	const std::string op = "resolve generic netlink family " + name_;
	nlmsghdr *nlh = mnl_nlmsg_put_header(buf_.data());
	nlh->nlmsg_type = GENL_ID_CTRL;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
	nlh->nlmsg_seq = next_seq();
	auto *g = static_cast<genlmsghdr *>(mnl_nlmsg_put_extra_header(nlh, sizeof(genlmsghdr)));
	g->cmd = CTRL_CMD_GETFAMILY;
	g->version = 1;
	mnl_attr_put_strz(nlh, CTRL_ATTR_FAMILY_NAME, name_.c_str());
	try {
		transact(op, [&](const nlmsghdr *m) {
			auto at = genl_attrs<CTRL_ATTR_MAX>(m);
			if (at[CTRL_ATTR_FAMILY_ID] &&
			    mnl_attr_validate(at[CTRL_ATTR_FAMILY_ID], MNL_TYPE_U16) == 0)
				family_ = mnl_attr_get_u16(at[CTRL_ATTR_FAMILY_ID]);
			version_ = get_u32(at[CTRL_ATTR_VERSION]);
			const nlattr *grps = at[CTRL_ATTR_MCAST_GROUPS];
			if (!grps || mnl_attr_validate(grps, MNL_TYPE_NESTED) < 0)
				return;
			const char *end = static_cast<const char *>(mnl_attr_get_payload(grps)) +
					  mnl_attr_get_payload_len(grps);
			for (auto *g = static_cast<const nlattr *>(mnl_attr_get_payload(grps));
			     mnl_attr_ok(g, int(end - reinterpret_cast<const char *>(g)));
			     g = mnl_attr_next(g)) {
				if (mnl_attr_validate(g, MNL_TYPE_NESTED) < 0)
					continue;
				auto ga = nested_attrs<CTRL_ATTR_MCAST_GRP_MAX>(g);
				std::string n = get_str(ga[CTRL_ATTR_MCAST_GRP_NAME]);
				std::uint32_t id = get_u32(ga[CTRL_ATTR_MCAST_GRP_ID]);
				if (!n.empty() && id)
					groups_.emplace_back(n, id);
			}
		});
	} catch (const NetlinkError &e) {
		if (e.code().value() == ENOENT)
			throw NetlinkError(ENOENT, "generic netlink family " + name_ +
							   " not found (is the " + module +
							   " module loaded?)");
		throw;
	}
	if (!family_)
		throw NetlinkError(EPROTO, op + ": no family id in reply");
	if (version_ < min_version)
		throw NetlinkError(EPROTONOSUPPORT, "kernel's " + name_ + " family is version " +
							    std::to_string(version_) + ", need " +
							    std::to_string(min_version));
}

std::uint32_t GenlClient::mcast_group(const std::string &name) const
{
	for (const auto &[n, id] : groups_)
		if (n == name)
			return id;
	throw NetlinkError(ENOENT, "generic netlink family " + name_ + " has no multicast group " +
					   name + " (module too old?)");
}

nlmsghdr *GenlClient::put(char *buf, std::uint8_t cmd, std::uint16_t flags,
			  std::uint32_t seq) const
{
	nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	nlh->nlmsg_type = family_;
	nlh->nlmsg_flags = NLM_F_REQUEST | flags;
	nlh->nlmsg_seq = seq;
	auto *g = static_cast<genlmsghdr *>(mnl_nlmsg_put_extra_header(nlh, sizeof(genlmsghdr)));
	g->cmd = cmd;
	g->version = std::uint8_t(version_);
	return nlh;
}

nlmsghdr *GenlClient::start(std::uint8_t cmd, std::uint16_t flags)
{
	return put(buf_.data(), cmd, flags, next_seq());
}

bool GenlClient::transact(const std::string &op, const std::function<void(const nlmsghdr *)> &fn)
{
	auto *req = reinterpret_cast<nlmsghdr *>(buf_.data());
	const std::uint32_t seq = req->nlmsg_seq;
	bool intr = false;

	sock_.send(buf_.data(), req->nlmsg_len, op);
	for (;;) {
		std::size_t n = sock_.recv(rxbuf_.data(), rxbuf_.size(), op);
		int len = int(n);
		for (auto *nlh = reinterpret_cast<const nlmsghdr *>(rxbuf_.data());
		     nlmsg_fits(nlh, len); nlh = mnl_nlmsg_next(nlh, &len)) {
			if (nlh->nlmsg_seq != seq || nlh->nlmsg_pid != sock_.portid())
				continue; // stale answer of an earlier request
			if (nlh->nlmsg_flags & NLM_F_DUMP_INTR)
				intr = true;
			if (nlh->nlmsg_type == NLMSG_ERROR) {
				NlAck ack = parse_ack(nlh);
				if (ack.error)
					throw NetlinkError(ack.error, op, ack.message);
				return intr;
			}
			if (nlh->nlmsg_type == NLMSG_DONE) {
				int err = 0;
				if (mnl_nlmsg_get_payload_len(nlh) >= sizeof(int))
					std::memcpy(&err, mnl_nlmsg_get_payload(nlh), sizeof(err));
				if (err < 0)
					throw NetlinkError(err == INT32_MIN ? EPROTO : -err, op,
							   parse_ack(nlh).message);
				return intr;
			}
			if (nlh->nlmsg_type == family_ || nlh->nlmsg_type == GENL_ID_CTRL)
				fn(nlh);
		}
	}
}

} // namespace ila
