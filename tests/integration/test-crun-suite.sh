#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# crun's own test suite (tests/test_*.py of Debian's crun source package, fetched by scripts/test into
# $SDRUN_BUILDDIR/crun-suite) against sdrun, through its OCI_RUNTIME switch: another project's tests of what an
# OCI runtime does (capabilities, cwd, delete, detach, devices, exec, hooks, hostname, limits, mounts, paths,
# pid, pid file, preserved fds, resources, rlimits, start, tty, uid/gid, update). Each of its tests is one
# test here. The few that check what is crun's own (its state file, a behaviour where runc differs and sdrun
# follows runc) are listed below with the reason, and count as skipped when they fail.
. "$(dirname "$0")/lib.sh"

require_root
require_systemd

SUITE=$SDRUN_BUILDDIR/crun-suite
if [ ! -x "$SUITE/tests/init" ]; then
        skip "crun's test suite is not in $SUITE (scripts/test fetches it: fetch_crun_suite in scripts/lib/common.sh)"
        done_testing
fi
command -v python3 >/dev/null || bail "python3 is needed"

# FILE:TEST -> why sdrun differs on purpose
declare -A known=(
        [test_start.py:start]="it reads crun's own state file (ROOT/ID/status, external_descriptors), not the OCI state"
        [test_start.py:listen_pid_env]="LISTEN_FDS without LISTEN_PID: crun passes the fds; sdrun, as runc and sd_listen_fds(3), only when LISTEN_PID names the runtime"
        [test_exec.py:exec_add_no_new_privileges]="crun's exec starts from noNewPrivileges false; sdrun, as runc, from config.json's process (true in this config)"
        [test_devices.py:owner-device]="in a user namespace sdrun binds a device from the host, which has no 1:5 at /dev/foo; a node made inside could never be opened (the container's /dev is mounted in its user namespace: nodev)"
)
# Failures that come from the machine, not from sdrun: FILE:TEST (or FILE) -> why, when that is so here.
declare -A environment=(
        [test_exec.py:exec_write_pid_file]="the test wants a pid of at least five digits; in a freshly booted box pids are smaller"
)
if [ "$(stat -fc %T /sys/fs/cgroup)" = cgroup2fs ] && [ -z "$(cat /sys/fs/cgroup/cgroup.controllers 2>/dev/null)" ]; then
        for f in test_resources.py test_limits.py; do
                environment[$f]="this cgroup v2 hierarchy offers no controller (the host holds them all in v1 hierarchies), so the cgroup files these tests read cannot exist; the VM tier checks enforcement"
        done
fi
# Files not run at all: FILE -> why
declare -A not_run=(
        [test_seccomp.py]="listenerPath without an SCMP_ACT_NOTIFY rule: crun makes a listener anyway; sdrun, as the runtime-spec says, sends the state only when SCMP_ACT_NOTIFY is used, and the test then waits in accept() with no timeout"
)

W=$TEST_TMPDIR/crun
mkdir -p "$W"
cp -a "$SUITE/tests" "$W/"
diag "crun test suite $(cat "$SUITE/.version" 2>/dev/null) against $SDRUN"
for path in "$W"/tests/test_*.py; do
        file=$(basename "$path")
        if [ -n "${not_run[$file]:-}" ]; then
                skip "crun $file: not run: ${not_run[$file]}"
                continue
        fi
        rc=0
        before=$(systemctl list-units --plain --no-legend --type=scope --state=active,failed,activating,deactivating -- 'sdrun-test-tmp*' | awk '{print $1}' | sort)
        # (PATH as a login shell has it: its hook tests compare a hook's inherited PATH with that one)
        (cd "$W" && env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin OCI_RUNTIME="$SDRUN" \
                timeout -k 5 300 python3 "tests/$file") >"$TEST_TMPDIR/out" 2>"$TEST_TMPDIR/err" || rc=$?
        after=$(systemctl list-units --plain --no-legend --type=scope --state=active,failed,activating,deactivating -- 'sdrun-test-tmp*' | awk '{print $1}' | sort)
        [ "$before" = "$after" ] || diag "crun $file: scopes after it: $(comm -13 <(echo "$before") <(echo "$after") | paste -sd' ')"
        if [ $rc = 124 ] || [ $rc = 137 ]; then
                fail "crun $file: finished within 300 s"
                diag "$(tail -20 "$TEST_TMPDIR/err")"
                continue
        fi
        ran=0
        if grep -qx '1\.\.0' "$TEST_TMPDIR/out"; then
                skip "crun $file: it has no test that runs here (1..0)"
                continue
        fi
        while IFS= read -r line; do
                case $line in
                "ok "*" #SKIP"*) name=${line#ok * - }; skip "crun $file: ${name% #SKIP*} (skipped by crun's test)"; ran=1 ;;
                "ok "*) name=${line#ok * - }; pass "crun $file: $name"; ran=1 ;;
                "not ok "*)
                        name=${line#not ok * - }; ran=1
                        if [ -n "${known[$file:$name]:-}" ]; then
                                skip "crun $file: $name: differs on purpose: ${known[$file:$name]}"
                        elif [ -n "${environment[$file:$name]:-${environment[$file]:-}}" ]; then
                                skip "crun $file: $name: not on this machine: ${environment[$file:$name]:-${environment[$file]}}"
                        else
                                fail "crun $file: $name"
                                diag "$(tail -20 "$TEST_TMPDIR/err")"
                        fi ;;
                esac
        done <"$TEST_TMPDIR/out"
        if [ $ran = 0 ]; then
                fail "crun $file: ran (exit $rc, no result line)"
                diag "$(tail -20 "$TEST_TMPDIR/err")"
        fi
done
# Nothing of the suite's containers is left: its own teardown deletes them; a leftover scope would be ours.
is "$(systemctl list-units --plain --no-legend --type=scope --state=active,failed,activating,deactivating -- 'sdrun-test-tmp*' | wc -l)" 0 \
        "no scope of the suite's containers is left"

done_testing
