#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The container lifecycle (issue 3): run and its exit status, create/start/kill/delete and the state machine
# (transitions refused in the wrong state), delete --force in every state, run --detach/--keep, kill by
# name and number, a reused pid never reported nor signalled, the scope while it runs (checked with
# systemctl and cgroupfs), --pid-file, --pidfd-socket, create under a reaping caller (the conmon model), no leftovers.
. "$(dirname "$0")/lib.sh"

require_root
require_systemd

sd() { "$SDRUN" --root "$SDRUN_ROOT" "$@"; }
status_of() { sd state "$1" 2>/dev/null | jq -r .status; }
pid_of() { sd state "$1" 2>/dev/null | jq -r '.pid // empty'; }
is_status() { [ "$(status_of "$1")" = "$2" ]; }
HELPERS=$SDRUN_SRCDIR/tests/integration/helpers

B=$TEST_TMPDIR/b
make_bundle "$B" || bail "make_bundle failed"

# ---------------------------------------------------------------------------------------------------------
# run in the foreground: output, exit status, 128+signal

id=$(new_id run); track_container "$id"
bundle_set "$B" '.process.args=["sh","-c","echo pid=$$ host=$(hostname); exit 7"]'
rc=0; out=$(sd run --bundle "$B" "$id" 2>"$TEST_TMPDIR/err") || rc=$?
is "$rc" 7 "run: exit status of the container process (7)"
is "$out" "pid=1 host=sdrun" "run: the process is pid 1 of its pid namespace, hostname from config"
ok_desc "run without --keep deletes the container" test ! -e "$SDRUN_ROOT/$id"
no_leftovers "$id"

id=$(new_id run); track_container "$id"
bundle_set "$B" '.process.args=["sleep","1000"]'
sd run --bundle "$B" "$id" >/dev/null 2>&1 &
runpid=$!
WAIT_FOR_TIMEOUT=10 wait_for is_status "$id" running
ok_desc "run: container is running" is_status "$id" running
sd kill "$id" KILL
rc=0; wait "$runpid" || rc=$?
is "$rc" 137 "run: a container killed by SIGKILL exits 128+9"
no_leftovers "$id"

id=$(new_id run); track_container "$id"
bundle_set "$B" '.process.args=["sh","-c","trap \"exit 42\" TERM; echo ready >/dev/shm/ready; while :; do sleep 0.1; done"]'
"$SDRUN" --root "$SDRUN_ROOT" run --bundle "$B" "$id" >/dev/null 2>&1 &
runpid=$!
wait_for is_status "$id" running
# Signalled once the container's trap is set (it says so), not after a guessed delay.
pid=$(pid_of "$id")
WAIT_FOR_TIMEOUT=10 wait_for test -e "/proc/$pid/root/dev/shm/ready"
kill -TERM "$runpid"
rc=0; wait "$runpid" || rc=$?
is "$rc" 42 "run forwards SIGTERM it receives to the container (trap exits 42)"
no_leftovers "$id"

# ---------------------------------------------------------------------------------------------------------
# create -> created (pid) -> start -> running -> kill -> stopped -> delete, checked from the host

id=$(new_id life); track_container "$id"
bundle_set "$B" '.process.args=["sh","-c","echo started >/dev/shm/marker; exec sleep 1000"]'
mkdir -p "$TEST_TMPDIR/pidfile"
ok_desc "create --pid-file returns 0" sd create --bundle "$B" --pid-file "$TEST_TMPDIR/pidfile/pid" "$id"
is "$(status_of "$id")" created "state after create: created"
pid=$(pid_of "$id")
like "$pid" '^[1-9][0-9]*$' "state after create has a positive pid"
is "$(cat "$TEST_TMPDIR/pidfile/pid" 2>/dev/null)" "$pid" "--pid-file holds the init's pid"
is "$(ls -A "$TEST_TMPDIR/pidfile" 2>/dev/null)" pid "--pid-file: no temporary file left next to it"
is "$(cat /proc/"$pid"/comm 2>/dev/null)" "sdrun:init" "created: the init waits before exec (comm sdrun:init)"
ok_desc "created: the process has not started (no marker)" test ! -e "/proc/$pid/root/dev/shm/marker"
unit=$(unit_of "$id")
is "$(unit_prop "$unit" ActiveState)" active "created: unit $unit is active"

ok_desc "start returns 0" sd start "$id"
is "$(status_of "$id")" running "state after start: running"
is "$(pid_of "$id")" "$pid" "running: same pid"
ok_desc "running: the process ran (marker inside, seen through /proc/PID/root)" \
        wait_for test -e "/proc/$pid/root/dev/shm/marker"
is "$(readlink /proc/"$pid"/exe)" "/bin/busybox" "running: /proc/PID/exe is the container's binary (path in its root)"
rc=0; err=$(sd start "$id" 2>&1) || rc=$?
is "$rc" 1 "start twice is refused"
like "$err" 'cannot start an already running container' "start refusal in runc's words: $err"

# the scope, from the host
cg=$(unit_prop "$unit" ControlGroup)
like "$cg" "/$unit\$" "ControlGroup of the unit ends in $unit"
like "$(unit_prop "$unit" Description)" "$id" "the unit's Description names the container id"
ok_desc "the init is in the unit's cgroup (/proc/PID/cgroup)" grep -qF -- "$cg" "/proc/$pid/cgroup"
dir=$(cgroup_dir "$unit")
procs=$(find "$dir" -name cgroup.procs -exec cat {} + 2>/dev/null | sort -u | paste -sd' ')
is "$procs" "$pid" "the init is the only process in the scope's cgroup tree"

rc=0; err=$(sd delete "$id" 2>&1) || rc=$?
is "$rc" 1 "delete of a running container without --force is refused"
like "$err" 'not stopped.*running' "delete refusal names the state: $err"

ok_desc "kill SIGKILL returns 0" sd kill "$id" SIGKILL
ok_desc "after kill: stopped" wait_for is_status "$id" stopped
is "$(pid_of "$id")" "" "stopped: no pid in the state"
rc=0; err=$(sd kill "$id" TERM 2>&1) || rc=$?
is "$rc" 1 "kill of a stopped container fails"
like "$err" 'container not running' "kill refusal in runc's words (containerd's shim matches them): $err"
rc=0; err=$(sd start "$id" 2>&1) || rc=$?
is "$rc" 1 "start of a stopped container fails"
like "$err" 'cannot start a container that has stopped' "start refusal in runc's words: $err"
ok_desc "unit gone once the container stopped" wait_for sh -c "! systemctl is-active -q $unit"
ok_desc "delete of a stopped container works without --force" sd delete "$id"
no_leftovers "$id"
rc=0; err=$(sd state "$id" 2>&1) || rc=$?
is "$rc" 1 "state of a deleted container fails"
like "$err" 'does not exist' "state of a deleted container: $err"

# ---------------------------------------------------------------------------------------------------------
# delete --force in every state

bundle_set "$B" '.process.args=["sleep","1000"]'
for st in created running stopped; do
        id=$(new_id force); track_container "$id"
        sd create --bundle "$B" "$id" >/dev/null 2>&1
        [ $st = created ] || sd start "$id" >/dev/null 2>&1
        if [ $st = stopped ]; then
                sd kill "$id" KILL >/dev/null 2>&1
                wait_for is_status "$id" stopped
        fi
        p=$(sd state "$id" | jq -r '.pid // 0')
        is "$(status_of "$id")" "$st" "force: container is $st"
        ok_desc "delete --force of a $st container" sd delete --force "$id"
        [ "$p" -gt 0 ] && ok_desc "delete --force: the $st init $p is gone" wait_for sh -c "! kill -0 $p"
        no_leftovers "$id"
done
ok_desc "delete --force of a container that does not exist succeeds (as runc)" sd delete --force "$(new_id none)"

# ---------------------------------------------------------------------------------------------------------
# run --detach, run --keep

id=$(new_id detach); track_container "$id"
start_t=$(date +%s%N)
ok_desc "run --detach returns 0" sd run --detach --bundle "$B" "$id"
el=$(( ($(date +%s%N) - start_t) / 1000000 ))
ok_desc "run --detach returned promptly (${el} ms) while the container runs" test "$el" -lt 5000
is "$(status_of "$id")" running "run --detach: running"
ok_desc "delete --force the detached container" sd delete --force "$id"
no_leftovers "$id"

id=$(new_id keep); track_container "$id"
bundle_set "$B" '.process.args=["sh","-c","exit 3"]'
rc=0; sd run --keep --bundle "$B" "$id" >/dev/null 2>&1 || rc=$?
is "$rc" 3 "run --keep: exit status 3"
is "$(status_of "$id")" stopped "run --keep: the container is kept, stopped"
ok_desc "run --keep: listed" sh -c "'$SDRUN' --root '$SDRUN_ROOT' list -q | grep -qx -- '$id'"
ok_desc "delete after run --keep" sd delete "$id"
no_leftovers "$id"

# ---------------------------------------------------------------------------------------------------------
# kill by name and number

bundle_set "$B" '.process.args=["sh","-c","trap \"echo usr1 >>/dev/shm/got\" USR1; trap \"echo term >>/dev/shm/got\" TERM; echo ready >/dev/shm/ready; while :; do sleep 0.1; done"]'
id=$(new_id kill); track_container "$id"
sd run --detach --bundle "$B" "$id" >/dev/null 2>&1
pid=$(pid_of "$id")
wait_for test -e "/proc/$pid/root/dev/shm/ready"
ok_desc "kill USR1 (name)" sd kill "$id" USR1
ok_desc "the trapping shell got USR1" wait_for grep -qx usr1 "/proc/$pid/root/dev/shm/got"
ok_desc "kill 10 (number: SIGUSR1)" sd kill "$id" 10
ok_desc "the trapping shell got the second USR1" wait_for sh -c "[ \$(grep -c usr1 /proc/$pid/root/dev/shm/got) = 2 ]"
ok_desc "kill (default signal TERM)" sd kill "$id"
ok_desc "the trapping shell got TERM" wait_for grep -qx term "/proc/$pid/root/dev/shm/got"
ok_desc "kill SIGTERM (SIG prefix)" sd kill "$id" SIGTERM
ok_desc "TERM twice" wait_for sh -c "[ \$(grep -c term /proc/$pid/root/dev/shm/got) = 2 ]"
is "$(status_of "$id")" running "still running after trapped signals"
ok_desc "kill with signal 0 (is it there) of a running container" sd kill "$id" 0
ok_desc "kill --all 0 of a running container" sd kill --all "$id" 0
# list --format json as runc writes it (runc's list.bats matches the line): one line, runc's field order
lj=$(sd list --format json)
is "$(wc -l <<<"$lj")" 1 "list --format json: one line"
is "$(jq -c --arg i "$id" '[.[] | select(.id == $i) | keys_unsorted[]][:7]' <<<"$lj")" \
        '["ociVersion","id","pid","status","bundle","rootfs","created"]' "list --format json: runc's field order"
like "$lj" "\\{\"ociVersion\":\"[0-9.]+\",\"id\":\"$id\",\"pid\":$(pid_of "$id"),\"status\":\"running\"," "list --format json: compact, as runc's encoder"
rc=0; err=$(sd kill "$id" NOSUCHSIG 2>&1) || rc=$?
is "$rc" 1 "kill with an unknown signal name fails"
like "$err" 'invalid signal' "unknown signal: $err"
ok_desc "kill 9 (number)" sd kill "$id" 9
ok_desc "stopped after kill 9" wait_for is_status "$id" stopped
ok_desc "kill --all 0 of a stopped container succeeds (runc's kill.bats)" sd kill --all "$id" 0
rc=0; err=$(sd kill "$id" 0 2>&1) || rc=$?
like "$rc:$err" '^1:.*container not running' "kill 0 of a stopped container: container not running"
is "$(sd list --format json | jq -r --arg i "$id" '.[] | select(.id == $i) | .pid')" 0 "list --format json: pid 0 once stopped, as runc"
sd delete "$id" >/dev/null 2>&1
no_leftovers "$id"

# ---------------------------------------------------------------------------------------------------------
# --pidfd-socket (runc 1.2's pidfd-socket.bats): a pidfd of the init, sent once the container is created; a
# socket that cannot be reached fails the create and leaves nothing

bundle_set "$B" '.process.args=["sleep","100000"]'
for verb in create run; do
        id=$(new_id pidfd); track_container "$id"
        PS=$TEST_TMPDIR/pidfd-$verb.sock
        python3 "$HELPERS/pidfd-recv.py" "$PS" SIGKILL >"$TEST_TMPDIR/pidfd.out" 2>&1 & recv=$!
        wait_for test -e "$PS.ready"
        if [ "$verb" = create ]; then
                ok_desc "create --pidfd-socket" sd create --bundle "$B" --pidfd-socket "$PS" "$id"
        else
                ok_desc "run -d --pidfd-socket" sd run -d --bundle "$B" --pidfd-socket "$PS" "$id"
        fi
        pid=$(pid_of "$id")
        wait_for test -s "$TEST_TMPDIR/pidfd.out"
        is "$(cat "$TEST_TMPDIR/pidfd.out")" "$pid" "$verb --pidfd-socket: the pidfd received is the init's ($pid)"
        kill -TERM "$recv"; wait "$recv"
        ok_desc "$verb --pidfd-socket: SIGKILL through the pidfd stops the container" wait_for is_status "$id" stopped
        sd delete "$id" >/dev/null 2>&1
        no_leftovers "$id"
done
id=$(new_id pidfd); track_container "$id"
rc=0; err=$(sd create --bundle "$B" --pidfd-socket "$TEST_TMPDIR/no-such.sock" "$id" 2>&1) || rc=$?
like "$rc:$err" "^1:.*--pidfd-socket: connect to \"$TEST_TMPDIR/no-such.sock\": No such file" "create --pidfd-socket without a listener fails: $err"
no_leftovers "$id"

# ---------------------------------------------------------------------------------------------------------
# crun's command line, as crun's own test suite drives it: --cgroup-manager, run --config FILE, and
# kill/delete --regex over several containers

bundle_set "$B" '.process.args=["sleep","100000"]'
jq '.process.args=["sh","-c","echo from-other-config"]' "$B/config.json" >"$B/other.json"
id=$(new_id cfg); track_container "$id"
rc=0; out=$(sd --cgroup-manager cgroupfs run --config other.json --bundle "$B" "$id" 2>&1) || rc=$?
is "$rc:$out" "0:from-other-config" "--cgroup-manager cgroupfs run --config other.json: the other config's process"
no_leftovers "$id"
rc=0; err=$(sd run -f missing.json --bundle "$B" "$id" 2>&1) || rc=$?
like "$rc:$err" "^1:.*cannot read \"$B/missing.json\"" "run --config with a missing file names it"
no_leftovers "$id"
rx=$(new_id rx); r1=$rx-a; r2=$rx-b; r3=other-$rx; track_container "$r1"; track_container "$r2"; track_container "$r3"
for i in "$r1" "$r2" "$r3"; do sd run -d --bundle "$B" "$i" >/dev/null 2>&1 </dev/null || bail "run -d $i failed"; done
ok_desc "kill --regex '^$rx-' KILL" sd kill --regex "^$rx-" KILL
ok_desc "... the two matching containers stop" wait_for sh -c "[ \"\$('$SDRUN' --root '$SDRUN_ROOT' state $r1 | jq -r .status)\$('$SDRUN' --root '$SDRUN_ROOT' state $r2 | jq -r .status)\" = stoppedstopped ]"
is "$(status_of "$r3")" running "... the third one runs on"
ok_desc "delete --regex '^$rx-'" sd delete --regex "^$rx-"
ok_desc "... deleted both" sh -c "! '$SDRUN' --root '$SDRUN_ROOT' state $r1 && ! '$SDRUN' --root '$SDRUN_ROOT' state $r2" 
is "$(status_of "$r3")" running "... not the third one"
ok_desc "delete -f --regex '$rx\$' (the third one, running)" sd delete -f --regex "$rx\$"
no_leftovers "$r1"; no_leftovers "$r2"; no_leftovers "$r3"
rc=0; err=$(sd delete --regex '(' 2>&1) || rc=$?
like "$rc:$err" '^1:.*--regex: invalid regular expression "\("' "delete --regex with a bad expression names it"
ok_desc "delete --regex that matches nothing is no error" sd delete --regex "^no-such-$rx\$"

# ---------------------------------------------------------------------------------------------------------
# delete --force of a container whose init someone froze in a v1 freezer cgroup of their own (crun's
# test_delete.py does this): a frozen process never dies of SIGKILL; delete moves it out, and nothing stays

if [ -w /sys/fs/cgroup/freezer ] && [ ! -e /sys/fs/cgroup/cgroup.controllers ]; then
        id=$(new_id frz); track_container "$id"
        sd run -d --bundle "$B" "$id" >/dev/null 2>&1 </dev/null || bail "run -d failed"
        pid=$(pid_of "$id")
        fz=/sys/fs/cgroup/freezer/sdrun-test-frozen-$id
        mkdir "$fz" && cleanup_add rmdir "$fz"
        echo "$pid" >"$fz/tasks"
        echo FROZEN >"$fz/freezer.state"
        ok_desc "the init is frozen in a foreign v1 freezer cgroup" wait_for grep -qx FROZEN "$fz/freezer.state"
        t0=$(date +%s%N)
        rc=0; err=$(sd --log "$TEST_TMPDIR/frz.log" delete -f "$id" 2>&1) || rc=$?
        ms=$((($(date +%s%N) - t0) / 1000000))
        is "$rc:$err" "0:" "delete --force of the frozen container succeeds, quietly (crun's test wants no output)"
        like "$(cat "$TEST_TMPDIR/frz.log")" "level=info msg=\"process $pid was frozen in the v1 freezer cgroup /sdrun-test-frozen-$id: moved out" "... and its log says what it did"
        ok_desc "... at once ($ms ms), not after the stop job's timeout" test "$ms" -lt 5000
        ok_desc "... and the init is gone" wait_for sh -c "! kill -0 $pid 2>/dev/null"
        no_leftovers "$id"
else
        skip "no writable v1 freezer hierarchy here (hybrid layout only)"
fi

# ---------------------------------------------------------------------------------------------------------
# a pid reused by another process: never reported running, never signalled

id=$(new_id reuse); track_container "$id"
bundle_set "$B" '.process.args=["true"]'
# The victim starts 0.2 s before the container: start times are in clock ticks (10 ms), and a real reused
# pid cannot have the dead init's start time.
sleep 1000 &
victim=$!
cleanup_add kill -KILL "$victim"
sleep 0.2
sd run --keep --bundle "$B" "$id" >/dev/null 2>&1
# Point the stopped container's state at the sleep: same pid field, the container's (different) start time.
jq --argjson p "$victim" '.pid=$p | .status="running"' "$SDRUN_ROOT/$id/state.json" >"$TEST_TMPDIR/st.json"
cp "$TEST_TMPDIR/st.json" "$SDRUN_ROOT/$id/state.json"
is "$(jq -r .pid "$SDRUN_ROOT/$id/state.json")" "$victim" "state.json now names the unrelated pid $victim"
is "$(status_of "$id")" stopped "a reused pid: state says stopped"
is "$(pid_of "$id")" "" "a reused pid: state reports no pid"
ok_desc "a reused pid: list does not show it running" \
        sh -c "! '$SDRUN' --root '$SDRUN_ROOT' list | grep -- '$id' | grep -qw running"
rc=0; sd kill "$id" KILL >/dev/null 2>&1 || rc=$?
is "$rc" 1 "a reused pid: kill refuses"
rc=0; sd start "$id" >/dev/null 2>&1 || rc=$?
is "$rc" 1 "a reused pid: start refuses"
ok_desc "a reused pid: delete --force succeeds" sd delete --force "$id"
ok_desc "a reused pid: the unrelated process was never signalled" kill -0 "$victim"
is "$(awk '{print $3}' /proc/"$victim"/stat)" S "the unrelated process is still sleeping"
kill -KILL "$victim"; wait "$victim" 2>/dev/null
no_leftovers "$id"

# ---------------------------------------------------------------------------------------------------------
# create under a caller that reaps (conmon: subreaper, --pid-file, reaps the init itself)

id=$(new_id reap); track_container "$id"
bundle_set "$B" '.process.args=["sh","-c","sleep 0.5; exit 5"]'
out=$(python3 "$HELPERS/subreaper.py" "$SDRUN" "$SDRUN_ROOT" "$B" "$id" "$TEST_TMPDIR/reap.pid" 2>&1)
rc=$?
is "$rc" 0 "subreaper: create --pid-file + start + reap worked"
like "$out" 'status 5' "subreaper: the reaping caller got the container's exit status 5"
like "$out" 'zombies 0' "subreaper: nothing else left to reap"
is "$(status_of "$id")" stopped "subreaper: state stopped after the caller reaped the init"
ok_desc "subreaper: delete" sd delete "$id"
no_leftovers "$id"
diag "subreaper output: $out"

done_testing
