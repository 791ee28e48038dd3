// SPDX-License-Identifier: GPL-2.0
// The request/answer engine of the stress generator: a connection (socket
// plus the dumps running on it), the exchange of a batch of requests with
// the kernel, and the judgement of every answer against its expectation.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <vector>

#include "expect.h"
#include "netlink.h"

namespace stress {

// ---- randomness ----------------------------------------------------------

// splitmix64: derives the seed of each thread from the run's seed
std::uint64_t mix64(std::uint64_t x);
std::uint64_t seed_for(std::uint64_t seed, const std::string &who);

class Rng {
public:
	explicit Rng(std::uint64_t seed) : g_(seed) {}
	std::uint64_t next() { return g_(); }
	// uniform in [0, n)
	std::uint64_t below(std::uint64_t n) { return n ? g_() % n : 0; }
	std::int64_t range(std::int64_t lo, std::int64_t hi) // [lo, hi]
	{
		return lo + std::int64_t(below(std::uint64_t(hi - lo) + 1));
	}
	bool chance(unsigned percent) { return below(100) < percent; }
	template <typename T> const T &pick(const std::vector<T> &v) { return v[below(v.size())]; }

private:
	std::mt19937_64 g_;
};

// ---- reporting -----------------------------------------------------------

// Failures of the oracle, shared by the threads of the process.
class Report {
public:
	void init(std::string instance, std::uint64_t seed)
	{
		instance_ = std::move(instance);
		seed_ = seed;
	}
	void fail(const std::string &who, const std::string &what);
	int failures() const { return failures_.load(); }
	void note(const std::string &who, const std::string &what);
	// counts answers: LABEL (family command) -> errno -> n
	void count(const std::string &label, int err);
	void count_extra(const std::string &what, std::uint64_t n = 1);
	std::string summary();

private:
	std::mutex mu_;
	std::string instance_;
	std::uint64_t seed_ = 0;
	std::atomic<int> failures_{0};
	std::map<std::string, std::map<int, std::uint64_t>> counts_;
	std::map<std::string, std::uint64_t> extra_;
};
extern Report g_report;

// ---- expectations ----------------------------------------------------------

// The errnos an answer may carry.
struct Expect {
	ErrSet set;

	static Expect of(Why w)
	{
		Expect e;
		e.set = ErrSet::of(w);
		return e;
	}
	bool judge(int err) const { return set.has(err); }
	std::string str() const { return set.str(); }
};

// ---- requests and answers --------------------------------------------------

enum class Answer : std::uint8_t {
	Doit,	 // an ack or error (ACK set), a reply for GET
	Dump,	 // an error, or parts and NLMSG_DONE
	Ignored, // not a request / a control message: ack 0 iff ACK, else nothing
	Dropped, // truncated: nothing at all
};

struct Pending;
using PendingP = std::shared_ptr<Pending>;

struct Pending {
	std::string label; // "ILA_MAP NEWENTRY" for the counts
	std::string what;  // what was done to the request (for failures)
	Request req;
	Answer mode = Answer::Doit;
	bool last_only = false; // must end its datagram (truncations)
	std::uint8_t reply_cmd = 0; // data replies' command (0: no data expected)
	Expect expect;
	// checks the attributes of one data message: "" or the problem
	std::function<std::string(const Message &, std::uint8_t cmd, const std::vector<AttrView> &)> check;
	// dumps: called when NLMSG_DONE was read
	std::function<void(Pending &)> on_done;

	// filled in by the exchange
	std::uint32_t seq = 0;
	bool answered = false; // NLMSG_ERROR read
	int err = -1;	       // the answer's errno (0: success)
	bool started = false;  // dump: a part or DONE read
	bool done = false;     // dump: DONE read
	bool intr = false;     // a part had NLM_F_DUMP_INTR
	std::uint32_t datagrams = 0; // datagrams the dump's data messages came in
	std::vector<Message> data;
	std::string extack;
};

// A socket and the dumps running on it.
struct Conn {
	std::unique_ptr<Socket> sock;
	Bytes rx;
	std::map<std::uint32_t, PendingP> dumps; // started, DONE not read yet
	std::uint32_t id = 0;
	// what the last exchanges sent (for failure reports)
	std::vector<std::string> history;
	// an exchange failed: answers may be left unread, do not reuse
	bool broken = false;
};

// The generic netlink families of the run.
struct Families {
	Family map, hook;
};
extern Families g_fam;

class Engine {
public:
	Engine(std::string who, Rng &rng) : who_(std::move(who)), rng_(rng) {}

	// A new connection: random extended-ack / capped-ack options and
	// receive buffer size (RX bytes, 0: random).
	std::unique_ptr<Conn> open(std::size_t rx = 0);

	// Sends BATCH as one datagram and reads every answer (and parts of
	// dumps running on C) until a NOOP sent after it is acknowledged; with
	// FINISH, also until every dump of the batch is done. Judges every
	// answer; false when something failed (already reported).
	bool exchange(Conn &c, std::vector<PendingP> &batch, bool finish);
	// Reads C until its running dumps are done (all of them).
	bool finish_dumps(Conn &c);
	// Reads whatever C has queued without waiting.
	bool drain(Conn &c);

	const std::string &who() const { return who_; }
	std::uint64_t ops() const { return ops_; }
	void fail(const std::string &what)
	{
		fails_++;
		g_report.fail(who_ + " op " + std::to_string(ops_), what);
	}
	// failures this engine reported
	unsigned fails() const { return fails_; }

private:
	bool exchange_(Conn &c, std::vector<PendingP> &batch, bool finish);
	bool read_until(Conn &c, std::map<std::uint32_t, PendingP> &live, std::uint32_t sync_seq,
			bool &sync_seen, const std::function<bool()> &enough);
	bool on_message(Conn &c, std::map<std::uint32_t, PendingP> &live, const Message &m,
			std::uint32_t sync_seq, bool &sync_seen);
	void judge(Conn &c, const PendingP &p);

	std::string who_;
	Rng &rng_;
	std::uint64_t ops_ = 0;
	unsigned fails_ = 0;
	std::uint32_t next_conn_ = 0;
};

std::string describe(const Pending &p);

// Timeouts: TCG under load is slow; an answer that takes this long is lost.
inline constexpr int kAnswerTimeoutMs = 120000;

} // namespace stress
