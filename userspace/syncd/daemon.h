// SPDX-License-Identifier: GPL-2.0
// The ila-syncd daemon: keeps one kernel map equal to PREFIX/maps/NAME/ in
// etcd, in full mode (every key, ILA router) or cache mode (the keys
// packets ask for, ILA forwarding node). See ila-syncd(8).
//
// Threads: the main thread talks to etcd (full syncs, the watch) and
// applies what it reads; a progress thread asks the watch for the store's
// revision and cancels a watch that stopped answering; the status thread
// answers `ila-syncd status`; a monitor thread receives the kernel's
// notifications (full mode: a flush, destroy or swap of the map by someone
// else causes a full resync; cache mode: misses too); in cache mode a
// fetcher thread fetches, installs and evicts. Every thread has its own
// netlink socket, opened in the map's network namespace.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "cache_table.h"
#include "etcd_client.h"
#include "log.h"
#include "ila_map_client.h"
#include "options.h"
#include "status_format.h"
#include "status_socket.h"
#include "sync_state.h"

namespace syncd {

class Daemon {
public:
	// Opens the kernel side (netlink sockets, status socket) in the map's
	// network namespace and the etcd client; throws std::runtime_error.
	explicit Daemon(const Options &o);
	~Daemon();

	// Runs until stop() (or, with --once, one sync); the exit status.
	int run();
	// From the signal thread: stop (SIGTERM), resync (SIGHUP).
	void stop();
	void resync();

private:
	using Clock = std::chrono::steady_clock;
	struct KernelOp {
		ila::Command cmd;
		std::uint64_t ident;
	};

	// ---- full mode
	void full_sync();
	void apply_full(const std::vector<const mvccpb::Event *> &events);
	// ---- cache mode
	void cache_start();
	void revalidate();
	void apply_cache(const std::vector<const mvccpb::Event *> &events);
	void monitor_loop();
	void fetcher_loop();
	void fetch_batch(std::vector<std::uint64_t> ids);
	void sweep();
	void ensure_map(ila::IlaMapClient &nl, bool cache);
	// ---- both
	// One watch from revision_+1 until it ends; throws EtcdError.
	void watch_once();
	void progress_loop();
	// Sends OPS to the map in netlink batches; failures are logged and
	// counted (a delete of an absent entry is not a failure). Returns
	// false if the map itself is gone.
	bool send_ops(ila::IlaMapClient &nl, const std::vector<KernelOp> &ops,
		      std::vector<std::uint64_t> *failed = nullptr, bool log_failures = true);
	// Under cache_mu_: after OPS were sent, the FAILED ones wait in retry_
	// (cache mode: their entries must go, the next miss fetches them
	// again), the others no longer do.
	void note_results(const std::vector<KernelOp> &ops, const std::vector<std::uint64_t> &failed);
	// Sends the changes waiting in retry_ again when a round is due.
	void retry_refused();
	// Cache mode, after the store went back: every cached entry goes.
	void drop_cache();
	// The revision the watch resumes after (under mu_).
	std::int64_t applied_revision();
	void swap_in(const std::string &scratch);
	// A key below the map's prefix: its identifier, or nullopt (counted
	// and logged as a bad key when COUNT).
	std::optional<std::uint64_t> key_ident(const std::string &key, bool count);
	std::optional<Mapping> value_mapping(const std::string &key, const std::string &value);
	void bad_key(const std::string &key, const std::string &why);
	void set_error(const std::string &msg, Level level = Level::Err);
	// A per-key message: logged within key_log_ (kKeyErrorsLogged a
	// minute); RECORD: also the status's last error.
	void key_error(const std::string &msg, Level level = Level::Err, bool record = true);
	void set_state(const std::string &state);
	void sleep_for(double seconds);
	void notify_ready();
	std::string render_status(bool json);
	double now() const;

	Options o_;
	std::string key_prefix_, range_end_, scratch_;
	std::unique_ptr<EtcdClient> etcd_;
	std::unique_ptr<ila::IlaMapClient> nl_main_, nl_status_, nl_fetch_, nl_monitor_;
	std::unique_ptr<StatusServer> status_server_;
	std::thread status_thread_, progress_thread_, fetch_thread_, monitor_thread_;

	std::atomic<bool> stop_{false}, resync_{false}, ready_sent_{false};
	std::mutex sleep_mu_;
	std::condition_variable sleep_cv_;

	bool need_full_sync_ = true;
	// the store went back (snapshot restore): cache mode drops its cache
	bool store_went_back_ = false;
	std::atomic<std::uint32_t> bad_logged_{0};
	LogBudget key_log_; // under mu_

	// the current watch (the progress thread pokes it)
	std::mutex stream_mu_;
	WatchStream *stream_ = nullptr;
	bool in_read_ = false, progress_pending_ = false;
	Clock::time_point read_since_, pending_since_;
	int slow_waits_ = 0; // times the watch's member answered a read while the watch did not

	// status, under mu_
	mutable std::mutex mu_;
	Status st_;
	Clock::time_point started_;
	// the revisions, whether the map is current (and since when)
	SyncTracker tracker_{0};

	// cache mode, under cache_mu_ (kernel writes of cache mode too)
	std::mutex cache_mu_;
	std::condition_variable fetch_cv_;
	CacheTable cache_;
	RateLimiter limiter_;
	// changes the kernel refused, retried (also in full mode)
	RetryQueue retry_;
	FetchQueue fetch_q_;
	bool cache_reload_ = false;
	Clock::time_point next_sweep_;
	// cache mode: the monitor thread has joined the miss notifications'
	// group (1) or failed to (-1); under sleep_mu_, sleep_cv_ wakes run()
	int monitor_state_ = 0;
};

} // namespace syncd
