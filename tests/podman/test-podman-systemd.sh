#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Suite "podman": systemd as the container's init (`podman run --systemd=always`), through conmon and the
# runtime chosen by $PODMAN_TEST_RUNTIME. The container's root is the host's /usr (bound read-only) with a
# copy of /etc, and systemd starts a target of its own that pulls in journald: it must boot (manage cgroups
# of its own below the container's scope, run a service), answer systemctl, and power off on `podman
# stop` (SIGRTMIN+3) well within the default 10 s timeout; its journal is readable with `podman exec
# journalctl` and, as sdrun registers the container with machined, from the host with `journalctl -M`. On
# a hybrid host the runtime must not hand it the cgroup2 hierarchy (/sys/fs/cgroup/unified): systemd would
# take the layout for hybrid, look there for its own cgroup and exit before it logs anything.
. "$(dirname "$0")/../integration/lib.sh"
. "$(dirname "$0")/lib-podman.sh"

require_root
require_systemd
podman_setup
[ -x /lib/systemd/systemd ] || bail "no /lib/systemd/systemd on this host"

# The container's root: /usr read-only from the host, its own /etc, the usual top-level links.
R=$TEST_TMPDIR/sysroot
mkdir -p "$R"/{usr,etc,var,run,tmp,proc,sys,dev,root} || bail "mkdir $R"
mount --bind /usr "$R/usr" && mount -o remount,bind,ro "$R/usr" || bail "cannot bind /usr into $R"
cleanup_add umount -l "$R/usr"
cp -a /etc/. "$R/etc/" 2>/dev/null
: >"$R/etc/machine-id"
for l in bin sbin lib lib64; do
        [ -e "/$l" ] && ln -s "usr/$l" "$R/$l"
done
# A target of its own: only journald, so that the boot does not depend on what this host has enabled.
mkdir -p "$R/etc/systemd/system"
cat >"$R/etc/systemd/system/sdrun-test.target" <<'EOF'
[Unit]
Description=sdrun test target
Wants=systemd-journald.service
After=systemd-journald.service
EOF

name=sdrun-systemd-$$
cleanup_add podman rm -f -t 0 "$name"
pm_out out run -d --name "$name" --systemd=always --rootfs "$R" /lib/systemd/systemd --unit=sdrun-test.target
is "$PM_RC" 0 "run -d --systemd=always: the container is created and started"
[ "$PM_RC" = 0 ] || diag "podman: $PM_ERR"

booted() {
        local s
        s=$(podman exec "$name" systemctl is-system-running 2>/dev/null)
        [ "$s" = running ] || [ "$s" = degraded ]
}
booted_in_time() { WAIT_FOR_TIMEOUT=30 wait_for booted; }
ok_desc "systemd inside finishes its boot (systemctl is-system-running)" booted_in_time ||
        diag "state: $(podman exec "$name" systemctl is-system-running 2>&1); logs: $(podman logs "$name" 2>&1 | tail -5)"
is "$(podman exec "$name" systemctl is-system-running 2>&1)" running "no unit failed during the boot"
is "$(podman exec "$name" cat /proc/1/comm 2>&1)" systemd "PID 1 of the container is systemd"
is "$(podman exec "$name" systemctl is-active systemd-journald.service 2>&1)" active \
        "a service systemd started inside (journald) is active"
like "$(podman exec "$name" cat /proc/1/cgroup 2>&1)" '/init\.scope' \
        "systemd moved itself into init.scope: it manages cgroups of its own"

unit=$(pm_scope "$name")
pid=$(pm_pid "$name")
ok_desc "host: the scope holds the container's systemd ($pid)" scope_holds "$unit" "$pid"
# On the host, systemd's own cgroups appear below the container's scope in the hierarchy it runs on.
cg=$(systemctl show -p ControlGroup --value -- "$unit")
if [ "$SDRUN_TEST_LAYOUT" = unified ]; then
        tree=/sys/fs/cgroup$cg
else
        tree=/sys/fs/cgroup/systemd$cg
fi
below_scope() { [ -n "$cg" ] && [ "$cg" != / ] && [ -d "$tree/system.slice/systemd-journald.service" ]; }
ok_desc "host: the container's system.slice/systemd-journald.service is below $unit" below_scope

# The container's journal: journald inside it has the boot; from the host through machined where the runtime
# registers the container (sdrun does, crun and runc do not: Podman itself registers nothing).
mark=sdrun-journal-$$
podman exec "$name" sh -c "echo $mark | systemd-cat -t sdrun-test" >/dev/null 2>&1
inside_journal() { podman exec "$name" journalctl -q --no-pager -t sdrun-test 2>/dev/null | grep -q "$mark"; }
ok_desc "podman exec journalctl: the container's journal has a line logged inside it" wait_for inside_journal
like "$(podman exec "$name" journalctl -q --no-pager -b -u systemd-journald.service 2>&1 | head -3)" . \
        "podman exec journalctl: the boot is in it (systemd-journald.service's lines)"
machine=$(machinectl list --no-legend 2>/dev/null | awk -v id="$(pm_id "$name")" '$1 == id { print $1 }')
if [ "$PODMAN_TEST_RUNTIME" = sdrun ]; then
        is "$machine" "$(pm_id "$name")" "machinectl list: the runtime registered the container as a machine"
        host_journal() { journalctl -q --no-pager -M "$machine" -t sdrun-test 2>/dev/null | grep -q "$mark"; }
        ok_desc "journalctl -M: the host reads the container's journal" wait_for host_journal ||
                diag "journalctl -M: $(journalctl -q --no-pager -M "$machine" -n 3 2>&1 | tail -3)"
else
        is "$machine" "" "machinectl list: $PODMAN_TEST_RUNTIME registers no machine"
        pass "journalctl -M: not for a container that is not a machine ($PODMAN_TEST_RUNTIME)"
fi

is "$(podman inspect --format '{{.Config.StopSignal}}' "$name" 2>&1)" 37 "the stop signal is SIGRTMIN+3 (37)"
start=$(date +%s%N)
pm_out out stop "$name"
took=$((($(date +%s%N) - start) / 1000000))
is "$PM_RC" 0 "podman stop (the default 10 s timeout): SIGRTMIN+3 reaches systemd"
# When the container ended, as Podman recorded it (podman stop's own time adds conmon's and the storage's).
finished=$(date -d "$(podman inspect --format '{{.State.FinishedAt}}' "$name" | sed 's/ [A-Z]*$//')" +%s%N 2>/dev/null)
ended=$(( (${finished:-0} - start) / 1000000 ))
# Before the timeout's SIGKILL (exit status 0 below says the same): a poweroff takes 1-3 s on an idle box,
# up to 5 s with crun or sdrun on a loaded one, where podman stop itself then takes longer.
ok_desc "systemd powered off on its own, before the 10 s timeout (it ended after $ended ms; podman stop took $took ms)" \
        test "$ended" -ge 0 -a "$ended" -lt 9000
is "$(podman inspect --format '{{.State.ExitCode}}' "$name" 2>&1)" 0 "the container exited 0 (a clean poweroff)"
podman rm -f -t 0 "$name" >/dev/null 2>&1
ok_desc "host: the scope is gone after rm" wait_for scope_gone "$unit"

done_testing
