#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Docker end to end (issue 12): docker run/exec/top/logs/pause/update/stats/stop/kill/rm, --restart and
# --init on the runtime under test ($DOCKER_TEST_RUNTIME: sdrun, or runc as the control: the same
# expectations must hold for both), with the cgroup driver $DOCKER_TEST_DRIVER. Each container is checked
# from the host side (its scope or cgroup) and nothing may be left after rm.
. "$(dirname "$0")/../integration/lib.sh"
. "$(dirname "$0")/lib-docker.sh"

require_root
require_systemd
docker_setup
I=$DOCKER_IMAGE
rt=$DOCKER_TEST_RUNTIME

# run: output and exit codes
is "$(drun "$I" echo hello 2>&1)" hello "run: echo hello"
rc=0; drun "$I" sh -c 'exit 3' >/dev/null 2>&1 || rc=$?
is "$rc" 3 "run: the exit status of the process (3)"
rc=0; drun "$I" /no/such/cmd >/dev/null 2>&1 || rc=$?
is "$rc" 127 "run: a missing executable exits 127"
rc=0; drun "$I" /etc/passwd >/dev/null 2>&1 || rc=$?
is "$rc" 126 "run: a file that is not executable exits 126"
is "$(drun -w /does/not/exist "$I" pwd 2>&1)" /does/not/exist "run -w of a missing directory creates it"
is "$(drun -e FOO=bar "$I" sh -c 'echo $FOO' 2>&1)" bar "run -e FOO=bar"
is "$(drun -u 1000:1000 "$I" id 2>&1)" "uid=1000(user) gid=1000(user) groups=1000(user)" "run -u 1000:1000"
rc=0; drun --read-only "$I" touch /x >/dev/null 2>&1 || rc=$?
is "$rc" 1 "run --read-only: the root is read-only"
is "$(drun --read-only --tmpfs /scratch "$I" sh -c 'touch /scratch/f && grep " /scratch " /proc/self/mounts | cut -d" " -f3' 2>&1)" \
        tmpfs "run --read-only --tmpfs /scratch: a writable tmpfs"
# CapEff bits: 0 CHOWN, 12 NET_ADMIN, 21 SYS_ADMIN.
capbit() { echo "(( 0x\$(awk '/^CapEff/ { print \$2 }' /proc/self/status) >> $1 & 1 ))"; }
is "$(drun "$I" sh -c "echo \$$(capbit 12)" 2>&1)" 0 "run: no CAP_NET_ADMIN by default"
is "$(drun --cap-add NET_ADMIN "$I" sh -c "echo \$$(capbit 12)" 2>&1)" 1 "run --cap-add NET_ADMIN"
is "$(drun --cap-drop CHOWN "$I" sh -c "echo \$$(capbit 0); touch /f; chown 1 /f 2>/dev/null || echo refused" 2>&1)" \
        "0
refused" "run --cap-drop CHOWN: the bit is gone and chown is refused"
# --privileged asks for every capability the kernel has: where this machine's bounding set lacks some (these
# VMs lack CAP_SYS_RESOURCE), runc and sdrun both refuse it, and Docker ignores --cap-drop with it.
if [ "$(awk '/^CapBnd/ { print $2 }' /proc/self/status)" = "$(printf '%016x' $(((1 << ($(cat /proc/sys/kernel/cap_last_cap) + 1)) - 1)))" ]; then
        is "$(drun --privileged "$I" sh -c "echo \$$(capbit 21); mount -t tmpfs t /mnt && echo mounted" 2>&1)" "1
mounted" "run --privileged: CAP_SYS_ADMIN, mount works"
else
        skip "run --privileged: this machine's capability bounding set is not full ($(awk '/^CapBnd/ { print $2 }' /proc/self/status)): no runtime can grant every capability"
fi
is "$(drun --device /dev/zero:/dev/myzero "$I" sh -c 'head -c 5 /dev/myzero | wc -c' 2>&1)" 5 "run --device /dev/zero:/dev/myzero"
ok_desc "run --init: PID 1 is docker-init" sh -c "'$DOCKER' run --rm ${DOCKER_RT_OPTS[*]} --network none --init '$I' cat /proc/1/cmdline | tr '\\0' ' ' | grep -q '^/sbin/docker-init -- cat'"

# run -d: the container from the host side
id=$(drund "$I" sh -c 'echo logline; trap "exit 7" USR1; while :; do sleep 0.1; done')
like "$id" '^[0-9a-f]{64}$' "run -d prints the container id"
is "$(docker_runtime_of "$id")" "$rt" "Docker used runtime $rt"
if [ "$rt" = sdrun ]; then
        is "$("$SDRUN" --root /run/docker/runtime-runc/moby state "$id" | jq -r .status)" running \
                "sdrun state of the container in Docker's runtime root: running"
fi
ok_desc "the container's init is in $(docker_cgroup_want "$id" | sed "s/$id/ID/")" docker_scope_ok "$id"
ok_desc "logs: the container's output" wait_for sh -c "'$DOCKER' logs '$id' 2>&1 | grep -qx logline"
is "$(dk exec "$id" echo from-exec 2>&1)" from-exec "exec echo"
rc=0; dk exec "$id" sh -c 'exit 5' >/dev/null 2>&1 || rc=$?
is "$rc" 5 "exec: the exit status of the process (5)"
is "$(dk exec -t "$id" sh -c 'test -t 1 && echo tty' 2>&1 | tr -d '\r')" tty "exec -t: stdout is a terminal"
is "$(dk exec -u 1000 "$id" id -u 2>&1)" 1000 "exec -u 1000"
like "$(dk top "$id" 2>&1)" 'while :' "top lists the container's process"
ok_desc "pause" dk pause "$id"
is "$(dk inspect -f '{{.State.Status}}' "$id")" paused "inspect: paused"
ok_desc "unpause" dk unpause "$id"
is "$(dk inspect -f '{{.State.Status}}' "$id")" running "inspect: running again"
ok_desc "exec after unpause" dk exec "$id" true
if [ "$SDRUN_TEST_LAYOUT" = hybrid ]; then
        ok_desc "update --memory 64m --cpus 0.5 --pids-limit 50" dk update --memory 64m --memory-swap 128m --cpus 0.5 --pids-limit 50 "$id"
        is "$(docker_cgroup_file "$id" memory.limit_in_bytes)" $((64 << 20)) "update: memory.limit_in_bytes of the container's cgroup"
        is "$(docker_cgroup_file "$id" pids.max)" 50 "update: pids.max"
        is "$(docker_cgroup_file "$id" cpu.cfs_quota_us)" 50000 "update: cpu.cfs_quota_us (0.5 CPU of a 100 ms period)"
        like "$(dk stats --no-stream --format '{{.MemUsage}}' "$id" 2>&1)" '^[0-9.]+[KMG]i?B / 64MiB$' "stats: memory usage and the new limit"
else
        # The unified box has no v2 controller: there is nothing to apply a limit to.
        skip "update: no cgroup v2 controllers in the unified box"
        ok_desc "stats --no-stream" dk stats --no-stream "$id"
fi
t0=$SECONDS
ok_desc "kill -s USR1: the trap exits 7" dk kill -s USR1 "$id"
ok_desc "the container exited" wait_for sh -c "[ \"\$('$DOCKER' inspect -f '{{.State.Status}}' '$id')\" = exited ]"
is "$(dk inspect -f '{{.State.ExitCode}}' "$id")" 7 "inspect: exit code 7"
# containerd's shim runs "kill --all" after the exit and backs off for about a minute on failure.
ok_desc "exited within 30 s, not after the shim's retries ($((SECONDS - t0)) s)" test $((SECONDS - t0)) -le 30
ok_desc "rm" dk rm "$id"
ok_desc "nothing of the container is left after rm" wait_for docker_gone "$id"

# stop: sh ignores SIGTERM as PID 1, so stop -t 1 ends with SIGKILL after 1 s; kill; rm -f of a running one.
id=$(drund "$I" sleep 1000)
t0=$SECONDS
ok_desc "stop -t 1" dk stop -t 1 "$id"
ok_desc "stop returned within 30 s ($((SECONDS - t0)) s)" test $((SECONDS - t0)) -le 30
is "$(dk inspect -f '{{.State.ExitCode}}' "$id")" 137 "stop: killed by SIGKILL (137)"
ok_desc "start again after stop" dk start "$id"
ok_desc "the restarted container's cgroup" docker_scope_ok "$id"
ok_desc "kill" dk kill "$id"
ok_desc "rm" dk rm "$id"
ok_desc "nothing left after stop, start, kill, rm" wait_for docker_gone "$id"
id=$(drund "$I" sleep 1000)
ok_desc "rm -f of a running container" dk rm -f "$id"
ok_desc "nothing left after rm -f" wait_for docker_gone "$id"

# --restart on-failure:2: restarted twice, then left exited.
id=$(drund --restart on-failure:2 "$I" sh -c 'exit 1')
WAIT_FOR_TIMEOUT=30 ok_desc "--restart on-failure:2 restarts twice" wait_for sh -c \
        "[ \"\$('$DOCKER' inspect -f '{{.RestartCount}} {{.State.Status}}' '$id')\" = '2 exited' ]"
ok_desc "rm" dk rm -f "$id"
ok_desc "nothing left after the restarts" wait_for docker_gone "$id"

done_testing
