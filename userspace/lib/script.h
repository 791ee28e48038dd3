// SPDX-License-Identifier: GPL-2.0
// Applies a batch file (ilactl -b, restore): the lines in file order, map
// and hook commands interleaved as written (a teardown "hook del h" /
// "map destroy m" works); runs of map commands go to the kernel in large
// netlink batches. Failures are reported in line order.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

#include "batch.h"
#include "progress.h"

namespace ila {

struct ScriptOptions {
	std::string src;      // the file, for messages ("FILE:LINE: ...")
	bool verbose = false; // report the count and the rate
	bool force = false;   // go on after failing lines (ip -force -batch)
	// restore -exist (ipset's): a map that exists is not created again, add
	// replaces an entry, a hook that exists with another definition is
	// replaced (atomically when the point and priority are the same,
	// otherwise deleted and added), an identical one is left alone.
	bool exist = false;
	// entries done, rate and ETA on ERR while the lines are sent
	Progress::Mode progress = Progress::Off;
};

// 0, or 1 with every failure on ERR ("SRC:LINE: command: reason").
int run_script(const std::vector<ScriptLine> &lines, const ScriptOptions &o, std::ostream &err);

} // namespace ila
