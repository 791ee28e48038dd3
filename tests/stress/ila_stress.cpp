// SPDX-License-Identifier: GPL-2.0
// ila_stress - TEST TOOL: a seeded, syzkaller-style random sequence of
// generic netlink requests to ILA_MAP and ILA_HOOK, valid and malformed,
// from several threads of the calling netns, with an oracle:
//
//  - every answer carries an errno the table in expect.h allows for the
//    request (and every message the kernel sends is well-formed);
//  - a model thread works on names of its own ("m*") one request at a
//    time and predicts every answer exactly; it compares every GET and
//    every dump with its model, and at the end the whole state;
//  - unprivileged threads (uid 65534, or no capabilities in a user
//    namespace) must get EPERM for every write;
//  - a listener checks every event of the "events" groups.
//
// With --traffic it is instead a packet generator (traffic.cpp).
//
// The run is reproducible from its seed as far as one thread's choices go
// (threads and packets interleave as they will): STRESS_SEED=N.
#include <arpa/inet.h>
#include <endian.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/ila_hook.h>
#include <linux/ila_map.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>

#include "engine.h"
#include "ila_notation.h"
#include "ops.h"

namespace stress {

int run_traffic(int argc, char **argv);

namespace {

std::atomic<bool> g_stop{false};
std::atomic<bool> g_others_done{false};

struct Config {
	std::uint64_t seed = 0;
	std::string name = "ila_stress";
	unsigned secs = 30;
	unsigned chaos = 2;
	unsigned unpriv = 1;
	bool model = true;
	bool listener = true;
	bool role_unpriv = false;
	unsigned idents = 64;
	std::string expect_dir;
	// prefixes no hook may overlap (the topology, neighbour discovery,
	// the addresses only the test's own rules translate)
	std::vector<std::pair<Pfx, unsigned>> avoid;
};
Config g_cfg;

const std::vector<std::string> kChaosMaps = {"c0", "c1", "c2", "c3", "c4", "c5"};
const std::vector<std::string> kChaosHooks = {"ch0", "ch1", "ch2", "ch3", "ch4", "ch5", "ch6", "ch7"};
const std::vector<std::string> kModelMaps = {"m0", "m1", "m2", "m3", "m.big", "m_31-chars.abcdefghijklmnopqrs"};
const std::vector<std::string> kModelHooks = {"mh0", "mh1", "mh2", "mh3", "mh.4", "mh-5"};
// names no map or hook may have (uAPI: 1..31 of [A-Za-z0-9_.-])
const std::vector<std::string> kBadNames = {
	"", "a b", "a/b", "m0 ", "x\x01y", "\xc3\xa4rger", "caf\xe9", "\xff", "tab\tname", "semi;colon", "m0\x7f",
};

constexpr std::uint64_t kLocBase = 0x3333000000000000ULL;
// Requests in one datagram at most: the kernel answers them all before the
// socket is read, and an ack that does not fit the receive buffer is lost
// (ENOBUFS); 100 acks with the request quoted fit with room for a dump part.
constexpr unsigned kMaxBatch = 100;

// The genetlink core of 6.2 and later looks the operation up for a do or a
// dump request, so a DUMP request for a do-only command is refused
// (EOPNOTSUPP) before the permission check; 6.1 checks the permission
// first (EPERM). Set from uname() in main.
bool g_dump_op_before_perm = true;
constexpr std::uint32_t kDefaultMax = ILA_MAP_DEFAULT_MAX_ENTRIES;

Pfx pfx_of(std::uint64_t hi, std::uint64_t lo = 0)
{
	Pfx p{};
	hi = htobe64(hi);
	lo = htobe64(lo);
	std::memcpy(p.data(), &hi, 8);
	std::memcpy(p.data() + 8, &lo, 8);
	return p;
}

Pfx masked(Pfx p, unsigned len)
{
	for (unsigned bit = len; bit < 128; bit++)
		p[bit / 8] &= std::uint8_t(~(0x80 >> (bit % 8)));
	return p;
}

// Whether A/LA and B/LB have addresses in common (one contains the other).
bool overlaps(const Pfx &a, unsigned la, const Pfx &b, unsigned lb)
{
	const unsigned l = std::min(la, lb);
	return masked(a, l) == masked(b, l);
}

bool avoided(const Pfx &p, unsigned len)
{
	for (const auto &[q, l] : g_cfg.avoid)
		if (overlaps(p, len, q, l))
			return true;
	return false;
}

// The model's hooks take their source prefixes in kModelSpace/16, which no
// other thread's hook overlaps: two hooks of one point and priority with
// the same prefix are refused (EEXIST), and the model must know every hook
// that can collide with its own.
const Pfx kModelSpace = pfx_of(0xfd4d000000000000ULL);

// SIR prefix of the traffic, locator prefix, other addresses of the topology
const Pfx kSir = pfx_of(0x20010db800000003ULL);
const Pfx kLoc = pfx_of(0x3333000000000001ULL);
const Pfx kNet2 = pfx_of(0xfd00000000000002ULL);

int sole(const ErrSet &s)
{
	int found = -1;
	for (int e = 0; e < 256; e++)
		if (s.has(e)) {
			if (found >= 0)
				return -1;
			found = e;
		}
	return found;
}

bool wait_or_stop(unsigned ms)
{
	for (unsigned i = 0; i < ms / 10 && !g_stop; i++)
		std::this_thread::sleep_for(std::chrono::milliseconds(10));
	return !g_stop;
}

// ---- random requests ---------------------------------------------------------

struct Pools {
	const std::vector<std::string> *maps, *hooks;
};

constexpr unsigned kRandomNames = 24;

std::string pick_name(Rng &rng, const std::vector<std::string> &pool)
{
	if (rng.chance(4))
		return rng.pick(kBadNames);
	if (rng.chance(3)) {
		// a valid name of random characters, one of kRandomNames per
		// pool: the maps and hooks such names create stay far below
		// the per-netns limits, which the model does not expect to meet
		static const char cs[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-";
		Rng r(mix64(rng.below(kRandomNames) + 1));
		std::string s = pool[0].substr(0, 1) + "z";
		for (unsigned i = 0, n = unsigned(r.below(29)); i < n; i++)
			s += cs[r.below(sizeof(cs) - 1)];
		return s;
	}
	return rng.pick(pool);
}

std::uint64_t pick_ident(Rng &rng)
{
	if (rng.chance(85))
		return htobe64(std::uint64_t(rng.range(1, g_cfg.idents)));
	if (rng.chance(50))
		return rng.pick(std::vector<std::uint64_t>{0, ~0ULL, htobe64(1ULL << 63)});
	return rng.next();
}

std::uint64_t pick_locator(Rng &rng)
{
	if (rng.chance(85))
		return htobe64(kLocBase | std::uint64_t(rng.below(16)));
	return rng.next();
}

MapOp random_map_op(Rng &rng, const Pools &pool)
{
	MapOp op;
	static const std::vector<std::pair<std::uint8_t, unsigned>> w = {
		{ILA_MAP_CMD_NEWMAP, 8},   {ILA_MAP_CMD_DELMAP, 5},   {ILA_MAP_CMD_GETMAP, 6},
		{ILA_MAP_CMD_FLUSH, 3},	   {ILA_MAP_CMD_NEWENTRY, 30}, {ILA_MAP_CMD_DELENTRY, 10},
		{ILA_MAP_CMD_GETENTRY, 10}, {ILA_MAP_CMD_SWAP, 6},	   {ILA_MAP_CMD_RESET_COUNTERS, 3},
	};
	unsigned total = 0;
	for (auto &x : w)
		total += x.second;
	unsigned r = unsigned(rng.below(total));
	for (auto &x : w) {
		if (r < x.second) {
			op.cmd = x.first;
			break;
		}
		r -= x.second;
	}
	if (!rng.chance(3))
		op.name = pick_name(rng, *pool.maps);
	switch (op.cmd) {
	case ILA_MAP_CMD_NEWMAP:
		if (rng.chance(50))
			op.max = rng.pick(std::vector<std::uint32_t>{1, 2, 3, 5, 8, 100, 5000, kDefaultMax,
								   ILA_MAP_LIMIT_MAX_ENTRIES});
		op.notify = rng.chance(30);
		break;
	case ILA_MAP_CMD_GETMAP:
		op.dump = rng.chance(30);
		break;
	case ILA_MAP_CMD_NEWENTRY:
		if (!rng.chance(2))
			op.ident = pick_ident(rng);
		if (!rng.chance(2))
			op.locator = pick_locator(rng);
		if (rng.chance(50))
			op.csum = std::uint8_t(rng.below(ILA_MAP_CSUM_MAX + 1));
		op.replace = rng.chance(40);
		break;
	case ILA_MAP_CMD_DELENTRY:
	case ILA_MAP_CMD_GETENTRY:
		op.dump = op.cmd == ILA_MAP_CMD_GETENTRY && rng.chance(25);
		if (!op.dump && !rng.chance(2))
			op.ident = pick_ident(rng);
		break;
	case ILA_MAP_CMD_SWAP:
		if (!rng.chance(3))
			op.name2 = pick_name(rng, *pool.maps);
		break;
	}
	return op;
}

HookOp random_hook_op(Rng &rng, const Pools &pool)
{
	const bool model = pool.hooks->front()[0] == 'm';
	HookOp op;
	unsigned r = unsigned(rng.below(100));
	op.cmd = r < 50 ? ILA_HOOK_CMD_NEWHOOK : r < 80 ? ILA_HOOK_CMD_DELHOOK : ILA_HOOK_CMD_GETHOOK;
	if (op.cmd == ILA_HOOK_CMD_GETHOOK)
		op.dump = rng.chance(40);
	if (!op.dump && !rng.chance(3))
		op.name = pick_name(rng, *pool.hooks);
	if (op.cmd != ILA_HOOK_CMD_NEWHOOK)
		return op;
	if (!rng.chance(2))
		op.point = std::uint8_t(rng.below(4));
	if (op.point && rng.chance(40))
		op.translate = std::uint8_t(rng.chance(5) ? !point_src(*op.point) : point_src(*op.point));
	if (rng.chance(50)) {
		if (rng.chance(3))
			op.prio = rng.chance(50) ? INT_MIN : INT_MAX;
		else
			op.prio = rng.pick(std::vector<std::int32_t>{-250, 300, -400, -450, -200, 0, 100, INT_MIN + 1,
								   INT_MAX - 1, std::int32_t(rng.next())});
	}
	if (!rng.chance(2))
		op.pfx_len = std::uint8_t(rng.chance(70) ? 64 : rng.range(1, 64));
	// a prefix (with host bits now and then) that overlaps no --avoid
	// prefix; a short length may have none: then /64
	// (the model's source prefixes: a few in kModelSpace, so that they
	// collide now and then, or any there)
	auto in_model_space = [&](Pfx p) {
		Pfx m = masked(kModelSpace, 16);
		for (unsigned i = 2; i < 16; i++)
			m[i] = p[i];
		return m;
	};
	auto clash = [&](const Pfx &p, unsigned len) {
		return avoided(p, len) || (!model && overlaps(p, len, kModelSpace, 16));
	};
	auto pick_pfx = [&](unsigned len, bool src_pfx) -> std::optional<Pfx> {
		Pfx p = rng.pick(std::vector<Pfx>{kSir, kLoc, kNet2, pfx_of(rng.next(), rng.next())});
		if (model && src_pfx)
			p = in_model_space(rng.chance(60) ? pfx_of(0x20010db800000000ULL | rng.below(4)) : p);
		for (int i = 0; i < 100 && clash(p, len); i++)
			p = model && src_pfx ? in_model_space(pfx_of(rng.next(), rng.next())) : pfx_of(rng.next(), rng.next());
		if (clash(p, len))
			return std::nullopt;
		return rng.chance(5) ? p : masked(p, len);
	};
	const bool want_src = !rng.chance(2), want_dst = !rng.chance(3);
	std::optional<Pfx> src, dst;
	for (unsigned len = op.pfx_len.value_or(64);; len = 64) {
		src = pick_pfx(len, true);
		dst = pick_pfx(len, false);
		if (src && dst)
			break;
		if (op.pfx_len)
			op.pfx_len = 64;
	}
	if (want_src)
		op.src = src;
	if (rng.chance(50)) {
		op.map = pick_name(rng, *pool.maps);
		op.miss_drop = rng.chance(25);
		op.miss_notify = rng.chance(30);
		if (rng.chance(30))
			op.dir = std::uint8_t(rng.below(2));
		if (rng.chance(3))
			op.dst = dst;
		if (rng.chance(3))
			op.csum = std::uint8_t(rng.below(ILA_MAP_CSUM_MAX + 1));
	} else {
		if (want_dst)
			op.dst = dst;
		if (rng.chance(70))
			op.csum = std::uint8_t(rng.below(ILA_MAP_CSUM_MAX + 1));
		if (rng.chance(20))
			op.dir = std::uint8_t(op.csum == ILA_MAP_CSUM_NEUTRAL_MAP || rng.chance(20) ? rng.below(2) : 0);
		if (rng.chance(2))
			op.miss_drop = true;
	}
	op.replace = rng.chance(15);
	return op;
}

// ---- expectations without a model ------------------------------------------------

// What a well-formed request may get while other threads change the state.
Expect loose_expect(const MapOp &op, bool dumps_on_conn)
{
	ErrSet st = static_errors(op);
	if (!st.empty())
		return Expect{st};
	ErrSet e{0};
	switch (op.cmd) {
	case ILA_MAP_CMD_NEWMAP:
		e.add(Why::Exists);
		e.add(Why::Full);
		break;
	case ILA_MAP_CMD_DELMAP:
		e.add(Why::NoSuch);
		e.add(Why::InUse);
		break;
	case ILA_MAP_CMD_NEWENTRY:
		e.add(Why::NoSuch);
		e.add(Why::Exists);
		e.add(Why::Full);
		break;
	case ILA_MAP_CMD_GETMAP:
		if (op.dump) {
			if (dumps_on_conn)
				e.add(Why::DumpRunning);
			break;
		}
		e.add(Why::NoSuch);
		break;
	case ILA_MAP_CMD_GETENTRY:
		if (op.dump && dumps_on_conn)
			e.add(Why::DumpRunning);
		e.add(Why::NoSuch);
		break;
	case ILA_MAP_CMD_SWAP: // never waits for a dump of either map
		e.add(Why::NoSuch);
		break;
	default:
		e.add(Why::NoSuch);
	}
	return Expect{e};
}

Expect loose_expect(const HookOp &op, bool dumps_on_conn)
{
	ErrSet st = static_errors(op);
	if (!st.empty())
		return Expect{st};
	ErrSet e{0};
	switch (op.cmd) {
	case ILA_HOOK_CMD_NEWHOOK:
		// EEXIST: the name exists (without REPLACE), or another hook of
		// the point and priority has the prefix
		e.add(Why::Exists);
		if (op.replace) {
			e.add(Why::NoSuch);  // no hook NAME
			e.add(Why::Invalid); // it has another point or priority
		} else {
			e.add(Why::Full);
		}
		if (op.map)
			e.add(Why::NoSuch);
		break;
	case ILA_HOOK_CMD_GETHOOK:
		if (op.dump) {
			if (dumps_on_conn)
				e.add(Why::DumpRunning);
			break;
		}
		e.add(Why::NoSuch);
		break;
	default:
		e.add(Why::NoSuch);
	}
	return Expect{e};
}

// The expectation of a request after MUT, from SEMANTIC (what the request
// means in the state), for a privileged or unprivileged sender.
Expect final_expect(const Mutation &mut, bool writes, bool entry_read, bool unpriv, Expect semantic,
		    bool busy_dump = false)
{
	if (mut.kind == MutKind::Ignored || mut.kind == MutKind::Dropped)
		return Expect{ErrSet{0}};
	// genl core: family, header, command, permission (writes and entry
	// reads), dump/do, policy
	const bool denied = unpriv && (writes || entry_read);
	if (mut.kind == MutKind::Malformed) {
		if (mut.why == Why::BadFamily || mut.why == Why::BadHeader ||
		    (mut.why == Why::BadCmd && (!mut.dump_flag || g_dump_op_before_perm)))
			return Expect::of(mut.why);
		if (denied)
			return Expect::of(Why::Denied);
		if (mut.dump_flag)
			return Expect::of(Why::BadCmd);
		// a dump request meets the socket's running dump before the policy
		ErrSet pol = ErrSet::of(mut.why);
		if (busy_dump)
			pol.add(Why::DumpRunning);
		return Expect{pol};
	}
	if (denied)
		return Expect::of(Why::Denied);
	if (busy_dump) // whatever the request, the running dump comes first
		semantic.set.add(Why::DumpRunning);
	return semantic;
}

// ---- privileges ---------------------------------------------------------------

std::string cap_eff()
{
	std::ifstream f("/proc/thread-self/status");
	std::string line;
	while (std::getline(f, line))
		if (line.rfind("CapEff:", 0) == 0)
			return line.substr(7 + line.substr(7).find_first_not_of(" \t"));
	return "?";
}

// Drops the privileges of the calling thread (threads it starts inherit
// them): a real unprivileged uid where there is one to switch to, else
// (a user namespace that maps root only) every capability.
bool drop_privileges(std::string &how)
{
	if (syscall(SYS_setgroups, 0, nullptr) == 0 && syscall(SYS_setresgid, 65534, 65534, 65534) == 0 &&
	    syscall(SYS_setresuid, 65534, 65534, 65534) == 0) {
		how = "uid 65534";
	} else {
		__user_cap_header_struct h{_LINUX_CAPABILITY_VERSION_3, 0};
		__user_cap_data_struct d[2] = {};
		if (syscall(SYS_capset, &h, d) != 0) {
			how = std::string("capset: ") + std::strerror(errno);
			return false;
		}
		how = "uid " + std::to_string(getuid()) + " without capabilities";
	}
	std::string eff = cap_eff();
	if (eff.find_first_not_of('0') != std::string::npos) {
		how += ", but CapEff is " + eff;
		return false;
	}
	return true;
}

// ---- chaos and unprivileged workers -----------------------------------------

class Worker {
public:
	Worker(std::string who, bool unpriv, Pools pools)
		: rng_(seed_for(g_cfg.seed, g_cfg.name + "/" + who)), eng_(std::move(who), rng_), unpriv_(unpriv),
		  pools_(pools)
	{
	}

	void run();

private:
	Conn &conn()
	{
		for (auto &c : conns_)
			if (c->broken)
				c = eng_.open();
		while (conns_.size() < 2)
			conns_.push_back(eng_.open());
		return *conns_[rng_.below(conns_.size())];
	}
	PendingP request(bool malformed, bool last_ok, bool &is_map, bool dumps_on_conn);
	void one();
	void batch();
	void dump();
	void churn();
	void bulk_entries();
	void bulk_maps();
	void events();

	Rng rng_;
	Engine eng_;
	bool unpriv_;
	Pools pools_;
	std::vector<std::unique_ptr<Conn>> conns_;
	std::unique_ptr<Conn> listen_;
};

PendingP Worker::request(bool malformed, bool last_ok, bool &is_map, bool dumps_on_conn)
{
	is_map = rng_.chance(65);
	PendingP p;
	Mutation mut;
	if (is_map) {
		MapOp op = random_map_op(rng_, pools_);
		p = make_pending(op, rng_);
		mut = mutate(p->req, true, op.dump, malformed, last_ok, rng_);
		p->expect = final_expect(mut, map_cmd_writes(op.cmd), op.cmd == ILA_MAP_CMD_GETENTRY, unpriv_,
					 loose_expect(op, dumps_on_conn), op.dump && dumps_on_conn);
	} else {
		HookOp op = random_hook_op(rng_, pools_);
		p = make_pending(op, rng_);
		mut = mutate(p->req, false, op.dump, malformed, last_ok, rng_);
		p->expect = final_expect(mut, hook_cmd_writes(op.cmd), false, unpriv_, loose_expect(op, dumps_on_conn),
					 op.dump && dumps_on_conn);
	}
	p->what = mut.what;
	p->last_only = mut.last_only;
	if (mut.kind == MutKind::Ignored)
		p->mode = Answer::Ignored;
	else if (mut.kind == MutKind::Dropped)
		p->mode = Answer::Dropped;
	else if (mut.kind == MutKind::Malformed)
		p->reply_cmd = 0; // no data for a refused request
	return p;
}

void Worker::one()
{
	Conn &c = conn();
	bool is_map;
	std::vector<PendingP> b{request(rng_.chance(40), true, is_map, !c.dumps.empty())};
	// a dump left running on purpose sometimes
	eng_.exchange(c, b, rng_.chance(70));
}

void Worker::batch()
{
	Conn &c = conn();
	std::vector<PendingP> b;
	bool is_map;
	unsigned n = unsigned(rng_.range(2, 6));
	bool dump_seen = !c.dumps.empty();
	for (unsigned i = 0; i < n; i++) {
		auto p = request(rng_.chance(40), i + 1 == n, is_map, dump_seen);
		if (p->mode == Answer::Dump)
			dump_seen = true;
		b.push_back(p);
		if (p->last_only)
			break;
	}
	eng_.exchange(c, b, true);
}

void Worker::dump()
{
	Conn &c = conn();
	PendingP p;
	unsigned k = unsigned(rng_.below(3));
	if (k == 0) {
		MapOp op;
		op.cmd = ILA_MAP_CMD_GETMAP;
		op.dump = true;
		p = make_pending(op, rng_);
		p->expect = final_expect({}, false, false, unpriv_, loose_expect(op, !c.dumps.empty()), !c.dumps.empty());
	} else if (k == 1) {
		MapOp op;
		op.cmd = ILA_MAP_CMD_GETENTRY;
		op.dump = true;
		op.name = rng_.pick(*pools_.maps);
		p = make_pending(op, rng_);
		p->expect = final_expect({}, false, true, unpriv_, loose_expect(op, !c.dumps.empty()), !c.dumps.empty());
	} else {
		HookOp op;
		op.cmd = ILA_HOOK_CMD_GETHOOK;
		op.dump = true;
		p = make_pending(op, rng_);
		p->expect = final_expect({}, false, false, unpriv_, loose_expect(op, !c.dumps.empty()), !c.dumps.empty());
	}
	std::vector<PendingP> b{p};
	unsigned how = unsigned(rng_.below(10));
	eng_.exchange(c, b, how < 5);
	if (how >= 8) { // closed in the middle of the dump
		for (auto &x : conns_)
			if (x.get() == &c) {
				g_report.count_extra("sockets closed with a dump running", c.dumps.empty() ? 0 : 1);
				x = eng_.open();
				break;
			}
	}
}

void Worker::churn()
{
	if (conns_.empty())
		return;
	std::size_t i = rng_.below(conns_.size());
	if (rng_.chance(50))
		eng_.finish_dumps(*conns_[i]);
	else
		conns_[i] = eng_.open();
}

// Fills a map with many entries (resizes, multi-part dumps), or flushes it.
void Worker::bulk_entries()
{
	Conn &c = conn();
	std::vector<PendingP> b;
	const std::string name = rng_.pick(*pools_.maps);
	if (rng_.chance(25)) {
		MapOp op;
		op.cmd = ILA_MAP_CMD_FLUSH;
		op.name = name;
		b.push_back(make_pending(op, rng_));
		b.back()->expect = final_expect({}, true, false, unpriv_, loose_expect(op, false));
	} else {
		unsigned n = unsigned(rng_.range(50, kMaxBatch));
		for (unsigned i = 0; i < n; i++) {
			MapOp op;
			op.cmd = ILA_MAP_CMD_NEWENTRY;
			op.name = name;
			op.ident = rng_.chance(20) ? pick_ident(rng_) : rng_.next();
			op.locator = pick_locator(rng_);
			op.replace = rng_.chance(10);
			b.push_back(make_pending(op, rng_));
			b.back()->expect = final_expect({}, true, false, unpriv_, loose_expect(op, false));
		}
	}
	eng_.exchange(c, b, true);
}

// Creates and destroys many maps at once (the per-netns list).
void Worker::bulk_maps()
{
	Conn &c = conn();
	std::vector<PendingP> b;
	const bool create = rng_.chance(50);
	for (unsigned i = 0; i < 30; i++) {
		MapOp op;
		op.cmd = create ? ILA_MAP_CMD_NEWMAP : ILA_MAP_CMD_DELMAP;
		op.name = (*pools_.maps)[0] + "x" + std::to_string(i);
		if (create && rng_.chance(50))
			op.max = std::uint32_t(rng_.range(1, 100));
		b.push_back(make_pending(op, rng_));
		b.back()->expect = final_expect({}, true, false, unpriv_, loose_expect(op, false));
	}
	eng_.exchange(c, b, true);
}

// Unprivileged: a listener socket of its own (joining may be refused).
void Worker::events()
{
	if (!listen_) {
		listen_ = eng_.open(65536);
		for (std::uint32_t g : {g_fam.map.events_group, g_fam.hook.events_group}) {
			if (!g)
				continue;
			// GENL_MCAST_CAP_NET_ADMIN: misses tell which identifiers
			// are in use
			int e = listen_->sock->join(g);
			if (e != EPERM)
				eng_.fail(std::string("joining an events group without CAP_NET_ADMIN: ") +
					  (e ? std::strerror(e) : "allowed") + ", expected EPERM");
			g_report.count("join events group (unprivileged)", e);
		}
	}
	// whatever it receives must be well-formed
	for (;;) {
		long n = listen_->sock->recv(listen_->rx, 0);
		if (n == 0)
			return;
		if (n == -ENOBUFS) {
			g_report.count_extra("events lost (ENOBUFS)");
			continue;
		}
		if (n < 0) {
			eng_.fail(std::string("events recv: ") + std::strerror(int(-n)));
			return;
		}
		std::vector<Message> msgs;
		std::string problem;
		if (!split_datagram(listen_->rx.data(), std::size_t(n), msgs, problem)) {
			eng_.fail("event: " + problem);
			return;
		}
		g_report.count_extra("events read (unprivileged)", msgs.size());
	}
}

void Worker::run()
{
	std::string how = "privileged";
	if (unpriv_ && !g_cfg.role_unpriv && !drop_privileges(how)) {
		eng_.fail("cannot drop privileges: " + how);
		return;
	}
	if (unpriv_)
		g_report.note(eng_.who(), "unprivileged (" + how + ")");
	try {
		while (!g_stop) {
			unsigned r = unsigned(rng_.below(100));
			if (r < 50)
				one();
			else if (r < 62)
				batch();
			else if (r < 75)
				dump();
			else if (r < 80)
				churn();
			else if (r < 88)
				bulk_entries();
			else if (r < 90)
				bulk_maps();
			else if (unpriv_)
				events();
			else
				one();
		}
		for (auto &c : conns_)
			if (rng_.chance(50))
				eng_.finish_dumps(*c);
	} catch (const std::exception &e) {
		eng_.fail(std::string("exception: ") + e.what());
	}
	g_report.count_extra("ops of " + eng_.who(), eng_.ops());
}

// ---- listener ---------------------------------------------------------------

void listener()
{
	Rng rng(seed_for(g_cfg.seed, g_cfg.name + "/listener"));
	Engine eng("listener", rng);
	auto c = eng.open(65536);
	for (std::uint32_t g : {g_fam.map.events_group, g_fam.hook.events_group}) {
		if (!g)
			continue;
		if (int e = c->sock->join(g))
			eng.fail(std::string("joining an events group with CAP_NET_ADMIN: ") + std::strerror(e));
	}
	while (!g_stop) {
		long n = c->sock->recv(c->rx, 200);
		if (n == 0)
			continue;
		if (n == -ENOBUFS) {
			g_report.count_extra("events lost (ENOBUFS)");
			continue;
		}
		if (n < 0) {
			eng.fail(std::string("events recv: ") + std::strerror(int(-n)));
			return;
		}
		std::vector<Message> msgs;
		std::string problem;
		if (!split_datagram(c->rx.data(), std::size_t(n), msgs, problem)) {
			eng.fail("event: " + problem);
			continue;
		}
		for (const auto &m : msgs) {
			std::uint8_t cmd;
			std::vector<AttrView> at;
			if (!genl_attrs(m, cmd, at, problem)) {
				eng.fail("event: " + problem);
				continue;
			}
			if (m.hdr.nlmsg_type == g_fam.map.id)
				problem = check_map_event(cmd, at);
			else if (m.hdr.nlmsg_type == g_fam.hook.id)
				problem = check_hook_event(cmd, at);
			else
				problem = "event of type " + std::to_string(m.hdr.nlmsg_type);
			if (!problem.empty())
				eng.fail("event: " + problem + ": " + hex(m.payload.data(), m.payload.size(), 300));
			g_report.count((m.hdr.nlmsg_type == g_fam.map.id ? map_label(cmd, false) : hook_label(cmd, false)) +
					       " event",
				       0);
		}
	}
}

// ---- the model --------------------------------------------------------------

struct MTable {
	std::uint32_t max = kDefaultMax;
	std::map<std::uint64_t, std::pair<std::uint64_t, std::uint8_t>> entries; // ident -> locator, mode
	std::uint64_t version = 0;
};

struct MMap {
	std::shared_ptr<MTable> tbl;
	bool notify = false;
	int refs = 0; // hooks using it
};

class Model {
public:
	Model() : rng_(seed_for(g_cfg.seed, g_cfg.name + "/model")), eng_("model", rng_) {}
	void run();

private:
	Expect expect(const MapOp &op, const Conn &c);
	Expect expect(const HookOp &op, const Conn &c);
	void apply(const MapOp &op, int err);
	void apply(const HookOp &op, int err);
	PendingP pending(const MapOp &op, const Conn &c, bool malformed);
	PendingP pending(const HookOp &op, const Conn &c, bool malformed);
	MapOp random_map();
	HookOp random_hook();
	bool do_one(Conn &c, bool malformed);
	void batch(Conn &c);
	void fill(Conn &c, const std::string &name, unsigned n);
	void swap_under_dump();
	bool verify(bool final);
	void write_expect();
	Conn &conn()
	{
		for (auto &c : conns_)
			if (c->broken)
				close_conn(c);
		while (conns_.size() < 2)
			conns_.push_back(eng_.open());
		return *conns_[rng_.below(conns_.size())];
	}
	void close_conn(std::unique_ptr<Conn> &c);
	void diverged(const std::string &why)
	{
		if (!diverged_)
			eng_.fail("the model no longer matches the kernel (" + why + "); model checks stop here");
		diverged_ = true;
	}

	Rng rng_;
	Engine eng_;
	std::map<std::string, std::shared_ptr<MMap>> maps_;
	std::map<std::string, HookState> hooks_;
	std::vector<std::unique_ptr<Conn>> conns_;
	std::unique_ptr<Conn> verify_conn_;
	bool diverged_ = false;
	unsigned verified_ = 0, verify_skipped_ = 0;
};

Expect Model::expect(const MapOp &op, const Conn &c)
{
	ErrSet st = static_errors(op);
	if (!st.empty())
		return Expect{st};
	auto find = [&](const std::optional<std::string> &n) -> std::shared_ptr<MMap> {
		auto it = maps_.find(*n);
		return it == maps_.end() ? nullptr : it->second;
	};
	auto m = op.name ? find(op.name) : nullptr;
	switch (op.cmd) {
	case ILA_MAP_CMD_NEWMAP:
		return Expect::of(m ? Why::Exists : Why::Ok);
	case ILA_MAP_CMD_DELMAP:
		return Expect::of(!m ? Why::NoSuch : m->refs ? Why::InUse : Why::Ok);
	case ILA_MAP_CMD_GETMAP:
		if (op.dump) {
			Expect e = Expect::of(Why::Ok);
			if (!c.dumps.empty())
				e.set.add(Why::DumpRunning);
			return e;
		}
		return Expect::of(m ? Why::Ok : Why::NoSuch);
	case ILA_MAP_CMD_FLUSH:
	case ILA_MAP_CMD_RESET_COUNTERS:
		return Expect::of(m ? Why::Ok : Why::NoSuch);
	case ILA_MAP_CMD_NEWENTRY: {
		if (!m)
			return Expect::of(Why::NoSuch);
		const bool has = m->tbl->entries.count(*op.ident);
		if (op.replace && has)
			return Expect::of(Why::Ok);
		ErrSet e;
		if (m->tbl->entries.size() >= m->tbl->max)
			e.add(Why::Full);
		if (has)
			e.add(Why::Exists);
		return Expect{e.empty() ? ErrSet{0} : e};
	}
	case ILA_MAP_CMD_DELENTRY:
		return Expect::of(m && m->tbl->entries.count(*op.ident) ? Why::Ok : Why::NoSuch);
	case ILA_MAP_CMD_GETENTRY:
		if (op.dump) {
			if (!m)
				return Expect::of(Why::NoSuch);
			Expect e = Expect::of(Why::Ok);
			if (!c.dumps.empty())
				e.set.add(Why::DumpRunning);
			return e;
		}
		return Expect::of(m && m->tbl->entries.count(*op.ident) ? Why::Ok : Why::NoSuch);
	case ILA_MAP_CMD_SWAP: {
		auto b = find(op.name2);
		if (!m || !b)
			return Expect::of(Why::NoSuch);
		// dumps of either map, running or left on a closed socket, go
		// on walking the tables they started on: no EBUSY
		return Expect::of(Why::Ok);
	}
	}
	return Expect::of(Why::BadCmd);
}

Expect Model::expect(const HookOp &op, const Conn &c)
{
	ErrSet st = static_errors(op);
	const bool map_missing = op.map && !maps_.count(*op.map);
	const bool exists = op.name && hooks_.count(*op.name);
	if (!st.empty())
		return Expect{st};
	switch (op.cmd) {
	case ILA_HOOK_CMD_NEWHOOK: {
		// ila_hook.c: the request is checked (the map looked up) before
		// the netns's hooks are: then NAME, its point and priority (a
		// replace keeps them), the limit, and the prefix, which no other
		// hook of the point and priority may have
		if (map_missing)
			return Expect::of(Why::NoSuch);
		if (op.replace && !exists)
			return Expect::of(Why::NoSuch);
		if (!op.replace && exists)
			return Expect::of(Why::Exists);
		const HookState h = effective(op);
		if (exists) {
			const HookState &old = hooks_.at(*op.name);
			if (old.point != h.point || old.prio != h.prio)
				return Expect::of(Why::Invalid);
		}
		for (const auto &[name, o] : hooks_)
			if (name != *op.name && o.point == h.point && o.prio == h.prio && o.pfx_len == h.pfx_len &&
			    masked(o.src, o.pfx_len) == masked(h.src, h.pfx_len))
				return Expect::of(Why::Exists);
		return Expect::of(Why::Ok);
	}
	case ILA_HOOK_CMD_GETHOOK:
		if (op.dump) {
			Expect e = Expect::of(Why::Ok);
			if (!c.dumps.empty())
				e.set.add(Why::DumpRunning);
			return e;
		}
		[[fallthrough]];
	default:
		return Expect::of(exists ? Why::Ok : Why::NoSuch);
	}
}

void Model::apply(const MapOp &op, int err)
{
	if (err)
		return;
	auto m = op.name && maps_.count(*op.name) ? maps_[*op.name] : nullptr;
	switch (op.cmd) {
	case ILA_MAP_CMD_NEWMAP: {
		auto nm = std::make_shared<MMap>();
		nm->tbl = std::make_shared<MTable>();
		nm->tbl->max = op.max.value_or(kDefaultMax);
		nm->notify = op.notify;
		maps_[*op.name] = nm;
		break;
	}
	case ILA_MAP_CMD_DELMAP:
		maps_.erase(*op.name);
		break;
	case ILA_MAP_CMD_FLUSH:
		m->tbl->entries.clear();
		m->tbl->version++;
		break;
	case ILA_MAP_CMD_NEWENTRY: {
		auto &ents = m->tbl->entries;
		auto it = ents.find(*op.ident);
		std::uint8_t mode = op.csum.value_or(ILA_MAP_CSUM_ADJUST_TRANSPORT);
		if (it != ents.end() && !op.csum)
			mode = it->second.second; // replace keeps the mode
		ents[*op.ident] = {*op.locator, mode};
		m->tbl->version++;
		break;
	}
	case ILA_MAP_CMD_DELENTRY:
		m->tbl->entries.erase(*op.ident);
		m->tbl->version++;
		break;
	case ILA_MAP_CMD_SWAP: {
		auto b = maps_[*op.name2];
		std::swap(m->tbl, b->tbl);
		break;
	}
	}
}

void Model::apply(const HookOp &op, int err)
{
	if (err || op.cmd == ILA_HOOK_CMD_GETHOOK)
		return;
	auto it = hooks_.find(*op.name);
	if (it != hooks_.end() && !it->second.map.empty())
		maps_[it->second.map]->refs--;
	if (op.cmd == ILA_HOOK_CMD_DELHOOK) {
		hooks_.erase(it);
		return;
	}
	HookState h = effective(op);
	hooks_[*op.name] = h;
	if (!h.map.empty())
		maps_[h.map]->refs++;
}

PendingP Model::pending(const MapOp &op, const Conn &c, bool malformed)
{
	PendingP p = make_pending(op, rng_);
	Mutation mut = mutate(p->req, true, op.dump, malformed, true, rng_);
	p->expect = final_expect(mut, map_cmd_writes(op.cmd), false, false, expect(op, c), op.dump && !c.dumps.empty());
	p->what = mut.what;
	p->last_only = mut.last_only;
	if (mut.kind == MutKind::Ignored)
		p->mode = Answer::Ignored;
	else if (mut.kind == MutKind::Dropped)
		p->mode = Answer::Dropped;
	else if (mut.kind == MutKind::Malformed)
		p->reply_cmd = 0;
	if (mut.kind != MutKind::None || !op.name)
		return p;
	// compare what comes back with the model
	auto it = maps_.find(*op.name);
	if (op.cmd == ILA_MAP_CMD_GETMAP && !op.dump && it != maps_.end()) {
		MapInfo want{*op.name, std::uint32_t(it->second->tbl->entries.size()), it->second->tbl->max,
			     std::uint32_t(it->second->refs), it->second->notify};
		p->check = [want](const Message &, std::uint8_t, const std::vector<AttrView> &at) {
			MapInfo got;
			std::string s = check_map_reply(at, &got);
			if (!s.empty())
				return s;
			if (got.name != want.name || got.entries != want.entries || got.max != want.max ||
			    got.rules != want.rules || got.notify != want.notify)
				return "map " + got.name + ": entries " + std::to_string(got.entries) + " max " +
				       std::to_string(got.max) + " rules " + std::to_string(got.rules) + " notify " +
				       std::to_string(got.notify) + ", the model has " + std::to_string(want.entries) +
				       " / " + std::to_string(want.max) + " / " + std::to_string(want.rules) + " / " +
				       std::to_string(want.notify);
			return std::string();
		};
	} else if (op.cmd == ILA_MAP_CMD_GETENTRY && !op.dump && it != maps_.end()) {
		auto e = it->second->tbl->entries.find(*op.ident);
		if (e != it->second->tbl->entries.end()) {
			auto want = e->second;
			std::uint64_t ident = *op.ident;
			p->check = [want, ident](const Message &, std::uint8_t, const std::vector<AttrView> &at) {
				EntryInfo got;
				std::string s = check_entry_reply(at, &got);
				if (!s.empty())
					return s;
				if (got.ident != ident || got.locator != want.first || got.csum != want.second)
					return std::string("entry differs from the model");
				return std::string();
			};
		}
	} else if (op.cmd == ILA_MAP_CMD_GETENTRY && op.dump && it != maps_.end()) {
		auto tbl = it->second->tbl;
		auto snapshot = tbl->entries;
		const std::uint64_t v0 = tbl->version;
		p->on_done = [this, tbl, snapshot, v0](Pending &d) {
			std::set<std::uint64_t> seen;
			bool dup = false;
			for (const auto &m : d.data) {
				std::uint8_t cmd;
				std::vector<AttrView> at;
				std::string s;
				EntryInfo e;
				genl_attrs(m, cmd, at, s);
				if (!check_entry_reply(at, &e).empty())
					return; // reported by the engine
				dup |= !seen.insert(e.ident).second;
				if (!d.intr && tbl->version == v0) {
					auto it2 = snapshot.find(e.ident);
					if (it2 == snapshot.end() || it2->second.first != e.locator ||
					    it2->second.second != e.csum)
						eng_.fail("entry dump: an entry the table does not have (or with other values): " +
							  hex(reinterpret_cast<const std::uint8_t *>(&e.ident), 8));
				}
			}
			if (dup && !d.intr)
				eng_.fail("entry dump: an entry twice without NLM_F_DUMP_INTR");
			if (!d.intr && tbl->version == v0 && seen.size() != snapshot.size())
				eng_.fail("entry dump: " + std::to_string(seen.size()) + " entries, the table has " +
					  std::to_string(snapshot.size()));
		};
	}
	return p;
}

PendingP Model::pending(const HookOp &op, const Conn &c, bool malformed)
{
	PendingP p = make_pending(op, rng_);
	Mutation mut = mutate(p->req, false, op.dump, malformed, true, rng_);
	p->expect = final_expect(mut, hook_cmd_writes(op.cmd), false, false, expect(op, c), op.dump && !c.dumps.empty());
	p->what = mut.what;
	p->last_only = mut.last_only;
	if (mut.kind == MutKind::Ignored)
		p->mode = Answer::Ignored;
	else if (mut.kind == MutKind::Dropped)
		p->mode = Answer::Dropped;
	else if (mut.kind == MutKind::Malformed)
		p->reply_cmd = 0;
	if (mut.kind == MutKind::None && op.cmd == ILA_HOOK_CMD_GETHOOK && !op.dump && op.name &&
	    hooks_.count(*op.name)) {
		HookState want = hooks_[*op.name];
		p->check = [want](const Message &, std::uint8_t, const std::vector<AttrView> &at) {
			HookState got;
			std::string s = check_hook_reply(at, &got, nullptr);
			if (!s.empty())
				return s;
			return got == want ? std::string() : "hook " + got.str() + ", the model has " + want.str();
		};
	}
	return p;
}

MapOp Model::random_map()
{
	MapOp op = random_map_op(rng_, Pools{&kModelMaps, &kModelHooks});
	// model maps are small enough to be hit by max-entries now and then
	if (op.cmd == ILA_MAP_CMD_NEWMAP && op.max && *op.max > 100 && *op.max != 5000 && rng_.chance(50))
		op.max = std::uint32_t(rng_.range(1, 12));
	return op;
}

HookOp Model::random_hook() { return random_hook_op(rng_, Pools{&kModelMaps, &kModelHooks}); }

bool Model::do_one(Conn &c, bool malformed)
{
	const bool is_map = rng_.chance(70);
	MapOp mop;
	HookOp hop;
	PendingP p;
	if (is_map) {
		mop = random_map();
		p = pending(mop, c, malformed);
	} else {
		hop = random_hook();
		p = pending(hop, c, malformed);
	}
	std::vector<PendingP> b{p};
	const bool finish = rng_.chance(80);
	const unsigned before = eng_.fails();
	// An entry dump left running on C is read to its end in this exchange,
	// after the kernel has carried out this request: the table it walks
	// may change under it before apply() below records the change.
	if (is_map && !c.dumps.empty() && mop.name && maps_.count(*mop.name) &&
	    (mop.cmd == ILA_MAP_CMD_NEWENTRY || mop.cmd == ILA_MAP_CMD_DELENTRY || mop.cmd == ILA_MAP_CMD_FLUSH))
		maps_[*mop.name]->tbl->version++;
	eng_.exchange(c, b, finish);
	if (eng_.fails() != before)
		diverged("after " + p->label);
	if (p->what.empty()) {
		if (is_map)
			apply(mop, p->err);
		else
			apply(hop, p->err);
		// the answers the model predicted exactly (a miss failed above)
		if (!is_map && hop.cmd == ILA_HOOK_CMD_NEWHOOK && p->err >= 0)
			g_report.count(std::string("model's NEWHOOK") + (hop.replace ? " REPLACE" : "") + " (exact)",
				       p->err);
	}
	return true;
}

// Several requests in one datagram, each predicted from the state the
// ones before it leave (only requests whose outcome is certain).
void Model::batch(Conn &c)
{
	std::vector<PendingP> b;
	unsigned n = unsigned(rng_.range(2, 8));
	for (unsigned i = 0; i < n; i++) {
		MapOp op = random_map();
		if (op.cmd == ILA_MAP_CMD_SWAP || op.dump || op.cmd == ILA_MAP_CMD_NEWMAP ||
		    op.cmd == ILA_MAP_CMD_DELMAP)
			continue;
		PendingP p = pending(op, c, rng_.chance(30));
		const int e = sole(p->expect.set);
		// only requests whose effect is certain: success, or failure
		if (e < 0 && p->expect.set.has(0))
			continue;
		if (p->what.empty() && e == 0)
			apply(op, 0);
		b.push_back(p);
		if (p->last_only)
			break;
	}
	if (b.empty())
		return;
	const unsigned before = eng_.fails();
	eng_.exchange(c, b, true);
	if (eng_.fails() != before)
		diverged("after a batch");
}

// Adds N entries to the model map NAME (creating it), in large batches.
void Model::fill(Conn &c, const std::string &name, unsigned n)
{
	if (!maps_.count(name)) {
		MapOp op;
		op.cmd = ILA_MAP_CMD_NEWMAP;
		op.name = name;
		op.max = 100000;
		PendingP p = pending(op, c, false);
		std::vector<PendingP> b{p};
		eng_.exchange(c, b, true);
		apply(op, p->err);
		if (p->err)
			return;
	}
	while (n) {
		std::vector<PendingP> b;
		for (unsigned i = 0; i < kMaxBatch && n; i++, n--) {
			MapOp op;
			op.cmd = ILA_MAP_CMD_NEWENTRY;
			op.name = name;
			op.ident = rng_.next();
			op.locator = pick_locator(rng_);
			op.csum = std::uint8_t(rng_.below(ILA_MAP_CSUM_MAX + 1));
			PendingP p = pending(op, c, false);
			int e = sole(p->expect.set);
			if (e < 0)
				continue;
			apply(op, e);
			b.push_back(p);
		}
		const unsigned before = eng_.fails();
		eng_.exchange(c, b, true);
		if (eng_.fails() != before) {
			diverged("filling " + name);
			return;
		}
	}
}

// An entry dump of a large map left unfinished; the map is swapped,
// changed or destroyed under it; then the dump is read to its end. The
// dump must end well (the memory it walks stays valid) and, when the
// table it started on was not changed, hold exactly that table.
void Model::swap_under_dump()
{
	Conn &c = conn();
	if (!c.dumps.empty() && !eng_.finish_dumps(c))
		return;
	const std::string a = "m.big", b = rng_.pick(std::vector<std::string>{"m0", "m1", "m2"});
	std::size_t have = maps_.count(a) ? maps_[a]->tbl->entries.size() : 0;
	if (have < 3000 || (maps_.count(a) && maps_[a]->tbl->max < 5000)) {
		if (maps_.count(a) && maps_[a]->tbl->max < 5000)
			return;
		fill(c, a, unsigned(3000 - have));
	}
	if (!maps_.count(a) || maps_[a]->tbl->entries.size() < 3000 || diverged_)
		return;
	// a dump on a socket with a small buffer: parts of ~180 entries, so it
	// is surely not finished after the first read
	auto d = eng_.open(16384);
	MapOp op;
	op.cmd = ILA_MAP_CMD_GETENTRY;
	op.dump = true;
	op.name = a;
	PendingP p = pending(op, *d, false);
	p->req.flags |= NLM_F_ACK; // no benign change that matters here
	std::vector<PendingP> batch{p};
	eng_.exchange(*d, batch, false);
	if (p->err != 0 || p->done) {
		if (p->err)
			diverged("the entry dump did not start");
		return;
	}
	g_report.count_extra("dumps left open across swap/delete/flush");
	// swap it with another map (creating it if needed)
	if (!maps_.count(b)) {
		MapOp nm;
		nm.cmd = ILA_MAP_CMD_NEWMAP;
		nm.name = b;
		PendingP q = pending(nm, c, false);
		std::vector<PendingP> x{q};
		eng_.exchange(c, x, true);
		apply(nm, q->err);
	}
	MapOp sw;
	sw.cmd = ILA_MAP_CMD_SWAP;
	sw.name = a;
	sw.name2 = b;
	PendingP s = pending(sw, c, false);
	s->req.flags |= NLM_F_ACK;
	std::vector<PendingP> x{s};
	const unsigned before = eng_.fails();
	eng_.exchange(c, x, true);
	if (eng_.fails() != before) {
		diverged("swap under a dump");
		return;
	}
	apply(sw, s->err);
	// then do something to the table being walked (now b's if swapped)
	const std::string holder = s->err == 0 ? b : a;
	MapOp after;
	after.name = holder;
	switch (rng_.below(4)) {
	case 0:
		after.cmd = maps_[holder]->refs ? ILA_MAP_CMD_FLUSH : ILA_MAP_CMD_DELMAP;
		break;
	case 1:
		after.cmd = ILA_MAP_CMD_FLUSH;
		break;
	case 2:
		after.cmd = ILA_MAP_CMD_NEWENTRY;
		after.ident = rng_.next();
		after.locator = pick_locator(rng_);
		break;
	default:
		after.cmd = ILA_MAP_CMD_RESET_COUNTERS;
		break;
	}
	PendingP q = pending(after, c, false);
	std::vector<PendingP> y{q};
	eng_.exchange(c, y, true);
	apply(after, q->err);
	// the rest of the dump
	eng_.finish_dumps(*d);
	g_report.count_extra("swap under dump: swap " + std::string(s->err ? "refused" : "done") + ", then " +
			     map_label(after.cmd, false));
}

void Model::close_conn(std::unique_ptr<Conn> &c)
{
	c = eng_.open(); // its dumps end with the socket
}

// Reads the whole state of the model's names and compares it.
bool Model::verify(bool final)
{
	if (diverged_)
		return false;
	if (!verify_conn_) {
		verify_conn_ = eng_.open(65536);
		MapOp warm;
		warm.cmd = ILA_MAP_CMD_GETMAP;
		warm.dump = true;
		PendingP p = make_pending(warm, rng_);
		p->expect = Expect::of(Why::Ok);
		std::vector<PendingP> b{p};
		eng_.exchange(*verify_conn_, b, true);
	}
	Conn &c = *verify_conn_;
	const unsigned before = eng_.fails();
	for (int attempt = 0; attempt < (final ? 10 : 2); attempt++) {
		MapOp mo;
		mo.cmd = ILA_MAP_CMD_GETMAP;
		mo.dump = true;
		HookOp ho;
		ho.cmd = ILA_HOOK_CMD_GETHOOK;
		ho.dump = true;
		PendingP pm = make_pending(mo, rng_), ph = make_pending(ho, rng_);
		pm->expect = ph->expect = Expect::of(Why::Ok);
		std::vector<PendingP> b1{pm};
		eng_.exchange(c, b1, true);
		std::vector<PendingP> b2{ph};
		eng_.exchange(c, b2, true);
		if (eng_.fails() != before)
			return false;
		// a list walk that spans datagrams may skip or repeat names
		// other threads add or remove: compare single-datagram dumps only
		if (pm->datagrams > 1 || ph->datagrams > 1) {
			if (final)
				std::this_thread::sleep_for(std::chrono::milliseconds(100));
			continue;
		}
		std::map<std::string, MapInfo> kmaps;
		for (const auto &m : pm->data) {
			std::uint8_t cmd;
			std::vector<AttrView> at;
			std::string s;
			MapInfo mi;
			genl_attrs(m, cmd, at, s);
			check_map_reply(at, &mi);
			if (!mi.name.empty() && mi.name[0] == 'm' && !kmaps.emplace(mi.name, mi).second)
				eng_.fail("map " + mi.name + " listed twice");
		}
		std::map<std::string, HookState> khooks;
		for (const auto &m : ph->data) {
			std::uint8_t cmd;
			std::vector<AttrView> at;
			std::string s, name;
			HookState h;
			genl_attrs(m, cmd, at, s);
			check_hook_reply(at, &h, &name);
			if (!name.empty() && name[0] == 'm' && !khooks.emplace(name, h).second)
				eng_.fail("hook " + name + " listed twice");
		}
		for (const auto &[name, mm] : maps_) {
			auto it = kmaps.find(name);
			if (it == kmaps.end()) {
				eng_.fail("map " + name + " is in the model, not in the kernel");
				continue;
			}
			const MapInfo &k = it->second;
			if (k.entries != mm->tbl->entries.size() || k.max != mm->tbl->max || k.rules != unsigned(mm->refs) ||
			    k.notify != mm->notify)
				eng_.fail("map " + name + ": kernel entries " + std::to_string(k.entries) + " max " +
					  std::to_string(k.max) + " rules " + std::to_string(k.rules) + ", model " +
					  std::to_string(mm->tbl->entries.size()) + " " + std::to_string(mm->tbl->max) + " " +
					  std::to_string(mm->refs));
			kmaps.erase(it);
		}
		for (const auto &[name, k] : kmaps)
			eng_.fail("map " + name + " is in the kernel, not in the model");
		for (const auto &[name, h] : hooks_) {
			auto it = khooks.find(name);
			if (it == khooks.end())
				eng_.fail("hook " + name + " is in the model, not in the kernel");
			else if (!(it->second == h))
				eng_.fail("hook " + name + ": kernel " + it->second.str() + ", model " + h.str());
			if (it != khooks.end())
				khooks.erase(it);
		}
		for (const auto &[name, h] : khooks)
			eng_.fail("hook " + name + " is in the kernel, not in the model");
		// every map's entries
		for (const auto &[name, mm] : maps_) {
			for (int tries = 0; tries < 5; tries++) {
				MapOp eo;
				eo.cmd = ILA_MAP_CMD_GETENTRY;
				eo.dump = true;
				eo.name = name;
				PendingP pe = make_pending(eo, rng_);
				pe->expect = Expect::of(Why::Ok);
				std::vector<PendingP> b3{pe};
				eng_.exchange(c, b3, true);
				if (pe->intr)
					continue;
				std::map<std::uint64_t, std::pair<std::uint64_t, std::uint8_t>> got;
				for (const auto &m : pe->data) {
					std::uint8_t cmd;
					std::vector<AttrView> at;
					std::string s;
					EntryInfo e;
					genl_attrs(m, cmd, at, s);
					check_entry_reply(at, &e);
					if (!got.emplace(e.ident, std::make_pair(e.locator, e.csum)).second)
						eng_.fail("map " + name + ": an entry twice in a dump without NLM_F_DUMP_INTR");
				}
				if (got != mm->tbl->entries)
					eng_.fail("map " + name + ": the kernel has " + std::to_string(got.size()) +
						  " entries, the model " + std::to_string(mm->tbl->entries.size()) +
						  (got.size() == mm->tbl->entries.size() ? " (with other values)" : ""));
				break;
			}
		}
		verified_++;
		if (eng_.fails() != before)
			diverged("verify");
		return eng_.fails() == before;
	}
	verify_skipped_++;
	if (final)
		eng_.fail("could not read the map and hook lists in one datagram in 10 tries");
	return false;
}

// The final state of the model's names, as `ilactl map list` (without
// counters), `ilactl map show NAME` and the hook list print them.
void Model::write_expect()
{
	const std::string d = g_cfg.expect_dir;
	std::ofstream maps(d + "/maps"), hooks(d + "/hooks");
	std::vector<std::string> lines;
	for (const auto &[name, mm] : maps_) {
		lines.push_back(name + " entries " + std::to_string(mm->tbl->entries.size()) + " max-entries " +
				std::to_string(mm->tbl->max) + " rules " + std::to_string(mm->refs) +
				(mm->notify ? " notify-miss" : ""));
		std::vector<std::string> ents;
		for (const auto &[id, e] : mm->tbl->entries)
			ents.push_back(ila::format_half(be64toh(id)) + " " + ila::format_half(be64toh(e.first)) +
				       " csum-mode " + std::string(ila::csum_mode_name(e.second)));
		std::sort(ents.begin(), ents.end());
		std::ofstream f(d + "/entries." + name);
		for (const auto &l : ents)
			f << l << "\n";
	}
	std::sort(lines.begin(), lines.end());
	for (const auto &l : lines)
		maps << l << "\n";
	lines.clear();
	for (const auto &[name, h] : hooks_)
		lines.push_back(name + " " + point_name(h.point) + " " + std::to_string(h.prio) + " " +
				(h.map.empty() ? "static" : h.map));
	std::sort(lines.begin(), lines.end());
	for (const auto &l : lines)
		hooks << l << "\n";
}

void Model::run()
{
	try {
		unsigned n = 0;
		while (!g_stop) {
			if (diverged_) {
				wait_or_stop(1000);
				continue;
			}
			Conn &c = conn();
			unsigned r = unsigned(rng_.below(100));
			if (r < 65)
				do_one(c, rng_.chance(30));
			else if (r < 80)
				batch(c);
			else if (r < 85 && !c.dumps.empty())
				eng_.finish_dumps(c);
			else if (r < 88)
				close_conn(conns_[rng_.below(conns_.size())]);
			else if (r < 89)
				swap_under_dump();
			else
				do_one(c, false);
			if (++n % 100 == 0)
				verify(false);
		}
		// the end: no running dumps, the others stopped, then compare all
		for (auto &c : conns_)
			if (!c->dumps.empty())
				eng_.finish_dumps(*c);
		while (!g_others_done)
			std::this_thread::sleep_for(std::chrono::milliseconds(20));
		if (!diverged_ && verify(true))
			g_report.note("model", std::to_string(maps_.size()) + " maps, " + std::to_string(hooks_.size()) +
						       " hooks: kernel state equals the model (" +
						       std::to_string(verified_) + " full comparisons)");
		if (!g_cfg.expect_dir.empty())
			write_expect();
	} catch (const std::exception &e) {
		eng_.fail(std::string("exception: ") + e.what());
	}
	g_report.count_extra("ops of model", eng_.ops());
}

// ---- main -----------------------------------------------------------------------

void usage()
{
	std::puts(
		"usage: ila_stress [--seed N] [--secs S] [--name NAME] [--threads N] [--unpriv-threads N]\n"
		"                  [--no-model] [--no-listener] [--role admin|unpriv] [--idents N]\n"
		"                  [--expect-out DIR]\n"
		"                  [--avoid PREFIX/LEN,...]   (no hook prefix overlaps these)\n"
		"       ila_stress --traffic ...        (a packet generator; --traffic --help)\n"
		"       ila_stress --table              (the errno table)\n"
		"TEST TOOL: random valid and malformed ILA_MAP / ILA_HOOK requests in the current netns,\n"
		"checked against the documented answers and a model. Exit 0: no failure.\n"
		"Environment: STRESS_SEED (default --seed).");
}

void print_table()
{
	for (const auto &row : kExpect) {
		ErrSet s;
		for (int e : row.errnos)
			s.add(e);
		std::printf("%-13s %-16s %s\n", why_name(row.why), s.str().c_str(), row.what);
	}
}

bool parse_uint(const char *s, std::uint64_t &v)
{
	char *end;
	errno = 0;
	v = std::strtoull(s, &end, 0);
	return s[0] && !*end && !errno && s[0] != '-';
}

} // namespace

int main_stress(int argc, char **argv)
{
	bool have_seed = false;
	if (const char *s = std::getenv("STRESS_SEED"); s && *s) {
		if (!parse_uint(s, g_cfg.seed)) {
			std::fprintf(stderr, "ila_stress: STRESS_SEED \"%s\" is not a number\n", s);
			return 2;
		}
		have_seed = true;
	}
	for (int i = 1; i < argc; i++) {
		std::string a = argv[i];
		auto val = [&]() -> const char * {
			if (i + 1 >= argc) {
				std::fprintf(stderr, "ila_stress: %s needs a value\n", a.c_str());
				std::exit(2);
			}
			return argv[++i];
		};
		std::uint64_t v;
		auto num = [&](const char *opt) {
			if (!parse_uint(val(), v)) {
				std::fprintf(stderr, "ila_stress: %s: not a number\n", opt);
				std::exit(2);
			}
			return v;
		};
		if (a == "--seed") {
			g_cfg.seed = num("--seed");
			have_seed = true;
		} else if (a == "--secs")
			g_cfg.secs = unsigned(num("--secs"));
		else if (a == "--name")
			g_cfg.name = val();
		else if (a == "--threads")
			g_cfg.chaos = unsigned(num("--threads"));
		else if (a == "--unpriv-threads")
			g_cfg.unpriv = unsigned(num("--unpriv-threads"));
		else if (a == "--idents")
			g_cfg.idents = unsigned(std::max<std::uint64_t>(1, num("--idents")));
		else if (a == "--no-model")
			g_cfg.model = false;
		else if (a == "--no-listener")
			g_cfg.listener = false;
		else if (a == "--role") {
			std::string r = val();
			if (r != "admin" && r != "unpriv") {
				std::fprintf(stderr, "ila_stress: --role: admin or unpriv\n");
				return 2;
			}
			g_cfg.role_unpriv = r == "unpriv";
		} else if (a == "--avoid") {
			std::string list = val();
			for (std::size_t pos = 0; pos < list.size();) {
				std::size_t end = std::min(list.find(',', pos), list.size());
				std::string item = list.substr(pos, end - pos);
				pos = end + 1;
				std::size_t slash = item.find('/');
				Pfx p{};
				std::uint64_t l = 0;
				if (slash == std::string::npos ||
				    inet_pton(AF_INET6, item.substr(0, slash).c_str(), p.data()) != 1 ||
				    !parse_uint(item.substr(slash + 1).c_str(), l) || l > 128) {
					std::fprintf(stderr, "ila_stress: --avoid: \"%s\" is not PREFIX/LEN\n", item.c_str());
					return 2;
				}
				g_cfg.avoid.emplace_back(masked(p, unsigned(l)), unsigned(l));
			}
			if (avoided(kSir, 64)) {
				std::fprintf(stderr, "ila_stress: --avoid must leave 2001:db8:0:3::/64 to the hooks\n");
				return 2;
			}
		}
		else if (a == "--expect-out")
			g_cfg.expect_dir = val();
		else if (a == "--table") {
			print_table();
			return 0;
		} else if (a == "-h" || a == "--help") {
			usage();
			return 0;
		} else {
			std::fprintf(stderr, "ila_stress: unknown option %s (--help)\n", a.c_str());
			return 2;
		}
	}
	std::string problem;
	if (!have_seed) {
		std::ifstream r("/dev/urandom", std::ios::binary);
		r.read(reinterpret_cast<char *>(&g_cfg.seed), sizeof(g_cfg.seed));
		g_cfg.seed %= 1000000000000ULL;
	}
	g_report.init(g_cfg.name, g_cfg.seed);
	if (utsname u{}; uname(&u) == 0) {
		unsigned maj = 0, min = 0;
		std::sscanf(u.release, "%u.%u", &maj, &min);
		g_dump_op_before_perm = maj > 6 || (maj == 6 && min >= 2);
	}
	std::printf("%s: seed %llu (replay: STRESS_SEED=%llu), %u s, %u+%u threads%s%s\n", g_cfg.name.c_str(),
		    (unsigned long long)g_cfg.seed, (unsigned long long)g_cfg.seed, g_cfg.secs, g_cfg.chaos,
		    g_cfg.unpriv, g_cfg.model && !g_cfg.role_unpriv ? " + model" : "",
		    g_cfg.role_unpriv ? " (unprivileged)" : "");
	std::fflush(stdout);

	if (g_cfg.role_unpriv) {
		std::string how;
		if (!drop_privileges(how)) {
			std::fprintf(stderr, "ila_stress: cannot drop privileges: %s\n", how.c_str());
			return 1;
		}
		g_cfg.model = false;
		g_cfg.listener = false;
		g_report.note("main", "unprivileged (" + how + ")");
	}
	try {
		Socket s(true, false);
		if (!resolve_family(s, ILA_MAP_GENL_NAME, g_fam.map, problem) ||
		    !resolve_family(s, ILA_HOOK_GENL_NAME, g_fam.hook, problem)) {
			std::fprintf(stderr, "ila_stress: %s (modules not loaded?)\n", problem.c_str());
			return 1;
		}
	} catch (const std::exception &e) {
		std::fprintf(stderr, "ila_stress: %s\n", e.what());
		return 1;
	}

	std::vector<std::thread> others;
	std::vector<std::unique_ptr<Worker>> workers;
	const Pools chaos{&kChaosMaps, &kChaosHooks};
	for (unsigned i = 0; i < g_cfg.chaos; i++)
		workers.push_back(std::make_unique<Worker>("chaos" + std::to_string(i), g_cfg.role_unpriv, chaos));
	for (unsigned i = 0; i < g_cfg.unpriv; i++)
		workers.push_back(std::make_unique<Worker>("unpriv" + std::to_string(i), true, chaos));
	for (auto &w : workers)
		others.emplace_back([&w] { w->run(); });
	if (g_cfg.listener)
		others.emplace_back(listener);
	std::unique_ptr<Model> model;
	std::thread model_thread;
	if (g_cfg.model) {
		model = std::make_unique<Model>();
		model_thread = std::thread([&] { model->run(); });
	}
	const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(g_cfg.secs);
	while (std::chrono::steady_clock::now() < end)
		std::this_thread::sleep_for(std::chrono::milliseconds(100));
	g_stop = true;
	const auto t0 = std::chrono::steady_clock::now();
	auto since = [&] {
		return std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(
					      std::chrono::steady_clock::now() - t0)
					      .count()) +
		       " ms";
	};
	for (auto &t : others)
		t.join();
	g_report.note("main", "T threads stopped after " + since());
	g_others_done = true;
	if (model_thread.joinable())
		model_thread.join();
	g_report.note("main", "T model done after " + since());

	std::printf("%s: %s", g_cfg.name.c_str(), g_report.summary().c_str());
	const int f = g_report.failures();
	std::printf("%s: %s (seed %llu)\n", g_cfg.name.c_str(), f ? (std::to_string(f) + " FAILURES").c_str() : "ok",
		    (unsigned long long)g_cfg.seed);
	return f ? 1 : 0;
}

} // namespace stress

int main(int argc, char **argv)
{
	if (argc > 1 && std::string(argv[1]) == "--traffic")
		return stress::run_traffic(argc - 1, argv + 1);
	return stress::main_stress(argc, argv);
}
