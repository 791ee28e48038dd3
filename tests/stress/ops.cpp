// SPDX-License-Identifier: GPL-2.0
#include "ops.h"

#include <arpa/inet.h>
#include <linux/ila_hook.h>
#include <linux/ila_map.h>

#include <algorithm>
#include <climits>
#include <cstring>

namespace stress {

namespace {

// The attribute policies of the two families (what the generator knows
// about each attribute type, to spoil it in the right way).
enum class PT : std::uint8_t { None, U8, U32, S32, U64, Str, Bin16, Flag, Reject };
struct Pol {
	PT t = PT::None;
	std::int64_t lo = 0, hi = 0; // valid range when ranged
	bool ranged = false;
};

const Pol *map_policy()
{
	static Pol p[ILA_MAP_A_MAX + 1];
	static bool init = [] {
		p[ILA_MAP_A_NAME] = {PT::Str};
		p[ILA_MAP_A_IDENT] = {PT::U64};
		p[ILA_MAP_A_LOCATOR] = {PT::U64};
		p[ILA_MAP_A_CSUM_MODE] = {PT::U8, 0, ILA_MAP_CSUM_MAX, true};
		p[ILA_MAP_A_MAX_ENTRIES] = {PT::U32, 1, ILA_MAP_LIMIT_MAX_ENTRIES, true};
		p[ILA_MAP_A_ENTRIES] = {PT::Reject};
		p[ILA_MAP_A_RULES] = {PT::Reject};
		p[ILA_MAP_A_STATS] = {PT::Reject};
		p[ILA_MAP_A_REPLACE] = {PT::Flag};
		p[ILA_MAP_A_NAME2] = {PT::Str};
		p[ILA_MAP_A_HITS] = {PT::Reject};
		p[ILA_MAP_A_NOTIFY_MISS] = {PT::Flag};
		return true;
	}();
	(void)init;
	return p;
}

const Pol *hook_policy()
{
	static Pol p[ILA_HOOK_A_MAX + 1];
	static bool init = [] {
		p[ILA_HOOK_A_NAME] = {PT::Str};
		p[ILA_HOOK_A_POINT] = {PT::U8, 0, __ILA_HOOK_POINT_MAX - 1, true};
		p[ILA_HOOK_A_PRIORITY] = {PT::S32};
		p[ILA_HOOK_A_TRANSLATE] = {PT::U8, 0, 1, true};
		p[ILA_HOOK_A_SRC_PFX] = {PT::Bin16};
		p[ILA_HOOK_A_DST_PFX] = {PT::Bin16};
		p[ILA_HOOK_A_PFX_LEN] = {PT::U8, 1, 64, true};
		p[ILA_HOOK_A_CSUM_MODE] = {PT::U8, 0, ILA_MAP_CSUM_MAX, true};
		p[ILA_HOOK_A_DIRECTION] = {PT::U8, 0, 1, true};
		p[ILA_HOOK_A_MAP] = {PT::Str};
		p[ILA_HOOK_A_MISS_DROP] = {PT::Flag};
		p[ILA_HOOK_A_STATS] = {PT::Reject};
		p[ILA_HOOK_A_MISS_NOTIFY] = {PT::Flag};
		p[ILA_HOOK_A_REPLACE] = {PT::Flag};
		return true;
	}();
	(void)init;
	return p;
}

template <typename T> void shuffle(std::vector<T> &v, Rng &rng)
{
	for (std::size_t i = v.size(); i > 1; i--)
		std::swap(v[i - 1], v[rng.below(i)]);
}

Bytes random_bytes(Rng &rng, std::size_t n, bool nonzero)
{
	Bytes b(n);
	for (auto &x : b) {
		x = std::uint8_t(rng.next());
		if (nonzero && !x)
			x = 'z';
	}
	return b;
}

// A value the policy accepts for an attribute of type P (a decoy).
Attr decoy(std::uint16_t type, const Pol &p, Rng &rng)
{
	switch (p.t) {
	case PT::U8:
		return attr_u8(type, std::uint8_t(p.ranged ? rng.range(p.lo, p.hi) : rng.below(256)));
	case PT::U32:
		return attr_u32(type, std::uint32_t(p.ranged ? rng.range(p.lo, p.hi) : rng.next()));
	case PT::S32:
		return attr_s32(type, std::int32_t(rng.next()));
	case PT::U64:
		return attr_u64(type, rng.next());
	case PT::Str: {
		Bytes b = random_bytes(rng, 1 + rng.below(31), true);
		Attr a;
		a.type = type;
		a.data = b;
		a.data.push_back(0);
		return a;
	}
	case PT::Bin16: {
		Attr a;
		a.type = type;
		a.data = random_bytes(rng, 16, false);
		return a;
	}
	default:
		return attr_flag(type);
	}
}

bool fixed_len(PT t, std::size_t &len)
{
	switch (t) {
	case PT::U8: len = 1; return true;
	case PT::U32: case PT::S32: len = 4; return true;
	case PT::U64: len = 8; return true;
	default: return false;
	}
}

bool get_str(const AttrView *a, std::string &s)
{
	if (!a || !a->len || a->data[a->len - 1] != 0 || std::memchr(a->data, 0, a->len) != a->data + a->len - 1)
		return false;
	s.assign(reinterpret_cast<const char *>(a->data), a->len - 1);
	return true;
}

template <typename T> bool get_fixed(const AttrView *a, T &v)
{
	if (!a || a->len != sizeof(T))
		return false;
	std::memcpy(&v, a->data, sizeof(T));
	return true;
}

bool get_pfx(const AttrView *a, Pfx &p)
{
	if (!a || a->len != 16)
		return false;
	std::memcpy(p.data(), a->data, 16);
	return true;
}

std::string check_stats(const AttrView *a, std::uint16_t pad, std::initializer_list<std::uint16_t> need,
			std::vector<std::uint64_t> *vals)
{
	if (!a)
		return "no STATS";
	std::vector<AttrView> st;
	std::string problem;
	if (!parse_attrs(a->data, a->len, st, problem))
		return "STATS: " + problem;
	for (auto t : need) {
		std::uint64_t v;
		if (!get_fixed(find_attr(st, t), v))
			return "STATS: counter " + std::to_string(t) + " missing or not a u64";
		if (vals)
			vals->push_back(v);
	}
	for (const auto &x : st)
		if (x.type == pad && x.len)
			return "STATS: PAD with payload";
	return "";
}

} // namespace

bool valid_name(const std::string &s)
{
	if (s.empty() || s.size() > 31)
		return false;
	for (char c : s)
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
		      c == '.' || c == '-'))
			return false;
	return true;
}

bool map_cmd_writes(std::uint8_t cmd)
{
	return cmd != ILA_MAP_CMD_GETMAP && cmd != ILA_MAP_CMD_GETENTRY;
}

bool hook_cmd_writes(std::uint8_t cmd) { return cmd != ILA_HOOK_CMD_GETHOOK; }

std::string map_label(std::uint8_t cmd, bool dump)
{
	static const char *n[] = {"UNSPEC",	"NEWMAP",   "DELMAP",	"GETMAP", "FLUSH", "NEWENTRY",
				  "DELENTRY", "GETENTRY", "SWAP",	"RESET_COUNTERS", "MISS"};
	std::string s = "ILA_MAP ";
	s += cmd < sizeof(n) / sizeof(n[0]) ? n[cmd] : "cmd" + std::to_string(cmd);
	return dump ? s + " dump" : s;
}

std::string hook_label(std::uint8_t cmd, bool dump)
{
	static const char *n[] = {"UNSPEC", "NEWHOOK", "DELHOOK", "GETHOOK"};
	std::string s = "ILA_HOOK ";
	s += cmd < sizeof(n) / sizeof(n[0]) ? n[cmd] : "cmd" + std::to_string(cmd);
	return dump ? s + " dump" : s;
}

const char *point_name(std::uint8_t point)
{
	static const char *n[] = {"prerouting", "input", "output", "postrouting"};
	return point < 4 ? n[point] : "?";
}

bool point_src(std::uint8_t point) { return point == ILA_HOOK_INPUT || point == ILA_HOOK_POSTROUTING; }

bool host_bits_clear(const Pfx &p, unsigned len)
{
	for (unsigned bit = len; bit < 128; bit++)
		if (p[bit / 8] & (0x80 >> (bit % 8)))
			return false;
	return true;
}

std::string pfx_str(const Pfx &p, unsigned len)
{
	char b[INET6_ADDRSTRLEN];
	inet_ntop(AF_INET6, p.data(), b, sizeof(b));
	return std::string(b) + "/" + std::to_string(len);
}

std::string HookState::str() const
{
	std::string s = std::string(point_name(point)) + " priority " + std::to_string(prio) + " translate " +
			std::to_string(translate) + " src-pfx " + pfx_str(src, pfx_len) + " direction " +
			std::to_string(dir);
	if (!map.empty())
		return s + " map " + map + (miss_drop ? " miss-drop" : "") + (miss_notify ? " miss-notify" : "");
	return s + " dst-pfx " + pfx_str(dst, pfx_len) + " csum-mode " + std::to_string(csum);
}

HookState effective(const HookOp &op)
{
	HookState h;
	h.point = op.point.value_or(0);
	h.translate = point_src(h.point);
	h.prio = op.prio.value_or(h.translate ? ILA_HOOK_PRI_SRC : ILA_HOOK_PRI_DST);
	h.src = op.src.value_or(Pfx{});
	h.pfx_len = op.pfx_len.value_or(0);
	h.dir = op.dir.value_or(0);
	if (op.map) {
		h.map = *op.map;
		h.miss_drop = op.miss_drop;
		h.miss_notify = op.miss_notify;
	} else {
		h.dst = op.dst.value_or(Pfx{});
		h.csum = op.csum.value_or(0);
	}
	return h;
}

// ---- encoding --------------------------------------------------------------

Request build(const MapOp &op, Rng &rng)
{
	Request r;
	r.nl_type = g_fam.map.id;
	r.cmd = op.cmd;
	r.flags = NLM_F_REQUEST | NLM_F_ACK | (op.dump ? NLM_F_DUMP : 0);
	if (op.name)
		r.attrs.push_back(attr_str(ILA_MAP_A_NAME, *op.name));
	if (op.name2)
		r.attrs.push_back(attr_str(ILA_MAP_A_NAME2, *op.name2));
	if (op.ident)
		r.attrs.push_back(attr_u64(ILA_MAP_A_IDENT, *op.ident));
	if (op.locator)
		r.attrs.push_back(attr_u64(ILA_MAP_A_LOCATOR, *op.locator));
	if (op.csum)
		r.attrs.push_back(attr_u8(ILA_MAP_A_CSUM_MODE, *op.csum));
	if (op.max)
		r.attrs.push_back(attr_u32(ILA_MAP_A_MAX_ENTRIES, *op.max));
	if (op.replace)
		r.attrs.push_back(attr_flag(ILA_MAP_A_REPLACE));
	if (op.notify)
		r.attrs.push_back(attr_flag(ILA_MAP_A_NOTIFY_MISS));
	shuffle(r.attrs, rng);
	return r;
}

Request build(const HookOp &op, Rng &rng)
{
	Request r;
	r.nl_type = g_fam.hook.id;
	r.cmd = op.cmd;
	r.flags = NLM_F_REQUEST | NLM_F_ACK | (op.dump ? NLM_F_DUMP : 0);
	if (op.name)
		r.attrs.push_back(attr_str(ILA_HOOK_A_NAME, *op.name));
	if (op.point)
		r.attrs.push_back(attr_u8(ILA_HOOK_A_POINT, *op.point));
	if (op.prio)
		r.attrs.push_back(attr_s32(ILA_HOOK_A_PRIORITY, *op.prio));
	if (op.translate)
		r.attrs.push_back(attr_u8(ILA_HOOK_A_TRANSLATE, *op.translate));
	if (op.src)
		r.attrs.push_back(attr_bin(ILA_HOOK_A_SRC_PFX, op.src->data(), 16));
	if (op.dst)
		r.attrs.push_back(attr_bin(ILA_HOOK_A_DST_PFX, op.dst->data(), 16));
	if (op.pfx_len)
		r.attrs.push_back(attr_u8(ILA_HOOK_A_PFX_LEN, *op.pfx_len));
	if (op.csum)
		r.attrs.push_back(attr_u8(ILA_HOOK_A_CSUM_MODE, *op.csum));
	if (op.dir)
		r.attrs.push_back(attr_u8(ILA_HOOK_A_DIRECTION, *op.dir));
	if (op.map)
		r.attrs.push_back(attr_str(ILA_HOOK_A_MAP, *op.map));
	if (op.miss_drop)
		r.attrs.push_back(attr_flag(ILA_HOOK_A_MISS_DROP));
	if (op.miss_notify)
		r.attrs.push_back(attr_flag(ILA_HOOK_A_MISS_NOTIFY));
	if (op.replace)
		r.attrs.push_back(attr_flag(ILA_HOOK_A_REPLACE));
	shuffle(r.attrs, rng);
	return r;
}

ErrSet static_errors(const MapOp &op)
{
	ErrSet e;
	switch (op.cmd) {
	case ILA_MAP_CMD_NEWMAP:
		if (!op.name)
			e.add(Why::Missing);
		else if (!valid_name(*op.name))
			e.add(Why::Invalid);
		break;
	case ILA_MAP_CMD_GETMAP:
		if (!op.dump && !op.name)
			e.add(Why::Missing);
		break;
	case ILA_MAP_CMD_DELMAP:
	case ILA_MAP_CMD_FLUSH:
	case ILA_MAP_CMD_RESET_COUNTERS:
		if (!op.name)
			e.add(Why::Missing);
		break;
	case ILA_MAP_CMD_NEWENTRY:
		if (!op.name || !op.ident || !op.locator)
			e.add(Why::Missing);
		break;
	case ILA_MAP_CMD_DELENTRY:
		if (!op.name || !op.ident)
			e.add(Why::Missing);
		break;
	case ILA_MAP_CMD_GETENTRY:
		if (!op.name || (!op.dump && !op.ident))
			e.add(Why::Missing);
		break;
	case ILA_MAP_CMD_SWAP:
		if (!op.name || !op.name2)
			e.add(Why::Missing);
		break;
	}
	return e;
}

ErrSet static_errors(const HookOp &op)
{
	ErrSet e;
	switch (op.cmd) {
	case ILA_HOOK_CMD_NEWHOOK:
		if (!op.name || !op.point || !op.src || !op.pfx_len)
			e.add(Why::Missing);
		if (op.name && !valid_name(*op.name))
			e.add(Why::Invalid);
		if (op.point && op.translate && *op.translate != point_src(*op.point))
			e.add(Why::Invalid);
		if (op.prio && (*op.prio == INT_MIN || *op.prio == INT_MAX))
			e.add(Why::Invalid);
		if (op.src && op.pfx_len && !host_bits_clear(*op.src, *op.pfx_len))
			e.add(Why::Invalid);
		if (op.map) {
			if (op.dst || op.csum)
				e.add(Why::Invalid);
		} else {
			if (!op.dst)
				e.add(Why::Missing);
			if (op.miss_drop || op.miss_notify)
				e.add(Why::Invalid);
			if (op.dst && op.pfx_len && !host_bits_clear(*op.dst, *op.pfx_len))
				e.add(Why::Invalid);
			if (op.dir && *op.dir && op.csum.value_or(0) != ILA_MAP_CSUM_NEUTRAL_MAP)
				e.add(Why::Invalid);
		}
		break;
	case ILA_HOOK_CMD_DELHOOK:
		if (!op.name)
			e.add(Why::Missing);
		break;
	case ILA_HOOK_CMD_GETHOOK:
		if (!op.dump && !op.name)
			e.add(Why::Missing);
		break;
	}
	return e;
}

// ---- mutations --------------------------------------------------------------

Mutation mutate(Request &r, bool is_map, bool is_dump, bool malformed, bool last_ok, Rng &rng)
{
	const Pol *pol = is_map ? map_policy() : hook_policy();
	const unsigned maxattr = is_map ? ILA_MAP_A_MAX : ILA_HOOK_A_MAX;
	auto pol_of = [&](const Attr &a) -> const Pol & {
		static const Pol none;
		unsigned t = a.type & NLA_TYPE_MASK;
		return t <= maxattr ? pol[t] : none;
	};
	Mutation m;

	// benign: the kernel must read the same request
	if (!r.attrs.empty() && rng.chance(10)) {
		std::size_t i = rng.below(r.attrs.size());
		const Pol &p = pol_of(r.attrs[i]);
		if (p.t != PT::None && p.t != PT::Reject)
			r.attrs.insert(r.attrs.begin() + long(i), decoy(r.attrs[i].type, p, rng));
	}
	if (!r.attrs.empty() && rng.chance(8))
		r.attrs[rng.below(r.attrs.size())].type |= NLA_F_NET_BYTEORDER;
	if (!r.attrs.empty() && rng.chance(8)) {
		Attr &a = r.attrs[rng.below(r.attrs.size())];
		if (pol_of(a).t == PT::Str && a.data.size() < 31) {
			Bytes junk = random_bytes(rng, rng.below(31 - a.data.size()) + 1, false);
			a.data.insert(a.data.end(), junk.begin(), junk.end());
		}
	}
	if (rng.chance(10))
		r.flags |= NLM_F_ECHO;
	if (rng.chance(15))
		r.flags &= ~NLM_F_ACK;
	if (rng.chance(10))
		r.version = std::uint8_t(rng.next());
	if (!malformed)
		return m;

	m.kind = MutKind::Malformed;
	m.why = Why::Policy;
	// the attributes of each kind
	std::vector<std::size_t> fixed, flags, bins, strs, ranged, any;
	for (std::size_t i = 0; i < r.attrs.size(); i++) {
		const Pol &p = pol_of(r.attrs[i]);
		std::size_t l;
		if (p.t == PT::None || p.t == PT::Reject)
			continue;
		any.push_back(i);
		if (fixed_len(p.t, l))
			fixed.push_back(i);
		if (p.t == PT::Flag)
			flags.push_back(i);
		if (p.t == PT::Bin16)
			bins.push_back(i);
		if (p.t == PT::Str)
			strs.push_back(i);
		if (p.ranged)
			ranged.push_back(i);
	}
	for (int tries = 0; tries < 50; tries++) {
		switch (rng.below(26)) {
		case 0:
		case 1:
			if (fixed.empty())
				break;
			{
				Attr &a = r.attrs[rng.pick(fixed)];
				std::size_t want = 0, l;
				fixed_len(pol_of(a).t, want);
				do
					l = rng.below(17);
				while (l == want);
				a.data = random_bytes(rng, l, false);
				m.what = "attribute " + std::to_string(a.type & NLA_TYPE_MASK) + " of " +
					 std::to_string(l) + " bytes";
			}
			return m;
		case 2:
			if (flags.empty())
				break;
			{
				Attr &a = r.attrs[rng.pick(flags)];
				a.data = random_bytes(rng, 1 + rng.below(8), false);
				m.what = "flag attribute " + std::to_string(a.type & NLA_TYPE_MASK) + " with payload";
			}
			return m;
		case 3:
			if (bins.empty())
				break;
			{
				Attr &a = r.attrs[rng.pick(bins)];
				std::size_t l;
				do
					l = rng.below(40);
				while (l == 16);
				a.data = random_bytes(rng, l, false);
				m.what = "prefix of " + std::to_string(l) + " bytes";
			}
			return m;
		case 4:
			if (strs.empty())
				break;
			{
				Attr &a = r.attrs[rng.pick(strs)];
				a.data = random_bytes(rng, 1 + rng.below(40), true);
				m.what = "string without NUL";
			}
			return m;
		case 5:
			if (strs.empty())
				break;
			{
				Attr &a = r.attrs[rng.pick(strs)];
				a.data = random_bytes(rng, 32 + rng.below(60), true);
				a.data.push_back(0);
				m.what = "string of " + std::to_string(a.data.size() - 1) + " characters";
			}
			return m;
		case 6:
			if (strs.empty())
				break;
			r.attrs[rng.pick(strs)].data.clear();
			m.what = "empty string attribute (no NUL)";
			return m;
		case 7:
		case 8:
			if (ranged.empty())
				break;
			{
				Attr &a = r.attrs[rng.pick(ranged)];
				const Pol &p = pol_of(a);
				std::int64_t v;
				const std::int64_t top = p.t == PT::U8 ? 255 : 0xffffffffLL;
				if (p.lo > 0 && rng.chance(40))
					v = rng.range(0, p.lo - 1);
				else
					v = rng.range(p.hi + 1, top);
				if (p.t == PT::U8)
					a.data = attr_u8(0, std::uint8_t(v)).data;
				else
					a.data = attr_u32(0, std::uint32_t(v)).data;
				m.what = "attribute " + std::to_string(a.type & NLA_TYPE_MASK) + " = " +
					 std::to_string(v) + " (out of range)";
			}
			return m;
		case 9:
		case 10: {
			// (NLA_TYPE_MASK is an int, ~(flag bits): negative; its
			// low 16 bits are the largest type)
			constexpr std::int64_t kTypeMax = NLA_TYPE_MASK & 0xffff;
			std::uint16_t t = rng.chance(20) ? 0 : std::uint16_t(rng.range(maxattr + 1, kTypeMax));
			Attr a;
			a.type = t;
			a.data = random_bytes(rng, rng.below(13), false);
			r.attrs.insert(r.attrs.begin() + long(rng.below(r.attrs.size() + 1)), a);
			m.what = "unknown attribute type " + std::to_string(t);
			return m;
		}
		case 11: {
			static const std::uint16_t map_rej[] = {ILA_MAP_A_PAD, ILA_MAP_A_ENTRIES, ILA_MAP_A_RULES,
								ILA_MAP_A_STATS, ILA_MAP_A_HITS};
			static const std::uint16_t hook_rej[] = {ILA_HOOK_A_PAD, ILA_HOOK_A_STATS};
			std::uint16_t t = is_map ? map_rej[rng.below(5)] : hook_rej[rng.below(2)];
			Attr a;
			a.type = t;
			a.data = random_bytes(rng, rng.pick(std::vector<std::size_t>{0, 4, 8}), false);
			r.attrs.insert(r.attrs.begin() + long(rng.below(r.attrs.size() + 1)), a);
			m.what = "reply-only / padding attribute " + std::to_string(t);
			return m;
		}
		case 12:
			if (any.empty())
				break;
			{
				Attr &a = r.attrs[rng.pick(any)];
				a.type |= NLA_F_NESTED;
				m.what = "NLA_F_NESTED on attribute " + std::to_string(a.type & NLA_TYPE_MASK);
			}
			return m;
		case 13:
			r.trailer = random_bytes(rng, 1 + rng.below(3), false);
			m.what = std::to_string(r.trailer.size()) + " bytes after the attributes";
			return m;
		case 14:
			if (r.attrs.empty())
				break;
			{
				std::size_t i = rng.below(r.attrs.size());
				r.attrs[i].raw_len = std::uint16_t(rng.below(4));
				m.what = "nla_len " + std::to_string(*r.attrs[i].raw_len);
			}
			return m;
		case 15:
			if (r.attrs.empty())
				break;
			{
				std::size_t i = rng.below(r.attrs.size());
				std::size_t rest = encoded_len(r) - attr_offset(r, i);
				r.attrs[i].raw_len = std::uint16_t(std::min<std::size_t>(rest + 1 + rng.below(64), 65535));
				m.what = "nla_len " + std::to_string(*r.attrs[i].raw_len) + " beyond the message";
			}
			return m;
		case 16:
		case 17:
			m.why = Why::BadHeader;
			r.reserved = std::uint16_t(1 + rng.below(0xffff));
			m.what = "genlmsghdr.reserved " + std::to_string(r.reserved);
			return m;
		case 18:
		case 19: {
			m.why = Why::BadHeader;
			std::vector<std::uint16_t> bad = {0x2, 0x10, 0x20, 0x40, 0x80, 0x400, 0x800, 0x1000, 0x2000, 0x4000, 0x8000};
			if (!is_dump) {
				bad.push_back(NLM_F_ROOT);
				bad.push_back(NLM_F_MATCH);
			}
			std::uint16_t f = rng.pick(bad);
			r.flags |= f;
			char b[8];
			std::snprintf(b, sizeof(b), "0x%x", f);
			m.what = std::string("nlmsg_flags bit ") + b;
			return m;
		}
		case 20:
			if (!last_ok)
				break;
			m.why = Why::BadHeader;
			r.nlmsg_len = std::uint32_t(NLMSG_HDRLEN + rng.below(GENL_HDRLEN));
			r.cut = true;
			m.last_only = true;
			m.what = "nlmsg_len " + std::to_string(*r.nlmsg_len) + " (no room for the genl header)";
			return m;
		case 21:
			m.why = Why::BadFamily;
			r.nl_type = std::uint16_t(rng.range(1024, 65535));
			m.what = "nlmsg_type " + std::to_string(r.nl_type) + " (no family)";
			return m;
		case 22: {
			m.why = Why::BadCmd;
			std::vector<std::uint8_t> bad = {0, std::uint8_t(rng.range(is_map ? ILA_MAP_CMD_MAX + 1 : ILA_HOOK_CMD_MAX + 1, 255))};
			if (is_map)
				bad.push_back(ILA_MAP_CMD_MISS);
			r.cmd = rng.pick(bad);
			m.what = "command " + std::to_string(r.cmd);
			return m;
		}
		case 23:
			if (is_dump || r.cmd == (is_map ? int(ILA_MAP_CMD_GETMAP) : int(ILA_HOOK_CMD_GETHOOK)) ||
			    (is_map && r.cmd == ILA_MAP_CMD_GETENTRY))
				break;
			m.why = Why::BadCmd;
			m.dump_flag = true;
			r.flags |= NLM_F_DUMP;
			m.what = "NLM_F_DUMP on a do-only command";
			return m;
		case 24:
			m.kind = MutKind::Ignored;
			if (rng.chance(50)) {
				r.flags &= ~NLM_F_REQUEST;
				m.what = "without NLM_F_REQUEST";
			} else {
				r.nl_type = std::uint16_t(rng.below(NLMSG_MIN_TYPE));
				m.what = "control message type " + std::to_string(r.nl_type);
			}
			return m;
		case 25:
			if (!last_ok)
				break;
			m.kind = MutKind::Dropped;
			m.last_only = true;
			if (rng.chance(50)) {
				r.nlmsg_len = std::uint32_t(encoded_len(r) + 4 + rng.below(200));
				m.what = "nlmsg_len " + std::to_string(*r.nlmsg_len) + " beyond the datagram";
			} else {
				r.nlmsg_len = std::uint32_t(rng.below(NLMSG_HDRLEN));
				m.what = "nlmsg_len " + std::to_string(*r.nlmsg_len) + " (shorter than nlmsghdr)";
			}
			return m;
		}
	}
	// nothing applied (no attributes of any kind): unknown attribute
	Attr a;
	a.type = std::uint16_t(maxattr + 1);
	r.attrs.push_back(a);
	m.what = "unknown attribute type " + std::to_string(a.type);
	return m;
}

// ---- reply checks -----------------------------------------------------------

std::string check_map_reply(const std::vector<AttrView> &at, MapInfo *out)
{
	MapInfo i;
	if (!get_str(find_attr(at, ILA_MAP_A_NAME), i.name) || !valid_name(i.name))
		return "NAME missing or not a valid name";
	if (!get_fixed(find_attr(at, ILA_MAP_A_ENTRIES), i.entries) ||
	    !get_fixed(find_attr(at, ILA_MAP_A_MAX_ENTRIES), i.max) ||
	    !get_fixed(find_attr(at, ILA_MAP_A_RULES), i.rules))
		return "ENTRIES, MAX_ENTRIES or RULES missing or not a u32";
	if (i.max < 1 || i.max > ILA_MAP_LIMIT_MAX_ENTRIES)
		return "MAX_ENTRIES " + std::to_string(i.max) + " out of range";
	if (i.entries > i.max)
		return "map " + i.name + " holds " + std::to_string(i.entries) + " entries, more than its max-entries " +
		       std::to_string(i.max);
	if (auto *f = find_attr(at, ILA_MAP_A_NOTIFY_MISS)) {
		if (f->len)
			return "NOTIFY_MISS with payload";
		i.notify = true;
	}
	std::vector<std::uint64_t> v;
	std::string s = check_stats(find_attr(at, ILA_MAP_A_STATS), ILA_MAP_STATS_PAD,
				    {ILA_MAP_STATS_LOOKUPS, ILA_MAP_STATS_HITS, ILA_MAP_STATS_MISSES}, &v);
	if (!s.empty())
		return s;
	if (v[0] != v[1] + v[2])
		return "lookups " + std::to_string(v[0]) + " != hits + misses";
	if (out)
		*out = i;
	return "";
}

std::string check_entry_reply(const std::vector<AttrView> &at, EntryInfo *out)
{
	EntryInfo e;
	if (!get_fixed(find_attr(at, ILA_MAP_A_IDENT), e.ident) ||
	    !get_fixed(find_attr(at, ILA_MAP_A_LOCATOR), e.locator) ||
	    !get_fixed(find_attr(at, ILA_MAP_A_HITS), e.hits))
		return "IDENT, LOCATOR or HITS missing or not a u64";
	if (!get_fixed(find_attr(at, ILA_MAP_A_CSUM_MODE), e.csum) || e.csum > ILA_MAP_CSUM_MAX)
		return "CSUM_MODE missing or out of range";
	if (auto *n = find_attr(at, ILA_MAP_A_NAME); n && (!get_str(n, e.name) || !valid_name(e.name)))
		return "NAME not a valid name";
	if (out)
		*out = e;
	return "";
}

std::string check_hook_reply(const std::vector<AttrView> &at, HookState *out, std::string *name)
{
	HookState h;
	std::string n;
	if (!get_str(find_attr(at, ILA_HOOK_A_NAME), n) || !valid_name(n))
		return "hook NAME missing or not of [A-Za-z0-9_.-]: \"" + n + "\"";
	if (!get_fixed(find_attr(at, ILA_HOOK_A_POINT), h.point) || h.point >= __ILA_HOOK_POINT_MAX)
		return "POINT missing or out of range";
	if (!get_fixed(find_attr(at, ILA_HOOK_A_PRIORITY), h.prio))
		return "PRIORITY missing";
	if (!get_fixed(find_attr(at, ILA_HOOK_A_TRANSLATE), h.translate) || h.translate != point_src(h.point))
		return "TRANSLATE missing or not the hook point's";
	if (!get_pfx(find_attr(at, ILA_HOOK_A_SRC_PFX), h.src) ||
	    !get_fixed(find_attr(at, ILA_HOOK_A_PFX_LEN), h.pfx_len) || h.pfx_len < 1 || h.pfx_len > 64 ||
	    !host_bits_clear(h.src, h.pfx_len))
		return "SRC_PFX / PFX_LEN missing or inconsistent";
	if (!get_fixed(find_attr(at, ILA_HOOK_A_DIRECTION), h.dir) || h.dir > 1)
		return "DIRECTION missing or out of range";
	const AttrView *map = find_attr(at, ILA_HOOK_A_MAP);
	if (map) {
		if (!get_str(map, h.map) || !valid_name(h.map))
			return "MAP not a valid name";
		if (find_attr(at, ILA_HOOK_A_DST_PFX) || find_attr(at, ILA_HOOK_A_CSUM_MODE))
			return "MAP with DST_PFX or CSUM_MODE";
		h.miss_drop = find_attr(at, ILA_HOOK_A_MISS_DROP);
		h.miss_notify = find_attr(at, ILA_HOOK_A_MISS_NOTIFY);
	} else {
		if (!get_pfx(find_attr(at, ILA_HOOK_A_DST_PFX), h.dst) || !host_bits_clear(h.dst, h.pfx_len))
			return "DST_PFX missing or with host bits";
		if (!get_fixed(find_attr(at, ILA_HOOK_A_CSUM_MODE), h.csum) || h.csum > ILA_MAP_CSUM_MAX)
			return "CSUM_MODE missing or out of range";
		if (find_attr(at, ILA_HOOK_A_MISS_DROP) || find_attr(at, ILA_HOOK_A_MISS_NOTIFY))
			return "miss flags without a map";
		if (h.dir && h.csum != ILA_MAP_CSUM_NEUTRAL_MAP)
			return "direction with a mode other than neutral-map";
	}
	std::string s = check_stats(find_attr(at, ILA_HOOK_A_STATS), ILA_HOOK_STATS_PAD,
				    {ILA_HOOK_STATS_PACKETS, ILA_HOOK_STATS_BYTES, ILA_HOOK_STATS_MISSES,
				     ILA_HOOK_STATS_DROPS},
				    nullptr);
	if (!s.empty())
		return s;
	if (out)
		*out = h;
	if (name)
		*name = n;
	return "";
}

std::string check_map_event(std::uint8_t cmd, const std::vector<AttrView> &at)
{
	std::string n, n2;
	std::uint64_t u64;
	std::uint32_t u32;
	std::uint8_t u8;
	if (!get_str(find_attr(at, ILA_MAP_A_NAME), n) || !valid_name(n))
		return "event without a valid NAME";
	switch (cmd) {
	case ILA_MAP_CMD_NEWMAP:
		if (!get_fixed(find_attr(at, ILA_MAP_A_MAX_ENTRIES), u32))
			return "NEWMAP event without MAX_ENTRIES";
		return "";
	case ILA_MAP_CMD_DELMAP:
	case ILA_MAP_CMD_FLUSH:
	case ILA_MAP_CMD_RESET_COUNTERS:
		return "";
	case ILA_MAP_CMD_SWAP:
		return get_str(find_attr(at, ILA_MAP_A_NAME2), n2) && valid_name(n2) ? "" : "SWAP event without NAME2";
	case ILA_MAP_CMD_NEWENTRY:
		if (!get_fixed(find_attr(at, ILA_MAP_A_IDENT), u64) || !get_fixed(find_attr(at, ILA_MAP_A_LOCATOR), u64) ||
		    !get_fixed(find_attr(at, ILA_MAP_A_CSUM_MODE), u8) || u8 > ILA_MAP_CSUM_MAX)
			return "NEWENTRY event incomplete";
		return "";
	case ILA_MAP_CMD_DELENTRY:
	case ILA_MAP_CMD_MISS:
		return get_fixed(find_attr(at, ILA_MAP_A_IDENT), u64) ? "" : "event without IDENT";
	default:
		return "event with command " + std::to_string(cmd);
	}
}

std::string check_hook_event(std::uint8_t cmd, const std::vector<AttrView> &at)
{
	if (cmd != ILA_HOOK_CMD_NEWHOOK && cmd != ILA_HOOK_CMD_DELHOOK)
		return "hook event with command " + std::to_string(cmd);
	return check_hook_reply(at, nullptr, nullptr);
}

PendingP make_pending(const MapOp &op, Rng &rng)
{
	auto p = std::make_shared<Pending>();
	p->label = map_label(op.cmd, op.dump);
	p->req = build(op, rng);
	p->mode = op.dump ? Answer::Dump : Answer::Doit;
	if (op.cmd == ILA_MAP_CMD_GETMAP) {
		p->reply_cmd = ILA_MAP_CMD_GETMAP;
		p->check = [](const Message &, std::uint8_t, const std::vector<AttrView> &at) {
			return check_map_reply(at, nullptr);
		};
	} else if (op.cmd == ILA_MAP_CMD_GETENTRY) {
		p->reply_cmd = ILA_MAP_CMD_GETENTRY;
		p->check = [](const Message &, std::uint8_t, const std::vector<AttrView> &at) {
			return check_entry_reply(at, nullptr);
		};
	}
	return p;
}

PendingP make_pending(const HookOp &op, Rng &rng)
{
	auto p = std::make_shared<Pending>();
	p->label = hook_label(op.cmd, op.dump);
	p->req = build(op, rng);
	p->mode = op.dump ? Answer::Dump : Answer::Doit;
	if (op.cmd == ILA_HOOK_CMD_GETHOOK) {
		p->reply_cmd = ILA_HOOK_CMD_GETHOOK;
		p->check = [](const Message &, std::uint8_t, const std::vector<AttrView> &at) {
			return check_hook_reply(at, nullptr, nullptr);
		};
	}
	return p;
}

} // namespace stress
