// SPDX-License-Identifier: GPL-2.0
#include "ila_map_client.h"

#include <endian.h>
#include <linux/genetlink.h>
#include <linux/ila_map.h>
#include <linux/netlink.h>

#include <cerrno>
#include <cstring>

#include "genl_client.h"
#include "ila_notation.h"

namespace ila {

namespace {

constexpr std::size_t kRxSize = 64 * 1024;

// The u64 attribute A of a reply, or EPROTO naming WHAT.
std::uint64_t need_u64(const nlattr *a, const char *what)
{
	if (!a || mnl_attr_validate(a, MNL_TYPE_U64) < 0)
		throw NetlinkError(EPROTO, std::string("reply without a valid ") + what);
	return mnl_attr_get_u64(a);
}

// The map name in attribute A, or EPROTO naming WHAT.
std::string need_name(const nlattr *a, const char *what)
{
	if (!a || mnl_attr_validate(a, MNL_TYPE_NUL_STRING) < 0 ||
	    !valid_map_name(mnl_attr_get_str(a)))
		throw NetlinkError(EPROTO, std::string("reply without a valid ") + what);
	return mnl_attr_get_str(a);
}

} // namespace

MapInfo parse_map(const nlmsghdr *nlh)
{
	auto at = genl_attrs<ILA_MAP_A_MAX>(nlh);
	MapInfo m;
	m.name = need_name(at[ILA_MAP_A_NAME], "map name");
	m.entries = get_u32(at[ILA_MAP_A_ENTRIES]);
	m.max_entries = get_u32(at[ILA_MAP_A_MAX_ENTRIES]);
	m.rules = get_u32(at[ILA_MAP_A_RULES]);
	m.notify_miss = at[ILA_MAP_A_NOTIFY_MISS] != nullptr;
	if (const nlattr *st = at[ILA_MAP_A_STATS]) {
		if (mnl_attr_validate(st, MNL_TYPE_NESTED) < 0)
			throw NetlinkError(EPROTO, "reply with malformed statistics");
		auto s = nested_attrs<ILA_MAP_STATS_MAX>(st);
		m.lookups = get_u64(s[ILA_MAP_STATS_LOOKUPS]);
		m.hits = get_u64(s[ILA_MAP_STATS_HITS]);
		m.misses = get_u64(s[ILA_MAP_STATS_MISSES]);
	}
	return m;
}

Entry parse_entry(const nlmsghdr *nlh)
{
	auto at = genl_attrs<ILA_MAP_A_MAX>(nlh);
	Entry e;
	e.ident = be64toh(need_u64(at[ILA_MAP_A_IDENT], "identifier"));
	e.locator = be64toh(need_u64(at[ILA_MAP_A_LOCATOR], "locator"));
	if (at[ILA_MAP_A_CSUM_MODE] && mnl_attr_validate(at[ILA_MAP_A_CSUM_MODE], MNL_TYPE_U8) == 0)
		e.csum_mode = mnl_attr_get_u8(at[ILA_MAP_A_CSUM_MODE]);
	if (e.csum_mode > ILA_MAP_CSUM_MAX)
		throw NetlinkError(EPROTO, "reply with an unknown checksum mode " +
						   std::to_string(e.csum_mode));
	e.hits = get_u64(at[ILA_MAP_A_HITS]);
	return e;
}

Command parse_event(const nlmsghdr *nlh)
{
	if (mnl_nlmsg_get_payload_len(nlh) < sizeof(genlmsghdr))
		throw NetlinkError(EPROTO, "event without a generic netlink header");
	const auto *g = static_cast<const genlmsghdr *>(mnl_nlmsg_get_payload(nlh));
	auto at = genl_attrs<ILA_MAP_A_MAX>(nlh);
	Command c;
	c.map = need_name(at[ILA_MAP_A_NAME], "map name");
	switch (g->cmd) {
	case ILA_MAP_CMD_NEWMAP:
		// as created (max-entries, notify-miss), so that a replay is exact
		c.op = Op::Create;
		if (const nlattr *a = at[ILA_MAP_A_MAX_ENTRIES]; a && mnl_attr_validate(a, MNL_TYPE_U32) == 0)
			c.max_entries = mnl_attr_get_u32(a);
		c.notify_miss = at[ILA_MAP_A_NOTIFY_MISS] != nullptr;
		break;
	case ILA_MAP_CMD_DELMAP: c.op = Op::Destroy; break;
	case ILA_MAP_CMD_FLUSH: c.op = Op::Flush; break;
	case ILA_MAP_CMD_RESET_COUNTERS: c.op = Op::ResetCounters; break;
	case ILA_MAP_CMD_MISS:
		c.op = Op::Miss;
		c.ident = be64toh(need_u64(at[ILA_MAP_A_IDENT], "identifier"));
		break;
	case ILA_MAP_CMD_SWAP:
		c.op = Op::Swap;
		c.map2 = need_name(at[ILA_MAP_A_NAME2], "second map name");
		break;
	case ILA_MAP_CMD_DELENTRY:
		c.op = Op::Del;
		c.ident = be64toh(need_u64(at[ILA_MAP_A_IDENT], "identifier"));
		break;
	case ILA_MAP_CMD_NEWENTRY: {
		Entry e = parse_entry(nlh);
		c.op = at[ILA_MAP_A_REPLACE] ? Op::Replace : Op::Add;
		c.ident = e.ident;
		c.locator = e.locator;
		c.csum_mode = e.csum_mode;
		break;
	}
	default:
		throw NetlinkError(EPROTO, "unknown event " + std::to_string(g->cmd));
	}
	return c;
}

namespace {

std::string what_map(const std::string &verb, const std::string &map)
{
	return "map " + verb + " " + map;
}

std::string what_entry(const std::string &verb, const std::string &map, std::uint64_t ident)
{
	return "map " + verb + " " + map + " " + format_half(ident);
}

} // namespace

IlaMapClient::IlaMapClient() : genl_(ILA_MAP_GENL_NAME, "nf_ila", ILA_MAP_GENL_VERSION) {}

nlmsghdr *IlaMapClient::start(std::uint8_t cmd, std::uint16_t flags)
{
	return genl_.start(cmd, flags);
}

bool IlaMapClient::transact(const std::string &op,
			    const std::function<void(const nlmsghdr *)> &fn)
{
	return genl_.transact(op, fn);
}

void IlaMapClient::create(const std::string &map, std::optional<std::uint32_t> max_entries)
{
	nlmsghdr *nlh = start(ILA_MAP_CMD_NEWMAP, NLM_F_ACK);
	mnl_attr_put_strz(nlh, ILA_MAP_A_NAME, map.c_str());
	if (max_entries)
		mnl_attr_put_u32(nlh, ILA_MAP_A_MAX_ENTRIES, *max_entries);
	transact(what_map("create", map), [](const nlmsghdr *) {});
}

void IlaMapClient::destroy(const std::string &map)
{
	nlmsghdr *nlh = start(ILA_MAP_CMD_DELMAP, NLM_F_ACK);
	mnl_attr_put_strz(nlh, ILA_MAP_A_NAME, map.c_str());
	transact(what_map("destroy", map), [](const nlmsghdr *) {});
}

std::vector<MapInfo> IlaMapClient::list()
{
	std::vector<MapInfo> maps;
	start(ILA_MAP_CMD_GETMAP, NLM_F_DUMP);
	transact("map list", [&](const nlmsghdr *nlh) { maps.push_back(parse_map(nlh)); });
	return maps;
}

MapInfo IlaMapClient::stats(const std::string &map)
{
	MapInfo m;
	nlmsghdr *nlh = start(ILA_MAP_CMD_GETMAP, NLM_F_ACK);
	mnl_attr_put_strz(nlh, ILA_MAP_A_NAME, map.c_str());
	transact(what_map("stats", map), [&](const nlmsghdr *r) { m = parse_map(r); });
	return m;
}

std::size_t IlaMapClient::build_request(char *buf, const Command &cmd, std::uint32_t seq,
					std::uint16_t extra_flags) const
{
	std::uint8_t c = ILA_MAP_CMD_UNSPEC;
	std::uint16_t flags = extra_flags;

	switch (cmd.op) {
	case Op::Create: c = ILA_MAP_CMD_NEWMAP; break;
	case Op::Destroy: c = ILA_MAP_CMD_DELMAP; break;
	case Op::Flush: c = ILA_MAP_CMD_FLUSH; break;
	case Op::Add: c = ILA_MAP_CMD_NEWENTRY; break;
	case Op::Replace: c = ILA_MAP_CMD_NEWENTRY; break;
	case Op::Del: c = ILA_MAP_CMD_DELENTRY; break;
	case Op::Swap: c = ILA_MAP_CMD_SWAP; break;
	case Op::ResetCounters: c = ILA_MAP_CMD_RESET_COUNTERS; break;
	default:
		throw std::logic_error("not a write command: " + describe(cmd));
	}
	nlmsghdr *nlh = genl_.put(buf, c, flags, seq);
	mnl_attr_put_strz(nlh, ILA_MAP_A_NAME, cmd.map.c_str());
	if (cmd.op == Op::Swap)
		mnl_attr_put_strz(nlh, ILA_MAP_A_NAME2, cmd.map2.c_str());
	if (cmd.op == Op::Create && cmd.max_entries)
		mnl_attr_put_u32(nlh, ILA_MAP_A_MAX_ENTRIES, *cmd.max_entries);
	if (cmd.op == Op::Create && cmd.notify_miss)
		mnl_attr_put(nlh, ILA_MAP_A_NOTIFY_MISS, 0, nullptr);
	if (cmd.op == Op::Add || cmd.op == Op::Replace || cmd.op == Op::Del)
		mnl_attr_put_u64(nlh, ILA_MAP_A_IDENT, htobe64(cmd.ident));
	if (cmd.op == Op::Add || cmd.op == Op::Replace) {
		mnl_attr_put_u64(nlh, ILA_MAP_A_LOCATOR, htobe64(cmd.locator));
		if (cmd.csum_mode)
			mnl_attr_put_u8(nlh, ILA_MAP_A_CSUM_MODE, *cmd.csum_mode);
		if (cmd.op == Op::Replace)
			mnl_attr_put(nlh, ILA_MAP_A_REPLACE, 0, nullptr);
	}
	return nlh->nlmsg_len;
}

void IlaMapClient::execute(const Command &cmd)
{
	build_request(genl_.buf(), cmd, next_seq(), NLM_F_ACK);
	transact(describe(cmd), [](const nlmsghdr *) {});
}

void IlaMapClient::add(const std::string &map, const Entry &e, bool replace)
{
	Command cmd;
	cmd.op = replace ? Op::Replace : Op::Add;
	cmd.map = map;
	cmd.ident = e.ident;
	cmd.locator = e.locator;
	cmd.csum_mode = e.csum_mode;
	execute(cmd);
}

void IlaMapClient::del(const std::string &map, std::uint64_t ident)
{
	Command cmd;
	cmd.op = Op::Del;
	cmd.map = map;
	cmd.ident = ident;
	execute(cmd);
}

void IlaMapClient::flush(const std::string &map)
{
	Command cmd;
	cmd.op = Op::Flush;
	cmd.map = map;
	execute(cmd);
}

Entry IlaMapClient::get(const std::string &map, std::uint64_t ident)
{
	Entry e;
	bool found = false;
	nlmsghdr *nlh = start(ILA_MAP_CMD_GETENTRY, NLM_F_ACK);
	mnl_attr_put_strz(nlh, ILA_MAP_A_NAME, map.c_str());
	mnl_attr_put_u64(nlh, ILA_MAP_A_IDENT, htobe64(ident));
	transact(what_entry("get", map, ident), [&](const nlmsghdr *r) {
		e = parse_entry(r);
		found = true;
	});
	if (!found)
		throw NetlinkError(EPROTO, what_entry("get", map, ident) + ": no entry in reply");
	return e;
}

std::vector<Entry> IlaMapClient::show(const std::string &map,
				      const std::function<void(std::size_t)> &on_entries)
{
	std::vector<Entry> entries;
	for (int attempt = 0;; attempt++) {
		entries.clear();
		nlmsghdr *nlh = start(ILA_MAP_CMD_GETENTRY, NLM_F_DUMP);
		mnl_attr_put_strz(nlh, ILA_MAP_A_NAME, map.c_str());
		bool intr = transact(what_map("show", map), [&](const nlmsghdr *r) {
			entries.push_back(parse_entry(r));
			if (on_entries && entries.size() % 4096 == 0)
				on_entries(entries.size());
		});
		if (!intr)
			return entries;
		if (attempt == 4)
			throw NetlinkError(EAGAIN, what_map("show", map) +
							   ": dump interrupted by table resizes 5 times");
	}
}

void IlaMapClient::monitor(const std::function<void()> &ready,
			   const std::function<bool(const Command &)> &fn,
			   const std::function<void()> &lost, const std::vector<OtherEvents> &others)
{
	const std::string op = "monitor ILA_MAP events";
	MnlSocket &sock = genl_.socket();
	sock.join(genl_.mcast_group(ILA_MAP_MCGRP_EVENTS), op);
	for (const auto &o : others)
		sock.join(o.group, op);
	sock.set_buffers(0, 8 * 1024 * 1024);
	ready();
	std::vector<char> rx(kRxSize);
	for (;;) {
		std::size_t n;
		try {
			n = sock.recv(rx.data(), rx.size(), op);
		} catch (const NetlinkError &e) {
			if (e.code().value() != ENOBUFS)
				throw;
			lost();
			continue;
		}
		int len = int(n);
		for (auto *nlh = reinterpret_cast<const nlmsghdr *>(rx.data()); nlmsg_fits(nlh, len);
		     nlh = mnl_nlmsg_next(nlh, &len)) {
			bool go = true;
			if (nlh->nlmsg_type == genl_.family_id())
				go = fn(parse_event(nlh));
			else
				for (const auto &o : others)
					if (nlh->nlmsg_type == o.family)
						go = o.fn(nlh);
			if (!go)
				return;
		}
	}
}

// ---- BatchSender -------------------------------------------------------------

BatchSender::BatchSender(IlaMapClient &client, std::size_t batch_bytes, bool force)
	: client_(client), buf_(batch_bytes), rxbuf_(kRxSize), force_(force)
{
	client_.socket().set_buffers(int(batch_bytes) * 2, 4 * 1024 * 1024);
}

bool BatchSender::add(const Command &cmd, std::size_t line)
{
	if (stopped())
		return false;
	if (len_ + IlaMapClient::kMaxRequest > buf_.size()) {
		flush();
		if (stopped())
			return false;
	}
	std::uint32_t seq = client_.next_seq();
	if (lines_.empty())
		first_seq_ = seq;
	last_off_ = len_;
	len_ += client_.build_request(buf_.data() + len_, cmd, seq, 0);
	lines_.push_back(line);
	cmds_.push_back(cmd);
	return true;
}

bool BatchSender::finish()
{
	if (!stopped())
		flush();
	return failures_.empty();
}

bool BatchSender::flush()
{
	if (lines_.empty())
		return true;
	auto *last = reinterpret_cast<nlmsghdr *>(buf_.data() + last_off_);
	last->nlmsg_flags |= NLM_F_ACK;
	const std::uint32_t last_seq = last->nlmsg_seq;
	const std::string op = "send batch (lines " + std::to_string(lines_.front()) + "-" +
			       std::to_string(lines_.back()) + ")";

	client_.socket().send(buf_.data(), len_, op);
	batches_++;
	bool done = false;
	while (!done) {
		std::size_t n;
		try {
			n = client_.socket().recv(rxbuf_.data(), rxbuf_.size(), op);
		} catch (const NetlinkError &e) {
			if (e.code().value() != ENOBUFS)
				throw;
			// Answers overflowed the socket (a small receive buffer, e.g.
			// in an unprivileged user namespace): the final ack may be
			// lost too. The whole batch is one failure; what was
			// collected before stays.
			failures_.push_back({lines_.front(),
					     "lines " + std::to_string(lines_.front()) + "-" +
						     std::to_string(lines_.back()),
					     ENOBUFS, "answers lost: the state of these lines is unknown"});
			lost_ = true;
			sent_ += lines_.size();
			lines_.clear();
			cmds_.clear();
			len_ = 0;
			return false;
		}
		int len = int(n);
		for (auto *nlh = reinterpret_cast<const nlmsghdr *>(rxbuf_.data());
		     nlmsg_fits(nlh, len); nlh = mnl_nlmsg_next(nlh, &len)) {
			if (nlh->nlmsg_type != NLMSG_ERROR || nlh->nlmsg_pid != client_.socket().portid())
				continue;
			std::uint32_t seq = nlh->nlmsg_seq;
			if (seq - first_seq_ >= lines_.size())
				continue;
			NlAck ack = parse_ack(nlh);
			std::size_t i = seq - first_seq_;
			if (ack.error)
				failures_.push_back({lines_[i], describe(cmds_[i]), ack.error, ack.message});
			if (seq == last_seq)
				done = true;
		}
	}
	sent_ += lines_.size();
	lines_.clear();
	cmds_.clear();
	len_ = 0;
	return failures_.empty();
}

} // namespace ila
