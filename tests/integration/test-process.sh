#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The container's process (issue 3): user/groups, umask, cwd, env, args, rlimits, the five capability sets,
# noNewPrivileges, hostname/domainname, oomScoreAdj, fds (only 0-2, --preserve-fds, LISTEN_FDS), the
# init's cwd, and process.terminal through a --console-socket receiver. Checked inside and from the host.
. "$(dirname "$0")/lib.sh"

require_root
require_systemd
ci_lane unified

sd() { "$SDRUN" --root "$SDRUN_ROOT" "$@"; }
status_of() { sd state "$1" 2>/dev/null | jq -r .status; }
is_status() { [ "$(status_of "$1")" = "$2" ]; }
HELPERS=$SDRUN_SRCDIR/tests/integration/helpers

B=$TEST_TMPDIR/b
make_bundle "$B" || bail "make_bundle failed"

# crun CMD: run the bundle with process.args=["sh","-c",CMD]; output in $out, status in $rc
crun_sh() {
        local id
        id=$(new_id proc); track_container "$id"
        bundle_set "$B" '.process.args=["sh","-c",$c]' --arg c "$1"
        rc=0; out=$(sd run --bundle "$B" "$id" 2>"$TEST_TMPDIR/err") || rc=$?
        [ $rc = 0 ] || diag "run failed ($rc): $(cat "$TEST_TMPDIR/err")"
        no_leftovers "$id"
}

# ---------------------------------------------------------------------------------------------------------
# user, groups, umask, cwd, env, args

bundle_set "$B" '.process.user={uid: 1000, gid: 1000, additionalGids: [10, 20, 65534], umask: 23} |
        .process.cwd="/home/user" | .process.env=["PATH=/bin", "FOO=bar baz", "EMPTY="]'
crun_sh 'echo "$(id -u) $(id -g) $(id -G)"; umask; pwd; echo "FOO=$FOO HOME=$HOME"; env | sort | paste -sd,'
is "$rc" 0 "user: run"
lines=(); while IFS= read -r l; do lines+=("$l"); done <<<"$out"
is "${lines[0]}" "1000 1000 1000 10 20 65534" "user: uid, gid and additionalGids (id inside)"
is "${lines[1]}" "0027" "process.user.umask 23 (octal 027)"
is "${lines[2]}" "/home/user" "process.cwd"
is "${lines[3]}" "FOO=bar baz HOME=/home/user" "process.env, HOME from /etc/passwd"
like "${lines[4]}" '(^|,)EMPTY=(,|$)' "env: an empty value is kept"
unlike "${lines[4]}" 'LISTEN_|SDRUN|NOTIFY_SOCKET|INVOCATION_ID' "env: nothing of the runtime's environment leaks"
# run.oci.keep_original_groups=1 (crun's; Podman's --group-add keep-groups): the process keeps the groups
# of whoever ran the runtime, no setgroups(2); without it, they are cleared (crun's test_uid_gid.py).
bundle_set "$B" '.process.user={uid: 1000, gid: 1000} | .annotations["run.oci.keep_original_groups"]="1"'
kid=$(new_id keepg); track_container "$kid"
bundle_set "$B" '.process.args=["sh","-c","id -G"]'
rc=0; out=$(setpriv --groups 5,7 -- "$SDRUN" --root "$SDRUN_ROOT" run --bundle "$B" "$kid" 2>"$TEST_TMPDIR/err") || rc=$?
is "$rc:$out" "0:1000 5 7" "keep_original_groups: the runtime's groups 5 and 7 stay"
no_leftovers "$kid"
bundle_set "$B" '.process.user={uid: 1000, gid: 1000, additionalGids: [20]}'
rc=0; out=$(setpriv --groups 5,7 -- "$SDRUN" --root "$SDRUN_ROOT" run --bundle "$B" "$kid" 2>"$TEST_TMPDIR/err") || rc=$?
is "$rc:$out" "0:1000 5 7" "keep_original_groups with additionalGids: the original groups, not additionalGids"
like "$(cat "$TEST_TMPDIR/err")" 'additionalGids: not set.*keep_original_groups' "... with a warning"
no_leftovers "$kid"
bundle_set "$B" 'del(.annotations["run.oci.keep_original_groups"]) | .process.user={uid: 1000, gid: 1000}'
rc=0; out=$(setpriv --groups 5,7 -- "$SDRUN" --root "$SDRUN_ROOT" run --bundle "$B" "$kid" 2>"$TEST_TMPDIR/err") || rc=$?
is "$rc:$out" "0:1000" "without the annotation: the runtime's groups are cleared"
no_leftovers "$kid"

bundle_set "$B" '.process.user={uid: 0, gid: 0} | .process.cwd="/" | .process.env=["PATH=/bin:/usr/bin"]'
# A variable given twice is set once, where it first appears, to its last value; an empty HOME comes from
# /etc/passwd, as with runc (runc's env.bats). runc as the control.
bundle_set "$B" '.process.env=["HOME=", "ONE=two", "PATH=/bin:/usr/bin", "ONE=three"] | .process.args=["env"]'
id=$(new_id env); track_container "$id"
out=$(sd run --bundle "$B" "$id" 2>&1)
is "$out" $'HOME=/root\nONE=three\nPATH=/bin:/usr/bin' "env: duplicates set once (last value, first place), empty HOME from /etc/passwd"
no_leftovers "$id"
if RUNC=$(command -v runc); then
        is "$("$RUNC" --root "$TEST_TMPDIR/runc" run --bundle "$B" "$id-runc" 2>&1 </dev/null)" "$out" "control: runc's env is the same"
else
        skip "runc is not installed: no control"
fi
bundle_set "$B" '.process.env=["PATH=/bin:/usr/bin"]'

id=$(new_id args); track_container "$id"
bundle_set "$B" '.process.args=["/bin/echo","a  b","","c*","$HOME"]'
out=$(sd run --bundle "$B" "$id" 2>/dev/null)
is "$out" 'a  b  c* $HOME' "process.args passed verbatim (no shell, no globbing)"

# ---------------------------------------------------------------------------------------------------------
# rlimits, oomScoreAdj, hostname, domainname, noNewPrivileges

bundle_set "$B" '.process.rlimits=[{type: "RLIMIT_NOFILE", soft: 512, hard: 2048}, {type: "RLIMIT_NPROC", soft: 300, hard: 400}] |
        .process.oomScoreAdj=123 | .hostname="box-host" | .domainname="example.org" | .process.noNewPrivileges=true'
crun_sh 'echo "$(ulimit -Sn) $(ulimit -Hn) $(ulimit -Su) $(ulimit -Hu)"; cat /proc/self/oom_score_adj; hostname; cat /proc/sys/kernel/domainname; grep NoNewPrivs /proc/self/status'
lines=(); while IFS= read -r l; do lines+=("$l"); done <<<"$out"
is "${lines[0]}" "512 2048 300 400" "rlimits: RLIMIT_NOFILE 512/2048 and RLIMIT_NPROC 300/400 (ulimit inside)"
is "${lines[1]}" 123 "oomScoreAdj (/proc/self/oom_score_adj)"
is "${lines[2]}" box-host "hostname"
is "${lines[3]}" example.org "domainname"
like "${lines[4]}" 'NoNewPrivs:[[:space:]]+1' "noNewPrivileges true: NoNewPrivs 1"
bundle_set "$B" '.process.noNewPrivileges=false'
crun_sh 'grep NoNewPrivs /proc/self/status'
like "$out" 'NoNewPrivs:[[:space:]]+0' "noNewPrivileges false: NoNewPrivs 0"

# the same from the host, on a running container
id=$(new_id host); track_container "$id"
bundle_set "$B" '.process.args=["sleep","1000"] | .process.noNewPrivileges=true'
sd run --detach --bundle "$B" "$id"
pid=$(sd state "$id" | jq -r .pid)
is "$(cat /proc/"$pid"/oom_score_adj)" 123 "host: oom_score_adj of the init"
like "$(grep 'Max open files' /proc/"$pid"/limits)" 'Max open files +512 +2048 ' "host: /proc/PID/limits"
like "$(grep NoNewPrivs /proc/"$pid"/status)" 'NoNewPrivs:[[:space:]]+1' "host: NoNewPrivs of the init"
is "$(ls /proc/"$pid"/fd | sort -n | paste -sd' ')" "0 1 2" "host: the running process has exactly fds 0 1 2"
like "$(readlink /proc/"$pid"/cwd)" '^/$' "host: the init's cwd is / inside its root"
is "$(readlink /proc/"$pid"/root)" / "host: the process root is its own root (pivot_root)"
ok_desc "host: the process sees the container rootfs" test -e "/proc/$pid/root/bin/busybox" -a ! -e "/proc/$pid/root/usr/lib/os-release"
sd delete --force "$id"
no_leftovers "$id"
# oomScoreAdj with a user namespace (Docker's userns-remap, Podman's --userns=auto, a Kubernetes pod with
# hostUsers: false, each with the oomScoreAdj the engine always sends): the host's root writes it before the
# process is the namespace's root (whose /proc files are then the host root's, as runc does it): for the
# init and for an exec'd process with its own. runc is the control.
U=$TEST_TMPDIR/u
make_bundle "$U" || bail "make_bundle failed"
chown -R 100000:100000 "$U/rootfs" && chmod 0755 "$TEST_TMPDIR" "$U" || bail "cannot chown the rootfs"
bundle_set "$U" '.process.args=["sh", "-c", "cat /proc/self/oom_score_adj; sleep 1000"] | .process.oomScoreAdj=123
        | .linux.namespaces += [{type: "user"}] | .linux.uidMappings=[{containerID: 0, hostID: 100000, size: 65536}]
        | .linux.gidMappings=[{containerID: 0, hostID: 100000, size: 65536}]'
id=$(new_id uoom); track_container "$id"
rc=0; sd run --detach --bundle "$U" "$id" >"$TEST_TMPDIR/uoom.out" 2>&1 </dev/null || rc=$?
is "$rc" 0 "user namespace, oomScoreAdj 123: run ($(head -c 200 "$TEST_TMPDIR/uoom.out"))"
pid=$(sd state "$id" | jq -r .pid)
is "$(cat "/proc/$pid/oom_score_adj" 2>&1)" 123 "user namespace: oom_score_adj of the init (host)"
jq '.process | .args=["cat", "/proc/self/oom_score_adj"] | .oomScoreAdj=234 | del(.terminal)' "$U/config.json" >"$TEST_TMPDIR/uoom.json"
rc=0; out=$(sd exec --process "$TEST_TMPDIR/uoom.json" "$id" 2>&1) || rc=$?
is "$rc:$out" "0:234" "user namespace: an exec'd process with oomScoreAdj 234 has it"
rc=0; out=$(sd exec "$id" cat /proc/self/oom_score_adj 2>&1) || rc=$?
is "$rc:$out" "0:123" "user namespace: an exec'd process without one inherits the init's"
sd delete --force "$id"
no_leftovers "$id"
if RUNC=$(command -v runc); then
        rc=0; "$RUNC" --root "$TEST_TMPDIR/runc" run -d --bundle "$U" "$id-runc" >/dev/null 2>&1 </dev/null || rc=$?
        out=$("$RUNC" --root "$TEST_TMPDIR/runc" exec "$id-runc" cat /proc/self/oom_score_adj 2>&1)
        is "$rc:$out" "0:123" "user namespace, oomScoreAdj 123: the same with runc (control)"
        "$RUNC" --root "$TEST_TMPDIR/runc" delete --force "$id-runc" >/dev/null 2>&1
else
        skip "runc is not installed: no control"
fi
bundle_set "$B" '.process.rlimits=[{type: "RLIMIT_NOFILE", soft: 1024, hard: 1024}] | del(.process.oomScoreAdj)'

# ---------------------------------------------------------------------------------------------------------
# capabilities: the five sets against the config

# mask NAMES...: the capability mask of the names, as /proc/PID/status prints it
capmask() { python3 - "$@" <<'PY'
import sys
caps = {"CAP_CHOWN": 0, "CAP_DAC_OVERRIDE": 1, "CAP_FOWNER": 3, "CAP_KILL": 5, "CAP_SETGID": 6, "CAP_SETUID": 7,
        "CAP_SETPCAP": 8, "CAP_NET_BIND_SERVICE": 10, "CAP_NET_RAW": 13, "CAP_SYS_CHROOT": 18, "CAP_SYS_ADMIN": 21,
        "CAP_MKNOD": 27, "CAP_AUDIT_WRITE": 29, "CAP_SETFCAP": 31}
m = 0
for n in sys.argv[1:]:
    m |= 1 << caps[n]
print("%016x" % m)
PY
}
capline() { grep -E "^$1:" <<<"$out" | awk '{print $2}'; }

bundle_set "$B" '.process.capabilities={bounding: ["CAP_AUDIT_WRITE","CAP_KILL","CAP_NET_BIND_SERVICE","CAP_CHOWN"],
        effective: ["CAP_AUDIT_WRITE","CAP_KILL","CAP_NET_BIND_SERVICE"],
        permitted: ["CAP_AUDIT_WRITE","CAP_KILL","CAP_NET_BIND_SERVICE"]}'
crun_sh 'grep ^Cap /proc/self/status'
is "$(capline CapBnd)" "$(capmask CAP_AUDIT_WRITE CAP_KILL CAP_NET_BIND_SERVICE CAP_CHOWN)" "root: CapBnd = bounding"
is "$(capline CapEff)" "$(capmask CAP_AUDIT_WRITE CAP_KILL CAP_NET_BIND_SERVICE)" "root: CapEff = effective"
is "$(capline CapPrm)" "$(capmask CAP_AUDIT_WRITE CAP_KILL CAP_NET_BIND_SERVICE)" "root: CapPrm = permitted"
is "$(capline CapInh)" 0000000000000000 "root: CapInh empty"
is "$(capline CapAmb)" 0000000000000000 "root: CapAmb empty"

bundle_set "$B" '.process.user={uid: 1000, gid: 1000} | .process.capabilities={bounding: ["CAP_KILL","CAP_NET_BIND_SERVICE","CAP_SETUID"],
        effective: ["CAP_KILL","CAP_NET_BIND_SERVICE"], permitted: ["CAP_KILL","CAP_NET_BIND_SERVICE"],
        inheritable: ["CAP_KILL","CAP_NET_BIND_SERVICE"], ambient: ["CAP_KILL"]}'
crun_sh 'grep ^Cap /proc/self/status'
is "$(capline CapBnd)" "$(capmask CAP_KILL CAP_NET_BIND_SERVICE CAP_SETUID)" "uid 1000: CapBnd = bounding"
is "$(capline CapInh)" "$(capmask CAP_KILL CAP_NET_BIND_SERVICE)" "uid 1000: CapInh = inheritable"
is "$(capline CapAmb)" "$(capmask CAP_KILL)" "uid 1000: CapAmb = ambient"
is "$(capline CapPrm)" "$(capmask CAP_KILL)" "uid 1000: CapPrm = ambient after exec (no file caps)"
is "$(capline CapEff)" "$(capmask CAP_KILL)" "uid 1000: CapEff = ambient after exec"
bundle_set "$B" '.process.user={uid: 0, gid: 0} | .process.capabilities={bounding: ["CAP_AUDIT_WRITE","CAP_KILL","CAP_NET_BIND_SERVICE"],
        effective: ["CAP_AUDIT_WRITE","CAP_KILL","CAP_NET_BIND_SERVICE"], permitted: ["CAP_AUDIT_WRITE","CAP_KILL","CAP_NET_BIND_SERVICE"]}'

# An ambient capability that is not also inheritable (buildah asks for that on every RUN step): not raised,
# not an error, and no message on the container's stderr (runc and crun print none either).
bundle_set "$B" '.process.capabilities={bounding: ["CAP_KILL","CAP_NET_BIND_SERVICE"], effective: ["CAP_KILL"],
        permitted: ["CAP_KILL"], ambient: ["CAP_KILL","CAP_NET_BIND_SERVICE"]}'
crun_sh 'grep ^Cap /proc/self/status'
is "$rc|$(capline CapAmb)" "0|0000000000000000" "ambient capabilities that are not inheritable: not raised, not an error"
is "$(cat "$TEST_TMPDIR/err")" "" "... and nothing about them on the container's stderr"
bundle_set "$B" '.process.capabilities={bounding: ["CAP_AUDIT_WRITE","CAP_KILL","CAP_NET_BIND_SERVICE"],
        effective: ["CAP_AUDIT_WRITE","CAP_KILL","CAP_NET_BIND_SERVICE"], permitted: ["CAP_AUDIT_WRITE","CAP_KILL","CAP_NET_BIND_SERVICE"]}'

# A capability the runtime does not hold (dropped from its bounding set, so root's execve of the runtime
# does not get it, as in a container that lacks it): create fails naming it, as runc's and crun's create
# do, not start; nothing is left. runc as the control.
bundle_set "$B" '.process.args=["true"] | .process.capabilities.bounding += ["CAP_SYS_NICE"]
        | .process.capabilities.effective += ["CAP_SYS_NICE"] | .process.capabilities.permitted += ["CAP_SYS_NICE"]'
id=$(new_id capheld); track_container "$id"
# (Output to a file: a created init would hold a pipe open.)
rc=0; capsh --drop=cap_sys_nice -- -c '"$0" --root "$1" create --bundle "$2" "$3"' \
        "$SDRUN" "$SDRUN_ROOT" "$B" "$id" >"$TEST_TMPDIR/capheld" 2>&1 </dev/null || rc=$?
out=$(cat "$TEST_TMPDIR/capheld")
ok_desc "a capability the runtime lacks (CAP_SYS_NICE): create fails" test "$rc" != 0
like "$out" 'process\.capabilities\.permitted: CAP_SYS_NICE not held by the runtime' \
        "... with an error naming the set and the capability"
no_leftovers "$id"
if RUNC=$(command -v runc); then
        rc=0; capsh --drop=cap_sys_nice -- -c '"$0" --root "$1" create --bundle "$2" capheld-runc' \
                "$RUNC" "$TEST_TMPDIR/runc" "$B" >"$TEST_TMPDIR/capheld" 2>&1 </dev/null || rc=$?
        out=$(cat "$TEST_TMPDIR/capheld")
        "$RUNC" --root "$TEST_TMPDIR/runc" delete --force capheld-runc >/dev/null 2>&1
        ok_desc "control: runc's create fails for it too" test "$rc" != 0
        diag "runc: $out"
else
        skip "runc is not installed: no control"
fi
bundle_set "$B" '.process.capabilities={bounding: ["CAP_AUDIT_WRITE","CAP_KILL","CAP_NET_BIND_SERVICE"],
        effective: ["CAP_AUDIT_WRITE","CAP_KILL","CAP_NET_BIND_SERVICE"], permitted: ["CAP_AUDIT_WRITE","CAP_KILL","CAP_NET_BIND_SERVICE"]}'

# ---------------------------------------------------------------------------------------------------------
# fds: only 0-2; --preserve-fds 2 passes exactly 3 and 4; LISTEN_FDS

# fdlist: the fds of `ls` inside, without the one ls opens to read /proc/self/fd itself
FDLIST='ls -l /proc/self/fd | grep -v -- "-> /proc/" | sed -n "s/.* \([0-9][0-9]*\) -> .*/\1/p" | paste -sd" " -'
crun_sh "$FDLIST"
is "$out" "0 1 2" "only fds 0 1 2 inside (ls -l /proc/self/fd)"

id=$(new_id fds); track_container "$id"
bundle_set "$B" '.process.args=["sh","-c",($l + "; read a <&3; read b <&4; echo \"$a $b\"")]' --arg l "$FDLIST"
echo three >"$TEST_TMPDIR/f3"; echo four >"$TEST_TMPDIR/f4"; echo five >"$TEST_TMPDIR/f5"
out=$(sd run --preserve-fds 2 --bundle "$B" "$id" 3<"$TEST_TMPDIR/f3" 4<"$TEST_TMPDIR/f4" 5<"$TEST_TMPDIR/f5" 2>"$TEST_TMPDIR/err")
is "$out" $'0 1 2 3 4\nthree four' "--preserve-fds 2: exactly fds 3 and 4 pass (fd 5 does not)"
no_leftovers "$id"

id=$(new_id listen); track_container "$id"
bundle_set "$B" '.process.args=["sh","-c",($l + "; echo \"$LISTEN_FDS $LISTEN_PID\"; read a <&3; echo $a")] | .process.env=["PATH=/bin","LISTEN_FDS=7"]' --arg l "$FDLIST"
out=$(LISTEN_FDS=1 SDRUN_ID=$id sh -c 'LISTEN_PID=$$ exec "$SDRUN" --root "$SDRUN_ROOT" run --bundle "$0" "$SDRUN_ID"' "$B" 3<"$TEST_TMPDIR/f3" 4<"$TEST_TMPDIR/f4" 2>"$TEST_TMPDIR/err")
is "$out" $'0 1 2 3\n1 1\nthree' "LISTEN_FDS=1 (LISTEN_PID ours): fd 3 passes, LISTEN_FDS=1 LISTEN_PID=1 inside"
no_leftovers "$id"
id=$(new_id listen); track_container "$id"
out=$(LISTEN_FDS=1 LISTEN_PID=1 "$SDRUN" --root "$SDRUN_ROOT" run --bundle "$B" "$id" 3<"$TEST_TMPDIR/f3" 2>"$TEST_TMPDIR/err")
like "$out" $'^0 1 2\n7 ' "LISTEN_FDS for another pid: ignored, fd 3 does not pass"
no_leftovers "$id"
bundle_set "$B" '.process.env=["PATH=/bin:/usr/bin"]'

# the default devices are usable under the default device rules (deny all, as `runc spec` writes: the
# runtime allows the standard devices on top, as runc does)
crun_sh 'echo x >/dev/null && head -c1 /dev/zero >/dev/null && head -c1 /dev/urandom >/dev/null && echo devices-ok'
is "$out" devices-ok "/dev/null, /dev/zero, /dev/urandom usable with linux.resources.devices [deny all]"

# ---------------------------------------------------------------------------------------------------------
# terminal: the pty master reaches the --console-socket

# (without linux.resources: the default device rules are checked above)
bundle_set "$B" '.process.terminal=true | .process.args=["sh"] | del(.linux.resources)'
id=$(new_id tty); track_container "$id"
sock=$TEST_TMPDIR/console.sock
python3 "$HELPERS/console-recv.py" "$sock" 'tty; readlink /proc/self/fd/0; ls -l /dev/console; [ -t 1 ] && echo STDOUT-IS-TTY; exit 3' >"$TEST_TMPDIR/tty.out" 2>&1 &
rpid=$!
wait_for test -e "$sock.ready"
rc=0; sd run --console-socket "$sock" --bundle "$B" "$id" >"$TEST_TMPDIR/run.out" 2>&1 || rc=$?
wait "$rpid"; rrc=$?
out=$(tr -d '\r' <"$TEST_TMPDIR/tty.out")
is "$rrc" 0 "terminal: the receiver got the pty master and the session ended"
is "$rc" 3 "terminal: run exits with the shell's status 3"
like "$out" '^received-fd' "terminal: the master fd came over SCM_RIGHTS"
like "$out" $'\n/dev/pts/0\n' "terminal: tty inside prints /dev/pts/0"
like "$out" 'STDOUT-IS-TTY' "terminal: stdout is the terminal"
like "$out" '/dev/console' "terminal: /dev/console exists"
like "$out" 'c[rw-]+ .* 136, +0 .*/dev/console' "terminal: /dev/console is the pty (136, 0)"
no_leftovers "$id"

id=$(new_id tty); track_container "$id"
rc=0; err=$(sd create --bundle "$B" "$id" 2>&1) || rc=$?
is "$rc" 1 "create: terminal without --console-socket is refused"
like "$err" 'terminal.*--console-socket' "create: terminal without --console-socket: $err"
rc=0; err=$(sd run --detach --bundle "$B" "$id" 2>&1) || rc=$?
is "$rc" 1 "run --detach: terminal without --console-socket is refused"
no_leftovers "$id"

# A foreground run with process.terminal and no --console-socket proxies the pty to its own terminal, as
# runc does: what is typed reaches the container's shell, the window size follows, the status comes back.
id=$(new_id tty); track_container "$id"
bundle_set "$B" '.process.args=["sh"]'
out=$( (sleep 0.5; printf 'stty size; echo "in-$((40+2))"; tty; exit 7\n') |
        script -qec "stty rows 31 cols 101; $SDRUN --root $SDRUN_ROOT run --bundle $B $id; echo rc=\$?" /dev/null 2>&1 | tr -d '\r')
like "$out" $'\n31 101\n' "foreground terminal: the window size follows ours"
like "$out" $'\nin-42\n' "foreground terminal: input reaches the container's shell"
like "$out" $'\n/dev/pts/0\n' "foreground terminal: the shell's stdio is the container's pty"
like "$out" 'rc=7' "foreground terminal: the exit status comes back"
no_leftovers "$id"

# ...and where its output goes to a file, not a terminal, the pty does not turn "\n" into "\r\n": the file
# holds what the process wrote, as with runc (whose integration tests compare such output line by line).
id=$(new_id tty); track_container "$id"
bundle_set "$B" '.process.args=["printf","a\\nb\\n"]'
script -qec "$SDRUN --root $SDRUN_ROOT run --bundle $B $id >$TEST_TMPDIR/fg.out </dev/null" /dev/null >/dev/null 2>&1 </dev/null
is "$(grep -c $'\r' "$TEST_TMPDIR/fg.out")" 0 "foreground terminal, output to a file: no \\r added"
like "$(cat "$TEST_TMPDIR/fg.out")" $'a\nb$' "foreground terminal, output to a file: the lines arrive"
no_leftovers "$id"
if RUNC=$(command -v runc); then
        script -qec "$RUNC --root $TEST_TMPDIR/runc run --bundle $B $id-runc >$TEST_TMPDIR/fg-runc.out </dev/null" /dev/null \
                >/dev/null 2>&1 </dev/null
        is "$(grep -c $'\r' "$TEST_TMPDIR/fg-runc.out")" 0 "control: runc adds no \\r either"
        like "$(cat "$TEST_TMPDIR/fg-runc.out")" $'a\nb$' "control: runc's lines arrive"
else
        skip "runc is not installed: no control"
fi

done_testing
