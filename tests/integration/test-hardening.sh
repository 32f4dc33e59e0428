#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Issue 13 (and the signal item of issue 12): what a container or a hostile caller's environment must not be
# able to decide. Signal dispositions and mask reset before execve (run, create+start, exec, under `trap ''
# PIPE` as conmon leaves them); state that does not trust /proc/PID/comm; AppArmor/SELinux requests refused
# where the host has no such LSM; impossible memory limits refused up front; a corrupt state.json listed and
# removed by delete --force; a read-only /sys from the host network namespace read-only all the way down;
# start with a full --root; the error for a too long id; an id with ".." and machined.
. "$(dirname "$0")/lib.sh"

require_root
require_systemd

sd() { "$SDRUN" --root "$SDRUN_ROOT" "$@"; }
status_of() { sd state "$1" 2>/dev/null | jq -r .status; }

B=$TEST_TMPDIR/b
make_bundle "$B" || bail "make_bundle failed"
cp "$B/config.json" "$TEST_TMPDIR/config.orig"
reset_config() { cp "$TEST_TMPDIR/config.orig" "$B/config.json"; }

# ---------------------------------------------------------------------------------------------------------
# Signals: conmon ignores SIGPIPE; `trap '' PIPE` in the calling shell does the same. runc and crun reset
# every disposition and the mask; so must we.
sigs='grep -E "^Sig(Ign|Blk):" /proc/self/status | tr -d "\t" | paste -sd" "'
want="SigBlk:0000000000000000 SigIgn:0000000000000000"
reset_config
bundle_set "$B" '.process.args=["sh","-c",$s]' --arg s "$sigs"
id=$(new_id sig); track_container "$id"
out=$( (trap '' PIPE INT QUIT; exec timeout -k 2 10 "$SDRUN" --root "$SDRUN_ROOT" run --bundle "$B" "$id") 2>&1)
is "$out" "$want" "run under trap '' PIPE INT QUIT: no signal ignored or blocked in the container"
sd delete -f "$id" >/dev/null 2>&1

id=$(new_id sig); track_container "$id"
(trap '' PIPE; exec "$SDRUN" --root "$SDRUN_ROOT" create --bundle "$B" "$id") >"$TEST_TMPDIR/out" 2>&1 </dev/null
(trap '' PIPE; exec "$SDRUN" --root "$SDRUN_ROOT" start "$id")
WAIT_FOR_TIMEOUT=5 wait_for test -s "$TEST_TMPDIR/out"
is "$(cat "$TEST_TMPDIR/out")" "$want" "create+start under trap '' PIPE: no signal ignored or blocked"
sd delete -f "$id" >/dev/null 2>&1

bundle_set "$B" '.process.args=["sleep","60"]'
id=$(new_id sig); track_container "$id"
(trap '' PIPE; exec "$SDRUN" --root "$SDRUN_ROOT" run -d --bundle "$B" "$id") >/dev/null 2>&1
out=$( (trap '' PIPE INT; exec "$SDRUN" --root "$SDRUN_ROOT" exec "$id" sh -c "$sigs") 2>&1)
is "$out" "$want" "exec under trap '' PIPE INT: no signal ignored or blocked in the exec'd process"
sd delete -f "$id" >/dev/null 2>&1
no_leftovers "$id"

# ---------------------------------------------------------------------------------------------------------
# A process that names itself like the waiting init must not fool start or state (start used to fail 9 times
# in 10 and leave it running).
reset_config
bundle_set "$B" '.process.args=["sh","-c","printf sdrun:init >/proc/$$/comm; while :; do sleep 1; done"]'
fooled=0
for i in 1 2 3 4 5; do
        id=$(new_id comm); track_container "$id"
        sd create --bundle "$B" "$id" >/dev/null 2>&1 </dev/null
        rc=0; sd start "$id" 2>"$TEST_TMPDIR/err" || rc=$?
        sleep 0.2
        st=$(status_of "$id")
        ex=$(sd exec "$id" echo in 2>&1)
        [ "$rc:$st:$ex" = "0:running:in" ] || { fooled=$((fooled + 1)); diag "round $i: start rc=$rc ($(cat "$TEST_TMPDIR/err")), status $st, exec: $ex"; }
        sd delete -f "$id" >/dev/null 2>&1
done
is "$fooled" 0 "a process renaming itself sdrun:init: start succeeds, state says running and exec works (5 rounds)"
no_leftovers "$id"

# ---------------------------------------------------------------------------------------------------------
# LSMs: a requested profile or label the host cannot apply is an error naming the field (runc), never
# silence. These machines have neither AppArmor nor SELinux enabled: only the refusal can be exercised.
has_apparmor=false; [ "$(cat /sys/module/apparmor/parameters/enabled 2>/dev/null)" = Y ] && has_apparmor=true
has_selinux=false; [ -e /sys/fs/selinux/enforce ] && has_selinux=true
is "$(sd features | jq -c '[.linux.apparmor.enabled, .linux.selinux.enabled]')" "[$has_apparmor,$has_selinux]" \
        "features: apparmor/selinux enabled as the host really has them"
lsm_case() { # FIELD JQ HOST-HAS
        reset_config
        bundle_set "$B" "$2"
        id=$(new_id lsm); track_container "$id"
        # (The stdio of a created container's init is that of create: never a pipe we would wait on.)
        rc=0; sd create --bundle "$B" "$id" >/dev/null 2>"$TEST_TMPDIR/err" </dev/null || rc=$?
        err=$(cat "$TEST_TMPDIR/err")
        if [ "$3" = false ]; then
                like "$rc:$err" "^1:.*$1.*not enabled on this host" "$1 on a host without the LSM: create refuses, naming the field"
                no_leftovers "$id"
        else
                is "$rc" 0 "$1 on a host with the LSM: create succeeds"
                sd delete -f "$id" >/dev/null 2>&1
        fi
}
lsm_case process.apparmorProfile '.process.apparmorProfile="docker-default"' $has_apparmor
lsm_case process.selinuxLabel '.process.selinuxLabel="system_u:system_r:container_t:s0"' $has_selinux
lsm_case linux.mountLabel '.linux.mountLabel="system_u:object_r:container_file_t:s0"' $has_selinux
reset_config
bundle_set "$B" '.process.args=["sleep","60"]'
id=$(new_id lsm); track_container "$id"
sd run -d --bundle "$B" "$id" >/dev/null 2>&1
rc=0; err=$(sd exec --apparmor docker-default "$id" true 2>&1) || rc=$?
$has_apparmor || like "$rc:$err" '^255:.*--apparmor.*not enabled on this host' "exec --apparmor on a host without AppArmor: refused"
rc=0; err=$(sd exec --process-label system_u:system_r:container_t:s0 "$id" true 2>&1) || rc=$?
$has_selinux || like "$rc:$err" '^255:.*--process-label.*not enabled on this host' "exec --process-label on a host without SELinux: refused"
sd delete -f "$id" >/dev/null 2>&1

# ---------------------------------------------------------------------------------------------------------
# linux.resources.memory.limit: 1 used to get `sdrun create` OOM-killed (137, no message).
reset_config
bundle_set "$B" '.linux.resources.memory={limit: 1}'
id=$(new_id mem); track_container "$id"
rc=0; timeout -k 2 20 "$SDRUN" --root "$SDRUN_ROOT" create --bundle "$B" "$id" >/dev/null 2>"$TEST_TMPDIR/err" </dev/null || rc=$?
err=$(cat "$TEST_TMPDIR/err")
like "$rc:$err" '^1:.*linux\.resources\.memory\.limit.*too low' "memory.limit 1: create refuses with a message naming the field"
no_leftovers "$id"

# ---------------------------------------------------------------------------------------------------------
# A corrupt state.json: list shows the container with its problem, delete --force stops its scope by name.
reset_config
bundle_set "$B" '.process.args=["sleep","300"]'
id=$(new_id bad); track_container "$id"
sd run -d --bundle "$B" "$id" >/dev/null 2>&1
is "$(status_of "$id")" running "corrupt state: the container runs"
printf '{"garbage' >"$SDRUN_ROOT/$id/state.json"
like "$(sd list 2>&1)" "$id +0 +unknown +\\(state.json is corrupt\\)" "corrupt state: list shows the container with its problem"
is "$(sd list --format json | jq -r --arg i "$id" '.[] | select(.id == $i) | .status + ":" + .error')" \
        "unknown:state.json is corrupt" "corrupt state: list --format json too"
rc=0; err=$(sd delete "$id" 2>&1) || rc=$?
like "$rc:$err" '^1:.*corrupt.*--force' "corrupt state: delete without --force refuses, pointing at --force"
rc=0; err=$(sd delete -f "$id" 2>&1) || rc=$?
is "$rc:$err" "0:" "corrupt state: delete --force succeeds"
no_leftovers "$id"

# ---------------------------------------------------------------------------------------------------------
# The host's network namespace and a read-only /sys: the host's /sys is bound, and every submount of it
# (cgroup v1 hierarchies, debugfs, tracefs, securityfs) must be read-only too.
reset_config
bundle_set "$B" '.linux.namespaces |= map(select(.type != "network")) |
        .mounts |= map(select(.destination != "/sys/fs/cgroup")) |
        .process.args=["sh","-c","awk '"'"'$5 ~ \"^/sys(/|$)\" { split($6, o, \",\"); print $5, o[1] }'"'"' /proc/self/mountinfo"]'
id=$(new_id sys); track_container "$id"
rc=0; out=$(timeout -k 2 10 "$SDRUN" --root "$SDRUN_ROOT" run --bundle "$B" "$id" 2>&1) || rc=$?
n=$(grep -c . <<<"$out")
rw=$(grep -v ' ro$' <<<"$out" | paste -sd, -)
ok_desc "host netns: /sys and its $n submounts seen inside" test "$rc" = 0 -a "$n" -ge 2
is "$rw" "" "host netns, /sys ro: no submount of /sys is writable"
sd delete -f "$id" >/dev/null 2>&1
no_leftovers "$id"

# ---------------------------------------------------------------------------------------------------------
# start with a full --root: the state cannot be written; start fails and nothing runs.
R=$TEST_TMPDIR/smallroot
# mode 0711: a tmpfs is 1777 unless told, and sdrun refuses a root that others can write (issue 31)
mkdir -p "$R" && mount -t tmpfs -o size=256k,mode=0711 tmpfs "$R" || bail "cannot mount a small tmpfs"
cleanup_add umount -l "$R"
reset_config
bundle_set "$B" '.process.args=["sleep","60"]'
id=$(new_id full); track_container "$id"
rc=0; "$SDRUN" --root "$R" create --bundle "$B" "$id" >/dev/null 2>"$TEST_TMPDIR/err" || rc=$?
is "$rc" 0 "full root: create succeeds on a root with room ($(head -c 200 "$TEST_TMPDIR/err"))"
dd if=/dev/zero of="$R/fill" bs=4k >/dev/null 2>&1
rc=0; err=$("$SDRUN" --root "$R" start "$id" 2>&1) || rc=$?
like "$rc:$err" '^1:.*(state|No space)' "full root: start fails, saying why: $err"
st=$("$SDRUN" --root "$R" state "$id" 2>/dev/null | jq -r .status)
isnt_running() { [ "$st" != running ]; }
ok_desc "full root: the container is not left running (status $st)" isnt_running
rm -f "$R/fill"
"$SDRUN" --root "$R" delete -f "$id" >/dev/null 2>&1
SDRUN_ROOT=$R no_leftovers "$id"

# ---------------------------------------------------------------------------------------------------------
# Ids: a long one is blamed on the id (no cgroupsPath is set), and "a..b" registers with machined quietly.
reset_config
long=$(printf 'x%.0s' $(seq 300))
rc=0; sd create --bundle "$B" "$long" >/dev/null 2>"$TEST_TMPDIR/err" </dev/null || rc=$?
err=$(cat "$TEST_TMPDIR/err")
like "$rc:$err" '^1:.*container id.*too long' "a 300-character id: the error names the id"
unlike "$err" 'cgroupsPath: unit name' "a 300-character id: the error does not blame linux.cgroupsPath, which is not set"
no_leftovers "$long"
id="a..b-$$"
track_container "$id"
rc=0; sd create --bundle "$B" "$id" >/dev/null 2>"$TEST_TMPDIR/err" </dev/null || rc=$?
err=$(cat "$TEST_TMPDIR/err")
is "$rc" 0 "id with \"..\": create succeeds"
unlike "$err" 'machine' "id with \"..\": no warning about machined: $err"
sd delete -f "$id" >/dev/null 2>&1
no_leftovers "$id"

# ---------------------------------------------------------------------------------------------------------
# Issue 31, item 5: a seccomp profile that refuses execveat makes the last hop execve /proc/self/fd/N. With
# no procfs at /proc, that path is the image's own: a file planted there ran, holding the runtime's sync
# socket, and `run -d` hung. sdrun now looks N up only in a verified procfs and otherwise fails clearly, as
# runc does ("/proc/self/fd is not on procfs"). With a procfs, that path keeps working, in process.cwd, and
# hands no runtime fd to the program.
noexecveat='{"defaultAction":"SCMP_ACT_ALLOW","syscalls":[{"names":["execveat"],"action":"SCMP_ACT_ERRNO"}]}'
P=$TEST_TMPDIR/planted
make_bundle "$P" || bail "make_bundle failed"
bundle_set "$P" '.linux.seccomp=$s | .root.readonly=false | .process.args=["true"]
        | .mounts=[.mounts[] | select(.destination != "/proc")] | .linux.maskedPaths=[] | .linux.readonlyPaths=[]' \
        --argjson s "$noexecveat"
mkdir -p "$P/rootfs/proc/self/fd"
for n in $(seq 3 64); do
        printf '#!/bin/sh\necho "planted file %s ran: $(ls /dev/fd/ 2>/dev/null | tr "\\n" " ")" >>/planted\n' "$n" \
                >"$P/rootfs/proc/self/fd/$n"
        chmod 0755 "$P/rootfs/proc/self/fd/$n"
done
id=$(new_id planted); track_container "$id"
rc=0; timeout -k 2 20 "$SDRUN" --root "$SDRUN_ROOT" run -d --bundle "$P" "$id" >/dev/null 2>"$TEST_TMPDIR/err" </dev/null || rc=$?
err=$(cat "$TEST_TMPDIR/err")
like "$rc:$err" '^1:.*/proc/self/fd is not on procfs' "no procfs at /proc, execveat refused: run -d fails promptly, clearly: $(head -c 300 <<<"$err")"
ok_desc "  the image's file at /proc/self/fd/N did not run ($(cat "$P/rootfs/planted" 2>/dev/null))" test ! -e "$P/rootfs/planted"
sd delete -f "$id" >/dev/null 2>&1
no_leftovers "$id"
# The control: runc refuses the same bundle with the same words (it needs /proc/self/fd to close its fds).
if RUNC=$(command -v runc); then
        rm -f "$P/rootfs/planted"
        rid=$(new_id planted-runc)
        rc=0; timeout -k 2 20 "$RUNC" --root "$TEST_TMPDIR/runc" run --bundle "$P" "$rid" >/dev/null 2>"$TEST_TMPDIR/err" </dev/null || rc=$?
        like "$rc:$(cat "$TEST_TMPDIR/err")" '^1:.*/proc/self/fd is not on procfs' "  runc refuses it too: $(head -c 200 "$TEST_TMPDIR/err")"
        ok_desc "  and runs no planted file either" test ! -e "$P/rootfs/planted"
        "$RUNC" --root "$TEST_TMPDIR/runc" delete -f "$rid" >/dev/null 2>&1
        rm -f "$P/rootfs/planted"
fi

reset_config
bundle_set "$B" '.linux.seccomp=$s | .process.cwd="/tmp" | .process.args=["sh","-c","pwd; ls /proc/self/fd | tr \"\\n\" \" \""]' \
        --argjson s "$noexecveat"
id=$(new_id noexecveat); track_container "$id"
out=$(timeout -k 2 20 "$SDRUN" --root "$SDRUN_ROOT" run --bundle "$B" "$id" 2>&1 </dev/null)
is "$out" "/tmp
0 1 2 3 " "procfs at /proc, execveat refused: the program runs in process.cwd with only fds 0-2 (3: ls's own)"
sd delete -f "$id" >/dev/null 2>&1
bundle_set "$B" '.process.args=["sleep","100"]'
ok_desc "  a detached one for exec" "$SDRUN" --root "$SDRUN_ROOT" run -d --bundle "$B" "$id"
out=$(timeout -k 2 20 "$SDRUN" --root "$SDRUN_ROOT" exec --cwd /var "$id" sh -c 'pwd; ls /proc/self/fd | tr "\n" " "' 2>&1 </dev/null)
is "$out" "/var
0 1 2 3 " "  exec there: in --cwd, with only fds 0-2"
sd delete -f "$id" >/dev/null 2>&1
no_leftovers "$id"

done_testing
