# SPDX-License-Identifier: LGPL-2.1-or-later
# shellcheck shell=bash
#
# Helpers for the docker suite (tests/docker/test-*.sh): Debian's docker.io (20.10, with containerd 1.6 and
# its runc shim) driving an OCI runtime chosen by $DOCKER_TEST_RUNTIME (sdrun, the default; runc, Docker's
# own default, as the control). Source it after tests/integration/lib.sh:
#
#     . "$(dirname "$0")/../integration/lib.sh"
#     . "$(dirname "$0")/lib-docker.sh"
#     require_root; require_systemd; docker_setup
#     drun sh -c 'echo hi'
#
# Environment in: DOCKER_TEST_RUNTIME (sdrun | runc | control = runc), DOCKER_TEST_DRIVER (systemd, the
# default, or cgroupfs: Docker's own default cgroup driver), DOCKER_TEST_DEFAULT=1 (sdrun registered as
# Docker's default runtime: containers are run without --runtime), DOCKER_TEST_NETWORK (none, the default:
# "bridge": "none" and "iptables": false, containers run with --network none; or bridge: Docker's default
# docker0 bridge with its iptables rules, for a machine with its own network namespace: the VM tier).
#
# The daemon: docker.service of the booted systemd, configured through /etc/docker/daemon.json (empty on
# Debian; the original is kept as daemon.json.sdrun-orig). docker_setup restarts the daemon only when the
# wanted configuration differs from the running one, so the tests of one configuration share one daemon and
# one image. Storage driver vfs (it works on any filesystem, the box's tmpfs root included);
# "bridge": "none" and "iptables": false because the boxes share the host's network namespace (a docker0
# bridge and NAT rules there would be the host's, shared by every box): containers run with --network none.
# /usr/local/bin/docker may be an unrelated client: always /usr/bin/docker.

DOCKER=/usr/bin/docker
: "${DOCKER_TEST_RUNTIME:=sdrun}"
: "${DOCKER_TEST_DRIVER:=systemd}"
# In CI the two docker lanes share the control runs (ci_lane): runc with the cgroupfs driver in the hybrid
# lane, with the systemd driver in the unified one; sdrun's runs in both.
if [ "$DOCKER_TEST_RUNTIME" = control ]; then
        case "$DOCKER_TEST_DRIVER" in cgroupfs) ci_lane hybrid "a control run" ;; *) ci_lane unified "a control run" ;; esac
        DOCKER_TEST_RUNTIME=runc
fi
: "${DOCKER_TEST_DEFAULT:=0}"
: "${DOCKER_TEST_NETWORK:=none}"
export DOCKER_TEST_RUNTIME DOCKER_TEST_DRIVER DOCKER_TEST_DEFAULT DOCKER_TEST_NETWORK
DOCKER_IMAGE=sdrun-test-busybox:latest
# Options that choose the runtime for docker run/create.
DOCKER_RT_OPTS=(--runtime "$DOCKER_TEST_RUNTIME")
[ "$DOCKER_TEST_DEFAULT" = 1 ] && DOCKER_RT_OPTS=()

dk() {
        "$DOCKER" "$@"
}

# drun ARGS...: docker run --rm with the runtime under test and no network.
drun() {
        "$DOCKER" run --rm ${DOCKER_RT_OPTS[@]+"${DOCKER_RT_OPTS[@]}"} --network none "$@"
}

# drund ARGS...: docker run -d (prints the id); the container is removed on exit.
drund() {
        local id
        id=$("$DOCKER" run -d ${DOCKER_RT_OPTS[@]+"${DOCKER_RT_OPTS[@]}"} --network none "$@") || return 1
        cleanup_add "$DOCKER" rm -f "$id"
        echo "$id"
}

_docker_daemon_json() {
        jq -n --arg sdrun "$SDRUN" --arg driver "$DOCKER_TEST_DRIVER" --argjson dflt "$DOCKER_TEST_DEFAULT" \
                --arg net "$DOCKER_TEST_NETWORK" '
                {runtimes: {sdrun: {path: $sdrun}}, "exec-opts": ["native.cgroupdriver=" + $driver],
                 "storage-driver": "vfs"}
                + (if $net == "none" then {iptables: false, bridge: "none"} else {} end)
                + (if $dflt == 1 then {"default-runtime": "sdrun"} else {} end)'
}

docker_setup() {
        local want cur i
        [ -x "$DOCKER" ] || bail "$DOCKER is missing (Debian package docker.io)"
        command -v containerd >/dev/null || bail "containerd is missing (Debian package containerd)"
        case "$DOCKER_TEST_RUNTIME" in sdrun | runc) ;; *) bail "DOCKER_TEST_RUNTIME=$DOCKER_TEST_RUNTIME: sdrun, runc or control" ;; esac
        case "$DOCKER_TEST_NETWORK" in none | bridge) ;; *) bail "DOCKER_TEST_NETWORK=$DOCKER_TEST_NETWORK: none or bridge" ;; esac
        [ "$DOCKER_TEST_RUNTIME" = runc ] && { command -v runc >/dev/null || bail "runc is missing (Debian package runc)"; }
        want=$(_docker_daemon_json) || bail "cannot build daemon.json"
        cur=$(jq -S . /etc/docker/daemon.json 2>/dev/null)
        if [ "$cur" != "$(jq -S . <<<"$want")" ] || ! systemctl -q is-active docker.service; then
                mkdir -p /etc/docker
                if [ -e /etc/docker/daemon.json ] && [ ! -e /etc/docker/daemon.json.sdrun-orig ]; then
                        cp -a /etc/docker/daemon.json /etc/docker/daemon.json.sdrun-orig
                fi
                printf '%s\n' "$want" >/etc/docker/daemon.json
                # docker.socket needs the docker group (SocketGroup=docker): it fails without it.
                if ! getent group docker >/dev/null; then
                        groupadd -f docker || bail "groupadd docker failed"
                        systemctl daemon-reload
                fi
                systemctl reset-failed docker.socket docker.service >/dev/null 2>&1
                diag "docker: (re)starting the daemon: $(jq -c . <<<"$want")"
                systemctl restart docker.socket docker.service ||
                        bail "docker.service does not start: $(journalctl -u docker.service -n 20 --no-pager 2>&1 | tail -n 5)"
        fi
        for ((i = 0; i < 100; i++)); do
                "$DOCKER" info >/dev/null 2>&1 && break
                sleep 0.1
        done
        [ "$("$DOCKER" info --format '{{.CgroupDriver}}' 2>/dev/null)" = "$DOCKER_TEST_DRIVER" ] ||
                bail "docker info does not show the $DOCKER_TEST_DRIVER cgroup driver"
        "$DOCKER" info --format '{{json .Runtimes}}' | jq -e .sdrun >/dev/null ||
                bail "docker info does not list the sdrun runtime"
        if ! "$DOCKER" image inspect "$DOCKER_IMAGE" >/dev/null 2>&1; then
                [ -n "$_rootfs_template" ] || _make_rootfs_template || bail "cannot build the rootfs"
                tar -C "$_rootfs_template" -c . | "$DOCKER" import - "$DOCKER_IMAGE" >/dev/null ||
                        bail "docker import of the busybox rootfs failed"
        fi
        diag "docker $("$DOCKER" version --format '{{.Server.Version}}'), runtime $DOCKER_TEST_RUNTIME${DOCKER_RT_OPTS[*]:+ (${DOCKER_RT_OPTS[*]})}, cgroup driver $DOCKER_TEST_DRIVER"
}

# The runtime Docker actually used for a container.
docker_runtime_of() {
        "$DOCKER" inspect -f '{{.HostConfig.Runtime}}' "$1"
}

# docker_cgroup_want ID: what the container's init's /proc/PID/cgroup must end in: a docker-<id>.scope for
# sdrun with either driver and for runc with the systemd driver; /docker/<id> for runc with cgroupfs.
docker_cgroup_want() {
        if [ "$DOCKER_TEST_DRIVER" = cgroupfs ] && [ "$DOCKER_TEST_RUNTIME" = runc ]; then
                echo "/docker/$1"
        elif [ "$DOCKER_TEST_DRIVER" = cgroupfs ]; then
                echo "/machine.slice/docker-$1.scope"
        else
                echo "/system.slice/docker-$1.scope"
        fi
}

# docker_scope_ok ID: the container's init is in the expected cgroup (and, where one is expected, the
# scope docker-<id>.scope is an active unit).
docker_scope_ok() {
        local id=$1 pid want
        pid=$("$DOCKER" inspect -f '{{.State.Pid}}' "$id") || return 1
        want=$(docker_cgroup_want "$id")
        grep -E "^[0-9]+:(name=systemd|):$want\$" "/proc/$pid/cgroup" || { cat "/proc/$pid/cgroup"; return 1; }
        case "$want" in
        *.scope) [ "$(systemctl show -p ActiveState --value -- "docker-$id.scope")" = active ] ;;
        esac
}

# docker_cgroup_file ID FILE: FILE of the container's cgroup on the v1 controller it belongs to (hybrid).
docker_cgroup_file() {
        local id=$1 file=$2 pid ctl path
        pid=$("$DOCKER" inspect -f '{{.State.Pid}}' "$id") || return 1
        ctl=${file%%.*}
        # The hierarchy's line (e.g. "4:cpu,cpuacct:/path"): its controller list names the mount directory.
        path=$(awk -F: -v c="$ctl" '{ n = split($2, a, ","); for (i = 1; i <= n; i++) if (a[i] == c) { print $2 "/" $3; exit } }' "/proc/$pid/cgroup")
        [ -n "$path" ] || return 1
        cat "/sys/fs/cgroup/$path/$file"
}

# docker_gone ID: nothing of the container is left: no unit, no process in a cgroup naming it, no runtime
# state, no mount.
docker_gone() {
        local id=$1 bad=() f
        systemctl list-units --all --plain --no-legend -- "docker-$id.scope" | grep -q . && bad+=("unit docker-$id.scope loaded")
        # One grep over every process (not one each: slow under the VM tier's emulation).
        for f in $(grep -lF -- "$id" /proc/[0-9]*/cgroup 2>/dev/null); do
                bad+=("process ${f//[!0-9]/} in its cgroup")
        done
        ls -d /run/docker/runtime-*/moby/"$id" 2>/dev/null | grep -q . && bad+=("runtime state left")
        grep -qF -- "$id" /proc/self/mountinfo && bad+=("mounts left")
        [ ${#bad[@]} = 0 ] || { printf '%s\n' "${bad[@]}"; return 1; }
}
