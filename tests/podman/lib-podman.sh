# SPDX-License-Identifier: LGPL-2.1-or-later
# shellcheck shell=bash
#
# Helpers for the podman suite (tests/podman/test-*.sh): Podman and conmon from Debian driving an OCI
# runtime chosen by $PODMAN_TEST_RUNTIME (sdrun, the default; crun or runc as the control), with storage,
# configuration and state private to the test. Source it after tests/integration/lib.sh:
#
#     . "$(dirname "$0")/../integration/lib.sh"
#     . "$(dirname "$0")/lib-podman.sh"
#     require_root; require_systemd; podman_setup
#     pm run --rm "$PODMAN_IMAGE" echo hi
#
# Environment in: PODMAN_TEST_RUNTIME (sdrun | crun | runc | control: crun, or runc in the unified layout, or
# $PODMAN_TEST_CONTROL), SDRUN (the sdrun binary), SDRUN_TEST_LAYOUT, PODMAN_RUNTIME_BIN (optional: the
# runtime's binary at another path, e.g. a copy the test may see damaged; the drop-in names it).
# Out (after podman_setup): PODMAN_RUNTIME_PATH, PODMAN_IMAGE, PODMAN_CONF_DIR and CONTAINERS_STORAGE_CONF
# (exported: a plain `podman` in the test sees the test's storage). Podman's configuration is the
# distribution's, plus a drop-in naming the runtime (podman_write_conf).

: "${PODMAN_TEST_RUNTIME:=sdrun}"
# "control": the runtime that proves the test right in this layout: crun, except where crun cannot run (the
# unified box lacks CAP_SYS_RESOURCE, which crun needs to raise RLIMIT_MEMLOCK): runc there.
if [ "$PODMAN_TEST_RUNTIME" = control ]; then
        # In CI the two podman lanes share the control runs (sdrun's run in both): each script's control runs
        # in one lane, so that every CI run still proves each test once (ci_lane).
        case "$(basename "$0")" in
        test-podman-run.sh | test-podman-lifecycle.sh | test-podman-notify.sh) ci_lane hybrid "a control run" ;;
        *) ci_lane unified "a control run" ;;
        esac
        if [ -n "${PODMAN_TEST_CONTROL:-}" ]; then
                PODMAN_TEST_RUNTIME=$PODMAN_TEST_CONTROL
        elif [ "$SDRUN_TEST_LAYOUT" = unified ]; then
                PODMAN_TEST_RUNTIME=runc
        else
                PODMAN_TEST_RUNTIME=crun
        fi
fi
export PODMAN_TEST_RUNTIME
PODMAN_IMAGE=localhost/sdrun-test-busybox:latest

# The runtime's binary.
podman_runtime_path() {
        [ -n "${PODMAN_RUNTIME_BIN:-}" ] && { echo "$PODMAN_RUNTIME_BIN"; return 0; }
        case "$PODMAN_TEST_RUNTIME" in
        sdrun) echo "$SDRUN" ;;
        crun | runc) command -v "$PODMAN_TEST_RUNTIME" ;;
        *) return 1 ;;
        esac
}

# A directory on which the overlay storage driver works: tmpfs or a real disk, never an overlay (the VM's
# root) or 9p.
_podman_storage_base() {
        local d
        for d in /var/lib/containers "$TEST_TMPDIR"; do
                mkdir -p "$d" 2>/dev/null || continue
                case "$(stat -fc %T "$d" 2>/dev/null)" in
                tmpfs | ext2/ext3 | xfs | btrfs)
                        echo "$d"
                        return 0 ;;
                esac
        done
        return 1
}

# The drop-in that adds the runtimes and chooses the one under test. Podman reads the distribution's
# /usr/share/containers/containers.conf (Debian's defaults: default_sysctls, default_capabilities, ...), then
# /etc/containers/containers.conf, then the drop-ins in /etc/containers/containers.conf.d/: the tests change
# nothing of the distribution's defaults but what this drop-in says.
PODMAN_DROPIN_DIR=/etc/containers/containers.conf.d
PODMAN_DROPIN=$PODMAN_DROPIN_DIR/zz-sdrun-test.conf

# podman_write_dropin [TOML]: the drop-in (see above), TOML (other sections) first; removed on exit. (The
# suite's scripts run one at a time; a drop-in left by a killed run is overwritten.)
podman_write_dropin() {
        local bins="sdrun = [\"$SDRUN\"]"
        if [ -n "${PODMAN_RUNTIME_BIN:-}" ]; then
                [ "$PODMAN_TEST_RUNTIME" = sdrun ] && bins=""
                bins+=$'\n'"$PODMAN_TEST_RUNTIME = [\"$PODMAN_RUNTIME_BIN\"]"
        fi
        mkdir -p "$PODMAN_DROPIN_DIR" || return 1
        cleanup_add rm -f "$PODMAN_DROPIN"
        cat >"$PODMAN_DROPIN" <<EOF
# Written by tests/podman for one test run (removed afterwards).
${1:-}
[engine]
runtime = "$PODMAN_TEST_RUNTIME"
runtime_supports_json = ["crun", "runc", "kata", "runsc", "youki", "krun", "sdrun"]

[engine.runtimes]
$bins
EOF
}

# podman_write_conf DIR: the containers.conf drop-in (see above) and a storage.conf for this test in DIR (the
# storage stays private to the test: it lives on a tmpfs or a disk and is removed afterwards).
podman_write_conf() {
        local dir=$1 base pids_section=""
        base=$(_podman_storage_base) || { diag "no tmpfs or disk directory for Podman's storage"; return 1; }
        base=$(mktemp -d "$base/sdrun-podman.XXXXXX") || return 1
        cleanup_add rm -rf --one-file-system "$base"
        PODMAN_STORAGE_DIR=$base
        # With no pids controller (the unified box), Podman's default pids limit fails with every runtime.
        if [ "$(stat -fc %T /sys/fs/cgroup)" = cgroup2fs ] && ! grep -qw pids /sys/fs/cgroup/cgroup.controllers; then
                pids_section=$'[containers]\n# no pids controller in this cgroup v2 hierarchy: no default pids limit\npids_limit = 0\n'
        fi
        mkdir -p "$dir" "$base/storage" "$base/run" || return 1
        podman_write_dropin "$pids_section" || return 1
        cat >"$dir/storage.conf" <<EOF
[storage]
driver = "overlay"
graphroot = "$base/storage"
runroot = "$base/run"
EOF
}

# _podman_rootfs_tar FILE: a busybox rootfs as a tarball.
_podman_rootfs_tar() {
        local tar=$1 r=$TEST_TMPDIR/.podman-rootfs bb a
        bb=$(command -v busybox) || { diag "busybox is not installed (Debian package busybox-static)"; return 1; }
        if LC_ALL=C ldd "$bb" >/dev/null 2>&1; then
                diag "$bb is dynamically linked: install busybox-static"
                return 1
        fi
        rm -rf "$r"
        mkdir -p "$r"/{bin,sbin,etc,proc,sys,dev,tmp,root,home/user,usr/bin,usr/sbin,var/tmp,run} || return 1
        chmod 1777 "$r/tmp" "$r/var/tmp"
        chmod 700 "$r/root"
        chown 1000:1000 "$r/home/user"
        cp "$bb" "$r/bin/busybox" || return 1
        busybox_links "$r/bin" "$bb" || return 1
        # A file that exists but may not be executed, for the "permission denied" case.
        printf '#!/bin/sh\necho never\n' >"$r/bin/not-executable"
        chmod 0644 "$r/bin/not-executable"
        cat >"$r/etc/passwd" <<'EOF'
root:x:0:0:root:/root:/bin/sh
user:x:1000:1000:user:/home/user:/bin/sh
nobody:x:65534:65534:nobody:/nonexistent:/bin/false
EOF
        cat >"$r/etc/group" <<'EOF'
root:x:0:
user:x:1000:
nogroup:x:65534:
EOF
        tar -C "$r" -cf "$tar" . || return 1
        rm -rf "$r"
}

# podman_setup: configuration, storage and the busybox image; bails out when any of it fails.
podman_setup() {
        command -v podman >/dev/null || bail "podman is not installed"
        command -v conmon >/dev/null || [ -x /usr/libexec/podman/conmon ] || bail "conmon is not installed"
        PODMAN_RUNTIME_PATH=$(podman_runtime_path) || bail "PODMAN_TEST_RUNTIME=$PODMAN_TEST_RUNTIME: not sdrun, crun or runc"
        [ -x "$PODMAN_RUNTIME_PATH" ] || bail "runtime $PODMAN_TEST_RUNTIME: $PODMAN_RUNTIME_PATH is not executable"
        PODMAN_CONF_DIR=$TEST_TMPDIR/podman-conf
        podman_write_conf "$PODMAN_CONF_DIR" || bail "cannot write containers.conf/storage.conf"
        unset CONTAINERS_CONF
        export CONTAINERS_STORAGE_CONF=$PODMAN_CONF_DIR/storage.conf
        export PODMAN_RUNTIME_PATH PODMAN_IMAGE PODMAN_CONF_DIR
        # Stop and remove whatever the test leaves (containers, their scopes), then the storage's mounts.
        cleanup_add _podman_teardown
        local tar=$TEST_TMPDIR/busybox-rootfs.tar out
        _podman_rootfs_tar "$tar" || bail "cannot build the busybox rootfs tarball"
        out=$(podman import --change 'CMD ["/bin/sh"]' "$tar" "$PODMAN_IMAGE" 2>&1) ||
                bail "podman import failed: $out"
        rm -f "$tar"
        local rt
        rt=$(podman info --format '{{.Host.OCIRuntime.Name}} {{.Host.OCIRuntime.Path}}' 2>&1)
        diag "podman $(podman version --format '{{.Client.Version}}' 2>/dev/null), runtime: $rt, storage: $PODMAN_STORAGE_DIR"
        [ "${rt%% *}" = "$PODMAN_TEST_RUNTIME" ] || bail "podman does not use runtime $PODMAN_TEST_RUNTIME: $rt"
}

_podman_teardown() {
        podman rm -a -f -t 0 >/dev/null 2>&1
        podman system reset -f >/dev/null 2>&1
        # Anything the storage still has mounted.
        local m
        if [ -n "${PODMAN_STORAGE_DIR:-}" ]; then
                grep -F " $PODMAN_STORAGE_DIR" /proc/self/mountinfo | awk '{print $5}' | sort -r |
                        while read -r m; do umount -l "$m"; done
        fi
}

# pm ARGS...: podman with the test's configuration.
pm() {
        podman "$@"
}

# pm_out VAR ARGS...: run podman, its stdout in VAR, its status in PM_RC, its stderr in PM_ERR.
pm_out() {
        local __var=$1 __o __e=$TEST_TMPDIR/.pm-err
        shift
        PM_RC=0
        __o=$(podman "$@" 2>"$__e" </dev/null) || PM_RC=$?
        PM_ERR=$(cat "$__e")
        rm -f "$__e"
        printf -v "$__var" '%s' "$__o"
}

# Container facts.
pm_id() { podman inspect --format '{{.Id}}' "$1"; }
pm_pid() { podman inspect --format '{{.State.Pid}}' "$1"; }
pm_status() { podman inspect --format '{{.State.Status}}' "$1"; }
pm_scope() { echo "libpod-$(pm_id "$1").scope"; }

# pm_wait_status NAME STATUS: until podman inspect reports STATUS (10 s).
pm_wait_status() {
        _pm_status_is() { [ "$(pm_status "$1")" = "$2" ]; }
        wait_for _pm_status_is "$1" "$2"
}

# scope_active UNIT: the unit is loaded and active (running).
scope_active() {
        [ "$(systemctl show -p ActiveState --value -- "$1" 2>/dev/null)" = active ]
}

# scope_gone UNIT: no such unit is loaded any more.
scope_gone() {
        [ -z "$(systemctl list-units --all --plain --no-legend --no-pager -- "$1" 2>/dev/null)" ]
}

# scope_holds UNIT PID: PID is in the unit's cgroup or in a cgroup below it (crun makes one), and listed in
# that cgroup's cgroup.procs.
scope_holds() {
        local d p
        d=$(cgroup_dir "$1") || return 1
        for p in "$d/cgroup.procs" "$d"/*/cgroup.procs; do
                [ -f "$p" ] && grep -qx "$2" "$p" && return 0
        done
        return 1
}

# The resource cases need controllers: the hybrid box (v1 controllers) or a real cgroup v2 hierarchy with
# memory and pids.
have_resource_control() {
        case "$SDRUN_TEST_LAYOUT" in
        hybrid) [ -d /sys/fs/cgroup/memory ] && [ -d /sys/fs/cgroup/pids ] ;;
        *) grep -qw memory /sys/fs/cgroup/cgroup.controllers 2>/dev/null &&
                grep -qw pids /sys/fs/cgroup/cgroup.controllers 2>/dev/null ;;
        esac
}

# pm_is DESC EXPECTED_STDOUT EXPECTED_STATUS PODMAN-ARGS...: one test: podman's stdout and exit status.
pm_is() {
        local desc=$1 want=$2 want_rc=$3 got
        shift 3
        pm_out got "$@"
        if [ "$got" = "$want" ] && [ "$PM_RC" = "$want_rc" ]; then
                _tap_result 0 "$desc"
        else
                _tap_result 1 "$desc"
                {
                        echo "command: podman $*"
                        echo "stdout: '$got' (expected '$want')"
                        echo "exit status: $PM_RC (expected $want_rc)"
                        echo "stderr: $PM_ERR"
                } | _tap_diag_stream
                return 1
        fi
}

# pm_like DESC REGEX EXPECTED_STATUS PODMAN-ARGS...: like pm_is, stdout matched against REGEX.
pm_like() {
        local desc=$1 re=$2 want_rc=$3 got
        shift 3
        pm_out got "$@"
        if [[ "$got" =~ $re ]] && [ "$PM_RC" = "$want_rc" ]; then
                _tap_result 0 "$desc"
        else
                _tap_result 1 "$desc"
                {
                        echo "command: podman $*"
                        echo "stdout: '$got' (expected to match /$re/)"
                        echo "exit status: $PM_RC (expected $want_rc)"
                        echo "stderr: $PM_ERR"
                } | _tap_diag_stream
                return 1
        fi
}

# proc_cgroup_dir PID CONTROLLER: the cgroupfs directory of PID in the v1 hierarchy of CONTROLLER, or with
# CONTROLLER "" its directory on the unified hierarchy (/sys/fs/cgroup, or /sys/fs/cgroup/unified in the
# hybrid layout).
proc_cgroup_dir() {
        local pid=$1 c=$2 p
        if [ -z "$c" ]; then
                p=$(sed -n 's/^0:://p' "/proc/$pid/cgroup") || return 1
                [ -n "$p" ] || return 1
                if [ "$(stat -fc %T /sys/fs/cgroup)" = cgroup2fs ]; then
                        echo "/sys/fs/cgroup$p"
                else
                        echo "/sys/fs/cgroup/unified$p"
                fi
                return 0
        fi
        p=$(awk -F: -v c="$c" '{ n = split($2, a, ","); for (i = 1; i <= n; i++) if (a[i] == c) print $3 }' "/proc/$pid/cgroup")
        [ -n "$p" ] && [ -d "/sys/fs/cgroup/$c$p" ] || return 1
        echo "/sys/fs/cgroup/$c$p"
}
