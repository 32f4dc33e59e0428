#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# A container that shares a pid namespace with another container's init (a pod sharing its pid namespace,
# --pid=host) must not reach the host's runtime binary through that init (issue 31, item 2): between create
# and start the init is still the runtime's code. runc's init runs from a sealed memfd copy; sdrun's init
# runs from a sealed memfd copy of the runtime (the runtime re-executes itself from one) and is non-dumpable
# until its last exec, so a container process of the same uid without CAP_SYS_PTRACE cannot open its
# /proc/PID/exe (nor fds, environ, mem). runc is the control in the same test; test-exe-reach.sh has the
# attacks with CAP_SYS_PTRACE, which overrides non-dumpable.
. "$(dirname "$0")/lib.sh"

require_root
require_systemd
RUNC=$(command -v runc) || bail "runc is not installed (Debian package runc): it is the control here"

sd() { "$SDRUN" --root "$SDRUN_ROOT" "$@"; }
rc_() { "$RUNC" --root "$TEST_TMPDIR/runc" "$@"; }

# B: the victim, created (its init waits for start); A: the attacker, without a pid namespace of its own
# (it sees B's init), uid 0, default capabilities (no CAP_SYS_PTRACE).
B=$TEST_TMPDIR/b
make_bundle "$B" || bail "make_bundle failed"
bundle_set "$B" '.process.args=["sleep","1000"]'
A=$TEST_TMPDIR/a
make_bundle "$A" || bail "make_bundle failed"
bundle_set "$A" '.linux.namespaces |= map(select(.type != "pid"))
        | .process.args=["sh","-c","p=$PID; readlink /proc/$p/exe >/dev/null 2>&1 && echo exe-link-readable || echo exe-link-denied; if cat /proc/$p/exe >/tmp/copy 2>/dev/null; then if cmp -s /tmp/copy /proc/self/exe; then echo same; fi; echo exe-open; else echo exe-denied; fi; readlink /proc/$p/fd/0 >/dev/null 2>&1 && echo fds-readable || echo fds-denied; cat /proc/$p/environ >/dev/null 2>&1 && echo environ-readable || echo environ-denied"]
        | .root.readonly=false'

# attack PID: what A can do to PID; it prints the link target too when readable
attack() {
        local id out
        id=$(new_id pidnsa); track_container "$id"
        bundle_set "$A" '.process.env += ["PID=" + $p]' --arg p "$1"
        out=$(sd run --bundle "$A" "$id" 2>&1 </dev/null)
        bundle_set "$A" '.process.env |= map(select(startswith("PID=") | not))'
        echo "$out"
}

# runc (control): its init is a memfd copy, not the host's runc
rid=$(new_id pidnsr)
rc_ create --bundle "$B" "$rid" >/dev/null 2>&1 </dev/null
rpid=$(rc_ state "$rid" | jq -r .pid)
link=$(readlink "/proc/$rpid/exe")
unlike "$link" "^$(readlink -f "$RUNC")" "runc: its created init's /proc/PID/exe is not the host's runc ($link)"
rc_ delete --force "$rid" >/dev/null 2>&1

# The window: B's startContainer hook runs last before the exec, with the container's capabilities already
# in force (runc's order), so B's init is then the host's sdrun with no more capabilities than A.
bundle_set "$B" '.hooks.startContainer=[{path: "/bin/sleep", args: ["sleep", "4"]}]'
id=$(new_id pidnsb); track_container "$id"
ok_desc "create B" sd create --bundle "$B" "$id"
pid=$(sd state "$id" | jq -r .pid)
like "$(readlink "/proc/$pid/exe")" '^/memfd:sdrun' "B's created init runs from a sealed memfd copy, not the host's sdrun binary"
sd start "$id" >"$TEST_TMPDIR/start.out" 2>&1 &
starter=$!
hook_runs() { pgrep -P "$pid" -x sleep >/dev/null; }
ok_desc "B's startContainer hook runs (B's init has dropped its capabilities, not yet exec'd)" wait_for hook_runs
is "$(grep -E '^CapPrm' "/proc/$pid/status" | awk '{print $2}')" 0000000020000420 "... B's init now has A's capabilities (AUDIT_WRITE, KILL, NET_BIND_SERVICE)"
out=$(attack "$pid")
like "$out" 'exe-denied' "A (same uid, same capabilities, no CAP_SYS_PTRACE) cannot open /proc/PID/exe of B's init"
like "$out" 'fds-denied' "... nor read where its fds lead"
like "$out" 'environ-denied' "... nor read its environ"
wait "$starter"
is "$?" 0 "start B"
# once B runs its own program, it is an ordinary (dumpable) process again
like "$(attack "$pid")" 'exe-open' "after start, B's process is its own program, dumpable again"
sd delete --force "$id" >/dev/null 2>&1
no_leftovers "$id"

done_testing
