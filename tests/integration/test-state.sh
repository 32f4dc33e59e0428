#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# A state that never lies (issue 5): schema-valid `state` in every status, `creating` (no pid) while create
# runs, a create killed half-way reported stopped and cleaned up by delete, the conmon polling race
# (seeds/002: poll state, start the moment it says created: must always work), list in its three forms.
. "$(dirname "$0")/lib.sh"

require_root
require_systemd
ci_lane hybrid

sd() { "$SDRUN" --root "$SDRUN_ROOT" "$@"; }
status_of() { sd state "$1" 2>/dev/null | jq -r .status; }
is_status() { [ "$(status_of "$1")" = "$2" ]; }
validate() { sd state "$1" | python3 "$SDRUN_SRCDIR/tests/validate-json.py" "$SDRUN_SRCDIR/tests/schema/state-schema.json" -; }
SLEEP=$(command -v sleep)

B=$TEST_TMPDIR/b
make_bundle "$B" || bail "make_bundle failed"
bundle_set "$B" '.process.args=["sleep","1000"]'

# ---------------------------------------------------------------------------------------------------------
# schema-valid in created, running, stopped

id=$(new_id st); track_container "$id"
sd create --bundle "$B" "$id"
ok_desc "state (created) validates against state-schema.json" validate "$id"
is "$(sd state "$id" | jq -r '[.ociVersion, .id, .status, (.pid > 0), .bundle] | join(" ")')" \
        "1.3.0 $id created true $B" "state (created): ociVersion id status pid bundle"
sd start "$id"
ok_desc "state (running) validates" validate "$id"
is "$(status_of "$id")" running "state: running"
sd kill "$id" KILL; wait_for is_status "$id" stopped
ok_desc "state (stopped) validates" validate "$id"
is "$(sd state "$id" | jq -r 'has("pid")')" false "state (stopped): no pid"

# list, list -q, list --format json
id2=$(new_id st); track_container "$id2"
sd run --detach --bundle "$B" "$id2"
like "$(sd list)" "(^|$'\n')ID +PID +STATUS +BUNDLE" "list: table header"
like "$(sd list | grep -- "$id2")" "^$id2 +[1-9][0-9]* +running +$B " "list: the running container with its pid and bundle"
like "$(sd list | grep -- "$id ")" "^$id +0 +stopped " "list: the stopped container, pid 0"
is "$(sd list -q | grep -cE -- "^($id|$id2)\$")" 2 "list -q: both ids, one per line"
ok_desc "list -q prints ids only" sh -c "'$SDRUN' --root '$SDRUN_ROOT' list -q | grep -vqE '[[:space:]]' || ! '$SDRUN' --root '$SDRUN_ROOT' list -q | grep -q ' '"
j=$(sd list --format json)
ok_desc "list --format json is a JSON array" jq -e 'type == "array"' <<<"$j"
is "$(jq -r --arg i "$id2" '.[] | select(.id == $i) | [.status, .systemdUnit] | join(" ")' <<<"$j")" \
        "running $(unit_of "$id2")" "list --format json: status and the unit name"
is "$(jq -r --arg i "$id" '.[] | select(.id == $i) | .status' <<<"$j")" stopped "list --format json: the stopped one"
validate_each() { jq -c '.[]' <<<"$1" | while read -r e; do
        python3 "$SDRUN_SRCDIR/tests/validate-json.py" "$SDRUN_SRCDIR/tests/schema/state-schema.json" - <<<"$e" || exit 1; done; }
ok_desc "list --format json: each entry is a valid OCI state" validate_each "$j"
rc=0; err=$(sd list --format yaml 2>&1) || rc=$?
is "$rc" 1 "list --format yaml is refused"
like "$err" 'format' "list bad format: $err"
sd delete "$id"; sd delete --force "$id2"
no_leftovers "$id"; no_leftovers "$id2"

# ---------------------------------------------------------------------------------------------------------
# creating: while create is blocked in a createRuntime hook that waits for the test to release it (no
# guessed sleep: on a loaded machine a fixed-length hook can end before the checks)

rel=$TEST_TMPDIR/release-create
rm -f "$rel"
bundle_set "$B" '.hooks={createRuntime: [{path: "/bin/sh", args: ["sh", "-c", "while [ ! -e \($r) ]; do sleep 0.05; done"]}]}' \
        --arg r "$rel"
id=$(new_id creating); track_container "$id"
"$SDRUN" --root "$SDRUN_ROOT" create --bundle "$B" "$id" &
cpid=$!
hook_waits() { pgrep -P "$cpid" -f "release-create" >/dev/null; }
wait_for hook_waits
s=$(sd state "$id")
is "$(jq -r .status <<<"$s")" creating "state while create runs: creating"
is "$(jq -r 'has("pid")' <<<"$s")" false "state while create runs: no pid"
ok_desc "state (creating) validates" validate "$id"
like "$(sd list | grep -- "$id")" "^$id +0 +creating " "list while create runs: creating, pid 0"
# start while create runs is serialised by the container's lock: it waits for create, then finds it
# created. It cannot end before the hook is released: its end is after the release's timestamp.
( rc=0; sd start "$id" >"$TEST_TMPDIR/start.out" 2>&1 || rc=$?; echo "$rc $(date +%s%N)" >"$TEST_TMPDIR/start.end" ) &
spid=$!
sleep 0.5 # give start the time to reach the lock (if it is slower, the check below still holds)
t_rel=$(date +%s%N)
touch "$rel"
wait "$spid"
read -r rc t_end <"$TEST_TMPDIR/start.end"
is "$rc" 0 "start while creating waits for create (the lock) and then starts it: $(cat "$TEST_TMPDIR/start.out")"
ok_desc "start ended after create was released ($(( (t_end - t_rel) / 1000000 )) ms after)" test "$t_end" -ge "$t_rel"
wait "$cpid"; rc=$?
is "$rc" 0 "the blocked create finished"
is "$(status_of "$id")" running "then: running"
sd delete --force "$id"
no_leftovers "$id"

# create killed with SIGKILL while the hook sleeps: stopped, never created; delete cleans up
# Killed while the createRuntime hook runs (a child of create), not after a guessed delay; the hook sleeps
# long enough for the checks before the kill on a loaded machine (it dies with create: PDEATHSIG).
bundle_set "$B" '.hooks.createRuntime[0]={path: $s, args: ["sleep", "30"]}' --arg s "$SLEEP"
hook_runs() { pgrep -P "$cpid" -f '^sleep 30$' >/dev/null; }
id=$(new_id killed); track_container "$id"
"$SDRUN" --root "$SDRUN_ROOT" create --bundle "$B" "$id" &
cpid=$!
ok_desc "create runs its createRuntime hook" wait_for hook_runs
is "$(status_of "$id")" creating "before the kill: creating"
unit=$(unit_of "$id")
kill -KILL "$cpid"; wait "$cpid" 2>/dev/null
seen=""
for i in $(seq 1 30); do
        s=$(status_of "$id"); seen+=" $s"
        sleep 0.1
done
is "$(status_of "$id")" stopped "create killed half-way: state says stopped"
unlike "$seen" created "create killed half-way: never reported created"
is "$(sd state "$id" | jq -r 'has("pid")')" false "create killed half-way: no pid"
ok_desc "create killed half-way: the init died with its creator" \
        sh -c "! pgrep -f '^sdrun:init' >/dev/null || ! grep -l -- '$id' /proc/\$(pgrep -d' ' -f '^sdrun:init' | sed 's/ /\/cgroup \/proc\//g')/cgroup"
rc=0; err=$(sd delete "$id" 2>&1) || rc=$?
is "$rc" 0 "create killed half-way: delete (no --force) cleans up: $err"
ok_desc "create killed half-way: the unit is gone" wait_for sh -c "[ -z \"\$(systemctl list-units --all --plain --no-legend -- $unit)\" ]"
no_leftovers "$id"

# delete --force of a creating container whose creator is alive is refused or waits; of a dead one works
id=$(new_id killed); track_container "$id"
"$SDRUN" --root "$SDRUN_ROOT" create --bundle "$B" "$id" &
cpid=$!
wait_for hook_runs
kill -KILL "$cpid"; wait "$cpid" 2>/dev/null
ok_desc "delete --force of a creating container with a dead creator" sd delete --force "$id"
no_leftovers "$id"

# ---------------------------------------------------------------------------------------------------------
# the polling race (what conmon's tests do): create in the background, poll state in a tight loop, start the
# moment it says created. 200 times: start must always succeed, state never shows a pid while creating.

bundle_set "$B" 'del(.hooks) | .process.args=["true"]'
N=${SDRUN_RACE_ITERATIONS:-200}
fails=0 bad_state=0 polls=0
for ((i = 0; i < N; i++)); do
        id=$(new_id race)
        "$SDRUN" --root "$SDRUN_ROOT" create --bundle "$B" "$id" >/dev/null 2>"$TEST_TMPDIR/race.err" &
        cpid=$!
        started=0
        for ((k = 0; k < 2000; k++)); do
                s=$("$SDRUN" --root "$SDRUN_ROOT" state "$id" 2>/dev/null) || continue
                polls=$((polls + 1))
                st=$(jq -r '"\(.status) \(.pid // "none")"' <<<"$s")
                case "$st" in
                "creating none") ;;
                created\ [1-9]*)
                        if "$SDRUN" --root "$SDRUN_ROOT" start "$id" 2>>"$TEST_TMPDIR/race.log"; then
                                started=1
                        else
                                echo "iteration $i: start failed after state said: $st" >>"$TEST_TMPDIR/race.log"
                        fi
                        break ;;
                *)
                        echo "iteration $i: bad state: $st" >>"$TEST_TMPDIR/race.log"
                        bad_state=$((bad_state + 1))
                        break ;;
                esac
        done
        wait "$cpid" || echo "iteration $i: create failed: $(cat "$TEST_TMPDIR/race.err")" >>"$TEST_TMPDIR/race.log"
        [ $started = 1 ] || fails=$((fails + 1))
        "$SDRUN" --root "$SDRUN_ROOT" delete --force "$id" >/dev/null 2>&1
done
diag "race: $N iterations, $polls state polls"
[ -s "$TEST_TMPDIR/race.log" ] && diag "$(head -n 20 "$TEST_TMPDIR/race.log")"
is "$fails" 0 "polling race: start failed in 0 of $N iterations"
is "$bad_state" 0 "polling race: state never showed anything but creating (no pid) or created (pid)"
is "$(ls "$SDRUN_ROOT" 2>/dev/null | grep -c '^race-' || true)" 0 "polling race: no state left"
ok_desc "polling race: no unit left" sh -c "[ -z \"\$(systemctl list-units --all --plain --no-legend -- 'sdrun-race-*')\" ]"

done_testing
