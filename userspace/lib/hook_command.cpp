// SPDX-License-Identifier: GPL-2.0
#include "hook_command.h"

#include <arpa/inet.h>
#include <linux/ila_hook.h>

#include <charconv>

#include <common/ila_names.h>

#include "command.h"
#include "ila_notation.h"
#include "ila_pfx.h"

namespace ila {

namespace {

// One line of the grammar per form; an error shows the line of the form
// being parsed (known from the verb and, for add, from dst-pfx or map).
constexpr const char *kAddPfx = "hook %s NAME HOOK [translate dst|src] src-pfx P/L dst-pfx Q/L "
				"[csum-mode MODE] [direction D] [priority N]";
constexpr const char *kAddMap = "hook %s NAME HOOK [translate dst|src] src-pfx P/L map MAP "
				"[miss accept|drop[,notify]] [direction D] [priority N]";
constexpr const char *kAddAny = "hook %s NAME HOOK [translate dst|src] src-pfx P/L "
				"(dst-pfx Q/L [csum-mode MODE] | map MAP [miss M]) [direction D] [priority N]";
constexpr std::string_view kVerbs = "add, replace, del, list, show or help";

std::string line_of(const char *fmt, std::string_view verb)
{
	std::string s(fmt);
	s.replace(s.find("%s"), 2, verb);
	return s;
}

class Parser {
public:
	explicit Parser(const std::vector<std::string_view> &w) : words_(w) {}
	HookCommand parse();

private:
	[[noreturn]] void fail(const std::string &msg) const;
	std::string_view need(const char *what);
	std::string name(const char *what);
	void pfx(std::string_view key, bool dst);
	void add_option(std::string_view key);
	void check_add();

	const std::vector<std::string_view> &words_;
	std::size_t i_ = 0;
	std::string_view verb_;
	HookCommand c_;
	bool have_src_ = false, miss_given_ = false;
};

void Parser::fail(const std::string &msg) const
{
	std::string line;
	if (c_.op == HookOp::Add || c_.op == HookOp::Replace)
		line = line_of(c_.hook.has_dst ? kAddPfx : !c_.hook.map.empty() ? kAddMap : kAddAny, verb_);
	else if (c_.op == HookOp::Del)
		line = "hook del NAME";
	else if (!verb_.empty() && (verb_ == "list" || verb_ == "show"))
		line = "hook " + std::string(verb_);
	else if (verb_ == "help")
		line = "hook help";
	else
		line = "hook add|replace|del|list|show|help ...; ilactl hook help for the grammar";
	throw UsageError(msg + " (usage: " + line + ")");
}

std::string_view Parser::need(const char *what)
{
	if (i_ >= words_.size())
		fail("hook " + std::string(verb_) + ": missing " + what);
	return words_[i_++];
}

std::string Parser::name(const char *what)
{
	std::string n(need(what));
	if (!valid_map_name(n))
		fail(std::string("bad ") + (what[0] == 'N' ? "hook" : "map") + " name \"" + n +
		     "\": " ILA_NAME_RULE);
	return n;
}

void Parser::pfx(std::string_view key, bool dst)
{
	const std::string text(need(dst ? "Q/L" : "P/L"));
	Hook &h = c_.hook;
	std::uint8_t *addr = dst ? h.dst_pfx.data() : h.src_pfx.data();
	unsigned len = 0;
	const std::string w = std::string(key) + " \"" + text + "\": ";
	switch (parse_pfx(text, addr, len)) {
	case PfxError::Ok:
		break;
	case PfxError::NoLength:
		fail(w + "expected ADDR/LEN");
	case PfxError::BadAddress:
		fail(w + "bad IPv6 address");
	case PfxError::BadLength:
	case PfxError::TooLong:
	case PfxError::Zero:
		fail(w + "prefix length must be 1..64 (decimal)");
	case PfxError::HostBits:
		fail(w + "bits set after the prefix length");
	}
	if (h.pfx_len && h.pfx_len != len)
		fail(w + "src-pfx and dst-pfx must have the same length");
	h.pfx_len = std::uint8_t(len);
}

void Parser::add_option(std::string_view key)
{
	Hook &h = c_.hook;
	const bool src_side = h.point == ILA_HOOK_INPUT || h.point == ILA_HOOK_POSTROUTING;
	if (key == "translate" && !h.translate) {
		std::string v(need("dst|src"));
		int t = ila_word_parse(ila_translate_words(), v.c_str());
		if (t < 0)
			fail("translate \"" + v + "\": dst or src");
		h.translate = std::uint8_t(t);
		if (bool(t) != src_side)
			fail("translate " + v + ": " + std::string(hook_point_name(h.point)) +
			     (src_side ? " translates the source (translate src)"
				       : " translates the destination (translate dst)"));
	} else if (key == "src-pfx" && !have_src_) {
		pfx(key, false);
		have_src_ = true;
	} else if (key == "dst-pfx" && !h.has_dst && h.map.empty()) {
		pfx(key, true);
		h.has_dst = true;
	} else if (key == "csum-mode" && !h.csum_mode && h.map.empty()) {
		std::string m(need("MODE"));
		int v = ila_word_parse(ila_csum_mode_words(), m.c_str());
		if (v < 0)
			fail("bad csum-mode \"" + m + "\": " ILA_CSUM_MODE_LIST);
		h.csum_mode = std::uint8_t(v);
	} else if (key == "map" && h.map.empty() && !h.has_dst && !h.csum_mode) {
		h.map = name("MAP");
	} else if (key == "miss" && !miss_given_) {
		std::string m(need("accept|drop[,notify]"));
		int v = ila_word_parse(ila_miss_words(), m.c_str());
		if (v < 0)
			fail("miss \"" + m + "\": accept, drop, notify or drop,notify");
		h.miss_drop = v & ILA_MISS_DROP;
		h.miss_notify = v & ILA_MISS_NOTIFY;
		miss_given_ = true;
	} else if (key == "direction" && !h.direction) {
		std::string d(need("sir2ila|ila2sir"));
		int v = ila_word_parse(ila_direction_words(), d.c_str());
		if (v < 0)
			fail("direction \"" + d + "\": sir2ila or ila2sir");
		h.direction = std::uint8_t(v);
	} else if (key == "priority" && !h.priority) {
		std::string_view v = need("N");
		std::int32_t n = 0;
		auto r = std::from_chars(v.data(), v.data() + v.size(), n, 10);
		if (r.ec != std::errc() || r.ptr != v.data() + v.size())
			fail("priority \"" + std::string(v) + "\": a decimal integer");
		h.priority = n;
	} else {
		bool again = key == "translate" || key == "src-pfx" || key == "dst-pfx" ||
			     key == "csum-mode" || key == "map" || key == "miss" ||
			     key == "direction" || key == "priority";
		if (!again)
			fail("unexpected \"" + std::string(key) + "\"");
		if ((key == "map" && (h.has_dst || h.csum_mode)) ||
		    ((key == "dst-pfx" || key == "csum-mode") && !h.map.empty()))
			fail("\"" + std::string(key) + "\": dst-pfx/csum-mode and map exclude each other");
		fail("\"" + std::string(key) + "\" given twice");
	}
}

void Parser::check_add()
{
	const Hook &h = c_.hook;
	const std::string v = "hook " + std::string(verb_) + ": ";
	if (!have_src_)
		fail(v + "src-pfx P/L is required");
	if (h.map.empty() && !h.has_dst)
		fail(v + "dst-pfx Q/L or map MAP is required");
	if (miss_given_ && h.map.empty())
		fail(v + "miss needs a map");
	if (h.direction && *h.direction && h.map.empty() &&
	    h.csum_mode.value_or(0) != NF_ILA_CSUM_NEUTRAL_MAP)
		fail(v + "direction only applies to csum-mode neutral-map or a map");
}

HookCommand Parser::parse()
{
	if (i_ < words_.size() && words_[i_] == "hook")
		i_++;
	if (i_ >= words_.size())
		fail("missing hook command (" + std::string(kVerbs) + ")");
	verb_ = words_[i_++];
	if (verb_ == "list" || verb_ == "show") {
		c_.op = HookOp::List;
	} else if (verb_ == "help") {
		c_.op = HookOp::Help;
	} else if (verb_ == "del") {
		c_.op = HookOp::Del;
		c_.hook.name = name("NAME");
	} else if (verb_ == "add" || verb_ == "replace") {
		c_.op = verb_ == "add" ? HookOp::Add : HookOp::Replace;
		Hook &h = c_.hook;
		h.name = name("NAME");
		std::string p(need("HOOK"));
		int v = ila_word_parse(ila_hook_point_words(), p.c_str());
		if (v < 0)
			fail("unknown hook \"" + p + "\": prerouting, input, output or postrouting");
		h.point = std::uint8_t(v);
		while (i_ < words_.size())
			add_option(words_[i_++]);
		check_add();
	} else {
		fail("unknown hook command \"" + std::string(verb_) + "\" (" + std::string(kVerbs) + ")");
	}
	if (i_ < words_.size())
		fail("unexpected \"" + std::string(words_[i_]) + "\"");
	return c_;
}

} // namespace

const char kHookHelp[] =
	"Usage: ilactl [-n NETNS] hook add NAME HOOK [translate dst|src] src-pfx P/L dst-pfx Q/L\n"
	"                              [csum-mode MODE] [direction D] [priority N]\n"
	"       ilactl [-n NETNS] hook add NAME HOOK [translate dst|src] src-pfx P/L map MAP\n"
	"                              [miss M] [direction D] [priority N]\n"
	"       ilactl [-n NETNS] hook replace NAME ...   (as add: same HOOK and priority, atomic)\n"
	"       ilactl [-n NETNS] hook del NAME\n"
	"       ilactl [-j [-p]] [-n NETNS] hook { list | show }\n"
	"       ilactl hook help\n"
	"HOOK := prerouting | input | output | postrouting\n"
	"MODE := adjust-transport | neutral-map | none | neutral-map-auto | rfc6296\n"
	"M := accept | drop | notify | drop,notify\n"
	"D := sir2ila | ila2sir\n";

HookCommand parse_hook_command(const std::vector<std::string_view> &words)
{
	return Parser(words).parse();
}

std::string_view hook_point_name(std::uint8_t point)
{
	const char *n = ila_word_name(ila_hook_point_words(), point);
	return n ? n : "unknown";
}

std::string_view hook_op_name(HookOp op)
{
	switch (op) {
	case HookOp::Add: return "add";
	case HookOp::Replace: return "replace";
	case HookOp::Del: return "del";
	case HookOp::List: return "list";
	case HookOp::Help: return "help";
	}
	return "?";
}

std::string_view hook_miss_word(const Hook &h)
{
	return miss_word((h.miss_drop ? ILA_MISS_DROP : 0) | (h.miss_notify ? ILA_MISS_NOTIFY : 0));
}

std::string pfx_text(const std::array<std::uint8_t, 16> &p, unsigned len)
{
	char buf[INET6_ADDRSTRLEN];
	inet_ntop(AF_INET6, p.data(), buf, sizeof(buf));
	return std::string(buf) + "/" + std::to_string(len);
}

} // namespace ila
