#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Suite "vm" (real cgroup v2; the user manager has memory, pids and cpu delegated; ~50x slower, so kept
# small): rootless resources land in the user's scope. sdrun run -d as an unprivileged user with
# memory.limit and pids.limit -> memory.max and pids.max of sdrun-ID.scope in user@UID.service; `update`
# changes memory.max; nothing is left. crun rootless is the control for the same bundle. Rootless Podman in
# the VM: tests/podman/test-podman-vm-rootless.sh.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-rootless.sh"

require_root
require_systemd
[ "$(stat -fc %T /sys/fs/cgroup)" = cgroup2fs ] || bail "not a cgroup v2 hierarchy (this test runs in the vm tier)"
rootless_setup sdrun-vrl
DELEGATED=$(rl_delegated)
for c in memory pids; do
        [[ " $DELEGATED " == *" $c "* ]] || bail "the user manager has no $c controller delegated (\"$DELEGATED\")"
done
MANAGER_CG=$(rl systemctl --user show -p ControlGroup --value)

# mem_pids_of UNIT: "memory.max pids.max" of the unit's cgroup, or of the one sub-cgroup below it that holds
# the container (crun puts the limits there).
mem_pids_of() {
        local cg d
        cg=$(rl_unit_prop "$1" ControlGroup)
        for d in "/sys/fs/cgroup$cg" "/sys/fs/cgroup$cg"/*/; do
                d=${d%/}
                [ -f "$d/memory.max" ] && [ "$(cat "$d/memory.max")" != max ] && { echo "$(cat "$d/memory.max") $(cat "$d/pids.max")"; return; }
        done
        echo "max max"
}

for rt in sdrun crun; do
        B=$RL_TMP/b-$rt
        rl_make_bundle "$B" "$([ $rt = crun ] && echo 1.0.2)" || bail "cannot make the user's bundle"
        rl_bundle_set "$B" '.linux.resources={"memory":{"limit":67108864},"pids":{"limit":42}}'
        bin=$RL_SDRUN; [ $rt = crun ] && bin=crun
        id=$(new_id vrl)
        ok_desc "$rt: run -d as the user with memory and pids limits" rl "$bin" --systemd-cgroup run -d --bundle "$B" "$id"
        unit=$(rl_units "*$id*" | head -1)
        like "$(rl_unit_prop "$unit" ControlGroup)" "^$MANAGER_CG/" "$rt: its scope ($unit) is the user manager's"
        is "$(mem_pids_of "$unit")" "67108864 42" "$rt: memory.max and pids.max of the user's scope"
        if [ $rt = sdrun ]; then
                ok_desc "sdrun: update --memory 32M" rl "$bin" update --memory 33554432 "$id"
                is "$(mem_pids_of "$unit")" "33554432 42" "sdrun: memory.max updated"
        fi
        ok_desc "$rt: delete -f" rl "$bin" delete -f "$id"
        _gone() { [ -z "$(rl_units "*$id*")" ]; }
        ok_desc "$rt: nothing left in the user's manager" wait_for _gone
done

done_testing
