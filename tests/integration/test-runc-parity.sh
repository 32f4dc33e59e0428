#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# What runc does, sdrun does (issue 32): behaviours runc's users rely on, each run on the same bundle with
# runc 1.1 as the control in the same test.
#  - a read-only /dev: what goes below it is mounted first, /dev is made read-only afterwards;
#  - a terminal for a process that is not root belongs to that user, in run and in exec;
#  - startContainer hooks run under the container's seccomp filter, as its user;
#  - a frozen cgroup where the container's would be is refused, not entered.
. "$(dirname "$0")/lib.sh"

require_root
require_systemd
RUNC=$(command -v runc) || bail "runc is not installed (Debian package runc): it is the control here"
HELPERS=$SDRUN_SRCDIR/tests/integration/helpers

sd() { "$SDRUN" --root "$SDRUN_ROOT" "$@"; }
rc_() { "$RUNC" --root "$TEST_TMPDIR/runc" "$@"; }

B=$TEST_TMPDIR/b
make_bundle "$B" || bail "make_bundle failed"
cp "$B/config.json" "$TEST_TMPDIR/config.orig"
reset_bundle() { cp "$TEST_TMPDIR/config.orig" "$B/config.json"; }

# run_rt RUNTIME: run the bundle in the foreground; prints "rc=N" then the output (stdin /dev/null)
run_rt() {
        local id out rc=0
        id=$(new_id par)
        if [ "$1" = runc ]; then
                out=$(rc_ run --bundle "$B" "$id" 2>&1 </dev/null) || rc=$?
                rc_ delete --force "$id" >/dev/null 2>&1
        else
                track_container "$id"
                out=$(sd run --bundle "$B" "$id" 2>&1 </dev/null) || rc=$?
                echo "$id" >"$TEST_TMPDIR/last-id"
        fi
        printf 'rc=%s\n%s\n' "$rc" "$out"
}

# ---------------------------------------------------------------------------------------------------------
# 1. A read-only /dev (runc's issue 3248): devpts, shm, mqueue and the device nodes go below it first.
reset_bundle
bundle_set "$B" '(.mounts[] | select(.destination == "/dev") | .options) += ["ro"]
        | .process.args=["sh","-c","grep -E \" /dev(/pts|/shm|/mqueue)? \" /proc/self/mountinfo | awk \"{print \\$5, \\$6}\" | sed \"s/,.*//\"; ls /dev/pts/ptmx /dev/null /dev/shm >/dev/null && echo below-ok; touch /dev/x 2>/dev/null && echo dev-writable; echo x >/dev/null && echo null-ok; echo y >/dev/shm/y && echo shm-ok"]'
a=$(run_rt runc)
b=$(run_rt sdrun)
like "$a" $'^rc=0\n/dev ro\n/dev/pts rw\n/dev/shm rw\n/dev/mqueue rw\nbelow-ok\nnull-ok\nshm-ok$' "read-only /dev: runc mounts what goes below it, then makes it read-only"
is "$b" "$a" "read-only /dev: runc and sdrun agree"
no_leftovers "$(cat "$TEST_TMPDIR/last-id")"

# ---------------------------------------------------------------------------------------------------------
# 2. A terminal for a process that is not root is that user's (runc: run and exec), so that it can own its
#    terminal; the pipes made for its stdio are its user's too. The group stays devpts's (tty).
# tty_owner RUNTIME VERB...: the owner of the terminal a shell of uid/gid 1000 gets, "uid:gid"; the
# argument SOCK becomes "--console-socket PATH"
tty_owner() {
        local rt=$1 sock rpid out a args=()
        shift
        for a in "$@"; do
                if [ "$a" = SOCK ]; then args+=(--console-socket "$TEST_TMPDIR/console-$rt.sock"); else args+=("$a"); fi
        done
        sock=$TEST_TMPDIR/console-$rt.sock
        rm -f "$sock" "$sock.ready"
        python3 "$HELPERS/console-recv.py" "$sock" 'stat -c "owner=%u:%g" $(tty); exit' >"$TEST_TMPDIR/tty.out" 2>&1 &
        rpid=$!
        wait_for test -e "$sock.ready"
        if [ "$rt" = runc ]; then rc_ "${args[@]}" >"$TEST_TMPDIR/tty.err" 2>&1
        else sd "${args[@]}" >"$TEST_TMPDIR/tty.err" 2>&1; fi
        wait "$rpid"
        out=$(tr -d '\r' <"$TEST_TMPDIR/tty.out" | grep -o 'owner=[0-9:]*' | tail -1)
        echo "${out:-none: $(cat "$TEST_TMPDIR/tty.err" "$TEST_TMPDIR/tty.out")}"
}
reset_bundle
bundle_set "$B" '.process.terminal=true | .process.user={uid: 1000, gid: 1000} | .process.args=["sh"]'
rid=$(new_id partty); sid=$(new_id partty); track_container "$sid"
is "$(tty_owner runc run -d SOCK --bundle "$B" "$rid")" owner=1000:5 "run: runc gives the terminal to the process's uid (group tty)"
is "$(tty_owner sdrun run -d SOCK --bundle "$B" "$sid")" owner=1000:5 "run: so does sdrun"
wait_for sh -c "! $SDRUN --root $SDRUN_ROOT state $sid | grep -q '\"running\"'"
rc_ delete --force "$rid" >/dev/null 2>&1
sd delete --force "$sid" >/dev/null 2>&1
no_leftovers "$sid"

bundle_set "$B" '.process.terminal=false | .process.args=["sleep","1000"]'
rid=$(new_id partty); sid=$(new_id partty); track_container "$sid"
rc_ run -d --bundle "$B" "$rid" >/dev/null 2>&1 </dev/null
ok_desc "exec: a container of uid 1000" sd run -d --bundle "$B" "$sid"
is "$(tty_owner runc exec -d -t SOCK "$rid" sh)" owner=1000:5 "exec -t: runc gives the terminal to the process's uid"
is "$(tty_owner sdrun exec -d -t SOCK "$sid" sh)" owner=1000:5 "exec -t: so does sdrun"
# the pipes of a non-terminal process: runc makes them the user's (fd 1 here is the pipe of $(...)). runc
# turns a foreground exec's stdin into a pipe of its own; sdrun passes it as it is, and /dev/null (a host
# device) stays root's.
a=$(rc_ exec "$rid" sh -c 'stat -L -c %u /proc/self/fd/1' </dev/null 2>&1)
b=$(sd exec "$sid" sh -c 'stat -L -c %u /proc/self/fd/1' </dev/null 2>&1)
is "$a" 1000 "exec: runc makes the stdout pipe the user's"
is "$b" "$a" "exec: runc and sdrun agree on the stdout pipe's owner"
# (whoever owns the host's /dev/null: another runtime run in a user namespace may have chowned it)
before=$(stat -c %u /dev/null)
is "$(sd exec "$sid" stat -L -c %u /proc/self/fd/0 </dev/null 2>&1):$(stat -c %u /dev/null)" "$before:$before" \
        "exec: a /dev/null stdin (a host device) keeps its owner"
rc_ delete --force "$rid" >/dev/null 2>&1
sd delete --force "$sid" >/dev/null 2>&1
no_leftovers "$sid"

# ---------------------------------------------------------------------------------------------------------
# 3. startContainer hooks run as runc runs them: last before the exec, under the container's seccomp filter,
#    with the process's user and capabilities. A hook's mkdir under a profile that kills mkdir is "bad system
#    call"; a hook of a uid-1000 process runs as uid 1000.
# start_rt RUNTIME: create + start the bundle; prints whether /tmp/hookdir was made, then the rootfs's /hook-out
start_rt() {
        local id rc=0 err
        id=$(new_id parhook)
        rm -rf "$B/rootfs/hook-out" "$B/rootfs/tmp/hookdir"
        if [ "$1" = runc ]; then
                rc_ create --bundle "$B" "$id" >/dev/null 2>&1 </dev/null
                err=$(rc_ start "$id" 2>&1) || rc=$?
                sleep 0.5
                rc_ delete --force "$id" >/dev/null 2>&1
        else
                track_container "$id"
                sd create --bundle "$B" "$id" >/dev/null 2>&1 </dev/null
                err=$(sd start "$id" 2>&1) || rc=$?
                sleep 0.5
                sd delete --force "$id" >/dev/null 2>&1
                no_leftovers "$id" >/dev/null
        fi
        printf 'hookdir=%s\n%s\n' "$([ -d "$B/rootfs/tmp/hookdir" ] && echo made || echo none)" "$(cat "$B/rootfs/hook-out" 2>/dev/null)"
}
reset_bundle
bundle_set "$B" '.root.readonly=false | .process.args=["true"]
        | .hooks.startContainer=[{path: "/bin/mkdir", args: ["mkdir", "/tmp/hookdir"]}]
        | .linux.seccomp={defaultAction: "SCMP_ACT_ALLOW", architectures: ["SCMP_ARCH_X86_64"],
                          syscalls: [{names: ["mkdir", "mkdirat"], action: "SCMP_ACT_KILL"}]}'
for nnp in false true; do
        bundle_set "$B" '.process.noNewPrivileges=$n' --argjson n $nnp
        a=$(start_rt runc)
        b=$(start_rt sdrun)
        is "$a" hookdir=none "noNewPrivileges $nnp: a startContainer hook's mkdir under a profile that kills mkdir: runc's hook is killed"
        is "$b" "$a" "... and sdrun's: the hook runs under the container's seccomp filter"
done
bundle_set "$B" 'del(.linux.seccomp) | .process.user={uid: 1000, gid: 1000}
        | .hooks.startContainer=[{path: "/bin/sh", args: ["sh", "-c", "id -u >/hook-out; grep -E \"^CapEff\" /proc/self/status >>/hook-out"]}]
        | .root.readonly=false'
chmod 1777 "$B/rootfs"
a=$(start_rt runc)
b=$(start_rt sdrun)
like "$a" $'^hookdir=none\n1000\nCapEff:\t0+$' "a startContainer hook of a uid-1000 process: runc runs it as uid 1000 without capabilities"
is "$b" "$a" "... and sdrun runs the hook as runc does (its user and capabilities)"
chmod 755 "$B/rootfs"

# ---------------------------------------------------------------------------------------------------------
# 4. The cgroup a new container gets exists already and is frozen (runc's cgroups.bats): whatever entered it
#    would stop there, the runtime first. runc refuses with "container's cgroup unexpectedly frozen"; so does
#    sdrun, at once, leaving nothing behind.
# frozen_dirs UNIT: the directories of UNIT's future cgroup in system.slice whose freezer this layout has
frozen_dirs() {
        if [ -d /sys/fs/cgroup/freezer ]; then echo "/sys/fs/cgroup/freezer/system.slice/$1"
        else echo "/sys/fs/cgroup/system.slice/$1"; fi
}
freeze_dir() { # DIR 1|0
        mkdir -p "$1"
        if [ -e "$1/freezer.state" ]; then echo "$([ "$2" = 1 ] && echo FROZEN || echo THAWED)" >"$1/freezer.state"
        else echo "$2" >"$1/cgroup.freeze"; fi
}
reset_bundle
bundle_set "$B" '.process.args=["true"]'
for rt in runc sdrun; do
        id=$(new_id parfrz)
        bundle_set "$B" '.linux.cgroupsPath=$p' --arg p "system.slice:$rt:$id"
        d=$(frozen_dirs "$rt-$id.scope")
        freeze_dir "$d" 1
        rc=0
        if [ $rt = runc ]; then
                out=$(timeout 60 "$RUNC" --root "$TEST_TMPDIR/runc" --systemd-cgroup run --bundle "$B" "$id" 2>&1 </dev/null) || rc=$?
        else
                track_container "$id"
                out=$(timeout 60 "$SDRUN" --root "$SDRUN_ROOT" run --bundle "$B" "$id" 2>&1 </dev/null) || rc=$?
        fi
        is "$rc" 1 "$rt run into a frozen cgroup fails (not a hang: exit 1, within 60 s)"
        like "$out" "container's cgroup unexpectedly frozen" "... $rt says the cgroup is unexpectedly frozen"
        freeze_dir "$d" 0
        [ $rt = runc ] && "$RUNC" --root "$TEST_TMPDIR/runc" delete --force "$id" >/dev/null 2>&1
        [ $rt = sdrun ] && no_leftovers "$id"
        rmdir "$d" 2>/dev/null
done

done_testing
