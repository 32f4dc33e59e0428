#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Rootless Podman (issue 16): an unprivileged user with /etc/subuid and /etc/subgid ranges and a running
# user manager drives the runtime: `run --rm`, `run -d` + `exec` + `stop` + `rm`, `--userns=keep-id`, a
# volume, `stats` on cgroup v2, and where the user manager has controllers delegated (the vm tier) `--memory`
# in the memory.max of the user's scope. PODMAN_TEST_RUNTIME: sdrun, or control (crun rootless).
. "$(dirname "$0")/../integration/lib.sh"
. "$(dirname "$0")/../integration/lib-rootless.sh"
. "$(dirname "$0")/lib-podman.sh"

require_root
require_systemd
command -v podman >/dev/null || bail "podman is not installed"
# Rootless, crun is Podman's default runtime and runs in every layout here: it is the control.
[ "$PODMAN_TEST_RUNTIME" = sdrun ] || PODMAN_TEST_RUNTIME=crun
RT=$PODMAN_TEST_RUNTIME
rootless_setup sdrun-prl
v2=0
[ "$(stat -fc %T /sys/fs/cgroup)" = cgroup2fs ] && v2=1
DELEGATED=$(rl_delegated)

rl_podman_setup "$RT"
IMG=$RL_PODMAN_IMAGE

# upis DESC EXPECTED CMD...: podman's stdout (stderr apart) and exit status 0.
upis() {
        local desc=$1 want=$2 got rc
        shift 2
        got=$(up "$@" 2>"$TEST_TMPDIR/err" </dev/null)
        rc=$?
        if [ "$rc" = 0 ] && [ "$got" = "$want" ]; then
                _tap_result 0 "$RT: $desc"
        else
                _tap_result 1 "$RT: $desc"
                { echo "command: podman $*"; echo "stdout: '$got' (expected '$want')"; echo "exit status: $rc";
                  echo "stderr: $(cat "$TEST_TMPDIR/err")"; } | _tap_diag_stream
        fi
}

upis "run --rm" hi run --rm --network none "$IMG" echo hi
upis "the container runs in Podman's user namespace (0 -> $RL_UID)" "0 $RL_UID 1" \
        run --rm --network none "$IMG" sh -c 'head -1 /proc/self/uid_map | tr -s " " | sed "s/^ //"'

cid=$(up run -d --network none --name rl-d "$IMG" sleep 1000 2>"$TEST_TMPDIR/err" </dev/null)
is "$?" 0 "$RT: run -d" || diag "$(cat "$TEST_TMPDIR/err")"
units=$(rl_units "*$cid*")
if [ "$v2" = 1 ]; then
        like "$units" "$cid" "$RT: the container's scope is a unit of the user's manager"
        like "$(rl_unit_prop "$(head -1 <<<"$units")" ControlGroup)" "^$(rl systemctl --user show -p ControlGroup --value)/" \
                "$RT: below the user manager's cgroup"
else
        diag "cgroup v1: rootless Podman uses its cgroupfs manager (no scope asked for); units: ${units:-none}"
fi
upis "exec" ok exec rl-d echo ok
upis "exec as uid 1000 (a subuid)" 1000 exec --user 1000 rl-d id -u
if [ "$v2" = 1 ]; then
        got=$(up stats --no-stream --format '{{.Name}}' rl-d 2>"$TEST_TMPDIR/err" </dev/null)
        rc=$?
        is "$rc:$got" "0:rl-d" "$RT: stats --no-stream (cgroup v2)" || diag "$(cat "$TEST_TMPDIR/err")"
        if [[ " $DELEGATED " == *" pids "* ]]; then
                like "$(up stats --no-stream --format '{{.PIDs}}' rl-d 2>/dev/null)" '^[1-9]' "$RT: stats counts the container's pids"
        fi
else
        diag "stats: rootless Podman has no stats on cgroup v1"
fi
upis "stop" rl-d stop -t 1 rl-d
upis "rm" rl-d rm rl-d
_units_gone() { [ -z "$(rl_units "*$cid*")" ]; }
ok_desc "$RT: nothing of $cid left in the user's manager" wait_for _units_gone

upis "--userns=keep-id runs as the user" "$RL_UID" run --rm --network none --userns=keep-id "$IMG" id -u
VOL=$RL_TMP/vol
mkdir -p "$VOL" && echo from-host >"$VOL/in" && chown -R "$RL_USER:" "$VOL"
upis "a volume: the host's file is read" from-host run --rm --network none -v "$VOL:/vol" "$IMG" cat /vol/in
upis "a volume: written as root in the container" "" run --rm --network none -v "$VOL:/vol" "$IMG" sh -c 'echo out >/vol/out'
is "$(stat -c %U "$VOL/out" 2>/dev/null):$(cat "$VOL/out" 2>/dev/null)" "$RL_USER:out" "$RT: the file is the user's on the host"

if [[ " $DELEGATED " == *" memory "* ]]; then
        upis "--memory 64m lands in memory.max" 67108864 run --rm --network none --memory 64m "$IMG" cat /sys/fs/cgroup/memory.max
        cid=$(up run -d --network none --memory 64m "$IMG" sleep 1000 2>/dev/null </dev/null)
        cg=$(rl_unit_prop "$(rl_units "*$cid*" | head -1)" ControlGroup)
        ok_desc "$RT: the user's scope (or its sub-cgroup) has memory.max 64M" \
                sh -c "cat /sys/fs/cgroup$cg/memory.max /sys/fs/cgroup$cg/*/memory.max 2>/dev/null | grep -qx 67108864"
        up rm -f -t 0 "$cid" >/dev/null 2>&1
elif [ "$v2" = 1 ]; then
        diag "--memory: the user manager has no memory controller delegated here (\"$DELEGATED\"): the vm tier tests it"
fi

up ps -a -q >"$TEST_TMPDIR/ps" 2>&1
is "$(cat "$TEST_TMPDIR/ps")" "" "$RT: no container left"
done_testing
