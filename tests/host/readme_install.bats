#!/usr/bin/env bats
# README's install sections against the files they describe, on the HOST
# (no VM; part of `make check`):
#
#   configure.ac "apt-get install PKG" ──> README "Install from the sources" apt-get line
#   README's apt-get lines, `make deps` paragraph ──> scripts/deps.sh PKGS (real, used)
#   debian/nf-ila-rtcache-tools.{install,examples}, packaging/systemd ──> README package table

setup() {
	TOP=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)
	cd "$TOP"
}

# the packages scripts/deps.sh installs, one a line
deps_pkgs() {
	sed -n '/^PKGS=(/,/^)/p' scripts/deps.sh | sed 's/#.*//' | tr ' \t' '\n\n' | grep -vE '^(PKGS=\(|\)|)$'
}

# the section of README.md from heading $1 to the next heading of level 2 or 3
section() {
	awk -v h="$1" '$0 == h { on = 1; print; next } on && /^##/ { exit } on' README.md
}

@test "README source install: its apt-get line has every package configure.ac asks for, and --disable-syncd is named" {
	local src want p have
	src=$(section '### Install from the sources')
	[ -n "$src" ]
	# the packages of the apt-get command (with its continuation lines)
	have=$(awk '/apt-get update/ { on = 1 } on { print } on && !/\\$/ { exit }' <<<"$src" | tr '\\' ' ' |
		sed 's/.*install -y//' | tr ' ' '\n' | grep -E '^[a-z0-9][a-z0-9.+-]+$')
	echo "README installs: $have"
	want=$(grep -oE 'apt-get install [a-z0-9.+-]+' configure.ac | awk '{ print $3 }' | sort -u)
	[ -n "$want" ]
	for p in $want; do
		echo "configure.ac: $p"
		case $p in gcc|g++) p=build-essential ;; esac # "apt-get install gcc (or build-essential)"
		grep -qxF -- "$p" <<<"$have"
	done
	grep -q -- '--disable-syncd' <<<"$src"
	grep -q -- '--disable-syncd' configure.ac
	# and every package it installs is one scripts/deps.sh installs too
	for p in $have; do
		deps_pkgs | grep -qxF -- "$p"
	done
}

@test "README package table: every program, man page, unit and example the tools package installs is listed" {
	local row f n
	row=$(grep '^| `nf-ila-rtcache-tools` |' README.md)
	[ -n "$row" ]
	while read -r f _; do
		case $f in
		usr/sbin/*) n='`'${f##*/}'`' ;;
		*/man8/*.8) n=${f##*/}; n='`man '${n%.8}'`' ;;
		*.service) n='`'${f##*/}'`' ;;
		*bash-completion/*) # "bash completion for `ilactl` and `ila-syncd`"
			[[ $row == *"bash completion for "*'`'"$(basename "$f")"'`'* ]] || return 1
			n='bash completion' ;;
		*xtables*) n='`ILA` and `rtcache` plugins' ;;
		*) n=${f##*/} ;;
		esac
		echo "$f -> $n"
		[[ $row == *"$n"* ]]
	done < <(grep -v '^#' debian/nf-ila-rtcache-tools.install | grep .)
	# the unit debian/rules installs, and the examples
	[[ $row == *'`ila-maps.service`'* ]]
	while read -r f; do
		n=${f##*/}
		echo "example $f -> $n"
		[[ $row == *"$n"* ]]
	done < <(grep -v '^#' debian/nf-ila-rtcache-tools.examples | grep .)
}

@test "README: make deps is described as what scripts/deps.sh installs (QEMU, kernels, debootstrap, etcd-server) and says etcd starts on install" {
	local para p
	para=$(awk '/^`make deps` \(what/ { on = 1 } on && /^$/ { exit } on' README.md)
	echo "$para"
	[ -n "$para" ]
	# every package it names in backticks is installed by deps.sh
	for p in $(grep -oE '`[a-z0-9][a-z0-9.+-]*`' <<<"$para" | tr -d '`'); do
		case $p in etcd.service) continue ;; esac
		echo "named: $p"
		deps_pkgs | grep -qxF -- "$p"
	done
	# and the heavy ones deps.sh installs are named
	for p in qemu-system-x86 linux-image-amd64 linux-headers-amd64 debootstrap etcd-server; do
		deps_pkgs | grep -qx -- "$p"
		grep -q "\`$p\`" <<<"$para"
	done
	# the second kernel: the Makefile's TEST_KERNELS default
	grep -q "TEST_KERNELS=$(sed -n 's/^TEST_KERNELS ?= *//p' Makefile)" <<<"$para"
	# etcd-server starts an etcd on install: said, with how to stop it
	grep -q 'starts an etcd' <<<"$para"
	grep -q 'systemctl disable --now etcd' <<<"$para"
}
