#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Suite "vm": Podman's checkpoint/restore through sdrun, in the qemu VM tier (CRIU works on Debian's own
# kernel there, not on these machines' kernel), runc as the control on the same Podman (Debian's crun is
# built without CRIU): a container with a published port and a counter in memory is checkpointed (it
# stops, its scope goes) and restored (a new libpod-<id>.scope, the counter goes on from where it was, the
# port answers); then checkpointed with --export to a tarball and restored with --import under a new name;
# then checkpointed with --leave-running, which keeps it running. Nothing is left at the end.
. "$(dirname "$0")/../integration/lib.sh"

require_root
require_systemd
[ "$(stat -fc %T /sys/fs/cgroup)" = cgroup2fs ] || bail "/sys/fs/cgroup is not cgroup2: this test is for the VM tier"
command -v criu >/dev/null || bail "criu is not installed (Debian package criu)"
command -v curl >/dev/null || bail "curl is not installed"
o=$(criu check 2>&1) || bail "criu check fails on this kernel ($(uname -r)): $o"

PODMAN_TEST_RUNTIME=sdrun
. "$(dirname "$0")/lib-podman.sh"
podman_setup
export WAIT_FOR_TIMEOUT=60

# The counter: a shell variable in the container's memory, written out every 0.2 s; httpd serves it.
SCRIPT='mkdir -p /www; i=0; httpd -p 8080 -h /www; while :; do i=$((i + 1)); echo $i >/www/n; sleep 0.2; done'
# served PORT: the counter, through the published port.
served() { curl -sS --noproxy '*' -m 10 "http://127.0.0.1:$1/n" 2>/dev/null; }
served_ok() { [ -n "$(served "$1")" ]; }

port=18180
for rt in runc sdrun; do
        port=$((port + 1))
        name=cp-$rt
        pm_out id run -d --runtime "$rt" --name "$name" -p "$port:8080" "$PODMAN_IMAGE" sh -c "$SCRIPT"
        is "$PM_RC" 0 "$rt: run -d with a published port" || { diag "$PM_ERR"; continue; }
        wait_for served_ok "$port"
        n0=$(served "$port")
        like "$n0" '^[0-9]+$' "$rt: the published port serves the counter ($n0)"
        scope1=$(pm_scope "$name")

        # --- checkpoint, restore ---------------------------------------------------------------------------
        pm_out n checkpoint "$name"
        is "$PM_RC" 0 "$rt: container checkpoint" || diag "$PM_ERR"
        is "$(pm_status "$name")" exited "$rt: the checkpointed container is exited"
        ok_desc "$rt: its scope $scope1 is gone" wait_for scope_gone "$scope1"
        pm_out n restore "$name"
        is "$PM_RC" 0 "$rt: container restore" || diag "$PM_ERR"
        is "$(pm_status "$name")" running "$rt: the restored container is running"
        ok_desc "$rt: the restored container is the active unit $(pm_scope "$name")" scope_active "$(pm_scope "$name")"
        ok_desc "$rt: ... which holds its process" scope_holds "$(pm_scope "$name")" "$(pm_pid "$name")"
        wait_for served_ok "$port"
        n1=$(served "$port")
        ok_desc "$rt: the counter went on from the checkpoint ($n0 -> $n1), through the published port" \
                test "${n1:-0}" -ge "${n0:-1}"

        # --- --export, then --import under a new name --------------------------------------------------------
        tarball=$TEST_TMPDIR/$name.tar.gz
        pm_out n checkpoint --export "$tarball" "$name"
        is "$PM_RC" 0 "$rt: checkpoint --export to a tarball" || diag "$PM_ERR"
        pm rm -f -t 0 "$name" >/dev/null 2>&1
        pm_out n restore --import "$tarball" --name "$name-2"
        is "$PM_RC" 0 "$rt: restore --import under a new name" || diag "$PM_ERR"
        is "$(pm_status "$name-2")" running "$rt: the imported container is running"
        ok_desc "$rt: ... in its own unit $(pm_scope "$name-2")" scope_active "$(pm_scope "$name-2")"
        wait_for served_ok "$port"
        n3=$(served "$port")
        ok_desc "$rt: the imported container's counter goes on ($n1 -> $n3)" test "${n3:-0}" -ge "${n1:-1}"

        # --- --leave-running ----------------------------------------------------------------------------------
        pm_out n checkpoint --leave-running "$name-2"
        is "$PM_RC" 0 "$rt: checkpoint --leave-running" || diag "$PM_ERR"
        is "$(pm_status "$name-2")" running "$rt: ... the container still runs"
        ok_desc "$rt: ... in its unit" scope_active "$(pm_scope "$name-2")"
        a=$(served "$port")
        sleep 1
        b=$(served "$port")
        ok_desc "$rt: ... and counts on ($a -> $b)" test "${b:-0}" -gt "${a:-0}"

        scope2=$(pm_scope "$name-2")
        pm rm -f -t 0 "$name-2" >/dev/null 2>&1
        ok_desc "$rt: nothing left after rm: no unit" wait_for scope_gone "$scope2"
done
pm_out out ps -a -q
is "$out" "" "no container is left"

done_testing
