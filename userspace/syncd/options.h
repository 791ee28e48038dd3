// SPDX-License-Identifier: GPL-2.0
// ila-syncd's command line and configuration file (one parser for both:
// a configuration line is a long option without its dashes, "name value"
// or "name = value"; the command line wins over the file). Every error
// names the option. Pure logic (unit-tested on the host).
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace syncd {

enum class Command { Run, Status, Import, Export, Help, Version };
enum class Mode { Full, Cache };

// An etcd endpoint URL, http://HOST[:PORT] or https://HOST[:PORT]
// (default port 2379; an IPv6 HOST in brackets).
struct Endpoint {
	std::string url;
	bool tls = false;
	std::string host; // without brackets
	std::uint16_t port = 2379;
	std::string target() const; // "host:port" / "[v6]:port" for gRPC
};

struct Options {
	Command command = Command::Run;
	std::vector<Endpoint> endpoints;
	std::string prefix;
	bool prefix_set = false;
	std::string map;
	Mode mode = Mode::Full;
	std::string netns;
	std::string cacert, cert, key;
	std::string user, password_file;
	bool once = false;
	std::string config_file;
	bool verbose = false;

	// full mode
	std::optional<std::uint32_t> max_entries; // for a map ila-syncd creates
	std::uint32_t page_size = 10000;	  // keys per range request
	// both modes
	double progress_interval = 2.0; // s between watch progress requests
	double timeout = 10.0;		// s per request
	// cache mode
	std::uint32_t cache_size = 65536;
	double idle_timeout = 300.0;
	double fetch_rate = 100.0; // fetches per second (burst: the same number, at least 1)
	double negative_ttl = 5.0;
	std::optional<double> sweep_interval; // default min(idle_timeout / 4, 30)

	// status
	bool json = false, pretty = false;
	// import
	bool prune = false;
	std::uint32_t txn_ops = 128; // operations per etcd transaction (etcd's --max-txn-ops)
	std::vector<std::string> files; // import: FILE (default "-")

	double sweep() const;
};

class UsageError : public std::runtime_error {
public:
	using std::runtime_error::runtime_error;
};

// Parses ARGV (argv[0] is the program). Reads the --config file (through
// READ_FILE, which returns its text or throws UsageError) first, then
// applies the command-line options over it. Checks that what the command
// needs is there. Throws UsageError naming the option.
Options parse_options(const std::vector<std::string> &argv,
		      std::string (*read_file)(const std::string &path));

// Endpoints from "URL[,URL...]"; throws UsageError (mentioning WHAT).
std::vector<Endpoint> parse_endpoints(std::string_view list, const std::string &what);

// A duration or rate in [MIN, MAX] from TEXT ("2", "0.5"); nullopt otherwise.
std::optional<double> parse_number(std::string_view text, double min, double max);

extern const char kUsage[];

} // namespace syncd
