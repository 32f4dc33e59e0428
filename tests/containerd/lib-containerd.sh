# SPDX-License-Identifier: LGPL-2.1-or-later
# shellcheck shell=bash
#
# Helpers for the containerd suite (tests/containerd/test-*.sh): Debian's containerd 1.6 and its runc shim
# (io.containerd.runc.v2) driving an OCI runtime given with --runc-binary, sdrun and runc (the control) side
# by side in the same test. Source it after tests/integration/lib.sh:
#
#     . "$(dirname "$0")/../integration/lib.sh"
#     . "$(dirname "$0")/lib-containerd.sh"
#     require_root; require_systemd; containerd_setup
#     cr sdrun run --rm "$CTR_IMAGE" "$(new_id c)" echo hi
#
# The image: a busybox rootfs imported with Podman (private storage), saved as an OCI archive and imported
# with `ctr image import --base-name` into a containerd namespace private to the test (CTR_NS).
# Out (after containerd_setup): CTR_NS, CTR_IMAGE, CTR_RUNC (runc's binary).

CTR_IMAGE=localhost/sdrun-test-busybox:latest

# runtime_bin NAME: the binary of runtime NAME (sdrun | runc).
runtime_bin() {
        case "$1" in
        sdrun) echo "$SDRUN" ;;
        runc) echo "$CTR_RUNC" ;;
        *) return 1 ;;
        esac
}

# ctrn ARGS...: ctr in the test's namespace.
ctrn() {
        ctr -n "$CTR_NS" "$@"
}

# cr RUNTIME run [OPTIONS] IMAGE ID CMD...: `ctr run` through the runc shim with RUNTIME's binary, the
# systemd cgroup driver and the cgroup system.slice:sdtest:ID (unit sdtest-ID.scope). ID is the argument
# after the image.
cr() {
        local rt=$1 bin verb=$2 a id="" prev=""
        shift 2
        bin=$(runtime_bin "$rt") || return 1
        # the container id: the argument after the image
        for a in "$@"; do
                [ "$prev" = "$CTR_IMAGE" ] && { id=$a; break; }
                prev=$a
        done
        # ctr asks for cpu shares 1024 by default; where no cpu controller is available (the unified box), runc
        # cannot write cpu.weight and fails, so the control could not run: no shares there.
        local shares=()
        [ "$SDRUN_TEST_LAYOUT" = unified ] && ! grep -qw cpu /sys/fs/cgroup/cgroup.controllers 2>/dev/null &&
                shares=(--cpu-shares 0)
        ctrn "$verb" --runc-binary "$bin" --runc-systemd-cgroup --cgroup "system.slice:sdtest:$id" ${shares[@]+"${shares[@]}"} "$@"
}

# task_status ID: RUNNING, PAUSED, STOPPED, ... from `ctr task ls`.
task_status() {
        ctrn task ls 2>/dev/null | awk -v id="$1" '$1 == id { print $3 }'
}
task_pid() {
        ctrn task ls 2>/dev/null | awk -v id="$1" '$1 == id { print $2 }'
}
task_status_is() { [ "$(task_status "$1")" = "$2" ]; }

# ctr_remove ID: whatever is left of container ID in the namespace, gone.
ctr_remove() {
        ctrn task kill -a -s KILL "$1" >/dev/null 2>&1
        ctrn task rm -f "$1" >/dev/null 2>&1
        ctrn container rm "$1" >/dev/null 2>&1
}

_containerd_teardown() {
        local c
        for c in $(ctrn container ls -q 2>/dev/null); do
                ctr_remove "$c"
        done
        ctrn image rm "$CTR_IMAGE" >/dev/null 2>&1
        ctrn content ls -q 2>/dev/null | xargs -r ctr -n "$CTR_NS" content rm >/dev/null 2>&1
        ctr namespace rm "$CTR_NS" >/dev/null 2>&1
}

# make_busybox_tar FILE: a busybox rootfs as a tarball.
make_busybox_tar() {
        local tar=$1 r=$TEST_TMPDIR/.bb-rootfs bb a
        bb=$(command -v busybox) || { diag "busybox is not installed (Debian package busybox-static)"; return 1; }
        if LC_ALL=C ldd "$bb" >/dev/null 2>&1; then
                diag "$bb is dynamically linked: install busybox-static"
                return 1
        fi
        rm -rf "$r"
        mkdir -p "$r"/{bin,sbin,etc,proc,sys,dev,tmp,root,usr/bin,usr/sbin,var/tmp,run} || return 1
        chmod 1777 "$r/tmp" "$r/var/tmp"
        cp "$bb" "$r/bin/busybox" || return 1
        busybox_links "$r/bin" "$bb" || return 1
        printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\n' >"$r/etc/passwd"
        printf 'root:x:0:\nnogroup:x:65534:\n' >"$r/etc/group"
        tar -C "$r" -cf "$tar" . || return 1
        rm -rf "$r"
}

# make_oci_archive NAME OUT [CHANGE...]: `podman import` of the busybox rootfs as NAME (Podman storage
# private to the test), saved as an OCI archive in OUT. CHANGE: Dockerfile instructions for --change.
make_oci_archive() {
        local name=$1 out=$2 tar=$TEST_TMPDIR/busybox-rootfs.tar st=$TEST_TMPDIR/.podman-store c o
        shift 2
        local pm=(podman --root "$st/root" --runroot "$st/run" --storage-driver vfs)
        local chg=(--change 'CMD ["/bin/sh"]')
        for c in "$@"; do chg+=(--change "$c"); done
        [ -f "$tar" ] || make_busybox_tar "$tar" || return 1
        o=$("${pm[@]}" import "${chg[@]}" "$tar" "$name" 2>&1) || { diag "podman import: $o"; return 1; }
        o=$("${pm[@]}" save --format oci-archive -o "$out" "$name" 2>&1) || { diag "podman save: $o"; return 1; }
        "${pm[@]}" rmi -a -f >/dev/null 2>&1
        rm -rf "$st" 2>/dev/null
        return 0
}

# containerd_setup: containerd running (the distribution's service and configuration), the busybox image in
# a private namespace; bails out when any of it fails.
containerd_setup() {
        local o
        command -v containerd >/dev/null || bail "containerd is not installed (Debian package containerd)"
        command -v ctr >/dev/null || bail "ctr is not installed (Debian package containerd)"
        command -v podman >/dev/null || bail "podman is not installed (it builds the test image)"
        CTR_RUNC=$(command -v runc) || bail "runc is not installed (the control runtime)"
        o=$(systemctl start containerd.service 2>&1) || bail "systemctl start containerd: $o"
        wait_until 20 ctr version || bail "containerd does not answer on its socket"
        CTR_NS=sdrun-test-$$
        cleanup_add _containerd_teardown
        make_oci_archive "$CTR_IMAGE" "$TEST_TMPDIR/busybox.oci.tar" || bail "cannot make the busybox OCI archive"
        o=$(ctrn image import --base-name "${CTR_IMAGE%:*}" "$TEST_TMPDIR/busybox.oci.tar" 2>&1) ||
                bail "ctr image import: $o"
        ctrn image ls -q | grep -qxF "$CTR_IMAGE" || bail "ctr image import imported nothing named $CTR_IMAGE: $o"
        diag "containerd $(ctr version 2>/dev/null | awk '/Server:/ { s = 1 } s && /Version:/ { print $2; exit }'), namespace $CTR_NS, runc $CTR_RUNC"
        export CTR_NS CTR_IMAGE CTR_RUNC
}

# wait_until SECONDS CMD...: poll CMD (every 0.1 s) until it succeeds or SECONDS have passed (wall clock:
# ctr itself may take a while to answer on a loaded machine).
wait_until() {
        local end=$((SECONDS + $1))
        shift
        while [ $SECONDS -lt $end ]; do
                "$@" >/dev/null 2>&1 && return 0
                sleep 0.1
        done
        "$@" >/dev/null 2>&1
}

# median N...: the median of the numbers.
median() {
        printf '%s\n' "$@" | sort -g | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'
}

# now: seconds since the epoch, with nanoseconds.
now() {
        date +%s.%N
}

# elapsed T0: seconds since T0 (3 decimals).
elapsed() {
        awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.3f", b - a }'
}

# not_slower DESC SDRUN_SECONDS RUNC_SECONDS: one test: sdrun takes at most 1.5x runc's time plus 0.3 s.
not_slower() {
        if awk -v s="$2" -v r="$3" 'BEGIN { exit !(s <= 1.5 * r + 0.3) }'; then
                _tap_result 0 "$1 (sdrun ${2}s, runc ${3}s)"
        else
                _tap_result 1 "$1 (sdrun ${2}s, runc ${3}s)"
                diag "sdrun takes more than 1.5x runc's time + 0.3 s"
                return 1
        fi
}

# --- CRI: a private containerd driven through its CRI socket (tests/containerd/test-containerd-cri*.sh) ----------

# cri_setup [EXTRA-TOML]: a containerd private to the test (own config, root, state and socket, in a transient
# unit): the distribution's /etc/containerd/config.toml plus two keys of the runc runtime's options
# (BinaryName = sdrun, SystemdCgroup = true) and a second handler "runc-control" with the real runc, the control.
# EXTRA-TOML is appended too. The busybox image and the sandbox ("pause") image are imported. Bails out when
# any of it fails.
# Out: D (its directory), SOCK, UNIT, RROOT (the shim's --root in the k8s.io namespace), IDS (a file: every pod
# and container id the test makes goes there, for the teardown), CTR_RUNC, CLIENT, PAUSE.
cri_setup() {
        local extra=${1:-} restrict_oom="" capeff o
        command -v containerd >/dev/null || bail "containerd is not installed (Debian package containerd)"
        command -v protoc >/dev/null || bail "protoc is not installed (Debian package protobuf-compiler)"
        python3 -c 'import grpc, google.protobuf' 2>/dev/null || bail "python3-grpcio / python3-protobuf are not installed"
        # CRI_RUNC_BIN: runc's binary at another path (a copy the test may see damaged)
        CTR_RUNC=${CRI_RUNC_BIN:-$(command -v runc)} || bail "runc is not installed (the control runtime)"
        [ -r /etc/containerd/config.toml ] || bail "no /etc/containerd/config.toml (Debian's containerd ships one)"
        CLIENT=$(dirname "${BASH_SOURCE[0]}")/cri-client.py
        D=$TEST_TMPDIR/containerd
        mkdir -p "$D/root" "$D/state" "$D/logs"
        SOCK=$D/containerd.sock
        # Without CAP_SYS_RESOURCE (these VMs), no runtime can lower oom_score_adj below containerd's own, as the
        # CRI plugin does for the sandbox (-998): the CRI plugin's own switch for that case keeps it at containerd's.
        capeff=$(sed -n 's/^CapEff:[[:space:]]*//p' /proc/self/status)
        if (( (16#$capeff >> 24 & 1) == 0 )); then
                restrict_oom='    restrict_oom_score_adj = true  # added by the test: no CAP_SYS_RESOURCE here'
                diag "no CAP_SYS_RESOURCE: restrict_oom_score_adj = true"
        fi
        {
                awk -v add="$restrict_oom" '{ print } add != "" && $0 ~ /^ *\[plugins\."io\.containerd\.grpc\.v1\.cri"\] *$/ { print add }' \
                        /etc/containerd/config.toml
                cat <<EOT

# Added by tests/containerd/lib-containerd.sh: sdrun as the runc runtime's binary, with the systemd cgroup
# driver (what a Kubernetes node with the systemd cgroup driver configures), and runc as a second handler for
# the control.
[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
  runtime_type = "io.containerd.runc.v2"
[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
  BinaryName = "$SDRUN"
  SystemdCgroup = true
[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc-control]
  runtime_type = "io.containerd.runc.v2"
[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc-control.options]
  BinaryName = "$CTR_RUNC"
  SystemdCgroup = true
$extra
EOT
        } >"$D/config.toml"
        UNIT=sdrun-test-containerd-$$.service
        o=$(systemd-run --unit "$UNIT" --collect -p Delegate=yes -p Type=notify \
                containerd --config "$D/config.toml" --root "$D/root" --state "$D/state" --address "$SOCK" 2>&1) ||
                bail "cannot start a private containerd: $o"
        RROOT=/run/containerd/runc/k8s.io
        IDS=$D/ids
        cleanup_add _cri_teardown
        wait_until 30 ctr --address "$SOCK" -n k8s.io version ||
                bail "the private containerd does not answer: $(journalctl -u "$UNIT" --no-pager | tail -n 5)"

        cri Version '{"version": "v1"}'
        is "$RC|$(jf .runtime_name)|$(jf .runtime_api_version)" "0|containerd|v1" "CRI Version over $SOCK: containerd, API v1" || diag "$R"
        diag "CRI: $(jf .runtime_name) $(jf .runtime_version)"

        # The images: the busybox image for the containers, and the sandbox ("pause") image, which containerd
        # would otherwise pull from registry.k8s.io: the same rootfs with a command that runs until killed.
        PAUSE=$(containerd config default 2>/dev/null | sed -n 's/^ *sandbox_image = "\(.*\)"/\1/p')
        [ -n "$PAUSE" ] || bail "cannot read containerd's default sandbox_image"
        make_oci_archive "$CTR_IMAGE" "$TEST_TMPDIR/bb.tar" || bail "cannot make the busybox image"
        make_oci_archive "$PAUSE" "$TEST_TMPDIR/pause.tar" 'CMD ["/bin/sleep", "2000000000"]' || bail "cannot make the pause image"
        o=$(crin image import --base-name "${CTR_IMAGE%:*}" "$TEST_TMPDIR/bb.tar" 2>&1) || bail "ctr image import: $o"
        o=$(crin image import --base-name "${PAUSE%:*}" "$TEST_TMPDIR/pause.tar" 2>&1) || bail "ctr image import (pause): $o"
        cri ImageStatus "{\"image\": {\"image\": \"$CTR_IMAGE\"}}"
        like "$(jf '.image.repo_tags[]?')" "$CTR_IMAGE" "CRI ImageStatus finds $CTR_IMAGE" || diag "$R"
}

# crin ARGS...: ctr on the private containerd, in the CRI's namespace.
crin() { ctr --address "$SOCK" -n k8s.io "$@"; }

# _cri_teardown: what the test left (a failed or interrupted run): pods removed through the CRI, containerd
# stopped, then each container deleted by the runtime itself (its scope is not in containerd's unit), and the
# mounts below the private state unmounted.
_cri_teardown() {
        local id m
        [ -s "$IDS" ] && for id in $(cat "$IDS"); do
                CRI_CLIENT_TIMEOUT=20 python3 "$CLIENT" "$SOCK" RemovePodSandbox "{\"pod_sandbox_id\": \"$id\"}"
        done
        systemctl stop "$UNIT"
        [ -s "$IDS" ] && for id in $(cat "$IDS"); do
                "$SDRUN" --root "$RROOT" delete --force "$id"
                "$CTR_RUNC" --root "$RROOT" delete --force "$id"
        done
        grep -F " $D/" /proc/self/mountinfo | awk '{ print $5 }' | sort -r | while read -r m; do umount -l "$m"; done
}

# cri_handlers: the CRI runtime handlers a pod test runs, in $handlers: sdrun's ("runc", the shim with sdrun
# as its BinaryName) and runc's as the control. The control needs a cpu controller: the CRI plugin always
# gives the sandbox cpu shares (2), which runc writes to cpu.weight and fails without one (the unified box);
# systemd, and so sdrun, leaves CPUWeight= unapplied. $no_cpu is 1 when the control is left out for that.
cri_handlers() {
        handlers=(runc runc-control) no_cpu=0
        if [ "$SDRUN_TEST_LAYOUT" = unified ] && ! grep -qw cpu /sys/fs/cgroup/cgroup.controllers 2>/dev/null; then
                handlers=(runc) no_cpu=1
        fi
}

# cri_pod_config NAME UID PIDMODE: a PodSandboxConfig as the kubelet writes one for a best-effort pod with the
# node's network (hostNetwork: no CNI plugin is installed here), systemd cgroup driver; PIDMODE is the pod's
# pid namespace mode: CONTAINER, or POD for shareProcessNamespace: true.
cri_pod_config() {
        local name=$1 uid=$2 pidmode=$3
        cat <<EOJ
{"metadata": {"name": "$name", "uid": "$uid", "namespace": "sdrun-test", "attempt": 0},
 "log_directory": "$D/logs/$name",
 "labels": {"io.kubernetes.pod.name": "$name"},
 "linux": {"cgroup_parent": "kubepods-besteffort-pod${uid//-/_}.slice",
           "security_context": {"namespace_options": {"network": "NODE", "pid": "$pidmode", "ipc": "POD"}}}}
EOJ
}

# cri_pod_begin HANDLER [PIDMODE]: a new pod of HANDLER, its config cri_pod_config's with PIDMODE, or without
# one pod_config's, the test's own (pod_config NAME UID): sets rt (sdrun, or runc for the control), uid, name
# and pcfg, and makes the pod's log directory.
cri_pod_begin() {
        rt=sdrun
        [ "$1" = runc-control ] && rt=runc
        diag "=== handler $1 ($rt)"
        uid=$(cat /proc/sys/kernel/random/uuid)
        name=pod-$rt-$$
        if [ $# -ge 2 ]; then
                pcfg=$(cri_pod_config "$name" "$uid" "$2")
        else
                pcfg=$(pod_config "$name" "$uid")
        fi
        mkdir -p "$D/logs/$name"
}

# cri METHOD [JSON]: one CRI call; its JSON answer in $R, its exit status in $RC.
cri() {
        RC=0
        R=$(python3 "$CLIENT" "$SOCK" "$@" 2>&1) || RC=$?
}
# jf EXPR: a field of $R (jq expression).
jf() { jq -r "$1" <<<"$R" 2>/dev/null; }
