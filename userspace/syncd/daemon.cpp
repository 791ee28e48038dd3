// SPDX-License-Identifier: GPL-2.0
#include "daemon.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <random>
#include <unordered_set>

#include <linux/ila_map.h>


#include "ila_notation.h"
#include "log.h"
#include "netns.h"
#include "range_pager.h"
#include "schema.h"

namespace syncd {

namespace {

// Bad keys logged one by one per full sync; the rest are counted.
constexpr std::uint32_t kBadKeysLogged = 20;
// Per-key errors logged a minute (kernel refusals, bad keys seen by the
// watch); the others are counted, and said when logging resumes.
constexpr std::uint32_t kKeyErrorsLogged = 20;
// Entries per read-only transaction of cache fetches (etcd's default
// --max-txn-ops is 128).
constexpr std::size_t kFetchBatch = 128;
// Misses waiting for a fetch: eight transactions' worth (the newest first).
constexpr std::size_t kFetchQueue = 8 * kFetchBatch;

// The scratch map a full sync loads before the swap: NAME.sync, or for a
// long NAME its first 17 characters, a hash and ".s" (names are at most 31).
std::string scratch_name(const std::string &map)
{
	if (map.size() + 5 < ILA_MAP_NAMSIZ)
		return map + ".sync";
	std::uint32_t h = 2166136261u;
	for (unsigned char c : map)
		h = (h ^ c) * 16777619u;
	char hex[9];
	std::snprintf(hex, sizeof(hex), "%08x", h);
	return map.substr(0, 17) + "." + hex + ".s";
}

bool is_errno(const ila::NetlinkError &e, int err)
{
	return e.code().value() == err;
}

ila::Command map_cmd(ila::Op op, const std::string &map, std::uint64_t ident = 0)
{
	ila::Command c;
	c.op = op;
	c.map = map;
	c.ident = ident;
	return c;
}

ila::Command replace_cmd(const std::string &map, std::uint64_t ident, const Mapping &m)
{
	ila::Command c = map_cmd(ila::Op::Replace, map, ident);
	c.locator = m.locator;
	// always explicit: replace without a mode would keep the old one
	c.csum_mode = m.csum_mode;
	return c;
}

} // namespace

Daemon::Daemon(const Options &o)
	: o_(o), key_log_(kKeyErrorsLogged, 60), cache_(o.cache_size, o.idle_timeout, o.negative_ttl),
	  limiter_(o.fetch_rate, std::max(1.0, o.fetch_rate)), fetch_q_(kFetchQueue)
{
	key_prefix_ = map_key_prefix(o_.prefix, o_.map);
	range_end_ = prefix_range_end(key_prefix_);
	scratch_ = scratch_name(o_.map);
	started_ = Clock::now();
	tracker_ = SyncTracker(now());
	st_.map = o_.map;
	st_.mode = o_.mode == Mode::Full ? "full" : "cache";
	st_.prefix = o_.prefix;
	st_.netns = o_.netns;
	st_.pid = long(getpid());
	st_.state = "starting";
	if (o_.mode == Mode::Cache)
		st_.cache = CacheStatus{};

	// The kernel side lives in the map's network namespace.
	in_netns(o_.netns, [&] {
		nl_main_ = std::make_unique<ila::IlaMapClient>();
		nl_status_ = std::make_unique<ila::IlaMapClient>();
		if (o_.mode == Mode::Cache)
			nl_fetch_ = std::make_unique<ila::IlaMapClient>();
		if (!o_.once)
			nl_monitor_ = std::make_unique<ila::IlaMapClient>();
		if (!o_.once)
			status_server_ = std::make_unique<StatusServer>(o_.map);
	});
	etcd_ = std::make_unique<EtcdClient>(o_);
}

Daemon::~Daemon()
{
	stop();
	if (status_server_)
		status_server_->stop();
	for (auto *t : {&status_thread_, &progress_thread_, &fetch_thread_})
		if (t->joinable())
			t->join();
	// the monitor thread sleeps in recv() until the next map event: it is
	// left to the process exit
	if (monitor_thread_.joinable())
		monitor_thread_.detach();
}

double Daemon::now() const
{
	return std::chrono::duration<double>(Clock::now().time_since_epoch()).count();
}

void Daemon::stop()
{
	stop_ = true;
	{
		std::lock_guard lock(stream_mu_);
		if (stream_)
			stream_->cancel();
	}
	sleep_cv_.notify_all();
	fetch_cv_.notify_all();
}

void Daemon::resync()
{
	resync_ = true;
	std::lock_guard lock(stream_mu_);
	if (stream_)
		stream_->cancel();
}

void Daemon::sleep_for(double seconds)
{
	std::unique_lock lock(sleep_mu_);
	sleep_cv_.wait_for(lock, std::chrono::duration<double>(seconds), [&] { return stop_.load(); });
}

void Daemon::set_error(const std::string &msg, Level level)
{
	log(level, msg);
	std::lock_guard lock(mu_);
	st_.last_error = msg;
	st_.last_error_time = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

void Daemon::key_error(const std::string &msg, Level level, bool record)
{
	std::uint64_t suppressed = 0;
	bool logged;
	{
		std::lock_guard lock(mu_);
		if (record) {
			st_.last_error = msg;
			st_.last_error_time =
				std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch())
					.count();
		}
		logged = key_log_.take(now(), suppressed);
	}
	if (!logged)
		return;
	if (suppressed)
		log(level, std::to_string(suppressed) + " more key errors were counted, not logged (ila-syncd status)");
	log(level, msg);
}

void Daemon::set_state(const std::string &state)
{
	std::lock_guard lock(mu_);
	if (st_.state == state)
		return;
	st_.state = state;
	tracker_.watching(state == "watching", now());
	notify_service_manager("STATUS=" + state + (state == "watching" ? " " + etcd_->endpoint() : ""));
}

void Daemon::notify_ready()
{
	if (!ready_sent_.exchange(true))
		notify_service_manager("READY=1");
}

void Daemon::bad_key(const std::string &key, const std::string &why)
{
	bool watching;
	{
		std::lock_guard lock(mu_);
		st_.bad_keys++;
		watching = st_.state == "watching";
	}
	if (watching) {
		key_error("skipping key " + printable(key) + ": " + why, Level::Warning, false);
	} else if (bad_logged_ < kBadKeysLogged) {
		bad_logged_++;
		log(Level::Warning, "skipping key " + printable(key) + ": " + why);
	} else if (bad_logged_ == kBadKeysLogged) {
		bad_logged_++;
		log(Level::Warning, "more bad keys in this sync: counted, not logged (ila-syncd status)");
	}
}

std::optional<std::uint64_t> Daemon::key_ident(const std::string &key, bool count)
{
	if (key.compare(0, key_prefix_.size(), key_prefix_) != 0)
		return std::nullopt; // not ours (cannot happen: the range is ours)
	auto id = parse_key_identifier(std::string_view(key).substr(key_prefix_.size()));
	if (!id) {
		if (count)
			bad_key(key, id.error);
		return std::nullopt;
	}
	return id.value;
}

std::optional<Mapping> Daemon::value_mapping(const std::string &key, const std::string &value)
{
	auto m = parse_value(value);
	if (!m) {
		bad_key(key, m.error);
		return std::nullopt;
	}
	return m.value;
}

bool Daemon::send_ops(ila::IlaMapClient &nl, const std::vector<KernelOp> &ops, std::vector<std::uint64_t> *failed,
		      bool log_failures)
{
	if (ops.empty())
		return true;
	ila::BatchSender sender(nl, 128 * 1024, true);
	for (std::size_t i = 0; i < ops.size(); i++)
		sender.add(ops[i].cmd, i + 1);
	sender.finish();
	bool map_gone = false;
	for (const auto &f : sender.failures()) {
		if (f.line == 0 || f.line > ops.size())
			continue;
		const KernelOp &op = ops[f.line - 1];
		if (f.kernel_message.find("no such map") != std::string::npos) {
			map_gone = true;
			continue;
		}
		if (op.cmd.op == ila::Op::Del && f.error == ENOENT)
			continue; // already gone
		if (failed)
			failed->push_back(op.ident);
		if (!log_failures)
			continue;
		{
			std::lock_guard lock(mu_);
			st_.errors++;
		}
		const std::string key = mapping_key(o_.prefix, o_.map, op.ident);
		key_error("key " + key + ": " + f.command + ": " + std::strerror(f.error) +
			  (f.kernel_message.empty() ? "" : " (kernel: " + f.kernel_message + ")"));
	}
	if (map_gone)
		set_error("map " + o_.map + " disappeared: it is created again", Level::Warning);
	return !map_gone;
}

void Daemon::note_results(const std::vector<KernelOp> &ops, const std::vector<std::uint64_t> &failed)
{
	const double t = now();
	const std::unordered_set<std::uint64_t> refused(failed.begin(), failed.end());
	for (const auto &op : ops) {
		if (refused.count(op.ident)) {
			std::optional<Mapping> want;
			if (o_.mode == Mode::Full && op.cmd.op == ila::Op::Replace)
				want = Mapping{op.cmd.locator, *op.cmd.csum_mode};
			retry_.failed(op.ident, want, t);
			continue;
		}
		retry_.done(op.ident);
		if (op.cmd.op == ila::Op::Del)
			retry_.kick(); // room for a change the full map refused
	}
	std::lock_guard lock(mu_);
	tracker_.set_behind(retry_.size(), t);
}

void Daemon::retry_refused()
{
	std::lock_guard lock(cache_mu_);
	const double t = now();
	if (!retry_.due(t))
		return;
	std::vector<KernelOp> ops;
	for (const auto &[id, want] : retry_.take(t)) {
		if (o_.mode == Mode::Cache && cache_.find(id)) {
			retry_.done(id); // installed again since
			continue;
		}
		if (want)
			ops.push_back({replace_cmd(o_.map, id, *want), id});
		else
			ops.push_back({map_cmd(ila::Op::Del, o_.map, id), id});
	}
	std::vector<std::uint64_t> failed;
	const bool map_ok = send_ops(*nl_main_, ops, &failed, false);
	const std::size_t before = retry_.size();
	note_results(ops, failed);
	if (before > retry_.size())
		log(Level::Notice, std::to_string(before - retry_.size()) + " refused changes applied on a retry, " +
					   std::to_string(retry_.size()) + " still waiting");
	if (!map_ok) {
		if (o_.mode == Mode::Full)
			need_full_sync_ = true;
		else
			cache_reload_ = true;
	}
}

void Daemon::drop_cache()
{
	std::lock_guard lock(cache_mu_);
	std::vector<KernelOp> ops;
	for (auto id : cache_.ids()) {
		cache_.forget(id);
		ops.push_back({map_cmd(ila::Op::Del, o_.map, id), id});
	}
	std::vector<std::uint64_t> failed;
	send_ops(*nl_main_, ops, &failed);
	note_results(ops, failed);
	log(Level::Notice, "dropped the " + std::to_string(ops.size()) + " cached entries: misses fetch them again");
}

std::int64_t Daemon::applied_revision()
{
	std::lock_guard lock(mu_);
	return tracker_.applied_revision();
}

void Daemon::ensure_map(ila::IlaMapClient &nl, bool cache)
{
	try {
		ila::MapInfo m = nl.stats(o_.map);
		if (cache && !m.notify_miss)
			log(Level::Notice, "map " + o_.map + " was created without notify-miss: only the hooks and "
					 "rules with miss ...,notify report its misses");
		if (cache && m.max_entries < o_.cache_size)
			log(Level::Warning, "map " + o_.map + " holds at most " + std::to_string(m.max_entries) +
						    " entries, less than --cache-size " + std::to_string(o_.cache_size));
		return;
	} catch (const ila::NetlinkError &e) {
		if (!is_errno(e, ENOENT))
			throw;
	}
	ila::Command c = map_cmd(ila::Op::Create, o_.map);
	c.max_entries = o_.max_entries;
	if (cache) {
		if (!c.max_entries)
			c.max_entries = o_.cache_size;
		c.notify_miss = true;
	}
	nl.execute(c);
	log(Level::Notice, "created map " + o_.map + (cache ? " (notify-miss)" : ""));
}

void Daemon::swap_in(const std::string &scratch)
{
	// one command: the kernel swaps two maps' tables under its lock, an
	// open dump of either keeps the table it walks
	ila::Command c = map_cmd(ila::Op::Swap, o_.map);
	c.map2 = scratch;
	nl_main_->execute(c);
}

// ---- full mode --------------------------------------------------------------

void Daemon::full_sync()
{
	set_state("syncing");
	const auto t0 = Clock::now();
	ila::IlaMapClient &nl = *nl_main_;
	ensure_map(nl, false);
	const ila::MapInfo live = nl.stats(o_.map);
	try {
		nl.destroy(scratch_); // left over from a sync that was killed
	} catch (const ila::NetlinkError &e) {
		if (!is_errno(e, ENOENT))
			throw;
	}
	nl.create(scratch_, live.max_entries);
	struct DropScratch {
		Daemon &d;
		bool armed = true;
		~DropScratch()
		{
			if (!armed)
				return;
			try {
				d.nl_main_->destroy(d.scratch_);
			} catch (const std::exception &) {
			}
		}
	} drop{*this};

	bad_logged_ = 0;
	std::int64_t rev = 0;
	std::uint64_t keys = 0;
	std::vector<std::uint64_t> line_ident;
	std::vector<Mapping> line_want;
	ila::BatchSender sender(nl, 256 * 1024, true);
	struct Stopped {};
	auto range = [this](const std::string &k, const std::string &e, std::int64_t r, std::uint32_t limit) {
		if (stop_)
			throw Stopped{};
		return etcd_->range(k, e, r, limit);
	};
	try {
		rev = read_range(range, key_prefix_, range_end_, o_.page_size, [&](const RangePage &page) {
			for (const auto &kv : page.kvs) {
				keys++;
				auto id = key_ident(kv.key, true);
				if (!id)
					continue;
				auto m = value_mapping(kv.key, kv.value);
				if (!m)
					continue;
				ila::Command c = map_cmd(ila::Op::Add, scratch_, *id);
				c.locator = m->locator;
				c.csum_mode = m->csum_mode;
				line_ident.push_back(*id);
				line_want.push_back(*m);
				sender.add(c, line_ident.size());
			}
		});
	} catch (const Stopped &) {
		return;
	}
	sender.finish();
	// what the kernel refuses (ENOSPC: the map is full) is retried on the
	// map after the swap, and the status stays stale until it applies
	std::vector<std::pair<std::uint64_t, Mapping>> refused;
	for (const auto &f : sender.failures()) {
		if (f.error == ENOBUFS)
			throw std::runtime_error("full sync: the kernel's answers were lost (receive buffer)");
		if (f.line == 0 || f.line > line_ident.size())
			continue;
		refused.emplace_back(line_ident[f.line - 1], line_want[f.line - 1]);
		{
			std::lock_guard lock(mu_);
			st_.errors++;
		}
		key_error("key " + mapping_key(o_.prefix, o_.map, line_ident[f.line - 1]) + ": " + f.command + ": " +
			  std::strerror(f.error) + (f.kernel_message.empty() ? "" : " (kernel: " + f.kernel_message + ")"));
	}
	swap_in(scratch_);
	drop.armed = false;
	try {
		nl.destroy(scratch_);
	} catch (const ila::NetlinkError &e) {
		log(Level::Warning, std::string("after the swap: ") + e.what());
	}
	const double secs = std::chrono::duration<double>(Clock::now() - t0).count();
	{
		std::lock_guard lock(cache_mu_);
		retry_.clear();
		const double t = now();
		for (const auto &[id, m] : refused)
			retry_.failed(id, m, t);
		std::lock_guard l2(mu_);
		st_.full_syncs++;
		st_.last_sync_seconds = secs;
		st_.last_sync_keys = keys;
		tracker_.synced(rev, retry_.size(), t);
	}
	char rate[64];
	std::snprintf(rate, sizeof(rate), "%.3f s, %.0f keys/s", secs, secs > 0 ? double(keys) / secs : 0.0);
	log(Level::Notice, "full sync at revision " + std::to_string(rev) + " from " + etcd_->endpoint() + ": " +
				   std::to_string(line_ident.size() - refused.size()) + " entries of " +
				   std::to_string(keys) + " keys" +
				   (refused.empty() ? "" : " (" + std::to_string(refused.size()) + " refused, retried)") +
				   " in " + rate + ", swapped in");
}

void Daemon::apply_full(const std::vector<const mvccpb::Event *> &events)
{
	std::vector<KernelOp> ops;
	ops.reserve(events.size());
	for (const auto *ev : events) {
		const auto &kv = ev->kv();
		auto id = key_ident(kv.key(), ev->type() == mvccpb::Event::PUT);
		if (!id)
			continue;
		if (ev->type() == mvccpb::Event::DELETE) {
			ops.push_back({map_cmd(ila::Op::Del, o_.map, *id), *id});
			continue;
		}
		auto m = value_mapping(kv.key(), kv.value());
		if (!m) {
			// the store no longer maps it: neither does the map
			ops.push_back({map_cmd(ila::Op::Del, o_.map, *id), *id});
			continue;
		}
		ops.push_back({replace_cmd(o_.map, *id, *m), *id});
	}
	if (o_.verbose)
		for (const auto &op : ops)
			log(Level::Debug, ila::describe(op.cmd) +
						  (op.cmd.op == ila::Op::Replace
							   ? " csum-mode " + std::string(ila::csum_mode_name(*op.cmd.csum_mode))
							   : ""));
	std::vector<std::uint64_t> failed;
	if (!send_ops(*nl_main_, ops, &failed))
		need_full_sync_ = true;
	std::lock_guard lock(cache_mu_);
	note_results(ops, failed);
	std::lock_guard l2(mu_);
	st_.events_applied += ops.size();
}

// ---- cache mode -------------------------------------------------------------

void Daemon::cache_start()
{
	set_state("syncing");
	ensure_map(*nl_main_, true);
	// what the map holds already (a restarted daemon's cache) is kept and
	// checked against the store
	auto entries = nl_main_->show(o_.map);
	std::vector<KernelOp> ops;
	{
		std::lock_guard lock(cache_mu_);
		const double t = now();
		std::vector<std::uint64_t> evicted;
		for (const auto &e : entries) {
			evicted.clear();
			cache_.on_miss(e.ident, t);
			cache_.on_fetched(e.ident, Mapping{e.locator, e.csum_mode}, 0, 0, t, evicted);
			for (auto id : evicted)
				ops.push_back({map_cmd(ila::Op::Del, o_.map, id), id});
		}
		std::vector<std::uint64_t> failed;
		send_ops(*nl_main_, ops, &failed);
		note_results(ops, failed);
		// a map holding more than --cache-size: the least recently
		// listed entries went, as size evictions
		std::lock_guard l2(mu_);
		st_.cache->evicted_size += ops.size();
	}
	if (!entries.empty())
		log(Level::Notice, "adopted " + std::to_string(entries.size()) + " entries of map " + o_.map);
	revalidate();
}

void Daemon::revalidate()
{
	set_state("syncing");
	const auto t0 = Clock::now();
	// the watch resumes after the first read: changes made while the
	// cached entries are read again are seen twice, never missed (one key:
	// etcd 3.4 would walk a whole range to count it)
	RangePage first = etcd_->range(key_prefix_, "", 0, 1);
	std::vector<std::uint64_t> ids;
	{
		std::lock_guard lock(cache_mu_);
		ids = cache_.ids();
	}
	bad_logged_ = 0;
	for (std::size_t i = 0; i < ids.size(); i += kFetchBatch) {
		if (stop_)
			return;
		std::vector<std::uint64_t> chunk(ids.begin() + long(i),
						 ids.begin() + long(std::min(ids.size(), i + kFetchBatch)));
		std::vector<std::string> keys;
		for (auto id : chunk)
			keys.push_back(mapping_key(o_.prefix, o_.map, id));
		std::int64_t read_rev = 0;
		auto kvs = etcd_->get_many(keys, read_rev);
		std::vector<KernelOp> ops;
		std::lock_guard lock(cache_mu_);
		const double t = now();
		std::vector<std::uint64_t> evicted;
		for (std::size_t k = 0; k < chunk.size(); k++) {
			std::optional<Mapping> m;
			std::int64_t rev = read_rev;
			if (kvs[k]) {
				m = value_mapping(kvs[k]->key, kvs[k]->value);
				rev = kvs[k]->mod_revision;
			}
			evicted.clear();
			CacheAction a = cache_.on_change(chunk[k], m, rev, t, evicted);
			if (a.kind == CacheAction::Remove)
				ops.push_back({map_cmd(ila::Op::Del, o_.map, chunk[k]), chunk[k]});
			else if (a.kind != CacheAction::None)
				ops.push_back({replace_cmd(o_.map, chunk[k], a.mapping), chunk[k]});
		}
		std::vector<std::uint64_t> failed;
		send_ops(*nl_main_, ops, &failed);
		for (auto id : failed)
			cache_.forget(id);
		note_results(ops, failed);
	}
	const double secs = std::chrono::duration<double>(Clock::now() - t0).count();
	{
		std::lock_guard lock(cache_mu_);
		std::lock_guard l2(mu_);
		st_.full_syncs++;
		st_.last_sync_seconds = secs;
		st_.last_sync_keys = ids.size();
		tracker_.synced(first.revision, retry_.size(), now());
	}
	log(Level::Notice, "cache of " + std::to_string(ids.size()) + " entries checked at revision " +
				   std::to_string(first.revision) + " from " + etcd_->endpoint());
}

void Daemon::apply_cache(const std::vector<const mvccpb::Event *> &events)
{
	std::vector<KernelOp> ops;
	std::uint64_t changed = 0;
	std::lock_guard lock(cache_mu_);
	const double t = now();
	std::vector<std::uint64_t> evicted;
	for (const auto *ev : events) {
		const auto &kv = ev->kv();
		auto id = key_ident(kv.key(), ev->type() == mvccpb::Event::PUT);
		if (!id)
			continue;
		std::optional<Mapping> m;
		if (ev->type() == mvccpb::Event::PUT)
			m = value_mapping(kv.key(), kv.value());
		evicted.clear();
		CacheAction a = cache_.on_change(*id, m, kv.mod_revision(), t, evicted);
		for (auto v : evicted)
			ops.push_back({map_cmd(ila::Op::Del, o_.map, v), v});
		if (a.kind == CacheAction::None)
			continue;
		changed++;
		if (a.kind == CacheAction::Remove)
			ops.push_back({map_cmd(ila::Op::Del, o_.map, *id), *id});
		else
			ops.push_back({replace_cmd(o_.map, *id, a.mapping), *id});
	}
	std::vector<std::uint64_t> failed;
	if (!send_ops(*nl_main_, ops, &failed))
		cache_reload_ = true;
	for (auto id : failed)
		cache_.forget(id);
	note_results(ops, failed);
	std::lock_guard lock2(mu_);
	st_.events_applied += changed;
	st_.cache->evicted_size += evicted.size();
}

void Daemon::monitor_loop()
{
	try {
		nl_monitor_->monitor(
			[&] {
				// subscribed: no miss from now on is lost
				std::lock_guard lock(sleep_mu_);
				monitor_state_ = 1;
				sleep_cv_.notify_all();
			},
			[&](const ila::Command &c) {
				if (stop_)
					return false;
				if (o_.mode == Mode::Full) {
					const ForeignChange fc = foreign_change(c, o_.map, scratch_);
					if (fc != ForeignChange::None) {
						log(Level::Notice, "map " + o_.map + " was " + foreign_change_name(fc) +
									   " by another process: full resync");
						resync();
					}
					return true;
				}
				if (c.map != o_.map && !(c.op == ila::Op::Swap && c.map2 == o_.map))
					return true;
				std::lock_guard lock(cache_mu_);
				switch (c.op) {
				case ila::Op::Miss: {
					const double t = now();
					{
						std::lock_guard l2(mu_);
						st_.cache->misses++;
					}
					if (cache_.on_miss(c.ident, t) != MissVerdict::Fetch)
						break;
					if (!limiter_.take(t)) {
						cache_.fetch_failed(c.ident);
						std::lock_guard l2(mu_);
						st_.cache->rate_limited++;
						break;
					}
					if (auto old = fetch_q_.push(c.ident)) {
						// the queue is full: the oldest miss waits for its next one
						cache_.fetch_failed(*old);
						std::lock_guard l2(mu_);
						st_.cache->fetch_dropped++;
					}
					fetch_cv_.notify_one();
					break;
				}
				case ila::Op::Destroy:
				case ila::Op::Flush:
				case ila::Op::Swap:
					// someone else rewrote the map: take it as it is now
					cache_reload_ = true;
					fetch_cv_.notify_one();
					break;
				default:
					break;
				}
				return true;
			},
			[&] {
				// full mode: the notifications of a full sync's own
				// load overrun the buffer; what matters is read after
				if (o_.mode == Mode::Cache)
					log(Level::Warning, "miss notifications lost (receive buffer overrun)");
			});
	} catch (const std::exception &e) {
		if (!stop_)
			set_error(std::string(o_.mode == Mode::Cache ? "miss notifications: " : "map notifications: ") +
				  e.what());
	}
	std::lock_guard lock(sleep_mu_);
	if (monitor_state_ == 0) {
		monitor_state_ = -1;
		sleep_cv_.notify_all();
	}
}

void Daemon::fetch_batch(std::vector<std::uint64_t> ids)
{
	std::vector<std::string> keys;
	keys.reserve(ids.size());
	for (auto id : ids)
		keys.push_back(mapping_key(o_.prefix, o_.map, id));
	std::int64_t read_rev = 0;
	std::vector<std::optional<KeyValue>> kvs;
	try {
		kvs = etcd_->get_many(keys, read_rev);
	} catch (const EtcdError &e) {
		std::lock_guard lock(cache_mu_);
		for (auto id : ids)
			cache_.fetch_failed(id);
		set_error(std::string("fetch: ") + e.what());
		return;
	}
	std::vector<KernelOp> ops;
	std::lock_guard lock(cache_mu_);
	const double t = now();
	std::vector<std::uint64_t> evicted;
	std::uint64_t evicted_n = 0;
	for (std::size_t i = 0; i < ids.size(); i++) {
		std::optional<Mapping> m;
		std::int64_t mod = 0;
		if (kvs[i]) {
			m = value_mapping(kvs[i]->key, kvs[i]->value);
			mod = kvs[i]->mod_revision;
		}
		evicted.clear();
		CacheAction a = cache_.on_fetched(ids[i], m, mod, read_rev, t, evicted);
		evicted_n += evicted.size();
		for (auto v : evicted)
			ops.push_back({map_cmd(ila::Op::Del, o_.map, v), v});
		if (a.kind == CacheAction::Remove)
			ops.push_back({map_cmd(ila::Op::Del, o_.map, ids[i]), ids[i]});
		else if (a.kind != CacheAction::None)
			ops.push_back({replace_cmd(o_.map, ids[i], a.mapping), ids[i]});
		if (o_.verbose && a.kind == CacheAction::Install)
			log(Level::Debug, "miss " + ila::format_half(ids[i]) + ": installed " + format_value(a.mapping));
	}
	std::vector<std::uint64_t> failed;
	if (!send_ops(*nl_fetch_, ops, &failed))
		cache_reload_ = true;
	for (auto id : failed)
		cache_.forget(id);
	note_results(ops, failed);
	std::lock_guard l2(mu_);
	st_.cache->fetches += ids.size();
	st_.cache->evicted_size += evicted_n;
}

void Daemon::sweep()
{
	{
		std::lock_guard lock(cache_mu_);
		cache_.sweep_begin();
	}
	std::vector<ila::Entry> entries;
	try {
		entries = nl_fetch_->show(o_.map);
	} catch (const ila::NetlinkError &e) {
		set_error(std::string("sweep: ") + e.what());
		if (is_errno(e, ENOENT)) {
			std::lock_guard lock(cache_mu_);
			cache_reload_ = true;
		}
		return;
	}
	std::lock_guard lock(cache_mu_);
	const double t = now();
	for (const auto &e : entries)
		cache_.sweep_seen(e.ident, e.hits, t);
	std::vector<std::uint64_t> idle = cache_.sweep_end(t);
	std::vector<KernelOp> ops;
	for (auto id : idle)
		ops.push_back({map_cmd(ila::Op::Del, o_.map, id), id});
	std::vector<std::uint64_t> failed;
	send_ops(*nl_fetch_, ops, &failed);
	note_results(ops, failed);
	if (o_.verbose && !idle.empty())
		log(Level::Debug, "evicted " + std::to_string(idle.size()) + " idle entries");
	std::lock_guard l2(mu_);
	st_.cache->evicted_idle += idle.size();
}

void Daemon::fetcher_loop()
{
	next_sweep_ = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(o_.sweep()));
	while (!stop_) {
		std::unique_lock lock(cache_mu_);
		fetch_cv_.wait_until(lock, next_sweep_, [&] { return stop_ || !fetch_q_.empty() || cache_reload_; });
		if (stop_)
			break;
		if (cache_reload_) {
			cache_reload_ = false;
			lock.unlock();
			// the map was rewritten behind our back: start over from
			// what it holds now (the main thread revalidates)
			try {
				ensure_map(*nl_fetch_, true);
				auto entries = nl_fetch_->show(o_.map);
				std::lock_guard l(cache_mu_);
				for (auto id : cache_.ids())
					cache_.forget(id);
				const double t = now();
				std::vector<std::uint64_t> evicted;
				for (const auto &e : entries) {
					cache_.on_miss(e.ident, t);
					cache_.on_fetched(e.ident, Mapping{e.locator, e.csum_mode}, 0, 0, t, evicted);
				}
			} catch (const std::exception &e) {
				set_error(std::string("reloading the cache: ") + e.what());
			}
			resync();
			continue;
		}
		if (!fetch_q_.empty()) {
			std::vector<std::uint64_t> ids = fetch_q_.take(kFetchBatch);
			lock.unlock();
			fetch_batch(std::move(ids));
			continue;
		}
		if (Clock::now() >= next_sweep_) {
			lock.unlock();
			sweep();
			next_sweep_ = Clock::now() +
				      std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(o_.sweep()));
		}
	}
}

// ---- the watch --------------------------------------------------------------

void Daemon::watch_once()
{
	set_state("connecting");
	const std::int64_t start = applied_revision() + 1;
	std::unique_ptr<WatchStream> stream = etcd_->watch(key_prefix_, range_end_, start);
	{
		std::lock_guard lock(stream_mu_);
		stream_ = stream.get();
		progress_pending_ = false;
		slow_waits_ = 0;
		if (stop_ || resync_)
			stream_->cancel();
	}
	struct Unregister {
		Daemon &d;
		~Unregister()
		{
			std::lock_guard lock(d.stream_mu_);
			d.stream_ = nullptr;
		}
	} unregister{*this};

	etcdserverpb::WatchResponse resp;
	std::vector<etcdserverpb::WatchResponse> fragments;
	std::vector<const mvccpb::Event *> events;
	bool member_behind = false; // this watch's member is behind the store
	for (;;) {
		{
			std::lock_guard lock(stream_mu_);
			in_read_ = true;
			read_since_ = Clock::now();
		}
		bool ok = stream->read(resp);
		{
			std::lock_guard lock(stream_mu_);
			in_read_ = false;
			progress_pending_ = false;
			slow_waits_ = 0;
		}
		if (!ok)
			break;
		const std::int64_t hdr = resp.header().revision();
		bool hdr_ok;
		{
			std::lock_guard lock(mu_);
			hdr_ok = tracker_.header(hdr, now());
		}
		if (!hdr_ok && !member_behind) {
			// Lower than the revision applied: the store went back (a
			// snapshot restore; etcd 3.4 accepts a watch on a revision
			// it does not have and would wait silently) or this member
			// is behind the one the map was read from. A linearizable
			// read tells which.
			const std::int64_t applied = applied_revision();
			const std::int64_t read_rev = etcd_->range(key_prefix_, "", 0, 1).revision;
			if (store_went_back(read_rev, applied)) {
				log(Level::Warning, "the store is at revision " + std::to_string(read_rev) +
							    ", below revision " + std::to_string(applied) +
							    " applied (restored from a snapshot?): full resync");
				need_full_sync_ = true;
				store_went_back_ = true;
				stream->cancel();
				return;
			}
			member_behind = true;
			log(Level::Info, "the member of " + stream->endpoint() + " is at revision " + std::to_string(hdr) +
						 ", behind revision " + std::to_string(applied) + " applied: waiting for it");
		}
		if (resp.created() && !resp.canceled()) {
			set_state("watching");
			log(Level::Info, "watching " + stream->endpoint() + " from revision " + std::to_string(start));
		}
		if (resp.canceled()) {
			if (resp.compact_revision() > 0) {
				log(Level::Notice, "revision " + std::to_string(start) +
							   " was compacted (compact revision " +
							   std::to_string(resp.compact_revision()) + "): full resync");
				need_full_sync_ = true;
				stream->cancel();
				return;
			}
			stream->cancel();
			// refused: if for an expired token (etcd 3.4 says "permission
			// denied" then too), the next watch authenticates again
			etcd_->forget_token();
			throw EtcdError(grpc::StatusCode::PERMISSION_DENIED,
					"watch (" + stream->endpoint() + "): canceled by the server: " + resp.cancel_reason(),
					classify_etcd_error(GrpcCode::PermissionDenied, resp.cancel_reason()));
		}
		if (resp.fragment() || !fragments.empty()) {
			fragments.push_back(resp);
			if (resp.fragment())
				continue;
		}
		events.clear();
		if (fragments.empty()) {
			for (const auto &ev : resp.events())
				events.push_back(&ev);
		} else {
			for (const auto &f : fragments)
				for (const auto &ev : f.events())
					events.push_back(&ev);
		}
		if (!events.empty()) {
			if (o_.mode == Mode::Full)
				apply_full(events);
			else
				apply_cache(events);
			std::int64_t rev = 0;
			for (const auto *ev : events)
				rev = std::max(rev, ev->kv().mod_revision());
			std::lock_guard lock(mu_);
			tracker_.applied(rev, now());
		} else if (!resp.created() && hdr_ok) {
			std::lock_guard lock(mu_);
			if (resp.watch_id() == -1)
				// answer to a progress request: the store's revision
				// (3.4 may send it before the last events: status only)
				tracker_.progress_answer(hdr, now());
			else
				// the watcher's own progress notification: every
				// event up to HDR was sent before it
				tracker_.progress_notify(hdr, now());
		}
		fragments.clear();
		retry_refused();
		if (need_full_sync_) {
			// the map is gone (the changes went nowhere): it is
			// created again by a full sync
			stream->cancel();
			return;
		}
	}
	grpc::Status st = stream->finish();
	if (stop_ || resync_ || need_full_sync_)
		return;
	throw EtcdError(st, "watch (" + stream->endpoint() + ") ended: " + describe(st));
}

void Daemon::progress_loop()
{
	// A watch is given up when it was asked for its progress and has been
	// waiting for an answer for LIMIT and its member does not answer a
	// read either: not while the daemon is busy applying (it is not
	// reading); the clocks start again when the process was stopped or
	// starved (the tick came late).
	const auto limit = std::chrono::duration<double>(3 * o_.progress_interval + o_.timeout);
	const auto late = std::chrono::duration<double>(2 * o_.progress_interval + 1);
	auto last_tick = Clock::now();
	while (!stop_) {
		sleep_for(o_.progress_interval);
		const auto t = Clock::now();
		const bool starved = t - last_tick > late;
		last_tick = t;
		std::unique_lock lock(stream_mu_);
		if (!stream_ || stop_)
			continue;
		if (starved) {
			// the time the process did not run is nobody's delay: the
			// server gets the whole LIMIT again (after a SIGSTOP it may
			// have a backlog of events to send first)
			pending_since_ = t;
			read_since_ = t;
		}
		if (progress_pending_ && in_read_ && t - read_since_ > limit && t - pending_since_ > limit) {
			// a member that answers a read (up, in a quorum) is busy
			// sending a backlog of events, not gone: moving to another
			// would start that backlog over. Waited for up to ten times.
			const WatchStream *s = stream_;
			const std::string ep = s->endpoint();
			const double waited = std::chrono::duration<double>(t - pending_since_).count();
			const bool may_wait = slow_waits_ < 10;
			lock.unlock();
			const bool alive = may_wait && etcd_->answers(ep, key_prefix_);
			lock.lock();
			if (stream_ != s || stop_)
				continue;
			if (alive) {
				if (slow_waits_++ == 0)
					log(Level::Notice, "the watch on " + ep + " has not answered for " +
								   format_seconds(waited) +
								   " s but the member answers reads: waiting for it");
				pending_since_ = read_since_ = Clock::now();
				continue;
			}
			log(Level::Warning, "no answer from " + ep + " for " + format_seconds(waited) +
						    " s: trying another endpoint");
			slow_waits_ = 0;
			stream_->cancel();
			continue;
		}
		if (!progress_pending_) {
			progress_pending_ = true;
			pending_since_ = t;
		}
		stream_->request_progress();
	}
}

// ---- status -------------------------------------------------------------------

std::string Daemon::render_status(bool json)
{
	Status s;
	{
		std::lock_guard lock(mu_);
		s = st_;
		s.revision = tracker_.revision();
		s.store_revision = tracker_.store_revision();
		s.keys_behind = tracker_.behind();
		s.stale = tracker_.stale();
		s.lag_seconds = tracker_.lag_seconds(now());
		s.uptime = std::chrono::duration<double>(Clock::now() - started_).count();
		if (s.state == "watching")
			s.endpoint = etcd_->endpoint();
	}
	if (s.cache) {
		std::lock_guard lock(cache_mu_);
		s.cache->size = cache_.capacity();
		s.cache->negative = cache_.negative();
	}
	try {
		s.entries = nl_status_->stats(o_.map).entries;
	} catch (const std::exception &) {
	}
	return json ? status_json(s) + "\n" : status_text(s);
}

// ---- main loop ------------------------------------------------------------------

int Daemon::run()
{
	log(Level::Notice, "keeping map " + o_.map + (o_.netns.empty() ? "" : " (netns " + o_.netns + ")") +
				   " equal to " + key_prefix_ + " (" + (o_.mode == Mode::Full ? "full" : "cache") +
				   " mode, endpoints " + std::to_string(etcd_->endpoint_count()) + ")");
	if (status_server_)
		status_thread_ = std::thread([this] { status_server_->serve([this](bool j) { return render_status(j); }); });
	if (!o_.once)
		progress_thread_ = std::thread([this] { progress_loop(); });
	if (!o_.once) {
		monitor_thread_ = std::thread([this] { monitor_loop(); });
		if (o_.mode == Mode::Cache)
			fetch_thread_ = std::thread([this] { fetcher_loop(); });
		// Ready (READY=1, the status's "watching") only once the
		// notifications reach us: a miss notified before the subscription
		// is lost, and its packet's flow would wait for the next one; a
		// flush by hand would go unnoticed.
		std::unique_lock lock(sleep_mu_);
		while (!sleep_cv_.wait_for(lock, std::chrono::milliseconds(200),
					   [&] { return monitor_state_ != 0 || stop_; }))
			;
		if (monitor_state_ < 0 && o_.mode == Mode::Cache) {
			lock.unlock();
			stop();
			return 1;
		}
	}

	int failures = 0; // in a row: the backoff's attempt
	std::mt19937 rng{std::random_device{}()};
	std::uniform_real_distribution<double> jitter(0, 1);
	auto backoff = [&] { sleep_for(reconnect_delay(failures++, jitter(rng))); };
	bool cache_started = false;
	while (!stop_) {
		try {
			if (need_full_sync_ || resync_) {
				resync_ = false;
				if (o_.mode == Mode::Full) {
					full_sync();
				} else if (!cache_started) {
					cache_start();
					cache_started = true;
				} else {
					if (store_went_back_)
						drop_cache();
					revalidate();
				}
				store_went_back_ = false;
				if (stop_)
					break;
				need_full_sync_ = false;
				notify_ready();
				if (o_.once)
					return 0;
			}
			watch_once();
			failures = 0;
		} catch (const EtcdError &e) {
			set_error(e.what());
			if (e.compacted())
				need_full_sync_ = true;
			if (o_.once)
				return 1;
			set_state("disconnected");
			notify_ready();
			etcd_->next_endpoint();
			backoff();
		} catch (const ila::NetlinkError &e) {
			set_error(std::string("map ") + o_.map + ": " + e.what());
			if (o_.once)
				return 1;
			need_full_sync_ = true;
			set_state("disconnected");
			backoff();
		} catch (const std::exception &e) {
			set_error(e.what());
			if (o_.once)
				return 1;
			need_full_sync_ = true;
			set_state("disconnected");
			backoff();
		}
	}
	notify_service_manager("STOPPING=1");
	log(Level::Notice, "stopped");
	return 0;
}

} // namespace syncd
