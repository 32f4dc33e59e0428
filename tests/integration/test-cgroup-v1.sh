#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Every v1 hierarchy isolated (issue 31, items 6 and 7), hybrid layout: the container's processes sit at the
# unit's path in each v1 controller hierarchy, also those systemd does not manage (freezer, cpuset, a cpuacct
# of its own), as runc puts them in all of them; its freezer mount shows its own cgroup, not the host's tree;
# delete --force removes what a privileged container made below its cgroups, and what a container with a
# corrupt state.json had. runc is the control for where the init sits.
. "$(dirname "$0")/lib.sh"

require_root
require_systemd
RUNC=$(command -v runc) || bail "runc is not installed (Debian package runc): it is the control here"

if [ "$SDRUN_TEST_LAYOUT" = unified ] || [ ! -d /sys/fs/cgroup/freezer ]; then
        skip "no v1 controller hierarchies here (layout $SDRUN_TEST_LAYOUT)"
        done_testing
fi

sd() { "$SDRUN" --root "$SDRUN_ROOT" "$@"; }
pid_of() { sd state "$1" 2>/dev/null | jq -r '.pid // empty'; }
# v1_hierarchies: the v1 controller hierarchies this process is in ("cpu", "freezer", ...), one a line
v1_hierarchies() { awk -F: '$2 != "" && $2 !~ /^name=/ { print $2 }' /proc/self/cgroup | sort; }
# misplaced PID UNIT_PATH: the v1 hierarchies where PID is not at UNIT_PATH, "h:path" each
misplaced() {
        awk -F: -v want="$2" '$2 != "" && $2 !~ /^name=/ && $3 != want { print $2 ":" $3 }' "/proc/$1/cgroup" | sort | paste -sd' '
}
# dirs_left UNIT_PATH: the v1 directories at UNIT_PATH that exist
dirs_left() {
        local h
        for h in $(v1_hierarchies); do [ -d "/sys/fs/cgroup/$h$1" ] && echo "/sys/fs/cgroup/$h$1"; done
        return 0
}

B=$TEST_TMPDIR/b
make_bundle "$B" || bail "make_bundle failed"
bundle_set "$B" '.process.args=["sleep","1000"]'
diag "v1 hierarchies: $(v1_hierarchies | paste -sd' ')"

# 1. runc (control): its init is at the unit's path in every v1 hierarchy
rid=$(new_id v1r)
bundle_set "$B" '.linux.cgroupsPath=$p' --arg p "system.slice:runc:$rid"
"$RUNC" --root "$TEST_TMPDIR/runc" --systemd-cgroup run -d --bundle "$B" "$rid" >/dev/null 2>&1 </dev/null
rpid=$("$RUNC" --root "$TEST_TMPDIR/runc" state "$rid" 2>/dev/null | jq -r .pid)
is "$(misplaced "$rpid" "/system.slice/runc-$rid.scope")" "" "runc: the init is at the unit's path in every v1 hierarchy"
"$RUNC" --root "$TEST_TMPDIR/runc" delete --force "$rid" >/dev/null 2>&1

# 2. sdrun: after create, before any code of the container runs, and after start
bundle_set "$B" 'del(.linux.cgroupsPath)'
id=$(new_id v1s); track_container "$id"
unit=$(unit_of "$id")
ok_desc "create" sd create --bundle "$B" "$id"
cg=$(systemctl show -p ControlGroup --value "$unit")
pid=$(pid_of "$id")
is "$(misplaced "$pid" "$cg")" "" "created: the init is at the unit's path ($cg) in every v1 hierarchy (freezer, cpuset, cpuacct too)"
ok_desc "start" sd start "$id"
is "$(sd exec "$id" sh -c 'ls /sys/fs/cgroup/freezer/ | grep -c slice')" 0 \
        "the container's freezer mount shows its own cgroup, not the host's slices"
epid=$(sd exec "$id" sh -c 'echo $$' </dev/null)
ok_desc "an exec'd process is in the container's cgroups too" test -n "$epid"
ok_desc "delete --force" sd delete --force "$id"
is "$(dirs_left "$cg" | paste -sd' ')" "" "delete: no v1 directory of the unit is left"
no_leftovers "$id"

# 3. A privileged container makes cgroups of its own below its v1 cgroups: delete --force removes them
bundle_set "$B" '.process.capabilities.bounding += ["CAP_SYS_ADMIN"] | .process.capabilities.effective += ["CAP_SYS_ADMIN"]
        | .process.capabilities.permitted += ["CAP_SYS_ADMIN"]
        | (.mounts[] | select(.destination == "/sys/fs/cgroup") | .options) |= map(select(. != "ro"))
        | (.mounts[] | select(.destination == "/sys") | .options) |= map(select(. != "ro"))'
id=$(new_id v1p); track_container "$id"
unit=$(unit_of "$id")
ok_desc "privileged: run -d" sd run -d --bundle "$B" "$id"
cg=$(systemctl show -p ControlGroup --value "$unit")
out=$(sd exec "$id" sh -c 'for h in freezer cpuset cpuacct memory; do [ -d /sys/fs/cgroup/$h ] && mkdir /sys/fs/cgroup/$h/foo /sys/fs/cgroup/$h/foo/bar && echo made-$h; done' 2>&1)
like "$out" 'made-freezer' "privileged: the container makes freezer/foo/bar below its own cgroup"
ok_desc "... which is below the unit's path on the host" test -d "/sys/fs/cgroup/freezer$cg/foo/bar"
ok_desc "privileged: delete --force" sd delete --force "$id"
is "$(dirs_left "$cg" | paste -sd' ')" "" "privileged: delete leaves no v1 directory, nor the container's own below it"
no_leftovers "$id"

# 4. A corrupt state.json: delete --force removes the v1 directories systemd does not (cpuacct of its own,
#    freezer, cpuset), at the path systemd gives the unit
bundle_set "$B" '.process.capabilities.bounding -= ["CAP_SYS_ADMIN"] | .process.capabilities.effective -= ["CAP_SYS_ADMIN"]
        | .process.capabilities.permitted -= ["CAP_SYS_ADMIN"]'
id=$(new_id v1c); track_container "$id"
unit=$(unit_of "$id")
ok_desc "corrupt: run -d" sd run -d --bundle "$B" "$id"
cg=$(systemctl show -p ControlGroup --value "$unit")
printf '{"garbage' >"$SDRUN_ROOT/$id/state.json"
ok_desc "corrupt: delete --force" sd delete --force "$id"
is "$(dirs_left "$cg" | paste -sd' ')" "" "corrupt: delete leaves no v1 directory of the unit"
no_leftovers "$id"

done_testing
