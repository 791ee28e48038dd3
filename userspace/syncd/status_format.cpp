// SPDX-License-Identifier: GPL-2.0
#include "status_format.h"

#include <cmath>
#include <cstdio>

#include "json.h"

namespace syncd {

std::string format_seconds(double s)
{
	char buf[64];
	if (!std::isfinite(s) || s < 0)
		s = 0;
	if (s < 10)
		std::snprintf(buf, sizeof(buf), "%.3f", s);
	else if (s < 1000)
		std::snprintf(buf, sizeof(buf), "%.1f", s);
	else
		std::snprintf(buf, sizeof(buf), "%.0f", s);
	return buf;
}

namespace {

std::string num(std::uint64_t v)
{
	return std::to_string(v);
}

std::string num(std::int64_t v)
{
	return std::to_string(v);
}

} // namespace

std::string status_json(const Status &s)
{
	std::string j = "{\"schema\":" + std::to_string(kStatusSchema);
	j += ",\"map\":" + ila::json_str(s.map);
	j += ",\"mode\":" + ila::json_str(s.mode);
	j += ",\"prefix\":" + ila::json_str(s.prefix);
	j += ",\"netns\":" + (s.netns.empty() ? std::string("null") : ila::json_str(s.netns));
	j += ",\"pid\":" + std::to_string(s.pid);
	j += ",\"state\":" + ila::json_str(s.state);
	j += ",\"stale\":" + std::string(s.stale ? "true" : "false");
	j += ",\"endpoint\":" + (s.endpoint.empty() ? std::string("null") : ila::json_str(s.endpoint));
	j += ",\"revision\":" + num(s.revision);
	j += ",\"store_revision\":" + num(s.store_revision);
	j += ",\"lag_revisions\":" + num(s.lag_revisions());
	j += ",\"lag_seconds\":" + format_seconds(s.lag_seconds);
	j += ",\"keys_behind\":" + num(s.keys_behind);
	j += ",\"entries\":" + (s.entries ? num(*s.entries) : std::string("null"));
	j += ",\"events_applied\":" + num(s.events_applied);
	j += ",\"bad_keys\":" + num(s.bad_keys);
	j += ",\"errors\":" + num(s.errors);
	j += ",\"full_syncs\":" + num(s.full_syncs);
	j += ",\"last_sync_seconds\":" + format_seconds(s.last_sync_seconds);
	j += ",\"last_sync_keys\":" + num(s.last_sync_keys);
	j += ",\"last_error\":" + (s.last_error.empty() ? std::string("null") : ila::json_str(s.last_error));
	j += ",\"last_error_time\":" +
	     (s.last_error_time > 0 ? format_seconds(s.last_error_time) : std::string("null"));
	j += ",\"uptime\":" + format_seconds(s.uptime);
	if (s.cache) {
		const CacheStatus &c = *s.cache;
		j += ",\"cache\":{\"size\":" + num(c.size) + ",\"misses\":" + num(c.misses) +
		     ",\"fetches\":" + num(c.fetches) + ",\"rate_limited\":" + num(c.rate_limited) +
		     ",\"negative\":" + num(c.negative) + ",\"evicted_idle\":" + num(c.evicted_idle) +
		     ",\"evicted_size\":" + num(c.evicted_size) + ",\"fetch_dropped\":" + num(c.fetch_dropped) + "}";
	}
	return j + "}";
}

std::string status_text(const Status &s)
{
	std::string t = s.map + ": " + s.mode + " mode, prefix " + (s.prefix.empty() ? "\"\"" : s.prefix) +
			(s.netns.empty() ? "" : ", netns " + s.netns) + ", pid " + std::to_string(s.pid) + "\n";
	t += "  state " + s.state + (s.stale ? " (stale)" : "") +
	     (s.endpoint.empty() ? "" : ", endpoint " + s.endpoint) + "\n";
	t += "  revision " + num(s.revision) + " of " + num(s.store_revision) + ", lag " +
	     num(s.lag_revisions()) + " revisions, " + format_seconds(s.lag_seconds) + " s" +
	     (s.keys_behind ? ", " + num(s.keys_behind) + " keys behind (refused by the kernel, retried)" : "") +
	     "\n";
	t += "  entries " + (s.entries ? num(*s.entries) : std::string("?")) + ", events applied " +
	     num(s.events_applied) + ", bad keys " + num(s.bad_keys) + ", errors " + num(s.errors) +
	     ", full syncs " + num(s.full_syncs) + " (last " + format_seconds(s.last_sync_seconds) +
	     " s, " + num(s.last_sync_keys) + " keys)\n";
	if (s.cache) {
		const CacheStatus &c = *s.cache;
		t += "  cache size " + num(c.size) + ", misses " + num(c.misses) + ", fetches " +
		     num(c.fetches) + ", rate-limited " + num(c.rate_limited) + ", negative " +
		     num(c.negative) + ", evicted idle " + num(c.evicted_idle) + ", evicted for size " +
		     num(c.evicted_size) + ", dropped from the fetch queue " + num(c.fetch_dropped) + "\n";
	}
	t += "  last error: " + (s.last_error.empty() ? std::string("none") : s.last_error) + "\n";
	return t;
}

} // namespace syncd
