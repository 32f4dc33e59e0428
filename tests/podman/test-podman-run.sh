#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Suite "podman": `podman run --rm` through conmon and the runtime chosen by $PODMAN_TEST_RUNTIME (sdrun by
# default; crun or runc as the control): exit codes (incl. Podman's 125/126/127), stdout/stderr, stdin,
# -e, -w, -u, --read-only, --cap-drop, no-new-privileges, the network modes, the resource limits, seen
# from inside the container and, on the host, on the libpod-<id>.scope the runtime created; and `podman
# build`, whose RUN steps buildah runs through the same runtime.
. "$(dirname "$0")/../integration/lib.sh"
. "$(dirname "$0")/lib-podman.sh"

require_root
require_systemd
podman_setup
IMG=$PODMAN_IMAGE

# --- exit codes, output -----------------------------------------------------------------------------------
pm_is "stdout of the container" hello 0 run --rm "$IMG" echo hello
pm_is "exit status of the container's process" "" 3 run --rm "$IMG" sh -c 'exit 3'

pm_out out run --rm "$IMG" sh -c 'echo to-stdout; echo to-stderr >&2'
is "$out|$PM_ERR|$PM_RC" "to-stdout|to-stderr|0" "stdout and stderr of the container stay apart"

out=$(echo piped-in | podman run --rm -i "$IMG" cat 2>&1)
is "$out" piped-in "run -i: the container reads podman's stdin"

pm_out out run --rm "$IMG" /no/such/binary
is "$PM_RC" 127 "missing binary: podman exits 127"
like "$PM_ERR" "not found" "missing binary: Podman's message says \"not found\""
diag "missing binary: $PM_ERR"

pm_out out run --rm "$IMG" no-such-command-in-path
is "$PM_RC" 127 "command not in \$PATH: podman exits 127"
like "$PM_ERR" "not found" "command not in \$PATH: Podman's message says \"not found\""

pm_out out run --rm "$IMG" /bin/not-executable
is "$PM_RC" 126 "file without execute permission: podman exits 126"
like "$PM_ERR" "[Pp]ermission denied" "file without execute permission: Podman's message says \"permission denied\""
diag "permission denied: $PM_ERR"

pm_out out run --rm "$IMG" /etc
is "$PM_RC" 126 "a directory as the command: podman exits 126"

pm_out out run --rm --no-such-podman-flag "$IMG" true
is "$PM_RC" 125 "podman's own error (unknown flag) exits 125"


# --- process attributes -------------------------------------------------------------------------------------
pm_is "-e sets the environment" "bar baz" 0 run --rm -e FOO=bar -e X=baz "$IMG" sh -c 'echo $FOO $X'
pm_is "-w sets the working directory" /tmp 0 run --rm -w /tmp "$IMG" pwd
pm_is "-u UID:GID" "1000 1000" 0 run --rm -u 1000:1000 "$IMG" sh -c 'echo $(id -u) $(id -g)'
pm_is "-u NAME resolved in the image's /etc/passwd" "1000 user" 0 run --rm -u user "$IMG" sh -c 'echo $(id -u) $(id -un)'
pm_is "--hostname" box1 0 run --rm --hostname box1 "$IMG" hostname

pm_like "--read-only: the root cannot be written" "Read-only file system" 1 \
        run --rm --read-only "$IMG" sh -c 'touch /x 2>&1'
pm_is "--read-only: /tmp stays writable" ok 0 run --rm --read-only "$IMG" sh -c 'touch /tmp/x && echo ok'
pm_is "without --read-only the root is writable" ok 0 run --rm "$IMG" sh -c 'touch /x && echo ok'

capbits() { # capbits FIELD: the container's capability mask FIELD from /proc/self/status, as a number
        local v
        v=$(podman run --rm "${@:2}" "$IMG" sh -c "sed -n 's/^$1:[[:space:]]*//p' /proc/self/status") || return 1
        echo $((16#$v))
}
eff=$(capbits CapEff)
# Debian's containers.conf leaves CAP_NET_RAW out of default_capabilities; CAP_NET_BIND_SERVICE (10) is in.
is "$(( (eff >> 13) & 1 ))/$(( (eff >> 10) & 1 ))" 0/1 "Debian's default capabilities: no CAP_NET_RAW, CAP_NET_BIND_SERVICE"
eff=$(capbits CapEff --cap-drop NET_BIND_SERVICE)
bnd=$(capbits CapBnd --cap-drop NET_BIND_SERVICE)
is "$(( (eff >> 10) & 1 ))/$(( (bnd >> 10) & 1 ))" 0/0 "--cap-drop NET_BIND_SERVICE: gone from the effective and bounding sets"
is "$(capbits CapEff --cap-drop all)/$(capbits CapBnd --cap-drop all)" 0/0 "--cap-drop all: empty effective and bounding sets"
pm_is "--cap-drop all: chown is refused to root" refused 0 run --rm --cap-drop all "$IMG" \
        sh -c 'chown 1000 /tmp 2>/dev/null && echo allowed || echo refused'
pm_is "--cap-add SYS_ADMIN lands in the effective set" 1 0 run --rm --cap-add SYS_ADMIN "$IMG" \
        sh -c 'v=$(sed -n "s/^CapEff:[[:space:]]*//p" /proc/self/status); echo $(( (0x$v >> 21) & 1 ))'

pm_is "default: NoNewPrivs is 0" 0 0 run --rm "$IMG" sh -c "sed -n 's/^NoNewPrivs:[[:space:]]*//p' /proc/self/status"
pm_is "--security-opt no-new-privileges: NoNewPrivs is 1" 1 0 run --rm --security-opt no-new-privileges "$IMG" \
        sh -c "sed -n 's/^NoNewPrivs:[[:space:]]*//p' /proc/self/status"

# --- network ------------------------------------------------------------------------------------------------
pm_is "--network none: only lo" lo 0 run --rm --network none "$IMG" \
        sh -c "sed -n '3,\$s/^ *\\([^:]*\\):.*/\\1/p' /proc/net/dev | sort | paste -sd ' '"
pm_like "default bridge network: eth0 with an address in Podman's 10.88.0.0/16" "inet 10\.88\.[0-9]+\.[0-9]+/16" 0 \
        run --rm "$IMG" ip -4 addr show eth0
# Debian's default_capabilities leave out NET_RAW, and busybox's ping needs a raw socket: add it here.
pm_is "default bridge network: the gateway answers a ping" ok 0 run --rm --cap-add NET_RAW "$IMG" \
        sh -c 'gw=$(ip route | sed -n "s/^default via \([^ ]*\).*/\1/p"); ping -c1 -W5 "$gw" >/dev/null && echo ok'

# --- the scope, from the host ---------------------------------------------------------------------------------
pm_like "the container runs in its own libpod-<id>.scope under machine.slice" \
        '^0::/machine\.slice/libpod-[0-9a-f]{64}\.scope(/[^/]+)?$' 0 \
        run --rm --cgroupns host "$IMG" grep '^0::' /proc/self/cgroup

# --- resources -----------------------------------------------------------------------------------------------
if have_resource_control; then
        name=res-$$
        pm_out cid run -d --name "$name" --memory 64m --pids-limit 32 --cpus 0.5 "$IMG" sleep 1000
        is "$PM_RC" 0 "run -d with --memory 64m --pids-limit 32 --cpus 0.5" || diag "$PM_ERR"
        unit=libpod-$cid.scope
        pid=$(pm_pid "$name")
        ok_desc "the scope $unit is active" scope_active "$unit"
        ok_desc "the scope holds the container's init (pid $pid)" scope_holds "$unit" "$pid"
        # The limits of the cgroup the init is in (the scope, or a cgroup the runtime made below it).
        if [ "$SDRUN_TEST_LAYOUT" = hybrid ]; then
                mem=$(proc_cgroup_dir "$pid" memory) && mem=$(cat "$mem/memory.limit_in_bytes")
                is "$mem" 67108864 "host: memory.limit_in_bytes of the container's memory cgroup is 64 MiB"
                pids=$(proc_cgroup_dir "$pid" pids) && pids=$(cat "$pids/pids.max")
                is "$pids" 32 "host: pids.max of the container's pids cgroup is 32"
                cpu=$(proc_cgroup_dir "$pid" cpu) && cpu="$(cat "$cpu/cpu.cfs_quota_us")/$(cat "$cpu/cpu.cfs_period_us")"
                is "$cpu" 50000/100000 "host: CFS quota/period of the container's cpu cgroup is 50000/100000 (--cpus 0.5)"
                for c in memory pids cpu; do
                        d=$(proc_cgroup_dir "$pid" $c) || d="(none)"
                        like "$d" "^/sys/fs/cgroup/$c/machine\.slice/$unit(/|\$)" "host: the $c cgroup lies in the scope"
                done
                pm_is "inside: memory.limit_in_bytes and pids.max" $'67108864\n32' 0 exec "$name" \
                        cat /sys/fs/cgroup/memory/memory.limit_in_bytes /sys/fs/cgroup/pids/pids.max
        else
                d=$(proc_cgroup_dir "$pid" "")
                is "$(cat "$d/memory.max")/$(cat "$d/pids.max")/$(cat "$d/cpu.max")" "67108864/32/50000 100000" \
                        "host: memory.max, pids.max and cpu.max of the container's cgroup"
                like "$d" "^/sys/fs/cgroup/machine\.slice/$unit(/|\$)" "host: the container's cgroup lies in the scope"
                pm_is "inside: memory.max and pids.max" $'67108864\n32' 0 exec "$name" \
                        cat /sys/fs/cgroup/memory.max /sys/fs/cgroup/pids.max
        fi
        if [ "$PODMAN_TEST_RUNTIME" = sdrun ]; then
                # sdrun's design: the limits are properties of the scope, so systemd knows and keeps them.
                if [ "$SDRUN_TEST_LAYOUT" = hybrid ]; then
                        is "$(unit_prop "$unit" MemoryLimit)" 67108864 "systemctl show: MemoryLimit=64M"
                else
                        is "$(unit_prop "$unit" MemoryMax)" 67108864 "systemctl show: MemoryMax=64M"
                fi
                is "$(unit_prop "$unit" TasksMax)" 32 "systemctl show: TasksMax=32"
        fi
        pm_out out rm -f -t 0 "$name"
        is "$PM_RC" 0 "rm -f the limited container" || diag "$PM_ERR"
        ok_desc "the scope is gone after rm" wait_for scope_gone "$unit"

        pm_is "--pids-limit 32 is enforced: 64 background processes stop at the limit" limited 0 \
                run --rm --pids-limit 32 "$IMG" sh -c 'sh -c "for i in \$(seq 64); do sleep 10 & echo \$!; done" >/tmp/started 2>/dev/null; n=0; while read p; do n=$((n + 1)); done </tmp/started; [ $n -ge 16 ] && [ $n -lt 32 ] && echo limited'
        pm_is "--memory 32m is enforced: a 48 MiB tmpfs write is OOM-killed" 137 0 \
                run --rm --memory 32m "$IMG" sh -c 'sh -c "head -c 50331648 /dev/zero > /dev/shm/fill" ; echo $?'
else
        skip "resource limits: no memory/pids controller in the $SDRUN_TEST_LAYOUT layout"
fi

# --- podman build: buildah runs each RUN step through the same runtime, with a config of its own ---------
ctx=$TEST_TMPDIR/build-ctx
mkdir -p "$ctx"
cat >"$ctx/Containerfile" <<EOF
FROM $IMG
RUN echo built-here >/greeting && id -u
RUN --mount=type=tmpfs,target=/scratch sh -c 'touch /scratch/x && ls /scratch'
EOF
pm_out out build --runtime "$PODMAN_RUNTIME_PATH" -t localhost/sdrun-test-built "$ctx"
is "$PM_RC" 0 "podman build: the RUN steps run through the runtime" || diag "$PM_ERR"
like "$out" $'STEP 2/3.*\n0\n' "podman build: a RUN step's output (id -u: 0)"
like "$out" $'STEP 3/3.*\nx\n' "podman build: RUN --mount=type=tmpfs"
unlike "$out$PM_ERR" "${PODMAN_TEST_RUNTIME}:" "podman build: no message of the runtime's in the build output"
pm_is "podman build: the image holds what a RUN step wrote" built-here 0 \
        run --rm localhost/sdrun-test-built cat /greeting
podman rmi -f localhost/sdrun-test-built >/dev/null 2>&1

pm_out out ps -a -q
is "$out" "" "run --rm left no container behind"

done_testing
