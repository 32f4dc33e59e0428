#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# linux.cgroupsPath in cgroupfs form (issue 12): Docker's default cgroupfs driver writes "/docker/<id>",
# Podman with cgroup_manager=cgroupfs "/libpod_parent/libpod-<id>", Kubernetes "/kubepods/...". runc and
# crun without --systemd-cgroup accept them; sdrun maps each to a transient scope in machine.slice with
# systemd's path escaping (sdrun-systemd(7), CGROUPFS PATHS), so the container is still a systemd unit.
. "$(dirname "$0")/lib.sh"

require_root
require_systemd

B=$TEST_TMPDIR/b
make_bundle "$B" || bail "make_bundle failed"
sd() { "$SDRUN" --root "$SDRUN_ROOT" "$@"; }

# scope_case DESC CGROUPS_PATH UNIT: create with that cgroupsPath, check the unit from the host, delete.
scope_case() {
        local desc=$1 path=$2 unit=$3 id pid cg
        id=$(new_id cgfs | tr -d -)  # a Docker-like id: no '-' (which the mapping escapes)
        track_container "$id"
        bundle_set "$B" '.process.args=["sh","-c","cat /proc/self/cgroup; sleep 1000"] | .linux.cgroupsPath=$p |
                .linux.resources.pids.limit=77' --arg p "${path//@ID@/$id}" || return 1
        unit=${unit//@ID@/$id}
        ok_desc "$desc: create with cgroupsPath \"${path//@ID@/ID}\"" sd create --bundle "$B" "$id" || return 1
        is "$(sd state "$id" | jq -r .systemdUnit)" "$unit" "$desc: state names the unit $unit"
        is "$(systemctl show -p ActiveState --value -- "$unit")" active "$desc: $unit is active"
        is "$(systemctl show -p Slice --value -- "$unit")" machine.slice "$desc: $unit is in machine.slice"
        pid=$(sd state "$id" | jq -r .pid)
        cg=$(systemctl show -p ControlGroup --value -- "$unit")
        is "$cg" "/machine.slice/$unit" "$desc: ControlGroup of the unit"
        ok_desc "$desc: the init is in the scope's cgroup" grep -qF -- ":$cg" "/proc/$pid/cgroup"
        if [ "$SDRUN_TEST_LAYOUT" = hybrid ]; then
                is "$(systemctl show -p TasksMax --value -- "$unit")" 77 "$desc: pids.limit is the unit's TasksMax"
        fi
        ok_desc "$desc: start" sd start "$id"
        ok_desc "$desc: kill" sd kill "$id" KILL
        ok_desc "$desc: delete --force" sd delete --force "$id"
        ok_desc "$desc: the unit is gone" wait_for sh -c "! systemctl list-units --all --plain --no-legend -- '$unit' | grep -q ."
        no_leftovers "$id"
}

scope_case "Docker (cgroupfs driver)" "/docker/@ID@" "docker-@ID@.scope"
scope_case "relative path" "docker/@ID@" "docker-@ID@.scope"
scope_case "Podman (cgroupfs manager): '-' escaped" "/libpod_parent/libpod-@ID@" 'libpod_parent-libpod\x2d@ID@.scope'
scope_case "Kubernetes, '..' and empty components cleaned" "//kubepods/x/../burstable//@ID@/" "kubepods-burstable-@ID@.scope"

# The mapping is systemd's path escaping: what systemd-escape --path gives.
id=$(new_id cgfs)
want=$(systemd-escape --path "/kubepods/burstable/pod1a-2b/$id").scope
bundle_set "$B" '.process.args=["true"] | .linux.cgroupsPath=$p | del(.linux.resources)' \
        --arg p "/kubepods/burstable/pod1a-2b/$id" || bail "bundle_set failed"
track_container "$id"
ok_desc "create with a Kubernetes pod path" sd create --bundle "$B" "$id"
is "$(sd state "$id" | jq -r .systemdUnit)" "$want" "the unit is systemd-escape --path of the cgroupsPath ($want)"
ok_desc "delete --force" sd delete --force "$id"
no_leftovers "$id"

# The root cgroup is refused, naming the JSON path; nothing is left.
id=$(new_id cgfs)
bundle_set "$B" '.linux.cgroupsPath="/a/.."' || bail "bundle_set failed"
rc=0; err=$(sd create --bundle "$B" "$id" 2>&1) || rc=$?
is "$rc" 1 "a cgroupsPath that names the root cgroup is refused"
like "$err" 'linux\.cgroupsPath.*root cgroup' "... naming linux.cgroupsPath: $err"
no_leftovers "$id"

# Two containers with one cgroupsPath: runc warns and runs the second in the first one's non-empty cgroup.
# One systemd scope is one container: sdrun refuses the second, saying whose the unit is and what to do
# instead (sdrun-systemd(7), UNIT NAMES). The first runs on, alone in its scope; nothing of the second is left.
# same_path_case DESC CGROUPS_PATH UNIT
same_path_case() {
        local desc=$1 path=$2 unit=$3 first second rc=0 err pid dir
        first=$(new_id cgfs) second=$(new_id cgfs)
        track_container "$first"
        track_container "$second"
        bundle_set "$B" '.process.args=["sleep","1000"] | .linux.cgroupsPath=$p | del(.linux.resources)' \
                --arg p "$path" || return 1
        ok_desc "$desc: the first container with cgroupsPath \"$path\"" sd run -d --bundle "$B" "$first" || return 1
        pid=$(sd state "$first" | jq -r .pid)
        err=$(sd create --bundle "$B" "$second" 2>&1 </dev/null) || rc=$?
        is "$rc" 1 "$desc: a second container with the same cgroupsPath exits 1"
        like "$err" "config\.json: linux\.cgroupsPath \"$path\": unit $unit already exists, active: the scope of container \"$first\"\. One systemd scope holds one container" \
                "$desc: ... naming the unit, the container it belongs to and why"
        like "$err" 'give this container a cgroupsPath of its own; containers that belong together share a parent slice instead \(systemd form "SLICE:PREFIX:NAME"' \
                "$desc: ... and what to do instead"
        is "$(sd state "$first" | jq -r .status)" running "$desc: the first container still runs"
        is "$(systemctl show -p ActiveState --value -- "$unit")" active "$desc: its unit $unit is active"
        dir=$(cgroup_dir "$unit")
        is "$(cat "$dir/cgroup.procs" 2>&1)" "$pid" "$desc: its cgroup holds its init alone"
        no_leftovers "$second"
        ok_desc "$desc: delete the first" sd delete --force "$first"
        no_leftovers "$first"
}
x=$(new_id | tr -d -)
same_path_case "cgroupfs form" "/shared/$x" "shared-$x.scope"
same_path_case "systemd form" "machine.slice:sdrun:shared$x" "sdrun-shared$x.scope"

done_testing
