#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# NOTIFY_SOCKET through the container (issue 15, item 1), with runc as the control in the same test: the
# container gets /run/notify/notify.sock and NOTIFY_SOCKET, `start` waits for its READY=1 and forwards it with
# MAINPID=; a Type=notify service wrapping `run` becomes active only then; abstract sockets; a container that
# dies or never says READY ends the wait with an error; without NOTIFY_SOCKET nothing is added; a flood of
# messages costs systemd's PID 1 next to nothing (issue 31, item 8).
. "$(dirname "$0")/lib.sh"

require_root
require_systemd
ci_lane unified
RUNC=$(command -v runc) || bail "runc is not installed (Debian package runc): it is the control here"
[ -n "${SD_NOTIFY:-}" ] && [ -x "$SD_NOTIFY" ] || bail "SD_NOTIFY (the sd-notify helper) is not set or not executable"
command -v python3 >/dev/null || bail "python3 is not installed"
LISTEN=$SDRUN_SRCDIR/tests/integration/helpers/notify-listen.py
RUNC_ROOT=$TEST_TMPDIR/runc

B=$TEST_TMPDIR/b
make_bundle "$B" || bail "make_bundle failed"
cp "$SD_NOTIFY" "$B/rootfs/bin/sd-notify" || bail "copy of sd-notify into the rootfs failed"

# rt RUNTIME ARGS...: runc or sdrun with its state root
rt() {
        local r=$1
        shift
        if [ "$r" = runc ]; then
                "$RUNC" --root "$RUNC_ROOT" "$@"
        else
                "$SDRUN" --root "$SDRUN_ROOT" "$@"
        fi
}

runc_cleanup() {
        "$RUNC" --root "$RUNC_ROOT" delete --force "$1" >/dev/null 2>&1 || true
}

track() {
        if [ "$1" = runc ]; then cleanup_add runc_cleanup "$2"; else track_container "$2"; fi
}

# listen ADDR OUT: a notify listener in the background (killed on exit)
listen() {
        rm -f "$2" "$2.ready"
        python3 "$LISTEN" "$1" "$2" &
        local pid=$!
        cleanup_add kill "$pid"
        WAIT_FOR_TIMEOUT=10 wait_for test -e "$2.ready" || bail "notify listener on $1 did not start"
        case "$1" in /*) cleanup_add rm -f "$1" ;; esac
}

args() {
        bundle_set "$B" '.process.args=["sh","-c",$s] | del(.annotations)' --arg s "$1" || bail "bundle_set failed"
}

# --- create + start: start waits for READY=1 and forwards it with MAINPID= of the init --------------------
args 'sleep 1; sd-notify READY=1 "STATUS=up and running"; exec sleep 1000'
for R in runc sdrun; do
        id=$(new_id ntf)
        track "$R" "$id"
        L=$TEST_TMPDIR/notify-$R.sock
        listen "$L" "$TEST_TMPDIR/msgs-$R"
        NOTIFY_SOCKET=$L rt "$R" create --bundle "$B" "$id" >"$TEST_TMPDIR/out" 2>&1 || diag "$(cat "$TEST_TMPDIR/out")"
        t0=$(date +%s%N)
        NOTIFY_SOCKET=$L rt "$R" start "$id" >"$TEST_TMPDIR/out" 2>&1
        rc=$?
        t1=$(date +%s%N)
        is "$rc" 0 "$R: start with NOTIFY_SOCKET succeeds"
        [ "$rc" = 0 ] || diag "$(cat "$TEST_TMPDIR/out")"
        ok_desc "$R: start returned only after the container's READY=1 ($(( (t1 - t0) / 1000000 )) ms)" \
                test $(( (t1 - t0) / 1000000 )) -ge 900
        pid=$(rt "$R" state "$id" | jq -r .pid)
        WAIT_FOR_TIMEOUT=5 wait_for grep -q READY=1 "$TEST_TMPDIR/msgs-$R"
        like "$(cat "$TEST_TMPDIR/msgs-$R" 2>/dev/null)" "READY=1.*MAINPID=$pid" \
                "$R: the caller's socket got READY=1 with MAINPID= of the init ($pid)"
        # runc sends READY=1 and MAINPID= alone and drops the rest.
        [ "$R" = runc ] || like "$(cat "$TEST_TMPDIR/msgs-$R" 2>/dev/null)" "STATUS=up and running" \
                "$R: STATUS= of the same message is forwarded"
        is "$(tr '\0' '\n' <"/proc/$pid/environ" | grep ^NOTIFY_SOCKET=)" "NOTIFY_SOCKET=/run/notify/notify.sock" \
                "$R: the container's NOTIFY_SOCKET is /run/notify/notify.sock"
        is "$(awk '$5 == "/run/notify" { print $5 }' "/proc/$pid/mountinfo")" /run/notify "$R: /run/notify is a mount in the container"
        ok_desc "$R: the socket is the state directory's notify/notify.sock" \
                test -S "$( [ "$R" = runc ] && echo "$RUNC_ROOT" || echo "$SDRUN_ROOT")/$id/notify/notify.sock"
        ok_desc "$R: the socket is there in the container" test -S "/proc/$pid/root/run/notify/notify.sock"
        rt "$R" delete --force "$id" >/dev/null 2>&1
done
no_leftovers "$id"

# --- an abstract socket (@name) ----------------------------------------------------------------------------
args 'sd-notify READY=1; exec sleep 1000'
for R in runc sdrun; do
        id=$(new_id ntf)
        track "$R" "$id"
        L=@sdrun-test-notify-$$-$R
        listen "$L" "$TEST_TMPDIR/abs-$R"
        NOTIFY_SOCKET=$L rt "$R" run -d --bundle "$B" "$id" >"$TEST_TMPDIR/out" 2>&1
        is "$?" 0 "$R: run -d with an abstract NOTIFY_SOCKET succeeds"
        pid=$(rt "$R" state "$id" | jq -r .pid)
        WAIT_FOR_TIMEOUT=5 wait_for grep -q READY=1 "$TEST_TMPDIR/abs-$R"
        like "$(cat "$TEST_TMPDIR/abs-$R" 2>/dev/null)" "READY=1.*MAINPID=$pid" "$R: the abstract socket got READY=1 with MAINPID=$pid"
        rt "$R" delete --force "$id" >/dev/null 2>&1
done

# --- a Type=notify service around a foreground run: active only after READY=1 ------------------------------
# (pid 1 of the container ends on SIGTERM: `systemctl stop` does not wait for the stop timeout)
args 'trap "exit 0" TERM; sleep 2; sd-notify READY=1 STATUS=starting; sleep 1; sd-notify STATUS=serving; sleep 1000 & wait'
for R in runc sdrun; do
        id=$(new_id ntf)
        track "$R" "$id"
        svc=sdrun-test-notify-$$-$R.service
        cleanup_add systemctl stop "$svc"
        cleanup_add systemctl reset-failed "$svc"
        if [ "$R" = runc ]; then cmd=("$RUNC" --root "$RUNC_ROOT"); else cmd=("$SDRUN" --root "$SDRUN_ROOT"); fi
        t0=$(date +%s%N)
        systemd-run --quiet --unit="$svc" -p Type=notify -p NotifyAccess=all -p TimeoutStartSec=30 \
                "${cmd[@]}" run --bundle "$B" "$id" >"$TEST_TMPDIR/out" 2>&1
        rc=$?
        t1=$(date +%s%N)
        is "$rc" 0 "$R: systemd-run -p Type=notify ... run succeeds"
        is "$(systemctl is-active "$svc")" active "$R: the service is active"
        ok_desc "$R: it became active only after READY=1 ($(( (t1 - t0) / 1000000 )) ms)" test $(( (t1 - t0) / 1000000 )) -ge 1900
        if [ "$R" = sdrun ]; then
                # runc stops forwarding at READY=1; a foreground sdrun run keeps forwarding.
                WAIT_FOR_TIMEOUT=5 wait_for sh -c "systemctl show -p StatusText --value $svc | grep -qx serving"
                is "$(systemctl show -p StatusText --value "$svc")" serving "$R: STATUS= after READY=1 still reaches systemd"
                is "$(systemctl show -p MainPID --value "$svc")" "$(systemctl show -p ExecMainPID --value "$svc")" \
                        "$R: the foreground run stays the service's main process (its exit status is the container's)"
        fi
        systemctl stop "$svc" >/dev/null 2>&1
        rt "$R" delete --force "$id" >/dev/null 2>&1
done
WAIT_FOR_TIMEOUT=10 wait_for test ! -e "$SDRUN_ROOT/$id"
no_leftovers "$id"

# --- a flood (issue 31, item 8): four processes send STATUS= as fast as they can, 5 s before READY=1 and 10 s
# after it, in a Type=notify service around a foreground run. It must cost systemd's PID 1 next to nothing
# (runc forwards READY=1 alone: the control), systemctl must keep answering, WATCHDOG=1 must still get
# through (sdrun: WatchdogSec=3, a ping every second) and the STATUS= sent after the flood must be the one
# systemd shows.
[ -n "${SD_NOTIFY_FLOOD:-}" ] && [ -x "$SD_NOTIFY_FLOOD" ] || bail "SD_NOTIFY_FLOOD (the flood helper) is not set or not executable"
cp "$SD_NOTIFY_FLOOD" "$B/rootfs/bin/sd-notify-flood" || bail "copy of sd-notify-flood into the rootfs failed"
# ticks PID: utime + stime of PID (clock ticks, 100 a second)
ticks() {
        sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | awk '{ print $12 + $13 }'
}
# show_ms UNIT: how long `systemctl show` takes to answer, in ms
show_ms() {
        local t0
        t0=$(date +%s%N)
        timeout 60 systemctl show -p StatusText --value "$1" >/dev/null 2>&1
        echo $(( ($(date +%s%N) - t0) / 1000000 ))
}
args 'trap "exit 0" TERM; sd-notify-flood 5 4; sd-notify READY=1 STATUS=ready
(while :; do sd-notify WATCHDOG=1; sleep 1; done) &
sd-notify-flood 10 4; sd-notify STATUS=after-flood; sleep 1000 & wait'
for R in runc sdrun; do
        id=$(new_id ntf)
        track "$R" "$id"
        svc=sdrun-test-notify-flood-$$-$R.service
        cleanup_add systemctl stop "$svc"
        cleanup_add systemctl reset-failed "$svc"
        if [ "$R" = runc ]; then cmd=("$RUNC" --root "$RUNC_ROOT"); wd=(); else cmd=("$SDRUN" --root "$SDRUN_ROOT"); wd=(-p WatchdogSec=3); fi
        a=$(ticks 1)
        systemd-run --quiet --unit="$svc" -p Type=notify -p NotifyAccess=all -p TimeoutStartSec=90 "${wd[@]}" \
                "${cmd[@]}" run --bundle "$B" "$id" >"$TEST_TMPDIR/out" 2>&1
        rc=$?
        b=$(ticks 1)
        tb=$(date +%s%N)
        is "$rc" 0 "$R: flood: the service starts after the READY=1 that follows a 5 s flood"
        [ "$rc" = 0 ] || diag "$(cat "$TEST_TMPDIR/out")"
        ok_desc "$R: flood before READY=1 (5 s): PID 1 used $((b - a)) ticks (< 50)" test $((b - a)) -lt 50
        main=$(systemctl show -p MainPID --value "$svc")
        m0=$(ticks "$main")
        sleep 3
        ms=$(show_ms "$svc")
        ok_desc "$R: during the flood after READY=1, systemctl show answers in $ms ms (< 1000)" test "$ms" -lt 1000
        left=$(( 10 - ($(date +%s%N) - tb) / 1000000000 ))
        [ "$left" -le 0 ] || sleep "$left"
        c=$(ticks 1)
        m1=$(ticks "$main")
        ok_desc "$R: flood after READY=1 (10 s): PID 1 used $((c - b)) ticks (< 50)" test $((c - b)) -lt 50
        diag "$R: its own CPU (main process $main, $R run): $((m1 - m0)) ticks in the 10 s after READY=1, $m1 in all"
        if [ "$R" = sdrun ]; then
                ok_desc "$R: its own CPU stays below a third of a core ($((m1 - m0)) ticks in 10 s)" test $((m1 - m0)) -lt 330
                WAIT_FOR_TIMEOUT=10 wait_for sh -c "systemctl show -p StatusText --value $svc | grep -qx after-flood"
                is "$(systemctl show -p StatusText --value "$svc")" after-flood \
                        "$R: the STATUS= sent after the flood is the one systemd shows"
                is "$(systemctl is-active "$svc"):$(systemctl show -p Result --value "$svc")" active:success \
                        "$R: WATCHDOG=1 got through the flood (WatchdogSec=3 did not fire)"
        fi
        diag "what the flooders sent: $(journalctl -q -o cat -u "$svc" 2>/dev/null | grep '^flood:' | tr '\n' ';')"
        t0=$(date +%s%N)
        systemctl stop "$svc" >"$TEST_TMPDIR/out" 2>&1
        rc=$?
        is "$rc" 0 "$R: systemctl stop works after the flood ($(( ($(date +%s%N) - t0) / 1000000 )) ms)"
        [ "$rc" = 0 ] || diag "$(cat "$TEST_TMPDIR/out")"
        rt "$R" delete --force "$id" >/dev/null 2>&1
done
WAIT_FOR_TIMEOUT=10 wait_for test ! -e "$SDRUN_ROOT/$id"
no_leftovers "$id"

# --- sdrun only: bounded waits --------------------------------------------------------------------------------
L=$TEST_TMPDIR/notify-b.sock
listen "$L" "$TEST_TMPDIR/msgs-b"

args 'sleep 0.5; exit 3'
id=$(new_id ntf); track_container "$id"
NOTIFY_SOCKET=$L "$SDRUN" --root "$SDRUN_ROOT" create --bundle "$B" "$id" >/dev/null 2>&1
t0=$(date +%s)
out=$(NOTIFY_SOCKET=$L timeout 30 "$SDRUN" --root "$SDRUN_ROOT" start "$id" 2>&1)
rc=$?
t1=$(date +%s)
ok_desc "a container that exits before READY=1: start fails (rc $rc), without waiting ($((t1 - t0)) s)" \
        test "$rc" != 0 -a "$rc" != 124 -a $((t1 - t0)) -le 5
like "$out" "exited before it sent READY=1" "  and says why: $out"
is "$("$SDRUN" --root "$SDRUN_ROOT" state "$id" | jq -r .status)" stopped "  its state is stopped"
"$SDRUN" --root "$SDRUN_ROOT" delete "$id" >/dev/null 2>&1
no_leftovers "$id"

args 'exec sleep 1000'
bundle_set "$B" '.annotations["io.github.sdrun.notify-timeout"]="1"'
id=$(new_id ntf); track_container "$id"
t0=$(date +%s)
out=$(NOTIFY_SOCKET=$L timeout 30 "$SDRUN" --root "$SDRUN_ROOT" run -d --bundle "$B" "$id" 2>&1)
rc=$?
t1=$(date +%s)
ok_desc "a container that never sends READY=1: run -d fails after the annotation's 1 s (rc $rc, $((t1 - t0)) s)" \
        test "$rc" != 0 -a "$rc" != 124 -a $((t1 - t0)) -le 5
like "$out" "did not send READY=1" "  and says why: $out"
no_leftovers "$id"

bundle_set "$B" '.annotations["io.github.sdrun.notify-timeout"]="soon"'
id=$(new_id ntf); track_container "$id"
out=$(NOTIFY_SOCKET=$L "$SDRUN" --root "$SDRUN_ROOT" run -d --bundle "$B" "$id" 2>&1)
ok_desc "a bad io.github.sdrun.notify-timeout is refused by create" test $? != 0
like "$out" 'annotations\["io.github.sdrun.notify-timeout"\]: "soon"' "  naming the annotation: $out"
no_leftovers "$id"

args 'sd-notify EXTEND_TIMEOUT_USEC=4000000; sleep 2; sd-notify READY=1; exec sleep 1000'
bundle_set "$B" '.annotations["io.github.sdrun.notify-timeout"]="1"'
id=$(new_id ntf); track_container "$id"
NOTIFY_SOCKET=$L "$SDRUN" --root "$SDRUN_ROOT" run -d --bundle "$B" "$id" >"$TEST_TMPDIR/out" 2>&1
is "$?" 0 "EXTEND_TIMEOUT_USEC= from the container extends the wait past the 1 s"
like "$(cat "$TEST_TMPDIR/msgs-b")" "EXTEND_TIMEOUT_USEC=4000000" "  and is forwarded"
"$SDRUN" --root "$SDRUN_ROOT" delete --force "$id" >/dev/null 2>&1
no_leftovers "$id"

# --- without NOTIFY_SOCKET nothing is added --------------------------------------------------------------------
args 'exec sleep 1000'
id=$(new_id ntf); track_container "$id"
env -u NOTIFY_SOCKET "$SDRUN" --root "$SDRUN_ROOT" run -d --bundle "$B" "$id" >/dev/null 2>&1
pid=$("$SDRUN" --root "$SDRUN_ROOT" state "$id" | jq -r .pid)
ok_desc "without NOTIFY_SOCKET: no NOTIFY_SOCKET in the container" sh -c "! tr '\\0' '\\n' </proc/$pid/environ | grep -q NOTIFY_SOCKET"
ok_desc "  no /run/notify mount, no notify directory" sh -c "! grep -q ' /run/notify ' /proc/$pid/mountinfo && test ! -e $SDRUN_ROOT/$id/notify"
"$SDRUN" --root "$SDRUN_ROOT" delete --force "$id" >/dev/null 2>&1
no_leftovers "$id"

done_testing
