/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * xt_rtcache: match packets whose connection has a valid cached route
 * (nf_conntrack_rtcache) for their direction and input interface.
 */
#ifndef _XT_RTCACHE_H
#define _XT_RTCACHE_H

#include <linux/types.h>

enum {
	XT_RTCACHE_INVERT = 1 << 0,	/* "! --cached": match uncached packets */
};

#define XT_RTCACHE_MASK		XT_RTCACHE_INVERT

struct xt_rtcache_info {
	__u32 flags;			/* XT_RTCACHE_* */
};

#endif /* _XT_RTCACHE_H */
