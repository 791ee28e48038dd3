/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * nf_ila.h - what the ILA interfaces of nf-ila-rtcache share: the -j ILA
 * target (<linux/netfilter/xt_ILA.h>), maps (<linux/ila_map.h>) and hooks
 * (<linux/ila_hook.h>). One list of checksum modes: those of the kernel's
 * own ILA (<linux/ila.h>), with its numbers, then RFC 6296's. The names of
 * the modes and the other words of the command lines are in
 * include/common/ila_names.h. Must compile as C and as C++.
 */
#ifndef _UAPI_LINUX_NF_ILA_H
#define _UAPI_LINUX_NF_ILA_H

#include <linux/ila.h>

enum nf_ila_csum_mode {
	/* fix the TCP/UDP/ICMPv6 checksum for the pseudo-header change */
	NF_ILA_CSUM_ADJUST_TRANSPORT = ILA_CSUM_ADJUST_TRANSPORT,
	/* the identifier's low 16 bits absorb the change; C-bit set */
	NF_ILA_CSUM_NEUTRAL_MAP = ILA_CSUM_NEUTRAL_MAP,
	/* leave every checksum as it is */
	NF_ILA_CSUM_NO_ACTION = ILA_CSUM_NO_ACTION,
	/* neutral-map without the C-bit */
	NF_ILA_CSUM_NEUTRAL_MAP_AUTO = ILA_CSUM_NEUTRAL_MAP_AUTO,
	/* NPTv6's checksum-neutral mapping (RFC 6296 section 3.5) */
	NF_ILA_CSUM_RFC6296,
	__NF_ILA_CSUM_MAX
};
#define NF_ILA_CSUM_MAX		(__NF_ILA_CSUM_MAX - 1)

/* Direction of a neutral-map translation (which side of the C-bit). */
enum nf_ila_direction {
	NF_ILA_DIR_SIR2ILA = 0,	/* adjust and set the C-bit */
	NF_ILA_DIR_ILA2SIR = 1,	/* undo the adjustment where the C-bit is set */
};

/* Map and hook names: 1..31 characters from [A-Za-z0-9_.-], NUL-terminated. */
#define NF_ILA_NAMSIZ		32

#endif /* _UAPI_LINUX_NF_ILA_H */
