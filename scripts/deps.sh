#!/usr/bin/env bash
# Install every Debian package nf-ila-rtcache needs to build, test and demo.
# Idempotent; prints nothing when everything is already there.
#
#   scripts/deps.sh                      build + test + demo packages (stock kernel 6.1)
#   scripts/deps.sh --kernels "6.12"     also a second kernel's image + headers (tests only)
set -euo pipefail

# Starting point: Debian 12 minbase + git + make + ca-certificates (what
# ../shared/tools/fresh-machine gives). Everything a command in the
# Makefile, autogen.sh, configure, scripts/, tests/, bench/ or packaging/
# runs that minbase lacks is listed here (the guest runs on the host's root,
# so the VM's tools are host packages too).
PKGS=(
	# bootstrap (autogen.sh: autoreconf, aclocal, pkg.m4) and build
	git make ca-certificates
	build-essential gcc g++ dpkg-dev autoconf automake pkg-config
	libxtables-dev libmnl-dev libgtest-dev
	linux-headers-amd64
	# test VM (tests/vm/run: initramfs with busybox, cpio, gzip; kernel
	# modules .ko/.ko.xz/.ko.zst; modprobe --show-depends)
	linux-image-amd64 qemu-system-x86 busybox-static kmod cpio gzip xz-utils zstd
	# host tests (bats) and the tools used inside the VM by the suites,
	# demo and benchmarks
	iptables nftables bats iproute2 iputils-ping socat conntrack tcpdump
	ethtool procps util-linux mount jq ncurses-bin time
	# the documentation test (tests/doc/doctest: extracts README and man page examples)
	python3
	# ila-syncd: the etcd v3 client (gRPC stubs generated from etcd's
	# .proto files and those they import); etcd itself
	# for the fleet suite and the bench, openssl for its certificates
	libgrpc++-dev libprotobuf-dev protobuf-compiler protobuf-compiler-grpc
	golang-etcd-server-dev golang-github-gogo-protobuf-dev golang-github-grpc-ecosystem-grpc-gateway-dev
	etcd-server etcd-client openssl
	# packages (make deb) and their test (tests/package/run, base-root)
	debhelper dh-dkms dkms lintian fakeroot file debootstrap
)

extra_kernels=""
while [ $# -gt 0 ]; do
	case $1 in
	--kernels) extra_kernels=$2; shift 2 ;;
	-h|--help) sed -n '2,7p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "deps.sh: unknown option $1" >&2; exit 2 ;;
	esac
done

missing=()
for p in "${PKGS[@]}"; do
	case $p in \#*) continue ;; esac
	s=$(dpkg-query -W -f='${db:Status-Abbrev}' "$p" 2>/dev/null || true)
	[ "${s:0:2}" = "ii" ] || missing+=("$p")
done

if [ "$(id -u)" != 0 ] && [ ${#missing[@]} -gt 0 ]; then
	echo "deps.sh: missing packages: ${missing[*]}; run as root (or: sudo apt-get install ${missing[*]})" >&2
	exit 1
fi

apt_updated=0
apt_install() {
	if [ $apt_updated = 0 ]; then
		apt-get update -qq
		apt_updated=1
	fi
	echo "deps.sh: installing $*"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}

[ ${#missing[@]} -eq 0 ] || apt_install "${missing[@]}"

# A second kernel for the test matrix, e.g. --kernels 6.12 (bookworm-backports).
for k in $extra_kernels; do
	"$(dirname "$0")/add-kernel.sh" "$k"
done
