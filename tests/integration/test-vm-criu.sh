#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Suite "vm": checkpoint and restore with CRIU on Debian's own kernel (one CRIU supports; the development
# machines' kernel is not: see test-criu-args.sh), with runc as the control running the same steps:
#   - a counting container with a network namespace, a bind mount from the host and prestart/poststop hooks
#     is checkpointed (stopped: scope gone, poststop run) and restored under the same id into a NEW scope,
#     and the count goes on from where it was;
#   - --leave-running, then a restore of those images under a new id;
#   - --pre-dump, then a dump with --parent-path, then a restore;
#   - failures: restore onto the id of a running container, from broken images (CRIU fails half-way):
#     refused, nothing left behind;
#   - a container with a terminal (process.terminal): checkpointed, restored with --console-socket, where the
#     new terminal's master arrives and the shell that was reading its terminal answers;
#   - a counting container without a cgroup namespace (sdrun binds its own cgroup directory on
#     /sys/fs/cgroup): checkpointed and restored, the mount then the new scope's directory;
#   (Podman's checkpoint and restore through sdrun, runc as the control, are test-podman-vm-checkpoint.sh.)
. "$(dirname "$0")/lib.sh"

require_root
require_systemd
command -v criu >/dev/null || bail "criu is not installed (Debian package criu)"
command -v runc >/dev/null || bail "runc is not installed (the control)"
command -v modprobe >/dev/null || bail "modprobe is not installed (package kmod): CRIU loads the *_diag modules"
modprobe unix_diag 2>/dev/null || bail "cannot load unix_diag: the VM needs the kernel package's modules"
diag "criu $(criu --version | sed -n 's/^Version: //p') on $(uname -r)"

RUNC_ROOT=$TEST_TMPDIR/runc-root
# R RT ARGS...: the runtime RT (sdrun or runc, each with its systemd cgroup manager).
R() {
        local rt=$1
        shift
        # Bounded: a hung checkpoint or restore fails its test instead of the whole VM run.
        case $rt in
        sdrun) timeout -k 5 300 "$SDRUN" --root "$SDRUN_ROOT" "$@" ;;
        runc) timeout -k 5 300 runc --root "$RUNC_ROOT" --systemd-cgroup "$@" ;;
        esac
}
# criu_log_tail DIR: the last errors of CRIU's logs in DIR, as diagnostics.
criu_log_tail() { grep -h 'Error' "$1"/*.log 2>/dev/null | tail -5 | while read -r l; do diag "criu: $l"; done; }
rt_status() { R "$1" state "$2" 2>/dev/null | jq -r .status 2>/dev/null || echo gone; }
rt_pid() { R "$1" state "$2" 2>/dev/null | jq -r .pid; }
# scope_of_pid PID: the .scope unit whose cgroup holds PID.
scope_of_pid() { grep -o '[^/]*\.scope' "/proc/$1/cgroup" | tail -1; }
scope_gone() { [ -z "$(systemctl list-units --all --plain --no-legend --no-pager -- "$1" 2>/dev/null)" ]; }
scope_active() { [ "$(systemctl show -p ActiveState --value -- "$1" 2>/dev/null)" = active ]; }
count_of() { local c; c=$(cat "$1" 2>/dev/null); echo "${c:-0}"; }
count_above() { [ "$(count_of "$1")" -gt "$2" ]; }

for rt in sdrun runc; do
        D=$TEST_TMPDIR/$rt
        mkdir -p "$D/data"
        B=$D/bundle
        make_bundle "$B"
        # A host directory bound on /data: the counter's file is readable from the host.
        bundle_set "$B" '.process.args=["sh","-c","i=0; while true; do i=$((i+1)); echo $i >/data/.count; mv /data/.count /data/count; sleep 0.2; done"]
                | .mounts += [{"destination":"/data","type":"bind","source":$d,"options":["rbind","rw"]}]
                | .hooks = {"prestart":[{"path":"/bin/sh","args":["sh","-c",("cat >>" + $h + "/prestart; echo >>" + $h + "/prestart")]}],
                            "poststop":[{"path":"/bin/sh","args":["sh","-c",("cat >>" + $h + "/poststop; echo >>" + $h + "/poststop")]}]}' \
                --arg d "$D/data" --arg h "$D" || bail "bundle_set failed"
        C=$D/data/count
        id=$(new_id "cr$rt")
        cleanup_add R "$rt" delete -f "$id"

        # 1. checkpoint and restore under the same id, into a new scope.
        R "$rt" run -d --bundle "$B" "$id" </dev/null >/dev/null 2>&1
        WAIT_FOR_TIMEOUT=60 wait_for count_above "$C" 3
        pid0=$(rt_pid "$rt" "$id")
        scope0=$(scope_of_pid "$pid0")
        inv0=$(systemctl show -p InvocationID --value -- "$scope0")
        ok_desc "$rt: the counting container runs in $scope0 (count $(count_of "$C"))" test -n "$scope0"
        out=$(R "$rt" checkpoint --image-path "$D/img1" "$id" 2>&1) && rc=0 || rc=$?
        is "$rc" 0 "$rt: checkpoint succeeds${out:+ ($out)}" || criu_log_tail "$D/img1"
        c1=$(count_of "$C")
        [ "$rt" = sdrun ] && is "$(rt_status "$rt" "$id")" stopped "$rt: the container is stopped after the checkpoint"
        ok_desc "$rt: its scope is gone" wait_for scope_gone "$scope0"
        ok_desc "$rt: its poststop hook ran" test -s "$D/poststop"
        sleep 1
        is "$(count_of "$C")" "$c1" "$rt: the count stands still at $c1 while checkpointed"
        out=$(R "$rt" restore -d --image-path "$D/img1" --bundle "$B" "$id" 2>&1 </dev/null) && rc=0 || rc=$?
        is "$rc" 0 "$rt: restore succeeds${out:+ ($out)}" || criu_log_tail "$D/img1"
        is "$(rt_status "$rt" "$id")" running "$rt: the restored container is running"
        pid1=$(rt_pid "$rt" "$id")
        scope1=$(scope_of_pid "$pid1" 2>/dev/null)
        is "$scope1" "$scope0" "$rt: the restored init ($pid1) is in the container's scope"
        ok_desc "$rt: a new scope (a new invocation of $scope1)" \
                test -n "$scope1" -a "$(systemctl show -p InvocationID --value -- "$scope1")" != "$inv0"
        ok_desc "$rt: the scope is active" scope_active "$scope1"
        c2=$(count_of "$C")
        ok_desc "$rt: the count goes on from where it was ($c1 -> $c2 -> ...)" \
                eval "[ $c2 -ge $c1 ] && WAIT_FOR_TIMEOUT=30 wait_for count_above '$C' $c2"
        ok_desc "$rt: the restored container has its own network namespace" \
                test "$(readlink "/proc/$pid1/ns/net")" != "$(readlink /proc/self/ns/net)"
        is "$(grep -c '"pid"' "$D/prestart")" 2 "$rt: the prestart hook ran at create and at restore"
        if [ "$rt" = sdrun ]; then
                is "$(jq -rs '.[1].pid' "$D/prestart" 2>/dev/null)" "$pid1" "$rt: the restore's prestart hook got the restored init's pid"
                is "$(jq -r .systemdUnit <<<"$(R "$rt" state "$id")")" "$scope1" "$rt: state names the scope"
                ok_desc "$rt: registered with machined" eval "machinectl show '$id' 2>/dev/null | grep -q '^Unit=$scope1'"
        fi

        # 2. --leave-running, then those images restored under a new id.
        out=$(R "$rt" checkpoint --leave-running --image-path "$D/img2" "$id" 2>&1) && rc=0 || rc=$?
        is "$rc" 0 "$rt: checkpoint --leave-running succeeds${out:+ ($out)}" || criu_log_tail "$D/img2"
        is "$(rt_status "$rt" "$id")" running "$rt: the container still runs"
        c3=$(count_of "$C")
        ok_desc "$rt: and still counts" eval "WAIT_FOR_TIMEOUT=30 wait_for count_above '$C' $c3"
        id2=$(new_id "cr${rt}new")
        cleanup_add R "$rt" delete -f "$id2"
        R "$rt" delete -f "$id" >/dev/null 2>&1
        out=$(R "$rt" restore -d --image-path "$D/img2" --bundle "$B" "$id2" 2>&1 </dev/null) && rc=0 || rc=$?
        is "$rc" 0 "$rt: restore under a new id succeeds${out:+ ($out)}"
        pid2=$(rt_pid "$rt" "$id2")
        if [ "$rt" = sdrun ]; then
                ok_desc "$rt: in its own scope ($(scope_of_pid "$pid2" 2>/dev/null))" eval "scope_of_pid $pid2 | grep -q -- '$id2'"
        else
                # runc 1.1 restores into the cgroup recorded in the images: the old id's scope.
                diag "$rt (control): restored under $id2 into $(scope_of_pid "$pid2" 2>/dev/null)"
        fi
        c4=$(count_of "$C")
        ok_desc "$rt: it counts on" eval "WAIT_FOR_TIMEOUT=30 wait_for count_above '$C' $c4"

        # 3. pre-dump, then a dump on top of it, then restore (sdrun only: runc 1.1.5's pre-dump fails in
        #    this VM, "criu failed: type PRE_DUMP", and the VM's time is short).
        if [ "$rt" = sdrun ]; then
                out=$(R "$rt" checkpoint --pre-dump --image-path "$D/pre" "$id2" 2>&1) && rc=0 || rc=$?
                is "$rc" 0 "$rt: checkpoint --pre-dump succeeds${out:+ ($out)}" || criu_log_tail "$D/pre"
                is "$(rt_status "$rt" "$id2")" running "$rt: the container runs on after the pre-dump"
                out=$(R "$rt" checkpoint --parent-path ../pre --image-path "$D/full" "$id2" 2>&1) && rc=0 || rc=$?
                is "$rc" 0 "$rt: checkpoint --parent-path ../pre succeeds${out:+ ($out)}" || criu_log_tail "$D/full"
                c5=$(count_of "$C")
                out=$(R "$rt" restore -d --image-path "$D/full" --bundle "$B" "$id2" 2>&1 </dev/null) && rc=0 || rc=$?
                is "$rc" 0 "$rt: restore of the pre-dumped checkpoint succeeds${out:+ ($out)}"
                ok_desc "$rt: the count goes on ($c5 -> ...)" eval "WAIT_FOR_TIMEOUT=30 wait_for count_above '$C' $c5"
        fi

        # 4. failures.
        pid3=$(rt_pid "$rt" "$id2")
        out=$(R "$rt" restore -d --image-path "$D/full" --bundle "$B" "$id2" 2>&1 </dev/null) && rc=0 || rc=$?
        ok_desc "$rt: restore onto the id of a running container fails (exit $rc: $out)" test "$rc" != 0
        is "$(rt_pid "$rt" "$id2")" "$pid3" "$rt: the running container is untouched"
        # (A missing image directory is refused before CRIU runs: test-criu-args.sh.) CRIU failing half-way
        # through a restore: nothing is left behind.
        if [ "$rt" = sdrun ]; then
                id3=$(new_id "cr${rt}bad")
                cleanup_add R "$rt" delete -f "$id3"
                cp -a "$D/img1" "$D/broken"
                rm -f "$D"/broken/pages-*.img
                out=$(R "$rt" restore -d --image-path "$D/broken" --bundle "$B" "$id3" 2>&1 </dev/null) && rc=0 || rc=$?
                ok_desc "$rt: restore from broken images fails (exit $rc: $(tail -c 200 <<<"$out"))" test "$rc" != 0
                like "$out" 'criu failed: .*restore.log' "$rt: the message quotes CRIU's errors and names its log"
                no_leftovers "$id3"
        fi
        R "$rt" delete -f "$id2" >/dev/null 2>&1
        [ "$rt" = sdrun ] && no_leftovers "$id2"
done

# 5. A container with a terminal (process.terminal, its master sent to --console-socket): checkpointed, and
#    restored with a new terminal whose master goes to restore's --console-socket, where the shell that was
#    reading its terminal answers.
HELPERS=$SDRUN_SRCDIR/tests/integration/helpers
for rt in sdrun runc; do
        D=$TEST_TMPDIR/tty$rt
        B=$D/bundle
        mkdir -p "$D"
        make_bundle "$B"
        bundle_set "$B" '.process.terminal=true | .process.args=["sh","-c","while read -r l; do echo \"ECHO:$l\"; done"]' ||
                bail "bundle_set failed"
        id=$(new_id "crtty$rt")
        cleanup_add R "$rt" delete -f "$id"
        CONSOLE_RECV_SECONDS=600 python3 "$HELPERS/console-recv.py" "$D/c1.sock" one >"$D/c1.out" 2>&1 &
        recv=$!
        wait_for test -e "$D/c1.sock.ready"
        R "$rt" run -d --console-socket "$D/c1.sock" --bundle "$B" "$id" </dev/null >/dev/null 2>&1
        ok_desc "$rt: the shell answers on its terminal" eval "WAIT_FOR_TIMEOUT=30 wait_for grep -q ECHO:one '$D/c1.out'"
        out=$(R "$rt" checkpoint --image-path "$D/img" "$id" 2>&1) && rc=0 || rc=$?
        is "$rc" 0 "$rt: checkpoint of a container with a terminal succeeds${out:+ ($out)}" || criu_log_tail "$D/img"
        # The receiver ends when the last slave of its pty is closed: the checkpointed shell's.
        timeout 30 tail --pid="$recv" -f /dev/null
        kill "$recv" 2>/dev/null
        CONSOLE_RECV_SECONDS=120 python3 "$HELPERS/console-recv.py" "$D/c2.sock" two >"$D/c2.out" 2>&1 &
        recv=$!
        wait_for test -e "$D/c2.sock.ready"
        out=$(R "$rt" restore -d --console-socket "$D/c2.sock" --image-path "$D/img" --bundle "$B" "$id" 2>&1 </dev/null) && rc=0 || rc=$?
        is "$rc" 0 "$rt: restore with --console-socket succeeds${out:+ ($out)}" || criu_log_tail "$D/img"
        ok_desc "$rt: the restored shell answers on the new terminal ($(tr -d '\r' <"$D/c2.out" | tr '\n' ' '))" \
                eval "WAIT_FOR_TIMEOUT=30 wait_for grep -q ECHO:two '$D/c2.out'"
        if [ "$rt" = sdrun ]; then
                pid=$(rt_pid "$rt" "$id")
                ok_desc "$rt: the restored shell's stdin is a pty" eval "[ \$(stat -L -c %t /proc/$pid/fd/0) = 88 ]"
                ptydev=$(stat -L -c %Hd:%Ld "/proc/$pid/fd/0")
                ok_desc "$rt: that pty ($ptydev) is on no mount of the host" eval "[ -n '$ptydev' ] && ! grep -q ' $ptydev ' /proc/self/mountinfo"
                is "$(stat -c %t:%T "/proc/$pid/root/dev/console" 2>&1)" "$(stat -L -c %t:%T "/proc/$pid/fd/0" 2>&1)" \
                        "$rt: the container's /dev/console is that pty"
                out=$(R "$rt" restore -d --image-path "$D/img" --bundle "$B" "${id}x" 2>&1 </dev/null) && rc=0 || rc=$?
                like "$out" 'process.terminal is true: --console-socket is required' "$rt: restore of a terminal without --console-socket is refused (exit $rc)"
        fi
        R "$rt" delete -f "$id" >/dev/null 2>&1
        timeout 30 tail --pid="$recv" -f /dev/null
        kill "$recv" 2>/dev/null
done


# 6. Without a cgroup namespace (the config `sdrun spec` writes on a hybrid host): sdrun binds the container's
#    own cgroup directory on /sys/fs/cgroup, a mount CRIU cannot dump by itself; it is an external mount, bound
#    to the new scope's directory on restore. runc (which mounts the whole cgroup2 hierarchy there) as control.
for rt in sdrun runc; do
        D=$TEST_TMPDIR/nocgns$rt
        B=$D/bundle
        mkdir -p "$D/data"
        make_bundle "$B"
        bundle_set "$B" '.process.args=["sh","-c","i=0; while true; do i=$((i+1)); echo $i >/data/.count; mv /data/.count /data/count; sleep 0.2; done"]
                | .mounts += [{"destination":"/data","type":"bind","source":$d,"options":["rbind","rw"]}]
                | .linux.namespaces |= map(select(.type != "cgroup"))' --arg d "$D/data" || bail "bundle_set failed"
        C=$D/data/count
        id=$(new_id "crcg$rt")
        cleanup_add R "$rt" delete -f "$id"
        R "$rt" run -d --bundle "$B" "$id" </dev/null >/dev/null 2>&1
        WAIT_FOR_TIMEOUT=60 wait_for count_above "$C" 3
        out=$(R "$rt" checkpoint --image-path "$D/img" "$id" 2>&1) && rc=0 || rc=$?
        is "$rc" 0 "$rt: checkpoint without a cgroup namespace succeeds${out:+ ($out)}" || criu_log_tail "$D/img"
        c1=$(count_of "$C")
        out=$(R "$rt" restore -d --image-path "$D/img" --bundle "$B" "$id" 2>&1 </dev/null) && rc=0 || rc=$?
        is "$rc" 0 "$rt: its restore succeeds${out:+ ($out)}" || criu_log_tail "$D/img"
        ok_desc "$rt: the count goes on ($c1 -> ...)" eval "WAIT_FOR_TIMEOUT=30 wait_for count_above '$C' $c1"
        if [ "$rt" = sdrun ]; then
                pid=$(rt_pid "$rt" "$id")
                cg=$(sed -n 's/^0:://p' "/proc/$pid/cgroup")
                is "$(awk '$5 == "/sys/fs/cgroup" {print $4}' "/proc/$pid/mountinfo")" "$cg" \
                        "$rt: the restored container's /sys/fs/cgroup is its new scope's cgroup ($cg)"
                like "$(awk '$5 == "/sys/fs/cgroup" {print $6}' "/proc/$pid/mountinfo")" '^ro,' "$rt: read-only, as before"
        fi
        R "$rt" delete -f "$id" >/dev/null 2>&1
        [ "$rt" = sdrun ] && no_leftovers "$id"
done

done_testing
