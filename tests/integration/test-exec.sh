#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# `sdrun exec`: output and exit status (128+signal), --env/--cwd/--user/--additional-gids/--cap, --process,
# the states exec refuses (created, paused, stopped) and --ignore-paused, the container's cgroup and pid
# namespace (checked from the host), fds and /proc/self/exe of the exec'd process, the CVE-2019-5736
# defences (a container process tries to open the runtime's exe while exec runs), --detach/--pid-file/--pidfd-socket,
# --tty with --console-socket, a missing command, and seccomp kills during and after exec (bounded).
. "$(dirname "$0")/lib.sh"

require_root
require_systemd

sd() { "$SDRUN" --root "$SDRUN_ROOT" "$@"; }
status_of() { sd state "$1" 2>/dev/null | jq -r .status; }
pid_of() { sd state "$1" 2>/dev/null | jq -r '.pid // empty'; }
is_status() { [ "$(status_of "$1")" = "$2" ]; }
HELPERS=$SDRUN_SRCDIR/tests/integration/helpers
command -v python3 >/dev/null || bail "python3 is needed (console socket helpers)"

B=$TEST_TMPDIR/b
make_bundle "$B" || bail "make_bundle failed"
# No linux.resources: a deny-all device rule without the default allow list would deny /dev/null to every
# process of the container (a matter of the scope mapping, not of exec).
bundle_set "$B" '.process.args=["sleep","100000"] | .process.capabilities.ambient=[] | del(.linux.resources)' ||
        bail "bundle_set failed"

id=$(new_id exec); track_container "$id"
sd run -d --bundle "$B" "$id" >/dev/null 2>"$TEST_TMPDIR/err" || { cat "$TEST_TMPDIR/err" >&2; bail "run -d failed"; }
WAIT_FOR_TIMEOUT=10 wait_for is_status "$id" running
init=$(pid_of "$id")
[ -n "$init" ] || bail "no init pid"
unit=$(unit_of "$id")

# ---------------------------------------------------------------------------------------------------------
# output and exit status

rc=0; out=$(sd exec "$id" sh -c 'echo hello; echo err >&2; exit 3' 2>"$TEST_TMPDIR/err") || rc=$?
is "$out" hello "exec: stdout of the process"
is "$(cat "$TEST_TMPDIR/err")" err "exec: stderr of the process, nothing else"
is "$rc" 3 "exec: exit status of the process (3)"
rc=0; sd exec "$id" sh -c 'kill -TERM $$' 2>/dev/null || rc=$?
is "$rc" 143 "exec: a process killed by SIGTERM gives 128+15"
# SIGTERM sent to sdrun exec must reach the process. 143 would not tell: sdrun dying of the signal itself
# gives it too (and leaves the process running). So the process traps TERM, leaves a marker and exits 42,
# which exec must mirror. It says when its trap is set; the signal goes to sdrun itself (not to timeout,
# which only bounds the case).
shm=/proc/$init/root/dev/shm
rm -f "$shm/term.ready" "$shm/term.got"
timeout -s KILL 20 "$SDRUN" --root "$SDRUN_ROOT" exec "$id" sh -c \
        'trap "echo TERM >/dev/shm/term.got; kill \$!; exit 42" TERM; sleep 1000 & echo $$ >/dev/shm/term.ready; wait' &
tpid=$!
WAIT_FOR_TIMEOUT=10 wait_for test -s "$shm/term.ready"
epid=$(pgrep -P "$tpid")
ok_desc "exec: the process set its TERM trap (sdrun exec pid ${epid:-none})" test -s "$shm/term.ready" -a -n "$epid"
[ -z "$epid" ] || kill -TERM "$epid"
rc=0; wait "$tpid" || rc=$?
is "$rc" 42 "exec: SIGTERM sent to sdrun exec is forwarded: the process trapped it and exec exits with its status"
is "$(cat "$shm/term.got" 2>/dev/null)" TERM "exec: the exec'd process itself received SIGTERM"

# ---------------------------------------------------------------------------------------------------------
# overrides of config.json's process

is "$(sd exec --env FOO=bar -e PATH=/bin "$id" sh -c 'echo $FOO:$PATH')" "bar:/bin" "--env sets and overrides variables"
is "$(sd exec --cwd /proc "$id" pwd)" /proc "--cwd"
is "$(sd exec "$id" pwd)" / "cwd defaults to config.json's process.cwd"
is "$(sd exec --user 1000:1000 "$id" sh -c 'echo $(id -u):$(id -g):$HOME')" "1000:1000:/home/user" "--user UID:GID, HOME from the container's /etc/passwd"
is "$(sd exec -u 1000 -g 5 -g 7 "$id" id -G)" "0 5 7" "--additional-gids"
capeff() { sd exec "$@" "$id" sh -c 'grep CapEff /proc/self/status | cut -f2'; }
is "$(capeff)" "0000000020000420" "default capabilities from config.json (AUDIT_WRITE, KILL, NET_BIND_SERVICE)"
is "$(capeff --cap CAP_SYS_ADMIN)" "0000000020200420" "--cap CAP_SYS_ADMIN is added"
is "$(sd exec "$id" sh -c 'grep NoNewPrivs /proc/self/status | cut -f2')" 1 "noNewPrivileges from config.json"
is "$(sd exec "$id" sh -c 'ulimit -n')" 1024 "rlimits from config.json"
# An unknown name is ignored with a warning, as runc and crun do (crun's test_exec.py "exec-add-capability")
rc=0; out=$(sd exec --cap CAP_NOPE --cap CAP_KILL "$id" sh -c 'grep CapEff /proc/self/status | cut -f2' 2>"$TEST_TMPDIR/err") || rc=$?
is "$rc:$out" "0:0000000020000420" "--cap with an unknown name: runs, the other --cap applies"
like "$(cat "$TEST_TMPDIR/err")" 'unknown capability "CAP_NOPE", ignoring it' "... with a warning naming it"
rc=0; err=$(sd exec --apparmor foo "$id" true 2>&1) || rc=$?
like "$rc:$err" '^255:.*--apparmor: .*AppArmor is not enabled on this host' "--apparmor: refused (no AppArmor on this host)"
rc=0; err=$(sd exec --process-label foo "$id" true 2>&1) || rc=$?
like "$rc:$err" '^255:.*--process-label: .*SELinux is not enabled on this host' "--process-label: refused (no SELinux on this host)"

P=$TEST_TMPDIR/process.json
cat >"$P" <<'EOF'
{ "args": ["sh", "-c", "echo $A $(pwd) $(id -u)"], "env": ["PATH=/bin", "A=from-file"], "cwd": "/dev",
  "user": { "uid": 65534, "gid": 65534 }, "terminal": false }
EOF
is "$(sd exec --process "$P" "$id")" "from-file /dev 65534" "--process FILE: args, env, cwd, user from the file"
echo '{ "args": ["true"], "cwd": "relative" }' >"$TEST_TMPDIR/bad.json"
rc=0; err=$(sd exec -p "$TEST_TMPDIR/bad.json" "$id" 2>&1) || rc=$?
like "$rc:$err" '^255:.*process\.cwd' "--process with a relative cwd: error naming process.cwd"

# ---------------------------------------------------------------------------------------------------------
# cgroup and pid namespace, seen from the host

PF=$TEST_TMPDIR/exec.pid
t0=$(date +%s%N)
sd exec -d --pid-file "$PF" "$id" sleep 777
t1=$(date +%s%N)
ok_desc "--detach returns at once ($(((t1 - t0) / 1000000)) ms)" test $(((t1 - t0) / 1000000)) -lt 2000
xp=$(cat "$PF" 2>/dev/null)
like "$xp" '^[0-9]+$' "--pid-file holds a pid"
is "$(tr '\0' ' ' <"/proc/$xp/cmdline" 2>/dev/null)" "sleep 777 " "the pid file names the exec'd process"
is "$(cat "/proc/$xp/cgroup")" "$(cat "/proc/$init/cgroup")" "the exec'd process is in every cgroup of the init"
cg=$(cgroup_dir "$unit")
ok_desc "the exec'd process is listed in a cgroup.procs of the scope ($cg)" grep -rqx --include=cgroup.procs "$xp" "$cg"
is "$(systemctl list-units --all --plain --no-legend --type=scope -- "*$id*" | wc -l)" 1 "exec creates no unit of its own"
for ns in pid mnt net ipc uts; do
        is "$(readlink "/proc/$xp/ns/$ns")" "$(readlink "/proc/$init/ns/$ns")" "the exec'd process is in the init's $ns namespace"
done
inner=$(sd exec "$id" sh -c 'echo $$ $PPID')
like "$inner" '^[0-9]+ 0$' "inside: a pid of the container's namespace, parent outside it (PPID 0)"
unlike "$inner" '^1 ' "inside: the exec'd process is not pid 1"
like "$(sd exec "$id" ps -o pid,args)" 'sleep 777' "inside: ps shows the detached exec'd process"
kill "$xp"
# --pidfd-socket (runc's pidfd-socket.bats): a pidfd of the exec'd process, which the receiver signals
PS=$TEST_TMPDIR/pidfd.sock
python3 "$HELPERS/pidfd-recv.py" "$PS" SIGKILL >"$TEST_TMPDIR/pidfd.out" 2>&1 & recv=$!
wait_for test -e "$PS.ready"
ok_desc "exec -d --pidfd-socket" sd exec -d --pid-file "$PF" --pidfd-socket "$PS" "$id" sleep 778
xp=$(cat "$PF" 2>/dev/null)
wait_for test -s "$TEST_TMPDIR/pidfd.out"
is "$(cat "$TEST_TMPDIR/pidfd.out")" "$xp" "exec --pidfd-socket: the pidfd is the exec'd process's ($xp)"
kill -TERM "$recv"; wait "$recv"
ok_desc "exec --pidfd-socket: SIGKILL through it ends the process" wait_for sh -c "! grep -qs 'sleep.778' /proc/$xp/cmdline"
is "$(status_of "$id")" running "... and the container runs on"
rc=0; err=$(sd exec --pidfd-socket "$TEST_TMPDIR/no-such.sock" "$id" sleep 779 2>&1) || rc=$?
like "$rc:$err" '^255:.*--pidfd-socket: connect to .*no-such.sock' "exec --pidfd-socket without a listener fails: $err"
out=$(sd exec "$id" ps -o args)
unlike "$out" 'sleep 779' "... and its process is gone"
# --pid-file that cannot be written: exec fails as runc's does (255), and the process it started is killed
rc=0; err=$(sd exec -d --pid-file "$TEST_TMPDIR/no-such-dir/exec.pid" "$id" sleep 781 2>&1) || rc=$?
like "$rc:$err" '^255:.*exec failed: --pid-file: write ".*no-such-dir/exec.pid"' "exec --pid-file that cannot be written fails: $err"
unlike "$(sd exec "$id" ps -o args)" 'sleep 781' "... and its process is gone"

# ---------------------------------------------------------------------------------------------------------
# fds, /proc/self/exe, cwd

# ("; true": else ash execs ls itself, and $$ would be ls with its own directory fd.)
is "$(sd exec "$id" sh -c 'ls /proc/$$/fd; true' | tr '\n' ' ')" "0 1 2 " "only fds 0 1 2 reach the exec'd process"
is "$(sd exec --preserve-fds 2 "$id" sh -c 'ls /proc/$$/fd; true' 3</dev/null 4</dev/null | tr '\n' ' ')" "0 1 2 3 4 " "--preserve-fds 2 passes fds 3 and 4, nothing else"
is "$(sd exec "$id" readlink /proc/self/exe)" /bin/busybox "/proc/self/exe of the exec'd process is its command, not sdrun"
is "$(sd exec --cwd /dev "$id" readlink /proc/self/cwd)" /dev "/proc/self/cwd is inside the container"

# ---------------------------------------------------------------------------------------------------------
# CVE-2019-5736: a container process tries to open the runtime's binary through /proc while exec runs.
# The exec below is held before its execve (its --console-socket never accepts: the runtime blocks sending
# the pty master while the child waits for it). An attacker process in the container looks for the child and
# tries /proc/PID/exe, /proc/PID/fd and /proc/PID/root.
# - With the container's own pid namespace and a profile that lets the trampoline clone, the child never
#   enters that namespace: it waits outside, and the trampoline clones the process in. The attacker never
#   sees it.
# - With a profile that refuses the trampoline's clone (CLONE_PARENT), the child is cloned into the pid
#   namespace itself, from a sealed copy of the binary (exec re-executed itself): the attacker sees it, and
#   opens nothing.

cat >"$B/rootfs/attack.sh" 2>/dev/null <<'EOF2' || true
#!/bin/sh
i=0
while [ $i -lt 4000 ]; do
        i=$((i + 1))
        for d in /proc/[0-9]*; do
                [ "$(cat $d/comm 2>/dev/null)" = "sdrun:exec" ] || continue
                p=${d#/proc/}
                echo "seen $p" >/dev/shm/attack.log
                cat $d/exe >/dev/null 2>&1 && echo "exe-read-open OK" >>/dev/shm/attack.log
                (: >>$d/exe) 2>/dev/null && echo "exe-write-open OK" >>/dev/shm/attack.log
                readlink $d/exe >/dev/null 2>&1 && echo "exe-readlink OK" >>/dev/shm/attack.log
                for f in $d/fd/*; do
                        readlink $f >/dev/null 2>&1 && echo "fd-readlink OK" >>/dev/shm/attack.log
                        cat $f >/dev/null 2>&1 </dev/null && echo "fd-open OK" >>/dev/shm/attack.log
                done
                cat $d/environ >/dev/null 2>&1 && echo "environ-read OK" >>/dev/shm/attack.log
                cat $d/mem >/dev/null 2>&1 && echo "mem-read OK" >>/dev/shm/attack.log
                ls $d/root/ >/dev/null 2>&1 && echo "root-list OK" >>/dev/shm/attack.log
                echo done >>/dev/shm/attack.log
                exit 0
        done
        [ -e /dev/shm/attack.stop ] && break
        usleep 2000
done
echo "never saw the exec child" >>/dev/shm/attack.log
echo done >>/dev/shm/attack.log
EOF2
chmod 755 "$B/rootfs/attack.sh" 2>/dev/null
[ -x "$B/rootfs/attack.sh" ] || bail "cannot write the attacker script into the bundle's rootfs"
cat >"$TEST_TMPDIR/stuck-console.py" <<'EOF2'
import socket, sys, time
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind(sys.argv[1]); s.listen(0)
c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM); c.connect(sys.argv[1])  # fills the backlog
open(sys.argv[1] + ".ready", "w").close()
time.sleep(30)
EOF2

# held_exec_attack ID INIT LABEL SEEN: the attack against a held exec into container ID (init INIT); SEEN is
# yes when the child is expected in the container's pid namespace.
held_exec_attack() {
        local cid=$1 cinit=$2 label=$3 seen=$4 CS=$TEST_TMPDIR/stuck-$1.sock stuckpid heldpid log child
        python3 "$TEST_TMPDIR/stuck-console.py" "$CS" & stuckpid=$!
        cleanup_add kill "$stuckpid"
        wait_for test -e "$CS.ready"
        sd exec -d "$cid" /attack.sh
        "$SDRUN" --root "$SDRUN_ROOT" exec -t --console-socket "$CS" -d "$cid" true 2>/dev/null & heldpid=$!
        # the held child, from the host
        WAIT_FOR_TIMEOUT=10 wait_for sh -c "grep -lx sdrun:exec /proc/[0-9]*/comm >/dev/null 2>&1"
        child=$(grep -lx sdrun:exec /proc/[0-9]*/comm 2>/dev/null | head -n1 | cut -d/ -f3)
        if [ "$seen" = yes ]; then
                WAIT_FOR_TIMEOUT=15 wait_for grep -qx done "/proc/$cinit/root/dev/shm/attack.log"
        else
                # give the attacker a good while to look, then let it say what it saw
                sleep 3
                : >"/proc/$cinit/root/dev/shm/attack.stop"
                WAIT_FOR_TIMEOUT=15 wait_for grep -qx done "/proc/$cinit/root/dev/shm/attack.log"
        fi
        log=$(cat "/proc/$cinit/root/dev/shm/attack.log" 2>/dev/null)
        diag "$label: $log"
        if [ "$seen" = yes ]; then
                like "$log" '^seen [0-9]+' "CVE-2019-5736, $label: the attacker saw the exec child in the container's pid namespace"
                like "$(readlink "/proc/$child/exe" 2>/dev/null)" '^/memfd:sdrun' \
                        "CVE-2019-5736, $label: that child runs from a sealed copy of the binary ($(readlink "/proc/$child/exe" 2>/dev/null))"
        else
                like "$log" '^never saw the exec child' "CVE-2019-5736, $label: no process of sdrun's is ever in the container's pid namespace"
                is "$(readlink "/proc/$child/ns/pid" 2>/dev/null)" "$(readlink /proc/self/ns/pid)" \
                        "CVE-2019-5736, $label: the held child waits in the host's pid namespace"
        fi
        unlike "$log" 'OK' "CVE-2019-5736, $label: nothing of the runtime's child could be opened"
        kill -KILL "$heldpid" 2>/dev/null; wait "$heldpid" 2>/dev/null
        WAIT_FOR_TIMEOUT=5 wait_for sh -c "! grep -qx sdrun:exec /proc/[0-9]*/comm"
        ok_desc "$label: the held child dies with its runtime" sh -c "! grep -qx sdrun:exec /proc/[0-9]*/comm"
        kill "$stuckpid" 2>/dev/null
}
held_exec_attack "$id" "$init" "the trampoline's clone" no

# The same container with a profile that refuses clone with CLONE_PARENT (what the trampoline would do).
BC=$TEST_TMPDIR/bc
make_bundle "$BC" || bail "make_bundle failed"
bundle_set "$BC" '.process.args=["sleep","100000"] | .process.capabilities.ambient=[] | del(.linux.resources) |
        .linux.seccomp={defaultAction: "SCMP_ACT_ALLOW", syscalls: [{names: ["clone"], action: "SCMP_ACT_ERRNO",
        args: [{index: 0, value: 32768, valueTwo: 32768, op: "SCMP_CMP_MASKED_EQ"}]}]}' || bail "bundle_set failed"
cp -a "$B/rootfs/attack.sh" "$BC/rootfs/attack.sh"
cid=$(new_id execc); track_container "$cid"
if sd run -d --bundle "$BC" "$cid" >/dev/null 2>"$TEST_TMPDIR/err"; then
        held_exec_attack "$cid" "$(pid_of "$cid")" "a profile without the trampoline's clone" yes
        is "$(sd exec "$cid" sh -c 'echo $PPID')" 0 "a profile without the trampoline's clone: exec works (parent outside)"
        sd delete --force "$cid" >/dev/null 2>&1
else
        fail "run -d with a profile that refuses clone(CLONE_PARENT) failed: $(cat "$TEST_TMPDIR/err")"
fi

# The original attack: the container's binary is a script whose interpreter is /proc/self/exe. The last
# execve happens from the sealed trampoline, so /proc/self/exe is that memfd, never sdrun: it runs the
# trampoline, which exits 127 without arguments (test-cve-2019-5736.sh has the full attacks).
printf '#!/proc/self/exe\n' >"$B/rootfs/evil" && chmod 755 "$B/rootfs/evil"
rc=0; err=$(sd exec "$id" /evil 2>&1) || rc=$?
is "$rc:$err" "127:" "CVE-2019-5736: a #!/proc/self/exe script runs the sealed trampoline, not sdrun"
rc=0; err=$(sd exec "$id" /proc/self/exe 2>&1) || rc=$?
is "$rc:$err" "127:" "CVE-2019-5736: exec of /proc/self/exe runs the sealed trampoline, not sdrun"

# ---------------------------------------------------------------------------------------------------------
# --tty with --console-socket

S=$TEST_TMPDIR/console.sock
python3 "$HELPERS/console-recv.py" "$S" "" >"$TEST_TMPDIR/console.out" 2>&1 & recv=$!
wait_for test -e "$S.ready"
rc=0; sd exec -t --console-socket "$S" "$id" sh -c 'tty; test -t 0 && echo stdin-is-tty' || rc=$?
wait "$recv"
is "$rc" 0 "exec --tty --console-socket: exit status"
like "$(tr -d '\r' <"$TEST_TMPDIR/console.out")" '/dev/pts/[0-9]+.*stdin-is-tty' "exec --tty: the process runs on a pty of the container's devpts"
rc=0; err=$(sd exec -t -d "$id" true 2>&1) || rc=$?
like "$rc:$err" '^1:.*cannot allocate tty' "--tty --detach without --console-socket: clear error"
# In the foreground, --tty without --console-socket proxies the pty to sdrun's own terminal (as runc does).
out=$( (sleep 0.5; printf 'echo "typed-$((20+3))"; tty; exit 5\n') |
        script -qec "stty rows 27 cols 99; $SDRUN --root $SDRUN_ROOT exec -t $id sh -c 'stty size; sh'; echo rc=\$?" /dev/null 2>&1 | tr -d '\r')
like "$out" $'(^|\n)27 99\n' "exec --tty in the foreground: the window size follows ours"
like "$out" $'\ntyped-23\n' "exec --tty in the foreground: input reaches the process"
like "$out" '/dev/pts/[0-9]+' "exec --tty in the foreground: the process runs on a pty of the container"
like "$out" 'rc=5' "exec --tty in the foreground: the exit status comes back"

# ---------------------------------------------------------------------------------------------------------
# --debug: the bootstrap, the init and exec's child log their steps as log lines (runc's debug.bats and
# exec.bats look for level=debug and for their phrases), to stderr or to --log, never into the container's
# stdio or console.

rc=0; out=$(sd --debug exec "$id" echo from-exec 2>"$TEST_TMPDIR/dbg") || rc=$?
is "$rc:$out" "0:from-exec" "exec --debug: the process's stdout only has its output"
dbg=$(cat "$TEST_TMPDIR/dbg")
like "$dbg" 'level=debug msg="nsexec container setup: ' "exec --debug: the runtime's line for the setup"
like "$dbg" 'level=debug msg="child process in init\(\): ' "exec --debug: exec's child logs from the container"
like "$dbg" 'level=debug msg="setns_init: about to exec \\"echo\\"' "exec --debug: its last line before the execve"
rm -f "$TEST_TMPDIR/dbg.log"
rc=0; out=$(sd --debug --log "$TEST_TMPDIR/dbg.log" exec "$id" true 2>&1) || rc=$?
is "$rc:$out" "0:" "exec --debug --log FILE: nothing on the terminal"
like "$(cat "$TEST_TMPDIR/dbg.log")" 'child process in init\(\).*setns_init: about to exec' "exec --debug --log FILE: the lines are in the file"
did=$(new_id exdbg); track_container "$did"
cp -a "$B" "$TEST_TMPDIR/btrue"
bundle_set "$TEST_TMPDIR/btrue" '.process.args=["true"]'
ok_desc "run --debug --log-format json --log FILE" sd --debug --log-format json --log "$TEST_TMPDIR/dbg.json" \
        run --bundle "$TEST_TMPDIR/btrue" "$did" </dev/null
like "$(cat "$TEST_TMPDIR/dbg.json")" '"level":"debug","msg":"nsexec started: .*"msg":"child process in init\(\): ' \
        "run --debug --log-format json: the bootstrap's and the init's lines"
no_leftovers "$did"
# create with a console: once create has returned, its stderr may be a pipe nobody reads. The init's debug
# lines there fail with EPIPE; the SIGPIPE must not kill it before start (the pid 1 of a pid namespace is
# immune to it anyway: so without one, as in a Kubernetes pod that shares its pid namespace).
tid=$(new_id exdbgt); track_container "$tid"
cp -a "$B" "$TEST_TMPDIR/bt"
bundle_set "$TEST_TMPDIR/bt" '.process.terminal=true | .process.args=["sh","-c","echo started-on-tty; sleep 100000"]
        | .linux.namespaces |= map(select(.type != "pid"))'
S=$TEST_TMPDIR/console2.sock
CONSOLE_RECV_SECONDS=120 python3 "$HELPERS/console-recv.py" "$S" "" >"$TEST_TMPDIR/console2.out" 2>&1 & recv=$!
wait_for test -e "$S.ready"
# (create's stderr is a pipe, closed by its reader as soon as create has exited)
ok_desc "create --debug --console-socket, stderr a pipe closed after create" python3 -c '
import subprocess, sys
p = subprocess.Popen(sys.argv[1:], stdin=subprocess.DEVNULL, stderr=subprocess.PIPE)
sys.exit(p.wait())' "$SDRUN" --root "$SDRUN_ROOT" --debug create --bundle "$TEST_TMPDIR/bt" --console-socket "$S" "$tid"
ok_desc "... then start" sd start "$tid"
WAIT_FOR_TIMEOUT=10 wait_for grep -q started-on-tty "$TEST_TMPDIR/console2.out"
is "$(status_of "$tid")" running "... the container runs (the init was not killed by SIGPIPE)"
unlike "$(cat "$TEST_TMPDIR/console2.out")" 'level=debug' "... and no debug line reached its console"
sd delete -f "$tid" >/dev/null 2>&1
kill "$recv" 2>/dev/null; wait "$recv" 2>/dev/null
no_leftovers "$tid"
# A caller that reads create's stderr to its end (bats' run, a Go exec.Cmd with a pipe, $(...)) gets it once
# create has returned: the init keeps no copy of it while it waits for start (runc's start.bats hung here).
for dbg in "" --debug; do
        tid=$(new_id exdbgc); track_container "$tid"
        CS=$TEST_TMPDIR/console-eof${dbg}.sock
        python3 "$HELPERS/console-recv.py" "$CS" "" >/dev/null 2>&1 & recv=$!
        wait_for test -e "$CS.ready"
        # (exit 0: create succeeded and its output pipe had EOF within 5 s of its exit; 3: no EOF)
        rc=0; python3 -c '
import select, subprocess, sys, time
p = subprocess.Popen(sys.argv[1:], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
rc = p.wait()
deadline = time.monotonic() + 5
while time.monotonic() < deadline:
    r, _, _ = select.select([p.stdout], [], [], 0.2)
    if r and not p.stdout.read1(4096):
        sys.exit(rc)
sys.exit(3)' "$SDRUN" --root "$SDRUN_ROOT" $dbg create --bundle "$TEST_TMPDIR/bt" --console-socket "$CS" "$tid" || rc=$?
        is "$rc" 0 "create ${dbg:+$dbg }--console-socket with its output captured: the caller has EOF once create returns"
        sd delete -f "$tid" >/dev/null 2>&1
        kill "$recv" 2>/dev/null; wait "$recv" 2>/dev/null
        no_leftovers "$tid"
done

# ---------------------------------------------------------------------------------------------------------
# errors

rc=0; err=$(sd exec "$id" nonexistent-cmd 2>&1 >/dev/null) || rc=$?
is "$rc" 255 "missing command: exit status 255 (as runc)"
like "$err" 'exec: "nonexistent-cmd": executable file not found in \$PATH' "missing command: runc's wording"
is "$(grep -c 'executable file not found' <<<"$err")" 1 "missing command: the error is printed once"
rc=0; err=$(sd exec "$id" /etc 2>&1) || rc=$?
like "$rc:$err" '^255:.*permission denied' "a directory as command: permission denied"
# execve(2) fails on a script whose interpreter is missing: one line, worded as runc 1.2 and later
# (runc's exec.bats "execve error")
printf '#!/no-such-interpreter foo\nsh\n' >"$B/rootfs/bad-interp.sh"
chmod +x "$B/rootfs/bad-interp.sh"
rc=0; err=$(sd exec "$id" /bad-interp.sh 2>&1) || rc=$?
is "$rc" 255 "a missing interpreter: exit status 255"
like "$err" '^sdrun: .*exec /bad-interp.sh: no such file or directory$' "a missing interpreter: runc's wording, one line: $err"
# --cgroup [CONTROLLERS:]PATH (runc's and crun's): the process joins a sub-cgroup of the container's cgroup
cg=$(unit_prop "$unit" ControlGroup)
before=$(pgrep -c -f "^sleep 100000" || true)
rc=0; err=$(sd exec --cgroup .. "$id" true 2>&1) || rc=$?
like "$rc:$err" '^255:.*--cgroup "\.\.": \.\. is not a sub cgroup path' "exec --cgroup ..: refused, runc's wording"
rc=0; err=$(sd exec --cgroup nonexistent "$id" true 2>&1) || rc=$?
like "$rc:$err" '^255:.* adding pid .*no such file or directory' "exec --cgroup of a missing sub-cgroup: refused, runc's wording: $err"
rc=0; err=$(sd exec --cgroup whaaat:/ "$id" true 2>&1) || rc=$?
like "$rc:$err" '^255:.*unknown controller "whaaat"' "exec --cgroup with an unknown controller: refused"
is "$(pgrep -c -f "^sleep 100000" || true)" "$before" "exec --cgroup failures leave no process behind"
out=$(sd exec --cgroup / "$id" cat /proc/self/cgroup 2>&1)
is "$(grep -v -c -- ":$cg\$" <<<"$out" | head -1)" "$(grep -c ':/$' <<<"$out")" "exec --cgroup /: the container's own cgroup, where it has one"
if [ "$(stat -fc %T /sys/fs/cgroup)" = cgroup2fs ]; then
        mkdir "/sys/fs/cgroup$cg/sub"
        out=$(sd exec --cgroup sub "$id" cat /proc/self/cgroup 2>&1 | grep '^0::')
        like "$out" "^0::($cg)?/sub\$" "exec --cgroup sub: the process is in the sub-cgroup"
        rmdir "/sys/fs/cgroup$cg/sub"
else
        mkdir "/sys/fs/cgroup/memory$cg/submem"
        out=$(sd exec --cgroup memory:submem "$id" cat /proc/self/cgroup 2>&1)
        # (paths as the container's cgroup namespace shows them, relative to the container's cgroup)
        like "$out" ":memory:($cg)?/submem"$'\n' "exec --cgroup memory:submem: in the memory sub-cgroup"
        like "$out" ":pids:($cg|/)"$'\n' "exec --cgroup memory:submem: the other hierarchies are the container's"
        rmdir "/sys/fs/cgroup/memory$cg/submem"
fi

rc=0; err=$(sd exec no-such-container-x true 2>&1) || rc=$?
like "$rc:$err" '^255:.*does not exist' "unknown container: clear error"

# paused: refused, then --ignore-paused runs once resumed
if sd pause "$id" 2>"$TEST_TMPDIR/err"; then
        rc=0; err=$(sd exec "$id" true 2>&1) || rc=$?
        like "$rc:$err" '^255:.*paused' "exec into a paused container is refused"
        sd exec --ignore-paused "$id" echo after-resume >"$TEST_TMPDIR/ip.out" 2>&1 & ip=$!
        sleep 0.5
        ok_desc "--ignore-paused: the process waits while the container is frozen" kill -0 "$ip"
        sd resume "$id"
        wait "$ip"
        is "$(cat "$TEST_TMPDIR/ip.out")" after-resume "--ignore-paused: the process runs once resumed"
else
        _tap_result 1 "pause works (needed for the paused cases): $(cat "$TEST_TMPDIR/err")"
fi

# created (runc and crun run the process, and the container stays created) and stopped
cid=$(new_id exc); track_container "$cid"
sd create --bundle "$B" "$cid" 2>/dev/null
rc=0; out=$(sd exec "$cid" sh -c 'echo in-created; cat /proc/1/comm' 2>&1) || rc=$?
is "$rc:$out" $'0:in-created\nsdrun:init' "exec into a created container runs in it, beside the waiting init, as with runc and crun"
is "$(sd state "$cid" | jq -r .status)" created "after that exec the container is still created"
ok_desc "... and starts" sd start "$cid"
is "$(sd state "$cid" | jq -r .status)" running "... and is running then"
sd delete -f "$cid"
no_leftovers "$cid"

sd kill "$id" KILL
WAIT_FOR_TIMEOUT=10 wait_for is_status "$id" stopped
rc=0; err=$(sd exec "$id" true 2>&1) || rc=$?
like "$rc:$err" '^255:.*cannot exec in a stopped container' "exec into a stopped container is refused"
sd delete -f "$id"
no_leftovers "$id"

# ---------------------------------------------------------------------------------------------------------
# seccomp kills during and after exec: exec returns promptly (never hangs)

S2=$TEST_TMPDIR/s
make_bundle "$S2" || bail "make_bundle failed"
# noNewPrivileges false: the filter is loaded before the user switch, so a rule on setresuid(1000) kills the
# exec'd process before its execve (the init, as uid 0, is not affected). mkdir kills after exec.
bundle_set "$S2" '.process.args=["sleep","100000"] | .process.capabilities.ambient=[] | .process.noNewPrivileges=false |
        del(.linux.resources) |
        .linux.seccomp={ "defaultAction": "SCMP_ACT_ALLOW", "syscalls": [
          { "names": ["setresuid"], "action": "SCMP_ACT_KILL_PROCESS", "args": [ { "index": 0, "value": 1000, "op": "SCMP_CMP_EQ" } ] },
          { "names": ["setresgid"], "action": "SCMP_ACT_KILL_THREAD", "args": [ { "index": 0, "value": 2000, "op": "SCMP_CMP_EQ" } ] },
          { "names": ["mkdir", "mkdirat"], "action": "SCMP_ACT_KILL_PROCESS" },
          { "names": ["rmdir"], "action": "SCMP_ACT_KILL_THREAD" } ] }' || bail "bundle_set failed"
sid=$(new_id exsc); track_container "$sid"
sd run -d --bundle "$S2" "$sid" >/dev/null 2>&1 || bail "run -d of the seccomp container failed"
WAIT_FOR_TIMEOUT=10 wait_for is_status "$sid" running
seccomp_case() { # DESC EXPECTED-RC EXPECTED-MESSAGE-REGEX ARGS...
        local desc=$1 want=$2 re=$3 t0 t1 rc=0 err
        shift 3
        t0=$(date +%s)
        err=$(timeout 20 "$SDRUN" --root "$SDRUN_ROOT" exec "$@" 2>&1) || rc=$?
        t1=$(date +%s)
        ok_desc "seccomp: $desc: returns within 10 s ($((t1 - t0)) s)" test $((t1 - t0)) -le 10
        like "$rc:$err" "^$want:.*$re" "seccomp: $desc: exit status $want and a clear message"
}
seccomp_case "KILL_PROCESS before execve" 255 'signal 31.*before it could exec: a seccomp rule killed it' -u 1000 "$sid" true
seccomp_case "KILL_THREAD before execve" 255 'signal 31.*before it could exec: a seccomp rule killed it' -u 2000:2000 "$sid" true
seccomp_case "KILL_PROCESS after execve" 159 '' "$sid" mkdir /tmp/x
seccomp_case "KILL_THREAD after execve" 159 '' "$sid" rmdir /tmp
ok_desc "the container survives the killed exec'd processes" is_status "$sid" running
ok_desc "no exec child is left" sh -c "! grep -qx sdrun:exec /proc/[0-9]*/comm"
sd delete -f "$sid"
no_leftovers "$sid"

# cgroup v2: exec joins the container's cgroup even where the init moved below it, as runc does; where
# domain controllers on for the children keep it from taking processes, the init's cgroup instead, unless
# --cgroup asked for it (runc's exec.bats "exec --cgroup subcgroup [v2]").
if [ "$(stat -fc %T /sys/fs/cgroup)" = cgroup2fs ]; then
        fid=$(new_id exfb); track_container "$fid"
        # (a memory limit, so that the scope has the memory controller to hand down)
        cp -a "$B" "$TEST_TMPDIR/bfb"
        bundle_set "$TEST_TMPDIR/bfb" '.linux.resources={memory: {limit: 268435456}}'
        sd run -d --bundle "$TEST_TMPDIR/bfb" "$fid" >/dev/null 2>&1 || bail "run -d failed"
        WAIT_FOR_TIMEOUT=10 wait_for is_status "$fid" running
        fcg=$(cgroup_dir "$(unit_of "$fid")")
        mkdir "$fcg/foobar"
        echo "$(pid_of "$fid")" >"$fcg/foobar/cgroup.procs"
        like "$(sd exec "$fid" cat /proc/self/cgroup | grep '^0::')" "^0::(/|/.*\.scope)\$" \
                "exec with the init in a sub-cgroup: the container's cgroup"
        if grep -qw memory "$fcg/cgroup.controllers" && echo +memory >"$fcg/cgroup.subtree_control"; then
                like "$(sd exec "$fid" cat /proc/self/cgroup | grep '^0::')" '^0::(/.*\.scope)?/foobar$' \
                        "exec with memory on for the children: falls back to the init's cgroup"
                rc=0; err=$(sd exec --cgroup / "$fid" true 2>&1) || rc=$?
                like "$rc:$err" '^255:.* adding pid .* to cgroups.*evice or resource busy' \
                        "exec --cgroup / then: refused, no fallback, runc's wording: $err"
        else
                skip "no memory controller delegated to the scope here"
                skip "no memory controller delegated to the scope here"
        fi
        sd delete -f "$fid"
        no_leftovers "$fid"
fi

done_testing
