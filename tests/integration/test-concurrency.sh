#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Concurrency: 50 containers created, started and deleted by 8 parallel workers; 16 loops of foreground
# `run` side by side (issue 18's scale goal); one id reused back to back under load. Every sdrun call must
# succeed within a bound (a hung call is a deadlock and fails the test); afterwards nothing of any of them
# may remain: no loaded unit, no cgroup, no mount, no state directory, no process.
# In CI the two box lanes share the load phases (as test-chaos shares its faults): the hybrid lane runs the
# workers, the unified lane the run loops, and each half the id-reuse pairs; every lane still checks that
# nothing remains, in its own cgroup layout. Outside CI, and anywhere else, every phase runs.
. "$(dirname "$0")/lib.sh"
require_root
require_systemd

N=${SDRUN_CONCURRENCY_CONTAINERS:-50}
WORKERS=${SDRUN_CONCURRENCY_WORKERS:-8}
RUN_LOOPS=${SDRUN_CONCURRENCY_RUN_LOOPS:-16} # concurrent loops of foreground `run`
RUNS_PER_LOOP=${SDRUN_CONCURRENCY_RUNS_PER_LOOP:-5}
CALL_TIMEOUT=60      # seconds for one sdrun call: far above its normal ~20 ms
TOTAL_TIMEOUT=300    # seconds for the whole run
REUSE_PAIRS=30
prefix=cc$$x         # in every id, unit name and cgroup of this test (ids have no '-' to keep it greppable)
do_workers=1 do_runloops=1
if [ -n "${CI:-}" ]; then
        case "${SDRUN_TEST_LAYOUT:-}" in
        hybrid) do_runloops=0 REUSE_PAIRS=15 ;;
        unified) do_workers=0 REUSE_PAIRS=15 ;;
        esac
fi
[ $do_workers = 1 ] || diag "CI: the workers phase runs in the hybrid lane"
[ $do_runloops = 1 ] || diag "CI: the run loops run in the unified lane"

B=$TEST_TMPDIR/bundle
make_bundle "$B" || bail "cannot make the bundle"
bundle_set "$B" '.process.args=["sleep","60"]' || bail "cannot edit the bundle"

ids=()
for ((i = 0; i < N; i++)); do
        ids+=("$(printf '%s%03d' "$prefix" "$i")")
        track_container "${ids[i]}"
done

# sd ARGS...: one bounded sdrun call; its failure (or timeout: exit 124/137) goes to the worker's log.
# Output goes through a file, not a pipe: the init of `create` inherits stdout and would hold a pipe open.
sd() {
        local rc=0
        timeout --kill-after=5 "$CALL_TIMEOUT" "$SDRUN" --root "$SDRUN_ROOT" "$@" >"$log.out" 2>&1 </dev/null || rc=$?
        if [ $rc != 0 ]; then
                echo "sdrun $*: exit $rc: $(head -c 2000 "$log.out")" >>"$log"
                return 1
        fi
        cat "$log.out"
}

status_of() {
        sd state "$1" | jq -r .status 2>/dev/null
}

# The id-reuse runs below (after the workers).
reuse=${prefix}reuse
track_container "$reuse"

# worker W: containers W, W+WORKERS, ...: create, check created, start, check running, then stop it —
# even ones with delete --force, odd ones with kill + wait for stopped + delete.
worker() {
        local w=$1 i id st k
        log=$TEST_TMPDIR/worker-$w.log
        : >"$log"
        for ((i = w; i < N; i += WORKERS)); do
                id=${ids[i]}
                sd create --bundle "$B" "$id" >/dev/null || continue
                st=$(status_of "$id")
                [ "$st" = created ] || { echo "$id: state after create is \"$st\", not created" >>"$log"; }
                sd start "$id" >/dev/null || { sd delete --force "$id" >/dev/null; continue; }
                st=$(status_of "$id")
                [ "$st" = running ] || { echo "$id: state after start is \"$st\", not running" >>"$log"; }
                if ((i % 2 == 0)); then
                        sd delete --force "$id" >/dev/null || continue
                else
                        sd kill "$id" KILL >/dev/null || continue
                        for ((k = 0; k < 500; k++)); do
                                st=$(status_of "$id")
                                [ "$st" = stopped ] && break
                                sleep 0.02
                        done
                        [ "$st" = stopped ] || echo "$id: not stopped 10 s after kill KILL (\"$st\")" >>"$log"
                        sd delete "$id" >/dev/null || continue
                fi
                echo "done $id" >>"$TEST_TMPDIR/done"
        done
}

# wait_workers: wait for the background jobs in pids (started at t0); one still running after
# TOTAL_TIMEOUT is stuck: it is killed and hung=1.
wait_workers() {
        local p
        hung=0
        for p in "${pids[@]}"; do
                while kill -0 "$p" 2>/dev/null; do
                        if ((SECONDS - t0 > TOTAL_TIMEOUT)); then
                                hung=1
                                pkill -KILL -P "$p" 2>/dev/null
                                kill -KILL "$p" 2>/dev/null
                                break
                        fi
                        sleep 0.1
                done
                wait "$p" 2>/dev/null
        done
}

# in_parallel FN N: FN 0 .. FN N-1 in the background, then wait_workers (bounded by TOTAL_TIMEOUT).
in_parallel() {
        local fn=$1 n=$2 i
        pids=()
        for ((i = 0; i < n; i++)); do
                "$fn" "$i" &
                pids+=($!)
        done
        wait_workers
}

if [ $do_workers = 1 ]; then
        t0=$SECONDS
        in_parallel worker "$WORKERS"
        elapsed=$((SECONDS - t0))
        diag "$N containers, $WORKERS workers: ${elapsed}s"

        ok_desc "all workers finished within ${TOTAL_TIMEOUT}s (no deadlock)" test "$hung" = 0

        errors=$(cat "$TEST_TMPDIR"/worker-[0-9]*.log 2>/dev/null)
        [ -z "$errors" ] || printf '%s\n' "$errors" | head -20 | while IFS= read -r l; do diag "$l"; done
        ok_desc "no sdrun call failed, timed out or reported a wrong state" test -z "$errors"

        done_n=0
        [ -s "$TEST_TMPDIR/done" ] && done_n=$(wc -l <"$TEST_TMPDIR/done")
        is "$done_n" "$N" "every container went through create, start and delete"
fi

# 16 loops of foreground `run` (create + start + wait + delete in one command) side by side, each with ids
# of its own: every run exits 0 with the container's exit status (true), within the bound.
runloop() {
        local l=$1 j id rc
        local err=$TEST_TMPDIR/runloop-$l.err
        : >"$TEST_TMPDIR/runloop-$l.log"
        for ((j = 0; j < RUNS_PER_LOOP; j++)); do
                id=$(printf '%srun%02d%02d' "$prefix" "$l" "$j")
                rc=0
                timeout --kill-after=5 "$CALL_TIMEOUT" "$SDRUN" --root "$SDRUN_ROOT" run --bundle "$RB" "$id" \
                        >/dev/null 2>"$err" </dev/null || rc=$?
                if [ $rc != 0 ]; then
                        echo "run $id: exit $rc: $(tail -n 1 "$err")" >>"$TEST_TMPDIR/runloop-$l.log"
                        "$SDRUN" --root "$SDRUN_ROOT" delete --force "$id" >/dev/null 2>&1
                fi
        done
}
if [ $do_runloops = 1 ]; then
        RB=$TEST_TMPDIR/runbundle
        make_bundle "$RB" || bail "cannot make the bundle"
        bundle_set "$RB" '.process.args=["true"]' || bail "cannot edit the bundle"
        for ((l = 0; l < RUN_LOOPS; l++)); do
                for ((j = 0; j < RUNS_PER_LOOP; j++)); do
                        track_container "$(printf '%srun%02d%02d' "$prefix" "$l" "$j")"
                done
        done
        t0=$SECONDS
        in_parallel runloop "$RUN_LOOPS"
        diag "$RUN_LOOPS concurrent run loops x $RUNS_PER_LOOP runs: $((SECONDS - t0))s"
        errors=$(cat "$TEST_TMPDIR"/runloop-[0-9]*.log 2>/dev/null)
        [ -z "$errors" ] || printf '%s\n' "$errors" | head -20 | while IFS= read -r l; do diag "$l"; done
        ok_desc "$RUN_LOOPS concurrent run loops finished within ${TOTAL_TIMEOUT}s" test "$hung" = 0
        is "$errors" "" "$((RUN_LOOPS * RUNS_PER_LOOP)) runs in $RUN_LOOPS concurrent loops all exit 0"
fi

# Id reuse back to back under load (the flake issue 18 reports from bench/run: its peak-RSS `run` under GNU
# time reuses the id, and so the unit and machine name, of the `run` just before it). 30 pairs of `run` of one
# id, the second under /usr/bin/time as bench/run does, beside two CPU hogs. Every run must exit 0.
bundle_set "$B" '.process.args=["true"]' || bail "cannot edit the bundle"
hogs=()
for k in 1 2; do
        (while :; do :; done) &
        hogs+=($!)
done
rfail=""
runs=0
if [ -x /usr/bin/time ]; then
        for ((i = 0; i < REUSE_PAIRS; i++)); do
                for wrap in "" "/usr/bin/time -f %M -o $TEST_TMPDIR/rss"; do
                        rc=0
                        # shellcheck disable=SC2086 # $wrap is a command prefix
                        timeout --kill-after=5 "$CALL_TIMEOUT" $wrap "$SDRUN" --root "$SDRUN_ROOT" run --bundle "$B" "$reuse" \
                                >/dev/null 2>"$TEST_TMPDIR/reuse.err" </dev/null || rc=$?
                        runs=$((runs + 1))
                        if [ "$rc" != 0 ]; then
                                rfail+="run $runs${wrap:+ (under GNU time)}: exit $rc: $(tail -1 "$TEST_TMPDIR/reuse.err"); "
                                "$SDRUN" --root "$SDRUN_ROOT" delete --force "$reuse" >/dev/null 2>&1
                        fi
                done
        done
else
        rfail="/usr/bin/time is missing (Debian package time)"
fi
kill "${hogs[@]}" 2>/dev/null
wait "${hogs[@]}" 2>/dev/null
is "$rfail" "" "$((REUSE_PAIRS * 2)) runs of one id back to back under load ($runs done) all exit 0"
machine_gone() { ! machinectl show "$reuse" >/dev/null 2>&1; }
if WAIT_FOR_TIMEOUT=5 wait_for machine_gone; then
        _tap_result 0 "the reused id leaves no machine registered (within 5 s)"
else
        _tap_result 1 "the reused id leaves no machine registered (within 5 s)"
fi

# Leftovers, all at once: the prefix is in every id, unit name and cgroup path of this test.
units=$(systemctl list-units --all --plain --no-legend --no-pager 2>/dev/null | grep -F -- "$prefix")
is "$units" "" "no unit of the test's containers is loaded"

cgroups=$(find /sys/fs/cgroup -maxdepth 6 -type d -name "*$prefix*" 2>/dev/null)
is "$cgroups" "" "no cgroup of the test's containers remains"

mounts=$(grep -F -- "$prefix" /proc/self/mountinfo)
is "$mounts" "" "no mount naming the test's containers remains"

states=$(find "$SDRUN_ROOT" -maxdepth 1 -name "$prefix*" 2>/dev/null)
is "$states" "" "no state directory remains"

procs=""
for f in /proc/[0-9]*/cgroup; do
        grep -qF -- "$prefix" "$f" 2>/dev/null || continue
        f=${f#/proc/}
        procs+=" ${f%/cgroup}"
done
is "$procs" "" "no process remains in a cgroup of the test's containers"

listed=$("$SDRUN" --root "$SDRUN_ROOT" list -q 2>/dev/null | grep -cF -- "$prefix")
is "$listed" 0 "sdrun list shows none of them"

done_testing
