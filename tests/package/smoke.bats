#!/usr/bin/env bats
# Smoke test of the installed packages, run in the VM by tests/package/run:
# everything below runs inside the root the .debs were installed into
# ($PKGTEST_ROOT, read-only over 9p, chrooted into): its modprobe loads the
# DKMS-built modules from /lib/modules/$(uname -r)/updates/dkms, its
# ip6tables/iptables load the packaged plugins from the distro xtables
# directory (no XTABLES_LIBDIR), its ilactl manages the maps.
#
#   client c ------------------ r router r ------------------ s server
#   c0 fd00:1::2/64 10.0.1.2/24  r0 | r1     fd00:2::2/64 10.0.2.2/24 s0
#                                   |        lo 3333:0:0:1::5 (locator address)
#   ILA on r: PREROUTING dst 2001:db8:0:3::/64 -> 3333:0:0:1::/64 (prefix or map),
#             POSTROUTING src 3333:0:0:1::/64 -> 2001:db8:0:3::/64
#   rtcache on r: IPv4 forwarding with conntrack, -m rtcache --cached counts
#
# The client only knows the SIR address 2001:db8:0:3::5, the server only its
# locator address: UDP/TCP replies reach the client's connected sockets
# only if both translations happen with correct checksums.

R=$PKGTEST_ROOT
K=$(uname -r)
SIR=2001:db8:0:3::5

inroot() {
	chroot "$R" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 "$@"
}
# sh_in NETNS SCRIPT: run a shell script in a netns of the root, one exec.
sh_in() {
	inroot ip netns exec "$1" sh -ec "$2"
}
# rule_pkts NETNS CMD TABLE CHAIN: packet counter of the chain's first rule.
rule_pkts() {
	sh_in "$1" "$2 -t $3 -L $4 -v -x -n" | awk 'NR == 3 { print $1 }'
}

setup_file() {
	[ -n "$R" ] && [ -d "$R/lib/modules/$K/updates/dkms" ] ||
		{ echo "no DKMS modules for $K in ${R:-PKGTEST_ROOT unset}" >&2; return 1; }
	# the root must be a mount point: ip netns exec makes "/" a slave mount
	mount --bind "$R" "$R"
	mount -t proc proc "$R/proc"
	mount -t sysfs sysfs "$R/sys"
	mount --rbind /dev "$R/dev"
	mount -t tmpfs tmpfs "$R/run"
	mount -t tmpfs tmpfs "$R/tmp"
	inroot sh -ec '
		for n in c r s; do ip netns add $n; ip -n $n link set lo up; done
		ip link add c0 netns c type veth peer name r0 netns r
		ip link add r1 netns r type veth peer name s0 netns s
		ip -n c addr add fd00:1::2/64 dev c0 nodad; ip -n c addr add 10.0.1.2/24 dev c0
		ip -n r addr add fd00:1::1/64 dev r0 nodad; ip -n r addr add 10.0.1.1/24 dev r0
		ip -n r addr add fd00:2::1/64 dev r1 nodad; ip -n r addr add 10.0.2.1/24 dev r1
		ip -n s addr add fd00:2::2/64 dev s0 nodad; ip -n s addr add 10.0.2.2/24 dev s0
		ip -n s addr add 3333:0:0:1::5/128 dev lo
		for l in c:c0 r:r0 r:r1 s:s0; do ip -n ${l%:*} link set ${l#*:} up; done
		ip -n c route add default via fd00:1::1; ip -n c route add default via 10.0.1.1
		ip -n s route add default via fd00:2::1; ip -n s route add default via 10.0.2.1
		ip -n r route add 3333:0:0:1::/64 via fd00:2::2
		ip netns exec r sysctl -qw net.ipv6.conf.all.forwarding=1 net.ipv4.ip_forward=1
		ip netns exec s sh -c "socat UDP6-LISTEN:7000,bind=[3333:0:0:1::5],reuseaddr,fork PIPE &
			socat TCP6-LISTEN:7001,reuseaddr,fork PIPE &" </dev/null >/dev/null 2>&1
		for i in $(seq 100); do
			ip netns exec s ss -Hlun sport = :7000 | grep -q . &&
				ip netns exec s ss -Hltn sport = :7001 | grep -q . && exit 0
			sleep 0.2
		done
		echo "socat listeners did not start" >&2; exit 1' 3>&-
}

teardown_file() {
	local n
	for n in c r s; do
		inroot ip netns pids $n 2>/dev/null | xargs -r kill 2>/dev/null
		inroot ip netns del $n 2>/dev/null
	done
	for n in xt_rtcache nf_conntrack_rtcache xt_ILA nf_ila; do
		[ -e /sys/module/$n ] && inroot modprobe -r $n
	done
	umount -l "$R/tmp" "$R/run" "$R/sys" "$R/proc"
	umount -R -l "$R/dev"
	umount -l "$R"
	true
}

# build_id FILE (in the root, .ko or .ko.xz): the module's GNU build ID.
build_id() {
	inroot sh -c 'case $1 in *.xz) xz -dc "$1" >/tmp/m.ko;; *) cp "$1" /tmp/m.ko;; esac
		readelf -n /tmp/m.ko' _ "$1" | sed -n 's/.*Build ID: //p'
}
# loaded_build_id MODULE: the build ID of the loaded module (sysfs notes).
loaded_build_id() {
	od -An -tx1 -v "/sys/module/$1/notes/.note.gnu.build-id" | tr -d ' \n' | tail -c 40
}

@test "modprobe loads the DKMS-built modules from /lib/modules/$K/updates/dkms" {
	local m f out
	for m in xt_ILA nf_ila nf_conntrack_rtcache xt_rtcache; do
		[ ! -e /sys/module/$m ] || { echo "$m already loaded" >&2; false; }
	done
	out=$(inroot modprobe -v xt_ILA 2>&1 && inroot modprobe -v nf_conntrack_rtcache 2>&1 &&
		inroot modprobe -v xt_rtcache 2>&1)
	echo "$out" >&2
	for m in xt_ILA nf_ila nf_conntrack_rtcache xt_rtcache; do
		f=$(echo "$out" | sed -n "s|^insmod \(/lib/modules/$K/updates/dkms/$m\.ko[^ ]*\).*|\1|p")
		[ -n "$f" ] || { echo "$m not inserted from updates/dkms" >&2; false; }
		# the module in the kernel is that very file (not one of the build tree)
		[ "$(loaded_build_id $m)" = "$(build_id "$f")" ] ||
			{ echo "$m: loaded build ID $(loaded_build_id $m) != $f's" >&2; false; }
	done
	inroot modinfo -F version nf_ila >&2 || true
}

@test "ILA prefix translation with the packaged ip6tables plugin: UDP, TCP, ping" {
	sh_in r "ip6tables -t mangle -A PREROUTING -d 2001:db8:0:3::/64 -j ILA \
			--src-pfx 2001:db8:0:3::/64 --dst-pfx 3333:0:0:1::/64
		ip6tables -t mangle -A POSTROUTING -j ILA --translate src \
			--src-pfx 3333:0:0:1::/64 --dst-pfx 2001:db8:0:3::/64"
	run sh_in c "echo udp-through-ila | socat -t 5 -T 10 - UDP6:[$SIR]:7000"
	echo "udp: $output" >&2
	[ "$output" = udp-through-ila ]
	run sh_in c "echo tcp-through-ila | socat -t 5 -T 10 - TCP6:[$SIR]:7001"
	[ "$output" = tcp-through-ila ]
	sh_in c "ping -6 -c 3 -i 0.2 -W 5 $SIR >/dev/null"
	[ "$(rule_pkts r ip6tables mangle PREROUTING)" -ge 5 ]
	[ "$(rule_pkts r ip6tables mangle POSTROUTING)" -ge 5 ]
	sh_in r "ip6tables-save -t mangle" | grep -q -- "-j ILA --src-pfx 2001:db8:0:3::/64 --dst-pfx 3333:0:0:1::/64"
}

@test "ILA map with the packaged ilactl: -j ILA --map, lookups hit, completion lists the map" {
	sh_in r "ilactl map create hosts
		ilactl map add hosts 0:0:0:5 3333:0:0:1
		ip6tables -t mangle -R PREROUTING 1 -d 2001:db8:0:3::/64 -j ILA --map hosts --miss drop"
	run sh_in c "echo udp-through-map | socat -t 5 -T 10 - UDP6:[$SIR]:7000"
	[ "$output" = udp-through-map ]
	run sh_in r "ilactl -j map stats hosts"
	echo "$output" >&2
	[[ $output =~ \"hits\":([0-9]+) ]] && [ "${BASH_REMATCH[1]}" -ge 1 ]
	[[ $output =~ \"rules\":1 ]]
	# bash completion of a map name asks ilactl for the netns' maps
	run inroot ip netns exec r bash -c '. /usr/share/bash-completion/bash_completion
		. /usr/share/bash-completion/completions/ilactl
		COMP_WORDS=(ilactl map add ""); COMP_CWORD=3; COMP_LINE="ilactl map add "; COMP_POINT=15
		_ilactl; echo "${COMPREPLY[*]}"'
	[ "$output" = hosts ]
}

@test "rtcache: a forwarded IPv4 flow is cached, -m rtcache --cached counts it" {
	sh_in r "iptables -A FORWARD -m conntrack --ctstate NEW,ESTABLISHED -j ACCEPT
		iptables -t mangle -A PREROUTING -m rtcache --cached"
	sh_in c "ping -4 -c 6 -i 0.2 -W 5 10.0.2.2 >/dev/null"
	# /proc/net/stat/nf_conntrack_rtcache: hex, one line per CPU; hits = column 2
	local hits=0 e h
	while read -r e h _; do
		[ "$e" = entries ] || hits=$((hits + 16#$h))
	done < <(sh_in r "cat /proc/net/stat/nf_conntrack_rtcache")
	echo "hits $hits" >&2
	[ "$hits" -ge 4 ]
	[ "$(rule_pkts r iptables mangle PREROUTING)" -ge 4 ]
}
