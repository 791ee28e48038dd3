// SPDX-License-Identifier: GPL-2.0
#include "options.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <functional>

#include <linux/ila_map.h>

#include "ila_notation.h"
#include "schema.h"

namespace syncd {

const char kUsage[] =
	"Usage: ila-syncd --endpoints URL[,URL...] --prefix PREFIX --map NAME [--mode full|cache]\n"
	"                 [--netns NS] [--cacert F --cert F --key F] [--user U --password-file F]\n"
	"                 [--once] [OPTIONS]\n"
	"       ila-syncd --config FILE [OPTIONS]\n"
	"       ila-syncd status [--map NAME] [-j [-p]] [-n NS]\n"
	"       ila-syncd import --endpoints URL[,...] --prefix PREFIX [--map NAME] [--prune] [FILE|-]\n"
	"       ila-syncd export --endpoints URL[,...] --prefix PREFIX [--map NAME]\n"
	"\n"
	"Keeps the ILA map NAME (module nf_ila, see ilactl(8)) equal to the etcd v3 keys\n"
	"  PREFIX/maps/NAME/IDENTIFIER  ->  \"LOCATOR [csum-mode MODE]\"\n"
	"(IDENTIFIER as `ilactl map show` writes it; the value in the words of `ilactl map add`).\n"
	"\n"
	"Modes:\n"
	"  full    (ILA router, default) the whole range: loaded into a scratch map, swapped\n"
	"          in, then every change applied in order (resynced through a swap after a\n"
	"          compaction)\n"
	"  cache   (ILA forwarding node) entries fetched on a miss (hook or rule with\n"
	"          miss accept,notify), kept current, evicted when idle or over --cache-size\n"
	"\n"
	"etcd:\n"
	"  --endpoints URL[,URL...]  http://HOST[:PORT] or https://HOST[:PORT] (port 2379);\n"
	"                            another one is used when one fails\n"
	"  --prefix PREFIX           key prefix (a trailing / is ignored)\n"
	"  --cacert FILE             CA bundle for https endpoints (default: system roots)\n"
	"  --cert FILE --key FILE    TLS client certificate and key\n"
	"  --user NAME --password-file FILE   etcd authentication (the password is read\n"
	"                            from FILE, first line)\n"
	"  --timeout SEC             per request (default 10)\n"
	"\n"
	"Map:\n"
	"  --map NAME                the map to keep (created when missing)\n"
	"  --mode full|cache\n"
	"  --netns NS, -n NS         the map of network namespace NS (ip netns); etcd is\n"
	"                            still reached from the namespace ila-syncd started in\n"
	"  --once                    sync once and exit (0: in sync)\n"
	"  --max-entries N           max-entries of a map ila-syncd creates\n"
	"  --page-size N             keys per range request of a full sync (default 10000)\n"
	"  --progress-interval SEC   how often the watch's progress is asked (default 2)\n"
	"Cache mode:\n"
	"  --cache-size N            at most N entries (default 65536; least recently used go)\n"
	"  --idle-timeout SEC        entries without hits for SEC are evicted (default 300)\n"
	"  --fetch-rate N            at most N fetches a second (default 100)\n"
	"  --negative-ttl SEC        an identifier not in the store is not fetched again\n"
	"                            for SEC unless it appears (default 5)\n"
	"  --sweep-interval SEC      how often hit counters are read (default idle/4, <= 30)\n"
	"\n"
	"Other:\n"
	"  -c, --config FILE         options from FILE, one per line: NAME VALUE (long option\n"
	"                            without --), '#' comments; the command line wins\n"
	"  -v, --verbose             log every change applied\n"
	"  -j, --json                status: JSON (-p, --pretty: indented)\n"
	"  --prune                   import: also delete the keys of the imported maps that\n"
	"                            the input does not have\n"
	"  --txn-ops N               import: operations per etcd transaction (default 128)\n"
	"  -h, --help                this text\n"
	"  -V, --version             version\n"
	"\n"
	"Exit status: 0 ok, 1 failure (status: no daemon found), 2 usage error.\n";

std::string Endpoint::target() const
{
	if (host.find(':') != std::string::npos)
		return "[" + host + "]:" + std::to_string(port);
	return host + ":" + std::to_string(port);
}

double Options::sweep() const
{
	if (sweep_interval)
		return *sweep_interval;
	return std::min(idle_timeout / 4, 30.0);
}

std::optional<double> parse_number(std::string_view text, double min, double max)
{
	if (text.empty() || text.size() > 32)
		return std::nullopt;
	// digits with at most one '.', no sign, no exponent
	int dots = 0;
	for (char c : text) {
		if (c == '.')
			dots++;
		else if (c < '0' || c > '9')
			return std::nullopt;
	}
	if (dots > 1 || text == ".")
		return std::nullopt;
	double v = std::stod(std::string(text));
	if (!std::isfinite(v) || v < min || v > max)
		return std::nullopt;
	return v;
}

namespace {

Endpoint parse_endpoint(std::string_view url, const std::string &what)
{
	Endpoint e;
	e.url = std::string(url);
	std::string_view rest;
	auto bad = [&](const std::string &why) {
		return UsageError(what + ": bad endpoint \"" + std::string(url) + "\": " + why);
	};
	if (url.starts_with("http://")) {
		rest = url.substr(7);
	} else if (url.starts_with("https://")) {
		e.tls = true;
		rest = url.substr(8);
	} else {
		throw bad("expected http://HOST[:PORT] or https://HOST[:PORT]");
	}
	if (!rest.empty() && rest.back() == '/')
		rest.remove_suffix(1);
	std::string_view port;
	if (rest.starts_with("[")) {
		auto close = rest.find(']');
		if (close == std::string_view::npos)
			throw bad("no ']' after the IPv6 address");
		e.host = std::string(rest.substr(1, close - 1));
		rest = rest.substr(close + 1);
		if (!rest.empty()) {
			if (rest[0] != ':')
				throw bad("expected :PORT after ']'");
			port = rest.substr(1);
			if (port.empty())
				throw bad("empty port");
		}
		if (e.host.empty() || e.host.find_first_not_of("0123456789abcdefABCDEF:.") != std::string::npos)
			throw bad("not an IPv6 address in brackets");
	} else {
		auto colon = rest.find(':');
		e.host = std::string(rest.substr(0, colon));
		if (colon != std::string_view::npos) {
			port = rest.substr(colon + 1);
			if (port.empty())
				throw bad("empty port");
		}
		if (e.host.empty())
			throw bad("no host");
		for (char c : e.host)
			if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
			      c == '.' || c == '-' || c == '_'))
				throw bad("bad character in the host name");
	}
	if (!port.empty()) {
		auto p = ila::parse_uint(port, 1, 65535);
		if (!p)
			throw bad("port must be 1-65535");
		e.port = std::uint16_t(*p);
	}
	return e;
}

struct Setter {
	const char *name;
	char short_name; // 0: none
	enum { Value, Flag } kind;
	std::function<void(Options &, const std::string &value, const std::string &what)> set;
};

std::uint32_t need_uint(const std::string &v, std::uint64_t min, std::uint64_t max, const std::string &what)
{
	auto n = ila::parse_uint(v, min, max);
	if (!n)
		throw UsageError(what + ": \"" + v + "\" is not a whole number in " + std::to_string(min) +
				 "-" + std::to_string(max));
	return std::uint32_t(*n);
}

double need_number(const std::string &v, double min, double max, const std::string &what)
{
	auto n = parse_number(v, min, max);
	if (!n || *n == 0)
		throw UsageError(what + ": \"" + v + "\" is not a positive number of at most " +
				 std::to_string(std::int64_t(max)));
	return *n;
}

std::string need_nonempty(const std::string &v, const std::string &what)
{
	if (v.empty())
		throw UsageError(what + ": empty value");
	return v;
}

const std::vector<Setter> &setters()
{
	static const std::vector<Setter> s = {
		{"endpoints", 0, Setter::Value,
		 [](Options &o, const std::string &v, const std::string &w) { o.endpoints = parse_endpoints(v, w); }},
		{"prefix", 0, Setter::Value,
		 [](Options &o, const std::string &v, const std::string &w) {
			 std::string why;
			 if (!valid_prefix(v, why))
				 throw UsageError(w + ": " + why);
			 o.prefix = normalize_prefix(v);
			 o.prefix_set = true;
		 }},
		{"map", 0, Setter::Value,
		 [](Options &o, const std::string &v, const std::string &w) {
			 if (!ila::valid_map_name(v))
				 throw UsageError(w + ": bad map name \"" + v +
						  "\" (1-31 characters of A-Z a-z 0-9 _ . -)");
			 o.map = v;
		 }},
		{"mode", 0, Setter::Value,
		 [](Options &o, const std::string &v, const std::string &w) {
			 if (v == "full")
				 o.mode = Mode::Full;
			 else if (v == "cache")
				 o.mode = Mode::Cache;
			 else
				 throw UsageError(w + ": unknown mode \"" + v + "\" (full or cache)");
		 }},
		{"netns", 'n', Setter::Value,
		 [](Options &o, const std::string &v, const std::string &w) {
			 if (v.empty() || v.find('/') != std::string::npos || v == "." || v == "..")
				 throw UsageError(w + ": bad network namespace name \"" + v + "\"");
			 o.netns = v;
		 }},
		{"cacert", 0, Setter::Value,
		 [](Options &o, const std::string &v, const std::string &w) { o.cacert = need_nonempty(v, w); }},
		{"cert", 0, Setter::Value,
		 [](Options &o, const std::string &v, const std::string &w) { o.cert = need_nonempty(v, w); }},
		{"key", 0, Setter::Value,
		 [](Options &o, const std::string &v, const std::string &w) { o.key = need_nonempty(v, w); }},
		{"user", 0, Setter::Value,
		 [](Options &o, const std::string &v, const std::string &w) {
			 if (v.find(':') != std::string::npos)
				 throw UsageError(w + ": a user name cannot contain ':' (the password comes from --password-file)");
			 o.user = need_nonempty(v, w);
		 }},
		{"password-file", 0, Setter::Value,
		 [](Options &o, const std::string &v, const std::string &w) { o.password_file = need_nonempty(v, w); }},
		{"once", 0, Setter::Flag, [](Options &o, const std::string &, const std::string &) { o.once = true; }},
		{"config", 'c', Setter::Value,
		 [](Options &o, const std::string &v, const std::string &w) { o.config_file = need_nonempty(v, w); }},
		{"verbose", 'v', Setter::Flag,
		 [](Options &o, const std::string &, const std::string &) { o.verbose = true; }},
		{"max-entries", 0, Setter::Value,
		 [](Options &o, const std::string &v, const std::string &w) {
			 o.max_entries = need_uint(v, 1, ILA_MAP_LIMIT_MAX_ENTRIES, w);
		 }},
		{"page-size", 0, Setter::Value,
		 [](Options &o, const std::string &v, const std::string &w) { o.page_size = need_uint(v, 1, 100000, w); }},
		{"progress-interval", 0, Setter::Value,
		 [](Options &o, const std::string &v, const std::string &w) {
			 o.progress_interval = need_number(v, 0.1, 3600, w);
		 }},
		{"timeout", 0, Setter::Value,
		 [](Options &o, const std::string &v, const std::string &w) { o.timeout = need_number(v, 0.1, 3600, w); }},
		{"cache-size", 0, Setter::Value,
		 [](Options &o, const std::string &v, const std::string &w) {
			 o.cache_size = need_uint(v, 1, ILA_MAP_LIMIT_MAX_ENTRIES, w);
		 }},
		{"idle-timeout", 0, Setter::Value,
		 [](Options &o, const std::string &v, const std::string &w) {
			 o.idle_timeout = need_number(v, 0.1, 86400 * 365, w);
		 }},
		{"fetch-rate", 0, Setter::Value,
		 [](Options &o, const std::string &v, const std::string &w) { o.fetch_rate = need_number(v, 0.01, 1e6, w); }},
		{"negative-ttl", 0, Setter::Value,
		 [](Options &o, const std::string &v, const std::string &w) {
			 o.negative_ttl = need_number(v, 0.01, 86400, w);
		 }},
		{"sweep-interval", 0, Setter::Value,
		 [](Options &o, const std::string &v, const std::string &w) {
			 o.sweep_interval = need_number(v, 0.1, 86400, w);
		 }},
		{"json", 'j', Setter::Flag, [](Options &o, const std::string &, const std::string &) { o.json = true; }},
		{"pretty", 'p', Setter::Flag,
		 [](Options &o, const std::string &, const std::string &) { o.json = o.pretty = true; }},
		{"prune", 0, Setter::Flag, [](Options &o, const std::string &, const std::string &) { o.prune = true; }},
		{"txn-ops", 0, Setter::Value,
		 [](Options &o, const std::string &v, const std::string &w) { o.txn_ops = need_uint(v, 1, 100000, w); }},
		{"help", 'h', Setter::Flag,
		 [](Options &o, const std::string &, const std::string &) { o.command = Command::Help; }},
		{"version", 'V', Setter::Flag,
		 [](Options &o, const std::string &, const std::string &) { o.command = Command::Version; }},
	};
	return s;
}

const Setter *find_long(std::string_view name)
{
	for (const auto &s : setters())
		if (name == s.name)
			return &s;
	return nullptr;
}

const Setter *find_short(char c)
{
	for (const auto &s : setters())
		if (s.short_name && s.short_name == c)
			return &s;
	return nullptr;
}

// Options that make no sense in a configuration file (what to do, not how).
bool file_option(std::string_view name)
{
	return name != "config" && name != "help" && name != "version" && name != "json" && name != "pretty";
}

bool flag_value(const std::string &v, bool &out)
{
	if (v.empty() || v == "yes" || v == "true" || v == "1") {
		out = true;
		return true;
	}
	if (v == "no" || v == "false" || v == "0") {
		out = false;
		return true;
	}
	return false;
}

std::string trim(std::string_view s)
{
	while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r'))
		s.remove_prefix(1);
	while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
		s.remove_suffix(1);
	return std::string(s);
}

void apply_file(Options &o, const std::string &path, const std::string &text)
{
	std::size_t pos = 0, lineno = 0;
	while (pos <= text.size()) {
		std::size_t nl = text.find('\n', pos);
		std::string line = text.substr(pos, nl == std::string::npos ? std::string::npos : nl - pos);
		pos = nl == std::string::npos ? text.size() + 1 : nl + 1;
		lineno++;
		if (auto hash = line.find('#'); hash != std::string::npos)
			line.erase(hash);
		line = trim(line);
		if (line.empty())
			continue;
		// "name value", "name=value", "name = value", or a flag alone
		std::size_t sep = line.find_first_of(" \t=");
		std::string name = line.substr(0, sep);
		std::string value = sep == std::string::npos ? "" : trim(line.substr(sep + 1));
		if (sep != std::string::npos && line[sep] != '=' && !value.empty() && value[0] == '=')
			value = trim(value.substr(1));
		const std::string what = path + ":" + std::to_string(lineno) + ": " + name;
		const Setter *s = find_long(name);
		if (!s || !file_option(name))
			throw UsageError(path + ":" + std::to_string(lineno) + ": unknown option \"" + name + "\"");
		if (s->kind == Setter::Flag) {
			bool on;
			if (!flag_value(value, on))
				throw UsageError(what + ": expected yes or no, not \"" + value + "\"");
			if (on)
				s->set(o, "", what);
			continue;
		}
		if (value.empty())
			throw UsageError(what + ": missing value");
		s->set(o, value, what);
	}
}

struct Token {
	const Setter *setter;
	std::string value;
	std::string what;
};

} // namespace

std::vector<Endpoint> parse_endpoints(std::string_view list, const std::string &what)
{
	std::vector<Endpoint> out;
	std::size_t pos = 0;
	while (pos <= list.size()) {
		std::size_t comma = list.find(',', pos);
		std::string_view one =
			list.substr(pos, comma == std::string_view::npos ? std::string_view::npos : comma - pos);
		pos = comma == std::string_view::npos ? list.size() + 1 : comma + 1;
		if (one.empty())
			throw UsageError(what + ": empty endpoint in \"" + std::string(list) + "\"");
		out.push_back(parse_endpoint(one, what));
	}
	return out;
}

Options parse_options(const std::vector<std::string> &argv,
		      std::string (*read_file)(const std::string &path))
{
	Options o;
	std::size_t i = 1;
	if (argv.size() > 1) {
		if (argv[1] == "status")
			o.command = Command::Status;
		else if (argv[1] == "import")
			o.command = Command::Import;
		else if (argv[1] == "export")
			o.command = Command::Export;
		if (o.command != Command::Run)
			i = 2;
	}
	const Command cmd = o.command;

	// Tokenize first: --config is read before the other options apply.
	std::vector<Token> tokens;
	std::vector<std::string> positional;
	for (; i < argv.size(); i++) {
		const std::string &a = argv[i];
		if (a == "--") {
			positional.insert(positional.end(), argv.begin() + long(i) + 1, argv.end());
			break;
		}
		if (a.starts_with("--")) {
			std::string name = a.substr(2), value;
			bool has_value = false;
			if (auto eq = name.find('='); eq != std::string::npos) {
				value = name.substr(eq + 1);
				name.erase(eq);
				has_value = true;
			}
			const Setter *s = find_long(name);
			if (!s)
				throw UsageError("unknown option --" + name);
			if (s->kind == Setter::Flag && has_value)
				throw UsageError("--" + name + " takes no value");
			if (s->kind == Setter::Value && !has_value) {
				if (i + 1 >= argv.size())
					throw UsageError("--" + name + " needs a value");
				value = argv[++i];
			}
			tokens.push_back({s, value, "--" + name});
		} else if (a.size() > 1 && a[0] == '-') {
			for (std::size_t k = 1; k < a.size(); k++) {
				const Setter *s = find_short(a[k]);
				if (!s)
					throw UsageError(std::string("unknown option -") + a[k]);
				std::string what = std::string("-") + a[k];
				if (s->kind == Setter::Flag) {
					tokens.push_back({s, "", what});
					continue;
				}
				std::string value = a.substr(k + 1);
				if (value.empty()) {
					if (i + 1 >= argv.size())
						throw UsageError(what + " needs a value");
					value = argv[++i];
				}
				tokens.push_back({s, value, what});
				break;
			}
		} else {
			positional.push_back(a);
		}
	}

	for (const auto &t : tokens)
		if (std::string_view(t.setter->name) == "config")
			t.setter->set(o, t.value, t.what);
	if (!o.config_file.empty())
		apply_file(o, o.config_file, read_file(o.config_file));
	for (const auto &t : tokens)
		t.setter->set(o, t.value, t.what);
	if (o.command == Command::Help || o.command == Command::Version)
		return o;
	o.command = cmd;

	// What each command takes and needs.
	auto refuse = [&](bool cond, const std::string &opt, const char *cmdname) {
		if (cond)
			throw UsageError(opt + " is not an option of " + cmdname);
	};
	if (cmd == Command::Status) {
		refuse(!o.endpoints.empty(), "--endpoints", "status");
		refuse(o.once, "--once", "status");
		if (!positional.empty())
			throw UsageError("status: unexpected \"" + positional[0] + "\"");
		return o;
	}
	refuse(o.json && cmd != Command::Status, "--json", "this command (only status has JSON output)");
	if (cmd == Command::Import) {
		if (positional.size() > 1)
			throw UsageError("import: one FILE at most (\"" + positional[1] + "\")");
		o.files = positional.empty() ? std::vector<std::string>{"-"} : positional;
	} else if (!positional.empty()) {
		throw UsageError("unexpected \"" + positional[0] + "\"");
	}
	refuse(o.prune && cmd != Command::Import, "--prune", "this command (import only)");
	if (o.endpoints.empty())
		throw UsageError("--endpoints is required");
	if (!o.prefix_set)
		throw UsageError("--prefix is required");
	if (cmd == Command::Run && o.map.empty())
		throw UsageError("--map is required");
	if (o.cert.empty() != o.key.empty())
		throw UsageError(o.cert.empty() ? "--key needs --cert" : "--cert needs --key");
	const bool any_tls = std::any_of(o.endpoints.begin(), o.endpoints.end(),
					 [](const Endpoint &e) { return e.tls; });
	const bool any_plain = std::any_of(o.endpoints.begin(), o.endpoints.end(),
					   [](const Endpoint &e) { return !e.tls; });
	if ((!o.cacert.empty() || !o.cert.empty()) && any_plain)
		throw UsageError(std::string(o.cacert.empty() ? "--cert" : "--cacert") +
				 " needs https:// endpoints (an http:// endpoint is plain text)");
	if (any_tls && any_plain)
		throw UsageError("--endpoints: all https:// or all http://, not both");
	if (o.user.empty() != o.password_file.empty())
		throw UsageError(o.user.empty() ? "--password-file needs --user" : "--user needs --password-file");
	return o;
}

} // namespace syncd
