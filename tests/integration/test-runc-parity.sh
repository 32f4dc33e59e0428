#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# What runc does, sdrun does (issue 32): behaviours runc's users rely on, each run on the same bundle with
# runc 1.1 as the control in the same test.
#  - a read-only /dev: what goes below it is mounted first, /dev is made read-only afterwards;
#  - a terminal for a process that is not root belongs to that user, in run and in exec;
#  - startContainer hooks run under the container's seccomp filter, as its user.
. "$(dirname "$0")/lib.sh"

require_root
require_systemd
RUNC=$(command -v runc) || bail "runc is not installed (Debian package runc): it is the control here"
HELPERS=$SDRUN_SRCDIR/tests/integration/helpers

sd() { "$SDRUN" --root "$SDRUN_ROOT" "$@"; }
rc_() { "$RUNC" --root "$TEST_TMPDIR/runc" "$@"; }

B=$TEST_TMPDIR/b
make_bundle "$B" || bail "make_bundle failed"
cp "$B/config.json" "$TEST_TMPDIR/config.orig"
reset_bundle() { cp "$TEST_TMPDIR/config.orig" "$B/config.json"; }

# run_rt RUNTIME: run the bundle in the foreground; prints "rc=N" then the output (stdin /dev/null)
run_rt() {
        local id out rc=0
        id=$(new_id par)
        if [ "$1" = runc ]; then
                out=$(rc_ run --bundle "$B" "$id" 2>&1 </dev/null) || rc=$?
                rc_ delete --force "$id" >/dev/null 2>&1
        else
                track_container "$id"
                out=$(sd run --bundle "$B" "$id" 2>&1 </dev/null) || rc=$?
                echo "$id" >"$TEST_TMPDIR/last-id"
        fi
        printf 'rc=%s\n%s\n' "$rc" "$out"
}

# ---------------------------------------------------------------------------------------------------------
# 1. A read-only /dev (runc's issue 3248): devpts, shm, mqueue and the device nodes go below it first.
reset_bundle
bundle_set "$B" '(.mounts[] | select(.destination == "/dev") | .options) += ["ro"]
        | .process.args=["sh","-c","grep -E \" /dev(/pts|/shm|/mqueue)? \" /proc/self/mountinfo | awk \"{print \\$5, \\$6}\" | sed \"s/,.*//\"; ls /dev/pts/ptmx /dev/null /dev/shm >/dev/null && echo below-ok; touch /dev/x 2>/dev/null && echo dev-writable; echo x >/dev/null && echo null-ok; echo y >/dev/shm/y && echo shm-ok"]'
a=$(run_rt runc)
b=$(run_rt sdrun)
like "$a" $'^rc=0\n/dev ro\n/dev/pts rw\n/dev/shm rw\n/dev/mqueue rw\nbelow-ok\nnull-ok\nshm-ok$' "read-only /dev: runc mounts what goes below it, then makes it read-only"
is "$b" "$a" "read-only /dev: runc and sdrun agree"
no_leftovers "$(cat "$TEST_TMPDIR/last-id")"

done_testing
