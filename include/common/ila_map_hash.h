/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The hash of an ILA map's identifiers (kernel/nf_ila_map.h), plain C so
 * that the host unit tests (tests/unit/ila_map_hash_test.cpp) measure how
 * it spreads the identifier patterns deployments use.
 */
#ifndef _NFILR_COMMON_ILA_MAP_HASH_H
#define _NFILR_COMMON_ILA_MAP_HASH_H

#include <linux/types.h>

/*
 * k: the identifier's 8 bytes loaded raw (host order), seed: the table's
 * random seed. Two multiplications, each followed by a fold of the upper
 * half onto the lower; the lower 32 bits. Every bit of the identifier
 * reaches every bit of the hash, so identifiers that differ anywhere
 * spread: sequences in any of the identifier's bytes and two-level
 * (subnet, host) patterns spread as random keys do (the unit tests
 * measure it), with MurmurHash3's 64-bit finalizer less its first step
 * (the lookup runs for every packet).
 */
static inline __u32 ila_map_hash64(__u64 k, __u32 seed)
{
	k ^= seed;
	k *= 0x9e3779b97f4a7c15ULL;
	k ^= k >> 32;
	k *= 0xc4ceb9fe1a85ec53ULL;
	k ^= k >> 32;
	return (__u32)k;
}

#endif /* _NFILR_COMMON_ILA_MAP_HASH_H */
