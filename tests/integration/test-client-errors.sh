#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Exit statuses and error texts that clients parse (issue 12), with runc 1.1 as the control in the same
# test: every case runs under runc and under sdrun and both must exit with the same status and say the
# same key phrase. The phrases are what containerd's runc shim and Podman match on: "container not
# running" (kill of an exited process: "already finished"), "does not exist" (no such container), and
# runc's start/exec/pause wording that clients show to users. `kill --all` of a stopped container exits 0
# (containerd's shim runs it after every exit and retries with backoff on failure), and delete of a
# created container needs no --force (the shim deletes a task that never started that way).
. "$(dirname "$0")/lib.sh"

require_root
require_systemd
RUNC=$(command -v runc) || bail "runc is not installed (Debian package runc): it is the control here"

B=$TEST_TMPDIR/b
make_bundle "$B" || bail "make_bundle failed"
bundle_set "$B" '.process.args=["sleep","1000"]' || bail "bundle_set failed"
status_of() { "$SDRUN" --root "$SDRUN_ROOT" state "$1" 2>/dev/null | jq -r .status; }
pid_of() { "$SDRUN" --root "$SDRUN_ROOT" state "$1" 2>/dev/null | jq -r '.pid // empty'; }
is_status() { [ "$(status_of "$1")" = "$2" ]; }

# rt RUNTIME ARGS...: run a verb under runc or sdrun; sets RC and ERR (stdout and stderr, one line).
rt() {
        local which=$1 out=$TEST_TMPDIR/.rt-out
        shift
        RC=0
        if [ "$which" = runc ]; then
                "$RUNC" --root "$TEST_TMPDIR/runc" "$@" </dev/null >"$out" 2>&1 || RC=$?
        else
                "$SDRUN" --root "$SDRUN_ROOT" "$@" </dev/null >"$out" 2>&1 || RC=$?
        fi
        ERR=$(tr '\n' ' ' <"$out")
}

# check DESC RC PHRASE VERB ARGS... (ARGS may use @ID@ for the runtime's container id): both runtimes exit
# with RC and, if PHRASE is not empty, both say PHRASE.
check() {
        local desc=$1 want=$2 phrase=$3 r_rc r_err s_rc s_err
        shift 3
        rt runc "${@//@ID@/$rid}"
        r_rc=$RC r_err=$ERR
        rt sdrun "${@//@ID@/$sid}"
        s_rc=$RC s_err=$ERR
        if [ "$r_rc" = "$want" ] && [ "$s_rc" = "$want" ] &&
                { [ -z "$phrase" ] || { [[ "$r_err" == *"$phrase"* ]] && [[ "$s_err" == *"$phrase"* ]]; }; }; then
                _tap_result 0 "$desc: runc and sdrun exit $want${phrase:+ and say \"$phrase\"}"
        else
                _tap_result 1 "$desc: runc and sdrun exit $want${phrase:+ and say \"$phrase\"}"
                printf '%s\n' "runc:  exit $r_rc: $r_err" "sdrun: exit $s_rc: $s_err" | _tap_diag_stream
        fi
}

rid=$(new_id runc) sid=$(new_id err)
track_container "$sid"
cleanup_add "$RUNC" --root "$TEST_TMPDIR/runc" delete --force "$rid"

# A container that does not exist.
rid=missing-$rid sid=missing-$sid
check "state of a missing container" 1 "does not exist" state @ID@
check "delete of a missing container" 1 "does not exist" delete @ID@
check "delete --force of a missing container" 0 "" delete --force @ID@
check "kill of a missing container" 1 "does not exist" kill @ID@ KILL
check "kill --all of a missing container" 1 "does not exist" kill --all @ID@ KILL
check "start of a missing container" 1 "does not exist" start @ID@
check "pause of a missing container" 1 "does not exist" pause @ID@
check "resume of a missing container" 1 "does not exist" resume @ID@
check "exec in a missing container" 255 "does not exist" exec @ID@ true
check "update of a missing container" 1 "does not exist" update --pids-limit 100 @ID@
rid=${rid#missing-} sid=${sid#missing-}

# Created, then running.
check "create" 0 "" create --bundle "$B" @ID@
check "start of a created container" 0 "" start @ID@
check "start of a running container" 1 "cannot start an already running container" start @ID@
check "delete of a running container without --force" 1 "that is not stopped: running" delete @ID@
check "resume of a running container" 1 "container not paused" resume @ID@
check "pause of a running container" 0 "" pause @ID@
check "pause of a paused container" 1 "container not running" pause @ID@
check "exec in a paused container" 255 "cannot exec in a paused container" exec @ID@ true
check "start of a paused container" 1 "cannot start a container in the paused state" start @ID@
check "resume of a paused container" 0 "" resume @ID@
check "kill KILL of a running container" 0 "" kill @ID@ KILL
ok_desc "sdrun: the container stopped" wait_for is_status "$sid" stopped
ok_desc "runc: the container stopped" wait_for sh -c "'$RUNC' --root '$TEST_TMPDIR/runc' state '$rid' | jq -e '.status == \"stopped\"'"

# Stopped.
check "kill of a stopped container" 1 "container not running" kill @ID@ KILL
check "kill --all of a stopped container" 0 "" kill --all @ID@ KILL
check "start of a stopped container" 1 "cannot start a container that has stopped" start @ID@
check "pause of a stopped container" 1 "container not running" pause @ID@
check "resume of a stopped container" 1 "container not paused" resume @ID@
check "exec in a stopped container" 255 "cannot exec in a stopped container" exec @ID@ true
check "ps of a stopped container" 0 "PID" ps @ID@
check "update of a stopped container" 1 "container not running" update --pids-limit 100 @ID@
check "delete of a stopped container" 0 "" delete @ID@
check "delete of a deleted container" 1 "does not exist" delete @ID@
no_leftovers "$sid"

# Created, deleted without --force: the init is killed and nothing is left.
rid=$rid-c sid=$sid-c
track_container "$sid"
cleanup_add "$RUNC" --root "$TEST_TMPDIR/runc" delete --force "$rid"
check "create (second container)" 0 "" create --bundle "$B" @ID@
pid=$(pid_of "$sid")
check "delete of a created container without --force" 0 "" delete @ID@
ok_desc "sdrun: the created container's init is gone" wait_for sh -c "[ ! -e /proc/$pid ] || grep -q '^State:.*Z' /proc/$pid/status"
check "state after that delete" 1 "does not exist" state @ID@
no_leftovers "$sid"

done_testing
