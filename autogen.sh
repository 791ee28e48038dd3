#!/bin/sh
# autogen.sh: generate ./configure from configure.ac (a git clone has none;
# a `make dist` tarball has it already). Checks the bootstrap tools first and
# names the Debian package for each missing one.
#
#   ./autogen.sh && ./configure && make && sudo make install
set -eu
cd "$(dirname "$0")"

missing=""
need() { # need TOOL PACKAGE
	if ! command -v "$1" >/dev/null 2>&1; then
		echo "autogen.sh: $1 not found: apt-get install $2" >&2
		missing="$missing $2"
	fi
}
need autoreconf autoconf
need autoconf autoconf
need aclocal automake
need automake automake
need pkg-config pkg-config
# configure.ac uses pkg-config's autoconf macros (PKG_CHECK_MODULES).
if command -v aclocal >/dev/null 2>&1; then
	found=""
	for d in $(aclocal --print-ac-dir 2>/dev/null) /usr/share/aclocal; do
		[ -e "$d/pkg.m4" ] && found=1
	done
	if [ -z "$found" ]; then
		echo "autogen.sh: pkg.m4 (pkg-config's autoconf macros) not found: apt-get install pkg-config" >&2
		missing="$missing pkg-config"
	fi
fi
if [ -n "$missing" ]; then
	pkgs=$(printf '%s\n' $missing | sort -u | tr '\n' ' ')
	echo "autogen.sh: missing bootstrap tools: apt-get install ${pkgs% } (or: make deps)" >&2
	exit 1
fi

autoreconf -fi || { echo "autogen.sh: autoreconf -fi failed (see above)" >&2; exit 1; }
echo "autogen.sh: done; now run ./configure"
