/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * xt_ILA: Identifier-Locator Addressing (ILA) prefix translation target.
 *
 * Shared between the kernel module (kernel/xt_ILA.c) and the iptables
 * plugin (xtables/libxt_ILA.cpp). Must compile as C and as C++.
 */
#ifndef _UAPI_XT_ILA_H
#define _UAPI_XT_ILA_H

#include <linux/types.h>
#include <linux/netfilter.h>
#include <linux/nf_ila.h>

/* Which address of the packet is translated. */
enum xt_ila_translate {
	XT_ILA_TRANSLATE_DST = 0,	/* PREROUTING, OUTPUT */
	XT_ILA_TRANSLATE_SRC = 1,	/* POSTROUTING, INPUT */
};

/*
 * Checksum handling: enum nf_ila_csum_mode (<linux/nf_ila.h>), the modes of
 * the kernel's ILA with their numbers, then RFC 6296's (NPTv6, as
 * ip6t_NPT's SNPT/DNPT). The XT_ILA_CSUM_* names are the same values.
 */
#define XT_ILA_CSUM_ADJUST_TRANSPORT	NF_ILA_CSUM_ADJUST_TRANSPORT
#define XT_ILA_CSUM_NEUTRAL_MAP		NF_ILA_CSUM_NEUTRAL_MAP
#define XT_ILA_CSUM_NO_ACTION		NF_ILA_CSUM_NO_ACTION
#define XT_ILA_CSUM_NEUTRAL_MAP_AUTO	NF_ILA_CSUM_NEUTRAL_MAP_AUTO
#define XT_ILA_CSUM_RFC6296		NF_ILA_CSUM_RFC6296
#define __XT_ILA_CSUM_MAX		__NF_ILA_CSUM_MAX

/*
 * Revision 1 (this layout): the csum_mode numbers above and
 * XT_ILA_F_ILA2SIR. Revision 0 numbered the modes differently and is not
 * supported.
 *
 * flags: ILA maps. With XT_ILA_F_MAP the locator and checksum mode come
 * from the entry of nf_ila_map's map map[] (see <linux/ila_map.h>) for the
 * packet's identifier; the prefixes and csum_mode must then be zero.
 */
#define XT_ILA_F_MAP		(1U << 0)	/* locator from the map named in map[] */
#define XT_ILA_F_MISS_DROP	(1U << 1)	/* with XT_ILA_F_MAP: drop on a miss */
/* neutral-map translates ILA -> SIR (undo where the C-bit is set), not
 * SIR -> ILA (the default: adjust and set the C-bit)
 */
#define XT_ILA_F_ILA2SIR	(1U << 2)
/* with XT_ILA_F_MAP: report a miss to ilactl monitor (ILA_MAP_CMD_MISS) */
#define XT_ILA_F_MISS_NOTIFY	(1U << 3)
#define XT_ILA_F_ALL		(XT_ILA_F_MAP | XT_ILA_F_MISS_DROP | XT_ILA_F_ILA2SIR | \
				 XT_ILA_F_MISS_NOTIFY)

#define XT_ILA_MAP_NAMELEN	NF_ILA_NAMSIZ

/* Size of the kernel-only area at the end of struct xt_ila_tginfo. */
#define XT_ILA_KPRIV_WORDS	6

struct xt_ila_tginfo {
	union nf_inet_addr	src_pfx;	/* addresses inside src_pfx ... */
	union nf_inet_addr	dst_pfx;	/* ... are moved into dst_pfx */
	__u8			src_pfx_len;	/* 1..64, equal to dst_pfx_len */
	__u8			dst_pfx_len;
	__u8			translate;	/* enum xt_ila_translate */
	__u8			csum_mode;	/* enum nf_ila_csum_mode */
	__u32			flags;		/* XT_ILA_F_* */
	char			map[XT_ILA_MAP_NAMELEN]; /* with XT_ILA_F_MAP, else empty */

	/* Kernel only (precomputed by checkentry); userspace leaves it zero. */
	__u64			kpriv[XT_ILA_KPRIV_WORDS] __attribute__((aligned(8)));
};

#endif /* _UAPI_XT_ILA_H */
