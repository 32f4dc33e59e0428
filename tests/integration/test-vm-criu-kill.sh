#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Suite "vm" (CRIU works on Debian's kernel only): SIGKILL of the runtime in the middle of `checkpoint` and
# `restore` (issue 35), with runc 1.1 as the control running the same steps. Only the runtime's own process
# is killed, as an engine or the OOM killer would: its criu is left to what the runtime arranged for it.
#   1. a full checkpoint killed right after CRIU dumped (and so killed) the container (sdrun: a --criu
#      wrapper SIGKILLs its parent when criu exits 0): state says stopped, delete -f removes everything;
#   2. checkpoint --leave-running killed while CRIU holds the container's cgroup frozen (polled for; and for
#      certain with a --criu wrapper that freezes it and SIGKILLs the runtime), then at a random point: the
#      container is not left frozen, the next verb finds it running, exec, kill and delete work;
#   3. restore killed while CRIU restores (by the prestart hook CRIU's action script runs), right after CRIU
#      restored the container (the wrapper), and at a random point: state never says creating, nor running
#      for a dead process, nor stopped while processes live in the container's scope; delete -f leaves no
#      unit, process, mount or state directory.
# runc's results are diagnostics: what it does is reported, not failed.
. "$(dirname "$0")/lib.sh"

require_root
require_systemd
command -v criu >/dev/null || bail "criu is not installed (Debian package criu)"
command -v runc >/dev/null || bail "runc is not installed (the control)"
modprobe unix_diag 2>/dev/null || bail "cannot load unix_diag: the VM needs the kernel package's modules"

RUNC_ROOT=$TEST_TMPDIR/runc-root
R() {
        local rt=$1
        shift
        case $rt in
        sdrun) timeout -k 5 "${RT_TIMEOUT:-60}" "$SDRUN" --root "$SDRUN_ROOT" "$@" ;;
        runc) timeout -k 5 "${RT_TIMEOUT:-60}" runc --root "$RUNC_ROOT" --systemd-cgroup "$@" ;;
        esac
}
# bg RT ARGS...: the runtime in the background (its own pid in BG, no wrapper in between), output in $BGLOG.
BGLOG=$TEST_TMPDIR/bg.log
bg() {
        local rt=$1
        shift
        case $rt in
        sdrun) "$SDRUN" --root "$SDRUN_ROOT" "$@" ;;
        runc) runc --root "$RUNC_ROOT" --systemd-cgroup "$@" ;;
        esac >"$BGLOG" 2>&1 </dev/null &
        BG=$!
}
# reap: wait for the background runtime; KILLED=1 when our SIGKILL ended it.
reap() {
        local rc=0
        wait "$BG" 2>/dev/null || rc=$?
        KILLED=0
        [ "$rc" = 137 ] && KILLED=1
        BGRC=$rc
}
ms_now() { echo $((${EPOCHREALTIME/./} / 1000)); }
rt_status() { R "$1" state "$2" 2>/dev/null | jq -r .status 2>/dev/null | grep . || echo gone; }
rt_pid() { R "$1" state "$2" 2>/dev/null | jq -r '.pid // 0'; }
pid_alive() { [ -n "$1" ] && [ "$1" != 0 ] && [ -e "/proc/$1" ] && ! grep -q '^State:.*[ZX]' "/proc/$1/status" 2>/dev/null; }
# procs_of ID: the processes in a cgroup whose path names ID (the container's scope). Builtins only: a grep
# per process would take seconds in the emulated VM.
procs_of() {
        local f p c comm out=""
        for f in /proc/[0-9]*/cgroup; do
                c=""
                read -r -d '' c <"$f" 2>/dev/null
                [[ $c == *"$1"* ]] || continue
                p=${f#/proc/}
                p=${p%/cgroup}
                comm=""
                read -r comm <"/proc/$p/comm" 2>/dev/null
                out+=" $p($comm)"
        done
        echo "${out# }"
}
# within SECONDS CMD...: CMD succeeds within SECONDS of wall time (wait_for counts its sleeps only).
within() {
        local end=$((SECONDS + $1))
        shift
        until "$@" >/dev/null 2>&1; do
                ((SECONDS < end)) || return 1
                sleep 0.2
        done
}
criu_gone() { ! pgrep -x criu >/dev/null; }
cg_of_pid() { echo "/sys/fs/cgroup$(sed -n 's/^0:://p' "/proc/$1/cgroup" 2>/dev/null)"; }
# frozen CGDIR: its cgroup.events says "frozen 1". Builtins only: the busy poll below must not fork (a fork
# costs tens of ms in the emulated VM, and CRIU's freeze may last less).
frozen() {
        local k v
        while read -r k v; do
                [ "$k" = frozen ] && { [ "$v" = 1 ]; return; }
        done <"$1/cgroup.events" 2>/dev/null
        return 1
}
# state_true RT ID: what state says is so: running/paused with a live init, stopped (or no such container)
# with no process left in its cgroup; never "creating" once the runtime that was creating it is dead.
state_true() {
        local s p
        s=$(rt_status "$1" "$2")
        p=$(rt_pid "$1" "$2")
        STATE_SEEN="$s${p:+ pid $p}; processes: $(procs_of "$2")"
        case $s in
        running | paused) pid_alive "$p" ;;
        stopped | gone) [ -z "$(procs_of "$2")" ] ;;
        *) return 1 ;;
        esac
}
# check RT DESC CMD...: a test for sdrun, a diagnostic for the control.
check() {
        local rt=$1 desc=$2
        shift 2
        if [ "$rt" = sdrun ]; then
                ok_desc "$rt: $desc" "$@"
        elif "$@" >/dev/null 2>&1; then
                diag "runc (control): yes: $desc"
        else
                diag "runc (control): NO: $desc"
        fi
}

# A wrapper for --criu: criu, and when it exits 0, SIGKILL of its parent (the runtime) before the runtime
# sees it: the moment between CRIU's work and the runtime's record of it.
WRAP=$TEST_TMPDIR/criu-then-kill
cat >"$WRAP" <<'EOF'
#!/bin/sh
[ "$1" = --version ] && exec criu "$@"
criu "$@" && kill -KILL "$PPID"
EOF
chmod +x "$WRAP"
# A wrapper for --criu that freezes the container's cgroup ($FREEZE_CG) as CRIU's --freeze-cgroup does, then
# SIGKILLs its parent: a runtime killed while its criu holds the cgroup frozen, without depending on when.
WRAP_FREEZE=$TEST_TMPDIR/criu-freeze-then-kill
cat >"$WRAP_FREEZE" <<'EOF'
#!/bin/sh
[ "$1" = --version ] && exec criu "$@"
echo 1 >"$FREEZE_CG/cgroup.freeze"
kill -KILL "$PPID"
EOF
chmod +x "$WRAP_FREEZE"

# sleep_ms MS
sleep_ms() { sleep "$(($1 / 1000)).$(printf '%03d' $(($1 % 1000)))"; }
# after_checkpoint_kill RT ID PID CG AT: the checks after a killed checkpoint --leave-running.
after_checkpoint_kill() {
        local rt=$1 id=$2 pid=$3 cg=$4 at=$5 s
        within 10 criu_gone
        diag "$rt: checkpoint killed $at: $([ $KILLED = 1 ] && echo killed || echo "it had ended ($BGRC)")"
        if ! pid_alive "$pid"; then
                # The dump was interrupted where the container cannot survive it: then state must say so.
                check "$rt" "the container died with the checkpoint killed $at: state says stopped" \
                        eval "[ \"\$(rt_status $rt $id)\" = stopped ]"
                return
        fi
        # The next verb finds it running (nobody paused it), not frozen, and exec works.
        s=$(rt_status "$rt" "$id")
        check "$rt" "after the checkpoint killed $at, state says running ($s)" test "$s" = running
        check "$rt" "its cgroup is not frozen" within 3 eval "! frozen $cg"
        check "$rt" "exec works" eval "RT_TIMEOUT=20 R $rt exec $id true"
}
# after_restore_kill RT ID AT: the checks after a killed restore.
after_restore_kill() {
        local rt=$1 id=$2 at=$3 out rc u
        within 60 criu_gone # a loaded CI run's VM is slow to let CRIU end
        diag "$rt: restore killed $at: $([ $KILLED = 1 ] && echo killed || echo "it had ended ($BGRC: $(head -c 200 "$BGLOG"))")"
        check "$rt" "after the restore killed $at, state tells the truth" within 10 state_true "$rt" "$id"
        diag "$rt: state: $STATE_SEEN"
        out=$(R "$rt" delete -f "$id" 2>&1) && rc=0 || rc=$?
        check "$rt" "delete -f works (exit $rc${out:+: $out})" test "$rc" = 0
        if [ "$rt" = sdrun ]; then
                no_leftovers "$id"
        else
                u=$(systemctl list-units --all --plain --no-legend --no-pager -- "runc-$id.scope" 2>/dev/null)
                diag "runc (control): left behind: ${u:+unit $u; }processes: $(procs_of "$id"); state dir: $(ls -d "$RUNC_ROOT/$id" 2>/dev/null)"
        fi
}

for rt in sdrun runc; do
        D=$TEST_TMPDIR/$rt
        B=$D/bundle
        mkdir -p "$D"
        make_bundle "$B"
        # The prestart hook SIGKILLs its parent (the runtime) when $D/kill-at-hook exists: on restore it runs
        # while CRIU restores, at its setup-namespaces.
        bundle_set "$B" '.process.args=["sh","-c","while true; do sleep 0.2; done"]
                | .hooks = {"prestart":[{"path":"/bin/sh","args":["sh","-c",("[ -e " + $k + " ] && kill -KILL $PPID; exit 0")]}]}' \
                --arg k "$D/kill-at-hook" || bail "bundle_set failed"

        # 1. A full checkpoint, the images for the restores below. sdrun's is killed right after CRIU dumped
        #    (and so killed) the container, by the wrapper (runc talks to CRIU over its RPC socket, where no
        #    such moment is reachable from outside): state says stopped, delete -f removes everything.
        id=$(new_id "ckfull$rt")
        cleanup_add R "$rt" delete -f "$id"
        R "$rt" run -d --bundle "$B" "$id" </dev/null >/dev/null 2>&1
        check "$rt" "the container runs" eval "pid_alive \$(rt_pid $rt $id)"
        t0=$(ms_now)
        if [ "$rt" = sdrun ]; then
                bg "$rt" --criu "$WRAP" checkpoint --image-path "$D/img" "$id"
                reap
                tdump=$(($(ms_now) - t0))
                diag "$rt: full checkpoint through the wrapper: $([ $KILLED = 1 ] && echo "killed after criu's exit 0" || echo "not killed ($BGRC: $(head -c 300 "$BGLOG"))")"
                ok_desc "$rt: the runtime was killed right after CRIU's dump ($tdump ms)" test "$KILLED" = 1
                ok_desc "$rt: state says stopped (the dump killed the container)" \
                        eval "within 10 state_true $rt $id && [ \"\$(rt_status $rt $id)\" = stopped ]"
                diag "$rt: state: $STATE_SEEN"
                ok_desc "$rt: delete -f works" R "$rt" delete -f "$id"
                no_leftovers "$id"
        else
                out=$(R "$rt" checkpoint --image-path "$D/img" "$id" 2>&1) || diag "$rt: checkpoint failed: $out"
                tdump=$(($(ms_now) - t0))
                diag "$rt: an undisturbed checkpoint took $tdump ms"
                R "$rt" delete -f "$id" >/dev/null 2>&1
        fi
        [ -s "$D/img/inventory.img" ] || bail "$rt: no complete checkpoint in $D/img"

        # 2. checkpoint --leave-running killed while CRIU holds the container's cgroup frozen, at a random
        #    point, and with the cgroup frozen by a wrapper.
        id=$(new_id "ck$rt")
        cleanup_add R "$rt" delete -f "$id"
        R "$rt" run -d --bundle "$B" "$id" </dev/null >/dev/null 2>&1
        pid=$(rt_pid "$rt" "$id")
        cg=$(cg_of_pid "$pid")
        # CRIU freezes the cgroup, seizes the tasks and thaws it: a short window, polled without a fork and
        # the SIGKILL sent at once; tried again (a few times) when it was missed (said, not failed).
        for try in 1 2 3; do
                bg "$rt" checkpoint --leave-running --image-path "$D/img-frozen" "$id"
                end=$((SECONDS + 120))
                hit=0
                while kill -0 "$BG" 2>/dev/null && ((SECONDS < end)); do
                        if frozen "$cg"; then
                                kill -KILL "$BG" 2>/dev/null
                                hit=1
                                break
                        fi
                done
                kill -KILL "$BG" 2>/dev/null
                reap
                [ $hit = 1 ] && break
                diag "$rt: try $try: the checkpoint ended before its cgroup was seen frozen"
        done
        after_checkpoint_kill "$rt" "$id" "$pid" "$cg" "while CRIU had the cgroup frozen (seen frozen: $hit, try $try)"
        # At a random point of the time a full one took.
        ms=$((RANDOM % (tdump + 1)))
        bg "$rt" checkpoint --leave-running --image-path "$D/img-rnd" "$id"
        sleep_ms "$ms"
        kill -KILL "$BG" 2>/dev/null
        reap
        after_checkpoint_kill "$rt" "$id" "$pid" "$cg" "after $ms ms"
        # The frozen moment for certain (last: runc leaves the container frozen there): a --criu wrapper that
        # freezes the cgroup as CRIU does first, then SIGKILLs the runtime (and is killed with it, or ends).
        FREEZE_CG=$cg bg "$rt" --criu "$WRAP_FREEZE" checkpoint --leave-running --image-path "$D/img-wrap" "$id"
        reap
        after_checkpoint_kill "$rt" "$id" "$pid" "$cg" "with its cgroup frozen by its criu (the wrapper)"
        if pid_alive "$pid"; then
                check "$rt" "kill works after the killed checkpoints" R "$rt" kill "$id" KILL
                check "$rt" "the init is gone after kill" within 10 eval "! pid_alive $pid"
        fi
        check "$rt" "delete -f works" R "$rt" delete -f "$id"
        [ "$rt" = sdrun ] && no_leftovers "$id"

        # 3. restore killed at the prestart hook (CRIU is restoring), right after CRIU restored the tree (sdrun:
        #    the wrapper; runc: an undisturbed restore, to time it), then at a random point of that time.
        id=$(new_id "rshook$rt")
        cleanup_add R "$rt" delete -f "$id"
        touch "$D/kill-at-hook"
        bg "$rt" restore -d --image-path "$D/img" --bundle "$B" "$id"
        reap
        rm -f "$D/kill-at-hook"
        after_restore_kill "$rt" "$id" "at the prestart hook"
        id=$(new_id "rsafter$rt")
        cleanup_add R "$rt" delete -f "$id"
        t0=$(ms_now)
        if [ "$rt" = sdrun ]; then
                bg "$rt" --criu "$WRAP" restore -d --image-path "$D/img" --bundle "$B" "$id"
                reap
                trestore=$(($(ms_now) - t0))
                ok_desc "$rt: the runtime was killed right after CRIU's restore ($trestore ms)" test "$KILLED" = 1
                after_restore_kill "$rt" "$id" "right after CRIU restored the container"
        else
                out=$(R "$rt" restore -d --image-path "$D/img" --bundle "$B" "$id" 2>&1 </dev/null) || diag "$rt: restore failed: $out"
                trestore=$(($(ms_now) - t0))
                diag "$rt: an undisturbed restore took $trestore ms"
                R "$rt" delete -f "$id" >/dev/null 2>&1
        fi
        id=$(new_id "rsrnd$rt")
        cleanup_add R "$rt" delete -f "$id"
        ms=$((RANDOM % (trestore + 1)))
        bg "$rt" restore -d --image-path "$D/img" --bundle "$B" "$id"
        sleep_ms "$ms"
        kill -KILL "$BG" 2>/dev/null
        reap
        after_restore_kill "$rt" "$id" "after $ms ms"
done

done_testing
