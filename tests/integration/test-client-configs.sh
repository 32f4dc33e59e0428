#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The corpus of real client configs (tests/client-configs/<client>/<case>.json: what Docker 20.10, containerd
# 1.6's ctr and Podman 4.3 wrote for common flag combinations, recorded by tests/client-configs/capture): each
# one, adapted to this host by tests/client-configs/prepare.py, through create, start, wait and delete with
# sdrun and with the control runtime (crun; runc in the unified layout, where crun cannot raise
# RLIMIT_MEMLOCK) in the same test. Both must run it; nothing of the container may remain.
. "$(dirname "$0")/lib.sh"

require_root
require_systemd
CORPUS=$SDRUN_SRCDIR/tests/client-configs
PREPARE=$CORPUS/prepare.py
CONTROL=crun
[ "$SDRUN_TEST_LAYOUT" = unified ] && CONTROL=runc
CONTROL_BIN=$(command -v "$CONTROL") || bail "$CONTROL is not installed (the control runtime)"
CROOT=$TEST_TMPDIR/control-root
# The network namespace a config joins by path (Podman's netavark namespace) is replaced by one of the test's.
NETNS_NAME=sdtest-cc-$$
ip netns add "$NETNS_NAME" || bail "ip netns add $NETNS_NAME failed"
cleanup_add ip netns delete "$NETNS_NAME"
NETNS=/run/netns/$NETNS_NAME

# SDRUN_CC_ONLY=GLOB (by hand): only the configs matching GLOB, e.g. 'podman/*'.
mapfile -t configs < <(cd "$CORPUS" && ls ${SDRUN_CC_ONLY:-*/*.json} 2>/dev/null | sort)
[ ${#configs[@]} -ge 12 ] || [ -n "${SDRUN_CC_ONLY:-}" ] ||
        bail "only ${#configs[@]} configs in $CORPUS (run tests/client-configs/capture)"
diag "${#configs[@]} captured configs, control runtime $CONTROL"

# rt_cmd RUNTIME DRIVER: the runtime's command line prefix (root, cgroup driver).
rt_cmd() {
        local sd=()
        [ "$2" = systemd ] && sd=(--systemd-cgroup)
        case "$1" in
        sdrun) echo "$SDRUN --root $SDRUN_ROOT ${sd[*]}" ;;
        *) echo "$CONTROL_BIN --root $CROOT ${sd[*]}" ;;
        esac
}

# state_status RUNTIME DRIVER ID
state_status() {
        $(rt_cmd "$1" "$2") state "$3" 2>/dev/null | jq -r .status
}
is_stopped() { [ "$(state_status "$@")" = stopped ]; }

# replay RUNTIME CONFIG: create, start, wait for the exit, delete; on success, echo the container's output.
# On failure, the step and the runtime's message in $WHY.
replay() {
        local rt=$1 cfg=$2 id b drv out
        id=$(new_id cc)
        b=$TEST_TMPDIR/b-$id
        make_bundle "$b" || { WHY="make_bundle failed"; return 1; }
        drv=$(python3 "$PREPARE" "$CORPUS/$cfg" "$b" "$id" "$NETNS" 2>&1) || { WHY="prepare.py: $drv"; return 1; }
        # A user namespace (Podman --uidmap): Podman hands over a rootfs owned by the mapped root (its storage
        # layers are chowned); do the same here, and let the mapped root reach the bundle.
        local hostuid hostgid
        hostuid=$(jq -r '[.linux.uidMappings[]? | select(.containerID == 0) | .hostID][0] // empty' "$b/config.json")
        hostgid=$(jq -r '[.linux.gidMappings[]? | select(.containerID == 0) | .hostID][0] // empty' "$b/config.json")
        if [ -n "$hostuid" ]; then
                chown -R "$hostuid:${hostgid:-$hostuid}" "$b/rootfs"
                chmod 0711 "$TEST_TMPDIR" "$b"
        fi
        local rc=( $(rt_cmd "$rt" "$drv") )
        [ "$rt" = sdrun ] && track_container "$id"
        [ "$rt" != sdrun ] && cleanup_add "${rc[@]}" delete --force "$id"
        if ! "${rc[@]}" create --bundle "$b" "$id" >"$b/out" 2>"$b/err" </dev/null; then
                WHY="create: $(tail -n 3 "$b/err")"
                return 1
        fi
        if ! "${rc[@]}" start "$id" 2>"$b/err"; then
                WHY="start: $(tail -n 3 "$b/err")"
                "${rc[@]}" delete --force "$id" >/dev/null 2>&1
                return 1
        fi
        if ! wait_for is_stopped "$rt" "$drv" "$id"; then
                WHY="did not stop: state $(state_status "$rt" "$drv" "$id")"
                "${rc[@]}" delete --force "$id" >/dev/null 2>&1
                return 1
        fi
        if ! "${rc[@]}" delete "$id" 2>"$b/err"; then
                WHY="delete: $(tail -n 3 "$b/err")"
                return 1
        fi
        out=$(cat "$b/out")
        if [ "$rt" = sdrun ]; then
                LAST_ID=$id
        fi
        rm -rf "$b"
        [ "$out" = client-config-ok ] || { WHY="output '$out' (expected client-config-ok)"; return 1; }
        return 0
}

for cfg in "${configs[@]}"; do
        WHY=""
        if replay "$CONTROL" "$cfg"; then
                _tap_result 0 "$cfg: $CONTROL (control) runs it"
        elif [ "$SDRUN_TEST_LAYOUT" = unified ] && [ -z "$(cat /sys/fs/cgroup/cgroup.controllers 2>/dev/null)" ]; then
                # a cgroup v2 hierarchy without controllers (the unified box): runc cannot apply the limits
                # Docker and Podman always send (Docker's cpu shares, Podman's pids limit), so no control
                skip "$cfg: $CONTROL cannot run it without cgroup controllers ($WHY)"
                WHY="" LAST_ID=""
                replay sdrun "$cfg" && diag "sdrun runs it" || diag "sdrun: $WHY"
                skip "$cfg: sdrun, with no control in this layout"
                continue
        else
                _tap_result 1 "$cfg: $CONTROL (control) runs it"
                diag "$CONTROL: $WHY"
        fi
        WHY="" LAST_ID=""
        if replay sdrun "$cfg"; then
                _tap_result 0 "$cfg: sdrun runs it (create, start, exit, delete)"
                no_leftovers "$LAST_ID"
        else
                _tap_result 1 "$cfg: sdrun runs it (create, start, exit, delete)"
                diag "sdrun: $WHY"
        fi
done

done_testing
