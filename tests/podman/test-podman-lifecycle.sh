#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Suite "podman": a detached container's life through Podman and conmon with the runtime chosen by
# $PODMAN_TEST_RUNTIME (sdrun by default; crun or runc as the control): init, run -d, exec (with and
# without -t), logs, top, stats, pause/unpause, update, restart, stop, kill, rm -f, run -it on a tty, and
# `podman ps` states, each checked on the host too: libpod-<id>.scope exists while the container runs, holds
# its processes, and is gone after rm.
. "$(dirname "$0")/../integration/lib.sh"
. "$(dirname "$0")/lib-podman.sh"

require_root
require_systemd
podman_setup
IMG=$PODMAN_IMAGE

not() { ! "$@"; }
ps_state() { # ps_state NAME: the first word of the container's STATUS in `podman ps -a` (Created, Up, ...)
        local s
        s=$(podman ps -a --filter "name=^$1\$" --format '{{.Status}}') || return 1
        echo "${s%% *}"
}
unit_procs() { # unit_procs UNIT: the pids of UNIT's cgroup and those below it
        local d
        d=$(cgroup_dir "$1") || return 1
        find "$d" -name cgroup.procs -exec cat {} + | sort -n
}

# --- create / init: the runtime's `create` runs, the init waits in the scope --------------------------------
c=created-$$
pm_out cid create --name "$c" "$IMG" sleep 1000
is "$PM_RC" 0 "podman create" || diag "$PM_ERR"
is "$(ps_state "$c")" Created "podman ps: created"
pm_out out init "$c"
is "$PM_RC" 0 "podman init (the runtime's create)" || diag "$PM_ERR"
is "$(pm_status "$c")" initialized "podman inspect: initialized"
unit=libpod-$cid.scope
ok_desc "host: $unit exists after init" scope_active "$unit"
ok_desc "host: the scope holds the waiting init" scope_holds "$unit" "$(pm_pid "$c")"
pm_out out start "$c"
is "$PM_RC" 0 "podman start of the initialized container" || diag "$PM_ERR"
is "$(ps_state "$c")" Up "podman ps: running"
pm_out out rm -f -t 0 "$c"
ok_desc "host: scope gone after rm -f" wait_for scope_gone "$unit"

# --- run -d --------------------------------------------------------------------------------------------------
c=life-$$
pm_out cid run -d --name "$c" "$IMG" sh -c 'echo line-out; echo line-err >&2; exec sleep 1000'
is "$PM_RC" 0 "run -d" || diag "$PM_ERR"
unit=libpod-$cid.scope
pid=$(pm_pid "$c")
is "$(ps_state "$c")" Up "podman ps: running"
ok_desc "host: $unit is active" scope_active "$unit"
ok_desc "host: the scope holds the container's init ($pid)" scope_holds "$unit" "$pid"
like "$(systemctl show -p Slice --value "$unit")" '^machine\.slice$' "host: the scope is in machine.slice"
like "$(cat "/proc/$pid/cmdline" | tr '\0' ' ')" '^sleep 1000 $' "host: the init is the container's sleep"

_logs_ready() { [ "$(podman logs "$c" 2>&1 | sort | paste -sd ' ')" = "line-err line-out" ]; }
ok_desc "logs: both lines of the container's output" wait_for _logs_ready
pm_is "logs: stdout alone on podman's stdout" line-out 0 logs "$c"

# --- exec ----------------------------------------------------------------------------------------------------
pm_is "exec: output" hi 0 exec "$c" echo hi
pm_is "exec: exit status" "" 5 exec "$c" sh -c 'exit 5'
pm_is "exec -u -w -e" "1000 /tmp v" 0 exec -u 1000 -w /tmp -e X=v "$c" sh -c 'echo $(id -u) $(pwd) $X'
pm_is "exec shares the container's pid namespace (its init is pid 1)" sleep 0 exec "$c" cat /proc/1/comm
out=$(echo from-stdin | podman exec -i "$c" cat 2>&1)
is "$out" from-stdin "exec -i: reads podman's stdin"
pm_out out exec "$c" /no/such/binary
is "$PM_RC" 127 "exec of a missing binary: podman exits 127"
pm_out out exec "$c" /bin/not-executable
is "$PM_RC" 126 "exec of a non-executable file: podman exits 126"
pm_out out exec -t "$c" sh -c 'tty; [ -t 0 ] && [ -t 1 ] && echo both-tty'
out=${out//$'\r'/}
like "$out" $'^/dev/pts/[0-9]+\nboth-tty$' "exec -t: stdin and stdout are a tty" || diag "$PM_ERR"
is "$PM_RC" 0 "exec -t: exit status 0"
pm_out out exec -t "$c" sh -c 'exit 4'
is "$PM_RC" 4 "exec -t: exit status"
pm_is "exec without -t: no tty" notty 0 exec "$c" sh -c '[ -t 1 ] && echo tty || echo notty'
pm_out out exec -d "$c" sleep 777
is "$PM_RC" 0 "exec -d" || diag "$PM_ERR"
_exec_in_scope() {
        local p
        for p in $(unit_procs "$unit"); do
                [ "$(tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null)" = "sleep 777 " ] && return 0
        done
        return 1
}
ok_desc "host: the exec'd process is in the container's scope" wait_for _exec_in_scope
ok_desc "host: no other libpod unit was made for the exec" \
        test "$(systemctl list-units --plain --no-legend --no-pager "libpod-*$cid*" | grep -vc conmon)" = 1

# --- top, stats ----------------------------------------------------------------------------------------------
pm_like "top: lists the init and the exec'd process" $'sleep 1000.*\n.*sleep 777|sleep 777.*\n.*sleep 1000' 0 top "$c" args
pm_like "top pid: includes pid 1" '(^|[[:space:]])1([[:space:]]|$)' 0 top "$c" pid
if have_resource_control; then
        pm_like "stats --no-stream: memory usage of the container" '^[0-9.]+[kMG]?B / [0-9.]+[kMGT]?B$' 0 \
                stats --no-stream --format '{{.MemUsage}}' "$c"
        pm_like "stats --no-stream: pids" '^[0-9]+$' 0 stats --no-stream --format '{{.PIDs}}' "$c"
        pids=$(podman stats --no-stream --format '{{.PIDs}}' "$c" 2>/dev/null)
        ok_desc "stats: the pid count ($pids) counts the init and the exec'd sleep" test "${pids:-0}" -ge 2
else
        skip "stats: no memory/pids controller in the $SDRUN_TEST_LAYOUT layout"
fi

# --- pause / unpause -----------------------------------------------------------------------------------------
pm_out out pause "$c"
is "$PM_RC" 0 "pause" || diag "$PM_ERR"
is "$(ps_state "$c")" Paused "podman ps: paused"
frozen() { # frozen PID: the process's cgroup is frozen (v1 freezer FROZEN, or the v2 freezer)
        local d
        if d=$(proc_cgroup_dir "$1" freezer) && [ -f "$d/freezer.state" ] && [ "$(cat "$d/freezer.state")" = FROZEN ]; then
                return 0
        fi
        d=$(proc_cgroup_dir "$1" "") && [ "$(sed -n 's/^frozen //p' "$d/cgroup.events")" = 1 ]
}
ok_desc "host: the container's init is frozen" frozen "$pid"
pm_out out exec "$c" true
ok_desc "exec into a paused container fails" test "$PM_RC" != 0
pm_out out unpause "$c"
is "$PM_RC" 0 "unpause" || diag "$PM_ERR"
is "$(ps_state "$c")" Up "podman ps: running after unpause"
ok_desc "host: the init is thawed" not frozen "$pid"
pm_is "exec works after unpause" ok 0 exec "$c" echo ok

# --- update --------------------------------------------------------------------------------------------------
if have_resource_control; then
        pm_out out update --memory 96m "$c"
        is "$PM_RC" 0 "update --memory 96m" || diag "$PM_ERR"
        if [ "$SDRUN_TEST_LAYOUT" = hybrid ]; then
                d=$(proc_cgroup_dir "$pid" memory) && got=$(cat "$d/memory.limit_in_bytes")
        else
                d=$(proc_cgroup_dir "$pid" "") && got=$(cat "$d/memory.max")
        fi
        is "$got" 100663296 "host: the container's memory limit is 96 MiB after update"
        if [ "$PODMAN_TEST_RUNTIME" = sdrun ]; then
                prop=MemoryMax
                [ "$SDRUN_TEST_LAYOUT" = hybrid ] && prop=MemoryLimit
                is "$(unit_prop "$unit" $prop)" 100663296 "systemctl show: $prop=96M after update"
        fi
else
        skip "update --memory: no memory controller in the $SDRUN_TEST_LAYOUT layout"
fi

# --- restart -------------------------------------------------------------------------------------------------
pm_out out restart -t 1 "$c"
is "$PM_RC" 0 "restart" || diag "$PM_ERR"
is "$(ps_state "$c")" Up "podman ps: running after restart"
pid2=$(pm_pid "$c")
ok_desc "restart: a new init ($pid -> $pid2)" test "$pid2" != "$pid" -a "$pid2" -gt 0
ok_desc "host: the old init is gone" not kill -0 "$pid"
unit=libpod-$cid.scope
ok_desc "host: $unit active again after restart" scope_active "$unit"
ok_desc "host: the scope holds the new init" scope_holds "$unit" "$pid2"
pid=$pid2

# --- stop ----------------------------------------------------------------------------------------------------
t0=$SECONDS
pm_out out stop -t 2 "$c"
took=$((SECONDS - t0))   # the stop alone: the checks below are podman calls of their own
is "$PM_RC" 0 "stop" || diag "$PM_ERR"
is "$(ps_state "$c")" Exited "podman ps: exited after stop"
is "$(podman inspect --format '{{.State.ExitCode}}' "$c")" 137 "stop: sleep as pid 1 ignores SIGTERM, SIGKILL after the timeout: 137"
ok_desc "stop took the timeout, not much more ($took s)" test "$took" -le 10
ok_desc "host: the init is gone" not kill -0 "$pid"
_no_procs() { [ -z "$(unit_procs "$unit" 2>/dev/null)" ]; }
ok_desc "host: no process left in the scope" _no_procs
pm_out out start "$c"
is "$PM_RC" 0 "start of the exited container" || diag "$PM_ERR"
is "$(ps_state "$c")" Up "podman ps: running after start"
ok_desc "host: the scope is back" wait_for scope_active "$unit"

# --- kill ----------------------------------------------------------------------------------------------------
pm_out out kill -s USR1 "$c"
is "$PM_RC" 0 "kill -s USR1 (ignored by pid 1)" || diag "$PM_ERR"
is "$(ps_state "$c")" Up "still running after an ignored signal"
pm_out out kill "$c"
is "$PM_RC" 0 "kill (SIGKILL)" || diag "$PM_ERR"
pm_wait_status "$c" exited
is "$(ps_state "$c")" Exited "podman ps: exited after kill"
is "$(podman inspect --format '{{.State.ExitCode}}' "$c")" 137 "kill: exit code 137"
pm_out out rm "$c"
is "$PM_RC" 0 "rm of the exited container" || diag "$PM_ERR"
ok_desc "host: scope gone after rm" wait_for scope_gone "$unit"
is "$(podman ps -a -q)" "" "no container left"

# --- a process that traps SIGTERM: stop with a clean exit ----------------------------------------------------
c=term-$$
pm_out cid run -d --name "$c" "$IMG" sh -c 'trap "exit 42" TERM; while :; do sleep 0.1; done'
is "$PM_RC" 0 "run -d a shell that traps SIGTERM" || diag "$PM_ERR"
pm_out out stop -t 10 "$c"
is "$(podman inspect --format '{{.State.ExitCode}}' "$c")" 42 "stop delivers SIGTERM: exit code 42"
pm_out out rm "$c"

# --- rm -f of a running container ----------------------------------------------------------------------------
c=rmf-$$
pm_out cid run -d --name "$c" "$IMG" sleep 1000
unit=libpod-$cid.scope
pid=$(pm_pid "$c")
ok_desc "host: $unit active" scope_active "$unit"
pm_out out rm -f -t 0 "$c"
is "$PM_RC" 0 "rm -f of a running container" || diag "$PM_ERR"
ok_desc "host: scope gone after rm -f" wait_for scope_gone "$unit"
ok_desc "host: its init is gone" not kill -0 "$pid"
pm_out out inspect "$c"
ok_desc "podman no longer knows it" test "$PM_RC" != 0

# --- run -it on a tty driven from the test (script(1) gives podman a pty) -------------------------------------
if command -v script >/dev/null; then
        out=$( { sleep 1; printf 'echo $((6*7)); tty\n'; sleep 1; printf 'exit 7\n'; sleep 1; } |
                timeout 60 script -qec "podman run -it --rm --name tty-$$ $IMG sh" /dev/null 2>&1)
        rc=$?
        out=${out//$'\r'/}
        like "$out" $'(^|\n)42\n' "run -it: the shell read and ran the command from the tty"
        like "$out" $'(^|\n)/dev/pts/[0-9]+\n' "run -it: the container's stdin is a pty"
        is "$rc" 7 "run -it: exit status of the shell"
        out=$(timeout 60 script -qec "podman run -t --rm $IMG sh -c 'stty size; [ -t 0 ] && echo in-tty'" /dev/null </dev/null 2>&1)
        out=${out//$'\r'/}
        like "$out" 'in-tty' "run -t: the process's stdin is a tty" || diag "$out"
else
        bail "script(1) is missing (package util-linux)"
fi

is "$(podman ps -a -q)" "" "no container left at the end"
ok_desc "host: no libpod scope left" sh -c '[ -z "$(systemctl list-units --all --plain --no-legend --no-pager "libpod-*" | grep -v conmon)" ]'

done_testing
