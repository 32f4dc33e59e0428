#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Suite "containerd": containerd's CRI plugin, what every Kubernetes node drives, with sdrun as the runc
# runtime's binary: the distribution's /etc/containerd/config.toml plus two keys of the runc runtime's options
# (BinaryName = sdrun, SystemdCgroup = true), and a second runtime handler "runc-control" with the real runc,
# the control in the same test. A containerd private to the test (own config, root, state and socket, in a
# transient unit) is driven through its CRI socket by tests/containerd/cri-client.py (a CRI v1 subset of our
# own, compiled with protoc at test time): pods with the node's network (no CNI here) are created, exec'd
# into (ExecSync), updated, stopped and removed, and stop/removal are timed against runc. The container has a
# volume with mountPropagation: Bidirectional (a CSI node plugin's), checked both ways.
. "$(dirname "$0")/../integration/lib.sh"
. "$(dirname "$0")/lib-containerd.sh"

require_root
require_systemd
command -v containerd >/dev/null || bail "containerd is not installed (Debian package containerd)"
command -v protoc >/dev/null || bail "protoc is not installed (Debian package protobuf-compiler)"
python3 -c 'import grpc, google.protobuf' 2>/dev/null || bail "python3-grpcio / python3-protobuf are not installed"
CTR_RUNC=$(command -v runc) || bail "runc is not installed (the control runtime)"
[ -r /etc/containerd/config.toml ] || bail "no /etc/containerd/config.toml (Debian's containerd ships one)"
CLIENT=$(dirname "$0")/cri-client.py

# --- a private containerd: Debian's configuration plus the runtime options ---------------------------------------
D=$TEST_TMPDIR/containerd
mkdir -p "$D/root" "$D/state" "$D/logs"
SOCK=$D/containerd.sock
# Without CAP_SYS_RESOURCE (these VMs), no runtime can lower oom_score_adj below containerd's own, as the
# CRI plugin does for the sandbox (-998): the CRI plugin's own switch for that case keeps it at containerd's.
restrict_oom=""
capeff=$(sed -n 's/^CapEff:[[:space:]]*//p' /proc/self/status)
if (( (16#$capeff >> 24 & 1) == 0 )); then
        restrict_oom='    restrict_oom_score_adj = true  # added by the test: no CAP_SYS_RESOURCE here'
        diag "no CAP_SYS_RESOURCE: restrict_oom_score_adj = true"
fi
{
        awk -v add="$restrict_oom" '{ print } add != "" && $0 ~ /^ *\[plugins\."io\.containerd\.grpc\.v1\.cri"\] *$/ { print add }' \
                /etc/containerd/config.toml
        cat <<EOT

# Added by tests/containerd/test-containerd-cri.sh: sdrun as the runc runtime's binary, with the systemd
# cgroup driver (what a Kubernetes node with the systemd cgroup driver configures), and runc as a second
# handler for the control.
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
EOT
} >"$D/config.toml"
UNIT=sdrun-test-containerd-$$.service
o=$(systemd-run --unit "$UNIT" --collect -p Delegate=yes -p Type=notify \
        containerd --config "$D/config.toml" --root "$D/root" --state "$D/state" --address "$SOCK" 2>&1) ||
        bail "cannot start a private containerd: $o"
RROOT=/run/containerd/runc/k8s.io   # the runc shim's --root for the runtime in the k8s.io namespace
IDS=$D/ids                           # every pod and container id the test made, for the teardown
# _cri_teardown: what the test left (a failed or interrupted run): pods removed through the CRI, containerd
# stopped, then each container deleted by the runtime itself (its scope is not in containerd's unit), and
# the mounts below the private state unmounted.
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
cleanup_add _cri_teardown
CTR_NS=k8s.io
ctrn() { ctr --address "$SOCK" -n k8s.io "$@"; }
wait_until 30 ctrn version || bail "the private containerd does not answer: $(journalctl -u "$UNIT" --no-pager | tail -n 5)"

# cri METHOD [JSON]: one CRI call; its JSON answer in $R, its exit status in $RC.
cri() {
        RC=0
        R=$(python3 "$CLIENT" "$SOCK" "$@" 2>&1) || RC=$?
}
# jf EXPR: a field of $R (jq expression).
jf() { jq -r "$1" <<<"$R" 2>/dev/null; }

cri Version '{"version": "v1"}'
is "$RC|$(jf .runtime_name)|$(jf .runtime_api_version)" "0|containerd|v1" "CRI Version over $SOCK: containerd, API v1" || diag "$R"
diag "CRI: $(jf .runtime_name) $(jf .runtime_version)"

# The images: the busybox image for the containers, and the sandbox ("pause") image, which containerd would
# otherwise pull from registry.k8s.io: the same rootfs with a command that runs until killed.
PAUSE=$(containerd config default 2>/dev/null | sed -n 's/^ *sandbox_image = "\(.*\)"/\1/p')
[ -n "$PAUSE" ] || bail "cannot read containerd's default sandbox_image"
make_oci_archive "$CTR_IMAGE" "$TEST_TMPDIR/bb.tar" || bail "cannot make the busybox image"
make_oci_archive "$PAUSE" "$TEST_TMPDIR/pause.tar" 'CMD ["/bin/sleep", "2000000000"]' || bail "cannot make the pause image"
o=$(ctrn image import --base-name "${CTR_IMAGE%:*}" "$TEST_TMPDIR/bb.tar" 2>&1) || bail "ctr image import: $o"
o=$(ctrn image import --base-name "${PAUSE%:*}" "$TEST_TMPDIR/pause.tar" 2>&1) || bail "ctr image import (pause): $o"
cri ImageStatus "{\"image\": {\"image\": \"$CTR_IMAGE\"}}"
like "$(jf '.image.repo_tags[]?')" "$CTR_IMAGE" "CRI ImageStatus finds $CTR_IMAGE" || diag "$R"

# pod_config NAME UID: a PodSandboxConfig as the kubelet writes one for a best-effort pod with the node's
# network (hostNetwork: no CNI plugin is installed here), systemd cgroup driver.
pod_config() {
        local name=$1 uid=$2
        cat <<EOJ
{"metadata": {"name": "$name", "uid": "$uid", "namespace": "sdrun-test", "attempt": 0},
 "log_directory": "$D/logs/$name",
 "labels": {"io.kubernetes.pod.name": "$name"},
 "linux": {"cgroup_parent": "kubepods-besteffort-pod${uid//-/_}.slice",
           "security_context": {"namespace_options": {"network": "NODE", "pid": "CONTAINER", "ipc": "POD"}}}}
EOJ
}

# The control needs a cpu controller: the CRI plugin always gives the sandbox cpu shares (2), which runc writes
# to cpu.weight and fails without one (the unified box); systemd, and so sdrun, leaves CPUWeight= unapplied.
handlers=(runc runc-control)
no_cpu=0
if [ "$SDRUN_TEST_LAYOUT" = unified ] && ! grep -qw cpu /sys/fs/cgroup/cgroup.controllers 2>/dev/null; then
        handlers=(runc)
        no_cpu=1
fi
# A volume with mountPropagation: Bidirectional, as a CSI node plugin has: the host directory is a shared mount
# (the CRI plugin refuses it otherwise), as the kubelet makes its own directory.
VOL=$TEST_TMPDIR/bidi
mkdir -p "$VOL"
mount --bind "$VOL" "$VOL" && mount --make-shared "$VOL" || bail "cannot make $VOL a shared mount"
cleanup_add umount -R -l "$VOL"
vol_group=$(awk -v m="$VOL" '$5 == m { for (i = 7; $i != "-"; i++) if ($i ~ /^shared:/) print $i }' /proc/self/mountinfo)

declare -A T
for handler in "${handlers[@]}"; do
        rt=sdrun; [ "$handler" = runc-control ] && rt=runc
        diag "=== handler $handler ($rt)"
        uid=$(cat /proc/sys/kernel/random/uuid)
        name=pod-$rt-$$
        pcfg=$(pod_config "$name" "$uid")
        slice=kubepods-besteffort-pod${uid//-/_}.slice
        mkdir -p "$D/logs/$name"

        # --- RunPodSandbox -------------------------------------------------------------------------------------
        cri RunPodSandbox "{\"config\": $pcfg, \"runtime_handler\": \"$handler\"}"
        pod=$(jf .pod_sandbox_id)
        is "$RC" 0 "$rt: RunPodSandbox (handler $handler)" || { diag "$R"; continue; }
        T[$rt.runp]=$(jf .seconds)
        echo "$pod" >>"$IDS"
        cri PodSandboxStatus "{\"pod_sandbox_id\": \"$pod\"}"
        is "$(jf .status.state)" SANDBOX_READY "$rt: the pod is SANDBOX_READY"
        punit=cri-containerd-$pod.scope
        is "$(systemctl show -p ActiveState --value -- "$punit")|$(systemctl show -p Slice --value -- "$punit")" \
                "active|$slice" "$rt: the sandbox is the active unit $punit in $slice"

        # --- CreateContainer, StartContainer ----------------------------------------------------------------------
        ccfg=$(cat <<EOJ
{"metadata": {"name": "c1", "attempt": 0},
 "image": {"image": "$CTR_IMAGE"},
 "command": ["sh", "-c"],
 "args": ["trap 'echo got-TERM; exit 0' TERM; echo started; while :; do sleep 0.1; done"],
 "envs": [{"key": "FOO", "value": "bar"}],
 "log_path": "c1.log",
 "labels": {"io.kubernetes.container.name": "c1"},
 "mounts": [{"container_path": "/mnt/bidi", "host_path": "$VOL", "propagation": "PROPAGATION_BIDIRECTIONAL"}],
 "linux": {"resources": {"cpu_period": 100000, "cpu_shares": 2, "oom_score_adj": 1000},
           "security_context": {"capabilities": {"add_capabilities": ["SYS_ADMIN"]},
                                "namespace_options": {"network": "NODE", "pid": "CONTAINER", "ipc": "POD"}}}}
EOJ
)
        cri CreateContainer "{\"pod_sandbox_id\": \"$pod\", \"config\": $ccfg, \"sandbox_config\": $pcfg}"
        cid=$(jf .container_id)
        echo "$cid" >>"$IDS"
        is "$RC" 0 "$rt: CreateContainer" || diag "$R"
        T[$rt.create]=$(jf .seconds)
        cri StartContainer "{\"container_id\": \"$cid\"}"
        is "$RC" 0 "$rt: StartContainer" || diag "$R"
        T[$rt.start]=$(jf .seconds)
        cri ContainerStatus "{\"container_id\": \"$cid\"}"
        is "$(jf .status.state)" CONTAINER_RUNNING "$rt: ContainerStatus: CONTAINER_RUNNING" || diag "$R"
        cunit=cri-containerd-$cid.scope
        is "$(systemctl show -p ActiveState --value -- "$cunit")|$(systemctl show -p Slice --value -- "$cunit")" \
                "active|$slice" "$rt: the container is the active unit $cunit in $slice"
        cri ListContainers "{\"filter\": {\"pod_sandbox_id\": \"$pod\"}}"
        is "$(jf '[.containers[] | .id] | join(" ")')" "$cid" "$rt: ListContainers of the pod: the container"

        # --- ExecSync ---------------------------------------------------------------------------------------------
        cri ExecSync "{\"container_id\": \"$cid\", \"cmd\": [\"sh\", \"-c\", \"echo \$FOO; id -u\"], \"timeout\": 30}"
        is "$RC|$(jf .exit_code)|$(jf .stdout | base64 -d | paste -sd ' ')" "0|0|bar 0" \
                "$rt: ExecSync: the container's environment, exit code 0" || diag "$R"
        T[$rt.exec]=$(jf .seconds)
        cri ExecSync "{\"container_id\": \"$cid\", \"cmd\": [\"sh\", \"-c\", \"echo oops >&2; exit 7\"], \"timeout\": 30}"
        is "$(jf .exit_code)|$(jf .stderr | base64 -d)" "7|oops" "$rt: ExecSync: exit code and stderr of a failing command" || diag "$R"
        # (the init is a shell, which sets its own dispositions: the exec'd process shows what the runtime gives)
        cri ExecSync "{\"container_id\": \"$cid\", \"cmd\": [\"sh\", \"-c\", \"sed -n 's/^Sig\\\\(Ign\\\\|Blk\\\\):[[:space:]]*//p' /proc/self/status | paste -sd /\"], \"timeout\": 30}"
        is "$(jf .stdout | base64 -d)" "0000000000000000/0000000000000000" "$rt: an exec'd process: no signal ignored or blocked"

        # --- the Bidirectional volume: in the host's peer group, mounts go both ways ------------------------------
        cri ExecSync "{\"container_id\": \"$cid\", \"cmd\": [\"cat\", \"/proc/self/mountinfo\"], \"timeout\": 30}"
        is "$(jf .stdout | base64 -d | awk '$5 == "/mnt/bidi" { o = ""; for (i = 7; $i != "-"; i++) o = o " " $i; print o }')" \
                " $vol_group" "$rt: Bidirectional volume: in the host's peer group ($vol_group), no master" || diag "$R"
        mkdir -p "$VOL/h-$rt" "$VOL/c-$rt"
        mount -t tmpfs "h-$rt" "$VOL/h-$rt" && touch "$VOL/h-$rt/mark"
        cri ExecSync "{\"container_id\": \"$cid\", \"cmd\": [\"sh\", \"-c\", \"test -e /mnt/bidi/h-$rt/mark && mount -t tmpfs c-$rt /mnt/bidi/c-$rt && touch /mnt/bidi/c-$rt/mark\"], \"timeout\": 30}"
        is "$(jf .exit_code)" 0 "$rt: Bidirectional volume: a host mount under it appears in the container, which mounts a tmpfs there" || diag "$R"
        ok_desc "$rt: Bidirectional volume: the container's mount appears on the host" test -e "$VOL/c-$rt/mark"
        umount -l "$VOL/h-$rt" "$VOL/c-$rt" 2>/dev/null

        # --- UpdateContainerResources (the shim's Update: the runtime's `update --resources -`) ------------------
        if [ "$SDRUN_TEST_LAYOUT" = hybrid ]; then
                cri UpdateContainerResources "{\"container_id\": \"$cid\", \"linux\": {\"cpu_period\": 100000, \"cpu_quota\": 50000, \"cpu_shares\": 2, \"memory_limit_in_bytes\": 134217728, \"oom_score_adj\": 1000}}"
                is "$RC" 0 "$rt: UpdateContainerResources (memory 128M, cpu quota 50%)" || diag "$R"
                cg=$(systemctl show -p ControlGroup --value -- "$cunit")
                is "$(cat "/sys/fs/cgroup/memory$cg/memory.limit_in_bytes" 2>&1)" 134217728 "$rt: the update reached memory.limit_in_bytes"
                is "$(cat "/sys/fs/cgroup/cpu$cg/cpu.cfs_quota_us" 2>&1)" 50000 "$rt: the update reached cpu.cfs_quota_us"
        else
                diag "$rt: UpdateContainerResources not tried: no memory/cpu controller in the $SDRUN_TEST_LAYOUT layout"
        fi

        # --- StopContainer (SIGTERM, the process exits on it), RemoveContainer -----------------------------------
        cri StopContainer "{\"container_id\": \"$cid\", \"timeout\": 30}"
        is "$RC" 0 "$rt: StopContainer" || diag "$R"
        T[$rt.stop]=$(jf .seconds)
        cri ContainerStatus "{\"container_id\": \"$cid\"}"
        is "$(jf .status.state)|$(jf .status.exit_code)" "CONTAINER_EXITED|0" "$rt: the container exited 0 on SIGTERM" || diag "$R"
        ok_desc "$rt: the container's log has its output and the TERM trap" \
                grep -q 'got-TERM' "$D/logs/$name/c1.log"
        cri RemoveContainer "{\"container_id\": \"$cid\"}"
        is "$RC" 0 "$rt: RemoveContainer" || diag "$R"
        T[$rt.rm]=$(jf .seconds)
        cri ContainerStatus "{\"container_id\": \"$cid\"}"
        is "$(jf .error)" NOT_FOUND "$rt: ContainerStatus of the removed container: NOT_FOUND" || diag "$R"

        # --- a second container that ignores SIGTERM: StopContainer's grace period, then SIGKILL ------------------
        ccfg2=${ccfg//c1/c2}
        ccfg2=${ccfg2//"trap 'echo got-TERM; exit 0' TERM; echo started; while :; do sleep 0.1; done"/"trap '' TERM; while :; do sleep 0.1; done"}
        cri CreateContainer "{\"pod_sandbox_id\": \"$pod\", \"config\": $ccfg2, \"sandbox_config\": $pcfg}"
        cid2=$(jf .container_id)
        echo "$cid2" >>"$IDS"
        cri StartContainer "{\"container_id\": \"$cid2\"}"
        is "$RC" 0 "$rt: a second container that ignores SIGTERM started" || diag "$R"
        cri StopContainer "{\"container_id\": \"$cid2\", \"timeout\": 1}"
        is "$RC" 0 "$rt: StopContainer with a 1 s grace period" || diag "$R"
        T[$rt.stopkill]=$(jf .seconds)
        cri ContainerStatus "{\"container_id\": \"$cid2\"}"
        is "$(jf .status.state)|$(jf .status.exit_code)" "CONTAINER_EXITED|137" "$rt: killed after the grace period (137)" || diag "$R"

        # --- StopPodSandbox, RemovePodSandbox (the second container is still there: removed with the pod) ----------
        cri StopPodSandbox "{\"pod_sandbox_id\": \"$pod\"}"
        is "$RC" 0 "$rt: StopPodSandbox" || diag "$R"
        T[$rt.stopp]=$(jf .seconds)
        cri PodSandboxStatus "{\"pod_sandbox_id\": \"$pod\"}"
        is "$(jf .status.state)" SANDBOX_NOTREADY "$rt: the stopped pod is SANDBOX_NOTREADY"
        cri RemoveContainer "{\"container_id\": \"$cid2\"}"
        cri RemovePodSandbox "{\"pod_sandbox_id\": \"$pod\"}"
        is "$RC" 0 "$rt: RemovePodSandbox" || diag "$R"
        T[$rt.rmp]=$(jf .seconds)
        _gone() { [ -z "$(systemctl list-units --all --plain --no-legend --no-pager -- "$1" 2>/dev/null)" ]; }
        for u in "$punit" "$cunit" "cri-containerd-$cid2.scope"; do
                wait_until 10 _gone "$u"
                ok_desc "$rt: $u is gone" _gone "$u"
        done
        ok_desc "$rt: no state left in the runtime's root" test -z "$(ls -A "$RROOT" 2>/dev/null | grep -E "$pod|$cid|$cid2")"
        diag "$rt: seconds: RunPodSandbox ${T[$rt.runp]} CreateContainer ${T[$rt.create]} StartContainer ${T[$rt.start]} ExecSync ${T[$rt.exec]} StopContainer ${T[$rt.stop]} (grace 1 s: ${T[$rt.stopkill]}) RemoveContainer ${T[$rt.rm]} StopPodSandbox ${T[$rt.stopp]} RemovePodSandbox ${T[$rt.rmp]}"
done

# --- stop and removal as fast as with runc ------------------------------------------------------------------------
[ $no_cpu = 1 ] && for k in StopContainer "StopContainer (1 s grace)" RemoveContainer StopPodSandbox RemovePodSandbox; do
        skip "CRI $k against runc: runc cannot run a pod without a cpu controller (this $SDRUN_TEST_LAYOUT box)"
done
[ $no_cpu = 0 ] && for k in stop:StopContainer stopkill:"StopContainer (1 s grace, then SIGKILL)" rm:RemoveContainer \
        stopp:StopPodSandbox rmp:RemovePodSandbox; do
        not_slower "CRI ${k#*:} as fast as with runc" "${T[sdrun.${k%%:*}]:-999}" "${T[runc.${k%%:*}]:-0}"
done

done_testing
