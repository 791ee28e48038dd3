// SPDX-License-Identifier: GPL-2.0
// ila-syncd: command line and configuration file.
#include <gtest/gtest.h>

#include <map>

#include "options.h"

using namespace syncd;

namespace {

std::map<std::string, std::string> files;

std::string read_file(const std::string &path)
{
	auto it = files.find(path);
	if (it == files.end())
		throw UsageError("--config " + path + ": No such file or directory");
	return it->second;
}

Options parse(std::vector<std::string> args)
{
	args.insert(args.begin(), "ila-syncd");
	return parse_options(args, read_file);
}

// The UsageError message of ARGS.
std::string error_of(std::vector<std::string> args)
{
	try {
		parse(std::move(args));
	} catch (const UsageError &e) {
		return e.what();
	}
	return "(no error)";
}

const std::vector<std::string> kBase = {"--endpoints", "http://10.0.0.1:2379", "--prefix", "/ila", "--map", "hosts"};

std::vector<std::string> base_plus(std::vector<std::string> more)
{
	auto v = kBase;
	v.insert(v.end(), more.begin(), more.end());
	return v;
}

} // namespace

TEST(SyncdOptions, TheInterfaceOfTheIssue)
{
	Options o = parse({"--endpoints", "https://10.0.0.1:2379,https://[fd00::2]:2380,https://etcd3", "--prefix",
			   "/ila/", "--map", "hosts", "--mode", "cache", "--netns", "fwd", "--cacert", "ca.pem", "--cert",
			   "c.pem", "--key", "c.key", "--user", "ila", "--password-file", "pw", "--once"});
	EXPECT_EQ(o.command, Command::Run);
	ASSERT_EQ(o.endpoints.size(), 3u);
	EXPECT_TRUE(o.endpoints[0].tls);
	EXPECT_EQ(o.endpoints[0].target(), "10.0.0.1:2379");
	EXPECT_EQ(o.endpoints[1].target(), "[fd00::2]:2380");
	EXPECT_EQ(o.endpoints[2].target(), "etcd3:2379");
	EXPECT_EQ(o.prefix, "/ila");
	EXPECT_EQ(o.map, "hosts");
	EXPECT_EQ(o.mode, Mode::Cache);
	EXPECT_EQ(o.netns, "fwd");
	EXPECT_EQ(o.user, "ila");
	EXPECT_EQ(o.password_file, "pw");
	EXPECT_TRUE(o.once);
	o = parse({"status", "--map", "hosts", "-j"});
	EXPECT_EQ(o.command, Command::Status);
	EXPECT_TRUE(o.json);
	o = parse({"status", "-pn", "r1"});
	EXPECT_TRUE(o.json && o.pretty);
	EXPECT_EQ(o.netns, "r1");
	o = parse({"import", "--endpoints", "http://e:1", "--prefix", "/p", "--prune", "save.txt"});
	EXPECT_EQ(o.command, Command::Import);
	EXPECT_EQ(o.files, std::vector<std::string>{"save.txt"});
	o = parse({"export", "--endpoints=http://e:1", "--prefix=/p"});
	EXPECT_EQ(o.command, Command::Export);
	EXPECT_EQ(parse({"--help"}).command, Command::Help);
	EXPECT_EQ(parse({"-V"}).command, Command::Version);
}

TEST(SyncdOptions, MessagesNameTheOption)
{
	EXPECT_EQ(error_of({"--prefix", "/p", "--map", "m"}), "--endpoints is required");
	EXPECT_EQ(error_of({"--endpoints", "http://e", "--map", "m"}), "--prefix is required");
	EXPECT_EQ(error_of({"--endpoints", "http://e", "--prefix", "/p"}), "--map is required");
	EXPECT_NE(error_of(base_plus({"--mode", "partial"})).find("--mode: unknown mode \"partial\""), std::string::npos);
	EXPECT_NE(error_of(base_plus({"--map", "bad name"})).find("--map: bad map name"), std::string::npos);
	EXPECT_NE(error_of(base_plus({"--page-size", "0"})).find("--page-size: \"0\""), std::string::npos);
	EXPECT_NE(error_of(base_plus({"--fetch-rate", "fast"})).find("--fetch-rate"), std::string::npos);
	EXPECT_NE(error_of(base_plus({"--idle-timeout", "-1"})).find("--idle-timeout"), std::string::npos);
	EXPECT_NE(error_of(base_plus({"--netns", "../x"})).find("--netns: bad network namespace"), std::string::npos);
	EXPECT_EQ(error_of(base_plus({"--bogus"})), "unknown option --bogus");
	EXPECT_EQ(error_of(base_plus({"--map"})), "--map needs a value");
	EXPECT_EQ(error_of(base_plus({"--once=yes"})), "--once takes no value");
	EXPECT_EQ(error_of(base_plus({"stray"})), "unexpected \"stray\"");
	EXPECT_EQ(error_of(base_plus({"--cert", "c.pem"})), "--cert needs --key");
	EXPECT_EQ(error_of(base_plus({"--user", "u"})), "--user needs --password-file");
	EXPECT_NE(error_of(base_plus({"--cacert", "ca.pem"})).find("--cacert needs https://"), std::string::npos);
	EXPECT_NE(error_of(base_plus({"--user", "u:pw", "--password-file", "f"})).find("--user: a user name cannot contain ':'"),
		  std::string::npos);
	EXPECT_NE(error_of({"status", "--endpoints", "http://e"}).find("--endpoints is not an option of status"),
		  std::string::npos);
	EXPECT_NE(error_of(base_plus({"-j"})).find("--json"), std::string::npos);
}

TEST(SyncdOptions, Endpoints)
{
	EXPECT_EQ(parse_endpoints("http://127.0.0.1", "e")[0].port, 2379);
	EXPECT_EQ(parse_endpoints("http://[::1]:23790/", "e")[0].target(), "[::1]:23790");
	for (const char *bad : {"127.0.0.1:2379", "tcp://h:1", "http://", "http://h:", "http://h:0", "http://h:65536",
				"http://[::1", "http://[zz]:1", "http://h h", "http://a,,http://b", "http://a/x"})
		EXPECT_THROW(parse_endpoints(bad, "--endpoints"), UsageError) << bad;
	EXPECT_NE(error_of({"--endpoints", "https://a,http://b", "--prefix", "p", "--map", "m"}).find("not both"),
		  std::string::npos);
}

TEST(SyncdOptions, ConfigurationFile)
{
	files["/etc/ila-syncd/hosts.conf"] = "# a router\n"
					     "endpoints = http://10.0.0.1:2379,http://10.0.0.2:2379\n"
					     "prefix /ila   # trailing comment\n"
					     "map=hosts\n"
					     "mode full\n"
					     "page-size 5000\n"
					     "progress-interval 0.5\n"
					     "verbose\n"
					     "once no\n";
	Options o = parse({"-c", "/etc/ila-syncd/hosts.conf"});
	EXPECT_EQ(o.endpoints.size(), 2u);
	EXPECT_EQ(o.prefix, "/ila");
	EXPECT_EQ(o.map, "hosts");
	EXPECT_EQ(o.page_size, 5000u);
	EXPECT_DOUBLE_EQ(o.progress_interval, 0.5);
	EXPECT_TRUE(o.verbose);
	EXPECT_FALSE(o.once);
	// the command line wins
	o = parse({"--config", "/etc/ila-syncd/hosts.conf", "--map", "other", "--page-size", "7"});
	EXPECT_EQ(o.map, "other");
	EXPECT_EQ(o.page_size, 7u);
	files["bad"] = "endpoints http://e\nprefix /p\nmap m\nfrobnicate 3\n";
	EXPECT_EQ(error_of({"-c", "bad"}), "bad:4: unknown option \"frobnicate\"");
	files["bad2"] = "endpoints http://e\n\nprefix /p\nmap m\npage-size many\n";
	EXPECT_NE(error_of({"-c", "bad2"}).find("bad2:5: page-size: \"many\""), std::string::npos);
	files["bad3"] = "map\n";
	EXPECT_EQ(error_of({"-c", "bad3"}), "bad3:1: map: missing value");
	files["bad4"] = "config other\n";
	EXPECT_EQ(error_of({"-c", "bad4"}), "bad4:1: unknown option \"config\"");
	EXPECT_NE(error_of({"-c", "missing"}).find("No such file"), std::string::npos);
}

TEST(SyncdOptions, Numbers)
{
	EXPECT_EQ(parse_number("2", 0, 10), 2.0);
	EXPECT_EQ(parse_number("0.5", 0, 10), 0.5);
	EXPECT_FALSE(parse_number("1e3", 0, 1e6));
	EXPECT_FALSE(parse_number("-1", -5, 10));
	EXPECT_FALSE(parse_number("1.2.3", 0, 10));
	EXPECT_FALSE(parse_number(".", 0, 10));
	EXPECT_FALSE(parse_number("11", 0, 10));
	Options o = parse(base_plus({}));
	EXPECT_DOUBLE_EQ(o.sweep(), 30);
	o = parse(base_plus({"--idle-timeout", "4"}));
	EXPECT_DOUBLE_EQ(o.sweep(), 1);
	o = parse(base_plus({"--idle-timeout", "4", "--sweep-interval", "0.2"}));
	EXPECT_DOUBLE_EQ(o.sweep(), 0.2);
}
