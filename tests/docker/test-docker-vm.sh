#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Suite "vm": a Docker smoke on a real cgroup v2 hierarchy with every controller and a network namespace
# of its own (the qemu VM tier), with Docker's systemd cgroup driver and its DEFAULT bridge network (docker0
# and its iptables rules, which the boxes cannot have: they share the host's network namespace). For sdrun
# and for runc (Docker's own default, the control) on the same daemon: the exit status of run, an eth0 in
# the bridge's subnet that reaches the gateway (ping and TCP), run -d + exec + update --memory (memory.max of
# the docker-<id>.scope) + stop + rm, and nothing left after rm; then --privileged (every capability and
# device, rw sysfs/cgroupfs, no seccomp, no masked path, a tmpfs mount, stop). Slow (software emulation):
# keep it small.
. "$(dirname "$0")/../integration/lib.sh"

require_root
require_systemd
[ "$(stat -fc %T /sys/fs/cgroup)" = cgroup2fs ] || bail "/sys/fs/cgroup is not cgroup2: this test is for the VM tier"

DOCKER_TEST_DRIVER=systemd
DOCKER_TEST_NETWORK=bridge
. "$(dirname "$0")/lib-docker.sh"
t0=$SECONDS
docker_setup
diag "docker_setup: $((SECONDS - t0)) s"
I=$DOCKER_IMAGE
# Everything is slower under emulation than wait_for's default allows.
export WAIT_FOR_TIMEOUT=60

# ip_int A.B.C.D: the address as a 32-bit number.
ip_int() {
        local IFS=. a
        read -r -a a <<<"$1"
        echo $(((a[0] << 24) + (a[1] << 16) + (a[2] << 8) + a[3]))
}

# in_subnet ADDR NET/LEN
in_subnet() {
        local len=${2#*/} mask
        mask=$(((0xffffffff << (32 - len)) & 0xffffffff))
        [ $(($(ip_int "$1") & mask)) = $(($(ip_int "${2%/*}") & mask)) ]
}

# The default bridge: Docker's view of it and the host's docker0.
read -r gw subnet < <(dk network inspect bridge --format '{{range .IPAM.Config}}{{.Gateway}} {{.Subnet}}{{end}}' 2>&1)
like "$gw $subnet" '^[0-9.]+ [0-9.]+/[0-9]+$' "the default bridge network has a gateway and a subnet ($gw $subnet)" ||
        bail "Docker has no default bridge network here: $(journalctl -u docker.service -n 20 --no-pager 2>&1 | grep -iE 'bridge|network|iptables' | tail -n 5)"
like "$(ip -4 -o addr show dev docker0 2>&1)" " inet ${gw//./\\.}/" "docker0 carries the gateway address $gw"
# A TCP listener on the gateway address, on the host side (busybox's wget crashes: the client is nc).
mkdir -p "$TEST_TMPDIR/www"
echo hello-from-host >"$TEST_TMPDIR/www/hello"
busybox httpd -f -p "$gw:18080" -h "$TEST_TMPDIR/www" &
httpd_pid=$!
cleanup_add kill "$httpd_pid"

declare -A capeff
host_capbnd=$(sed -n 's/^CapBnd:[[:space:]]*//p' /proc/self/status)
blockdevs=$(ls /sys/block | grep -v -E '^(loop|ram)' | paste -sd ' ')

for rt in sdrun runc; do
        DOCKER_TEST_RUNTIME=$rt
        R=(--runtime "$rt")
        t0=$SECONDS

        # One run (each costs seconds under emulation): eth0's address, ping (Docker's default capabilities
        # include NET_RAW), a TCP request to the host's listener, then exit 3.
        rc=0
        out=$(dk run --rm "${R[@]}" "$I" sh -c "ip -4 -o addr show dev eth0; ping -c 1 -W 10 $gw >/dev/null && echo ping-ok;
                printf 'GET /hello HTTP/1.0\\r\\n\\r\\n' | nc -w 10 $gw 18080; exit 3" 2>&1) || rc=$?
        is "$rc" 3 "$rt: run on the default bridge: the exit status of the process (3)"
        addr=$(sed -n 's|.* inet \([0-9.]*\)/.*|\1|p' <<<"$out" | head -n 1)
        ok_desc "$rt: the container's eth0 has an address in $subnet (${addr:-none})" \
                in_subnet "${addr:-255.255.255.255}" "$subnet" || diag "$out"
        is "$(grep -x ping-ok <<<"$out")" ping-ok "$rt: the container pings the gateway $gw"
        is "$(grep -x hello-from-host <<<"$out")" hello-from-host "$rt: the container reaches a TCP listener on the gateway $gw:18080"

        id=$(dk run -d "${R[@]}" "$I" sleep 1000)
        cleanup_add "$DOCKER" rm -f "$id"
        like "$id" '^[0-9a-f]{64}$' "$rt: run -d prints the container id"
        is "$(docker_runtime_of "$id")" "$rt" "$rt: Docker used runtime $rt"
        ok_desc "$rt: the container's init is in /system.slice/docker-ID.scope, an active unit" docker_scope_ok "$id"
        cg=/sys/fs/cgroup/system.slice/docker-$id.scope
        rc=0
        out=$(dk exec "$id" sh -c 'echo from-exec; exit 5' 2>&1) || rc=$?
        is "$out" from-exec "$rt: exec: the process's output"
        is "$rc" 5 "$rt: exec: the exit status of the process (5)"
        ok_desc "$rt: update --memory 64m --memory-swap 128m" dk update --memory 64m --memory-swap 128m "$id"
        is "$(cat "$cg/memory.max" 2>&1)" $((64 << 20)) "$rt: update: memory.max of docker-ID.scope"
        is "$(cat "$cg/memory.swap.max" 2>&1)" $((64 << 20)) "$rt: update: memory.swap.max (128m of memory+swap)"
        ok_desc "$rt: stop -t 1" dk stop -t 1 "$id"
        is "$(dk inspect -f '{{.State.Status}} {{.State.ExitCode}}' "$id" 2>&1)" "exited 137" "$rt: stop: killed by SIGKILL (137)"
        ok_desc "$rt: rm" dk rm "$id"
        ok_desc "$rt: nothing left after rm: no unit, process, runtime state or mount" wait_for docker_gone "$id"
        ok_desc "$rt: ... and no cgroup" test ! -e "$cg"

        # --privileged (the VM has every capability; the boxes lack CAP_SYS_RESOURCE): every capability, every
        # device, rw sysfs and cgroupfs, no seccomp, no masked or read-only paths, mounts allowed.
        rc=0
        out=$(dk run --rm --privileged "${R[@]}" "$I" sh -c "grep -E '^(CapEff|CapBnd|Seccomp):' /proc/self/status | tr -s '\t ' ' '
                for d in $blockdevs; do test -b /dev/\$d && echo dev-\$d; done
                awk '\$2 == \"/sys\" || \$2 == \"/sys/fs/cgroup\" || \$2 == \"/proc/sys\" { print \"mnt\", \$2, substr(\$4, 1, 2) }' /proc/mounts
                awk '\$2 ~ /^\\/proc\\/(kcore|keys|timer_list|acpi|scsi)\$/ || \$2 == \"/sys/firmware\" { print \"masked\", \$2 }' /proc/mounts
                echo sdrun-priv >/proc/sys/kernel/hostname && echo hostname-\$(hostname)
                mkdir -p /tmp/m && mount -t tmpfs t /tmp/m && touch /tmp/m/x && echo tmpfs-ok
                ls -d /lib/modules 2>/dev/null || echo no-modules" 2>&1) || rc=$?
        is "$rc" 0 "$rt: run --privileged" || diag "$out"
        capeff[$rt]=$(sed -n 's/^CapEff: //p' <<<"$out")
        # Docker gives every capability it knows (20.10: up to CAP_AUDIT_READ), not the kernel's whole set.
        like "${capeff[$rt]}" '^0000003fffffffff$|^000000[7f]fffffffff$|^000001ffffffffff$' \
                "$rt: --privileged: every capability Docker knows (${capeff[$rt]}; the host's bounding set $host_capbnd)"
        is "$(sed -n 's/^Seccomp: //p' <<<"$out")" 0 "$rt: --privileged: no seccomp filter"
        is "$(grep -c '^dev-' <<<"$out")" "$(wc -w <<<"$blockdevs")" "$rt: --privileged: the host's block devices are in /dev ($blockdevs)"
        is "$(grep '^mnt ' <<<"$out" | sort | paste -sd ' ')" "mnt /sys rw mnt /sys/fs/cgroup rw" \
                "$rt: --privileged: /sys and /sys/fs/cgroup are read-write, /proc/sys no read-only mount"
        is "$(grep '^hostname-' <<<"$out")" hostname-sdrun-priv "$rt: --privileged: /proc/sys is writable (the container's own hostname)"
        is "$(grep -c '^masked ' <<<"$out")" 0 "$rt: --privileged: no masked path" || diag "$out"
        is "$(grep -x tmpfs-ok <<<"$out")" tmpfs-ok "$rt: --privileged: the container mounts a tmpfs"
        is "$(grep -x no-modules <<<"$out")" no-modules "$rt: --privileged: no host kernel modules given to load"
        id=$(dk run -d --privileged "${R[@]}" "$I" sleep 1000)
        cleanup_add "$DOCKER" rm -f "$id"
        ok_desc "$rt: --privileged: stop -t 2" dk stop -t 2 "$id"
        is "$(dk inspect -f '{{.State.Status}} {{.State.ExitCode}}' "$id" 2>&1)" "exited 137" "$rt: --privileged: stop ended it"
        ok_desc "$rt: --privileged: rm" dk rm "$id"
        ok_desc "$rt: --privileged: nothing left after rm" wait_for docker_gone "$id"
        diag "$rt: $((SECONDS - t0)) s"
done
is "${capeff[sdrun]:-}" "${capeff[runc]:-none}" "--privileged: the same capabilities with sdrun as with runc"

done_testing
