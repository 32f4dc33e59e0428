#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Suite "vm": the VM tier really has a booted systemd on a cgroup v2 hierarchy with the memory and pids
# controllers, and systemd applies MemoryMax= to a transient scope.
. "$(dirname "$0")/lib.sh"

require_root
require_systemd

is "$(stat -fc %T /sys/fs/cgroup)" cgroup2fs "/sys/fs/cgroup is cgroup2"
ctrls=$(cat /sys/fs/cgroup/cgroup.controllers)
like " $ctrls " ' memory ' "memory controller available ($ctrls)"
like " $ctrls " ' pids ' "pids controller available"
is "$(cat /proc/1/comm)" systemd "PID 1 is systemd"

unit=sdrun-vmsmoke-$$.scope
out=$(systemd-run --quiet --scope --unit="$unit" -p MemoryMax=64M -p TasksMax=42 \
        sh -c 'cg=$(sed -n "s/^0:://p" /proc/self/cgroup); cat /sys/fs/cgroup$cg/memory.max /sys/fs/cgroup$cg/pids.max' 2>&1)
is "$out" $'67108864\n42' "MemoryMax=64M and TasksMax=42 land in memory.max and pids.max of the scope"
scope_gone() { [ -z "$(systemctl list-units --all --plain --no-legend -- "$unit")" ]; }
ok_desc "the scope is gone after its process exited" wait_for scope_gone

done_testing
