#!/usr/bin/env bats
# Cross-references of the documents, on the HOST (no VM; part of `make
# check`): the man pages name each other where they should, and the
# developer documents point only at files of this tree.
#
#   ilactl(8), nf-ila-rtcache(8) ──SEE ALSO──> ila-syncd(8) <──SEE ALSO── ...
#   HACKING.md, README.md ──links, `paths`──> files that exist in the tree

setup() {
	TOP=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)
	cd "$TOP"
}

# see_also FILE: the SEE ALSO section of a man page source, roff undone
see_also() {
	sed -n '/^\.SH SEE ALSO/,/^\.SH /p' "$1" | sed 's/\\f[BIRP]//g; s/\\-/-/g; s/^\.[A-Z]* //'
}

@test "SEE ALSO: ilactl(8) and nf-ila-rtcache(8) list ila-syncd(8); ila-syncd(8) lists both" {
	local s
	s=$(see_also userspace/ilactl.8)
	echo "ilactl.8: $s"
	[[ $s == *"ila-syncd (8)"* || $s == *"ila-syncd(8)"* ]]
	[[ $s == *"nf-ila-rtcache (8)"* || $s == *"nf-ila-rtcache(8)"* ]]
	# nf-ila-rtcache(8) is built from xtables/*.man with this trailer
	s=$(see_also xtables/trailer.man.in)
	echo "nf-ila-rtcache.8: $s"
	[[ $s == *"ila-syncd(8)"* ]]
	[[ $s == *"ilactl(8)"* ]]
	s=$(see_also userspace/syncd/ila-syncd.8)
	echo "ila-syncd.8: $s"
	[[ $s == *"ilactl"* ]]
	[[ $s == *"nf-ila-rtcache"* ]]
}

@test "HACKING.md points at nothing outside the tree; its links and README's relative links exist" {
	# no parent-directory or absolute work paths
	run grep -nE '(^|[ (`])\.\./|/work/|shared/notes|shared/seeds' HACKING.md
	echo "$output"
	[ "$status" -eq 1 ]
	local f l
	for f in HACKING.md README.md; do
		# [text](relative/path): the path exists
		while read -r l; do
			echo "$f -> $l"
			[ -e "$l" ]
		done < <(grep -oE '\]\([^)#:]+\)' "$f" | sed 's/^](//; s/)$//')
	done
	# `dir/file` paths named in HACKING.md's prose exist (patterns with
	# NAME, FOO, *, <...> aside, and debian/changelog, which make deb writes)
	while read -r l; do
		echo "HACKING.md path: $l"
		[ -e "$l" ]
	done < <(grep -oE '`(kernel|userspace|include|tests|xtables|packaging|scripts|bench|nft|debian)/[^` ]*`' HACKING.md |
		tr -d '`' | grep -vE 'NAME|FOO|foo|\*|<|\.\.\.|^debian/changelog$' | sort -u)
}
