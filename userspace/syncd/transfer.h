// SPDX-License-Identifier: GPL-2.0
// ila-syncd import / export: `ilactl save` output into etcd, and the
// store's maps back out as commands `ilactl restore -exist` takes.
#pragma once

#include <iosfwd>
#include <string>

#include "options.h"

namespace syncd {

// Reads TEXT (ilactl save output; SRC names it in messages) and writes its
// "map add" lines as keys (in transactions of --txn-ops); with --prune,
// deletes the keys of the maps in TEXT that TEXT does not have. Returns
// the exit status; messages on stderr.
int run_import(const Options &o, const std::string &text, const std::string &src);
// Writes the maps under the prefix (or --map) to OUT. Bad keys are skipped
// with a message on stderr. Returns the exit status.
int run_export(const Options &o, std::ostream &out);

} // namespace syncd
