// SPDX-License-Identifier: GPL-2.0
// ilactl: command parser and batch files (good and bad lines).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "batch.h"
#include "command.h"

namespace {

ila::Command parse(const std::string &line)
{
	return ila::parse_command(ila::split_words(line));
}

std::vector<std::pair<std::size_t, ila::Command>> run(const std::string &text)
{
	std::vector<std::pair<std::size_t, ila::Command>> out;
	ila::for_each_batch_command(text, [&](std::size_t l, const ila::Command &c) {
		out.emplace_back(l, c);
	});
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
	EXPECT_NE(e.find("only create, destroy, add, replace, del, flush and swap"), std::string::npos) << e;
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
	ila::for_each_batch_command(text, [&](std::size_t l, const ila::Command &c) {
		EXPECT_EQ(l, n + 1);
		EXPECT_EQ(c.op, ila::Op::Add);
		n++;
	});
	EXPECT_EQ(n, 100000U);
}
