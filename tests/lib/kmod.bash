# Loading this tree's kernel modules in the test VM; sourced by
# tests/bats/helpers.bash and bench/lib.sh. The caller sets KMOD_DIR
# (build/kmod/<release>).

# load_module NAME [params] : load the stock modules NAME depends on, then
# insmod ours (recursively for our own dependencies).
load_module() {
	local name=$1 ko="$KMOD_DIR/$1.ko" dep
	[ -e "/sys/module/$name" ] && return 0
	[ -e "$ko" ] || { echo "module $ko not built (make modules)" >&2; return 1; }
	for dep in $(modinfo -F depends "$ko" | tr ',' ' '); do
		modprobe "$dep" 2>/dev/null || load_module "$dep"
	done
	insmod "$ko" "${@:2}"
}

# unload_module NAME : rmmod if loaded, retrying for up to 10 s while
# references go away.
unload_module() {
	local i
	[ -e "/sys/module/$1" ] || return 0
	for ((i = 0; i < 100; i++)); do
		rmmod "$1" 2>/dev/null && return 0
		sleep 0.1
	done
	rmmod "$1"
}
