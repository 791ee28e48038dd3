/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ila_names.h - the one vocabulary of the ILA interfaces: the words of the
 * command lines (checksum modes, directions, what a miss does, hook
 * points, translate dst/src) and the rule for map and hook names. Plain C
 * compiled by the kernel (name checks), the ip6tables plugin and ilactl
 * (parsing, printing), as iproute2's ip/ila_common.h serves both `ip ila`
 * and `ip route ... encap ila`. The numbers are the uAPI's
 * (<linux/nf_ila.h>, <linux/ila_hook.h>).
 *
 * Every table lists the canonical word of a value first (what print and
 * save write); later entries are accepted spellings (iproute2's names).
 * Parsers return the value, or -1 for a word they do not know.
 */
#ifndef _NFILR_COMMON_ILA_NAMES_H
#define _NFILR_COMMON_ILA_NAMES_H

#ifdef __KERNEL__
#include <linux/string.h>
#else
#include <string.h>
#endif
#include <linux/types.h>
#include <linux/nf_ila.h>
#include <linux/ila_hook.h>

struct ila_word {
	const char *name;
	int value;
};

/* The value of NAME in the NULL-terminated TABLE, or -1. */
static inline int ila_word_parse(const struct ila_word *table, const char *name)
{
	for (; table->name; table++)
		if (!strcmp(table->name, name))
			return table->value;
	return -1;
}

/* The canonical word for VALUE (its first entry), or NULL. */
static inline const char *ila_word_name(const struct ila_word *table, int value)
{
	for (; table->name; table++)
		if (table->value == value)
			return table->name;
	return (const char *)0;
}

/*
 * The tables are functions returning a static array, so a file that
 * includes this header without using one carries no unused data.
 */
static inline const struct ila_word *ila_csum_mode_words(void)
{
	static const struct ila_word words[] = {
		{ "adjust-transport", NF_ILA_CSUM_ADJUST_TRANSPORT },
		{ "neutral-map", NF_ILA_CSUM_NEUTRAL_MAP },
		{ "none", NF_ILA_CSUM_NO_ACTION },
		{ "neutral-map-auto", NF_ILA_CSUM_NEUTRAL_MAP_AUTO },
		{ "rfc6296", NF_ILA_CSUM_RFC6296 },
		/* ip-route(8) and ip-ila(8) */
		{ "adj-transport", NF_ILA_CSUM_ADJUST_TRANSPORT },
		{ "no-action", NF_ILA_CSUM_NO_ACTION },
		{ (const char *)0, 0 },
	};
	return words;
}

/* For messages: the canonical checksum mode names. */
#define ILA_CSUM_MODE_LIST \
	"adjust-transport, neutral-map, none, neutral-map-auto or rfc6296"

static inline const struct ila_word *ila_direction_words(void)
{
	static const struct ila_word words[] = {
		{ "sir2ila", NF_ILA_DIR_SIR2ILA },
		{ "ila2sir", NF_ILA_DIR_ILA2SIR },
		{ (const char *)0, 0 },
	};
	return words;
}

/* Which address is translated: 0 the destination, 1 the source. */
static inline const struct ila_word *ila_translate_words(void)
{
	static const struct ila_word words[] = {
		{ "dst", 0 },
		{ "src", 1 },
		{ (const char *)0, 0 },
	};
	return words;
}

static inline const struct ila_word *ila_hook_point_words(void)
{
	static const struct ila_word words[] = {
		{ "prerouting", ILA_HOOK_PREROUTING },
		{ "input", ILA_HOOK_INPUT },
		{ "output", ILA_HOOK_OUTPUT },
		{ "postrouting", ILA_HOOK_POSTROUTING },
		{ (const char *)0, 0 },
	};
	return words;
}

/* What a map miss does: bits of the value. */
#define ILA_MISS_DROP	1	/* drop the packet (else accept it untranslated) */
#define ILA_MISS_NOTIFY	2	/* report the identifier (ilactl monitor) */

static inline const struct ila_word *ila_miss_words(void)
{
	static const struct ila_word words[] = {
		{ "accept", 0 },
		{ "drop", ILA_MISS_DROP },
		{ "accept,notify", ILA_MISS_NOTIFY },
		{ "drop,notify", ILA_MISS_DROP | ILA_MISS_NOTIFY },
		{ "notify", ILA_MISS_NOTIFY },
		{ "notify,accept", ILA_MISS_NOTIFY },
		{ "notify,drop", ILA_MISS_DROP | ILA_MISS_NOTIFY },
		{ (const char *)0, 0 },
	};
	return words;
}

/*
 * Map and hook names: 1..NF_ILA_NAMSIZ-1 characters of A-Z a-z 0-9 _ . -
 * (ASCII only: the kernel's ctype classifies Latin-1 letters as alnum).
 */
static inline int ila_name_ok(const char *name)
{
	unsigned int n;

	for (n = 0; name[n]; n++) {
		char c = name[n];

		if (n >= NF_ILA_NAMSIZ - 1)
			return 0;
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		      (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '-'))
			return 0;
	}
	return n > 0;
}

#define ILA_NAME_RULE	"1-31 characters of A-Z a-z 0-9 _ . -"

#endif /* _NFILR_COMMON_ILA_NAMES_H */
