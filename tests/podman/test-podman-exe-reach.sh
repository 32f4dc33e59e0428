#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Suite "podman": no process of the runtime's binary is reachable from a container (issue 31, items 2 and 3)
# when Podman shares a pid namespace. Container A runs exe-grab (tests/integration/helpers-sec/exe-grab.c,
# bound read-only into the image): it opens /proc/PID/exe of every process it sees, keeps each that is the
# runtime's binary and reopens it for writing once it can (CVE-2019-5736). Podman runs the runtime from a
# copy of its binary (PODMAN_RUNTIME_BIN), the victim, so that a successful attack damages the copy, whose
# hash is checked after each case (and a fresh copy made). Meanwhile a new container B is started, and
# exec'd into, in A's pid namespace:
#   pod:       a pod sharing its pid namespace (`pod create --share pid`), A with CAP_SYS_PTRACE;
#   container: B with --pid=container:A, A with CAP_SYS_PTRACE;
#   host:      A with --pid=host (default capabilities: with CAP_SYS_PTRACE too, a --pid=host container is
#              host root, which README's security model says);
#   userns:    A in a user namespace (--uidmap) with CAP_SYS_PTRACE, the copy owned by its root (as a
#              rootless user's own binary is); exec into A, and B joining A's pid and user namespaces.
# PODMAN_TEST_RUNTIME: sdrun, or control (crun; runc in the unified box), each from its copy.
. "$(dirname "$0")/../integration/lib.sh"
. "$(dirname "$0")/lib-podman.sh"

require_root
require_systemd
[ -n "${EXE_GRAB:-}" ] && [ -x "$EXE_GRAB" ] || bail "EXE_GRAB (the exe-grab helper) is not set or not executable"
ORIG=$(podman_runtime_path) || bail "PODMAN_TEST_RUNTIME=$PODMAN_TEST_RUNTIME: not sdrun, crun or runc"
SUM=$(sha256sum <"$ORIG")
mkdir -p "$TEST_TMPDIR/victim"
V=$TEST_TMPDIR/victim/$PODMAN_TEST_RUNTIME
# fresh_copy: the victim, a new file (new inode) each time; owned by the user-namespaced root of the userns
# case (host uid 100000), which could then write it; root's containers can write it anyway (CAP_DAC_OVERRIDE)
fresh_copy() {
        rm -f "$V" && cp "$ORIG" "$V" && chmod 0755 "$V" && chown 100000:100000 "$V" || bail "cannot copy $ORIG to $V"
}
fresh_copy
export PODMAN_RUNTIME_BIN=$V
podman_setup
IMG=$PODMAN_IMAGE
RT=$PODMAN_TEST_RUNTIME
is "$(podman info --format '{{.Host.OCIRuntime.Path}}' 2>&1)" "$V" "$RT: Podman runs the runtime from a copy of its binary"

# grabber NAME OPTIONS...: container NAME runs exe-grab for 90 s against the copy's device and inode
grabber() {
        local a=$1
        shift
        pm_out out run -d --name "$a" -v "$EXE_GRAB:/exe-grab:ro" "$@" "$IMG" /exe-grab 90 "$(stat -c %d:%i "$V")"
        is "$PM_RC" 0 "$RT: $case: A runs exe-grab ($*)" || diag "$PM_ERR"
}
# victims OPTIONS...: B started (kept running as b-$case) and exec'd into twice
victims() {
        local fails=0
        pm_out out run -d --name "b-$case" "$@" "$IMG" sleep 1000
        [ "$PM_RC" = 0 ] || { fails=$((fails + 1)); diag "$PM_ERR"; }
        execs "b-$case" 2
        is "$fails" 0 "$RT: $case: B started, and was exec'd into twice ($*)"
}
# execs NAME N: `podman exec NAME true` N times; the failures counted in $fails
execs() {
        local i
        for i in $(seq "$2"); do
                pm_out out exec "$1" true
                [ "$PM_RC" = 0 ] || { fails=$((fails + 1)); diag "$PM_ERR"; }
        done
}
# verdict NAME: A was scanning all along and never held the binary; the copy is unchanged (the attacker retries
# all along: 1 s more once no runtime process is left); then everything of the case goes, and a fresh copy
verdict() {
        local a=$1 i logs
        for i in $(seq 10); do
                [ "$(sha256sum <"$V")" = "$SUM" ] || break
                sleep 0.1
        done
        logs=$(podman logs "$a" 2>&1)
        is "$(pm_status "$a")" running "$RT: $case: A (exe-grab) was scanning all along"
        is "$(grep -c '^held' <<<"$logs")" 0 "$RT: $case: A never opened /proc/PID/exe of a process that was the runtime's binary" ||
                diag "$logs"
        is "$(sha256sum <"$V")" "$SUM" "$RT: $case: the runtime's binary is unchanged"
        # B first: it depends on A (--pid, --userns container:A)
        podman rm -f -t 0 "b-$case" >/dev/null 2>&1
        podman rm -a -f -t 0 >/dev/null 2>&1
        podman pod rm -a -f -t 0 >/dev/null 2>&1
        fresh_copy
        diag "$case: done at ${SECONDS}s"
}

case=pod
pod=exe-pod-$$
pm_out out pod create --name "$pod" --share pid,ipc,net --network none
is "$PM_RC" 0 "$RT: pod create --share pid" || diag "$PM_ERR"
grabber "a-$case" --pod "$pod" --cap-add SYS_PTRACE
victims --pod "$pod"
verdict "a-$case"

case=container
grabber "a-$case" --network none --cap-add SYS_PTRACE
victims --network none --pid "container:a-$case"
verdict "a-$case"

case=host
grabber "a-$case" --network none --pid host
victims --network none
verdict "a-$case"

case=userns
grabber "a-$case" --network none --uidmap 0:100000:65536 --gidmap 0:100000:65536 --cap-add SYS_PTRACE
fails=0
execs "a-$case" 2
is "$fails" 0 "$RT: $case: exec into A 2 times"
victims --network none --pid "container:a-$case" --userns "container:a-$case"
verdict "a-$case"

is "$(podman ps -a -q)" "" "$RT: no container left"

done_testing
