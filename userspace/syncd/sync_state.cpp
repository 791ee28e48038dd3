// SPDX-License-Identifier: GPL-2.0
#include "sync_state.h"

#include <algorithm>

namespace syncd {

// ---- SyncTracker ----------------------------------------------------------------

void SyncTracker::update(double now)
{
	const bool c = watching_ && behind_ == 0 && revision_ >= store_;
	if (c != current_) {
		current_ = c;
		since_ = now;
	} else if (c) {
		since_ = now;
	}
}

void SyncTracker::synced(std::int64_t rev, std::size_t behind, double now)
{
	// set, not raised: after a snapshot restore both go down
	applied_ = revision_ = store_ = rev;
	behind_ = behind;
	// the map was known equal to the store at REV just now
	if (behind_ == 0)
		since_ = now;
	update(now);
}

bool SyncTracker::header(std::int64_t hdr, double now)
{
	if (hdr > 0 && hdr < applied_)
		return false;
	store_ = std::max(store_, hdr);
	update(now);
	return true;
}

void SyncTracker::applied(std::int64_t rev, double now)
{
	applied_ = std::max(applied_, rev);
	revision_ = std::max(revision_, applied_);
	update(now);
}

void SyncTracker::progress_notify(std::int64_t hdr, double now)
{
	applied(hdr, now);
}

void SyncTracker::progress_answer(std::int64_t hdr, double now)
{
	revision_ = std::max(revision_, hdr);
	update(now);
}

void SyncTracker::watching(bool on, double now)
{
	watching_ = on;
	update(now);
}

void SyncTracker::set_behind(std::size_t n, double now)
{
	behind_ = n;
	update(now);
}

double SyncTracker::lag_seconds(double now) const
{
	return current_ && !stale() ? 0 : std::max(0.0, now - since_);
}

// ---- RetryQueue ---------------------------------------------------------------

void RetryQueue::failed(std::uint64_t id, const std::optional<Mapping> &want, double now)
{
	if (want_.empty()) {
		delay_ = kFirstRetry;
		next_ = now + delay_;
	}
	want_[id] = want;
}

void RetryQueue::done(std::uint64_t id)
{
	want_.erase(id);
	if (want_.empty())
		delay_ = kFirstRetry;
}

void RetryQueue::clear()
{
	want_.clear();
	delay_ = kFirstRetry;
	next_ = 0;
}

std::vector<std::pair<std::uint64_t, std::optional<Mapping>>> RetryQueue::take(double now)
{
	std::vector<std::pair<std::uint64_t, std::optional<Mapping>>> v(want_.begin(), want_.end());
	delay_ = std::min(delay_ * 2, kMaxRetry);
	next_ = now + delay_;
	return v;
}

// ---- reconnection ---------------------------------------------------------------

double reconnect_delay(int attempt, double u)
{
	double base = kFirstBackoff;
	for (int i = 0; i < attempt && base < kMaxBackoff; i++)
		base *= 2;
	base = std::min(base, kMaxBackoff);
	u = std::clamp(u, 0.0, 1.0);
	return base * (0.5 + u);
}

// ---- LogBudget ------------------------------------------------------------------

bool LogBudget::take(double now, std::uint64_t &suppressed)
{
	suppressed = 0;
	if (start_ < 0 || now - start_ >= window_) {
		start_ = now;
		used_ = 0;
	}
	if (used_ >= n_) {
		suppressed_++;
		return false;
	}
	used_++;
	suppressed = suppressed_;
	suppressed_ = 0;
	return true;
}

// ---- kernel notifications -----------------------------------------------------

ForeignChange foreign_change(const ila::Command &c, const std::string &map, const std::string &scratch)
{
	switch (c.op) {
	case ila::Op::Flush:
		return c.map == map ? ForeignChange::Flushed : ForeignChange::None;
	case ila::Op::Destroy:
		return c.map == map ? ForeignChange::Destroyed : ForeignChange::None;
	case ila::Op::Swap:
		if (c.map != map && c.map2 != map)
			return ForeignChange::None;
		// a full sync's own swap (MAP with its scratch map)
		if (c.map == scratch || c.map2 == scratch)
			return ForeignChange::None;
		return ForeignChange::Swapped;
	default:
		return ForeignChange::None;
	}
}

const char *foreign_change_name(ForeignChange c)
{
	switch (c) {
	case ForeignChange::Flushed:
		return "flushed";
	case ForeignChange::Destroyed:
		return "destroyed";
	case ForeignChange::Swapped:
		return "swapped with another map";
	default:
		return "unchanged";
	}
}

} // namespace syncd
