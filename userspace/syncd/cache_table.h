// SPDX-License-Identifier: GPL-2.0
// The bookkeeping of cache mode (an ILA forwarding node): which
// identifiers are cached (with the store revision of their value), which
// are being fetched, which the store does not have (negative entries),
// least recently used order, idle and size eviction. It decides; the
// daemon carries the decisions out on the kernel map. Pure logic
// (unit-tested on the host).
//
// Ordering rule: every piece of knowledge about an identifier carries the
// store revision it is true at; newer wins. A watch event older than what
// a fetch returned is ignored, and an event seen while a fetch is in
// flight wins over the fetch's answer when it is newer.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <unordered_map>
#include <vector>

#include "schema.h"

namespace syncd {

enum class MissVerdict {
	Fetch,	  // not known: fetch it (now pending)
	Cached,	  // already installed (the miss raced the install)
	Pending,  // a fetch is in flight
	Negative, // recently found absent from the store
};

struct CacheAction {
	enum Kind { None, Install, Update, Remove } kind = None;
	Mapping mapping; // Install, Update
};

class CacheTable {
public:
	CacheTable(std::uint32_t capacity, double idle_timeout, double negative_ttl);

	MissVerdict on_miss(std::uint64_t id, double now);
	// The watch saw ID change at REV: its new mapping, or none (deleted,
	// or a value that is not a valid mapping). Entries pushed out to make
	// room go to EVICTED (to be deleted from the kernel map first).
	CacheAction on_change(std::uint64_t id, const std::optional<Mapping> &m, std::int64_t rev,
			      double now, std::vector<std::uint64_t> &evicted);
	// A fetch of ID (read at READ_REV) answered: the mapping with its
	// MOD_REV, or none (no key, or a bad value).
	CacheAction on_fetched(std::uint64_t id, const std::optional<Mapping> &m, std::int64_t mod_rev,
			       std::int64_t read_rev, double now, std::vector<std::uint64_t> &evicted);
	// The fetch of ID failed: no longer pending (the next miss fetches).
	void fetch_failed(std::uint64_t id);
	// ID is no longer in the kernel map (an install failed, someone
	// deleted it): forget it.
	void forget(std::uint64_t id);

	// Sweeps: sweep_seen() for every entry of the kernel map with its hit
	// counter, then sweep_end() returns the entries idle for idle_timeout
	// (forgotten here; to be deleted from the kernel map). Cached entries
	// the kernel map no longer has are forgotten. Expired negative entries
	// go too.
	void sweep_begin();
	void sweep_seen(std::uint64_t id, std::uint64_t hits, double now);
	std::vector<std::uint64_t> sweep_end(double now);

	std::size_t size() const { return index_.size(); }
	std::size_t pending() const { return pending_.size(); }
	std::size_t negative() const { return negative_.size(); }
	std::uint32_t capacity() const { return capacity_; }
	std::optional<Mapping> find(std::uint64_t id) const;
	std::optional<std::int64_t> revision_of(std::uint64_t id) const;
	// Every cached identifier (for resyncs).
	std::vector<std::uint64_t> ids() const;

private:
	static constexpr std::uint32_t kNil = ~0U;
	struct Slot {
		std::uint64_t id;
		std::uint64_t locator;
		std::int64_t rev;
		std::uint64_t hits;
		double last_active;
		std::uint32_t prev, next; // LRU list, least recently active first
		std::uint32_t seen_gen;
		std::uint8_t csum_mode;
	};
	struct PendingFetch {
		bool have_event = false;
		std::optional<Mapping> event;
		std::int64_t event_rev = 0;
	};
	struct NegativeEntry {
		double expires;
		std::int64_t rev;
	};

	CacheAction install(std::uint64_t id, const Mapping &m, std::int64_t rev, double now,
			    std::vector<std::uint64_t> &evicted);
	void remove_slot(std::uint32_t idx);
	void lru_unlink(std::uint32_t idx);
	void lru_push_back(std::uint32_t idx);

	std::uint32_t capacity_;
	double idle_timeout_, negative_ttl_;
	std::vector<Slot> slots_;
	std::vector<std::uint32_t> free_;
	std::unordered_map<std::uint64_t, std::uint32_t> index_;
	std::unordered_map<std::uint64_t, PendingFetch> pending_;
	std::unordered_map<std::uint64_t, NegativeEntry> negative_;
	std::uint32_t head_ = kNil, tail_ = kNil;
	std::uint32_t gen_ = 0;
};

// The misses waiting for a fetch, at most CAP: the newest are served
// first (while the store is slow or unreachable, the oldest misses are the
// ones whose packets are long gone), and when full the oldest is pushed
// out (CacheTable::fetch_failed(): its next miss fetches it).
class FetchQueue {
public:
	explicit FetchQueue(std::size_t cap) : cap_(cap) {}
	// Adds ID; returns the identifier pushed out to make room, if any.
	std::optional<std::uint64_t> push(std::uint64_t id);
	// Up to N identifiers, newest first.
	std::vector<std::uint64_t> take(std::size_t n);
	bool empty() const { return q_.empty(); }
	std::size_t size() const { return q_.size(); }

private:
	std::deque<std::uint64_t> q_; // oldest first
	std::size_t cap_;
};

// A token bucket: RATE tokens a second, at most BURST stored.
class RateLimiter {
public:
	RateLimiter(double rate, double burst) : rate_(rate), burst_(burst), tokens_(burst) {}
	bool take(double now);

private:
	double rate_, burst_, tokens_;
	double last_ = -1;
};

} // namespace syncd
