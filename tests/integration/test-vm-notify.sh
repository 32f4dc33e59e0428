#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Suite "vm" (issue 15): on a real cgroup v2 hierarchy, a Type=notify service around `sdrun run` becomes
# active only after the container's READY=1 (forwarded through /run/notify/notify.sock), the container runs
# in its scope with config.json's memory limit in memory.max, and `systemctl set-property --runtime ...
# MemoryMax=` of the scope shows in `sdrun events --stats` as `sdrun update --memory` does.
. "$(dirname "$0")/lib.sh"

require_root
require_systemd
[ -n "${SD_NOTIFY:-}" ] && [ -x "$SD_NOTIFY" ] || bail "SD_NOTIFY (the sd-notify helper) is not set or not executable"
grep -qw memory /sys/fs/cgroup/cgroup.controllers || bail "no memory controller on /sys/fs/cgroup: not the VM tier"

B=$TEST_TMPDIR/b
make_bundle "$B" || bail "make_bundle failed"
cp "$SD_NOTIFY" "$B/rootfs/bin/sd-notify" || bail "copy of sd-notify failed"
bundle_set "$B" '.process.args=["sh","-c","trap \"exit 0\" TERM; sleep 1; sd-notify READY=1 STATUS=up; sleep 1000 & wait"]
        | .linux.resources.memory.limit=67108864' || bail "bundle_set failed"
id=$(new_id vmn)
track_container "$id"
svc=sdrun-test-vmnotify-$$.service
cleanup_add systemctl reset-failed "$svc"
cleanup_add systemctl stop "$svc"

t0=$(date +%s%N)
out=$(systemd-run --quiet --unit="$svc" -p Type=notify -p NotifyAccess=all -p TimeoutStartSec=300 \
        "$SDRUN" --root "$SDRUN_ROOT" run --bundle "$B" "$id" 2>&1)
is "$?" 0 "systemd-run -p Type=notify sdrun run" || diag "$out"
t=$(( ($(date +%s%N) - t0) / 1000000 ))
is "$(systemctl show -p ActiveState --value "$svc")/$(systemctl show -p StatusText --value "$svc")" active/up \
        "the service is active, with the container's STATUS="
ok_desc "  only after the container's READY=1 ($t ms)" test "$t" -ge 1000
unit=$(unit_of "$id")
pid=$("$SDRUN" --root "$SDRUN_ROOT" state "$id" | jq -r .pid)
d=$(cgroup_dir "$unit")
ok_desc "the container's init ($pid) is in $unit" grep -qx "$pid" "$d/cgroup.procs"
is "$(cat "$d/memory.max")" 67108864 "  memory.max of the scope is config.json's limit"
systemctl set-property --runtime "$unit" MemoryMax=96M
is "$("$SDRUN" --root "$SDRUN_ROOT" events --stats "$id" | jq -r .data.memory.usage.limit)" 100663296 \
        "systemctl set-property --runtime MemoryMax=96M: sdrun events --stats says 96M"
"$SDRUN" --root "$SDRUN_ROOT" update --memory 32M "$id" >/dev/null 2>&1
is "$("$SDRUN" --root "$SDRUN_ROOT" events --stats "$id" | jq -r .data.memory.usage.limit)" 33554432 \
        "sdrun update --memory 32M: 32M"
systemctl stop "$svc"
WAIT_FOR_TIMEOUT=30 wait_for test ! -e "$SDRUN_ROOT/$id"
no_leftovers "$id"

done_testing
