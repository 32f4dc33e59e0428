#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Suite "vm": on a real cgroup v2 hierarchy with every controller (the qemu VM tier), `podman run --rm
# --network none --memory 64m --pids-limit 32` puts the limits into the container's memory.max and pids.max,
# with sdrun and with crun as the control. Slow (software emulation): keep it to this.
. "$(dirname "$0")/../integration/lib.sh"

require_root
require_systemd
[ "$(stat -fc %T /sys/fs/cgroup)" = cgroup2fs ] || bail "/sys/fs/cgroup is not cgroup2: this test is for the VM tier"

# Configuration, storage and image per runtime; torn down before the next one.
for rt in crun sdrun; do
        PODMAN_TEST_RUNTIME=$rt
        . "$(dirname "$0")/lib-podman.sh"
        podman_setup
        pm_is "$rt: --memory 64m and --pids-limit 32 land in memory.max and pids.max" $'67108864\n32' 0 \
                run --rm --network none --memory 64m --pids-limit 32 "$PODMAN_IMAGE" \
                cat /sys/fs/cgroup/memory.max /sys/fs/cgroup/pids.max
        pm_like "$rt: the container's cgroup is libpod-<id>.scope" '^0::/machine\.slice/libpod-[0-9a-f]{64}\.scope(/[^/]+)?$' 0 \
                run --rm --network none --cgroupns host "$PODMAN_IMAGE" cat /proc/self/cgroup
        pm_out out ps -a -q
        is "$out" "" "$rt: nothing left behind"
        _podman_teardown
done

done_testing
