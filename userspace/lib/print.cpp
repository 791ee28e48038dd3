// SPDX-License-Identifier: GPL-2.0
#include "print.h"

#include <cstdio>
#include <ctime>

#include "ila_map_client.h"
#include "ila_notation.h"
#include "json.h"

namespace ila {

void FieldPrinter::sep_json()
{
	if (!first_)
		out_ += ',';
	first_ = false;
}

void FieldPrinter::sep_text()
{
	if (!first_)
		out_ += ' ';
	first_ = false;
}

void FieldPrinter::key(const char *k)
{
	sep_json();
	if (k)
		out_ += json_str(k) + ":";
}

void FieldPrinter::str(const char *k, const char *word, std::string_view value, Only only)
{
	if (json_) {
		if (only == Text)
			return;
		key(k);
		out_ += json_str(value);
	} else {
		if (only == Json)
			return;
		sep_text();
		if (*word)
			out_ += std::string(word) + " ";
		out_ += value;
	}
}

// A number: unquoted in JSON, a word and its value in text.
void FieldPrinter::number(const char *k, const char *word, const std::string &value, Only only)
{
	if (json_ ? only == Text : only == Json)
		return;
	if (json_) {
		key(k);
		out_ += value;
	} else {
		str(k, word, value, only);
	}
}

void FieldPrinter::num(const char *k, const char *word, std::int64_t value, Only only)
{
	number(k, word, std::to_string(value), only);
}

void FieldPrinter::unum(const char *k, const char *word, std::uint64_t value, Only only)
{
	number(k, word, std::to_string(value), only);
}

void FieldPrinter::flag(const char *k, const char *word, bool value, Only only)
{
	if (json_) {
		if (only == Text)
			return;
		key(k);
		out_ += value ? "true" : "false";
	} else if (value && only != Json) {
		sep_text();
		out_ += word;
	}
}

void FieldPrinter::begin(const char *k, char bracket)
{
	if (!json_)
		return;
	key(k);
	out_ += bracket;
	first_ = true;
}

void FieldPrinter::end(char bracket)
{
	if (!json_)
		return;
	out_ += bracket;
	first_ = false;
}

void FieldPrinter::end_line(bool newline_in_json)
{
	if (!json_) {
		if (!first_) // a line with fields
			out_ += '\n';
		first_ = true;
	} else if (newline_in_json) {
		out_ += '\n';
	}
}

std::string FieldPrinter::take()
{
	std::string s;
	s.swap(out_);
	first_ = true;
	return s;
}

void print_map(FieldPrinter &p, const MapInfo &m)
{
	p.open();
	p.str("name", "", m.name);
	p.unum("entries", "entries", m.entries);
	p.unum("max_entries", "max-entries", m.max_entries);
	p.unum("rules", "rules", m.rules);
	p.unum("lookups", "lookups", m.lookups);
	p.unum("hits", "hits", m.hits);
	p.unum("misses", "misses", m.misses);
	p.flag("notify_miss", "notify-miss", m.notify_miss);
	p.close();
}

void print_entry(FieldPrinter &p, const Entry &e, bool stats)
{
	p.open();
	p.str("identifier", "", format_half(e.ident));
	p.str("locator", "", format_half(e.locator));
	p.str("csum_mode", "csum-mode", csum_mode_name(e.csum_mode));
	p.unum("hits", "hits", e.hits, stats ? FieldPrinter::Any : FieldPrinter::Json);
	p.close();
}

namespace {

void hook_fields(FieldPrinter &p, const Hook &h)
{
	p.str("name", "", h.name);
	p.str("hook", "", hook_point_name(h.point));
	p.num("priority", "priority", h.priority.value_or(0));
	p.str("translate", "translate", h.translate.value_or(0) ? "src" : "dst");
	p.str("src_pfx", "src-pfx", pfx_text(h.src_pfx, h.pfx_len));
	if (!h.map.empty()) {
		p.str("map", "map", h.map);
		p.str("miss", "miss", hook_miss_word(h), FieldPrinter::Text);
		p.str("miss", "", h.miss_drop ? "drop" : "accept", FieldPrinter::Json);
		p.flag("notify_miss", "", h.miss_notify, FieldPrinter::Json);
	} else {
		p.str("dst_pfx", "dst-pfx", pfx_text(h.dst_pfx, h.pfx_len));
		p.str("csum_mode", "csum-mode", csum_mode_name(h.csum_mode.value_or(0)));
	}
	const bool ila2sir = h.direction.value_or(0);
	p.str("direction", "direction", ila2sir ? "ila2sir" : "sir2ila",
	      ila2sir ? FieldPrinter::Any : FieldPrinter::Json);
}

} // namespace

void print_hook(FieldPrinter &p, const Hook &h, bool counters)
{
	p.open();
	hook_fields(p, h);
	if (counters) {
		p.unum("packets", "packets", h.packets);
		p.unum("bytes", "bytes", h.bytes);
		p.unum("misses", "misses", h.misses);
		p.unum("drops", "drops", h.drops);
	}
	p.close();
}

std::string hook_spec(const Hook &h)
{
	FieldPrinter p(false);
	print_hook(p, h, false);
	return p.take();
}

void print_map_event(FieldPrinter &p, const Command &c, std::string_view timestamp)
{
	p.open();
	if (!timestamp.empty())
		p.str("timestamp", "", timestamp, FieldPrinter::Json);
	// text: the command (describe), JSON: its parts
	p.str("event", "", describe(c), FieldPrinter::Text);
	p.str("event", "", op_name(c.op), FieldPrinter::Json);
	p.str("name", "", c.map, FieldPrinter::Json);
	switch (c.op) {
	case Op::Swap:
		p.str("name2", "", c.map2, FieldPrinter::Json);
		break;
	case Op::Add:
	case Op::Replace:
		p.str("identifier", "", format_half(c.ident), FieldPrinter::Json);
		p.str("locator", "", format_half(c.locator), FieldPrinter::Json);
		p.str("csum_mode", "csum-mode", csum_mode_name(c.csum_mode.value_or(0)));
		break;
	case Op::Del:
	case Op::Miss:
		p.str("identifier", "", format_half(c.ident), FieldPrinter::Json);
		break;
	case Op::Create:
		// what "map create" takes, so that a replay makes the same map
		if (c.max_entries)
			p.unum("max_entries", "max-entries", *c.max_entries);
		p.flag("notify_miss", "notify-miss", c.notify_miss);
		break;
	default:
		break;
	}
	p.close();
}

void print_hook_event(FieldPrinter &p, HookOp op, const Hook &h, std::string_view timestamp)
{
	p.open();
	if (!timestamp.empty())
		p.str("timestamp", "", timestamp, FieldPrinter::Json);
	std::string ev = "hook " + std::string(hook_op_name(op));
	p.str("event", "", ev);
	if (op == HookOp::Del && !p.json())
		p.str("name", "", h.name);
	else
		hook_fields(p, h);
	p.close();
}

} // namespace ila

namespace ila {

std::string timestamp_text(std::int64_t sec, long usec)
{
	std::time_t t = sec;
	std::tm tm{};
	localtime_r(&t, &tm);
	char buf[64];
	// asctime's "Mon Dec  7 22:41:42 2026", as iproute2's print_timestamp()
	std::strftime(buf, sizeof(buf), "%a %b %e %H:%M:%S %Y", &tm);
	return "# Timestamp: " + std::string(buf) + " " + std::to_string(usec) + " usec";
}

std::string timestamp_json(std::int64_t sec, long usec)
{
	std::time_t t = sec;
	std::tm tm{};
	gmtime_r(&t, &tm);
	char buf[64], out[80];
	std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%S", &tm);
	std::snprintf(out, sizeof(out), "%s.%06ldZ", buf, usec);
	return out;
}

} // namespace ila
