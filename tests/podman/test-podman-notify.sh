#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Suite "podman": sd_notify end to end (issue 15, item 2) with the runtime chosen by $PODMAN_TEST_RUNTIME
# (sdrun; crun or runc as the control): `podman run --sdnotify=container` (the container's READY=1, sent after
# a delay, reaches the caller's NOTIFY_SOCKET with MAINPID= of conmon), `--sdnotify=conmon` (READY=1 from
# Podman, no socket in the container), and a unit from `podman generate systemd --new --sdnotify=container`
# installed in /etc/systemd/system, enabled and started with systemctl: active only after READY=1, its container
# on the runtime in libpod-<id>.scope, stopped with it, and on a second start a new container (issue 34,
# item 5: what an enabled unit does at a reboot).
. "$(dirname "$0")/../integration/lib.sh"
. "$(dirname "$0")/lib-podman.sh"

require_root
require_systemd
[ -n "${SD_NOTIFY:-}" ] && [ -x "$SD_NOTIFY" ] || bail "SD_NOTIFY (the sd-notify helper) is not set or not executable"
podman_setup
IMG=$PODMAN_IMAGE
LISTEN=$SDRUN_SRCDIR/tests/integration/helpers/notify-listen.py
VOL=(-v "$SD_NOTIFY:/sd-notify:ro")

# listen ADDR OUT: a notify listener in the background (killed on exit)
listen() {
        rm -f "$2" "$2.ready"
        python3 "$LISTEN" "$1" "$2" &
        cleanup_add kill "$!"
        cleanup_add rm -f "$1"
        wait_for test -e "$2.ready" || bail "notify listener on $1 did not start"
}
ms_since() { echo $(( ($(date +%s%N) - $1) / 1000000 )); }

# --- podman run -d --sdnotify=container ----------------------------------------------------------------------
L=$TEST_TMPDIR/n1.sock M=$TEST_TMPDIR/m1
listen "$L" "$M"
c=ntf-$$
t0=$(date +%s%N)
NOTIFY_SOCKET=$L pm_out cid run -d --network none --name "$c" --sdnotify=container "${VOL[@]}" "$IMG" \
        sh -c 'echo "env $NOTIFY_SOCKET"; sleep 2; /sd-notify READY=1; exec sleep 1000'
is "$PM_RC" 0 "run -d --sdnotify=container" || diag "$PM_ERR"
diag "podman run -d returned after $(ms_since "$t0") ms (Podman 4.3 does not wait for READY=1 itself)"
WAIT_FOR_TIMEOUT=15 ok_desc "the caller's socket gets READY=1 from the container after its delay" \
        wait_for grep -q READY=1 "$M"
conmon=$(podman inspect --format '{{.State.ConmonPid}}' "$c")
like "$(cat "$M")" "MAINPID=$conmon" "  and MAINPID= of conmon ($conmon)"
ok_desc "  READY=1 came at least 2 s after the start" test "$(ms_since "$t0")" -ge 2000
is "$(podman logs "$c" 2>&1 | head -1)" "env /run/notify/notify.sock" "the container's NOTIFY_SOCKET is /run/notify/notify.sock"
pm_out out rm -f -t 0 "$c"

# --- podman run -d --sdnotify=conmon ---------------------------------------------------------------------------
L=$TEST_TMPDIR/n2.sock M=$TEST_TMPDIR/m2
listen "$L" "$M"
c=ntf2-$$
NOTIFY_SOCKET=$L pm_out cid run -d --network none --name "$c" --sdnotify=conmon "$IMG" \
        sh -c 'echo "env ${NOTIFY_SOCKET:-none}"; exec sleep 1000'
is "$PM_RC" 0 "run -d --sdnotify=conmon" || diag "$PM_ERR"
ok_desc "the caller's socket gets READY=1 from Podman" wait_for grep -q READY=1 "$M"
conmon=$(podman inspect --format '{{.State.ConmonPid}}' "$c")
like "$(cat "$M")" "MAINPID=$conmon" "  and MAINPID= of conmon"
wait_for sh -c "podman logs $c 2>&1 | grep -q env"
is "$(podman logs "$c" 2>&1 | head -1)" "env none" "  the container has no NOTIFY_SOCKET"
pm_out out rm -f -t 0 "$c"

# --- podman generate systemd --new --sdnotify=container, started with systemctl ------------------------------
c=ntfunit-$$
pm_out cid create --network none --name "$c" --sdnotify=container "${VOL[@]}" "$IMG" \
        sh -c 'trap "exit 0" TERM; sleep 2; /sd-notify READY=1; sleep 1000 & wait'
is "$PM_RC" 0 "podman create --sdnotify=container" || diag "$PM_ERR"
svc=container-$c.service
pm_out unitfile generate systemd --new --name "$c"
is "$PM_RC" 0 "podman generate systemd --new" || diag "$PM_ERR"
like "$unitfile" "Type=notify" "  the unit is Type=notify"
pm_out out rm -f -t 0 "$c"
# Installed where a user installs it, and enabled (issue 34, item 5).
U=/etc/systemd/system
printf '%s\n' "$unitfile" >"$U/$svc"
# The unit's podman must see this test's storage and configuration.
mkdir -p "$U/$svc.d"
printf '[Service]\nEnvironment=CONTAINERS_STORAGE_CONF=%s\n' "$CONTAINERS_STORAGE_CONF" >"$U/$svc.d/env.conf"
cleanup_add systemctl daemon-reload
cleanup_add rm -rf "$U/$svc" "$U/$svc.d"
cleanup_add systemctl disable "$svc"
cleanup_add systemctl stop "$svc"
systemctl daemon-reload
out=$(systemctl enable "$svc" 2>&1)
is "$(systemctl is-enabled "$svc" 2>&1)" enabled "systemctl enable $svc (installed in $U)" || diag "$out"
t0=$(date +%s%N)
out=$(systemctl start "$svc" 2>&1)
rc=$?
t=$(ms_since "$t0")
is "$rc" 0 "systemctl start $svc" || { diag "$out"; journalctl -u "$svc" --no-pager | tail -20 | _tap_diag_stream; }
is "$(systemctl is-active "$svc")" active "  the unit is active"
ok_desc "  it became active only after the container's READY=1 ($t ms)" test "$t" -ge 2000
cid=$(podman inspect --format '{{.Id}}' "$c" 2>/dev/null)
pid=$(pm_pid "$c" 2>/dev/null)
scope=libpod-$cid.scope
ok_desc "  the container runs in $scope" scope_holds "$scope" "$pid"
like "$(systemctl status --no-pager -l "$scope" 2>&1)" "sleep 1000" "  systemctl status $scope shows its processes"
is "$(systemctl show -p MainPID --value "$svc")" "$(podman inspect --format '{{.State.ConmonPid}}' "$c")" \
        "  the unit's main process is conmon"
is "$(podman inspect --format '{{.OCIRuntime}}' "$c" 2>&1)" "$PODMAN_TEST_RUNTIME" \
        "  the container's runtime is $PODMAN_TEST_RUNTIME (the drop-in's)"
out=$(systemctl stop "$svc" 2>&1)
is "$?" 0 "systemctl stop $svc" || diag "$out"
ok_desc "  the container is gone" wait_for sh -c "! podman container exists $c"
ok_desc "  its scope is gone" wait_for scope_gone "$scope"

# Started again (what a reboot does to an enabled unit): a new container (--new), again after its READY=1.
t0=$(date +%s%N)
out=$(systemctl start "$svc" 2>&1)
rc=$?
t=$(ms_since "$t0")
is "$rc" 0 "systemctl start $svc again: the service comes back" || diag "$out"
ok_desc "  active only after the new container's READY=1 ($t ms)" test "$t" -ge 2000
cid2=$(podman inspect --format '{{.Id}}' "$c" 2>/dev/null)
ok_desc "  it runs a new container" test -n "$cid2" -a "$cid2" != "$cid"
is "$(podman inspect --format '{{.OCIRuntime}}' "$c" 2>&1)" "$PODMAN_TEST_RUNTIME" "  on $PODMAN_TEST_RUNTIME"
ok_desc "  in libpod-$cid2.scope" scope_holds "libpod-$cid2.scope" "$(pm_pid "$c" 2>/dev/null)"
out=$(systemctl stop "$svc" 2>&1)
is "$?" 0 "systemctl stop $svc" || diag "$out"
ok_desc "  the container is gone" wait_for sh -c "! podman container exists $c"
ok_desc "  its scope is gone" wait_for scope_gone "libpod-$cid2.scope"

done_testing
