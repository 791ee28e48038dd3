// SPDX-License-Identifier: GPL-2.0
// ilactl: command parser and batch files (good and bad lines).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "batch.h"
#include "command.h"
#include "hook_command.h"

namespace {

ila::Command parse(const std::string &line)
{
	return ila::parse_command(ila::split_words(line));
}

// the map commands of TEXT with their line numbers
std::vector<std::pair<std::size_t, ila::Command>> run(const std::string &text)
{
	std::vector<std::pair<std::size_t, ila::Command>> out;
	for (const auto &s : ila::parse_script(text))
		if (!s.is_hook)
			out.emplace_back(s.line, s.map);
	return out;
}

std::string batch_error(const std::string &text, std::size_t *line = nullptr)
{
	try {
		run(text);
	} catch (const ila::BatchError &e) {
		if (line)
			*line = e.line();
		return e.what();
	}
	return "";
}

} // namespace

TEST(IlactlCommand, Add)
{
	auto c = parse("map add hosts 0:0:0:1 2001:db8:1:0 csum-mode neutral-map");
	EXPECT_EQ(c.op, ila::Op::Add);
	EXPECT_EQ(c.map, "hosts");
	EXPECT_EQ(c.ident, 1ULL);
	EXPECT_EQ(c.locator, 0x20010db800010000ULL);
	ASSERT_TRUE(c.csum_mode);
	EXPECT_EQ(*c.csum_mode, 1);
	EXPECT_EQ(ila::describe(c), "map add hosts 0:0:0:1 2001:db8:1:0");
}

TEST(IlactlCommand, FullAddressesAndOptionalMap)
{
	auto c = parse("replace m ::42 2001:db8:2::");
	EXPECT_EQ(c.op, ila::Op::Replace);
	EXPECT_EQ(c.ident, 0x42ULL);
	EXPECT_EQ(c.locator, 0x20010db800020000ULL);
	EXPECT_FALSE(c.csum_mode);
}

TEST(IlactlCommand, Others)
{
	EXPECT_EQ(parse("map list").op, ila::Op::List);
	auto c = parse("map create m max-entries 1000");
	EXPECT_EQ(c.op, ila::Op::Create);
	EXPECT_EQ(c.max_entries, 1000U);
	EXPECT_EQ(parse("map del m 0:0:0:9").ident, 9ULL);
	EXPECT_EQ(parse("map get m ::9").ident, 9ULL);
	EXPECT_EQ(parse("map show m").op, ila::Op::Show);
	EXPECT_EQ(parse("map flush m").op, ila::Op::Flush);
	EXPECT_EQ(parse("map stats m").op, ila::Op::Stats);
	EXPECT_EQ(parse("map destroy m").op, ila::Op::Destroy);
	EXPECT_TRUE(parse("map flush m").is_write());
	EXPECT_FALSE(parse("map get m 0:0:0:1").is_write());
}

TEST(IlactlCommand, UsageErrors)
{
	for (const char *bad : {"", "map", "map frob m", "map add", "map add m 0:0:0:1",
				"map add m 0:0:0:1 1:2:3", "map add m 0:0:0:1 1:2:3:4 csum-mode",
				"map add m 0:0:0:1 1:2:3:4 csum-mode bogus",
				"map add m 0:0:0:1 1:2:3:4 csum-mode none csum-mode none",
				"map add m 0:0:0:1 1:2:3:4 extra", "map create bad/name",
				"map create m max-entries 0", "map create m max-entries lots",
				"map del m", "map list extra", "map show m 0:0:0:1",
				"map get m 0:0:0:1 csum-mode none"}) {
		EXPECT_THROW(parse(bad), ila::UsageError) << bad;
	}
}

TEST(IlactlCommand, MessageNamesTheWordAndUsage)
{
	try {
		parse("map add m 0:0:0:1 1:2:3:4 csum-mode bogus");
		FAIL();
	} catch (const ila::UsageError &e) {
		std::string w = e.what();
		EXPECT_NE(w.find("bad csum-mode \"bogus\""), std::string::npos) << w;
		EXPECT_NE(w.find("usage: map add NAME IDENT LOCATOR"), std::string::npos) << w;
	}
}

TEST(IlactlBatch, GoodLines)
{
	auto cmds = run("# a comment\n"
			"map create m\n"
			"\n"
			"   \t  \n"
			"map add m 0:0:0:1 2001:db8:1:0   # trailing comment\n"
			"add m 0:0:0:2 2001:db8:2:0 csum-mode none\r\n"
			"map replace m 0:0:0:1 2001:db8:3:0\n"
			"map del m 0:0:0:2\n"
			"map flush m\n"
			"map destroy m"); // no final newline
	ASSERT_EQ(cmds.size(), 7U);
	EXPECT_EQ(cmds[0].first, 2U);
	EXPECT_EQ(cmds[1].first, 5U);
	EXPECT_EQ(cmds[1].second.locator, 0x20010db800010000ULL);
	EXPECT_EQ(cmds[2].first, 6U);
	EXPECT_EQ(*cmds[2].second.csum_mode, 2);	// none = no-action, as in <linux/ila.h>
	EXPECT_EQ(cmds[3].second.op, ila::Op::Replace);
	EXPECT_EQ(cmds[6].first, 10U);
	EXPECT_EQ(cmds[6].second.op, ila::Op::Destroy);
}

TEST(IlactlBatch, Empty)
{
	EXPECT_TRUE(run("").empty());
	EXPECT_TRUE(run("\n\n# nothing\n").empty());
}

TEST(IlactlBatch, BadLineNumberAndReason)
{
	std::size_t line = 0;
	std::string e = batch_error("map create m\nmap add m 0:0:0:1 2001:db8:1:0\n"
				    "map add m 0:0:0:x 2001:db8:1:0\nmap add m 0:0:0:3 1:2:3:4\n",
				    &line);
	EXPECT_EQ(line, 3U);
	EXPECT_EQ(e.rfind("line 3: bad identifier \"0:0:0:x\"", 0), 0U) << e;
}

TEST(IlactlBatch, ReadCommandsRefused)
{
	std::size_t line = 0;
	std::string e = batch_error("map create m\nmap show m\n", &line);
	EXPECT_EQ(line, 2U);
	EXPECT_NE(e.find("only map create, destroy, add, replace, del, flush, swap, reset-counters; "
			 "hook add, replace, del"),
		  std::string::npos)
		<< e;
	EXPECT_NE(batch_error("map list\n"), "");
}

TEST(IlactlBatch, OtherBadLines)
{
	std::size_t line = 0;
	EXPECT_NE(batch_error("map add m 0:0:0:1\n", &line), "");
	EXPECT_EQ(line, 1U);
	EXPECT_NE(batch_error("\n\nfrobnicate\n", &line), "");
	EXPECT_EQ(line, 3U);
	EXPECT_NE(batch_error(std::string("map flush m\nmap flush m\0x\n", 26), &line), "");
	EXPECT_EQ(line, 2U);
	EXPECT_NE(batch_error("map create " + std::string(40, 'n') + "\n", &line), "");
	EXPECT_EQ(line, 1U);
}

TEST(IlactlBatch, Large)
{
	std::string text;
	for (int i = 0; i < 100000; i++)
		text += "map add big 0:0:" + std::to_string(i / 10000) + ":" + std::to_string(i % 10000) +
			" 2001:db8:1:0\n";
	std::size_t n = 0;
	for (const auto &[l, c] : run(text)) {
		EXPECT_EQ(l, n + 1);
		EXPECT_EQ(c.op, ila::Op::Add);
		n++;
	}
	EXPECT_EQ(n, 100000U);
}

// Map and hook lines come back in file order (a teardown file deletes the
// hook before the map it uses), each with its line number.
TEST(IlactlBatch, MapAndHookLinesInFileOrder)
{
	auto lines = ila::parse_script("map create hosts\n"
				       "hook add h prerouting src-pfx 2001:db8::/64 map hosts\n"
				       "map add hosts 0:0:0:1 2001:db8:1:0\n"
				       "\n"
				       "hook replace h prerouting src-pfx 2001:db8::/64 map hosts miss drop\n"
				       "hook del h\n"
				       "map destroy hosts\n");
	ASSERT_EQ(lines.size(), 6U);
	const bool hook[] = {false, true, false, true, true, false};
	const std::size_t at[] = {1, 2, 3, 5, 6, 7};
	for (std::size_t i = 0; i < lines.size(); i++) {
		EXPECT_EQ(lines[i].is_hook, hook[i]) << i;
		EXPECT_EQ(lines[i].line, at[i]) << i;
	}
	EXPECT_EQ(lines[1].hook.op, ila::HookOp::Add);
	EXPECT_EQ(lines[3].hook.op, ila::HookOp::Replace);
	EXPECT_TRUE(lines[3].hook.hook.miss_drop);
	EXPECT_EQ(lines[4].hook.op, ila::HookOp::Del);
	EXPECT_EQ(lines[5].map.op, ila::Op::Destroy);
}

// The first bad line in file order is the one reported, map or hook.
TEST(IlactlBatch, ErrorsInLineOrder)
{
	std::size_t line = 0;
	std::string e = batch_error("map create m\nhook add h forward src-pfx 2001:db8::/64 map m\n"
				    "map add m 0:0:0:x 2001:db8:1:0\n",
				    &line);
	EXPECT_EQ(line, 2U) << e;
	EXPECT_NE(e.find("unknown hook \"forward\""), std::string::npos) << e;
	e = batch_error("map add m 0:0:0:x 2001:db8:1:0\nhook bogus\n", &line);
	EXPECT_EQ(line, 1U) << e;
	e = batch_error("map create m\nhook list\n", &line);
	EXPECT_EQ(line, 2U) << e;
	EXPECT_NE(e.find("hook list is not a batch command"), std::string::npos) << e;
	EXPECT_NE(batch_error("hook help\n"), "");
}

TEST(IlactlCommand, ShowAloneListsMaps)
{
	EXPECT_EQ(parse("map show").op, ila::Op::List);
	EXPECT_EQ(parse("map show m").op, ila::Op::Show);
	EXPECT_EQ(ila::parse_hook_command({"hook", "show"}).op, ila::HookOp::List);
	EXPECT_EQ(ila::parse_hook_command({"hook", "list"}).op, ila::HookOp::List);
	EXPECT_EQ(ila::parse_hook_command({"hook", "help"}).op, ila::HookOp::Help);
}

// A hook error names the bad word and shows the one grammar line it breaks,
// not the whole grammar.
TEST(IlactlHookGrammar, ErrorNamesTheWordAndOneLine)
{
	auto err = [](std::vector<std::string_view> w) {
		try {
			ila::parse_hook_command(w);
		} catch (const ila::UsageError &e) {
			return std::string(e.what());
		}
		return std::string();
	};
	std::string e = err({"hook", "del", "h", "extra"});
	EXPECT_EQ(e, "unexpected \"extra\" (usage: hook del NAME)");
	e = err({"hook", "add", "h", "prerouting", "src-pfx", "2001:db8::/64", "map", "m", "bogus"});
	EXPECT_EQ(e.rfind("unexpected \"bogus\" (usage: hook add NAME HOOK [translate dst|src] src-pfx "
			  "P/L map MAP [miss accept|drop[,notify]]",
			  0),
		  0U)
		<< e;
	EXPECT_EQ(e.find("dst-pfx"), std::string::npos) << e;
	e = err({"hook", "replace", "h", "prerouting", "src-pfx", "2001:db8::/64", "dst-pfx",
		 "2001:db9::/64", "csum-mode", "x"});
	EXPECT_NE(e.find("bad csum-mode \"x\""), std::string::npos) << e;
	EXPECT_NE(e.find("(usage: hook replace NAME HOOK [translate dst|src] src-pfx P/L dst-pfx Q/L"),
		  std::string::npos)
		<< e;
	EXPECT_EQ(e.find("map MAP"), std::string::npos) << e;
	e = err({"hook", "frob"});
	EXPECT_NE(e.find("unknown hook command \"frob\""), std::string::npos) << e;
	e = err({"hook", "add", "h", "prerouting", "src-pfx", "2001:db8::/64", "priority", "1",
		 "priority", "2"});
	EXPECT_NE(e.find("\"priority\" given twice"), std::string::npos) << e;
	e = err({"hook", "add", "h", "prerouting", "src-pfx", "2001:db8::/64", "map", "m", "dst-pfx",
		 "2001:db9::/64"});
	EXPECT_NE(e.find("exclude each other"), std::string::npos) << e;
	EXPECT_LT(e.size(), 200U) << e;
}
