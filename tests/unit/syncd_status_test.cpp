// SPDX-License-Identifier: GPL-2.0
// ila-syncd status: JSON and text.
#include <gtest/gtest.h>

#include "status_format.h"

using namespace syncd;

TEST(SyncdStatus, JsonFields)
{
	Status s;
	s.map = "hosts";
	s.mode = "full";
	s.prefix = "/ila";
	s.state = "watching";
	s.stale = false;
	s.pid = 42;
	s.revision = 90;
	s.store_revision = 100;
	s.lag_seconds = 0.25;
	s.entries = 1000;
	s.events_applied = 7;
	s.bad_keys = 2;
	s.last_error = "key \"x\": bad";
	std::string j = status_json(s);
	EXPECT_EQ(j.front(), '{');
	EXPECT_EQ(j.back(), '}');
	for (const char *f : {"\"schema\":1", "\"map\":\"hosts\"", "\"netns\":null", "\"pid\":42", "\"stale\":false",
			      "\"revision\":90", "\"store_revision\":100", "\"lag_revisions\":10",
			      "\"lag_seconds\":0.250", "\"entries\":1000", "\"events_applied\":7", "\"bad_keys\":2",
			      "\"last_error\":\"key \\\"x\\\": bad\"", "\"last_error_time\":null"})
		EXPECT_NE(j.find(f), std::string::npos) << f << " in " << j;
	EXPECT_EQ(j.find("\"cache\""), std::string::npos);
	s.cache = CacheStatus{100, 5, 4, 1, 0, 2, 3};
	s.entries.reset();
	j = status_json(s);
	EXPECT_NE(j.find("\"entries\":null"), std::string::npos);
	EXPECT_NE(j.find("\"cache\":{\"size\":100,\"misses\":5,\"fetches\":4,\"rate_limited\":1,\"negative\":0,"
			 "\"evicted_idle\":2,\"evicted_size\":3,\"fetch_dropped\":0}"),
		  std::string::npos)
		<< j;
}

TEST(SyncdStatus, LagNeverNegative)
{
	Status s;
	s.revision = 10;
	s.store_revision = 5;
	EXPECT_EQ(s.lag_revisions(), 0);
	EXPECT_EQ(format_seconds(-1), "0.000");
	EXPECT_EQ(format_seconds(12.34), "12.3");
	EXPECT_EQ(format_seconds(1234.5), "1234");
}

TEST(SyncdStatus, Text)
{
	Status s;
	s.map = "hosts";
	s.mode = "cache";
	s.prefix = "/ila";
	s.netns = "fwd";
	s.state = "disconnected";
	s.stale = true;
	s.cache = CacheStatus{};
	std::string t = status_text(s);
	EXPECT_NE(t.find("hosts: cache mode, prefix /ila, netns fwd"), std::string::npos) << t;
	EXPECT_NE(t.find("state disconnected (stale)"), std::string::npos) << t;
	EXPECT_NE(t.find("last error: none"), std::string::npos) << t;
	EXPECT_NE(t.find("  cache size 0"), std::string::npos) << t;
}

TEST(SyncdStatus, KeysBehind)
{
	Status s;
	s.map = "hosts";
	s.mode = "full";
	s.state = "watching";
	EXPECT_NE(status_json(s).find("\"keys_behind\":0"), std::string::npos);
	EXPECT_EQ(status_text(s).find("keys behind"), std::string::npos);
	s.keys_behind = 3;
	EXPECT_NE(status_json(s).find("\"keys_behind\":3"), std::string::npos);
	EXPECT_NE(status_text(s).find(", 3 keys behind (refused by the kernel, retried)"), std::string::npos)
		<< status_text(s);
}
