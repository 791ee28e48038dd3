#!/usr/bin/env bash
# Install a second Debian kernel (image + headers) for the test matrix.
#
#   scripts/add-kernel.sh 6.12     newest 6.12.x from bookworm-backports
#
# Only test/CI targets call this (make deps WITH_KERNELS=..., make check);
# `make install` never does. When the backports suite is missing from apt's
# sources it is added with the same mirror URI and keyring the machine's
# existing Debian sources use (no host name is hard-coded here).
set -euo pipefail

want=${1:?usage: add-kernel.sh MAJOR.MINOR}

have_kernel() { # a release with both headers and an image
	local d r
	for d in /lib/modules/"$want".*/build; do
		r=${d#/lib/modules/}; r=${r%/build}
		[ -e "$d/Makefile" ] && [ -e "/boot/vmlinuz-$r" ] && return 0
	done
	return 1
}
have_kernel && exit 0

. /etc/os-release
codename=${VERSION_CODENAME:?no VERSION_CODENAME in /etc/os-release}
suite="$codename-backports"

# The URI (and keyring) of the main Debian archive in the existing sources.
find_mirror() {
	local f
	for f in /etc/apt/sources.list.d/*.sources; do
		[ -e "$f" ] || continue
		awk -v cn="$codename" '
			/^$/ { if (uri != "" && suites ~ ("(^| )" cn "( |$)")) { print uri, key; exit } uri = ""; suites = ""; key = "" }
			/^URIs:/ { uri = $2 }
			/^Suites:/ { $1 = ""; suites = $0 }
			/^Signed-By:/ { key = $2 }
			END { if (uri != "" && suites ~ ("(^| )" cn "( |$)")) print uri, key }' "$f"
	done
	for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
		[ -e "$f" ] || continue
		awk -v cn="$codename" '$1 == "deb" && $0 !~ /security/ {
			for (i = 2; i <= NF; i++) if ($i == cn) { u = $2; if (u ~ /^\[/) u = $3; print u; exit } }' "$f"
	done
}

if ! grep -rqs -- "$suite" /etc/apt/sources.list /etc/apt/sources.list.d/; then
	read -r uri key < <(find_mirror | head -1) || true
	[ -n "${uri:-}" ] || { echo "add-kernel.sh: no Debian mirror for $codename in apt sources" >&2; exit 1; }
	echo "add-kernel.sh: adding $suite from $uri"
	{
		echo "Types: deb"
		echo "URIs: $uri"
		echo "Suites: $suite"
		echo "Components: main"
		[ -n "${key:-}" ] && echo "Signed-By: $key"
	} >/etc/apt/sources.list.d/nf-ila-rtcache-backports.sources
fi
apt-get update -qq
# The metapackages in backports track the newest kernel there (6.12.x).
# (version lines: "     VERSION PRIO" or " *** VERSION PRIO"; under each, its
# sources: "        PRIO URI SUITE/COMPONENT ...")
ver=$(apt-cache policy linux-image-amd64 | awk -v s="$suite/" '
	/:\/\/|\/dpkg\/status/ { if (index($0, s)) { print v; exit } next }
	NF >= 2 && $1 != "Installed:" && $1 != "Candidate:" { v = ($1 == "***") ? $2 : $1 }')
case $ver in
"$want".*) ;;
*) echo "add-kernel.sh: $suite offers linux-image-amd64 $ver, not $want" >&2; exit 1 ;;
esac
echo "add-kernel.sh: installing kernel $ver from $suite"
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends -t "$suite" \
	linux-image-amd64 linux-headers-amd64 >/dev/null
have_kernel
