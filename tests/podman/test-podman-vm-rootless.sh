#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Suite "vm" (real cgroup v2; the user manager has memory, pids and cpu delegated; slow, so kept small):
# rootless Podman with sdrun and with crun (the control): `run --memory 64m` puts 64M into the memory.max of
# the container's cgroup in the user's manager, and `stats` counts the container's pids.
. "$(dirname "$0")/../integration/lib.sh"
. "$(dirname "$0")/../integration/lib-rootless.sh"
. "$(dirname "$0")/lib-podman.sh"

require_root
require_systemd
[ "$(stat -fc %T /sys/fs/cgroup)" = cgroup2fs ] || bail "not a cgroup v2 hierarchy (this test runs in the vm tier)"
rootless_setup sdrun-vprl
DELEGATED=$(rl_delegated)
for c in memory pids; do
        [[ " $DELEGATED " == *" $c "* ]] || bail "the user manager has no $c controller delegated (\"$DELEGATED\")"
done

# One configuration, storage and image (Podman's default runtime sdrun); each container names its runtime
# (crun is the control): a setup and a `system reset` cost tens of seconds under emulation.
rl_podman_setup sdrun
for rt in sdrun crun; do
        got=$(up run --runtime "$rt" --name "vm-$rt" --network none --memory 64m "$RL_PODMAN_IMAGE" cat /sys/fs/cgroup/memory.max 2>&1 </dev/null)
        is "$got" 67108864 "podman ($rt, rootless) run --memory 64m: memory.max in the container's cgroup"
        is "$(up inspect --format '{{.OCIRuntime}}' "vm-$rt" 2>&1)" "$rt" "podman ($rt, rootless) ran the container with $rt"
        up rm -f -t 0 "vm-$rt" >/dev/null 2>&1
        cid=$(up run --runtime "$rt" -d --network none "$RL_PODMAN_IMAGE" sleep 1000 2>/dev/null </dev/null)
        like "$(up stats --no-stream --format '{{.PIDs}}' "$cid" 2>&1)" '^[1-9]' "podman ($rt, rootless) stats counts the pids"
        up rm -f -t 0 "$cid" >/dev/null 2>&1
done

done_testing
