#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Suite "containerd": `ctr run --runc-binary RUNTIME --runc-systemd-cgroup --cgroup slice:prefix:name` through
# Debian's containerd 1.6 and its runc shim, the shim's whole verb set: create/start (run, run -d), exec
# --exec-id, ps, metrics (stats), events, pause/resume, kill --all, delete; each case for sdrun and for runc
# (the control) in the same test, and the stop/delete path timed against runc. (ctr 1.6 has no `task update`:
# the shim's Update is driven through the CRI in test-containerd-cri.sh.)
. "$(dirname "$0")/../integration/lib.sh"
. "$(dirname "$0")/lib-containerd.sh"

require_root
require_systemd
containerd_setup
IMG=$CTR_IMAGE

# containerd's event stream, for the /tasks/* events of both runtimes.
EVENTS=$TEST_TMPDIR/events.log
ctr events >"$EVENTS" 2>&1 &
events_pid=$!
cleanup_add kill "$events_pid"

# out_of VAR CMD...: CMD's stdout in VAR, its status in RC, its stderr in ERR.
out_of() {
        local __v=$1 __o
        shift
        RC=0
        __o=$("$@" 2>"$TEST_TMPDIR/.err" </dev/null) || RC=$?
        ERR=$(cat "$TEST_TMPDIR/.err")
        printf -v "$__v" '%s' "$__o"
}

for rt in sdrun runc; do
        diag "=== $rt"
        # --- run --rm: create, start, wait, delete -----------------------------------------------------------
        id=$(new_id "$rt")
        out_of out cr "$rt" run --rm "$IMG" "$id" echo hello
        is "$out|$RC" "hello|0" "$rt: ctr run --rm: the container's stdout, exit status 0" || diag "stderr: $ERR"
        id=$(new_id "$rt")
        out_of out cr "$rt" run --rm "$IMG" "$id" sh -c 'exit 3'
        is "$RC" 3 "$rt: ctr run --rm: the process's exit status is ctr's" || diag "stderr: $ERR"
        is "$(ctrn container ls -q | grep -cxF "$id")" 0 "$rt: run --rm leaves no container behind"

        # --- run -d: a long-running task in its scope ----------------------------------------------------------
        id=$(new_id "$rt")
        cleanup_add ctr_remove "$id"
        unit=sdtest-$id.scope
        out_of out cr "$rt" run -d "$IMG" "$id" sleep 1000
        is "$RC" 0 "$rt: ctr run -d" || diag "stderr: $ERR"
        wait_until 10 task_status_is "$id" RUNNING
        is "$(task_status "$id")" RUNNING "$rt: ctr task ls: RUNNING"
        pid=$(task_pid "$id")
        is "$(systemctl show -p ActiveState --value -- "$unit")" active "$rt: --cgroup system.slice:sdtest:ID is the active unit $unit"
        ok_desc "$rt: the task's pid $pid is in $unit" grep -q "^0::/system.slice/$unit\$" "/proc/$pid/cgroup"

        # --- exec --exec-id ------------------------------------------------------------------------------------
        out_of out ctrn task exec --exec-id e1 "$id" sh -c 'echo exec-ok; echo $$ >/tmp/exec-pid'
        is "$out|$RC" "exec-ok|0" "$rt: ctr task exec --exec-id: output and status" || diag "stderr: $ERR"
        out_of out ctrn task exec --exec-id e2 "$id" sh -c 'exit 5'
        is "$RC" 5 "$rt: ctr task exec: the process's exit status"
        # ctr's output of a short exec is sometimes lost (seen once with runc in CI: '' and no error): an empty
        # answer is asked again, up to three times, each retry said; a wrong mask is never retried.
        for try in 1 2 3; do
                out_of out ctrn task exec --exec-id "e3-$try" "$id" sh -c 'sed -n "s/^SigIgn:[[:space:]]*//p" /proc/1/status /proc/self/status | paste -sd /'
                [ -n "$out" ] && break
                diag "$rt: ctr task exec (SigIgn) printed nothing (exit $RC${ERR:+, stderr: $ERR}), try $try of 3"
        done
        is "$out" 0000000000000000/0000000000000000 "$rt: no signal ignored in the init and in an exec'd process (SIGPIPE at default)"
        out_of out ctrn task exec --exec-id e4 "$id" sh -c 'grep "^0::" /proc/self/cgroup'
        is "$out" "$(grep '^0::' "/proc/$pid/cgroup")" "$rt: the exec'd process is in the init's cgroup"

        # --- ps: the runtime's `ps --format json` --------------------------------------------------------------
        ctrn task exec -d --exec-id bg "$id" sleep 1001 >/dev/null 2>&1
        count_ps() { [ "$(ctrn task ps "$id" | awk 'NR > 1' | grep -c .)" = "$1" ]; }
        wait_until 10 count_ps 2
        out_of out ctrn task ps "$id"
        pids=$(awk 'NR > 1 { print $1 }' <<<"$out" | sort -n | paste -sd ' ')
        is "$(wc -w <<<"$pids")/$RC" 2/0 "$rt: ctr task ps lists the init and the exec'd process" || diag "$out $ERR"
        like " $pids " " $pid " "$rt: ctr task ps lists the init's pid $pid"

        # --- metrics (the shim's Stats, read from the container's cgroups) -------------------------------------
        ctrn task exec --exec-id burn "$id" sh -c 'i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done' >/dev/null 2>&1
        out_of out ctrn task metrics "$id"
        is "$RC" 0 "$rt: ctr task metrics" || diag "$ERR"
        if [ "$SDRUN_TEST_LAYOUT" = hybrid ]; then
                pc=$(awk '$1 == "pids.current" { print $2 }' <<<"$out")
                is "$pc" 2 "$rt: metrics: pids.current is the container's 2 processes"
                mu=$(awk '$1 == "memory.usage_in_bytes" { print $2 }' <<<"$out")
                ok_desc "$rt: metrics: memory.usage_in_bytes ($mu) is > 0" test "${mu:-0}" -gt 0
                cu=$(awk '$1 == "cpuacct.usage" { print $2 }' <<<"$out")
                # the busy loop took well under a minute; the host's (or the slice's) total is far more
                ok_desc "$rt: metrics: cpuacct.usage ($cu ns) is the container's own (> 0, < 60 s)" \
                        awk -v u="${cu:-0}" 'BEGIN { exit !(u > 0 && u < 60e9) }'
        elif grep -qw cpu /sys/fs/cgroup/cgroup.controllers; then
                cu=$(awk '$1 == "cpu.usage_usec" { print $2 }' <<<"$out")
                ok_desc "$rt: metrics: cpu.usage_usec ($cu) is the container's own (> 0, < 60 s)" \
                        awk -v u="${cu:-0}" 'BEGIN { exit !(u > 0 && u < 60e6) }'
        else
                # no controller in this cgroup v2 hierarchy (the unified box): the shim reports zeros for every
                # runtime; only the call itself is checked
                diag "$rt: metrics without controllers: $(awk 'NR > 2 { printf "%s=%s ", $1, $2 }' <<<"$out")"
        fi

        # --- pause / resume ------------------------------------------------------------------------------------
        out_of out ctrn task pause "$id"
        is "$RC|$(task_status "$id")" "0|PAUSED" "$rt: ctr task pause: PAUSED" || diag "$ERR"
        frozen=$(awk '/^State:/ { print $2 }' "/proc/$pid/status")
        out_of out ctrn task resume "$id"
        is "$RC|$(task_status "$id")" "0|RUNNING" "$rt: ctr task resume: RUNNING" || diag "$ERR"
        diag "$rt: state of the init while paused: $frozen"

        # --- kill --all, delete ---------------------------------------------------------------------------------
        out_of out ctrn task kill -a -s KILL "$id"
        is "$RC" 0 "$rt: ctr task kill --all -s KILL" || diag "$ERR"
        wait_until 10 task_status_is "$id" STOPPED
        is "$(task_status "$id")" STOPPED "$rt: the task is STOPPED after kill --all"
        out_of out ctrn task kill -a -s KILL "$id"
        is "$RC" 0 "$rt: ctr task kill --all on a stopped task exits 0 (as with runc)" || diag "$ERR"
        out_of out ctrn task rm "$id"
        is "$RC" 0 "$rt: ctr task delete" || diag "$ERR"
        out_of out ctrn container rm "$id"
        is "$RC" 0 "$rt: ctr container delete" || diag "$ERR"
        _scope_gone() { [ -z "$(systemctl list-units --all --plain --no-legend --no-pager -- "$1" 2>/dev/null)" ]; }
        wait_until 10 _scope_gone "$unit"
        ok_desc "$rt: $unit is gone after delete" _scope_gone "$unit"
        ok_desc "$rt: the runtime's state for $id is gone" test ! -e "/run/containerd/runc/$CTR_NS/$id"
        for ev in /tasks/create /tasks/start /tasks/exec-added /tasks/paused /tasks/resumed /tasks/exit /tasks/delete; do
                ok_desc "$rt: ctr events: $ev for $id" grep -q "$ev.*\"$id\"" "$EVENTS"
        done
done

# --- timing: stop/delete as fast as with runc ------------------------------------------------------------------
declare -A t_rm t_run
for rt in sdrun runc; do
        rms=() runs=()
        for i in 1 2 3 4 5; do
                id=$(new_id "t$rt")
                cleanup_add ctr_remove "$id"
                cr "$rt" run -d "$IMG" "$id" sleep 1000 >/dev/null 2>&1
                wait_until 10 task_status_is "$id" RUNNING
                t0=$(now)
                ctrn task rm -f "$id" >/dev/null 2>&1
                rms+=("$(elapsed "$t0")")
                ctrn container rm "$id" >/dev/null 2>&1
                id=$(new_id "t$rt")
                t0=$(now)
                cr "$rt" run --rm "$IMG" "$id" true >/dev/null 2>&1
                runs+=("$(elapsed "$t0")")
        done
        t_rm[$rt]=$(median "${rms[@]}")
        t_run[$rt]=$(median "${runs[@]}")
        diag "$rt: task delete --force of a running task: ${rms[*]}; run --rm true: ${runs[*]}"
done
not_slower "ctr task delete --force of a running task: median of 5" "${t_rm[sdrun]}" "${t_rm[runc]}"
not_slower "ctr run --rm true (create, start, wait, delete): median of 5" "${t_run[sdrun]}" "${t_run[runc]}"

done_testing
