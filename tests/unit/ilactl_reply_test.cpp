// SPDX-License-Identifier: GPL-2.0
// ilactl: map/entry replies with missing or malformed attributes are errors
// (never an entry 0:0:0:0), per-entry hits are read, reset-counters parses,
// JSON helpers.
#include <gtest/gtest.h>

#include <endian.h>
#include <libmnl/libmnl.h>
#include <linux/genetlink.h>
#include <linux/ila_hook.h>
#include <linux/ila_map.h>

#include <string>
#include <vector>

#include "command.h"
#include "ila_hook_client.h"
#include "ila_map_client.h"
#include "json.h"
#include "mnl_socket.h"
#include "print.h"

namespace {

// A NEWHOOK / DELHOOK event of the "events" group as monitor prints it.
std::string hook_event(bool json, std::uint8_t cmd, const ila::Hook &h)
{
	ila::FieldPrinter p(json);
	ila::print_hook_event(p,
			      cmd == ILA_HOOK_CMD_DELHOOK ? ila::HookOp::Del
			      : h.replaced		  ? ila::HookOp::Replace
							  : ila::HookOp::Add,
			      h);
	return p.take();
}

std::string hook_event_text(std::uint8_t cmd, const ila::Hook &h)
{
	return hook_event(false, cmd, h);
}

std::string hook_event_json(std::uint8_t cmd, const ila::Hook &h)
{
	return hook_event(true, cmd, h);
}


// A GENL reply in BUF; FILL adds the attributes.
template <typename F> const nlmsghdr *reply(std::vector<char> &buf, F fill)
{
	buf.assign(4096, 0);
	nlmsghdr *nlh = mnl_nlmsg_put_header(buf.data());
	nlh->nlmsg_type = 0x20;
	auto *g = static_cast<genlmsghdr *>(mnl_nlmsg_put_extra_header(nlh, sizeof(genlmsghdr)));
	g->cmd = ILA_MAP_CMD_GETENTRY;
	fill(nlh);
	return nlh;
}

TEST(IlactlReply, EntryWithHits)
{
	std::vector<char> b;
	auto *nlh = reply(b, [](nlmsghdr *n) {
		mnl_attr_put_u64(n, ILA_MAP_A_IDENT, htobe64(0x11));
		mnl_attr_put_u64(n, ILA_MAP_A_LOCATOR, htobe64(0x20010db800030000ull));
		mnl_attr_put_u8(n, ILA_MAP_A_CSUM_MODE, ILA_MAP_CSUM_NO_ACTION);
		mnl_attr_put_u64(n, ILA_MAP_A_HITS, 42);
	});
	auto e = ila::parse_entry(nlh);
	EXPECT_EQ(e.ident, 0x11u);
	EXPECT_EQ(e.locator, 0x20010db800030000ull);
	EXPECT_EQ(e.csum_mode, ILA_MAP_CSUM_NO_ACTION);
	EXPECT_EQ(e.hits, 42u);
}

TEST(IlactlReply, EntryWithoutIdentifierOrLocatorIsAnError)
{
	std::vector<char> b;
	auto *no_ident = reply(b, [](nlmsghdr *n) { mnl_attr_put_u64(n, ILA_MAP_A_LOCATOR, 1); });
	EXPECT_THROW(ila::parse_entry(no_ident), ila::NetlinkError);
	auto *no_loc = reply(b, [](nlmsghdr *n) { mnl_attr_put_u64(n, ILA_MAP_A_IDENT, 1); });
	EXPECT_THROW(ila::parse_entry(no_loc), ila::NetlinkError);
	auto *short_ident = reply(b, [](nlmsghdr *n) {
		mnl_attr_put_u32(n, ILA_MAP_A_IDENT, 1);
		mnl_attr_put_u64(n, ILA_MAP_A_LOCATOR, 1);
	});
	EXPECT_THROW(ila::parse_entry(short_ident), ila::NetlinkError);
	auto *bad_mode = reply(b, [](nlmsghdr *n) {
		mnl_attr_put_u64(n, ILA_MAP_A_IDENT, 1);
		mnl_attr_put_u64(n, ILA_MAP_A_LOCATOR, 1);
		mnl_attr_put_u8(n, ILA_MAP_A_CSUM_MODE, 200);
	});
	EXPECT_THROW(ila::parse_entry(bad_mode), ila::NetlinkError);
}

TEST(IlactlReply, MapNeedsAValidName)
{
	std::vector<char> b;
	EXPECT_THROW(ila::parse_map(reply(b, [](nlmsghdr *n) { mnl_attr_put_u32(n, ILA_MAP_A_ENTRIES, 3); })),
		     ila::NetlinkError);
	EXPECT_THROW(ila::parse_map(reply(b, [](nlmsghdr *n) { mnl_attr_put_strz(n, ILA_MAP_A_NAME, "a b"); })),
		     ila::NetlinkError);
	auto m = ila::parse_map(reply(b, [](nlmsghdr *n) {
		mnl_attr_put_strz(n, ILA_MAP_A_NAME, "hosts");
		mnl_attr_put_u32(n, ILA_MAP_A_ENTRIES, 3);
		auto *nest = mnl_attr_nest_start(n, ILA_MAP_A_STATS);
		mnl_attr_put_u64(n, ILA_MAP_STATS_HITS, 5);
		mnl_attr_nest_end(n, nest);
	}));
	EXPECT_EQ(m.name, "hosts");
	EXPECT_EQ(m.entries, 3u);
	EXPECT_EQ(m.hits, 5u);
}

TEST(IlactlReply, ResetCountersCommand)
{
	auto c = ila::parse_command({"map", "reset-counters", "hosts"});
	EXPECT_EQ(c.op, ila::Op::ResetCounters);
	EXPECT_EQ(c.map, "hosts");
	EXPECT_TRUE(c.is_write());
	EXPECT_EQ(ila::describe(c), "map reset-counters hosts");
	EXPECT_THROW(ila::parse_command({"map", "reset-counters"}), ila::UsageError);
	EXPECT_THROW(ila::parse_command({"map", "reset-counters", "hosts", "x"}), ila::UsageError);
}

TEST(IlactlReply, EventsAreTheCommandsThatMadeThem)
{
	std::vector<char> b;
	auto ev = [&](std::uint8_t cmd, auto fill) {
		auto *nlh = reply(b, fill);
		static_cast<genlmsghdr *>(mnl_nlmsg_get_payload(const_cast<nlmsghdr *>(nlh)))->cmd = cmd;
		return ila::parse_event(nlh);
	};
	auto c = ev(ILA_MAP_CMD_NEWENTRY, [](nlmsghdr *n) {
		mnl_attr_put_strz(n, ILA_MAP_A_NAME, "hosts");
		mnl_attr_put_u64(n, ILA_MAP_A_IDENT, htobe64(0x11));
		mnl_attr_put_u64(n, ILA_MAP_A_LOCATOR, htobe64(0x20010db800010000ull));
		mnl_attr_put_u8(n, ILA_MAP_A_CSUM_MODE, ILA_MAP_CSUM_RFC6296);
		mnl_attr_put(n, ILA_MAP_A_REPLACE, 0, nullptr);
	});
	EXPECT_EQ(c.op, ila::Op::Replace);
	EXPECT_EQ(ila::describe(c), "map replace hosts 0:0:0:11 2001:db8:1:0");
	EXPECT_EQ(c.csum_mode.value_or(0), ILA_MAP_CSUM_RFC6296);
	c = ev(ILA_MAP_CMD_DELENTRY, [](nlmsghdr *n) {
		mnl_attr_put_strz(n, ILA_MAP_A_NAME, "hosts");
		mnl_attr_put_u64(n, ILA_MAP_A_IDENT, htobe64(0x11));
	});
	EXPECT_EQ(ila::describe(c), "map del hosts 0:0:0:11");
	c = ev(ILA_MAP_CMD_SWAP, [](nlmsghdr *n) {
		mnl_attr_put_strz(n, ILA_MAP_A_NAME, "a");
		mnl_attr_put_strz(n, ILA_MAP_A_NAME2, "b");
	});
	EXPECT_EQ(ila::describe(c), "map swap a b");
	c = ev(ILA_MAP_CMD_MISS, [](nlmsghdr *n) {
		mnl_attr_put_strz(n, ILA_MAP_A_NAME, "hosts");
		mnl_attr_put_u64(n, ILA_MAP_A_IDENT, htobe64(0x99));
	});
	EXPECT_EQ(c.op, ila::Op::Miss);
	EXPECT_EQ(ila::describe(c), "# miss hosts 0:0:0:99"); // a comment for -b
	auto cr = ila::parse_command({"map", "create", "hosts", "notify-miss", "max-entries", "10"});
	EXPECT_TRUE(cr.notify_miss);
	EXPECT_EQ(cr.max_entries.value_or(0), 10u);
	EXPECT_THROW(ila::parse_command({"map", "create", "h", "notify-miss", "notify-miss"}),
		     ila::UsageError);
	EXPECT_THROW(ila::parse_command({"map", "add", "h", "0:0:0:1", "1:2:3:4", "notify-miss"}),
		     ila::UsageError);
	// malformed: no name, no identifier, unknown command
	EXPECT_THROW(ev(ILA_MAP_CMD_NEWMAP, [](nlmsghdr *) {}), ila::NetlinkError);
	EXPECT_THROW(ev(ILA_MAP_CMD_DELENTRY, [](nlmsghdr *n) { mnl_attr_put_strz(n, ILA_MAP_A_NAME, "a"); }),
		     ila::NetlinkError);
	EXPECT_THROW(ev(99, [](nlmsghdr *n) { mnl_attr_put_strz(n, ILA_MAP_A_NAME, "a"); }),
		     ila::NetlinkError);
}

TEST(IlactlHook, MissNotifyParsesPrintsAndComesBackAsAnEvent)
{
	struct {
		const char *word;
		bool drop, notify;
		const char *canon;
	} cases[] = {
		{"accept", false, false, "accept"}, {"drop", true, false, "drop"},
		{"notify", false, true, "notify"}, {"accept,notify", false, true, "notify"},
		{"drop,notify", true, true, "drop,notify"}, {"notify,drop", true, true, "drop,notify"},
	};
	for (const auto &c : cases) {
		auto hc = ila::parse_hook_command({"hook", "add", "m", "prerouting", "src-pfx",
						   "2001:db8::/64", "map", "hosts", "miss", c.word});
		EXPECT_EQ(hc.hook.miss_drop, c.drop) << c.word;
		EXPECT_EQ(hc.hook.miss_notify, c.notify) << c.word;
		hc.hook.priority = -250;
		hc.hook.translate = 0;
		EXPECT_EQ(ila::hook_spec(hc.hook),
			  std::string("m prerouting priority -250 translate dst src-pfx 2001:db8::/64 "
				      "map hosts miss ") + c.canon);
	}
	for (const char *bad : {"notify,notify", "drop,accept", "", "Drop"})
		EXPECT_THROW(ila::parse_hook_command({"hook", "add", "m", "prerouting", "src-pfx",
						      "2001:db8::/64", "map", "hosts", "miss", bad}),
			     ila::UsageError)
			<< bad;
	// miss without a map
	EXPECT_THROW(ila::parse_hook_command({"hook", "add", "m", "prerouting", "src-pfx",
					      "2001:db8::/64", "dst-pfx", "2001:db9::/64", "miss",
					      "notify"}),
		     ila::UsageError);

	// NEWHOOK / DELHOOK events of the "events" group
	std::vector<char> b;
	auto hook_msg = [&](std::uint8_t cmd) {
		auto *nlh = reply(b, [](nlmsghdr *n) {
			mnl_attr_put_strz(n, ILA_HOOK_A_NAME, "m");
			mnl_attr_put_u8(n, ILA_HOOK_A_POINT, ILA_HOOK_OUTPUT);
			mnl_attr_put_u32(n, ILA_HOOK_A_PRIORITY, std::uint32_t(-250));
			mnl_attr_put_u8(n, ILA_HOOK_A_TRANSLATE, 0);
			unsigned char pfx[16] = {0x20, 0x01, 0x0d, 0xb8};
			mnl_attr_put(n, ILA_HOOK_A_SRC_PFX, 16, pfx);
			mnl_attr_put_u8(n, ILA_HOOK_A_PFX_LEN, 64);
			mnl_attr_put_u8(n, ILA_HOOK_A_DIRECTION, 0);
			mnl_attr_put_strz(n, ILA_HOOK_A_MAP, "hosts");
			mnl_attr_put(n, ILA_HOOK_A_MISS_NOTIFY, 0, nullptr);
		});
		static_cast<genlmsghdr *>(mnl_nlmsg_get_payload(const_cast<nlmsghdr *>(nlh)))->cmd = cmd;
		return ila::parse_hook(nlh);
	};
	ila::Hook h = hook_msg(ILA_HOOK_CMD_NEWHOOK);
	EXPECT_TRUE(h.miss_notify);
	EXPECT_FALSE(h.miss_drop);
	EXPECT_EQ(hook_event_text(ILA_HOOK_CMD_NEWHOOK, h),
		  "hook add m output priority -250 translate dst src-pfx 2001:db8::/64 map hosts "
		  "miss notify");
	EXPECT_EQ(hook_event_text(ILA_HOOK_CMD_DELHOOK, hook_msg(ILA_HOOK_CMD_DELHOOK)),
		  "hook del m");
	EXPECT_EQ(hook_event_json(ILA_HOOK_CMD_NEWHOOK, h),
		  "{\"event\":\"hook add\",\"name\":\"m\",\"hook\":\"output\",\"priority\":-250,"
		  "\"translate\":\"dst\",\"src_pfx\":\"2001:db8::/64\",\"map\":\"hosts\","
		  "\"miss\":\"accept\",\"notify_miss\":true,\"direction\":\"sir2ila\"}");
	// the event text is a command: it parses back to the same hook
	std::string t = hook_event_text(ILA_HOOK_CMD_NEWHOOK, h);
	std::vector<std::string_view> w;
	for (std::size_t p = 0, q; p < t.size(); p = q + 1) {
		q = t.find(' ', p);
		if (q == std::string::npos)
			q = t.size();
		w.push_back(std::string_view(t).substr(p, q - p));
	}
	EXPECT_EQ(ila::hook_spec(ila::parse_hook_command(w).hook), ila::hook_spec(h));
}

// NEWMAP events carry what "map create" takes, so monitor's replay makes
// the same map (max-entries, notify-miss).
TEST(IlactlEvents, NewMapIsTheCreateThatMakesTheSameMap)
{
	std::vector<char> b;
	auto *nlh = reply(b, [](nlmsghdr *n) {
		mnl_attr_put_strz(n, ILA_MAP_A_NAME, "hosts");
		mnl_attr_put_u32(n, ILA_MAP_A_MAX_ENTRIES, 1000);
		mnl_attr_put(n, ILA_MAP_A_NOTIFY_MISS, 0, nullptr);
	});
	static_cast<genlmsghdr *>(mnl_nlmsg_get_payload(const_cast<nlmsghdr *>(nlh)))->cmd =
		ILA_MAP_CMD_NEWMAP;
	auto c = ila::parse_event(nlh);
	ila::FieldPrinter t(false), j(true);
	ila::print_map_event(t, c);
	ila::print_map_event(j, c);
	EXPECT_EQ(t.take(), "map create hosts max-entries 1000 notify-miss");
	EXPECT_EQ(j.take(), "{\"event\":\"create\",\"name\":\"hosts\",\"max_entries\":1000,"
			    "\"notify_miss\":true}");
	// and it parses back to the same command
	auto back = ila::parse_command(ila::split_words("map create hosts max-entries 1000 notify-miss"));
	EXPECT_EQ(back.max_entries, c.max_entries);
	EXPECT_EQ(back.notify_miss, c.notify_miss);
}

// A NEWHOOK event with REPLACE is "hook replace SPEC"; hook names are
// JSON-escaped like every string (a reply is not trusted to hold a valid
// name).
TEST(IlactlEvents, HookReplaceAndEscapedNames)
{
	std::vector<char> b;
	auto *nlh = reply(b, [](nlmsghdr *n) {
		mnl_attr_put_strz(n, ILA_HOOK_A_NAME, "a\"b");
		mnl_attr_put_u8(n, ILA_HOOK_A_POINT, ILA_HOOK_PREROUTING);
		mnl_attr_put_u32(n, ILA_HOOK_A_PRIORITY, std::uint32_t(-250));
		mnl_attr_put_u8(n, ILA_HOOK_A_TRANSLATE, 0);
		unsigned char pfx[16] = {0x20, 0x01, 0x0d, 0xb8};
		mnl_attr_put(n, ILA_HOOK_A_SRC_PFX, 16, pfx);
		mnl_attr_put(n, ILA_HOOK_A_DST_PFX, 16, pfx);
		mnl_attr_put_u8(n, ILA_HOOK_A_PFX_LEN, 64);
		mnl_attr_put_u8(n, ILA_HOOK_A_CSUM_MODE, 1);
		mnl_attr_put(n, ILA_HOOK_A_REPLACE, 0, nullptr);
	});
	auto h = ila::parse_hook(nlh);
	EXPECT_TRUE(h.replaced);
	EXPECT_EQ(hook_event_text(ILA_HOOK_CMD_NEWHOOK, h),
		  "hook replace a\"b prerouting priority -250 translate dst src-pfx 2001:db8::/64 "
		  "dst-pfx 2001:db8::/64 csum-mode neutral-map");
	std::string j = hook_event_json(ILA_HOOK_CMD_NEWHOOK, h);
	EXPECT_EQ(j.rfind("{\"event\":\"hook replace\",\"name\":\"a\\\"b\",", 0), 0U) << j;
	ila::FieldPrinter p(true);
	p.open_array();
	ila::print_hook(p, h, true);
	p.close_array();
	std::string list = p.take();
	EXPECT_NE(list.find("\"name\":\"a\\\"b\""), std::string::npos) << list;
	EXPECT_NE(list.find("\"drops\":0}]"), std::string::npos) << list;
}

TEST(IlactlJson, PrettyIndentsAndKeepsStrings)
{
	EXPECT_EQ(ila::pretty_json("[]\n"), "[]\n");
	EXPECT_EQ(ila::pretty_json("{\"name\":\"a,{b}\",\"entries\":[\n]}\n"),
		  "{\n  \"name\": \"a,{b}\",\n  \"entries\": []\n}\n");
	EXPECT_EQ(ila::pretty_json("[{\"a\":1},{\"b\":\"x\\\"y\"}]"),
		  "[\n  {\n    \"a\": 1\n  },\n  {\n    \"b\": \"x\\\"y\"\n  }\n]\n");
	EXPECT_EQ(ila::json_str("a\"b\\\n"), "\"a\\\"b\\\\\\u000a\"");
}

} // namespace

// The text of a list is one line per object, nothing else; JSON the array.
TEST(IlactlPrint, TextLinesAndJsonFromOneCall)
{
	ila::Entry a, b;
	a.ident = 1;
	a.locator = 0x20010db800010000ull;
	b.ident = 2;
	b.locator = 0x20010db800020000ull;
	b.csum_mode = 2;
	b.hits = 7;
	for (bool json : {false, true}) {
		ila::FieldPrinter p(json);
		p.open();
		p.str("name", "", "m", ila::FieldPrinter::Json);
		p.open_array("entries");
		p.end_line(true);
		for (const auto &e : {a, b}) {
			ila::print_entry(p, e, true);
			p.end_line(true);
		}
		p.close_array();
		p.close();
		EXPECT_EQ(p.take(), json ? "{\"name\":\"m\",\"entries\":[\n{\"identifier\":\"0:0:0:1\","
					   "\"locator\":\"2001:db8:1:0\",\"csum_mode\":\"adjust-transport\","
					   "\"hits\":0}\n,{\"identifier\":\"0:0:0:2\",\"locator\":"
					   "\"2001:db8:2:0\",\"csum_mode\":\"none\",\"hits\":7}\n]}"
					 : "0:0:0:1 2001:db8:1:0 csum-mode adjust-transport hits 0\n"
					   "0:0:0:2 2001:db8:2:0 csum-mode none hits 7\n");
	}
}
