// SPDX-License-Identifier: GPL-2.0
// What `ila-syncd status` reports about one daemon, as JSON (schema 1,
// documented in ila-syncd(8): keys are only added within a schema
// version) and as text. Pure logic (unit-tested on the host).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace syncd {

constexpr int kStatusSchema = 1;

struct CacheStatus {
	std::uint64_t size = 0;	    // --cache-size
	std::uint64_t misses = 0;   // miss notifications received
	std::uint64_t fetches = 0;  // identifiers fetched from the store
	std::uint64_t rate_limited = 0; // misses not fetched because of --fetch-rate
	std::uint64_t negative = 0; // identifiers known absent right now
	std::uint64_t evicted_idle = 0, evicted_size = 0;
	std::uint64_t fetch_dropped = 0; // misses pushed out of a full fetch queue (fetched at their next miss)
};

struct Status {
	std::string map, mode, prefix, netns, endpoint, state;
	long pid = 0;
	bool stale = true;
	std::int64_t revision = 0;	 // the store revision the map reflects
	std::int64_t store_revision = 0; // the newest store revision seen
	double lag_seconds = 0;		 // since the map was last known current
	std::uint64_t keys_behind = 0;	 // changes the kernel refused, waiting for a retry
	std::optional<std::uint64_t> entries; // in the kernel map
	std::uint64_t events_applied = 0, bad_keys = 0, errors = 0, full_syncs = 0;
	double last_sync_seconds = 0;
	std::uint64_t last_sync_keys = 0;
	std::string last_error;
	double last_error_time = 0; // Unix time; 0: none
	double uptime = 0;
	std::optional<CacheStatus> cache;

	std::int64_t lag_revisions() const
	{
		return store_revision > revision ? store_revision - revision : 0;
	}
};

std::string status_json(const Status &s);
std::string status_text(const Status &s);

// Seconds as "0.25" / "12.3" / "1234" (for text and JSON numbers).
std::string format_seconds(double s);

} // namespace syncd
