#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Suite "vm": rootful Podman in the qemu VM tier (a real cgroup v2 hierarchy with every controller).
# First the smoke checks: `podman run --rm --network none --memory 64m --pids-limit 32` puts the limits into
# the container's memory.max and pids.max, its cgroup is libpod-<id>.scope, nothing is left; with sdrun and
# with crun as the control. (They were a test of their own; sharing this test's Podman setup saves one setup
# and `system reset`, tens of seconds under emulation.) Then Podman's checkpoint/restore through sdrun (CRIU works on Debian's own
# kernel there, not on these machines' kernel), runc as the control on the same Podman (Debian's crun is
# built without CRIU): a container with a published port and a counter in memory (a token drawn at start and
# a count, both in shell variables) is checkpointed (it stops, its scope goes) and restored (a new
# invocation of its libpod-<id>.scope, the same token, the count goes on from where it was, the port
# answers); checkpointed with --leave-running, which keeps it running; then checkpointed with --export to a
# tarball, removed, and restored with --import under a new name (a new id: its own scope). Nothing is left.
# (The last session's "runc fails checkpoint through Podman in the VM" was the test's own: `podman
# checkpoint` is no command, `podman container checkpoint` is. runc 1.1.5 restores --import under a new
# id into the old id's cgroup, as `runc restore` does (test-vm-criu.sh): for runc that check is a diag.)
. "$(dirname "$0")/../integration/lib.sh"

require_root
require_systemd
[ "$(stat -fc %T /sys/fs/cgroup)" = cgroup2fs ] || bail "/sys/fs/cgroup is not cgroup2: this test is for the VM tier"
command -v criu >/dev/null || bail "criu is not installed (Debian package criu)"
command -v curl >/dev/null || bail "curl is not installed"
o=$(criu check 2>&1) || bail "criu check fails on this kernel ($(uname -r)): $o"

# One configuration, storage and image (Podman's default runtime sdrun); each container names its runtime.
PODMAN_TEST_RUNTIME=sdrun
. "$(dirname "$0")/lib-podman.sh"
podman_setup

# The smoke checks, crun (the control) first.
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

# The counter: a token drawn once and a count, both in the shell's memory, written out every 0.2 s as
# "TOKEN COUNT"; httpd serves it. A container started afresh would draw a new token and count from 1.
SCRIPT='mkdir -p /www; t=$(cat /proc/sys/kernel/random/uuid); i=0; httpd -p 8080 -h /www
while :; do i=$((i + 1)); echo "$t $i" >/www/.n; mv /www/.n /www/n; sleep 0.2; done'
# served PORT: "TOKEN COUNT", through the published port.
served() { curl -sS --noproxy '*' -m 10 "http://127.0.0.1:$1/n" 2>/dev/null; }
served_ok() { [[ "$(served "$1")" =~ ^[0-9a-f-]{36}\ [0-9]+$ ]]; }
# wait_served PORT: until the port serves the counter. (wait_for counts its own sleeps, not the time its
# command takes: under emulation a long WAIT_FOR_TIMEOUT for every check would make a failing one last many
# minutes; Podman, netavark and CRIU take tens of seconds here, so the port gets one.)
wait_served() { WAIT_FOR_TIMEOUT=60 wait_for served_ok "$1"; }
# goes_on PORT TOKEN COUNT: the port serves TOKEN with a count above COUNT, and a second later a higher one.
goes_on() {
        local a b
        a=$(served "$1")
        sleep 1
        b=$(served "$1")
        diag "counter: $3 -> ${a#* } -> ${b#* } (token ${a%% *}, was $2)"
        [ "${a%% *}" = "$2" ] && [ "${b%% *}" = "$2" ] && [ "${a#* }" -ge "$3" ] && [ "${b#* }" -gt "${a#* }" ]
}
# criu_diag NAME: Podman's error and the last errors of the logs CRIU wrote into the container's userdata
# directory (dump.log, restore.log), as diagnostics of a failed checkpoint or restore.
criu_diag() {
        local ud f
        diag "$PM_ERR"
        ud=$(pm inspect --format '{{.StaticDir}}' "$1" 2>/dev/null) || return 0
        for f in "$ud"/dump.log "$ud"/restore.log; do
                [ -f "$f" ] || continue
                grep -h 'Error' "$f" | tail -n 5 | while read -r l; do diag "${f##*/}: $l"; done
        done
}
invocation() { systemctl show -p InvocationID --value -- "$1" 2>/dev/null; }

# In CI the checkpoint part runs for sdrun alone: test-vm-criu.sh runs the same checkpoint, restore,
# --leave-running and restore under a new id with runc as its control in the same VM, and this control took a
# tenth of the VM tier's time (~75 s of emulation, ~130 s beside the engine lanes). Outside CI runc runs here too.
cp_runtimes="runc sdrun"
if [ -n "${CI:-}" ] && [ -z "${SDRUN_TEST_ALL_CONTROLS:-}" ]; then
        cp_runtimes=sdrun
        diag "CI: Podman's checkpoint through runc (the control) runs outside CI (SDRUN_TEST_ALL_CONTROLS=1 runs it here)"
fi
port=18180
for rt in $cp_runtimes; do
        port=$((port + 1))
        name=cp-$rt
        pm_out id run -d --runtime "$rt" --name "$name" -p "$port:8080" "$PODMAN_IMAGE" sh -c "$SCRIPT"
        is "$PM_RC" 0 "$rt: run -d with a published port" || { diag "$PM_ERR"; continue; }
        is "$(pm inspect --format '{{.OCIRuntime}}' "$name" 2>&1)" "$rt" "$rt: Podman runs the container with $rt"
        ok_desc "$rt: the published port serves the counter" wait_served "$port"
        s0=$(served "$port")
        token=${s0%% *}
        scope1=$(pm_scope "$name")
        inv1=$(invocation "$scope1")

        # --- checkpoint, restore ---------------------------------------------------------------------------
        pm_out n container checkpoint "$name"
        is "$PM_RC" 0 "$rt: container checkpoint" || criu_diag "$name"
        n0=$(served_n=$(cat "$(pm inspect --format '{{.GraphDriver.Data.UpperDir}}' "$name" 2>/dev/null)/www/n" 2>/dev/null); echo "${served_n#* }")
        is "$(pm_status "$name")" exited "$rt: the checkpointed container is exited (count ${n0:-?} in its file)"
        ok_desc "$rt: its scope is gone" wait_for scope_gone "$scope1"
        pm_out n container restore "$name"
        is "$PM_RC" 0 "$rt: container restore" || criu_diag "$name"
        is "$(pm_status "$name")" running "$rt: the restored container is running"
        ok_desc "$rt: in its unit $scope1 again, active" scope_active "$scope1"
        ok_desc "$rt: ... a new invocation of it" test -n "$(invocation "$scope1")" -a "$(invocation "$scope1")" != "$inv1"
        ok_desc "$rt: ... which holds its process" scope_holds "$scope1" "$(pm_pid "$name")"
        wait_served "$port"
        ok_desc "$rt: the counter goes on from the checkpoint (same token, from ${n0:-?}), through the published port" \
                goes_on "$port" "$token" "${n0:-1}"

        # --- --leave-running ----------------------------------------------------------------------------------
        pm_out n container checkpoint --leave-running "$name"
        is "$PM_RC" 0 "$rt: checkpoint --leave-running" || criu_diag "$name"
        is "$(pm_status "$name")" running "$rt: ... the container still runs"
        ok_desc "$rt: ... in its unit" scope_active "$scope1"
        ok_desc "$rt: ... and counts on" goes_on "$port" "$token" 1

        # --- --export, then --import under a new name --------------------------------------------------------
        tarball=$TEST_TMPDIR/$name.tar.gz
        pm_out n container checkpoint --export "$tarball" "$name"
        is "$PM_RC" 0 "$rt: checkpoint --export to a tarball" || criu_diag "$name"
        s1=$(served "$port")
        ok_desc "$rt: the port is closed while it is checkpointed" test -z "$s1"
        pm rm -f -t 0 "$name" >/dev/null 2>&1
        ok_desc "$rt: after rm, its unit is gone" wait_for scope_gone "$scope1"
        pm_out n container restore --import "$tarball" --name "$name-2"
        is "$PM_RC" 0 "$rt: restore --import under a new name" || criu_diag "$name-2"
        is "$(pm_status "$name-2")" running "$rt: the imported container is running"
        is "$(pm inspect --format '{{.OCIRuntime}}' "$name-2" 2>&1)" "$rt" "$rt: ... with the runtime it was checkpointed with"
        scope2=$(pm_scope "$name-2")
        if [ "$rt" = sdrun ]; then
                ok_desc "$rt: ... in its own unit $scope2" scope_active "$scope2"
                ok_desc "$rt: ... which holds its process" scope_holds "$scope2" "$(pm_pid "$name-2")"
        else
                diag "$rt (control): the imported container's process is in $(grep -o '[^/]*\.scope' "/proc/$(pm_pid "$name-2")/cgroup" 2>/dev/null | tail -1) (its own unit: $scope2)"
        fi
        wait_served "$port"
        ok_desc "$rt: the imported container's counter goes on (same token), through the published port" \
                goes_on "$port" "$token" 1

        pm rm -f -t 0 "$name-2" >/dev/null 2>&1
        ok_desc "$rt: nothing left after rm: no unit" wait_for scope_gone "$scope2"
        ok_desc "$rt: ... and no unit of the first id" scope_gone "$scope1"
        ok_desc "$rt: ... and the port is closed" test -z "$(served "$port")"
done
pm_out out ps -a -q
is "$out" "" "no container is left"

done_testing
