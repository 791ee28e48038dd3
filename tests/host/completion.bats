#!/usr/bin/env bats
# Bash completion of ilactl and ila-syncd (packaging/bash-completion/), on the HOST
# (no VM; part of `make check`), driven as bash drives it: COMP_WORDS,
# COMP_CWORD, then _ilactl and its COMPREPLY.
#
#   _ilactl ──"ilactl --help"────────> the real build/bin/ilactl (grammar, values)
#           ──"ilactl [-n NS] -j map|hook list"──> stub: maps/hooks per namespace
#           ──"ip netns list"────────> stub: red, blue

setup() {
	TOP=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)
	[ -x "$TOP/build/bin/ilactl" ]
	STUB=$BATS_TEST_TMPDIR/stub
	mkdir -p "$STUB"
	cat >"$STUB/ilactl" <<-EOS
	#!/bin/bash
	case "\$*" in
	--help) exec "$TOP/build/bin/ilactl" --help ;;
	"-j map list") echo '[{"name":"hosts","entries":1},{"name": "copy","entries":0}]' ;;
	"-j hook list") echo '[{"name":"h1","hook":"prerouting"}]' ;;
	"-n blue -j map list") echo '[{"name":"bluemap","entries":0}]' ;;
	"-n blue -j hook list") echo '[{"name":"bluehook","hook":"input"}]' ;;
	*) exit 1 ;;
	esac
	EOS
	cat >"$STUB/ip" <<-'EOS'
	#!/bin/bash
	[ "$*" = "netns list" ] && printf 'red (id: 0)\nblue\n'
	EOS
	chmod +x "$STUB/ilactl" "$STUB/ip"
	PATH=$STUB:$PATH
	. "$TOP/packaging/bash-completion/ilactl"
	mkdir -p "$BATS_TEST_TMPDIR/files" && cd "$BATS_TEST_TMPDIR/files"
	touch maps.conf
}

# comp_words CMD WORD...: COMP_WORDS, COMP_CWORD, COMP_LINE, COMP_POINT as
# bash sets them for "CMD WORD..." with the cursor at the end: COMP_WORDS
# split at COMP_WORDBREAKS' ':' too ("0:0:0:1" is seven words, "::5" two, a
# run of colons being one word), COMP_LINE the line as typed. With the
# bash-completion package installed, _init_completion joins the words
# again; without it the completions read COMP_LINE.
comp_words() {
	local w
	local -a parts
	COMP_WORDS=("$1")
	COMP_LINE="$*"
	shift
	for w in "$@"; do
		if [[ $w == *:* ]]; then
			read -r -a parts <<<"$(sed -E 's/(:+)/ \1 /g' <<<"$w")"
			[[ $w == *: ]] && parts+=("")
			COMP_WORDS+=("${parts[@]}")
		else
			COMP_WORDS+=("$w")
		fi
	done
	COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
	COMP_POINT=${#COMP_LINE}
	COMPREPLY=()
}

# comp WORD...: the completions of the last WORD (may be "") of
# "ilactl WORD...", sorted, on one line
comp() {
	comp_words ilactl "$@"
	_ilactl
	printf '%s\n' "${COMPREPLY[@]}" | sort | tr '\n' ' ' | sed 's/ $//'
}

@test "completion: objects and map commands" {
	[ "$(comp "")" = "hook map monitor restore save" ]
	[[ $(comp map "") == "add create del destroy flush get help list replace reset-counters show stats swap" ]]
	[ "$(comp map add "")" = "copy hosts" ]
	[ "$(comp map create "")" = "" ]                  # a new name
	[ "$(comp map add hosts 0:0:0:1 2001:db8:1:0 "")" = "csum-mode" ]
	[ "$(comp map add hosts 0:0:0:1 2001:db8:1:0 csum-mode "")" = \
		"adjust-transport neutral-map neutral-map-auto none rfc6296" ]
	[ "$(comp map add hosts ::5 2001:db8:1:: "")" = "csum-mode" ]
	[ "$(comp map create m "")" = "max-entries notify-miss" ]
	[ "$(comp map create m notify-miss "")" = "max-entries" ]
	[ "$(comp map swap hosts "")" = "copy hosts" ]
}

@test "completion: map show, save and restore complete maps and files" {
	[ "$(comp map show "")" = "copy hosts" ]
	[ "$(comp save "")" = "copy hosts" ]
	[ "$(comp save hosts "")" = "copy hosts" ]          # NAME...: more than one
	[ "$(comp restore "")" = "maps.conf" ]
	[ "$(comp restore -exist m)" = "maps.conf" ]
	[[ " $(comp restore -) " == *" -c "* ]]
	[[ " $(comp restore -) " == *" -exist "* ]]
	[[ " $(comp monitor -) " == *" -t "* ]]
	[ "$(comp -b "")" = "maps.conf" ]
}

@test "completion: hook names for hook del/replace, maps and keywords inside hook add, miss values without help text" {
	[ "$(comp hook del "")" = "h1" ]
	[ "$(comp hook replace "")" = "h1" ]
	[ "$(comp hook add "")" = "" ]                    # a new name
	[ "$(comp hook add h "")" = "input output postrouting prerouting" ]
	local k
	for k in src-pfx dst-pfx map translate priority direction; do
		[[ " $(comp hook add h prerouting "") " == *" $k "* ]]
	done
	[ "$(comp hook add h prerouting translate "")" = "dst src" ]
	[ "$(comp hook add h prerouting src-pfx 2001:db8::/64 map "")" = "copy hosts" ]
	[ "$(comp hook add h prerouting src-pfx 2001:db8::/64 map hosts miss "")" = "accept drop drop,notify notify" ]
	[ "$(comp hook add h prerouting src-pfx 2001:db8::/64 map hosts miss drop,)" = "drop,notify" ]
	[ "$(comp hook add h prerouting src-pfx 2001:db8::/64 map hosts direction "")" = "ila2sir sir2ila" ]
	# used keywords are not offered again
	[[ " $(comp hook add h prerouting src-pfx 2001:db8::/64 map hosts "") " != *" src-pfx "* ]]
}

@test "completion: -n offers network namespaces, and name lookups use its namespace" {
	[ "$(comp -n "")" = "blue red" ]
	[ "$(comp --netns b)" = "blue" ]
	[ "$(comp -n blue map add "")" = "bluemap" ]
	[ "$(comp -netns blue hook del "")" = "bluehook" ]
	[ "$(comp -n blue hook add h input src-pfx 2001:db8::/64 map "")" = "bluemap" ]
	[ "$(comp -n blue map "")" = "$(comp map "")" ]
}

@test "completion: options, with the long-only ones" {
	[[ " $(comp --) " == *" --progress "* ]]
	[[ " $(comp --) " == *" --check "* ]]
	[[ " $(comp --) " == *" --timestamp "* ]]
	[[ " $(comp -) " == *" -j "* ]]
	[ "$(comp --pro)" = "--progress" ]
}

# scomp WORD...: as comp, for ila-syncd (the real build/bin/ila-syncd --help)
scomp() {
	comp_words ila-syncd "$@"
	_ila_syncd
	printf '%s\n' "${COMPREPLY[@]}" | sort | tr '\n' ' ' | sed 's/ $//'
}

@test "completion of ila-syncd: commands, options from its --help, --mode, -n netns, --map in that netns, files" {
	# the daemon of this build (configure --disable-syncd would leave it out)
	ln -s "$TOP/build/bin/ila-syncd" "$STUB/ila-syncd"
	. "$TOP/packaging/bash-completion/ila-syncd"
	[ "$(scomp "")" = "export import status" ]
	[ "$(scomp --m)" = "--map --max-entries --mode" ]
	[ "$(scomp --mode "")" = "cache full" ]
	[ "$(scomp --netns "")" = "blue red" ]
	[ "$(scomp -n blue --map "")" = "bluemap" ]
	[ "$(scomp --map "")" = "copy hosts" ]
	[ "$(scomp --config m)" = "maps.conf" ]
	[ "$(scomp --cacert "")" = "maps.conf" ]
	[ "$(scomp import --prefix /ila "")" = "maps.conf" ]
	[ "$(scomp --endpoints http://127.0.0.1:2379 status --map hosts "")" = "" ]
	local o
	for o in --endpoints --prefix --once --cache-size --prune -c --config -n --netns -j --json; do
		[[ " $(scomp -) " == *" $o "* ]]
	done
}
