#!/usr/bin/env bats
# The build fails loudly: runs on the HOST (no VM), part of `make check`.
#
#   fresh copy of the tree (no configure, no config.mk)
#        │
#        ├─ make, PATH without autoreconf   -> stops, names autoconf
#        ├─ make, PATH without aclocal      -> stops, names automake
#        ├─ make, pkg-config finds nothing  -> configure stops, names libxtables-dev
#        ├─ make, config.mk not from configure -> refuses to build
#        └─ make help                        -> works unconfigured
#
# Each failing case must exit non-zero, print one line naming the missing
# tool's Debian package, and build nothing.

setup() {
	# Run from `make check`: none of the caller's make flags or variables
	# (KERNELS=, SUITE=...) may reach the make under test.
	unset MAKEFLAGS MFLAGS MAKELEVEL MAKEOVERRIDES
	TOP=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)
	TREE=$BATS_TEST_TMPDIR/tree
	mkdir -p "$TREE"
	# The sources only: no configure, config.mk, build outputs.
	tar -C "$TOP" --exclude=./build --exclude=./.git --exclude=./config.mk --exclude=./config.status \
		--exclude=./config.log --exclude=./configure --exclude=./autom4te.cache --exclude=./aclocal.m4 \
		--exclude=./install-sh --exclude='*.so' --exclude='*.o' --exclude='*.ko' -cf - . | tar -C "$TREE" -xf -
	[ ! -e "$TREE/configure" ] && [ ! -e "$TREE/config.mk" ]
}

# shadow_path TOOL... : a PATH with every command of /usr/bin, /usr/sbin
# except TOOL... (/bin and /sbin are links to them on Debian 12).
shadow_path() {
	local d=$BATS_TEST_TMPDIR/shadow f n t skip
	mkdir -p "$d"
	for f in /usr/local/bin/* /usr/bin/* /usr/sbin/* /bin/* /sbin/*; do
		n=${f##*/}
		skip=
		for t in "$@"; do [ "$n" = "$t" ] && skip=1; done
		[ -n "$skip" ] || [ -e "$d/$n" ] || ln -s "$f" "$d/$n"
	done
	echo "$d"
}

# nothing_built : the failed make left no configuration and no build output.
nothing_built() {
	[ ! -e "$TREE/config.mk" ]
	[ ! -d "$TREE/build/bin" ] && [ ! -d "$TREE/build/kmod" ] && [ ! -d "$TREE/build/ulib" ]
	! ls "$TREE"/xtables/*.so 2>/dev/null
}

@test "make without autoreconf on PATH stops at once, naming the autoconf package" {
	p=$(shadow_path autoreconf autoconf)
	run env PATH="$p" make -C "$TREE"
	echo "$output"
	[ "$status" -ne 0 ]
	[[ $output == *"autoreconf not found: apt-get install autoconf"* ]]
	[[ $output == *"make: *** ./autogen.sh failed"* ]]
	nothing_built
}

@test "make without aclocal (automake) stops at once, naming the automake package" {
	p=$(shadow_path aclocal automake)
	run env PATH="$p" make -C "$TREE"
	echo "$output"
	[ "$status" -ne 0 ]
	[[ $output == *"aclocal not found: apt-get install automake"* ]]
	nothing_built
}

@test "make with a configure check failing (no libxtables) stops, naming libxtables-dev" {
	run env PKG_CONFIG_LIBDIR=/nonexistent PKG_CONFIG_PATH= make -C "$TREE"
	echo "$output"
	[ "$status" -ne 0 ]
	[[ $output == *"make: *** ./configure failed: libxtables not found: apt-get install libxtables-dev"* ]]
	nothing_built
	# and again: a failed configuration is never taken for a configured tree
	run env PKG_CONFIG_LIBDIR=/nonexistent PKG_CONFIG_PATH= make -C "$TREE" userspace
	[ "$status" -ne 0 ]
	[[ $output == *"apt-get install libxtables-dev"* ]]
	nothing_built
}

@test "make refuses a config.mk that configure did not write (no NFILR_CONFIGURED)" {
	printf 'CXX = g++\nKERNELRELEASE_CONFIGURED =\n' >"$TREE/config.mk"
	touch -d '+1 min' "$TREE/config.mk" # newer than config.mk.in: nothing to remake
	run make -C "$TREE" userspace
	echo "$output"
	[ "$status" -ne 0 ]
	[[ $output == *"config.mk was not written by this tree's ./configure"* ]]
	[ ! -d "$TREE/build/bin" ] && ! ls "$TREE"/xtables/*.so 2>/dev/null
}

@test "a configuration that works: autogen.sh + configure, make accepts it" {
	run sh -c "cd '$TREE' && ./autogen.sh && ./configure --quiet --without-kbuild"
	echo "$output"
	[ "$status" -eq 0 ]
	grep -q '^NFILR_CONFIGURED = yes' "$TREE/config.mk"
	run make -C "$TREE" -n userspace
	echo "$output"
	[ "$status" -eq 0 ]
}

@test "make help works in an unconfigured tree and lists the targets" {
	run make -C "$TREE" help
	echo "$output"
	[ "$status" -eq 0 ]
	for t in all check demo bench deb check-package dist install; do
		[[ $output == *" $t"* ]]
	done
	[ ! -e "$TREE/config.mk" ]
}
