// SPDX-License-Identifier: GPL-2.0
// ilactl hook: a client for the ILA_HOOK generic netlink family of nf_ila
// (<linux/ila_hook.h>).
//
// The grammar is in hook_command.h, the output in print.h.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "genl_client.h"
#include "hook_command.h"

namespace ila {

// One GETHOOK reply or NEWHOOK/DELHOOK event (replaced: NEWHOOK with
// REPLACE); NetlinkError(EPROTO) without name or target, or with values
// out of range.
Hook parse_hook(const nlmsghdr *nlh);

class IlaHookClient {
public:
	IlaHookClient();
	// NEWHOOK; REPLACE: in place of the existing hook of that name, in
	// one step (same point and priority; the kernel refuses otherwise).
	void add(const Hook &h, bool replace = false);
	void del(const std::string &name);
	std::vector<Hook> list();
	std::uint16_t family_id() const { return genl_.family_id(); }
	// the "events" group (NEWHOOK/DELHOOK after each change)
	std::uint32_t events_group() const;

private:
	GenlClient genl_;
};

} // namespace ila
