#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# sdrun@.service (issue 15, item 3): a container as a Type=notify service. The unit is units/sdrun@.service.in
# with this build's binary. Ready when started (the default) or when the container says so; stop is graceful
# then SIGKILL and delete; a failed container is a failed unit with its exit status; Restart= and restart
# work; the service (--keep-unit), machinectl and the journal show it; crashes (kill -9 of sdrun, a container that dies during
# start, a stale container of the same id) leave nothing a second start trips over.
. "$(dirname "$0")/lib.sh"

require_root
require_systemd
[ -n "${SD_NOTIFY:-}" ] && [ -x "$SD_NOTIFY" ] || bail "SD_NOTIFY (the sd-notify helper) is not set or not executable"
install_sdrun_template

# bundle DIR ARGS-SCRIPT: a busybox bundle running sh -c ARGS-SCRIPT
bundle() {
        make_bundle "$1" || bail "make_bundle failed"
        cp "$SD_NOTIFY" "$1/rootfs/bin/sd-notify"
        bundle_set "$1" '.process.args=["sh","-c",$s]' --arg s "$2" || bail "bundle_set failed"
}
svc() { echo "sdrun@$1.service"; }
# start_unit ID: systemctl start, with the unit's journal as diagnostics when it fails
start_unit() {
        local out
        out=$(systemctl start "sdrun@$1.service" 2>&1) && return 0
        diag "systemctl start sdrun@$1.service: $out"
        journalctl -q --no-pager -u "sdrun@$1.service" -u "sdrun-$1.scope" | tail -15 | _tap_diag_stream
        return 1
}
prop() { systemctl show -p "$2" --value "$(svc "$1")"; }
ms_since() { echo $(( ($(date +%s%N) - $1) / 1000000 )); }
# pid 1 that stops on SIGTERM
TERMOK='trap "echo got-term; exit 0" TERM'

# --- the documented location, a container that does not notify: ready once started ---------------------------
id=$(unit_instance unit)
bundle "/var/lib/sdrun/bundles/$id" "$TERMOK; echo hello-from-$id; sleep 1000 & wait"
out=$(systemctl start "$(svc "$id")" 2>&1)
is "$?" 0 "systemctl start $(svc "$id") (bundle in /var/lib/sdrun/bundles/$id)" || diag "$out"
is "$(prop "$id" ActiveState)" active "  active"
is "$("$SDRUN" state "$id" | jq -r .status)" running "  sdrun state: running"
is "$(prop "$id" MainPID)" "$(prop "$id" ExecMainPID)" "  the main process is sdrun run"
# --keep-unit (the template's): the container lives in the service, no scope of its own (test-keep-unit).
is "$(systemctl list-units --all --plain --no-legend -- "sdrun-$id.scope" | wc -l)" 0 "  no scope sdrun-$id.scope"
ok_desc "  the container's init is in the service's payload cgroup" grep -qx "$("$SDRUN" state "$id" | jq -r .pid)" \
        "$(cgroup_dir "$(svc "$id")")/payload/cgroup.procs"
ok_desc "  machinectl list shows it" sh -c "machinectl list --no-legend | grep -q '^$id '"
# journald files a stream's lines under the writer's unit: the container's output under the service.
ok_desc "  the journal has the container's output (under $(svc "$id"))" \
        wait_for sh -c "journalctl -q -u $(svc "$id") | grep -q hello-from-$id"
ok_desc "  sdrun's message" sh -c "journalctl -q -u $(svc "$id") | grep -q 'created container $id'"
ok_desc "  and the service's start" sh -c "journalctl -q -u $(svc "$id") | grep -q 'Started.*sdrun container $id'"

# restart: a new container
pid1=$("$SDRUN" state "$id" | jq -r .pid)
out=$(systemctl restart "$(svc "$id")" 2>&1)
is "$?" 0 "systemctl restart" || diag "$out"
pid2=$("$SDRUN" state "$id" | jq -r .pid)
ok_desc "  a new container runs (init $pid1 -> $pid2)" test -n "$pid2" -a "$pid2" != null -a "$pid2" != "$pid1"
ok_desc "  the old one got SIGTERM" wait_for sh -c "journalctl -q -u $(svc "$id") | grep -q got-term"

# stop: graceful
t0=$(date +%s%N)
systemctl stop "$(svc "$id")"
is "$(prop "$id" ActiveState)" inactive "systemctl stop: inactive ($(ms_since "$t0") ms), not failed"
no_leftovers "$id"

# --- a container that notifies; the bundle elsewhere (drop-in) -------------------------------------------------
id=$(unit_instance unit)
B=$TEST_TMPDIR/b-$id
bundle "$B" "$TERMOK; sleep 2; sd-notify READY=1 STATUS=serving; sleep 1000 & wait"
unit_dropin "$id" "Environment=SDRUN_BUNDLE=$B SDRUN_NOTIFY_READY=container"
t0=$(date +%s%N)
out=$(systemctl start "$(svc "$id")" 2>&1)
t=$(ms_since "$t0")
is "$?" 0 "SDRUN_NOTIFY_READY=container, bundle from a drop-in: systemctl start" || diag "$out"
ok_desc "  active only after the container's READY=1 ($t ms)" test "$t" -ge 2000
is "$(prop "$id" StatusText)" serving "  its STATUS= is the unit's"
systemctl stop "$(svc "$id")"
no_leftovers "$id"

# the bundle's annotation says the same
id=$(unit_instance unit)
B=$TEST_TMPDIR/b-$id
bundle "$B" "$TERMOK; sleep 1; sd-notify READY=1; sleep 1000 & wait"
bundle_set "$B" '.annotations["io.github.sdrun.notify-ready"]="container"'
unit_dropin "$id" "Environment=SDRUN_BUNDLE=$B"
t0=$(date +%s%N)
systemctl start "$(svc "$id")" >/dev/null 2>&1
t=$(ms_since "$t0")
ok_desc "the annotation io.github.sdrun.notify-ready=container: active after READY=1 ($t ms)" \
        test "$t" -ge 1000 -a "$(prop "$id" ActiveState)" = active
systemctl stop "$(svc "$id")"
no_leftovers "$id"

# --- stop of a container that ignores SIGTERM: SIGKILL after TimeoutStopSec=, then delete -----------------------
id=$(unit_instance unit)
B=$TEST_TMPDIR/b-$id
bundle "$B" 'trap "" TERM; sleep 1000 & wait; sleep 1000'
unit_dropin "$id" "Environment=SDRUN_BUNDLE=$B
TimeoutStopSec=2"
start_unit "$id"
t0=$(date +%s%N)
systemctl stop "$(svc "$id")"
t=$(ms_since "$t0")
ok_desc "a container that ignores SIGTERM: stop ends after TimeoutStopSec=2 ($t ms)" test "$t" -ge 1800 -a "$t" -le 8000
no_leftovers "$id"

# --- a failed container: a failed unit with its exit status; Restart=on-failure ----------------------------------
id=$(unit_instance unit)
B=$TEST_TMPDIR/b-$id
bundle "$B" 'sleep 0.5; exit 3'
unit_dropin "$id" "Environment=SDRUN_BUNDLE=$B"
start_unit "$id"
wait_for sh -c "systemctl is-failed -q $(svc "$id")"
is "$(prop "$id" ActiveState)" failed "a container that exits 3: the unit is failed"
is "$(prop "$id" Result)/$(prop "$id" ExecMainStatus)" exit-code/3 "  Result=exit-code, ExecMainStatus=3"
no_leftovers "$id"
systemctl reset-failed "$(svc "$id")"

unit_dropin "$id" "Environment=SDRUN_BUNDLE=$B
Restart=on-failure
RestartSec=100ms
StartLimitBurst=100"
start_unit "$id"
ok_desc "Restart=on-failure: the unit restarts the container (NRestarts >= 2)" \
        env WAIT_FOR_TIMEOUT=15 bash -c "for i in \$(seq 150); do [ \"\$(systemctl show -p NRestarts --value $(svc "$id"))\" -ge 2 ] && exit 0; sleep 0.1; done; exit 1"
systemctl stop "$(svc "$id")"
no_leftovers "$id"

# --- crashes ---------------------------------------------------------------------------------------------------
# kill -9 of the service's sdrun: the unit fails, ExecStopPost= removes the container; a second start works
id=$(unit_instance unit)
B=$TEST_TMPDIR/b-$id
bundle "$B" "$TERMOK; sleep 1000 & wait"
unit_dropin "$id" "Environment=SDRUN_BUNDLE=$B"
start_unit "$id"
kill -9 "$(prop "$id" MainPID)"
wait_for sh -c "test \"\$(systemctl show -p ActiveState --value $(svc "$id"))\" = failed"
is "$(prop "$id" ActiveState)/$(prop "$id" Result)" failed/signal "kill -9 of sdrun run: the unit failed (signal)"
WAIT_FOR_TIMEOUT=10 wait_for test ! -e "$SDRUN_ROOT/$id"
no_leftovers "$id"
out=$(systemctl start "$(svc "$id")" 2>&1)
is "$?/$(prop "$id" ActiveState)" 0/active "  a second systemctl start works" || diag "$out"
systemctl stop "$(svc "$id")"

# a stale container of the same id (left by a crash): ExecStartPre= removes it
"$SDRUN" create --bundle "$B" "$id" >/dev/null 2>&1
is "$("$SDRUN" state "$id" | jq -r .status)" created "a stale container $id exists (created)"
out=$(systemctl start "$(svc "$id")" 2>&1)
is "$?/$(prop "$id" ActiveState)" 0/active "  systemctl start still works" || diag "$out"
systemctl stop "$(svc "$id")"
no_leftovers "$id"

# a container that dies during start (before its READY=1): start fails, nothing left, the next start works
id=$(unit_instance unit)
B=$TEST_TMPDIR/b-$id
bundle "$B" 'sleep 0.5; exit 4'
unit_dropin "$id" "Environment=SDRUN_BUNDLE=$B SDRUN_NOTIFY_READY=container"
out=$(systemctl start "$(svc "$id")" 2>&1)
ok_desc "a container that exits before READY=1: systemctl start fails" test -n "$out"
is "$(prop "$id" ActiveState)" failed "  the unit is failed"
ok_desc "  the journal says why" sh -c "journalctl -q -u $(svc "$id") | grep -q 'exited before it sent READY=1'"
no_leftovers "$id"
bundle_set "$B" '.process.args=["sh","-c",$s]' --arg s "$TERMOK; sd-notify READY=1; sleep 1000 & wait"
systemctl reset-failed "$(svc "$id")"
out=$(systemctl start "$(svc "$id")" 2>&1)
is "$?/$(prop "$id" ActiveState)" 0/active "  after a fix, the next start works" || diag "$out"
systemctl stop "$(svc "$id")"
no_leftovers "$id"

done_testing
