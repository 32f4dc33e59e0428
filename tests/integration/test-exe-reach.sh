#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# No process of the host's runtime binary may be reachable from a container (issue 31, items 1-3): a
# container process that opens /proc/PID/exe of one of the runtime's processes while it is still the host's
# binary keeps that fd and, once nothing executes the file any more, reopens /proc/self/fd/N for writing
# (CVE-2019-5736). The attacker is exe-grab (helpers-sec/exe-grab.c): it holds every exe whose device and
# inode are the victim's and appends to it when it can. Each runtime under test runs from a copy of its
# binary (the victim), so that a successful attack damages a copy, whose hash is checked afterwards:
#   a. a startContainer hook (CAP_SYS_PTRACE) that leaves a child behind scanning /proc (its parent: the init);
#   b. container A, with CAP_SYS_PTRACE, in whose pid namespace (linux.namespaces[].path) B is run 5 times;
#   c. a container with CAP_SYS_PTRACE while `exec` runs into it 8 times (the exec child);
#   d. b and c with a user namespace (B joins A's), the victim owned by the container's root;
#   e. (sdrun) which creates re-execute from a sealed copy, and exec into a created container whose init does not;
#   f. (sdrun; runc and crun reported) the created init is non-dumpable with a user namespace too.
# runc and crun (hybrid only: not in the unified box), each from a copy of its binary too, are the controls.
. "$(dirname "$0")/lib.sh"

require_root
require_systemd
# The attacks are on the runtime's processes, whatever the cgroup layout: in CI the hybrid lane, where crun
# is a control too, runs it (and the unified lane test-cve-2019-5736, the other long attack test).
ci_lane hybrid
[ -n "${EXE_GRAB:-}" ] && [ -x "$EXE_GRAB" ] || bail "EXE_GRAB (the exe-grab helper) is not set or not executable"
# crun 1.8.1, a control here, chowns its stdio to the process's user: the box's /dev/null, in a user
# namespace, to the mapped root. Given back when the test ends, for the tests after it in the lane.
cleanup_add sh -c '[ "$(stat -c %u:%g /dev/null)" = 0:0 ] || chown 0:0 /dev/null'

RUNC=$(command -v runc) || bail "runc is not installed (Debian package runc): it is a control here"
CRUN=$(command -v crun) || bail "crun is not installed (Debian package crun): it is a control here"
# crun cannot raise RLIMIT_MEMLOCK in the unified box (its BPF device filter): runc is the control there
RUNTIMES="sdrun runc crun"
if [ "${SDRUN_TEST_LAYOUT:-}" = unified ]; then
        RUNTIMES="sdrun runc"
        diag "unified layout: crun is left out (it cannot raise RLIMIT_MEMLOCK in this box), runc is the control"
fi

# victim copies: sdrun, runc, crun; rt NAME ARGS... runs NAME's copy with its own --root
declare -A BIN=([sdrun]="$SDRUN" [runc]="$RUNC" [crun]="$CRUN") SUM=() DEVINO=()
for n in $RUNTIMES; do
        cp "${BIN[$n]}" "$TEST_TMPDIR/$n-victim" && chmod 755 "$TEST_TMPDIR/$n-victim" || bail "cannot copy ${BIN[$n]}"
        SUM[$n]=$(sha256sum <"${BIN[$n]}")
        DEVINO[$n]=$(stat -c %d:%i "$TEST_TMPDIR/$n-victim")
done
rt() {
        local n=$1
        shift
        case $n in
        sdrun) "$TEST_TMPDIR/sdrun-victim" --root "$SDRUN_ROOT" "$@" ;;
        runc) "$TEST_TMPDIR/runc-victim" --root "$TEST_TMPDIR/runc" --systemd-cgroup "$@" ;;
        crun) "$TEST_TMPDIR/crun-victim" --root "$TEST_TMPDIR/crun" --systemd-cgroup "$@" ;;
        esac
}
# cleanup of whatever a case left, whichever runtime made it
forget() {
        rt "$1" delete --force "$2" >/dev/null 2>&1
        [ "$1" = sdrun ] && no_leftovers "$2"
        return 0
}
# intact NAME WHAT: the victim copy of NAME is still the binary; a fresh copy for the next case either way
intact() {
        local n=$1 what=$2 v=$TEST_TMPDIR/$1-victim i
        # the attacker retries all along: give it 3 s once no runtime process is left
        for i in $(seq 30); do
                [ "$(sha256sum <"$v")" = "${SUM[$n]}" ] || break
                sleep 0.1
        done
        is "$(sha256sum <"$v")" "${SUM[$n]}" "$n: $what: the runtime's binary is unchanged"
        rm -f "$v" && cp "${BIN[$n]}" "$v" && chmod 755 "$v" || bail "cannot copy ${BIN[$n]}"
        DEVINO[$n]=$(stat -c %d:%i "$v")
}

CAPS='.process.capabilities |= with_entries(.value += ["CAP_SYS_PTRACE"])'
B=$TEST_TMPDIR/b
make_bundle "$B" || bail "make_bundle failed"
cp "$EXE_GRAB" "$B/rootfs/bin/exe-grab" || bail "cannot copy exe-grab"
bundle_set "$B" '.ociVersion="1.0.2"' # crun 1.8 refuses newer versions
cp "$B/config.json" "$TEST_TMPDIR/config.orig"
reset() { cp "$TEST_TMPDIR/config.orig" "$B/config.json"; }
cgpath() { printf 'machine.slice:exereach:%s' "$1"; }

# a. A startContainer hook: it forks a child that outlives it and scans /proc for 20 s (from the moment the
# init is still the runtime until long after it exec'd and the runtime returned).
for n in $RUNTIMES; do
        reset
        bundle_set "$B" "$CAPS"' | .process.args=["sleep","30"]
                | .hooks.startContainer=[{path: "/bin/exe-grab", args: ["exe-grab", "20", "-d", $t]}]' \
                --arg t "${DEVINO[$n]}"
        id=$(new_id exea)
        [ "$n" = sdrun ] && track_container "$id"
        bundle_set "$B" '.linux.cgroupsPath=$c' --arg c "$(cgpath "$id")"
        rc=0
        rt "$n" run -d --bundle "$B" "$id" >"$TEST_TMPDIR/out" 2>&1 </dev/null || rc=$?
        is "$rc" 0 "$n: a. run -d with a startContainer hook ($(head -c 200 "$TEST_TMPDIR/out"))"
        intact "$n" "a. a startContainer hook's child held /proc/<its parent>/exe"
        forget "$n" "$id"
done

# b. A shared pid namespace: A scans until it is deleted (CAP_SYS_PTRACE overrides non-dumpable); B, in A's
# pid namespace, is run 5 times meanwhile. d: A has a user namespace, and B joins it too (a pod sharing both).
A=$TEST_TMPDIR/a
make_bundle "$A" || bail "make_bundle failed"
cp "$EXE_GRAB" "$A/rootfs/bin/exe-grab" || bail "cannot copy exe-grab"
bundle_set "$A" '.ociVersion="1.0.2"'
cp "$A/config.json" "$TEST_TMPDIR/config-a.orig"
# d: the rootfs the container's root owns, and a path to it it may walk
chmod 0755 "$TEST_TMPDIR" "$A" "$B"
UNS='.linux.namespaces += [{type: "user"}] | .linux.uidMappings=[{containerID: 0, hostID: 100000, size: 65536}]
        | .linux.gidMappings=[{containerID: 0, hostID: 100000, size: 65536}]'
shared_pidns() {
        local variant=$1 n=$2 aid apid id i fails rc what
        cp "$TEST_TMPDIR/config-a.orig" "$A/config.json"
        bundle_set "$A" "$CAPS"' | .process.args=["exe-grab", "60", $t]' --arg t "${DEVINO[$n]}"
        if [ "$variant" = d ]; then
                bundle_set "$A" "$UNS"
                chown 100000:100000 "$TEST_TMPDIR/$n-victim"
        fi
        aid=$(new_id exeA)
        track_container "$aid"
        bundle_set "$A" '.linux.cgroupsPath=$c' --arg c "$(cgpath "$aid")"
        rc=0
        "$SDRUN" --root "$SDRUN_ROOT" run -d --bundle "$A" "$aid" >"$TEST_TMPDIR/out.b.$n" 2>&1 </dev/null || rc=$?
        is "$rc" 0 "$n: $variant. container A runs (sdrun) ($(head -c 200 "$TEST_TMPDIR/out.b.$n"))"
        apid=$("$SDRUN" --root "$SDRUN_ROOT" state "$aid" | jq -r .pid)
        reset
        bundle_set "$B" '.linux.namespaces |= map(if .type == "pid" then .path = $p else . end)
                | .process.args=["true"]' --arg p "/proc/$apid/ns/pid"
        if [ "$variant" = d ]; then
                bundle_set "$B" '.linux.namespaces += [{type: "user", path: $u}]' --arg u "/proc/$apid/ns/user"
                # runc 1.1 wants the mappings of the user namespace it joins (sdrun and crun accept them there too)
                [ "$n" = runc ] && bundle_set "$B" "${UNS#*|}"
        fi
        fails=0
        for i in 1 2 3 4 5; do
                id=$(new_id exeb)
                [ "$n" = sdrun ] && track_container "$id"
                bundle_set "$B" '.linux.cgroupsPath=$c' --arg c "$(cgpath "$id")"
                rt "$n" run --bundle "$B" "$id" >"$TEST_TMPDIR/out" 2>&1 </dev/null || fails=$((fails + 1))
                forget "$n" "$id"
        done
        is "$fails" 0 "$n: $variant. B ran 5 times in A's pid namespace ($(head -c 200 "$TEST_TMPDIR/out"))"
        is "$(grep -c '^held' "$TEST_TMPDIR/out.b.$n")" 0 "$n: $variant. A never opened /proc/PID/exe of a process that was the runtime's binary"
        what="container A (CAP_SYS_PTRACE) shares its pid namespace with B"
        [ "$variant" = d ] && what="$what, and its user namespace"
        intact "$n" "$variant. $what"
        "$SDRUN" --root "$SDRUN_ROOT" delete --force "$aid" >/dev/null 2>&1
}
for n in $RUNTIMES; do
        shared_pidns b "$n"
done

# c, d. CAP_SYS_PTRACE in the container while exec runs into it 8 times; d. with a user namespace.
for variant in c d; do
        if [ "$variant" = d ]; then
                chown -R 100000:100000 "$A/rootfs" "$B/rootfs"
                for n in $RUNTIMES; do
                        shared_pidns d "$n"
                done
        fi
        for n in $RUNTIMES; do
                reset
                bundle_set "$B" "$CAPS"' | .process.args=["exe-grab", "60", $t]' --arg t "${DEVINO[$n]}"
                if [ "$variant" = d ]; then
                        bundle_set "$B" "$UNS"
                        # the binary writable by the container's root, as a rootless user's own copy is
                        chown 100000:100000 "$TEST_TMPDIR/$n-victim"
                fi
                id=$(new_id exec)
                [ "$n" = sdrun ] && track_container "$id"
                bundle_set "$B" '.linux.cgroupsPath=$c' --arg c "$(cgpath "$id")"
                rc=0
                out=$TEST_TMPDIR/out.$variant.$n
                rt "$n" run -d --bundle "$B" "$id" >"$out" 2>&1 </dev/null || rc=$?
                is "$rc" 0 "$n: $variant. run -d ($(head -c 200 "$out"))"
                fails=0
                for i in 1 2 3 4 5 6 7 8; do
                        rt "$n" exec "$id" true >/dev/null 2>&1 </dev/null || fails=$((fails + 1))
                done
                is "$fails" 0 "$n: $variant. 8 execs"
                what="exec into a container with CAP_SYS_PTRACE"
                [ "$variant" = d ] && what="$what and a user namespace"
                is "$(grep -c '^held' "$out")" 0 "$n: $variant. the container never opened /proc/PID/exe of a process that was the runtime's binary"
                intact "$n" "$variant. $what"
                forget "$n" "$id"
        done
done

# e. Where the sealed re-exec is needed (sdrun only: its create decides from config.json). The init is seen
# through /proc/PID/exe while the container is created: the host's binary where nothing of the container can
# see it (a pid namespace of its own, no createContainer or startContainer hook), a sealed memfd otherwise.
init_exe() { readlink "/proc/$("$SDRUN" --root "$SDRUN_ROOT" state "$1" | jq -r .pid)/exe" 2>&1; }
# created_init_exe WHAT: create with $B as it is; sets id, and out to the init's /proc/PID/exe
created_init_exe() {
        local what=$1 rc=0
        id=$(new_id exee)
        track_container "$id"
        bundle_set "$B" '.linux.cgroupsPath=$c' --arg c "$(cgpath "$id")"
        rt sdrun create --bundle "$B" "$id" >"$TEST_TMPDIR/out" 2>&1 </dev/null || rc=$?
        is "$rc" 0 "sdrun: e. create, $what ($(head -c 200 "$TEST_TMPDIR/out"))"
        out=$(init_exe "$id")
}
reset
bundle_set "$B" '.process.args=["sleep","30"]'
created_init_exe "a pid namespace of its own, no hooks"
like "$out" "/sdrun-victim\$" "sdrun: e. created, own pid namespace, no hooks: the init is the binary itself (no re-exec)"
# an exec into it without CAP_SYS_PTRACE runs beside the init (as with runc and crun) ...
rc=0; out=$(rt sdrun exec "$id" cat /proc/1/comm 2>&1) || rc=$?
is "$rc:$out" "0:sdrun:init" "sdrun: e. exec without CAP_SYS_PTRACE into the created container runs"
# ... one that may hold it is refused until start, and leaves nothing
rc=0; out=$(rt sdrun exec --cap CAP_SYS_PTRACE "$id" sh -c 'sleep 30' 2>&1) || rc=$?
like "$rc:$out" "^255:.*CAP_SYS_PTRACE.*start the container first" "sdrun: e. exec with CAP_SYS_PTRACE into it is refused, naming why"
is "$(cat "$(cgroup_dir "$(unit_of "$id")")/cgroup.procs" 2>&1 | wc -l)" 1 "sdrun: e. ... and nothing but the init is in its cgroup"
ok_desc "sdrun: e. it starts" rt sdrun start "$id"
rc=0; out=$(rt sdrun exec --cap CAP_SYS_PTRACE "$id" true 2>&1) || rc=$?
is "$rc" 0 "sdrun: e. once started, exec with CAP_SYS_PTRACE runs ($out)"
forget sdrun "$id"
# the same config with a startContainer or a createContainer hook, or in another's pid namespace: sealed
reset
bundle_set "$B" '.process.args=["sleep","30"] | .hooks.startContainer=[{path: "/bin/true"}]'
created_init_exe "a startContainer hook"
like "$out" "^/memfd:sdrun" "sdrun: e. with a startContainer hook the init is a sealed copy"
forget sdrun "$id"
reset
bundle_set "$B" '.process.args=["sleep","30"] | .hooks.createContainer=[{path: "/bin/true"}]'
created_init_exe "a createContainer hook"
like "$out" "^/memfd:sdrun" "sdrun: e. with a createContainer hook the init is a sealed copy"
forget sdrun "$id"
reset
bundle_set "$B" '.process.args=["sleep","30"] | .linux.namespaces |= map(select(.type != "pid"))'
created_init_exe "the host's pid namespace"
like "$out" "^/memfd:sdrun" "sdrun: e. in the host's pid namespace the init is a sealed copy"
forget sdrun "$id"
reset
aid=$(new_id exeA)
track_container "$aid"
bundle_set "$B" '.process.args=["sleep","60"] | .linux.cgroupsPath=$c' --arg c "$(cgpath "$aid")"
rt sdrun run -d --bundle "$B" "$aid" >/dev/null 2>&1 </dev/null
bundle_set "$B" '.process.args=["sleep","30"] | .linux.namespaces |= map(if .type == "pid" then .path = $p else . end)' \
        --arg p "/proc/$("$SDRUN" --root "$SDRUN_ROOT" state "$aid" | jq -r .pid)/ns/pid"
created_init_exe "in another container's pid namespace"
like "$out" "^/memfd:sdrun" "sdrun: e. in another container's pid namespace the init is a sealed copy"
forget sdrun "$id"
forget sdrun "$aid"
intact sdrun "e. created containers"

# f. With a user namespace, the init is non-dumpable from its first instruction until its last exec: a process
# that is root in the container's user namespace, with every capability there (CAP_SYS_PTRACE included), can
# neither read its memory nor ptrace it, in the window before the init's setresuid() (which makes a process
# non-dumpable anyway) or where setresuid() changes nothing. The mapping 0 -> 0 keeps that window open for as
# long as the container is created. The process looks from the init's own user namespace (nsenter), once
# for a user namespace of the container's own and once for one joined by path (a pod's: through stage1), and
# the container then runs what needs the init's own /proc files: linux.timeOffsets, process.oomScoreAdj.
# runc and crun are reported (diag).
ID0='.linux.uidMappings=[{containerID: 0, hostID: 0, size: 65536}] | .linux.gidMappings=[{containerID: 0, hostID: 0, size: 65536}]'
# reads_init RT ID: the init's environ, read from its own user namespace as that namespace's root
reads_init() {
        local pid
        pid=$(rt "$1" state "$2" | jq -r .pid)
        [ -n "$pid" ] && [ "$pid" != 0 ] || return 2
        nsenter --user="/proc/$pid/ns/user" --setuid=0 --setgid=0 -- cat "/proc/$pid/environ" >/dev/null 2>&1
}
# userns_case RT WHAT: create with $B, look at the created init, start it; its output is in out.f
userns_case() {
        local n=$1 what=$2 rc=0
        id=$(new_id exef)
        [ "$n" = sdrun ] && track_container "$id"
        bundle_set "$B" '.linux.cgroupsPath=$c' --arg c "$(cgpath "$id")"
        rt "$n" create --bundle "$B" "$id" >"$TEST_TMPDIR/out.f" 2>&1 </dev/null || rc=$?
        if [ "$n" != sdrun ]; then
                if [ $rc != 0 ]; then
                        diag "$n (control): f. $what: create failed: $(head -c 200 "$TEST_TMPDIR/out.f")"
                elif reads_init "$n" "$id"; then
                        diag "$n (control): f. $what: its created init's memory can be read from its user namespace"
                else
                        diag "$n (control): f. $what: its created init's memory cannot be read from its user namespace"
                fi
                forget "$n" "$id"
                return 0
        fi
        is "$rc" 0 "sdrun: f. create, $what ($(head -c 200 "$TEST_TMPDIR/out.f"))"
        rc=0
        reads_init sdrun "$id" || rc=$?
        is "$rc" 1 "sdrun: f. $what: root with CAP_SYS_PTRACE in the container's user namespace cannot read the created init's memory"
        rc=0
        rt sdrun start "$id" >/dev/null 2>&1 || rc=$?
        is "$rc" 0 "sdrun: f. $what: it starts"
        wait_for container_stopped "$id" >/dev/null 2>&1
        forget sdrun "$id"
}
container_stopped() { [ "$("$SDRUN" --root "$SDRUN_ROOT" state "$1" 2>/dev/null | jq -r .status)" = stopped ]; }
for n in $RUNTIMES; do
        reset
        bundle_set "$B" '.process.args=["sh", "-c", "cat /proc/self/oom_score_adj; cut -d \" \" -f 1 /proc/uptime"]
                | .linux.namespaces += [{type: "user"}] | .process.oomScoreAdj=123'" | $ID0"
        # sdrun: also a time namespace with an offset (runc 1.1 has none), written before setresuid()
        [ "$n" = sdrun ] && bundle_set "$B" '.linux.namespaces += [{type: "time"}]
                | .linux.timeOffsets={boottime: {secs: 864000000, nanosecs: 0}}'
        userns_case "$n" "a user namespace of its own, mapping 0 to 0"
        if [ "$n" = sdrun ]; then
                adj="" up=""
                { read -r adj; read -r up; } <"$TEST_TMPDIR/out.f"
                up=${up%.*}
                is "$adj:$((${up:-0} >= 864000000))" "123:1" "sdrun: f. ... the process has its oomScoreAdj, and its boot time the offset (${up:-none})"
        fi
done
# joined by path: A holds the user namespace (mapping 0 -> 0), B joins it with a pid namespace of its own
reset
aid=$(new_id exefA)
track_container "$aid"
bundle_set "$B" '.process.args=["sleep","60"] | .linux.namespaces += [{type: "user"}]'" | $ID0"' | .linux.cgroupsPath=$c' \
        --arg c "$(cgpath "$aid")"
rc=0
"$SDRUN" --root "$SDRUN_ROOT" run -d --bundle "$B" "$aid" >"$TEST_TMPDIR/out" 2>&1 </dev/null || rc=$?
is "$rc" 0 "sdrun: f. container A with a user namespace mapping 0 to 0 runs ($(head -c 200 "$TEST_TMPDIR/out"))"
apid=$("$SDRUN" --root "$SDRUN_ROOT" state "$aid" | jq -r .pid)
for n in $RUNTIMES; do
        reset
        bundle_set "$B" '.process.args=["true"] | .linux.namespaces += [{type: "user", path: $u}]'" | $ID0" \
                --arg u "/proc/$apid/ns/user"
        userns_case "$n" "A's user namespace, joined by path"
done
forget sdrun "$aid"
intact sdrun "f. created containers with a user namespace"

done_testing
