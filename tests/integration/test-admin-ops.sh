#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Admin operations from systemd's side stay coherent with sdrun's state (issue 15, item 4): `systemctl stop`
# of the scope and `machinectl terminate` leave the container stopped and `delete` runs its poststop hooks;
# `systemctl kill -s SIGUSR1` of the scope reaches the container; `systemctl set-property --runtime ...
# MemoryMax=` shows in `sdrun events --stats` as `sdrun update --memory` does (where a memory controller
# exists); systemd-cgls and systemd-cgtop show the container.
. "$(dirname "$0")/lib.sh"

require_root
require_systemd

B=$TEST_TMPDIR/b
make_bundle "$B" || bail "make_bundle failed"
S() { "$SDRUN" --root "$SDRUN_ROOT" "$@"; }
status() { S state "$1" 2>/dev/null | jq -r .status; }
# run_d ID SCRIPT: a detached container running sh -c SCRIPT, with a poststop hook writing $TEST_TMPDIR/poststop-ID
run_d() {
        bundle_set "$B" '.process.args=["sh","-c",$s] | .root.readonly=false
                | .hooks.poststop=[{"path":"/bin/sh","args":["sh","-c",$h]}]' \
                --arg s "$2" --arg h "cat >$TEST_TMPDIR/poststop-$1" || bail "bundle_set failed"
        S run -d --bundle "$B" "$1" >"$TEST_TMPDIR/out" 2>&1 || diag "run -d $1: $(cat "$TEST_TMPDIR/out")"
}

# --- systemctl stop of the scope -------------------------------------------------------------------------------
id=$(new_id adm); track_container "$id"
run_d "$id" 'trap "exit 0" TERM; sleep 1000 & wait'
is "$(status "$id")" running "container $id runs"
systemctl stop "sdrun-$id.scope"
is "$(status "$id")" stopped "systemctl stop sdrun-$id.scope: sdrun state says stopped"
out=$(S delete "$id" 2>&1)
is "$?" 0 "  sdrun delete (without --force) works" || diag "$out"
like "$(cat "$TEST_TMPDIR/poststop-$id" 2>/dev/null)" "\"id\": *\"$id\"" "  and ran the poststop hook with the state"
no_leftovers "$id"

# The kernel empties the cgroup before the init is a zombie, so `systemctl stop` can return while the init is
# still exiting: state must say stopped all the same, every time.
bad=0
for i in $(seq 1 8); do
        id=$(new_id adm); track_container "$id"
        run_d "$id" 'trap "exit 0" TERM; sleep 1000 & wait'
        systemctl stop "sdrun-$id.scope"
        st=$(status "$id")
        [ "$st" = stopped ] || { bad=$((bad + 1)); diag "round $i: state right after systemctl stop: $st"; }
        S delete --force "$id" >/dev/null 2>&1
done
is "$bad" 0 "systemctl stop, 8 rounds: state says stopped right after it every time"

# --- machinectl terminate --------------------------------------------------------------------------------------
id=$(new_id adm); track_container "$id"
run_d "$id" 'sleep 1000 & wait'
ok_desc "machinectl lists $id" sh -c "machinectl list --no-legend | grep -q '^$id '"
out=$(machinectl terminate "$id" 2>&1)
is "$?" 0 "machinectl terminate $id" || diag "$out"
WAIT_FOR_TIMEOUT=15 wait_for sh -c "test \"\$($SDRUN --root $SDRUN_ROOT state $id | jq -r .status)\" = stopped"
is "$(status "$id")" stopped "  sdrun state says stopped (after the scope's stop timeout for a pid 1 ignoring SIGTERM)"
out=$(S delete "$id" 2>&1)
is "$?" 0 "  sdrun delete works" || diag "$out"
ok_desc "  and ran the poststop hook" test -s "$TEST_TMPDIR/poststop-$id"
no_leftovers "$id"

# --- systemctl kill -s SIGUSR1 ---------------------------------------------------------------------------------
id=$(new_id adm); track_container "$id"
rm -f "$B/rootfs/tmp/got-usr1" "$B/rootfs/tmp/trap-set"
run_d "$id" 'trap "echo usr1 >/tmp/got-usr1" USR1; : >/tmp/trap-set; while :; do sleep 0.1; done'
# (run -d returns once sh is exec'd, maybe before its trap is set: USR1 would then end it)
wait_for test -e "$B/rootfs/tmp/trap-set"
systemctl kill -s SIGUSR1 "sdrun-$id.scope"
ok_desc "systemctl kill -s SIGUSR1 sdrun-$id.scope reaches the container" wait_for test -s "$B/rootfs/tmp/got-usr1"
is "$(status "$id")" running "  which keeps running"

# --- systemd-cgls, systemd-cgtop -------------------------------------------------------------------------------
pid=$(S state "$id" | jq -r .pid)
like "$(systemd-cgls --no-pager -u "sdrun-$id.scope" 2>&1)" "$pid" "systemd-cgls -u sdrun-$id.scope shows the init ($pid)"
like "$(systemd-cgls --no-pager 2>&1)" "sdrun-$id.scope" "systemd-cgls shows the scope in the tree"
like "$(systemd-cgtop -b -n 1 --raw --depth=3 2>&1)" "machine.slice/sdrun-$id.scope" "systemd-cgtop lists it"

# --- systemctl set-property MemoryMax= vs sdrun update --memory ------------------------------------------------
have_memory() {
        case "$SDRUN_TEST_LAYOUT" in
        hybrid) [ -d /sys/fs/cgroup/memory ] ;;
        *) grep -qw memory /sys/fs/cgroup/cgroup.controllers 2>/dev/null ;;
        esac
}
limit() { S events --stats "$id" | jq -r .data.memory.usage.limit; }
if have_memory; then
        out=$(systemctl set-property --runtime "sdrun-$id.scope" MemoryMax=64M 2>&1)
        is "$?" 0 "systemctl set-property --runtime sdrun-$id.scope MemoryMax=64M" || diag "$out"
        is "$(limit)" 67108864 "  sdrun events --stats: memory limit 64M"
        S update --memory 32M "$id" >/dev/null 2>&1
        is "$(limit)" 33554432 "sdrun update --memory 32M: the same field says 32M"
        is "$(systemctl show -p MemoryMax --value "sdrun-$id.scope")" 33554432 "  and systemd's MemoryMax= agrees"
else
        skip "set-property MemoryMax=: no memory controller in the $SDRUN_TEST_LAYOUT layout (every v2 controller is bound to v1 here; the hybrid box and the VM check it)"
fi
S delete --force "$id" >/dev/null 2>&1
no_leftovers "$id"

done_testing
