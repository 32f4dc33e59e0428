# SPDX-License-Identifier: LGPL-2.1-or-later
# shellcheck shell=bash
#
# An unprivileged user with a running systemd user manager, for the rootless tests (test-rootless.sh, the
# vm tier, tests/podman/test-podman-rootless.sh). Source it after lib.sh, as root:
#
#     . "$(dirname "$0")/lib.sh"; . "$(dirname "$0")/lib-rootless.sh"
#     require_root; require_systemd; rootless_setup sdrun-rl
#     rl "$RL_SDRUN" spec --rootless --bundle "$RL_TMP/b"
#
# rootless_setup NAME makes the user NAME (home in /home, /etc/subuid and /etc/subgid ranges), enables
# lingering so that user@UID.service runs, waits for its bus, and copies the sdrun binary into a private
# directory of the user's (so the checkout's path need not be searchable by the user). Out: RL_USER, RL_UID,
# RL_GID, RL_HOME, RL_RUNTIME_DIR, RL_TMP (the user's, removed on exit), RL_SDRUN. On exit the user's
# containers, the user manager and the user are removed.

# rl CMD...: CMD as the user, with the environment of a login session (XDG_RUNTIME_DIR, the user bus).
rl() {
        runuser -u "$RL_USER" -- env -C "$RL_TMP" HOME="$RL_HOME" USER="$RL_USER" LOGNAME="$RL_USER" \
                XDG_RUNTIME_DIR="$RL_RUNTIME_DIR" DBUS_SESSION_BUS_ADDRESS="unix:path=$RL_RUNTIME_DIR/bus" \
                PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin "$@"
}

# rl_in_scope CMD...: CMD as the user from a scope of the user's own manager (where a login session's
# programs and Podman's conmon run: the user may write the cgroups there).
rl_in_scope() {
        rl systemd-run --user --scope --quiet --collect -- "$@"
}

# rl_units PATTERN: the user manager's loaded units matching PATTERN (one per line, empty if none).
rl_units() {
        rl systemctl --user list-units --all --plain --no-legend --no-pager -- "$1" 2>/dev/null | awk '{print $1}'
}

# rl_unit_prop UNIT PROP
rl_unit_prop() {
        rl systemctl --user show -p "$2" --value -- "$1"
}

# rl_delegated: the controllers the user manager can give its units (cgroup v2), space-separated.
rl_delegated() {
        local cg
        cg=$(rl systemctl --user show -p ControlGroup --value) || return 1
        [ -n "$cg" ] && cat "/sys/fs/cgroup$cg/cgroup.controllers" 2>/dev/null
}

# Every container of the user's, with each runtime.
_rootless_delete_all() {
        local rt id
        for rt in "$RL_SDRUN" crun runc; do
                [ -n "$rt" ] || continue
                rl "$rt" list -q 2>/dev/null | while read -r id; do rl "$rt" delete -f "$id" >/dev/null 2>&1; done
        done
}

_rootless_teardown() {
        _rootless_delete_all
        loginctl disable-linger "$RL_USER"
        loginctl terminate-user "$RL_USER"
        systemctl stop "user@$RL_UID.service"
        pkill -KILL -U "$RL_UID"
        userdel -r -f "$RL_USER"
}

rootless_setup() {
        RL_USER=${1:?rootless_setup: NAME missing}
        command -v runuser >/dev/null || bail "runuser is not installed (util-linux)"
        command -v newuidmap >/dev/null || bail "newuidmap is not installed (Debian package uidmap)"
        if ! id -u "$RL_USER" >/dev/null 2>&1; then
                useradd -m -s /bin/sh "$RL_USER" || bail "useradd $RL_USER failed"
        fi
        RL_UID=$(id -u "$RL_USER") RL_GID=$(id -g "$RL_USER")
        RL_HOME=$(getent passwd "$RL_USER" | cut -d: -f6)
        RL_RUNTIME_DIR=/run/user/$RL_UID
        cleanup_add _rootless_teardown
        # Ranges for newuidmap/newgidmap (useradd adds them where login.defs says so; Podman needs them).
        grep -q "^$RL_USER:" /etc/subuid || usermod --add-subuids 400000-465535 "$RL_USER" || bail "usermod --add-subuids failed"
        grep -q "^$RL_USER:" /etc/subgid || usermod --add-subgids 400000-465535 "$RL_USER" || bail "usermod --add-subgids failed"
        RL_SUBUID=$(awk -F: -v u="$RL_USER" '$1 == u { print $2; exit }' /etc/subuid)
        RL_SUBGID=$(awk -F: -v u="$RL_USER" '$1 == u { print $2; exit }' /etc/subgid)
        loginctl enable-linger "$RL_USER" || bail "loginctl enable-linger $RL_USER failed"
        RL_TMP=$RL_HOME # until the private directory exists
        _rl_manager_up() { [ -S "$RL_RUNTIME_DIR/bus" ] && rl systemctl --user show -p Version --value >/dev/null 2>&1; }
        WAIT_FOR_TIMEOUT=30 wait_for _rl_manager_up || bail "user@$RL_UID.service did not come up (no bus at $RL_RUNTIME_DIR/bus)"
        RL_TMP=$(runuser -u "$RL_USER" -- mktemp -d "$RL_HOME/sdrun-test.XXXXXX") || bail "mktemp in $RL_HOME failed"
        cleanup_add rm -rf --one-file-system "$RL_TMP"
        RL_SDRUN=$RL_TMP/sdrun
        cp "$SDRUN" "$RL_SDRUN" && chown "$RL_USER:" "$RL_SDRUN" && chmod 755 "$RL_SDRUN" || bail "cannot copy $SDRUN for the user"
        export RL_USER RL_UID RL_GID RL_HOME RL_RUNTIME_DIR RL_TMP RL_SDRUN RL_SUBUID RL_SUBGID
        # What an interrupted earlier run may have left.
        _rootless_delete_all
        diag "rootless user $RL_USER (uid $RL_UID, subuid $RL_SUBUID), user manager $(rl systemctl --user show -p Version --value), delegated: \"$(rl_delegated)\""
}

# rl_make_bundle DIR [OCI-VERSION]: DIR (the user's) with the busybox rootfs and the config of `sdrun spec
# --rootless` run by the user, detached (no terminal) running `sleep 1000`. OCI-VERSION: for crun 1.8,
# which refuses versions newer than it knows ("1.0.2").
rl_make_bundle() {
        local dir=$1 v=${2:-}
        [ -n "$_rootfs_template" ] || _make_rootfs_template || bail "rl_make_bundle: cannot build the rootfs template"
        rm -rf "$dir"
        mkdir -p "$dir" && cp -a "$_rootfs_template" "$dir/rootfs" && chown -R "$RL_USER:" "$dir" || return 1
        rl "$RL_SDRUN" spec --rootless --bundle "$dir" || return 1
        rl_bundle_set "$dir" '.process.terminal=false | .process.args=["sleep","1000"] | .root.path="rootfs"' || return 1
        [ -z "$v" ] || rl_bundle_set "$dir" '.ociVersion=$v' --arg v "$v"
}

# rl_bundle_set DIR JQ-EXPR [JQ-ARGS...]: bundle_set, keeping the file the user's.
rl_bundle_set() {
        bundle_set "$@" && chown "$RL_USER:" "$1/config.json"
}

# rl_podman_setup RUNTIME: the user's containers.conf and storage.conf (vfs: works on any filesystem, also the
# VM's overlay root) with RUNTIME (sdrun, the user's copy, or crun) as the default, and the busybox image
# (needs lib-podman.sh's _podman_rootfs_tar). Out: up (podman as the user), RL_PODMAN_IMAGE. The user's
# containers and storage are removed on exit.
rl_podman_setup() {
        local rt=$1 pids_line="" tar info out
        RL_PODMAN_CONF=$RL_TMP/conf
        mkdir -p "$RL_PODMAN_CONF" "$RL_TMP/storage" "$RL_TMP/run"
        # Without the pids controller delegated, Podman's default pids limit fails with every runtime.
        [[ " $(rl_delegated) " == *" pids "* ]] || pids_line='pids_limit = 0'
        cat >"$RL_PODMAN_CONF/containers.conf" <<EOF
# Written by tests/integration/lib-rootless.sh
[containers]
log_driver = "k8s-file"
$pids_line

[engine]
runtime = "$rt"
cgroup_manager = "systemd"
events_logger = "file"
runtime_supports_json = ["crun", "runc", "sdrun"]

[engine.runtimes]
sdrun = ["$RL_SDRUN"]
crun = ["/usr/bin/crun"]
EOF
        cat >"$RL_PODMAN_CONF/storage.conf" <<EOF
[storage]
driver = "vfs"
graphroot = "$RL_TMP/storage"
runroot = "$RL_TMP/run"
EOF
        chown -R "$RL_USER:" "$RL_PODMAN_CONF" "$RL_TMP/storage" "$RL_TMP/run"
        cleanup_add _rl_podman_teardown
        tar=$RL_TMP/busybox.tar
        _podman_rootfs_tar "$tar" && chown "$RL_USER:" "$tar" || bail "cannot build the busybox rootfs tarball"
        RL_PODMAN_IMAGE=localhost/sdrun-rootless-busybox:latest
        out=$(up import --change 'CMD ["/bin/sh"]' "$tar" "$RL_PODMAN_IMAGE" 2>&1) ||
                bail "podman import (as $RL_USER) failed: $out"
        rm -f "$tar"
        info=$(up info --format '{{.Host.OCIRuntime.Name}} rootless={{.Host.Security.Rootless}} cgroups={{.Host.CgroupsVersion}} manager={{.Host.CgroupManager}}' 2>&1)
        diag "podman as $RL_USER: $info"
        [ "${info%% *}" = "$rt" ] || bail "podman does not use runtime $rt: $info"
        export RL_PODMAN_CONF RL_PODMAN_IMAGE
}

# up ARGS...: podman as the user with the test's configuration.
up() {
        rl env CONTAINERS_CONF="$RL_PODMAN_CONF/containers.conf" CONTAINERS_STORAGE_CONF="$RL_PODMAN_CONF/storage.conf" \
                podman "$@"
}

_rl_podman_teardown() {
        up rm -a -f -t 0
        up system reset -f
}
