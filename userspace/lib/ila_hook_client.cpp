// SPDX-License-Identifier: GPL-2.0
#include "ila_hook_client.h"

#include <arpa/inet.h>
#include <linux/ila_hook.h>
#include <linux/ila_map.h>

#include <charconv>
#include <cstring>

#include "command.h"
#include "ila_notation.h"

namespace ila {

namespace {

constexpr std::array<std::string_view, 4> kPoints = {"prerouting", "input", "output",
						      "postrouting"};
static_assert(ILA_HOOK_PREROUTING == 0 && ILA_HOOK_INPUT == 1 && ILA_HOOK_OUTPUT == 2 &&
	      ILA_HOOK_POSTROUTING == 3 && __ILA_HOOK_POINT_MAX == kPoints.size());

const char *const kHookUsage =
	"hook add NAME HOOK [translate dst|src] src-pfx P/L (dst-pfx Q/L [csum-mode MODE] | "
	"map MAP [miss accept|drop[,notify]]) [direction sir2ila|ila2sir] [priority N]; hook del NAME; "
	"hook list";

[[noreturn]] void usage(const std::string &msg)
{
	throw UsageError(msg + " (usage: " + kHookUsage + ")");
}

// "ADDR/LEN", LEN 1..64 decimal, no host bits.
void parse_pfx(std::string_view word, std::string_view text, std::array<std::uint8_t, 16> &pfx,
	       std::uint8_t &len)
{
	auto slash = text.find('/');
	if (slash == std::string_view::npos)
		usage(std::string(word) + " \"" + std::string(text) + "\": expected ADDR/LEN");
	std::string addr(text.substr(0, slash));
	if (addr.find('\0') != std::string::npos ||
	    inet_pton(AF_INET6, addr.c_str(), pfx.data()) != 1)
		usage(std::string(word) + " \"" + std::string(text) + "\": bad IPv6 address");
	auto n = parse_uint(text.substr(slash + 1), 1, 64);
	std::string_view ls = text.substr(slash + 1);
	if (!n || (ls.size() > 1 && ls[0] == '0'))
		usage(std::string(word) + " \"" + std::string(text) +
		      "\": prefix length must be 1..64 (decimal)");
	for (unsigned i = 0; i < 16; i++) {
		unsigned bits = i * 8 >= *n ? 0 : (*n - i * 8 >= 8 ? 8 : *n - i * 8);
		std::uint8_t mask = std::uint8_t(0xff00 >> bits);
		if (pfx[i] & ~mask)
			usage(std::string(word) + " \"" + std::string(text) +
			      "\": bits set after the prefix length");
	}
	if (len && len != *n)
		usage("src-pfx and dst-pfx must have the same length");
	len = std::uint8_t(*n);
}

// miss accept|drop[,notify] (either order; notify alone: accept)
constexpr struct {
	std::string_view word;
	bool drop, notify;
} kMisses[] = {
	{"accept", false, false},	{"drop", true, false},
	{"notify", false, true},	{"drop,notify", true, true},
	{"accept,notify", false, true}, {"notify,accept", false, true},
	{"notify,drop", true, true},
};

std::string_view miss_word(const Hook &h)
{
	for (const auto &m : kMisses)
		if (m.drop == h.miss_drop && m.notify == h.miss_notify)
			return m.word;
	return "accept";
}

std::string pfx_text(const std::array<std::uint8_t, 16> &p, unsigned len)
{
	char buf[INET6_ADDRSTRLEN];
	inet_ntop(AF_INET6, p.data(), buf, sizeof(buf));
	return std::string(buf) + "/" + std::to_string(len);
}

} // namespace

std::string_view hook_point_name(std::uint8_t point)
{
	return point < kPoints.size() ? kPoints[point] : "unknown";
}

HookCommand parse_hook_command(const std::vector<std::string_view> &words)
{
	HookCommand c;
	std::size_t i = 0;
	if (i < words.size() && words[i] == "hook")
		i++;
	if (i >= words.size())
		usage("missing hook command");
	std::string_view verb = words[i++];
	auto need = [&](const char *what) {
		if (i >= words.size())
			usage(std::string("hook ") + std::string(verb) + ": missing " + what);
		return words[i++];
	};
	auto name = [&]() {
		std::string_view n = need("NAME");
		if (!valid_map_name(n))
			usage("bad hook name \"" + std::string(n) +
			      "\": 1-31 characters of A-Z a-z 0-9 _ . -");
		return std::string(n);
	};
	if (verb == "list") {
		c.op = HookOp::List;
	} else if (verb == "del") {
		c.op = HookOp::Del;
		c.hook.name = name();
	} else if (verb == "add") {
		c.op = HookOp::Add;
		Hook &h = c.hook;
		h.name = name();
		std::string_view p = need("HOOK");
		bool found = false;
		for (std::size_t k = 0; k < kPoints.size(); k++)
			if (p == kPoints[k]) {
				h.point = std::uint8_t(k);
				found = true;
			}
		if (!found)
			usage("unknown hook \"" + std::string(p) +
			      "\": prerouting, input, output or postrouting");
		bool src_side = h.point == ILA_HOOK_INPUT || h.point == ILA_HOOK_POSTROUTING;
		bool have_src = false, miss_given = false;
		while (i < words.size()) {
			std::string_view key = words[i++];
			if (key == "translate" && !h.translate) {
				std::string_view v = need("dst|src");
				if (v != "dst" && v != "src")
					usage("translate \"" + std::string(v) + "\": dst or src");
				h.translate = v == "src";
				if (*h.translate != src_side)
					usage(std::string(hook_point_name(h.point)) +
					      (src_side ? " translates the source (translate src)"
							: " translates the destination (translate dst)"));
			} else if (key == "src-pfx" && !have_src) {
				parse_pfx(key, need("P/L"), h.src_pfx, h.pfx_len);
				have_src = true;
			} else if (key == "dst-pfx" && !h.has_dst && h.map.empty()) {
				std::uint8_t l = h.pfx_len;
				parse_pfx(key, need("Q/L"), h.dst_pfx, l);
				h.pfx_len = l;
				h.has_dst = true;
			} else if (key == "csum-mode" && !h.csum_mode && h.map.empty()) {
				std::string_view m = need("MODE");
				h.csum_mode = parse_csum_mode(m);
				if (!h.csum_mode)
					usage("bad csum-mode \"" + std::string(m) +
					      "\": adjust-transport, neutral-map, none, "
					      "neutral-map-auto or rfc6296");
			} else if (key == "map" && h.map.empty() && !h.has_dst && !h.csum_mode) {
				std::string_view m = need("MAP");
				if (!valid_map_name(m))
					usage("bad map name \"" + std::string(m) + "\"");
				h.map = std::string(m);
			} else if (key == "miss" && !miss_given) {
				std::string_view m = need("accept|drop[,notify]");
				miss_given = false;
				for (const auto &w : kMisses)
					if (m == w.word) {
						h.miss_drop = w.drop;
						h.miss_notify = w.notify;
						miss_given = true;
					}
				if (!miss_given)
					usage("miss \"" + std::string(m) +
					      "\": accept, drop, notify or drop,notify");
			} else if (key == "direction" && !h.direction) {
				std::string_view d = need("sir2ila|ila2sir");
				if (d != "sir2ila" && d != "ila2sir")
					usage("direction \"" + std::string(d) + "\": sir2ila or ila2sir");
				h.direction = d == "ila2sir";
			} else if (key == "priority" && !h.priority) {
				std::string_view v = need("N");
				std::int32_t n = 0;
				auto r = std::from_chars(v.data(), v.data() + v.size(), n, 10);
				if (r.ec != std::errc() || r.ptr != v.data() + v.size())
					usage("priority \"" + std::string(v) + "\": a decimal integer");
				h.priority = n;
			} else {
				usage("unexpected \"" + std::string(key) + "\"");
			}
		}
		if (!have_src)
			usage("hook add: src-pfx P/L is required");
		if (h.map.empty() && !h.has_dst)
			usage("hook add: dst-pfx Q/L or map MAP is required");
		if (miss_given && h.map.empty())
			usage("hook add: miss needs a map");
		if (h.direction && *h.direction && h.map.empty() &&
		    h.csum_mode.value_or(0) != ILA_MAP_CSUM_NEUTRAL_MAP)
			usage("hook add: direction only applies to csum-mode neutral-map or a map");
	} else {
		usage("unknown hook command \"" + std::string(verb) + "\"");
	}
	if (i < words.size())
		usage("unexpected \"" + std::string(words[i]) + "\"");
	return c;
}

std::string hook_text(const Hook &h)
{
	return hook_spec(h) + " packets " + std::to_string(h.packets) + " bytes " +
	       std::to_string(h.bytes) + " misses " + std::to_string(h.misses) + " drops " +
	       std::to_string(h.drops);
}

std::string hook_spec(const Hook &h)
{
	std::string s = h.name + " " + std::string(hook_point_name(h.point)) + " priority " +
			std::to_string(h.priority.value_or(0)) + " translate " +
			(h.translate.value_or(0) ? "src" : "dst") + " src-pfx " +
			pfx_text(h.src_pfx, h.pfx_len);
	if (!h.map.empty())
		s += " map " + h.map + " miss " + std::string(miss_word(h));
	else
		s += " dst-pfx " + pfx_text(h.dst_pfx, h.pfx_len) + " csum-mode " +
		     std::string(csum_mode_name(h.csum_mode.value_or(0)));
	if (h.direction.value_or(0))
		s += " direction ila2sir";
	return s;
}

std::string hook_json(const Hook &h)
{
	std::string s = hook_spec_json(h);
	s.pop_back();
	return s + ",\"packets\":" + std::to_string(h.packets) + ",\"bytes\":" +
	       std::to_string(h.bytes) + ",\"misses\":" + std::to_string(h.misses) +
	       ",\"drops\":" + std::to_string(h.drops) + "}";
}

std::string hook_spec_json(const Hook &h)
{
	std::string s = "{\"name\":\"" + h.name + "\",\"hook\":\"" +
			std::string(hook_point_name(h.point)) +
			"\",\"priority\":" + std::to_string(h.priority.value_or(0)) +
			",\"translate\":\"" + (h.translate.value_or(0) ? "src" : "dst") +
			"\",\"src_pfx\":\"" + pfx_text(h.src_pfx, h.pfx_len) + "\"";
	if (!h.map.empty())
		s += ",\"map\":\"" + h.map + "\",\"miss\":\"" + (h.miss_drop ? "drop" : "accept") +
		     "\",\"notify_miss\":" + (h.miss_notify ? "true" : "false");
	else
		s += ",\"dst_pfx\":\"" + pfx_text(h.dst_pfx, h.pfx_len) + "\",\"csum_mode\":\"" +
		     std::string(csum_mode_name(h.csum_mode.value_or(0))) + "\"";
	s += std::string(",\"direction\":\"") + (h.direction.value_or(0) ? "ila2sir" : "sir2ila") +
	     "\"";
	return s + "}";
}

std::string hook_event_text(std::uint8_t cmd, const Hook &h)
{
	return cmd == ILA_HOOK_CMD_DELHOOK ? "hook del " + h.name : "hook add " + hook_spec(h);
}

std::string hook_event_json(std::uint8_t cmd, const Hook &h)
{
	return "{\"event\":\"" + std::string(cmd == ILA_HOOK_CMD_DELHOOK ? "hook del" : "hook add") +
	       "\"," + hook_spec_json(h).substr(1);
}

IlaHookClient::IlaHookClient() : genl_(ILA_HOOK_GENL_NAME, "nf_ila_hook", ILA_HOOK_GENL_VERSION) {}

void IlaHookClient::add(const Hook &h)
{
	nlmsghdr *nlh = genl_.start(ILA_HOOK_CMD_NEWHOOK, NLM_F_ACK);
	mnl_attr_put_strz(nlh, ILA_HOOK_A_NAME, h.name.c_str());
	mnl_attr_put_u8(nlh, ILA_HOOK_A_POINT, h.point);
	if (h.priority)
		mnl_attr_put_u32(nlh, ILA_HOOK_A_PRIORITY, std::uint32_t(*h.priority));
	if (h.translate)
		mnl_attr_put_u8(nlh, ILA_HOOK_A_TRANSLATE, *h.translate);
	mnl_attr_put(nlh, ILA_HOOK_A_SRC_PFX, 16, h.src_pfx.data());
	mnl_attr_put_u8(nlh, ILA_HOOK_A_PFX_LEN, h.pfx_len);
	if (h.direction)
		mnl_attr_put_u8(nlh, ILA_HOOK_A_DIRECTION, *h.direction);
	if (!h.map.empty()) {
		mnl_attr_put_strz(nlh, ILA_HOOK_A_MAP, h.map.c_str());
		if (h.miss_drop)
			mnl_attr_put(nlh, ILA_HOOK_A_MISS_DROP, 0, nullptr);
		if (h.miss_notify)
			mnl_attr_put(nlh, ILA_HOOK_A_MISS_NOTIFY, 0, nullptr);
	} else {
		mnl_attr_put(nlh, ILA_HOOK_A_DST_PFX, 16, h.dst_pfx.data());
		if (h.csum_mode)
			mnl_attr_put_u8(nlh, ILA_HOOK_A_CSUM_MODE, *h.csum_mode);
	}
	genl_.transact("hook add " + h.name);
}

std::uint32_t IlaHookClient::events_group() const
{
	return genl_.mcast_group(ILA_HOOK_MCGRP_EVENTS);
}

void IlaHookClient::del(const std::string &name)
{
	nlmsghdr *nlh = genl_.start(ILA_HOOK_CMD_DELHOOK, NLM_F_ACK);
	mnl_attr_put_strz(nlh, ILA_HOOK_A_NAME, name.c_str());
	genl_.transact("hook del " + name);
}

Hook parse_hook(const nlmsghdr *nlh)
{
	auto at = genl_attrs<ILA_HOOK_A_MAX>(nlh);
	Hook h;
	h.name = get_str(at[ILA_HOOK_A_NAME]);
	h.point = get_u8(at[ILA_HOOK_A_POINT]);
	h.priority = std::int32_t(get_u32(at[ILA_HOOK_A_PRIORITY]));
	h.translate = get_u8(at[ILA_HOOK_A_TRANSLATE]);
	h.pfx_len = get_u8(at[ILA_HOOK_A_PFX_LEN]);
	h.direction = get_u8(at[ILA_HOOK_A_DIRECTION]);
	if (const nlattr *a = at[ILA_HOOK_A_SRC_PFX]; a && mnl_attr_get_payload_len(a) == 16)
		std::memcpy(h.src_pfx.data(), mnl_attr_get_payload(a), 16);
	if (const nlattr *a = at[ILA_HOOK_A_DST_PFX]; a && mnl_attr_get_payload_len(a) == 16) {
		std::memcpy(h.dst_pfx.data(), mnl_attr_get_payload(a), 16);
		h.has_dst = true;
	}
	h.map = get_str(at[ILA_HOOK_A_MAP]);
	h.miss_drop = at[ILA_HOOK_A_MISS_DROP] != nullptr;
	h.miss_notify = at[ILA_HOOK_A_MISS_NOTIFY] != nullptr;
	h.csum_mode = get_u8(at[ILA_HOOK_A_CSUM_MODE]);
	if (h.name.empty() || (!h.has_dst && h.map.empty()))
		throw NetlinkError(EPROTO, "hook list: reply without name or target");
	if (h.pfx_len > 128 || h.point >= __ILA_HOOK_POINT_MAX || *h.csum_mode > ILA_MAP_CSUM_MAX)
		throw NetlinkError(EPROTO, "hook list: reply with an out-of-range value");
	if (const nlattr *st = at[ILA_HOOK_A_STATS]; st && mnl_attr_validate(st, MNL_TYPE_NESTED) == 0) {
		auto s = nested_attrs<ILA_HOOK_STATS_MAX>(st);
		h.packets = get_u64(s[ILA_HOOK_STATS_PACKETS]);
		h.bytes = get_u64(s[ILA_HOOK_STATS_BYTES]);
		h.misses = get_u64(s[ILA_HOOK_STATS_MISSES]);
		h.drops = get_u64(s[ILA_HOOK_STATS_DROPS]);
	}
	return h;
}

std::vector<Hook> IlaHookClient::list()
{
	std::vector<Hook> out;
	genl_.start(ILA_HOOK_CMD_GETHOOK, NLM_F_DUMP);
	genl_.transact("hook list", [&](const nlmsghdr *nlh) { out.push_back(parse_hook(nlh)); });
	return out;
}

} // namespace ila
