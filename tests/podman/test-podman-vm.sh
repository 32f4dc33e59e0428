#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Suite "vm": on a real cgroup v2 hierarchy with every controller (the qemu VM tier), `podman run --rm
# --network none --memory 64m --pids-limit 32` puts the limits into the container's memory.max and pids.max,
# with sdrun and with crun as the control. Slow (software emulation): keep it to this.
. "$(dirname "$0")/../integration/lib.sh"

require_root
require_systemd
[ "$(stat -fc %T /sys/fs/cgroup)" = cgroup2fs ] || bail "/sys/fs/cgroup is not cgroup2: this test is for the VM tier"

# One configuration, storage and image (Podman's default runtime sdrun); each container names its runtime,
# crun (the control) first: a setup and a `system reset` cost tens of seconds under emulation.
PODMAN_TEST_RUNTIME=sdrun
. "$(dirname "$0")/lib-podman.sh"
podman_setup
for rt in crun sdrun; do
        pm_is "$rt: --memory 64m and --pids-limit 32 land in memory.max and pids.max" $'67108864\n32' 0 \
                run --runtime "$rt" --name "vm-$rt" --network none --memory 64m --pids-limit 32 "$PODMAN_IMAGE" \
                cat /sys/fs/cgroup/memory.max /sys/fs/cgroup/pids.max
        pm_is "$rt: Podman ran the container with $rt" "$rt" 0 inspect --format '{{.OCIRuntime}}' "vm-$rt"
        pm rm -f -t 0 "vm-$rt" >/dev/null 2>&1
        pm_like "$rt: the container's cgroup is libpod-<id>.scope" '^0::/machine\.slice/libpod-[0-9a-f]{64}\.scope(/[^/]+)?$' 0 \
                run --runtime "$rt" --rm --network none --cgroupns host "$PODMAN_IMAGE" cat /proc/self/cgroup
        pm_out out ps -a -q
        is "$out" "" "$rt: nothing left behind"
done

done_testing
