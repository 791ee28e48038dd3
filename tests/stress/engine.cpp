// SPDX-License-Identifier: GPL-2.0
#include "engine.h"

#include <cstdio>
#include <cstring>
#include <set>

namespace stress {

Report g_report;
Families g_fam;

std::uint64_t mix64(std::uint64_t x)
{
	x += 0x9e3779b97f4a7c15ULL;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

std::uint64_t seed_for(std::uint64_t seed, const std::string &who)
{
	std::uint64_t h = mix64(seed);
	for (unsigned char c : who)
		h = mix64(h ^ c);
	return h;
}

// ---- Report ------------------------------------------------------------------

void Report::fail(const std::string &who, const std::string &what)
{
	int n = ++failures_;
	std::lock_guard<std::mutex> l(mu_);
	if (n <= 40)
		std::fprintf(stderr, "FAIL %s [%s, STRESS_SEED=%llu]: %s\n", instance_.c_str(), who.c_str(),
			     (unsigned long long)seed_, what.c_str());
	else if (n == 41)
		std::fprintf(stderr, "FAIL %s: more failures, not shown\n", instance_.c_str());
	std::fflush(stderr);
}

void Report::note(const std::string &who, const std::string &what)
{
	std::lock_guard<std::mutex> l(mu_);
	std::printf("%s [%s]: %s\n", instance_.c_str(), who.c_str(), what.c_str());
	std::fflush(stdout);
}

void Report::count(const std::string &label, int err)
{
	std::lock_guard<std::mutex> l(mu_);
	counts_[label][err]++;
}

void Report::count_extra(const std::string &what, std::uint64_t n)
{
	std::lock_guard<std::mutex> l(mu_);
	extra_[what] += n;
}

std::string Report::summary()
{
	std::lock_guard<std::mutex> l(mu_);
	std::string s;
	std::uint64_t total = 0;
	for (const auto &[label, errs] : counts_) {
		std::string line = "  " + label + ":";
		for (const auto &[e, n] : errs) {
			const char *name = e ? strerrorname_np(e) : "ok";
			line += " " + std::string(name ? name : std::to_string(e).c_str()) + " " +
				std::to_string(n);
			total += n;
		}
		s += line + "\n";
	}
	for (const auto &[what, n] : extra_)
		s += "  " + what + ": " + std::to_string(n) + "\n";
	return "requests answered: " + std::to_string(total) + "\n" + s;
}

std::string describe(const Pending &p)
{
	Bytes b;
	encode(p.req, p.seq, b);
	char flags[16];
	std::snprintf(flags, sizeof(flags), "0x%x", p.req.flags);
	std::string s = p.label + " (" + (p.what.empty() ? "well-formed" : p.what) + ", seq " +
			std::to_string(p.seq) + ", nlmsg_flags " + flags + "): expected " + p.expect.str() +
			", got ";
	if (p.err < 0)
		s += "no answer";
	else if (p.err == 0)
		s += "success";
	else {
		const char *n = strerrorname_np(p.err);
		s += n ? n : std::to_string(p.err);
	}
	if (!p.extack.empty())
		s += " (\"" + p.extack + "\")";
	return s + "; request " + hex(b.data(), b.size(), 160);
}

// ---- Engine ------------------------------------------------------------------

std::unique_ptr<Conn> Engine::open(std::size_t rx)
{
	auto c = std::make_unique<Conn>();
	c->sock = std::make_unique<Socket>(rng_.chance(70), rng_.chance(30));
	static const std::size_t sizes[] = {16384, 32768, 65536};
	c->rx.resize(rx ? rx : sizes[rng_.below(3)]);
	c->id = ++next_conn_;
	return c;
}

bool Engine::on_message(Conn &c, std::map<std::uint32_t, PendingP> &live, const Message &m,
			std::uint32_t sync_seq, bool &sync_seen)
{
	std::string problem;
	if (m.hdr.nlmsg_pid != c.sock->portid()) {
		fail("message for port " + std::to_string(m.hdr.nlmsg_pid) + " on socket " +
		     std::to_string(c.sock->portid()));
		return false;
	}
	if (sync_seq && m.hdr.nlmsg_seq == sync_seq) {
		Ack a;
		if (m.hdr.nlmsg_type != NLMSG_ERROR || !parse_error(m, a, problem) || a.error) {
			fail("the NOOP after the batch was not acknowledged with 0 " + problem);
			return false;
		}
		sync_seen = true;
		return true;
	}
	PendingP p;
	if (auto it = live.find(m.hdr.nlmsg_seq); it != live.end())
		p = it->second;
	else if (auto it2 = c.dumps.find(m.hdr.nlmsg_seq); it2 != c.dumps.end())
		p = it2->second;
	if (!p) {
		std::string h;
		for (const auto &x : c.history)
			h += "; " + x;
		fail("message type " + std::to_string(m.hdr.nlmsg_type) + " with unknown seq " +
		     std::to_string(m.hdr.nlmsg_seq) + " on socket " + std::to_string(c.id) + " (sent before" + h +
		     "): " + hex(m.payload.data(), m.payload.size()));
		return false;
	}
	if (m.hdr.nlmsg_flags & NLM_F_DUMP_INTR)
		p->intr = true;
	if (m.hdr.nlmsg_type == NLMSG_ERROR) {
		Ack a;
		if (!parse_error(m, a, problem)) {
			fail(p->label + ": " + problem);
			return false;
		}
		if (p->answered || p->started) {
			fail(p->label + ": an error message after its answer: " + describe(*p));
			return false;
		}
		p->answered = true;
		p->err = a.error;
		p->extack = a.msg;
		return true;
	}
	if (m.hdr.nlmsg_type == NLMSG_DONE) {
		Ack a;
		if (p->mode != Answer::Dump || p->done || p->answered) {
			fail(p->label + ": unexpected NLMSG_DONE: " + describe(*p));
			return false;
		}
		if (!parse_done(m, a, problem)) {
			fail(p->label + ": " + problem);
			return false;
		}
		if (a.error) {
			p->err = a.error;
			fail(p->label + ": dump ended with an error: " + describe(*p));
		}
		p->done = p->started = true;
		c.dumps.erase(p->seq);
		if (p->on_done && p->err <= 0)
			p->on_done(*p);
		return true;
	}
	if (m.hdr.nlmsg_type == p->req.nl_type && !p->reply_cmd && (p->req.flags & NLM_F_ECHO) &&
	    p->mode == Answer::Doit) {
		// a family may echo its notification to an NLM_F_ECHO sender
		g_report.count_extra("notifications echoed to the sender");
		return true;
	}
	if (m.hdr.nlmsg_type != p->req.nl_type || !p->reply_cmd) {
		fail(p->label + ": unexpected message type " + std::to_string(m.hdr.nlmsg_type) + ": " +
		     describe(*p));
		return false;
	}
	std::uint8_t cmd;
	std::vector<AttrView> at;
	if (!genl_attrs(m, cmd, at, problem)) {
		fail(p->label + " reply: " + problem + ": " + hex(m.payload.data(), m.payload.size()));
		return false;
	}
	if (cmd != p->reply_cmd) {
		fail(p->label + " reply: command " + std::to_string(cmd) + ", expected " +
		     std::to_string(p->reply_cmd));
		return false;
	}
	if (p->mode == Answer::Dump) {
		if (!(m.hdr.nlmsg_flags & NLM_F_MULTI) || p->done || p->answered) {
			fail(p->label + ": dump part without NLM_F_MULTI or after the end");
			return false;
		}
		p->started = true;
	} else if (p->answered || (m.hdr.nlmsg_flags & NLM_F_MULTI)) {
		fail(p->label + ": reply after the answer or with NLM_F_MULTI: " + describe(*p));
		return false;
	}
	if (p->check) {
		problem = p->check(m, cmd, at);
		if (!problem.empty()) {
			fail(p->label + " reply: " + problem + ": " + hex(m.payload.data(), m.payload.size(), 400));
			return false;
		}
	}
	p->data.push_back(m);
	return true;
}

bool Engine::read_until(Conn &c, std::map<std::uint32_t, PendingP> &live, std::uint32_t sync_seq,
			bool &sync_seen, const std::function<bool()> &enough)
{
	bool ok = true;
	while (!enough()) {
		long n = c.sock->recv(c.rx, kAnswerTimeoutMs);
		if (n == 0) {
			fail("no answer from the kernel within " + std::to_string(kAnswerTimeoutMs / 1000) + " s");
			return false;
		}
		if (n < 0) {
			fail(std::string("recv: ") + std::strerror(int(-n)));
			return false;
		}
		std::vector<Message> msgs;
		std::string problem;
		if (!split_datagram(c.rx.data(), std::size_t(n), msgs, problem)) {
			fail(problem + ": " + hex(c.rx.data(), std::size_t(n)));
			return false;
		}
		// the datagrams a dump's data came in (NLMSG_DONE always comes in
		// a datagram of its own, after the one the last walk filled)
		std::set<Pending *> touched;
		for (const auto &m : msgs) {
			if (m.hdr.nlmsg_type < NLMSG_MIN_TYPE)
				;
			else if (auto it = live.find(m.hdr.nlmsg_seq); it != live.end())
				touched.insert(it->second.get());
			else if (auto it2 = c.dumps.find(m.hdr.nlmsg_seq); it2 != c.dumps.end())
				touched.insert(it2->second.get());
			if (!on_message(c, live, m, sync_seq, sync_seen))
				ok = false;
		}
		for (auto *p : touched)
			p->datagrams++;
		if (!ok)
			return false;
	}
	return ok;
}

void Engine::judge(Conn &c, const PendingP &pp)
{
	Pending &p = *pp;
	const bool ack = p.req.flags & NLM_F_ACK;
	switch (p.mode) {
	case Answer::Doit:
		if (!p.answered) {
			if (ack) {
				fail(p.label + ": no ack: " + describe(p));
				return;
			}
			p.err = 0;
		}
		if (p.err == 0 && p.reply_cmd && p.data.size() != 1) {
			fail(p.label + ": " + std::to_string(p.data.size()) + " replies to a get: " + describe(p));
			return;
		}
		if (p.err != 0 && !p.data.empty()) {
			fail(p.label + ": a reply and an error: " + describe(p));
			return;
		}
		break;
	case Answer::Dump:
		if (p.answered) {
			if (!p.data.empty()) {
				fail(p.label + ": dump parts and an error: " + describe(p));
				return;
			}
		} else if (p.started) {
			if (p.err < 0)
				p.err = 0;
			if (!p.done)
				c.dumps[p.seq] = pp;
		} else {
			fail(p.label + ": dump request without any answer: " + describe(p));
			return;
		}
		break;
	case Answer::Ignored:
		if (ack != p.answered || (p.answered && p.err != 0)) {
			fail(p.label + ": a message the kernel must ignore (ack only if NLM_F_ACK) was " +
			     (p.answered ? "answered" : "not acknowledged") + ": " + describe(p));
			return;
		}
		p.err = 0;
		break;
	case Answer::Dropped:
		if (p.answered || p.started) {
			fail(p.label + ": a truncated message was answered: " + describe(p));
			return;
		}
		p.err = 0;
		break;
	}
	if (!p.expect.judge(p.err))
		fail(p.label + ": " + describe(p));
	// not requests for the kernel: counted apart from the requests' answers
	g_report.count(p.mode == Answer::Ignored ? p.label + " (ignored)"
			: p.mode == Answer::Dropped ? p.label + " (truncated)"
						     : p.label,
		       p.err);
}

bool Engine::exchange(Conn &c, std::vector<PendingP> &batch, bool finish)
{
	const unsigned fails0 = fails_;
	const bool ok = exchange_(c, batch, finish);
	if (!ok || fails_ != fails0)
		c.broken = true;
	return ok;
}

bool Engine::exchange_(Conn &c, std::vector<PendingP> &batch, bool finish)
{
	ops_ += batch.size();
	Bytes dg;
	std::map<std::uint32_t, PendingP> live;
	std::string hist;
	for (auto &p : batch) {
		p->seq = c.sock->next_seq();
		encode(p->req, p->seq, dg);
		live[p->seq] = p;
		hist += " " + std::to_string(p->seq) + ":" + p->label.substr(p->label.find(' ') + 1) +
			(p->what.empty() ? "" : "(" + p->what + ")");
	}
	if (int e = c.sock->send(dg)) {
		fail(std::string("send: ") + std::strerror(e) + " (" + std::to_string(dg.size()) + " bytes)");
		return false;
	}
	Request sync;
	sync.nl_type = NLMSG_NOOP;
	sync.flags = NLM_F_REQUEST | NLM_F_ACK;
	const std::uint32_t sync_seq = c.sock->next_seq();
	Bytes sb;
	encode(sync, sync_seq, sb);
	if (int e = c.sock->send(sb)) {
		fail(std::string("send NOOP: ") + std::strerror(e));
		return false;
	}
	c.history.push_back(std::to_string(dg.size()) + " bytes:" + hist + ", then NOOP " +
			    std::to_string(sync_seq) + (finish ? ", read to the end" : ""));
	if (c.history.size() > 6)
		c.history.erase(c.history.begin());
	bool sync_seen = false;
	if (!read_until(c, live, sync_seq, sync_seen, [&] { return sync_seen; }))
		return false;
	// the dumps of the batch that started are kept on C (judge) until done
	for (auto &p : batch)
		judge(c, p);
	if (finish)
		return finish_dumps(c);
	return true;
}

bool Engine::finish_dumps(Conn &c)
{
	std::map<std::uint32_t, PendingP> none;
	bool sync_seen = false;
	const unsigned fails0 = fails_;
	c.history.push_back("read the dumps to the end");
	if (c.history.size() > 6)
		c.history.erase(c.history.begin());
	const bool ok = read_until(c, none, 0, sync_seen, [&] { return c.dumps.empty(); });
	if (!ok || fails_ != fails0)
		c.broken = true;
	return ok;
}

bool Engine::drain(Conn &c)
{
	std::map<std::uint32_t, PendingP> none;
	bool sync_seen = false;
	for (;;) {
		long n = c.sock->recv(c.rx, 0);
		if (n == 0)
			return true;
		if (n < 0) {
			fail(std::string("recv: ") + std::strerror(int(-n)));
			return false;
		}
		std::vector<Message> msgs;
		std::string problem;
		if (!split_datagram(c.rx.data(), std::size_t(n), msgs, problem)) {
			fail(problem);
			return false;
		}
		for (const auto &m : msgs)
			if (!on_message(c, none, m, 0, sync_seen))
				return false;
	}
}

} // namespace stress
