// SPDX-License-Identifier: GPL-2.0
// Client for the ILA_MAP generic netlink family of nf_ila_map
// (<linux/ila_map.h>): map and entry commands, dumps, batches.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "command.h"
#include "genl_client.h"
#include "mnl_socket.h"

struct nlmsghdr;

namespace ila {

struct MapInfo {
	std::string name;
	std::uint32_t entries = 0, max_entries = 0, rules = 0;
	std::uint64_t lookups = 0, hits = 0, misses = 0;
	bool notify_miss = false;
};

struct Entry {
	std::uint64_t ident = 0, locator = 0; // host order
	std::uint8_t csum_mode = 0;
	std::uint64_t hits = 0; // packets that hit the entry
};

// A GETMAP / GETENTRY reply; NetlinkError(EPROTO) when an attribute the
// answer needs (name; identifier, locator) is missing or malformed.
MapInfo parse_map(const nlmsghdr *nlh);
Entry parse_entry(const nlmsghdr *nlh);
// A message of the "events" multicast group as the command that made the
// change (add or replace with its csum-mode, del, create, ...);
// NetlinkError(EPROTO) when malformed.
Command parse_event(const nlmsghdr *nlh);

class IlaMapClient {
public:
	// Opens a generic netlink socket in the current netns and resolves the
	// family; throws NetlinkError (ENOENT: module not loaded).
	IlaMapClient();

	void create(const std::string &map, std::optional<std::uint32_t> max_entries);
	void destroy(const std::string &map);
	std::vector<MapInfo> list();
	MapInfo stats(const std::string &map);
	void add(const std::string &map, const Entry &e, bool replace);
	void del(const std::string &map, std::uint64_t ident);
	Entry get(const std::string &map, std::uint64_t ident);
	// Every entry; repeats the dump (up to a few times) when the kernel marks
	// it interrupted by a resize, so the result has no duplicates.
	// ON_ENTRIES, when set: called with the number of entries received so
	// far (of this attempt) every 4096 entries (progress).
	std::vector<Entry> show(const std::string &map,
				const std::function<void(std::size_t)> &on_entries = {});
	void flush(const std::string &map);
	// Runs a write command (create, destroy, add, replace, del, flush).
	void execute(const Command &cmd);
	// Joins the "events" group, calls READY, then FN for every change made
	// in this netns until FN returns false; LOST when the kernel dropped
	// events (the socket's receive buffer overran). Each of OTHERS is the
	// multicast group of another generic netlink family (ILA_HOOK) joined
	// on the same socket, whose messages go to its FN, in order with ours.
	struct OtherEvents {
		std::uint16_t family;
		std::uint32_t group;
		std::function<bool(const nlmsghdr *)> fn;
	};
	void monitor(const std::function<void()> &ready, const std::function<bool(const Command &)> &fn,
		     const std::function<void()> &lost, const std::vector<OtherEvents> &others = {});

	std::uint16_t family_id() const { return genl_.family_id(); }
	std::uint32_t family_version() const { return genl_.family_version(); }
	MnlSocket &socket() { return genl_.socket(); }
	std::uint32_t next_seq() { return genl_.next_seq(); }

	// Appends the request for a write command to BUF at OFF (BUF must have
	// room for kMaxRequest bytes); returns the message length.
	std::size_t build_request(char *buf, const Command &cmd, std::uint32_t seq,
				  std::uint16_t extra_flags) const;
	static constexpr std::size_t kMaxRequest = 256;

private:
	nlmsghdr *start(std::uint8_t cmd, std::uint16_t flags);
	// Sends buf_ and processes the answer: data messages go to FN; ends at
	// the ack/DONE; throws NetlinkError(OP) on an error answer.
	bool transact(const std::string &op, const std::function<void(const nlmsghdr *)> &fn);

	GenlClient genl_;
};

// Sends write commands in large netlink batches: many requests per sendmsg,
// only the last one of each batch asks for an ack, errors come back with
// the sequence number of the failing request, so they name its line.
class BatchSender {
public:
	struct Failure {
		std::size_t line;
		std::string command;
		int error; // errno
		std::string kernel_message;
	};

	// FORCE: go on after a batch with failures (as ip -force -batch).
	explicit BatchSender(IlaMapClient &client, std::size_t batch_bytes = 128 * 1024,
			     bool force = false);
	// Queues CMD (from LINE); sends a full batch. Returns false once a batch
	// had failures (see failures()); nothing more is sent then, unless
	// FORCE. When the answers to a batch overflow the socket (ENOBUFS), the
	// batch is one failure (its lines, "answers lost") and sending stops.
	bool add(const Command &cmd, std::size_t line);
	// Sends what is queued and waits for the kernel's answer.
	bool finish();
	const std::vector<Failure> &failures() const { return failures_; }
	std::size_t sent() const { return sent_; }
	std::size_t batches() const { return batches_; }

private:
	bool flush();
	// Nothing more is sent: answers were lost, or a batch failed (without force).
	bool stopped() const { return lost_ || (!failures_.empty() && !force_); }

	IlaMapClient &client_;
	std::vector<char> buf_;
	std::size_t len_ = 0, last_off_ = 0;
	std::uint32_t first_seq_ = 0;
	std::vector<std::size_t> lines_;
	std::vector<Command> cmds_;
	std::vector<Failure> failures_;
	std::vector<char> rxbuf_;
	std::size_t sent_ = 0, batches_ = 0;
	bool force_ = false, lost_ = false;
};

} // namespace ila
