#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Crash safety (issue 4): `sdrun create` killed with SIGKILL at each step of creation (SDRUN_TEST_STOP_AT,
# compiled in with -Dtest_injection=true), from outside while a createRuntime hook runs, and `sdrun start`
# killed mid-way. Within 5 s no unit, cgroup or process of the container remains; `state` in between says
# what is true (stopped, never created, never a pid); `delete` then removes the state cleanly.
. "$(dirname "$0")/lib.sh"

require_root
require_systemd

sd() { "$SDRUN" --root "$SDRUN_ROOT" "$@"; }
status_of() { sd state "$1" 2>/dev/null | jq -r .status; }
pid_of() { sd state "$1" 2>/dev/null | jq -r '.pid // empty'; }
is_status() { [ "$(status_of "$1")" = "$2" ]; }
unit_loaded() { [ -n "$(systemctl list-units --all --plain --no-legend --no-pager -- "$1" 2>/dev/null)" ]; }
wait5() { WAIT_FOR_TIMEOUT=5 wait_for "$@"; }
now_ms() { echo $(( $(date +%s%N) / 1000000 )); }

# Every cgroupfs directory a unit could have: unified (or hybrid's unified), name=systemd and v1 controllers.
cgroup_dirs_of() { # UNIT
        local d
        for d in /sys/fs/cgroup /sys/fs/cgroup/*; do
                [ -d "$d/machine.slice/$1" ] && echo "$d/machine.slice/$1"
        done
        return 0
}
procs_named() { # ID: pids whose cgroup or command line names the container
        local f p
        for f in /proc/[0-9]*/cgroup; do
                p=${f#/proc/}; p=${p%/cgroup}
                if grep -qF -- "$1" "$f" 2>/dev/null ||
                        { case "$(cat "/proc/$p/comm" 2>/dev/null)" in sdrun*) true ;; *) false ;; esac &&
                          tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null | grep -qF -- " $1"; }; then
                        [ "$p" = "$$" ] || [ "$p" = "$BASHPID" ] || echo "$p"
                fi
        done
}
# The cgroupfs directories systemd removes with the unit: unified, name=systemd and the v1 controllers it
# manages. The v1 hierarchies it does not manage (freezer, cpuset, a cpuacct of its own) the container joins
# before its init exists, so that its cgroup namespace's root there is its own: after a killed create they
# stay, empty, until `delete` of the leftover state removes them.
systemd_dirs_of() { # UNIT
        cgroup_dirs_of "$1" | grep -vE '^/sys/fs/cgroup/(freezer|cpuset|cpuacct|net_cls|net_prio|net_cls,net_prio|perf_event|hugetlb|rdma|misc)/' || true
}
# gone ID UNIT: nothing of the container on the host (the state directory aside, and the empty directories
# of the v1 hierarchies systemd does not manage, which its delete removes).
gone() {
        ! unit_loaded "$2" && [ -z "$(systemd_dirs_of "$2")" ] && [ -z "$(procs_named "$1")" ]
}
# all_gone ID UNIT: nothing at all, once delete has run.
all_gone() {
        gone "$1" "$2" && [ -z "$(cgroup_dirs_of "$2")" ]
}
describe_left() { # ID UNIT
        diag "unit: $(systemctl list-units --all --plain --no-legend --no-pager -- "$2" 2>&1)"
        diag "cgroups: $(cgroup_dirs_of "$2" | tr '\n' ' ')"
        local p
        for p in $(procs_named "$1"); do diag "process $p: $(tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null)"; done
}

B=$TEST_TMPDIR/b
make_bundle "$B" || bail "make_bundle failed"
bundle_set "$B" '.process.args=["sleep","1000"]'

if ! SDRUN_TEST_STOP_AT=none sd --version >/dev/null 2>&1; then
        bail "sdrun --version failed"
fi

# ---------------------------------------------------------------------------------------------------------
# The matrix: SIGKILL at each step.

times=()
for step in state scope clone prepared ready; do
        id=$(new_id "crash-$step"); track_container "$id"
        unit=$(unit_of "$id")
        rc=0
        SDRUN_TEST_STOP_AT=$step sd create --bundle "$B" "$id" >/dev/null 2>"$TEST_TMPDIR/err" || rc=$?
        t0=$(now_ms)
        is "$rc" 137 "[$step] create dies by SIGKILL (exit 137)" || diag "$(cat "$TEST_TMPDIR/err")"
        # state right away (no waiting): never created, never a pid
        st=$(sd state "$id" 2>/dev/null)
        is "$(jq -r .status <<<"$st")" stopped "[$step] state right after the crash: stopped (the creator is dead)"
        is "$(jq -r '.pid // "none"' <<<"$st")" none "[$step] state right after the crash reports no pid"
        if WAIT_FOR_TIMEOUT=5 wait_for gone "$id" "$unit"; then
                t=$(( $(now_ms) - t0 ))
                times+=("$step=${t}ms")
                _tap_result 0 "[$step] within 5 s no unit, cgroup or process remains (${t} ms)"
        else
                _tap_result 1 "[$step] within 5 s no unit, cgroup or process remains"
                describe_left "$id" "$unit"
        fi
        is "$(status_of "$id")" stopped "[$step] state says stopped"
        ok_desc "[$step] list shows it stopped" sh -c "$SDRUN --root $SDRUN_ROOT list --format json | jq -e --arg i $id '.[] | select(.id == \$i and .status == \"stopped\")'"
        ok_desc "[$step] start is refused" sh -c "! $SDRUN --root $SDRUN_ROOT start $id"
        ok_desc "[$step] delete (without --force) removes the leftover state" sd delete "$id"
        ok_desc "[$step] ... and every cgroup directory of the unit" all_gone "$id" "$unit"
        no_leftovers "$id"
        # The id is free again: a normal create works.
        ok_desc "[$step] the id can be created again" sd create --bundle "$B" "$id"
        is "$(status_of "$id")" created "[$step] and it is created"
        ok_desc "[$step] delete --force" sd delete --force "$id"
        no_leftovers "$id"
done
diag "time from the SIGKILL of create to nothing left: ${times[*]}"

# The windows again, many times. After the clone the init holds a copy of the lock fd until it closes it,
# and until create has committed it dies with its creator (PR_SET_PDEATHSIG): right after the creator's
# death the init may still be there, with its SIGKILL pending. State must say stopped (not creating, not
# created) and report no pid.
for step in clone ready; do
        bad=0
        for i in $(seq 1 15); do
                id=$(new_id "crash-$step$i"); track_container "$id"
                SDRUN_TEST_STOP_AT=$step sd create --bundle "$B" "$id" >/dev/null 2>&1
                st=$(sd state "$id" 2>/dev/null)
                if [ "$(jq -r '.status + ":" + (.pid // "none" | tostring)' <<<"$st")" != stopped:none ]; then
                        bad=$((bad + 1))
                        diag "[$step] round $i: state right after the crash: $st"
                fi
                sd delete --force "$id" >/dev/null 2>&1
        done
        is "$bad" 0 "[$step, 15 rounds] state right after the crash says stopped, with no pid"
done

# ---------------------------------------------------------------------------------------------------------
# Killed from outside while a createRuntime hook sleeps: state says creating (no pid) while the creator
# lives, stopped once it is dead.

id=$(new_id crash-ext); track_container "$id"
unit=$(unit_of "$id")
bundle_set "$B" '.hooks.createRuntime=[{"path":"/bin/sh","args":["sh","-c","cat >/dev/null; exec sleep 3"]}]'
"$SDRUN" --root "$SDRUN_ROOT" create --bundle "$B" "$id" >/dev/null 2>&1 &
creator=$! # sdrun itself (not a subshell running it)
wait_for is_status "$id" creating
is "$(status_of "$id")" creating "while the hook sleeps, state says creating"
is "$(sd state "$id" | jq -r '.pid // "none"')" none "creating: no pid"
ok_desc "the unit already exists while creating" unit_loaded "$unit"
kill -KILL "$creator"
wait "$creator" 2>/dev/null
t0=$(now_ms)
if WAIT_FOR_TIMEOUT=5 wait_for gone "$id" "$unit"; then
        t=$(( $(now_ms) - t0 ))
        _tap_result 0 "killed from outside during createRuntime: nothing left within 5 s (${t} ms)"
else
        _tap_result 1 "killed from outside during createRuntime: nothing left within 5 s"
        describe_left "$id" "$unit"
fi
is "$(status_of "$id")" stopped "state says stopped once the creator is dead"
ok_desc "delete removes the leftover state" sd delete "$id"
ok_desc "... and every cgroup directory of the unit" all_gone "$id" "$unit"
no_leftovers "$id"
bundle_set "$B" 'del(.hooks)'

# ---------------------------------------------------------------------------------------------------------
# `sdrun start` killed mid-way: while a startContainer hook (in the container, before exec) sleeps, and
# while a poststart hook (after exec) sleeps. Whatever start managed, state tells the truth and delete
# --force cleans up.

id=$(new_id crash-start); track_container "$id"
unit=$(unit_of "$id")
bundle_set "$B" '.hooks.startContainer=[{"path":"/bin/sleep","args":["sleep","2"]}]'
ok_desc "create (startContainer hook sleeps 2 s)" sd create --bundle "$B" "$id"
pid=$(pid_of "$id")
"$SDRUN" --root "$SDRUN_ROOT" start "$id" >/dev/null 2>&1 &
starter=$!
# Killed once the hook runs (a child of the init: "sleep 2"), then the outcome is awaited, not guessed.
hook_runs() { pgrep -P "$pid" -f '^sleep 2$' >/dev/null; }
ok_desc "the startContainer hook runs" wait_for hook_runs
kill -KILL "$starter"
wait "$starter" 2>/dev/null
execd() { [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = sleep ] && grep -q 1000 "/proc/$pid/cmdline"; }
init_dead() { [ ! -e "/proc/$pid" ] || [ "$(cut -d' ' -f3 "/proc/$pid/stat" 2>/dev/null)" = Z ]; }
settled() { ! hook_runs && { execd || init_dead; }; }
WAIT_FOR_TIMEOUT=10 wait_for settled
if execd; then
        is "$(status_of "$id")" running "start killed during startContainer: the init exec'd, state says running"
elif init_dead; then
        is "$(status_of "$id")" stopped "start killed during startContainer: the init is gone, state says stopped"
else
        _tap_result 1 "start killed during startContainer: the init neither exec'd nor died (comm $(cat /proc/$pid/comm 2>/dev/null))"
fi
ok_desc "delete --force" sd delete --force "$id"
ok_desc "nothing left after delete --force" wait5 all_gone "$id" "$unit"
no_leftovers "$id"

id=$(new_id crash-post); track_container "$id"
unit=$(unit_of "$id")
bundle_set "$B" 'del(.hooks) | .hooks.poststart=[{"path":"/bin/sh","args":["sh","-c","cat >/dev/null; exec sleep 3"]}]'
ok_desc "create (poststart hook sleeps 3 s)" sd create --bundle "$B" "$id"
pid=$(pid_of "$id")
"$SDRUN" --root "$SDRUN_ROOT" start "$id" >/dev/null 2>&1 &
starter=$!
wait_for execd
kill -KILL "$starter"
wait "$starter" 2>/dev/null
ok_desc "start killed during poststart: the user process runs" execd
is "$(status_of "$id")" running "start killed during poststart: state says running"
is "$(pid_of "$id")" "$pid" "and reports the init's pid"
ok_desc "delete --force" sd delete --force "$id"
ok_desc "nothing left after delete --force" wait_for all_gone "$id" "$unit"
no_leftovers "$id"

# ---------------------------------------------------------------------------------------------------------
# A cpuacct hierarchy mounted apart from cpu (as on these hybrid hosts) is one systemd never trims: create
# joins it before the init exists (the crash matrix above checks that delete of the leftover state removes
# it), a created container is in it (containerd's shim reads its metrics from create on), and delete
# removes the directory.

if grep -qE '^[0-9]+:cpuacct:' /proc/self/cgroup && [ -d /sys/fs/cgroup/cpuacct ]; then
        id=$(new_id crash-acct); track_container "$id"
        unit=$(unit_of "$id")
        bundle_set "$B" 'del(.hooks)'
        ok_desc "cpuacct: create" sd create --bundle "$B" "$id"
        pid=$(pid_of "$id")
        acct_of() { sed -n 's/^[0-9]*:cpuacct://p' "/proc/$1/cgroup"; }
        is "$(acct_of "$pid")" "$(sed -n 's/^0:://p' "/proc/$pid/cgroup")" "cpuacct: a created container's init is in the unit's path there"
        ok_desc "cpuacct: start" sd start "$id"
        ok_desc "cpuacct: delete --force" sd delete --force "$id"
        ok_desc "cpuacct: nothing left after delete" wait5 all_gone "$id" "$unit"
        no_leftovers "$id"
else
        skip "cpuacct: no cpuacct hierarchy of its own here"
fi

done_testing
