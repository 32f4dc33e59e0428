#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Chaos driver (issue 35): faults of systemd itself (daemon-reload, daemon-reexec, machined and journald
# restarted, stopped, masked, a bus policy that refuses StartTransientUnit), a runtime SIGKILLed in the middle
# of each verb, a --root on a full tmpfs, `ulimit -n 64`, a caller in a 32 MiB memory cgroup: each injected
# on its own while N workers run containers through create, start, exec, pause/resume, update, kill and delete,
# beside long-lived containers that must come through untouched. The same matrix and the same checks for
# sdrun and for crun and runc (--systemd-cgroup) as controls.
#
#   chaos.sh [--short | --full] [--runtimes sdrun,crun,runc] [--workers N] [--containers N] [--long N]
#            [--soak N] [--faults a,b,...] [--results FILE] [--report FILE]
#
#   --short         (the default; the meson test test-chaos) sdrun only, ~300 containers, every fault once,
#                   short fault windows, 6 long-lived containers
#                   (in CI, with $CI set, the hybrid box runs every other fault and the unified box the rest)
#   --full          (scripts/test --chaos) sdrun, crun and runc; 30 s fault windows; 20 long-lived; a soak
#   --soak N        N containers through the workers with no fault, sampling PID 1 and dbus-daemon every
#                   1,000 (--soak-step) and the create+start latency per thousand
#   --results FILE  the per runtime x fault outcome lines (TSV), --report FILE the Markdown report of them
#
# The checks after each fault: every call exited 0 or non-zero with a message (none hit the bound of
# CHAOS_BOUND s, none failed silently), and under daemon-reload/reexec and the machined and journald faults,
# every call exited 0; `state` never said running for a dead init nor stopped for a live one;
# the long-lived containers run with the same init, unit properties and cgroup files; nothing of the phase's
# containers is left (unit, cgroup directory in any hierarchy, mount, state directory, process, machined
# registration). At the end, also: no fd more in PID 1 or dbus-daemon than before. Prints TAP: the results for
# sdrun are tests; crun's and runc's are recorded (controls), not tests.
#
# `chaos.sh __lifecycle RT ROOT LOG PHASE BUNDLE COUNT PREFIX` is the constrained caller the ulimit and memcg
# faults start: COUNT lifecycles, no TAP.
set -uo pipefail

CHAOS_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)

if [ "${1:-}" = __lifecycle ]; then
        # shellcheck source=tests/chaos/lib-chaos.sh
        . "$CHAOS_DIR/lib-chaos.sh"
        CHAOS_RT=$2 CHAOS_ROOT=$3 CHAOS_LOG=$4 CHAOS_PHASE=$5 CHAOS_WORKER=${8:-caller}
        b=$6 count=$7 prefix=${8:-caller} fails=0
        for ((i = 0; i < count; i++)); do
                lifecycle "chaos-$CHAOS_RT-$CHAOS_TAG-$prefix-$i" "$b" "$i" || fails=$((fails + 1))
        done
        exit 0
fi

# shellcheck source=tests/integration/lib.sh
. "$CHAOS_DIR/../integration/lib.sh"
# shellcheck source=tests/chaos/lib-chaos.sh
. "$CHAOS_DIR/lib-chaos.sh"

mode=short runtimes="" workers=8 containers="" nlong="" soak=0 soak_step=1000 faults="" results="" report=""
while [ $# -gt 0 ]; do
        case "$1" in
        --short) mode=short ;;
        --full) mode=full ;;
        --runtimes) runtimes=$2; shift ;;
        --workers) workers=$2; shift ;;
        --containers) containers=$2; shift ;;
        --long) nlong=$2; shift ;;
        --soak) soak=$2; shift ;;
        --soak-step) soak_step=$2; shift ;;
        --faults) faults=$2; shift ;;
        --results) results=$2; shift ;;
        --report) report=$2; shift ;;
        *) bail "chaos.sh: unknown option $1" ;;
        esac
        shift
done
if [ $mode = short ]; then
        : "${runtimes:=sdrun}" "${containers:=300}" "${nlong:=4}"
        # CI time: a phase lasts its fault and at most $grace s more, whatever the count; on a loaded machine
        # the SIGKILL rounds stop at the phase's share of CHAOS_BUDGET (default 150 s)
        window=2 machined_stop=5 kill_rounds=2 grace=3
else
        : "${runtimes:=sdrun,crun,runc}" "${containers:=1200}" "${nlong:=20}"
        window=10 machined_stop=30 kill_rounds=6 grace=100000 CHAOS_BUDGET=${CHAOS_BUDGET:-100000}
fi
all_faults=daemon-reload,daemon-reexec,machined-restart,machined-stop,machined-mask,journald-restart,journald-stop
all_faults+=,bus-deny-method,sigkill-verbs,root-full-tmpfs,ulimit-n-64,caller-memcg-32m
# In CI the two box lanes share the short run: the hybrid box takes every other fault, the unified box the
# rest (each lane half the time; every fault still runs once per CI run).
if [ $mode = short ] && [ -n "${CI:-}" ] && [ -z "$faults" ]; then
        case "${SDRUN_TEST_LAYOUT:-}" in hybrid) lane=0 ;; unified) lane=1 ;; *) lane="" ;; esac
        if [ -n "$lane" ]; then
                IFS=, read -r -a _all <<<"$all_faults"
                for i in "${!_all[@]}"; do [ $((i % 2)) = "$lane" ] && faults+=${faults:+,}${_all[$i]}; done
                containers=$((containers / 2))
        fi
fi
: "${faults:=$all_faults}"
: "${results:=$TEST_TMPDIR/results.tsv}"
IFS=, read -r -a fault_list <<<"$faults"
IFS=, read -r -a rt_list <<<"$runtimes"
per_phase=$(((containers + ${#fault_list[@]} - 1) / ${#fault_list[@]}))
phase_budget=$((${CHAOS_BUDGET:-150} / ${#fault_list[@]}))

require_root
require_systemd
for rt in "${rt_list[@]}"; do
        case "$rt" in
        sdrun) [ -x "$SDRUN" ] || bail "sdrun binary $SDRUN missing" ;;
        crun | runc) command -v "$rt" >/dev/null || bail "$rt is not installed: it is a control here" ;;
        *) bail "unknown runtime $rt" ;;
        esac
done
CHAOS_TMP=$TEST_TMPDIR
# a tag of this run in every id: the v1 controller hierarchies can be shared with other boxes on the machine,
# whose containers must not count as ours
CHAOS_TAG=$(printf '%04x' $((RANDOM)))
export CHAOS_TMP SDRUN CHAOS_BOUND CHAOS_TAG
CHAOS_LOG=$TEST_TMPDIR/calls.tsv
: >"$CHAOS_LOG"
: >"$results"
diag "chaos: mode=$mode runtimes=$runtimes workers=$workers containers=$containers (~$per_phase per fault)" \
        "long-lived=$nlong soak=$soak bound=${CHAOS_BOUND}s faults=$faults"

# ---------------------------------------------------------------------------------------------------------
# Bundles: one per worker (the rootfs is shared by nobody), one for the long-lived containers (limits), one
# for the faults' own callers.

B=$TEST_TMPDIR/bundles
make_bundle "$B/w0" || bail "cannot make a bundle"
bundle_set "$B/w0" '.ociVersion="1.0.2" | .process.args=["sleep","100000"] | .linux.resources.pids={"limit":100}' || bail "bundle_set"
for ((w = 1; w < workers; w++)); do cp -a "$B/w0" "$B/w$w"; done
cp -a "$B/w0" "$B/fault"
cp -a "$B/w0" "$B/long"
bundle_set "$B/long" '.linux.resources.memory={"limit":67108864} | .linux.resources.pids={"limit":64}
        | .linux.resources.cpu={"quota":50000,"period":100000}' || bail "bundle_set"

# ---------------------------------------------------------------------------------------------------------
# Observation

pid1_fds() { ls /proc/1/fd 2>/dev/null | wc -l; }
dbus_pid() { pidof dbus-daemon 2>/dev/null | cut -d' ' -f1; }
dbus_fds() { local p; p=$(dbus_pid); [ -n "$p" ] && ls "/proc/$p/fd" | wc -l || echo 0; }
rss_kb() { awk '/^VmRSS:/ {print $2}' "/proc/$1/status" 2>/dev/null || echo 0; }

# unit_name_of ID: the scope of container ID, for any of the three runtimes.
scope_name() {
        case "$CHAOS_RT" in
        sdrun) echo "sdrun-$1.scope" ;;
        *) echo "$CHAOS_RT-$1.scope" ;;
        esac
}

# snapshot ID: what must not change in a long-lived container: status, init pid, unit properties, cgroup files
# (every hierarchy the unit has a directory in).
snapshot() {
        local id=$1 u cg h f
        state_of "$id" || { echo "state failed: $CALL_ERR"; return; }
        echo "status=$ST_STATUS pid=$ST_PID alive=$(pid_alive "$ST_PID" && echo y || echo n)"
        u=$(scope_name "$id")
        systemctl show -p ActiveState -p MemoryMax -p MemoryLimit -p TasksMax -p CPUQuotaPerSecUSec -- "$u"
        cg=$(systemctl show -p ControlGroup --value -- "$u")
        [ -n "$cg" ] || { echo "no ControlGroup"; return; }
        for f in unified/memory.max unified/pids.max unified/cpu.max memory.max pids.max cpu.max \
                memory/memory.limit_in_bytes pids/pids.max cpu/cpu.cfs_quota_us; do
                h=/sys/fs/cgroup/${f%/*}
                [ "${f%/*}" = "$f" ] && h=/sys/fs/cgroup
                [ -e "$h$cg/${f##*/}" ] && echo "$f=$(cat "$h$cg/${f##*/}")"
        done
}

# leftovers [PATTERN]: everything left of containers whose id matches PATTERN (an extended regex; default:
# every chaos container of this runtime but the long-lived ones), one line each.
leftovers() {
        local pat=${1:-"chaos-$CHAOS_RT-$CHAOS_TAG-(w|k|probe|full|ulim|memcg)"} f p
        systemctl list-units --all --plain --no-legend --no-pager 2>/dev/null | grep -E -- "$pat" | sed 's/^/unit: /'
        find /sys/fs/cgroup -mindepth 1 -maxdepth 7 -type d 2>/dev/null | grep -E -- "$pat" | sed 's/^/cgroup: /'
        grep -E -- "$pat" /proc/self/mountinfo | sed 's/^/mount: /'
        ls -A "$CHAOS_ROOT" 2>/dev/null | grep -E -- "$pat" | sed "s|^|state: $CHAOS_ROOT/|"
        for f in $(grep -lE -- "$pat" /proc/[0-9]*/cgroup 2>/dev/null); do
                p=${f#/proc/}; p=${p%/cgroup}
                echo "process: $p ($(cat "/proc/$p/comm" 2>/dev/null))"
        done
        machinectl list --no-legend --no-pager 2>/dev/null | grep -E -- "$pat" | sed 's/^/machine: /'
        return 0
}

# leftovers_id ID: the same for one container, cheaper (globs where the scopes go, no walk of every
# hierarchy): run after each SIGKILLed verb and each full-root create.
leftovers_id() {
        local id=$1 d f p
        systemctl list-units --all --plain --no-legend --no-pager -- "*-$id.scope" 2>/dev/null | sed 's/^/unit: /'
        for d in /sys/fs/cgroup/*.slice/*"-$id".scope /sys/fs/cgroup/*/*.slice/*"-$id".scope \
                /sys/fs/cgroup/*.slice/*/*"-$id".scope /sys/fs/cgroup/*/*.slice/*/*"-$id".scope; do
                [ -d "$d" ] && echo "cgroup: $d"
        done
        grep -F -- "$id" /proc/self/mountinfo | sed 's/^/mount: /'
        [ -e "$CHAOS_ROOT/$id" ] && echo "state: $CHAOS_ROOT/$id"
        for f in $(grep -lF -- "-$id.scope" /proc/[0-9]*/cgroup 2>/dev/null); do
                p=${f#/proc/}; p=${p%/cgroup}
                echo "process: $p ($(cat "/proc/$p/comm" 2>/dev/null))"
        done
        machinectl list --no-legend --no-pager 2>/dev/null | grep -F -- "$id" | sed 's/^/machine: /'
        return 0
}

# sweep [PATTERN]: delete -f what leftovers lists in the state directory (after it was reported).
sweep() {
        local pat=${1:-"chaos-$CHAOS_RT-$CHAOS_TAG-(w|k|probe|full|ulim|memcg)"} id
        for id in $(ls -A "$CHAOS_ROOT" 2>/dev/null | grep -E -- "$pat"); do
                CHAOS_PHASE=sweep call delete "$id" --force >/dev/null
        done
}

# ---------------------------------------------------------------------------------------------------------
# Faults: each runs in the foreground while the workers run; the probes they make are calls in the log.

rnd_ms() { echo "0.$(printf '%03d' $((RANDOM % $1 + 1)))"; }

fault_daemon-reload() {
        local i
        for ((i = 0; i < 3; i++)); do sleep 1; systemctl daemon-reload; done
        sleep "$window"
}
fault_daemon-reexec() {
        local i
        for ((i = 0; i < 2; i++)); do sleep 1; systemctl daemon-reexec; done
        sleep "$window"
}
fault_machined-restart() {
        local i
        for ((i = 0; i < 3; i++)); do sleep 1; systemctl restart systemd-machined; done
        sleep "$window"
}
fault_machined-stop() {
        sleep 1
        systemctl stop systemd-machined
        sleep "$machined_stop"
        systemctl start systemd-machined
}
# masked: D-Bus activation cannot bring it back; creation goes on, and sdrun says which registration is
# missing (the probe's create).
fault_machined-mask() {
        sleep 1
        systemctl mask --runtime systemd-machined >/dev/null 2>&1
        systemctl stop systemd-machined
        sleep 1
        CHAOS_WORKER=probe lifecycle "chaos-$CHAOS_RT-$CHAOS_TAG-probe-mask" "$B/fault" 1
        sed -n "s/^machined-mask\t$CHAOS_RT\tprobe\tcreate\t[^\t]*\t0\t[0-9]*\tok\t//p" "$CHAOS_LOG" >"$TEST_TMPDIR/mask-warning"
        sleep "$window"
        systemctl unmask --runtime systemd-machined >/dev/null 2>&1
        systemctl start systemd-machined
}
fault_journald-restart() {
        local i
        for ((i = 0; i < 3; i++)); do sleep 1; systemctl restart systemd-journald; done
        sleep "$window"
}
fault_journald-stop() {
        sleep 1
        systemctl stop systemd-journald.service
        sleep "$window"
        systemctl start systemd-journald.service
}
# a bus policy that makes one method fail: StartTransientUnit refused to everyone, for a window; the runtimes
# must fail create with a message, and leave nothing behind.
fault_bus-deny-method() {
        local conf=/etc/dbus-1/system.d/zz-sdrun-chaos-deny.conf
        sleep 1
        cat >"$conf" <<'EOF'
<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-BUS Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <policy context="mandatory">
    <deny send_destination="org.freedesktop.systemd1" send_interface="org.freedesktop.systemd1.Manager"
          send_member="StartTransientUnit"/>
  </policy>
</busconfig>
EOF
        busctl call org.freedesktop.DBus /org/freedesktop/DBus org.freedesktop.DBus ReloadConfig
        sleep 1
        CHAOS_WORKER=probe lifecycle "chaos-$CHAOS_RT-$CHAOS_TAG-probe-deny" "$B/fault" 1
        sleep "$window"
        rm -f "$conf"
        busctl call org.freedesktop.DBus /org/freedesktop/DBus org.freedesktop.DBus ReloadConfig
}
# SIGKILL of the runtime at a random point of each verb, then delete -f must clean up.
killed_call() {   # killed_call MAXMS VERB ID ARGS...
        local d t0 t1 rc ms class
        d=$(rnd_ms "$1")
        shift
        t0=$EPOCHREALTIME
        # shellcheck disable=SC2046
        local verb=$1 id=$2 opts=() tail=()
        shift 2
        while [ $# -gt 0 ] && [ "$1" != -- ]; do opts+=("$1"); shift; done
        [ "${1:-}" = -- ] && shift
        tail=("$@")
        timeout -s KILL "$d" $(rt_cmd) "$verb" ${opts[@]+"${opts[@]}"} "$id" ${tail[@]+"${tail[@]}"} >/dev/null 2>"$TEST_TMPDIR/.kerr" </dev/null
        rc=$?
        t1=$EPOCHREALTIME
        ms=$(((${t1/./} - ${t0/./}) / 1000))
        class=ok
        [ $rc = 137 ] && class=killed
        [ $rc != 0 ] && [ $rc != 137 ] && class=err
        printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%.300s\n' "$CHAOS_PHASE" "$CHAOS_RT" kill "$verb" "$id" "$rc" "$ms" \
                "$class" "killed after ${d}s: $(tr '\n\t' '  ' <"$TEST_TMPDIR/.kerr")" >>"$CHAOS_LOG"
}
kill_verbs=(start exec delete update pause)
fault_sigkill-verbs() {
        local v r id left
        CHAOS_WORKER=kill
        local t0=$SECONDS
        for ((r = 0; r < kill_rounds; r++)); do
                ((r > 0 && SECONDS - t0 > phase_budget)) && break
                for v in "${kill_verbs[@]}"; do
                        id=chaos-$CHAOS_RT-$CHAOS_TAG-k-$v-$r
                        call create "$id" --bundle "$B/fault" || { cleanup_id "$id"; continue; }
                        case $v in
                        start) killed_call 150 start "$id" ;;
                        *)
                                call start "$id" || { cleanup_id "$id"; continue; }
                                case $v in
                                exec) killed_call 150 exec "$id" -- true ;;
                                update) killed_call 100 update "$id" --pids-limit 300 ;;
                                pause) killed_call 60 pause "$id" ;;
                                delete)
                                        call kill "$id" -- KILL
                                        wait_stopped "$id"
                                        killed_call 100 delete "$id"
                                        ;;
                                esac
                                ;;
                        esac
                        check_state "$id"
                        cleanup_id "$id" || note cleanup-failed "$id" "delete -f after a SIGKILLed $v: $CALL_ERR"
                        left=$(leftovers_id "$id")
                        [ -z "$left" ] || note leak "$id" "after a SIGKILLed $v and delete -f: ${left//$'\n'/; }"
                done
        done
}
# --root on a tmpfs with no space left: create fails with a message, and nothing is left.
fault_root-full-tmpfs() {
        local m=$TEST_TMPDIR/fullroot i id left save=$CHAOS_ROOT
        mkdir -p "$m"
        mount -t tmpfs -o size=512k chaos-full "$m" || { note setup "-" "cannot mount a tmpfs"; return; }
        mkdir -p "$m/root"
        dd if=/dev/zero of="$m/fill" bs=4k 2>/dev/null
        CHAOS_ROOT=$m/root CHAOS_WORKER=full
        for ((i = 0; i < kill_rounds + 1; i++)); do
                id=chaos-$CHAOS_RT-$CHAOS_TAG-full-$i
                if call create "$id" --bundle "$B/fault"; then
                        call start "$id"
                fi
                cleanup_id "$id" || note cleanup-failed "$id" "delete -f on the full root: $CALL_ERR"
                left=$(leftovers_id "$id")
                [ -z "$left" ] || note leak "$id" "on the full root, after delete -f: ${left//$'\n'/; }"
        done
        rm -f "$m/fill"
        # room again: the same root works, and what was left in it can be deleted
        for id in $(ls -A "$m/root"); do cleanup_id "$id"; done
        lifecycle "chaos-$CHAOS_RT-$CHAOS_TAG-full-after" "$B/fault" 1
        CHAOS_ROOT=$save
        umount "$m"
}
fault_ulimit-n-64() {
        ( ulimit -n 64 && exec bash "$CHAOS_DIR/chaos.sh" __lifecycle "$CHAOS_RT" "$CHAOS_ROOT" "$CHAOS_LOG" \
                "$CHAOS_PHASE" "$B/fault" $((kill_rounds * 3)) ulim )
}
fault_caller-memcg-32m() {
        systemd-run --scope --quiet --unit "sdrun-chaos-caller-$$" -p MemoryMax=32M -p MemoryAccounting=yes -- \
                bash "$CHAOS_DIR/chaos.sh" __lifecycle "$CHAOS_RT" "$CHAOS_ROOT" "$CHAOS_LOG" "$CHAOS_PHASE" \
                "$B/fault" $((kill_rounds * 3)) memcg
}

# ---------------------------------------------------------------------------------------------------------
# A phase: the workers run until the fault is over and the phase's containers are through; then the checks.

long_ids=()
declare -A long_snap=()

start_workers() {   # start_workers QUOTA: sets wpids, cfile, sfile
        local w
        cfile=$TEST_TMPDIR/count.$CHAOS_PHASE.$CHAOS_RT sfile=$TEST_TMPDIR/stop.$CHAOS_PHASE.$CHAOS_RT
        : >"$cfile"
        rm -f "$sfile"
        wpids=()
        for ((w = 0; w < workers; w++)); do
                worker "$w" "$B/w$w" "$cfile" "$sfile" &
                wpids+=($!)
        done
}

stop_workers() {   # stop_workers QUOTA DEADLINE: at QUOTA containers, or at DEADLINE ($SECONDS) if that comes first
        while [ "$(wc -l <"$cfile")" -lt "$1" ] && [ "$SECONDS" -lt "$2" ]; do sleep 0.5; done
        touch "$sfile"
        wait "${wpids[@]}"
}

# phase_outcome: the checks of a phase from the call log; one result line and, for sdrun, one TAP test.
phase_outcome() {
        local fault=$1 lines calls ok err silent hang lies stuck leaks cleanfail lc=0 long_bad="" left id s outcome
        local msgs extra=""
        lines=$(awk -F'\t' -v p="$fault" -v r="$CHAOS_RT" '$1 == p && $2 == r' "$CHAOS_LOG")
        calls=$(awk -F'\t' '$4 != "check"' <<<"$lines" | grep -c . || true)
        ok=$(awk -F'\t' '$8 == "ok"' <<<"$lines" | grep -c . || true)
        err=$(awk -F'\t' '$8 == "err"' <<<"$lines" | grep -c . || true)
        silent=$(awk -F'\t' '$8 == "silent"' <<<"$lines" | grep -c . || true)
        hang=$(awk -F'\t' '$8 == "hang"' <<<"$lines" | grep -c . || true)
        lies=$(awk -F'\t' '$8 == "lie"' <<<"$lines" | grep -c . || true)
        stuck=$(awk -F'\t' '$8 == "stuck"' <<<"$lines" | grep -c . || true)
        leaks=$(awk -F'\t' '$8 == "leak"' <<<"$lines" | grep -c . || true)
        cleanfail=$(awk -F'\t' '$8 == "cleanup-failed"' <<<"$lines" | grep -c . || true)
        for id in "${long_ids[@]}"; do
                s=$(snapshot "$id")
                [ "$s" = "${long_snap[$id]}" ] && continue
                long_bad+="$id: $(diff <(echo "${long_snap[$id]}") <(echo "$s") | grep '^[<>]' | tr '\n' ' '); "
        done
        left=$(leftovers)
        [ -n "$left" ] && sweep
        msgs=$(awk -F'\t' '$8 == "err" || $8 == "silent" || $8 == "hang" {print $4 ": " $9}' <<<"$lines" |
                sed -E 's/[0-9a-f]{6,}|[0-9]+/N/g' | sort | uniq -c | sort -rn | head -4 | sed 's/^ *//' | tr '\n' ';')
        if [ "$fault" = machined-mask ] && [ "$CHAOS_RT" = sdrun ]; then
                if grep -qi 'machine' "$TEST_TMPDIR/mask-warning" 2>/dev/null; then
                        extra="create warned: $(head -c 160 "$TEST_TMPDIR/mask-warning")"
                else
                        extra="create did not warn about the missing machined registration"
                        long_bad+="(no warning) "
                fi
        fi
        outcome=survived
        if [ "$silent$hang$lies$stuck$leaks$cleanfail" != 000000 ] || [ -n "$long_bad" ] || [ -n "$left" ]; then
                outcome=FAILED
        fi
        # systemd restarting a part of itself is no reason for a call to fail: PID 1, machined and journald
        # come back, and creation goes on (only the bus policy, the SIGKILLs and the starved callers may make
        # a call fail, with a message)
        case "$fault" in
        daemon-* | machined-* | journald-*)
                if [ "$err" != 0 ]; then
                        outcome=FAILED
                        extra+="${extra:+; }$err calls failed while systemd restarted a part of itself"
                fi
                ;;
        esac
        printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$CHAOS_RT" "$fault" "$outcome" "$calls" "$err" \
                "$silent" "$hang" "$((lies + stuck))" "$((leaks + cleanfail))" "$(echo -n "$left" | grep -c . || true)" \
                "${long_bad:-intact}" "$msgs" "$extra" >>"$results"
        diag "$CHAOS_RT $fault: $outcome: $calls calls, $ok ok, $err failed with a message, $silent silent," \
                "$hang hung, $lies lying state, $stuck stuck, $leaks leaks, $cleanfail delete -f failed${extra:+; $extra}"
        [ -n "$msgs" ] && diag "  messages: $msgs"
        [ -n "$left" ] && diag "  left behind: $(head -5 <<<"$left" | tr '\n' ';')"
        [ -n "$long_bad" ] && diag "  long-lived changed: $long_bad"
        if [ "$CHAOS_RT" = sdrun ]; then
                [ $outcome = survived ]
                _tap_result $? "sdrun survives $fault: no hang, no silent failure, state true, long-lived intact, nothing left"
                if [ "$silent$hang" != 00 ]; then
                        awk -F'\t' '$8 == "silent" || $8 == "hang"' <<<"$lines" | head -5 | _tap_diag_stream
                fi
                if [ "$lies$stuck$leaks$cleanfail" != 0000 ]; then
                        awk -F'\t' '$4 == "check"' <<<"$lines" | head -5 | _tap_diag_stream
                fi
        fi
}

run_phase() {   # run_phase FAULT QUOTA
        CHAOS_PHASE=$1
        start_workers
        "fault_$1" >>"$TEST_TMPDIR/fault.log" 2>&1
        stop_workers "$2" $((SECONDS + grace))
        CHAOS_WORKER=driver
        diag "$CHAOS_RT $1: $(wc -l <"$cfile") containers through the workers while the fault ran"
        phase_outcome "$1"
}

# soak N: no fault; every soak_step containers: PID 1's RSS and fds, dbus-daemon's RSS, the unit count.
soak_file=$TEST_TMPDIR/soak.tsv
soak_sample() {
        local d
        d=$(dbus_pid)
        printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$CHAOS_RT" "$1" "$(rss_kb 1)" "$(pid1_fds)" "$(rss_kb "$d")" \
                "$(dbus_fds)" "$(systemctl list-units --all --no-legend --no-pager | wc -l)" \
                "$(cut -d' ' -f1-3 /proc/loadavg)" >>"$soak_file"
}
run_soak() {
        local n next=$soak_step
        CHAOS_PHASE=soak
        soak_sample 0
        start_workers
        while :; do
                n=$(wc -l <"$cfile")
                if ((n >= next)); then
                        soak_sample "$n"
                        next=$((next + soak_step))
                fi
                ((n >= $1)) && break
                sleep 0.5
        done
        touch "$sfile"
        wait "${wpids[@]}"
        sleep 2
        soak_sample "end"
        phase_outcome soak
}

# ---------------------------------------------------------------------------------------------------------

rm -f /etc/dbus-1/system.d/zz-sdrun-chaos-deny.conf
cleanup_add rm -f /etc/dbus-1/system.d/zz-sdrun-chaos-deny.conf
cleanup_add systemctl unmask --runtime systemd-machined
cleanup_add systemctl start systemd-journald.service systemd-machined
cleanup_add umount "$TEST_TMPDIR/fullroot"
systemctl start systemd-machined >/dev/null 2>&1 || diag "systemd-machined cannot be started"
if criu check >/dev/null 2>&1; then
        kill_verbs+=(checkpoint)
        diag "criu check passed: checkpoint is among the SIGKILLed verbs"
else
        diag "criu check failed here: checkpoint and restore are not among the SIGKILLed verbs (the VM has CRIU)"
fi

for CHAOS_RT in "${rt_list[@]}"; do
        CHAOS_ROOT=$TEST_TMPDIR/root-$CHAOS_RT
        mkdir -p "$CHAOS_ROOT"
        cleanup_add sweep "chaos-$CHAOS_RT-$CHAOS_TAG-"
        CHAOS_PHASE=setup CHAOS_WORKER=driver
        base_pid1_fds=$(pid1_fds) base_dbus_fds=$(dbus_fds)
        long_ids=()
        long_snap=()
        for ((i = 0; i < nlong; i++)); do
                id=chaos-$CHAOS_RT-$CHAOS_TAG-L$i
                call create "$id" --bundle "$B/long" && call start "$id" || bail "$CHAOS_RT: long-lived $id: $CALL_ERR"
                long_ids+=("$id")
        done
        for id in "${long_ids[@]}"; do long_snap[$id]=$(snapshot "$id"); done
        diag "$CHAOS_RT: $nlong long-lived containers up; one of them: $(echo "${long_snap[${long_ids[0]:-x}]:-}" | tr '\n' ' ')"
        for f in "${fault_list[@]}"; do
                t0=$SECONDS
                run_phase "$f" "$per_phase"
                diag "$CHAOS_RT $f: $((SECONDS - t0)) s, load $(cut -d' ' -f1-3 /proc/loadavg)"
        done
        [ "$soak" -gt 0 ] && run_soak "$soak"
        # the end: the long-lived go too, then nothing may be left, and no fd in PID 1 or dbus-daemon
        CHAOS_PHASE=end CHAOS_WORKER=driver
        for id in "${long_ids[@]}"; do
                call kill "$id" -- KILL
                wait_stopped "$id"
                call delete "$id" || cleanup_id "$id"
        done
        sleep 2
        left=$(leftovers "chaos-$CHAOS_RT-$CHAOS_TAG-")
        fd1=$(pid1_fds) fdb=$(dbus_fds)
        end_ok=1
        [ -z "$left" ] || end_ok=0
        [ "$fd1" -le "$base_pid1_fds" ] || end_ok=0
        [ "$fdb" -le "$base_dbus_fds" ] || end_ok=0
        end_out=survived
        [ $end_ok = 1 ] || end_out=FAILED
        printf '%s\t%s\t%s\t-\t-\t-\t-\t-\t-\t%s\t-\tPID 1 fds %s -> %s, dbus-daemon fds %s -> %s\t\n' "$CHAOS_RT" end \
                "$end_out" "$(echo -n "$left" | grep -c . || true)" "$base_pid1_fds" "$fd1" "$base_dbus_fds" "$fdb" >>"$results"
        diag "$CHAOS_RT end: PID 1 fds $base_pid1_fds -> $fd1, dbus-daemon fds $base_dbus_fds -> $fdb"
        [ -n "$left" ] && diag "  left behind: $(head -5 <<<"$left" | tr '\n' ';')" && sweep "chaos-$CHAOS_RT-$CHAOS_TAG-"
        if [ "$CHAOS_RT" = sdrun ]; then
                [ $end_ok = 1 ]
                _tap_result $? "sdrun at the end: nothing left, no fd more in PID 1 ($base_pid1_fds -> $fd1) or dbus-daemon ($base_dbus_fds -> $fdb)"
        fi
done

cp "$CHAOS_LOG" "${results%.tsv}.calls.tsv" 2>/dev/null
[ -s "$soak_file" ] && cp "$soak_file" "${results%.tsv}.soak.tsv"
if [ -n "$report" ]; then
        python3 "$CHAOS_DIR/report.py" "$results" "$report" && diag "report written to $report"
fi
done_testing
