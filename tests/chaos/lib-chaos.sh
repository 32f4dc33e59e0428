# SPDX-License-Identifier: LGPL-2.1-or-later
# shellcheck shell=bash
#
# The chaos driver's load and checks (issue 35), shared by tests/chaos/chaos.sh and the constrained callers it
# starts (`chaos.sh __lifecycle`, run under `ulimit -n 64` or in a 32 MiB memory cgroup). No TAP here: every
# runtime call is one line in the call log, and the driver turns the log into results.
#
# Environment in: CHAOS_RT (sdrun | crun | runc), CHAOS_ROOT (state directory of that runtime), CHAOS_LOG (the
# call log, appended to: lines are shorter than PIPE_BUF, so the workers' appends do not interleave),
# CHAOS_PHASE (the fault being injected), CHAOS_BOUND (seconds a call may take before it counts as a hang),
# SDRUN (the sdrun binary).

: "${CHAOS_BOUND:=60}"

# rt_cmd: the runtime's command line, the same matrix for the three: systemd cgroups (a transient scope for
# each container), its own --root.
rt_cmd() {
        case "$CHAOS_RT" in
        sdrun) echo "$SDRUN" --root "$CHAOS_ROOT" ;;
        crun) echo crun --systemd-cgroup --root "$CHAOS_ROOT" ;;
        runc) echo runc --systemd-cgroup --root "$CHAOS_ROOT" ;;
        *) echo "chaos: unknown runtime $CHAOS_RT" >&2; return 1 ;;
        esac
}

# call VERB ID [OPTIONS...] [-- ARGS...]: run the runtime's `VERB OPTIONS ID ARGS` with a bound; one line in
# the call log:
#   phase runtime worker verb id rc ms class message
# class: ok; err (non-zero with a message on stderr); silent (non-zero with nothing on stderr); hang (killed by
# the bound). The output is left in $CALL_OUT, stderr in $CALL_ERR, the status in $CALL_RC.
CALL_OUT="" CALL_ERR="" CALL_RC=0
call() {
        local verb=$1 id=$2 t0 t1 ms class msg errf opts=() tail=()
        shift 2
        while [ $# -gt 0 ] && [ "$1" != -- ]; do opts+=("$1"); shift; done
        [ "${1:-}" = -- ] && shift
        tail=("$@")
        errf=${CHAOS_TMP:-/tmp}/.err.$BASHPID
        # files, not $(...): a container's init inherits the caller's stdout, a pipe would be held open by it
        t0=$EPOCHREALTIME
        # shellcheck disable=SC2046
        timeout -k 5 "$CHAOS_BOUND" $(rt_cmd) "$verb" ${opts[@]+"${opts[@]}"} "$id" ${tail[@]+"${tail[@]}"} \
                >"$errf.out" 2>"$errf" </dev/null
        CALL_RC=$?
        t1=$EPOCHREALTIME
        CALL_ERR=$(<"$errf")
        CALL_OUT=$(<"$errf.out")
        rm -f "$errf" "$errf.out"
        ms=$(((${t1/./} - ${t0/./}) / 1000))
        if [ "$CALL_RC" = 0 ]; then
                class=ok
        elif [ "$CALL_RC" = 124 ] || [ "$CALL_RC" = 137 ]; then
                class=hang
        elif [ -z "${CALL_ERR//[[:space:]]/}" ]; then
                class=silent
        else
                class=err
        fi
        msg=${CALL_ERR//$'\n'/ | }
        msg=${msg//$'\t'/ }
        printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%.300s\n' "${CHAOS_PHASE:-none}" "$CHAOS_RT" "${CHAOS_WORKER:--}" \
                "$verb" "$id" "$CALL_RC" "$ms" "$class" "$msg" >>"$CHAOS_LOG"
        return "$CALL_RC"
}

# note KIND ID TEXT: a finding that is not a call (a state that lies, a leftover): one line in the call log.
note() {
        printf '%s\t%s\t%s\t%s\t%s\t-\t0\t%s\t%.300s\n' "${CHAOS_PHASE:-none}" "$CHAOS_RT" "${CHAOS_WORKER:--}" \
                check "$2" "$1" "$3" >>"$CHAOS_LOG"
}

# pid_alive PID: PID exists and is not a zombie.
pid_alive() {
        local s
        [ -n "$1" ] && [ "$1" != 0 ] || return 1
        s=$(cut -d' ' -f3 "/proc/$1/stat" 2>/dev/null) || return 1
        [ -n "$s" ] && [ "$s" != Z ] && [ "$s" != X ]
}

# state_of ID: sets ST_STATUS and ST_PID from the runtime's `state` (empty when the call failed).
ST_STATUS="" ST_PID=""
state_of() {
        ST_STATUS="" ST_PID=""
        call state "$1" || return 1
        [[ "$CALL_OUT" =~ \"status\":\ *\"([a-z]+)\" ]] && ST_STATUS=${BASH_REMATCH[1]}
        [[ "$CALL_OUT" =~ \"pid\":\ *([0-9]+) ]] && ST_PID=${BASH_REMATCH[1]}
        return 0
}

# check_state ID: `state` does not lie: running/created/paused with a dead init, or stopped with a live one,
# is a "lie" line in the log. Returns 0 when the state could be read.
check_state() {
        state_of "$1" || return 1
        case "$ST_STATUS" in
        running | created | paused)
                # read again before calling it a lie: the init may have died between the two reads
                if ! pid_alive "$ST_PID"; then
                        state_of "$1" || return 1
                        if [ "$ST_STATUS" != stopped ] && ! pid_alive "$ST_PID"; then
                                note lie "$1" "state says $ST_STATUS but its init $ST_PID is dead"
                        fi
                fi
                ;;
        stopped)
                if [ -n "$ST_PID" ] && [ "$ST_PID" != 0 ] && pid_alive "$ST_PID" &&
                        grep -qF -- "$1" "/proc/$ST_PID/cgroup" 2>/dev/null; then
                        note lie "$1" "state says stopped but its init $ST_PID is alive"
                fi
                ;;
        esac
        return 0
}

# wait_stopped ID: poll `state` until it says stopped (or the container is gone), at most 10 s of polls.
# A container whose init is dead and that still reads running at the end is a lie.
wait_stopped() {
        local i pid=""
        for ((i = 0; i < 100; i++)); do
                state_of "$1" || return 0
                if [ "$ST_STATUS" = stopped ]; then
                        if [ -n "$ST_PID" ] && [ "$ST_PID" != 0 ] && pid_alive "$ST_PID" &&
                                grep -qF -- "$1" "/proc/$ST_PID/cgroup" 2>/dev/null; then
                                note lie "$1" "state says stopped but its init $ST_PID is alive"
                        fi
                        return 0
                fi
                [ -n "$ST_PID" ] && pid=$ST_PID
                sleep 0.1
        done
        if [ -n "$pid" ] && ! pid_alive "$pid"; then
                note lie "$1" "state says $ST_STATUS 10 s after its init $pid died"
        else
                note stuck "$1" "state still says $ST_STATUS 10 s after SIGKILL"
        fi
        return 1
}

# cleanup_id ID: what an engine does after a failure: delete -f. A container that is already gone is fine.
cleanup_id() {
        call delete "$1" --force && return 0
        [[ "$CALL_ERR" =~ (not exist|not found|No such) ]] && return 0
        return 1
}

# lifecycle ID BUNDLE N: one container through create, start, exec, (pause/resume, update), kill, delete,
# checking state along the way. N picks the variants: every 3rd pauses, every 4th updates, every 5th is
# killed from outside (not through the runtime: then `state` must notice by itself).
lifecycle() {
        local id=$1 b=$2 n=$3 pid
        call create "$id" --bundle "$b" || { cleanup_id "$id"; return 1; }
        call start "$id" || { cleanup_id "$id"; return 1; }
        check_state "$id"
        pid=$ST_PID
        call exec "$id" -- true || { cleanup_id "$id"; return 1; }
        if ((n % 3 == 0)); then
                call pause "$id" || { cleanup_id "$id"; return 1; }
                check_state "$id"
                call resume "$id" || { cleanup_id "$id"; return 1; }
        fi
        if ((n % 4 == 1)); then
                call update "$id" --pids-limit 200 || { cleanup_id "$id"; return 1; }
        fi
        if ((n % 5 == 2)) && [ -n "$pid" ] && grep -qF -- "$id" "/proc/$pid/cgroup" 2>/dev/null; then
                kill -KILL "$pid" 2>/dev/null
        else
                call kill "$id" -- KILL || { cleanup_id "$id"; return 1; }
        fi
        wait_stopped "$id" || { cleanup_id "$id"; return 1; }
        call delete "$id" || { cleanup_id "$id"; return 1; }
        return 0
}

# worker W BUNDLE COUNTFILE STOPFILE: lifecycles until STOPFILE exists; one line in COUNTFILE per container.
# Workers 0 and 4 reuse one id back to back; the others take a new id each time.
worker() {
        local w=$1 b=$2 cf=$3 sf=$4 n=0 id
        CHAOS_WORKER=w$w
        while [ ! -e "$sf" ]; do
                if ((w % 4 == 0)); then
                        id=chaos-$CHAOS_RT-$CHAOS_TAG-w$w-reuse
                else
                        id=chaos-$CHAOS_RT-$CHAOS_TAG-w$w-$n-$RANDOM
                fi
                lifecycle "$id" "$b" "$n"
                echo "$id" >>"$cf"
                n=$((n + 1))
        done
}
