#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# linux.seccomp through the real binary (issue 6): every action and operator checked from inside the
# container (the syscall's errno / return value, or the death signal as the run's exit status), archs and
# flags, unknown syscall names skipped, unknown actions/operators refused at create, SCMP_ACT_NOTIFY with
# the test agent, and the never-hang matrix (every sdrun call bounded by `timeout 10`).
#
# The syscall under test is getppid(2), made by the static helper sec-sysc (tests/integration/helpers-sec)
# with the arguments the operator cases need: seccomp sees the argument registers whatever the syscall
# does with them, and nothing else in the helper (or in the init after the filter is loaded) calls it.
. "$(dirname "$0")/lib.sh"

require_root
require_systemd
ci_lane hybrid

sd() { "$SDRUN" --root "$SDRUN_ROOT" "$@"; }
status_of() { sd state "$1" 2>/dev/null | jq -r .status; }
[ -n "${SEC_SYSC:-}" ] && [ -x "$SEC_SYSC" ] || bail "SEC_SYSC (the sec-sysc helper) is not set or not executable"
[ -n "${SECCOMP_AGENT:-}" ] && [ -x "$SECCOMP_AGENT" ] || bail "SECCOMP_AGENT is not set or not executable"

B=$TEST_TMPDIR/b
make_bundle "$B" || bail "make_bundle failed"
cp "$SEC_SYSC" "$B/rootfs/bin/sec-sysc" || bail "copy of sec-sysc into the rootfs failed"
NR_GETPPID=110 # x86_64
[ "$(uname -m)" = x86_64 ] || bail "the syscall numbers below are x86_64's (machine is $(uname -m))"

# What a static glibc binary (sec-sysc, busybox) needs, for profiles whose default action is not ALLOW.
BASE_ALLOW='["execve","brk","arch_prctl","set_tid_address","set_robust_list","rseq","prlimit64","readlink",
  "readlinkat","getrandom","mprotect","mmap","munmap","uname","rt_sigaction","rt_sigprocmask","rt_sigreturn",
  "newfstatat","fstat","write","writev","read","ioctl","close","exit","exit_group","futex","clock_nanosleep",
  "clone","clone3","vfork","wait4","prctl","getpid","getuid","geteuid","getgid","getegid","sdrun_no_such_syscall_1"]'

# srun NAME PROFILE ARGS [JQ-EXTRA]: `run` with linux.seccomp=PROFILE and process.args=ARGS (JSON), bounded by
# `timeout 10`; sets out, err, rc (124: timed out) and checks nothing is left.
srun() {
        local name=$1 profile=$2 args=$3 extra=${4:-.} id
        id=$(new_id sc); track_container "$id"
        bundle_set "$B" ".linux.seccomp=\$p | .process.args=\$a | $extra" --argjson p "$profile" --argjson a "$args" ||
                bail "bundle_set for $name failed"
        rc=0
        local t0=$SECONDS
        out=$(timeout -k 2 10 "$SDRUN" --root "$SDRUN_ROOT" run --bundle "$B" "$id" 2>"$TEST_TMPDIR/err") || rc=$?
        err=$(cat "$TEST_TMPDIR/err")
        if [ $((SECONDS - t0)) -ge 10 ]; then
                diag "$name: run timed out after 10 s"
                rc=124
        fi
        last_id=$id
}

# norm OUT...: one line, "ret=N" as "ret" (getppid is 0 or 1 depending on whether sh forked for the command)
norm() { echo "$@" | sed -E 's/ret=[0-9]+/ret/g'; }
call() { printf '["sec-sysc","call","getppid"%s]' "$(for a in "$@"; do printf ',"%s"' "$a"; done)"; }
rule() { # rule ACTION [EXTRA-JSON-MEMBERS]: default ALLOW, ACTION on getppid
        printf '{"defaultAction":"SCMP_ACT_ALLOW","syscalls":[{"names":["getppid"],"action":"%s"%s}]}' "$1" "${2:-}"
}

# ---------------------------------------------------------------------------------------------------------
# Actions

srun errno "$(rule SCMP_ACT_ERRNO ',"errnoRet":42')" "$(call)"
is "$rc:$out" "0:errno=42" "SCMP_ACT_ERRNO with errnoRet 42: getppid fails with errno 42"
srun errno-default "$(rule SCMP_ACT_ERRNO)" "$(call)"
is "$rc:$out" "0:errno=1" "SCMP_ACT_ERRNO without errnoRet: EPERM"
srun kill "$(rule SCMP_ACT_KILL)" "$(call)"
is "$rc:$out" "159:" "SCMP_ACT_KILL: the process dies of SIGSYS (run exits 159, nothing printed)"
srun kill-process "$(rule SCMP_ACT_KILL_PROCESS)" "$(call)"
is "$rc:$out" "159:" "SCMP_ACT_KILL_PROCESS: run exits 159"
srun kill-thread "$(rule SCMP_ACT_KILL_THREAD)" "$(call)"
is "$rc:$out" "159:" "SCMP_ACT_KILL_THREAD (single-threaded process): run exits 159"
no_leftovers "$last_id"
srun trap "$(rule SCMP_ACT_TRAP)" "$(call)"
is "$rc:$out" "77:sigsys syscall=$NR_GETPPID" "SCMP_ACT_TRAP: a catchable SIGSYS naming the syscall (handler exits 77)"
srun trace "$(rule SCMP_ACT_TRACE)" "$(call)"
is "$rc:$out" "0:errno=38" "SCMP_ACT_TRACE without a tracer: ENOSYS"
srun log "$(rule SCMP_ACT_LOG)" "$(call)"
is "$rc:$out" "0:ret=0" "SCMP_ACT_LOG: the syscall is allowed (getppid is 0 in the new pid namespace)"

# Default action ERRNO with defaultErrnoRet, getppid allowed by a rule; an unknown name in the list is skipped.
allow_profile=$(jq -cn --argjson base "$BASE_ALLOW" '{defaultAction: "SCMP_ACT_ERRNO", defaultErrnoRet: 71,
        syscalls: [{names: $base, action: "SCMP_ACT_ALLOW"}, {names: ["getppid"], action: "SCMP_ACT_ALLOW"}]}')
srun default-errno "$allow_profile" '["sh","-c","sec-sysc call getppid; sec-sysc call sched_yield; sec-sysc call getcpu"]'
is "$rc:$(norm $out)" "0:ret errno=71 errno=71" \
        "defaultAction SCMP_ACT_ERRNO with defaultErrnoRet 71 (sched_yield, getcpu), SCMP_ACT_ALLOW (getppid); the unknown name in the list is skipped"
srun default-errno-eperm "$(jq -c 'del(.defaultErrnoRet)' <<<"$allow_profile")" "$(printf '["sec-sysc","call","sched_yield"]')"
is "$rc:$out" "0:errno=1" "defaultAction SCMP_ACT_ERRNO without defaultErrnoRet: EPERM"

# The same profile with noNewPrivileges false: the filter is loaded before the user switch, and the init's
# remaining syscalls must be allowed by it (they are not in the allow list: a clear error, promptly).
srun default-errno-nnp-false "$allow_profile" "$(call)" '.process.noNewPrivileges=false'
if [ $rc = 0 ]; then
        is "$out" "ret=0" "noNewPrivileges false with a restrictive default: the container still runs"
else
        isnt_timeout=$([ $rc != 124 ] && echo yes)
        is "$isnt_timeout" yes "noNewPrivileges false with a restrictive default: run returns promptly (rc $rc)"
        like "$err" 'seccomp' "... with an error naming seccomp: $(head -c 300 <<<"$err")"
fi

# ---------------------------------------------------------------------------------------------------------
# Operators (ERRNO 42 when the condition holds): each container makes a matching and a non-matching call.

op_case() { # op_case OP VALUE [VALUETWO] -- MATCHING NONMATCHING
        local op=$1 v=$2 v2="" a
        shift 2
        if [ "$1" != -- ]; then v2=$1; shift; fi
        shift
        a=$(jq -cn --arg op "$op" --argjson v "$v" --arg v2 "$v2" \
                '{index: 0, value: $v, op: $op} + (if $v2 == "" then {} else {valueTwo: ($v2 | tonumber)} end)')
        srun "op-$op" "$(rule SCMP_ACT_ERRNO ",\"errnoRet\":42,\"args\":[$a]")" \
                "$(printf '["sh","-c","sec-sysc call getppid %s; sec-sysc call getppid %s"]' "$1" "$2")"
        is "$rc:$(norm $out)" "0:errno=42 ret" "$op ${v}${v2:+/$v2}: arg0=$1 matches, arg0=$2 does not"
}
op_case SCMP_CMP_NE 5 -- 6 5
op_case SCMP_CMP_LT 5 -- 4 5
op_case SCMP_CMP_LE 5 -- 5 6
op_case SCMP_CMP_EQ 5 -- 5 4
op_case SCMP_CMP_GE 5 -- 5 4
op_case SCMP_CMP_GT 5 -- 6 5
op_case SCMP_CMP_MASKED_EQ 240 32 -- 0x2f 0x3f
op_case SCMP_CMP_EQ 8589934593 -- 0x200000001 0x1
op_case SCMP_CMP_GT 4294967295 -- 0x100000000 0xffffffff

# Two conditions on different arguments: both must hold. Twice the same argument: either may hold.
srun args-and "$(rule SCMP_ACT_ERRNO ',"errnoRet":42,"args":[{"index":1,"value":7,"op":"SCMP_CMP_EQ"},{"index":2,"value":9,"op":"SCMP_CMP_EQ"}]')" \
        '["sh","-c","sec-sysc call getppid 0 7 9; sec-sysc call getppid 0 7 8; sec-sysc call getppid 0 6 9"]'
is "$rc:$(norm $out)" "0:errno=42 ret ret" "conditions on args 1 and 2: all must match"
srun args-or "$(rule SCMP_ACT_ERRNO ',"errnoRet":42,"args":[{"index":0,"value":7,"op":"SCMP_CMP_EQ"},{"index":0,"value":9,"op":"SCMP_CMP_EQ"}]')" \
        '["sh","-c","sec-sysc call getppid 7; sec-sysc call getppid 9; sec-sysc call getppid 8"]'
is "$rc:$(norm $out)" "0:errno=42 errno=42 ret" "two conditions on arg 0: either matches (as runc)"

# ---------------------------------------------------------------------------------------------------------
# Architectures, flags, status

srun archs "$(jq -c '. + {architectures: ["SCMP_ARCH_X86_64","SCMP_ARCH_X86","SCMP_ARCH_X32"]}' <<<"$(rule SCMP_ACT_ERRNO ',"errnoRet":42')")" \
        '["sh","-c","sec-sysc call getppid; grep -E \"^Seccomp(_filters)?:\" /proc/self/status | tr -d \"\\t\" | paste -sd,"]'
is "$rc:$(echo $out)" "0:errno=42 Seccomp:2,Seccomp_filters:1" "architectures X86_64, X86, X32: accepted, the rule applies, one filter in mode 2"
for fl in SECCOMP_FILTER_FLAG_LOG SECCOMP_FILTER_FLAG_SPEC_ALLOW; do
        srun "flag-$fl" "$(jq -c --arg f "$fl" '. + {flags: [$f]}' <<<"$(rule SCMP_ACT_ERRNO ',"errnoRet":42')")" "$(call)"
        is "$rc:$out" "0:errno=42" "flags [$fl]: accepted, the rule applies"
done
srun flags-both "$(jq -c '. + {flags: ["SECCOMP_FILTER_FLAG_LOG","SECCOMP_FILTER_FLAG_SPEC_ALLOW"]}' <<<"$(rule SCMP_ACT_KILL_PROCESS)")" "$(call)"
is "$rc" 159 "flags LOG+SPEC_ALLOW with SCMP_ACT_KILL_PROCESS: run exits 159"
features=$(sd features 2>/dev/null)
for a in SCMP_ACT_KILL SCMP_ACT_KILL_PROCESS SCMP_ACT_KILL_THREAD SCMP_ACT_TRAP SCMP_ACT_ERRNO SCMP_ACT_TRACE SCMP_ACT_ALLOW SCMP_ACT_LOG SCMP_ACT_NOTIFY; do
        jq -e --arg a "$a" 'any(.linux.seccomp.actions[]; . == $a)' <<<"$features" >/dev/null || diag "features lacks $a"
done
is "$(jq -c '[(.linux.seccomp.actions | length), (.linux.seccomp.operators | length)]' <<<"$features")" "[9,7]" \
        "features: 9 actions and 7 operators, exactly those tested here"

# Unknown syscall names alone: skipped, the container runs.
srun unknown-name '{"defaultAction":"SCMP_ACT_ALLOW","syscalls":[{"names":["sdrun_no_such_syscall_2"],"action":"SCMP_ACT_KILL_PROCESS"}]}' "$(call)"
is "$rc:$out" "0:ret=0" "a rule naming only an unknown syscall is skipped (runc does the same)"

# ---------------------------------------------------------------------------------------------------------
# Refused at create: a clear message naming the JSON path, nothing left behind.

bad_create() { # bad_create DESC PROFILE REGEX
        local id
        id=$(new_id scbad); track_container "$id"
        bundle_set "$B" '.linux.seccomp=$p | .process.args=["true"]' --argjson p "$2"
        rc=0
        err=$(timeout -k 2 10 "$SDRUN" --root "$SDRUN_ROOT" create --bundle "$B" "$id" 2>&1 >/dev/null) || rc=$?
        like "$rc:$err" "^1:.*$3" "$1: create fails: $(head -c 200 <<<"$err")"
        no_leftovers "$id"
}
bad_create "unknown action" '{"defaultAction":"SCMP_ACT_ALLOW","syscalls":[{"names":["getppid"],"action":"SCMP_ACT_FOO"}]}' \
        'linux\.seccomp\.syscalls\[0\]\.action.*SCMP_ACT_FOO'
bad_create "unknown default action" '{"defaultAction":"SCMP_ACT_NOPE"}' 'linux\.seccomp\.defaultAction.*SCMP_ACT_NOPE'
bad_create "unknown operator" '{"defaultAction":"SCMP_ACT_ALLOW","syscalls":[{"names":["getppid"],"action":"SCMP_ACT_ERRNO","args":[{"index":0,"value":1,"op":"SCMP_CMP_FOO"}]}]}' \
        'linux\.seccomp\.syscalls\[0\]\.args\[0\]\.op.*SCMP_CMP_FOO'
bad_create "unknown flag" '{"defaultAction":"SCMP_ACT_ALLOW","flags":["SECCOMP_FILTER_FLAG_BOGUS"]}' 'linux\.seccomp\.flags\[0\]'
bad_create "unknown architecture" '{"defaultAction":"SCMP_ACT_ALLOW","architectures":["SCMP_ARCH_PDP11"]}' 'linux\.seccomp\.architectures\[0\]'
bad_create "errnoRet with SCMP_ACT_KILL" '{"defaultAction":"SCMP_ACT_ALLOW","syscalls":[{"names":["getppid"],"action":"SCMP_ACT_KILL","errnoRet":3}]}' \
        'linux\.seccomp\.syscalls\[0\]\.errnoRet'
bad_create "argument index 6" '{"defaultAction":"SCMP_ACT_ALLOW","syscalls":[{"names":["getppid"],"action":"SCMP_ACT_ERRNO","args":[{"index":6,"value":1,"op":"SCMP_CMP_EQ"}]}]}' \
        'linux\.seccomp\.syscalls\[0\]\.args\[0\]\.index'
bad_create "SCMP_ACT_NOTIFY without listenerPath" "$(rule SCMP_ACT_NOTIFY)" 'linux\.seccomp\.listenerPath'

# ---------------------------------------------------------------------------------------------------------
# SCMP_ACT_NOTIFY: the agent gets the listener and the container process state, and answers.

notify_case() { # notify_case NNP(true|false)
        local sock=$TEST_TMPDIR/agent-$1.sock stout=$TEST_TMPDIR/agent-$1.state apid id
        rm -f "$sock" "$stout"
        "$SECCOMP_AGENT" "$sock" --value 4242 --state-out "$stout" 2>"$TEST_TMPDIR/agent-$1.err" &
        apid=$!
        cleanup_add kill "$apid"
        WAIT_FOR_TIMEOUT=5 wait_for test -S "$sock" || diag "the agent did not listen on $sock"
        srun "notify-nnp-$1" "$(jq -c --arg s "$sock" '. + {listenerPath: $s, listenerMetadata: "meta-data 1"}' <<<"$(rule SCMP_ACT_NOTIFY)")" \
                '["sh","-c","sec-sysc call getppid; sec-sysc call getpid >/dev/null; echo done"]' ".process.noNewPrivileges=$1"
        id=$last_id
        is "$rc:$(echo $out)" "0:ret=4242 done" "SCMP_ACT_NOTIFY (noNewPrivileges $1): getppid answered by the agent (4242)"
        if [ -s "$stout" ]; then
                is "$(jq -c --arg id "$id" '[.ociVersion != null, .fds, .metadata, .state.id == $id, .pid > 0, .state.status]' "$stout")" \
                        '[true,["seccompFd"],"meta-data 1",true,true,"created"]' \
                        "notify (noNewPrivileges $1): the agent got fds [seccompFd], listenerMetadata, the state of $id and a pid"
        else
                _tap_result 1 "notify (noNewPrivileges $1): the agent wrote the container process state"
                diag "agent stderr: $(cat "$TEST_TMPDIR/agent-$1.err")"
        fi
        like "$(cat "$TEST_TMPDIR/agent-$1.err")" "syscall getppid" "notify (noNewPrivileges $1): the agent logged the notification"
        kill "$apid" 2>/dev/null; wait "$apid" 2>/dev/null
}
notify_case true
notify_case false

# An agent that is not there: start fails promptly with a message naming listenerPath.
srun notify-no-agent "$(jq -c --arg s "$TEST_TMPDIR/nobody.sock" '. + {listenerPath: $s}' <<<"$(rule SCMP_ACT_NOTIFY)")" "$(call)"
like "$rc:$err" '^1:.*listenerPath' "SCMP_ACT_NOTIFY with no agent listening: run fails promptly naming listenerPath"
like "$err" 'failed to connect with seccomp agent' "... in runc's wording (runc's seccomp-notify.bats looks for it)"
no_leftovers "$last_id"

# linux.seccomp.flags: without the field, SECCOMP_FILTER_FLAG_SPEC_ALLOW (4) where the kernel has it, as runc
# and Docker do; an empty list is no flag at all; the flags given are the flags loaded (runc's seccomp.bats)
for fl in absent '[]' '["SECCOMP_FILTER_FLAG_LOG"]'; do
        id=$(new_id scfl); track_container "$id"
        if [ "$fl" = absent ]; then f='del(.linux.seccomp.flags)'; else f=".linux.seccomp.flags=$fl"; fi
        bundle_set "$B" ".linux.seccomp={defaultAction: \"SCMP_ACT_ALLOW\", syscalls: [{names: [\"mkdir\"], action: \"SCMP_ACT_ERRNO\"}]}
                | .process.args=[\"true\"] | $f"
        out=$("$SDRUN" --debug --root "$SDRUN_ROOT" run --bundle "$B" "$id" 2>&1 </dev/null | grep -o 'seccomp filter flags: [0-9]*')
        case $fl in
        absent) want=4 ;;
        '[]') want=0 ;;
        *) want=2 ;;
        esac
        if [ "$fl" = absent ] && ! grep -q SECCOMP_FILTER_FLAG_SPEC_ALLOW <<<"$(sd features)"; then want=0; fi
        is "$out" "seccomp filter flags: $want" "seccomp flags $fl: the filter is loaded with $want"
        no_leftovers "$id"
done

# ---------------------------------------------------------------------------------------------------------
# Never hang: each sdrun call below is bounded by `timeout 10` (exit status 124 fails the test).

for act in SCMP_ACT_KILL_PROCESS SCMP_ACT_KILL_THREAD; do
        p=$(jq -cn --arg a "$act" '{defaultAction: "SCMP_ACT_ALLOW", syscalls: [{names: ["execve","execveat"], action: $a}]}')
        for nnp in true false; do
                srun "kill-execve-$act" "$p" '["true"]' ".process.noNewPrivileges=$nnp"
                like "$rc:$err" '^1:.*(seccomp|SIGSYS|signal 31)' "$act on execve (noNewPrivileges $nnp): run fails promptly, clearly: $(head -c 200 <<<"$err")"
                no_leftovers "$last_id"
        done

        id=$(new_id scx); track_container "$id"
        bundle_set "$B" '.linux.seccomp=$p | .process.args=["true"] | .process.noNewPrivileges=true' --argjson p "$p"
        rc=0; timeout -k 2 10 "$SDRUN" --root "$SDRUN_ROOT" create --bundle "$B" "$id" >/dev/null 2>"$TEST_TMPDIR/err" || rc=$?
        is "$rc" 0 "$act on execve: create succeeds (the filter is loaded at start)"
        rc=0; timeout -k 2 10 "$SDRUN" --root "$SDRUN_ROOT" start "$id" 2>"$TEST_TMPDIR/err" || rc=$?
        err=$(cat "$TEST_TMPDIR/err")
        like "$rc:$err" '^1:.*(seccomp|SIGSYS|signal 31)' "$act on execve: start fails promptly, clearly: $(head -c 200 <<<"$err")"
        WAIT_FOR_TIMEOUT=5 wait_for sh -c "[ \"\$($SDRUN --root $SDRUN_ROOT state $id | jq -r .status)\" = stopped ]"
        is "$(status_of "$id")" stopped "$act on execve: the container is stopped after the failed start"
        rc=0; timeout -k 2 10 "$SDRUN" --root "$SDRUN_ROOT" delete "$id" 2>"$TEST_TMPDIR/err" || rc=$?
        is "$rc" 0 "$act on execve: delete succeeds promptly"
        no_leftovers "$id"
done

# noNewPrivileges false: the filter is loaded before the user switch; one that kills the init's own setup
# (setgroups) makes run fail promptly.
for act in SCMP_ACT_KILL_PROCESS SCMP_ACT_KILL_THREAD; do
        srun "kill-setgroups-$act" "$(jq -cn --arg a "$act" '{defaultAction: "SCMP_ACT_ALLOW", syscalls: [{names: ["setgroups"], action: $a}]}')" \
                '["true"]' '.process.noNewPrivileges=false'
        like "$rc:$err" '^1:.*(seccomp|SIGSYS|signal 31)' "$act on setgroups, the init's own setup: run fails promptly, clearly: $(head -c 200 <<<"$err")"
        no_leftovers "$last_id"
done

# The user process makes the killed syscall after start: start succeeds, the container stops with SIGSYS.
p=$(rule SCMP_ACT_KILL_PROCESS)
id=$(new_id scy); track_container "$id"
bundle_set "$B" '.linux.seccomp=$p | .process.args=["sec-sysc","sleep-call","500","getppid"]' --argjson p "$p"
rc=0; timeout -k 2 10 "$SDRUN" --root "$SDRUN_ROOT" create --bundle "$B" "$id" >/dev/null 2>&1 || rc=$?
rc2=0; timeout -k 2 10 "$SDRUN" --root "$SDRUN_ROOT" start "$id" 2>/dev/null || rc2=$?
is "$rc:$rc2" "0:0" "KILL_PROCESS on a syscall made after start: create and start succeed"
WAIT_FOR_TIMEOUT=8 wait_for sh -c "[ \"\$($SDRUN --root $SDRUN_ROOT state $id | jq -r .status)\" = stopped ]"
is "$(status_of "$id")" stopped "... the container is stopped once the process made the syscall"
rc=0; timeout -k 2 10 "$SDRUN" --root "$SDRUN_ROOT" delete "$id" 2>/dev/null || rc=$?
is "$rc" 0 "... delete succeeds"
no_leftovers "$id"
srun after-start "$p" '["sec-sysc","sleep-call","300","getppid"]'
is "$rc" 159 "KILL_PROCESS on a syscall made after start: run exits 159 promptly"

# Multi-threaded process, the thread-group leader makes the syscall.
srun mt-kill-process "$p" '["sec-sysc","thread","getppid"]'
is "$rc:$out" "159:thread alive" "multi-threaded, SCMP_ACT_KILL_PROCESS: the whole process dies, run exits 159"

# KILL_THREAD: only the leader dies; the process lives on with a zombie leader while its other thread runs.
# That is a live container (runc, crun: the same): `run` keeps waiting, `kill` and `delete --force` end it.
p=$(rule SCMP_ACT_KILL_THREAD)
id=$(new_id scz); track_container "$id"
bundle_set "$B" '.linux.seccomp=$p | .process.args=["sec-sysc","thread","getppid"]' --argjson p "$p"
timeout -k 2 20 "$SDRUN" --root "$SDRUN_ROOT" run --bundle "$B" "$id" >"$TEST_TMPDIR/mt.out" 2>"$TEST_TMPDIR/mt.err" &
runpid=$!
cleanup_add kill "$runpid"
WAIT_FOR_TIMEOUT=8 wait_for grep -q "thread alive" "$TEST_TMPDIR/mt.out"
pid=$(sd state "$id" 2>/dev/null | jq -r .pid)
# the leader's getppid comes after the thread's line: wait for it to be killed (a zombie), not a fixed time
wait_for sh -c "awk '/^State:/ {print \$2}' /proc/$pid/status | grep -qx Z"
leader=$(awk '/^State:/ {print $2}' "/proc/$pid/status" 2>/dev/null)
threads=$(awk '/^Threads:/ {print $2}' "/proc/$pid/status" 2>/dev/null)
is "$(status_of "$id"):$leader:$threads" "running:Z:2" \
        "multi-threaded, SCMP_ACT_KILL_THREAD: the leader is a zombie, its thread lives (Threads counts both), state says running"
kill -0 "$runpid" 2>/dev/null
is "$?" 0 "... foreground run is still waiting (the process is alive)"
rc=0; timeout -k 2 10 "$SDRUN" --root "$SDRUN_ROOT" kill "$id" KILL 2>"$TEST_TMPDIR/err" || rc=$?
is "$rc" 0 "... kill KILL succeeds promptly: $(cat "$TEST_TMPDIR/err")" ||
        timeout -k 2 10 "$SDRUN" --root "$SDRUN_ROOT" delete --force "$id" >/dev/null 2>&1
rc=0; t0=$SECONDS; wait "$runpid" || rc=$?
is "$rc" 137 "... then run returns 137 (128+SIGKILL) at once ($((SECONDS - t0)) s)"
no_leftovers "$id"

# The same, ended with delete --force (detached run).
id=$(new_id scz); track_container "$id"
rc=0; timeout -k 2 10 "$SDRUN" --root "$SDRUN_ROOT" run -d --bundle "$B" "$id" >"$TEST_TMPDIR/mt2.out" 2>&1 </dev/null || rc=$?
is "$rc" 0 "multi-threaded KILL_THREAD, run -d: returns promptly"
WAIT_FOR_TIMEOUT=8 wait_for grep -q "thread alive" "$TEST_TMPDIR/mt2.out"
sleep 0.3
rc=0; timeout -k 2 10 "$SDRUN" --root "$SDRUN_ROOT" delete --force "$id" 2>"$TEST_TMPDIR/err" || rc=$?
is "$rc" 0 "... delete --force of the zombie-leader container succeeds promptly: $(cat "$TEST_TMPDIR/err")"
no_leftovers "$id"

# ---------------------------------------------------------------------------------------------------------
# exec: it gets the container's filter, loaded the same way, and never hangs either.

# noNewPrivileges false: the filter is loaded before the user switch, in the init and in each exec'd
# process. setgroups(1, ...) is killed: the init calls setgroups(0, NULL), `exec --additional-gids` not.
p=$(jq -cn '{defaultAction: "SCMP_ACT_ALLOW", syscalls: [
        {names: ["getppid"], action: "SCMP_ACT_KILL_PROCESS", args: [{index: 0, value: 1, op: "SCMP_CMP_EQ"}]},
        {names: ["getppid"], action: "SCMP_ACT_KILL_THREAD", args: [{index: 0, value: 2, op: "SCMP_CMP_EQ"}]},
        {names: ["getppid"], action: "SCMP_ACT_ERRNO", errnoRet: 42, args: [{index: 0, value: 3, op: "SCMP_CMP_EQ"}]},
        {names: ["setgroups"], action: "SCMP_ACT_KILL_PROCESS", args: [{index: 0, value: 1, op: "SCMP_CMP_EQ"}]}]}')
id=$(new_id sce); track_container "$id"
bundle_set "$B" '.linux.seccomp=$p | .process.args=["sleep","1000"] | .process.noNewPrivileges=false' --argjson p "$p"
rc=0; timeout -k 2 10 "$SDRUN" --root "$SDRUN_ROOT" run -d --bundle "$B" "$id" >/dev/null 2>"$TEST_TMPDIR/err" </dev/null || rc=$?
is "$rc" 0 "exec: container with a filter started: $(cat "$TEST_TMPDIR/err")"
ex() { rc=0; out=$(timeout -k 2 10 "$SDRUN" --root "$SDRUN_ROOT" exec "$@" 2>"$TEST_TMPDIR/err" </dev/null) || rc=$?; err=$(cat "$TEST_TMPDIR/err"); }
ex "$id" sec-sysc call getppid 3
is "$rc:$out" "0:errno=42" "exec: the container's filter applies to the exec'd process (ERRNO 42)"
ex "$id" sec-sysc call getppid 1
is "$rc" 159 "exec: KILL_PROCESS in the exec'd process: exec exits 159 promptly"
ex "$id" sec-sysc thread getppid 1
is "$rc:$out" "159:thread alive" "exec: multi-threaded KILL_PROCESS: exec exits 159 promptly"
ex "$id" sec-sysc call getppid 2
is "$rc" 159 "exec: KILL_THREAD (single thread): exec exits 159 promptly"
ex --additional-gids 5 "$id" true
like "$rc:$err" '^[1-9][0-9]*:.*(seccomp|SIGSYS|signal 31)' \
        "exec: the filter kills the exec's own setup (setgroups): exec fails promptly, clearly: $(head -c 200 <<<"$err")"
is "$(status_of "$id")" running "exec: the container survives the killed exec processes"
# multi-threaded KILL_THREAD in exec: the exec'd process lives on (zombie leader + a thread);
# exec keeps waiting as run does, delete --force ends everything.
timeout -k 2 20 "$SDRUN" --root "$SDRUN_ROOT" exec "$id" sec-sysc thread getppid 2 >"$TEST_TMPDIR/ex.out" 2>&1 &
expid=$!
cleanup_add kill "$expid"
WAIT_FOR_TIMEOUT=8 wait_for grep -q "thread alive" "$TEST_TMPDIR/ex.out"
sleep 0.3
kill -0 "$expid" 2>/dev/null
is "$?" 0 "exec: multi-threaded KILL_THREAD: exec still waits (its process is alive)"
rc=0; timeout -k 2 10 "$SDRUN" --root "$SDRUN_ROOT" delete --force "$id" 2>"$TEST_TMPDIR/err" || rc=$?
is "$rc" 0 "exec: delete --force with a zombie-leader exec process succeeds promptly"
rc=0; t0=$SECONDS; wait "$expid" || rc=$?
like "$rc:$((SECONDS - t0))" '^(137|1|255):[0-2]$' "exec returns at once after delete --force (status $rc)"
no_leftovers "$id"

# ---------------------------------------------------------------------------------------------------------
# The compiled-program cache (ROOT/.seccomp-cache, src/runtime/seccomp-cache.c): the second container with a
# profile loads the program the first one compiled, and the filter acts the same; an entry whose key is not
# the profile's, one that is not ours alone, and a full cache are never used.
CACHE=$SDRUN_ROOT/.seccomp-cache
ERRNO_PROFILE=$(rule SCMP_ACT_ERRNO ',"errnoRet":38')   # ENOSYS from getppid, a marker only this profile gives
cached_run() { # cached_run DESC: run the errno profile with --debug, check the filter and say where it came from
        local id
        id=$(new_id cache); track_container "$id"
        bundle_set "$B" '.linux.seccomp=$p | .process.args=$a' --argjson p "$ERRNO_PROFILE" --argjson a "$(call)" ||
                bail "bundle_set failed"
        rm -f "$TEST_TMPDIR/cache.log"
        out=$(timeout -k 2 10 "$SDRUN" --root "$SDRUN_ROOT" --debug --log "$TEST_TMPDIR/cache.log" run --bundle "$B" "$id" 2>&1)
        like "$out" 'errno=38' "$1: the filter acts (getppid fails with the profile's errnoRet 38)"
        no_leftovers "$id"
        src=$(grep -o 'linux.seccomp: compiled[^"]*' "$TEST_TMPDIR/cache.log")
}
rm -rf "$CACHE"
cached_run "first container"
like "$src" "compiled, stored as $CACHE/[0-9a-f]{16}$" "the first compile is stored ($src)"
entry=$(ls "$CACHE")
is "$(stat -c '%a %U' "$CACHE" "$CACHE/$entry" | paste -sd' ')" "700 root 600 root" "the cache and its entry are root's alone"
cached_run "second container"
like "$src" "compiled program from $CACHE/$entry$" "the second container loads the stored program"
# An entry under the right name whose key differs (a hash collision, or a swapped file) is not used: the
# entry of a profile that allows getppid, put under this profile's name, would make getppid succeed.
id=$(new_id cache); track_container "$id"
bundle_set "$B" '.linux.seccomp=$p | .process.args=$a' --argjson p "$(rule SCMP_ACT_ALLOW)" --argjson a "$(call)" ||
        bail "bundle_set failed"
timeout -k 2 10 "$SDRUN" --root "$SDRUN_ROOT" run --bundle "$B" "$id" >/dev/null 2>&1
no_leftovers "$id"
other=$(ls "$CACHE" | grep -vx "$entry")
is "$(wc -w <<<"$other")" 1 "a second profile has an entry of its own"
cp "$CACHE/$other" "$CACHE/$entry"
cached_run "an entry with another key"
like "$src" "compiled, stored as $CACHE/$entry$" "an entry whose key is not the profile's is compiled again and replaced"
cached_run "after the replacement"
like "$src" "compiled program from $CACHE/$entry$" "the replaced entry is used"
chmod 0660 "$CACHE/$entry"
cached_run "a group-writable entry"
like "$src" "compiled, stored as" "an entry others may write is not used"
for i in $(seq 1 64); do : >"$CACHE/$(printf '%016x' "$i")"; done
chmod 0600 "$CACHE"/*
rm -f "$CACHE/$entry"
cached_run "a full cache"
is "$(ls "$CACHE")" "$entry" "a store into a full cache (64 entries) empties it first"
# A notify profile is not cached (its listener differs per container): covered by the count staying 1.
rm -rf "$CACHE"

done_testing
