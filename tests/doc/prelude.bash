# Sourced first by every unit tests/doc/doctest runs: the environment a
# documented command finds on a host where nf-ila-rtcache is installed,
# made of this build tree (tests/bats/helpers.bash does the same for the
# suites). Runs as root, inside the unit's own netns with --netns.

DOCTEST_TOP="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
KMOD_DIR="$DOCTEST_TOP/build/kmod/$(uname -r)"
SYS_XTLIBDIR="$(pkg-config --variable=xtlibdir xtables 2>/dev/null || echo /usr/lib/x86_64-linux-gnu/xtables)"
export XTABLES_LIBDIR="$DOCTEST_TOP/xtables:$SYS_XTLIBDIR"
export PATH="$DOCTEST_TOP/build/bin:$PATH"
# shellcheck source=tests/lib/kmod.bash
. "$DOCTEST_TOP/tests/lib/kmod.bash"

OUR_MODULES=" $(sed -n 's/^obj-m *:= *//p' "$DOCTEST_TOP/kernel/Kbuild" | sed 's/\.o//g') "

# modprobe: our modules come from the build tree (they are not installed
# in /lib/modules of the test kernel); everything else is the real one.
modprobe() {
	local a remove=0 names=() opts=()
	for a in "$@"; do
		case $a in
		-r|--remove) remove=1 ;;
		-*) opts+=("$a") ;;
		*) names+=("$a") ;;
		esac
	done
	if [ ${#names[@]} -gt 0 ] && [[ $OUR_MODULES == *" ${names[0]} "* ]]; then
		if [ $remove = 1 ]; then
			for a in "${names[@]}"; do unload_module "$a"; done
		else
			load_module "${names[@]}"
		fi
		return
	fi
	command modprobe "$@"
}

# ilactl monitor runs until interrupted: in a document it is started and
# left running while the next commands run (its output goes where the
# document sends it). It is started here in the background, and the next
# command runs once it waits for events; the unit's end stops it.
DOCTEST_BG=()
ilactl() {
	local a
	for a in "$@"; do
		case $a in
		-b|-batch|--batch) break ;;
		monitor)
			command ilactl "$@" &
			DOCTEST_BG+=($!)
			doctest_wait_blocked $! || return 1
			return 0 ;;
		esac
	done
	command ilactl "$@"
}

# doctest_wait_blocked PID: until PID sleeps in a socket receive (30 s at most)
doctest_wait_blocked() {
	local i w
	for ((i = 0; i < 300; i++)); do
		w=$(cat "/proc/$1/wchan" 2>/dev/null) || return 1
		case $w in *wait_for_more_packets*|*skb_recv*|*sock_recv*|*netlink_recv*) return 0 ;; esac
		sleep 0.1
	done
	echo "doctest: pid $1 never waited for input (wchan: $w)" >&2
	return 1
}

doctest_block() { DOCTEST_WHERE="$1:$2"; }
doctest_block_end() { :; }
doctest_unit_end() {
	local p
	for p in "${DOCTEST_BG[@]}"; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
	return 0
}

ip link set lo up 2>/dev/null || true
set -eE -o pipefail
# On failure: the line in the unit's script (when the failing command is in
# a function of this file, the line that called it) and the status.
DOCTEST_SCRIPT=$0
doctest_failed() {	# STATUS LINENO
	local i line=$2
	for ((i = 1; i < ${#BASH_SOURCE[@]}; i++)); do
		[ "${BASH_SOURCE[i]}" = "$DOCTEST_SCRIPT" ] && break
		line=${BASH_LINENO[i]}
	done
	echo "doctest: FAILED line $line status $1" >&2
	doctest_unit_end
	exit 1
}
trap 'doctest_failed $? $LINENO' ERR
