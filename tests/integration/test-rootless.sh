#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Rootless (issue 16): an unprivileged user with a running user@UID.service runs containers in scopes of
# their own user manager: `sdrun spec --rootless` + `sdrun --systemd-cgroup run -d` (killed with its own
# scope before), the state under $XDG_RUNTIME_DIR/sdrun, exec/ps/pause/resume/update/kill/delete, id maps
# written directly or by newuidmap, what needs privilege refused before anything exists, no machined
# registration, nothing left in the user's manager. crun rootless (runc where crun cannot run) is the
# control for the same steps. Also run in the vm tier (real cgroup v2 with delegated controllers), where
# resources must land in the user's scope.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-rootless.sh"

require_root
require_systemd
rootless_setup sdrun-rl

ROOT=$RL_RUNTIME_DIR/sdrun
MANAGER_CG=$(rl systemctl --user show -p ControlGroup --value)
DELEGATED=$(rl_delegated)
CONTROL=${SDRUN_ROOTLESS_CONTROL:-crun}
command -v "$CONTROL" >/dev/null || bail "$CONTROL is not installed: it is the control here"

# The unified cgroup path of PID (the unified hierarchy's line of /proc/PID/cgroup).
pid_cgroup() { sed -n 's/^0:://p' "/proc/$1/cgroup"; }
# Whether the user manager has the controller delegated.
delegated() { [[ " $DELEGATED " == *" $1 "* ]]; }

# rl_no_leftovers ID: nothing of the user's container ID is left: state, unit, processes.
rl_no_leftovers() {
        local id=$1 bad=() units f procs=""
        [ ! -e "$ROOT/$id" ] || bad+=("state directory $ROOT/$id exists")
        units=$(rl_units "*$id*")
        [ -z "$units" ] || bad+=("units still loaded in the user's manager: $units")
        for f in /proc/[0-9]*/cgroup; do
                grep -qF -- "$id" "$f" 2>/dev/null || continue
                f=${f#/proc/}; f=${f%/cgroup}
                procs+=" $f($(cat "/proc/$f/comm" 2>/dev/null))"
        done
        [ -z "$procs" ] || bad+=("processes in its cgroup:$procs")
        if [ ${#bad[@]} = 0 ]; then
                _tap_result 0 "no leftovers of $id in the user's manager"
        else
                _tap_result 1 "no leftovers of $id in the user's manager"
                printf '%s\n' "${bad[@]}" | _tap_diag_stream
                return 1
        fi
}

# ---- sdrun: the lifecycle ----
B=$RL_TMP/b
rl_make_bundle "$B" || bail "cannot make the user's bundle"
id=$(new_id rl)
# The container's stdio must not be our command substitution's pipe: it would wait for the container.
rl "$RL_SDRUN" --systemd-cgroup run -d --bundle "$B" "$id" </dev/null >"$TEST_TMPDIR/out" 2>&1
rc=$?
out=$(cat "$TEST_TMPDIR/out")
is "$rc:$out" "0:" "sdrun --systemd-cgroup run -d as the user: exit 0, nothing on stderr (no machined warning)"
ok_desc "the state is under \$XDG_RUNTIME_DIR/sdrun" test -s "$ROOT/$id/state.json"
st=$(rl "$RL_SDRUN" state "$id" 2>&1)
is "$(jq -r .status <<<"$st" 2>/dev/null)" running "state says running"
pid=$(jq -r .pid <<<"$st" 2>/dev/null)
unit=sdrun-$id.scope
is "$(rl_unit_prop "$unit" ActiveState)" active "$unit is active in the user's manager"
cg=$(rl_unit_prop "$unit" ControlGroup)
like "$cg" "^$MANAGER_CG/.+/$unit\$" "its cgroup is below the user manager's ($MANAGER_CG)"
ok_desc "the init (pid $pid) is in the scope" sh -c "grep -q ':$cg\$' /proc/$pid/cgroup"
is "$(awk '{print $1, $2, $3}' "/proc/$pid/uid_map" 2>/dev/null)" "0 $RL_UID 1" "uid_map: the user as root, written directly"
is "$(cat "/proc/$pid/setgroups" 2>/dev/null)" deny "setgroups is denied (the kernel's rule for an unprivileged gid_map)"
if command -v machinectl >/dev/null; then
        ok_desc "no machine registered with systemd-machined" sh -c "! machinectl show '$id' >/dev/null 2>&1"
fi
is "$(rl "$RL_SDRUN" list -q 2>&1)" "$id" "list (default root) shows it"

out=$(rl "$RL_SDRUN" exec "$id" sh -c 'id -u; cat /proc/self/cgroup' 2>&1)
like "$out" $'^0\n' "exec from outside the user's cgroup tree runs as root of the user namespace"
if [ "$SDRUN_TEST_LAYOUT" != hybrid ]; then
        like "$out" $'\n0::/$' "the exec'd process is in the container's cgroup (the root of its cgroup namespace)"
fi
ok_desc "exec -d" rl "$RL_SDRUN" exec -d "$id" sleep 500
pids=$(rl "$RL_SDRUN" ps --format json "$id" 2>&1)
is "$(jq length <<<"$pids" 2>/dev/null)" 2 "ps lists the init and the exec'd process"
d=$( [ "$SDRUN_TEST_LAYOUT" = hybrid ] && echo "/sys/fs/cgroup/unified$cg" || echo "/sys/fs/cgroup$cg")
is "$(sort "$d/cgroup.procs" | paste -sd ' ')" "$(jq -r '.[]' <<<"$pids" | sort | paste -sd ' ')" "both are in the scope's cgroup.procs"

ok_desc "pause" rl "$RL_SDRUN" pause "$id"
is "$(rl "$RL_SDRUN" state "$id" | jq -r .status)" paused "state says paused"
ok_desc "resume" rl "$RL_SDRUN" resume "$id"
is "$(rl "$RL_SDRUN" state "$id" | jq -r .status)" running "state says running again"

if [ "$SDRUN_TEST_LAYOUT" != hybrid ] && ! delegated pids; then
        out=$(rl "$RL_SDRUN" update --pids-limit 50 "$id" 2>&1)
        rc=$?
        like "$rc:$out" '^1:.*TasksMax=.*pids controller.*not delegated' "update --pids-limit without pids delegated: a clear error"
elif delegated pids; then
        ok_desc "update --pids-limit 50" rl "$RL_SDRUN" update --pids-limit 50 "$id"
        is "$(cat "$d/pids.max" 2>/dev/null)" 50 "pids.max of the user's scope is 50"
fi

ok_desc "kill" rl "$RL_SDRUN" kill "$id" KILL
_stopped() { [ "$(rl "$RL_SDRUN" state "$id" | jq -r .status)" = stopped ]; }
ok_desc "state says stopped" wait_for _stopped
ok_desc "delete" rl "$RL_SDRUN" delete "$id"
rl_no_leftovers "$id"
is "$(rl_units 'sdrun-*')" "" "systemctl --user list-units 'sdrun-*' is empty"

# ---- id maps through newuidmap/newgidmap: more than the user's own id ----
id=$(new_id rl)
rl_bundle_set "$B" '.linux.uidMappings=[{containerID:0,hostID:$u,size:1},{containerID:1,hostID:$su,size:1000}]
        | .linux.gidMappings=[{containerID:0,hostID:$g,size:1},{containerID:1,hostID:$sg,size:1000}]' \
        --argjson u "$RL_UID" --argjson g "$RL_GID" --argjson su "$RL_SUBUID" --argjson sg "$RL_SUBGID"
ok_desc "run -d with a /etc/subuid range (newuidmap, newgidmap)" rl "$RL_SDRUN" run -d --bundle "$B" "$id"
pid=$(rl "$RL_SDRUN" state "$id" 2>/dev/null | jq -r .pid)
is "$(awk '{print $1, $2, $3}' "/proc/$pid/uid_map" 2>/dev/null | paste -sd ,)" "0 $RL_UID 1,1 $RL_SUBUID 1000" "uid_map has both ranges"
is "$(rl "$RL_SDRUN" exec --user 1:1 "$id" id -u 2>&1)" 1 "exec as uid 1 of the container (a subuid on the host)"
ok_desc "delete -f" rl "$RL_SDRUN" delete -f "$id"
rl_no_leftovers "$id"
rl_make_bundle "$B"

# ---- a device is bound from the host ----
id=$(new_id rl)
rl_bundle_set "$B" '.linux.devices=[{path:"/dev/full",type:"c",major:1,minor:7,fileMode:438}]'
ok_desc "run -d with linux.devices /dev/full" rl "$RL_SDRUN" run -d --bundle "$B" "$id"
is "$(rl "$RL_SDRUN" exec "$id" sh -c 'test -c /dev/full && echo x 2>/dev/null >/dev/full; echo $?' 2>&1)" 1 \
        "/dev/full is the host's node, bound (writing it fails with ENOSPC)"
rl "$RL_SDRUN" delete -f "$id" >/dev/null 2>&1
rl_no_leftovers "$id"
rl_make_bundle "$B"

# ---- a time namespace with offsets: made by the init inside the user's user namespace, where the user may ----
# (a time namespace of the host's user namespace needs CAP_SYS_ADMIN there: runc and crun make it inside too)
tns='.linux.namespaces += [{type: "time"}] | .linux.timeOffsets={boottime: {secs: 86400, nanosecs: 0}} |
        .process.args=["sh","-c","tr -s \" \" </proc/self/timens_offsets | paste -sd, -; cut -d. -f1 /proc/uptime; readlink /proc/self/ns/time"]'
host_up=$(cut -d. -f1 /proc/uptime) host_tns=$(readlink /proc/self/ns/time)
id=$(new_id rl)
rl_bundle_set "$B" "$tns"
rc=0; out=$(rl "$RL_SDRUN" run --bundle "$B" "$id" </dev/null 2>&1) || rc=$?
lines=(); while IFS= read -r l; do lines+=("$l"); done <<<"$out"
is "$rc:${lines[0]:-}" "0:monotonic 0 0,boottime 86400 0" "a time namespace with a boottime offset, rootless: the offsets inside"
ok_desc "a time namespace, rootless: boottime is 86400 s ahead inside (${lines[1]:-?} vs $host_up)" \
        test "${lines[1]:-0}" -ge $((host_up + 86000))
ok_desc "a time namespace, rootless: not the host's (${lines[2]:-?})" test "${lines[2]:-$host_tns}" != "$host_tns"
rl_no_leftovers "$id"
# crun 1.8 makes the namespace but ignores the offsets: the control checks the namespace only
CB=$RL_TMP/cb
rl_make_bundle "$CB" 1.0.2
rl_bundle_set "$CB" "$tns"
cid=$(new_id rlc)
rc=0; out=$(rl "$CONTROL" run --bundle "$CB" "$cid" </dev/null 2>&1) || rc=$?
ok_desc "$CONTROL (the control): runs in a time namespace of its own, rootless ($rc: $(tail -1 <<<"$out"))" \
        test "$rc:$(tail -1 <<<"$out")" != "0:$host_tns" -a "$rc" = 0
rl "$CONTROL" delete -f "$cid" >/dev/null 2>&1
rl_make_bundle "$B"

# ---- what needs privilege fails before anything exists ----
# refused CASE JQ REGEX: run -d exits 1 with an error matching REGEX, and leaves nothing.
refused() {
        local desc=$1 expr=$2 re=$3 out rc
        id=$(new_id rl)
        rl_make_bundle "$B"
        rl_bundle_set "$B" "$expr"
        rl "$RL_SDRUN" run -d --bundle "$B" "$id" </dev/null >"$TEST_TMPDIR/out" 2>&1
        rc=$?
        out=$(cat "$TEST_TMPDIR/out")
        like "$rc:$out" "^1:.*$re" "$desc: refused with a clear error"
        rl_no_leftovers "$id"
}
refused "no user namespace" 'del(.linux.namespaces[] | select(.type == "user")) | del(.linux.uidMappings, .linux.gidMappings)' \
        'linux.namespaces: .*user namespace is required'
refused "an ext4 mount" '.mounts += [{destination:"/data",type:"ext4",source:"/dev/vda1"}]' \
        'mounts\[[0-9]+\]: type "ext4" on "/data" needs CAP_SYS_ADMIN'
refused "an init that cannot exec (fails in the user's scope)" '.process.args=["/nonexistent"]' \
        'process.args\[0\].*/nonexistent'
refused "a host sysctl" '.linux.sysctl={"vm.swappiness":"10"}' '"vm.swappiness" is not namespaced'
refused "linux.netDevices" '.linux.netDevices={"lo": {}}' 'linux.netDevices: moving network devices needs CAP_NET_ADMIN on the host'
if delegated memory; then
        id=$(new_id rl)
        rl_make_bundle "$B"
        rl_bundle_set "$B" '.linux.resources.memory.limit=67108864'
        ok_desc "memory.limit with memory delegated" rl "$RL_SDRUN" run -d --bundle "$B" "$id"
        cg=$(rl_unit_prop "sdrun-$id.scope" ControlGroup)
        is "$(cat "/sys/fs/cgroup$cg/memory.max" 2>/dev/null)" 67108864 "memory.max of the user's scope is 64M"
        rl "$RL_SDRUN" delete -f "$id" >/dev/null 2>&1
        rl_no_leftovers "$id"
elif [ "$SDRUN_TEST_LAYOUT" != hybrid ]; then
        refused "memory.limit without the memory controller delegated" '.linux.resources.memory.limit=67108864' \
                'MemoryMax= needs the memory controller, which is not delegated'
else
        # cgroup v1: nothing is ever delegated to a user manager; a warning, not a silent drop.
        id=$(new_id rl)
        rl_make_bundle "$B"
        rl_bundle_set "$B" '.linux.resources.memory.limit=67108864'
        rl "$RL_SDRUN" run -d --bundle "$B" "$id" </dev/null >"$TEST_TMPDIR/out" 2>&1
        rc=$?
        like "$rc:$(cat "$TEST_TMPDIR/out")" '^0:.*Memory(Limit|Max)= needs the memory controller: on cgroup v1' \
                "memory.limit on cgroup v1: runs, with a warning naming the controller"
        rl "$RL_SDRUN" delete -f "$id" >/dev/null 2>&1
        rl_no_leftovers "$id"
fi

# ---- the control: the same as the user with crun ----
CB=$RL_TMP/cb
rl_make_bundle "$CB" 1.0.2
cid=$(new_id rlc)
ok_desc "$CONTROL --systemd-cgroup run -d as the user" rl "$CONTROL" --systemd-cgroup run -d --bundle "$CB" "$cid"
cunit=$(rl_units "*$cid*" | head -1)
like "$(rl_unit_prop "$cunit" ControlGroup 2>/dev/null)" "^$MANAGER_CG/.+$cid" "$CONTROL: its scope ($cunit) is in the user's manager"
is "$(rl_in_scope "$CONTROL" exec "$cid" id -u 2>&1)" 0 "$CONTROL: exec (from the user's own scope) runs as root of the user namespace"
ok_desc "$CONTROL: delete -f" rl "$CONTROL" delete -f "$cid"
_c_gone() { [ -z "$(rl_units "*$cid*")" ]; }
ok_desc "$CONTROL: nothing left in the user's manager" wait_for _c_gone

done_testing
