// SPDX-License-Identifier: GPL-2.0
// What ila-syncd knows about how far its kernel map is behind the store,
// and the decisions that depend only on revisions, refused changes and
// kernel notifications: the state machine of the daemon without its I/O.
// Pure logic (unit-tested on the host). Times are seconds of a monotonic
// clock.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "command.h"
#include "schema.h"

namespace syncd {

// The revisions of the status and whether the map is current.
//
// "Current" means: watching, every change up to the newest store revision
// seen is applied, and no key is waiting for a retry of a change the
// kernel refused. The store's revision is the newest one seen since the
// last full sync: a full sync sets it, lower if the store went back (a
// store restored from a snapshot).
class SyncTracker {
public:
	explicit SyncTracker(double now) : since_(now) {}

	// A full sync (cache mode: a revalidation) made the map equal to the
	// store at REV, but for BEHIND keys the kernel refused.
	void synced(std::int64_t rev, std::size_t behind, double now);
	// A watch response's header revision. False when it is lower than the
	// revision applied: the store went back (restored from a snapshot) or
	// the member answering is behind the others; the caller tells which
	// with a linearizable read (store_went_back()). Nothing is recorded then.
	bool header(std::int64_t hdr, double now);
	// The events of a response, up to REV, were applied.
	void applied(std::int64_t rev, double now);
	// The watcher's own progress notification: every event up to HDR was
	// sent before it.
	void progress_notify(std::int64_t hdr, double now);
	// The answer to a progress request: the store is at HDR, but etcd 3.4
	// may send it before the last events: it counts for the status only.
	void progress_answer(std::int64_t hdr, double now);
	// Watching (a watch was created) or not (syncing, connecting...).
	void watching(bool on, double now);
	// Keys whose change the kernel refused, waiting for a retry.
	void set_behind(std::size_t n, double now);

	// The revision the watch resumes after.
	std::int64_t applied_revision() const { return applied_; }
	// The revision the map reflects (status "revision").
	std::int64_t revision() const { return revision_; }
	std::int64_t store_revision() const { return store_; }
	std::size_t behind() const { return behind_; }
	bool current() const { return current_; }
	// Stale: not watching, or keys behind.
	bool stale() const { return !watching_ || behind_ > 0; }
	// Seconds since the map was last known current (0 while it is).
	double lag_seconds(double now) const;

private:
	void update(double now);

	std::int64_t applied_ = 0, revision_ = 0, store_ = 0;
	std::size_t behind_ = 0;
	bool watching_ = false, current_ = false;
	double since_; // when current_ last changed
};

// Whether a store that a linearizable read finds at READ_REV went back
// below the revision APPLIED (a snapshot restore: etcd 3.4 cannot raise
// the revision of a restored store, and accepts a watch on a revision it
// does not have yet, which would wait silently).
inline bool store_went_back(std::int64_t read_rev, std::int64_t applied)
{
	return read_rev > 0 && read_rev < applied;
}

// Changes the kernel refused (ENOSPC: the map is full; ENOMEM), retried
// until they apply. One per identifier: the newest change wins. A retry
// round is due a moment after a failure, then at doubling intervals
// (kFirstRetry to kMaxRetry) while changes keep failing, and at once
// after kick() (something made room).
class RetryQueue {
public:
	static constexpr double kFirstRetry = 0.25, kMaxRetry = 8;

	// The change of ID failed: WANT is the mapping the map must hold
	// (nullopt: no entry).
	void failed(std::uint64_t id, const std::optional<Mapping> &want, double now);
	// A change of ID applied (or a newer one replaces the waiting one).
	void done(std::uint64_t id);
	void clear();
	// An entry went from the map: the next round is due now.
	void kick() { next_ = 0; }
	std::size_t size() const { return want_.size(); }
	bool empty() const { return want_.empty(); }
	bool due(double now) const { return !want_.empty() && now >= next_; }
	// Every waiting change, for a round now (each stays until done() or
	// failed() reports it); the next round is due after the backoff.
	std::vector<std::pair<std::uint64_t, std::optional<Mapping>>> take(double now);

private:
	std::map<std::uint64_t, std::optional<Mapping>> want_;
	double next_ = 0, delay_ = kFirstRetry;
};

// The pause before reconnection attempt ATTEMPT (0, 1, ...) after a
// failure: kFirstBackoff doubling up to kMaxBackoff, times a factor in
// [0.5, 1.5) drawn by the caller (U in [0, 1)), so that the routers of a
// fleet that lost the same member do not all come back in the same
// instant.
constexpr double kFirstBackoff = 0.1, kMaxBackoff = 3;
double reconnect_delay(int attempt, double u);

// Per-key messages (a key the kernel refused, a bad key seen by the
// watch): at most N logged per WINDOW seconds, the others counted; the
// count is reported when the next message is allowed.
class LogBudget {
public:
	LogBudget(std::uint32_t n, double window) : n_(n), window_(window) {}
	// Whether one more message may be logged at NOW; SUPPRESSED: how many
	// were not logged since the last one that was (to report with it).
	bool take(double now, std::uint64_t &suppressed);

private:
	std::uint32_t n_, used_ = 0;
	double window_, start_ = -1;
	std::uint64_t suppressed_ = 0;
};

// A change of the kernel map notified by the kernel (ilactl monitor's
// events) that the daemon did not make and must resync from.
enum class ForeignChange { None, Flushed, Destroyed, Swapped };

// What notification C means for map MAP, whose full syncs load SCRATCH and
// swap it in (those swaps, and everything done to SCRATCH, are the
// daemon's own).
ForeignChange foreign_change(const ila::Command &c, const std::string &map, const std::string &scratch);

// "flushed", "destroyed", "swapped with another map" (for the log).
const char *foreign_change_name(ForeignChange c);

} // namespace syncd
