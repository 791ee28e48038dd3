// SPDX-License-Identifier: GPL-2.0
// ilactl's output: one call per field prints both the text and the JSON
// form (as iproute2's print_string(PRINT_ANY, key, fmt, value)), so the
// two cannot drift; and the printers of maps, entries, hooks and events
// built on it.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "command.h"
#include "hook_command.h"

namespace ila {

struct MapInfo;
struct Entry;

class FieldPrinter {
public:
	enum Only { Any, Text, Json };

	explicit FieldPrinter(bool json) : json_(json) {}
	bool json() const { return json_; }

	// JSON "KEY":"VALUE" (escaped); text WORD VALUE, or VALUE alone when
	// WORD is empty.
	void str(const char *key, const char *word, std::string_view value, Only only = Any);
	void num(const char *key, const char *word, std::int64_t value, Only only = Any);
	void unum(const char *key, const char *word, std::uint64_t value, Only only = Any);
	// JSON "KEY":true|false; text WORD when VALUE.
	void flag(const char *key, const char *word, bool value, Only only = Any);

	// JSON: an object ({ ... }), an array ([ ... ]), KEY: before it when
	// KEY is not null. Text: nothing.
	void open(const char *key = nullptr) { begin(key, '{'); }
	void close() { end('}'); }
	void open_array(const char *key = nullptr) { begin(key, '['); }
	void close_array() { end(']'); }
	// Text: ends the line (if it has fields). JSON: NEWLINE_IN_JSON adds a
	// line break (show puts one entry a line).
	void end_line(bool newline_in_json = false);

	const std::string &text() const { return out_; }
	std::string take();

private:
	void sep_json();
	void sep_text();
	void key(const char *key);
	void begin(const char *key, char bracket);
	void number(const char *key, const char *word, const std::string &value, Only only);
	void end(char bracket);

	bool json_;
	bool first_ = true; // no member yet in the current JSON container / text line
	std::string out_;
};

// "NAME entries N max-entries N rules N lookups N hits N misses N
// [notify-miss]"; JSON {"name", "entries", "max_entries", ...}.
void print_map(FieldPrinter &p, const MapInfo &m);
// "IDENT LOCATOR csum-mode MODE [hits N]" (the words "map add NAME"
// takes); JSON always has "hits".
void print_entry(FieldPrinter &p, const Entry &e, bool stats);
// "NAME HOOK priority N translate T src-pfx P/L (map M miss W | dst-pfx
// Q/L csum-mode MODE) [direction ila2sir]" (the words "hook add" takes),
// then with COUNTERS "packets N bytes N misses N drops N".
void print_hook(FieldPrinter &p, const Hook &h, bool counters);
// A map event as the command that makes it ("map add ... csum-mode M",
// "# miss MAP IDENT"); JSON {"event":"add","name":...}.
// TIMESTAMP (monitor -t), when not empty: the JSON key "timestamp" first
// (timestamp_json); the text has it on a line of its own (timestamp_text).
void print_map_event(FieldPrinter &p, const Command &c, std::string_view timestamp = {});
// A hook event: "hook add SPEC", "hook replace SPEC", "hook del NAME";
// JSON {"event":"hook add", hook keys without counters}.
void print_hook_event(FieldPrinter &p, HookOp op, const Hook &h, std::string_view timestamp = {});

// monitor -t. Text: the line `ip monitor -t` prints before an event, as a
// comment so that the output still replays with -b: "# Timestamp: Mon Dec
// 7 22:41:42 2026 123456 usec" (local time, asctime's form). JSON: UTC,
// ISO 8601 with microseconds, "2026-12-07T22:41:42.123456Z".
std::string timestamp_text(std::int64_t sec, long usec);
std::string timestamp_json(std::int64_t sec, long usec);

// The words "hook add" takes for H (what save writes after "hook add ").
std::string hook_spec(const Hook &h);

} // namespace ila
