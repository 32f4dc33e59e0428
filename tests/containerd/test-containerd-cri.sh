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
cri_setup

cri_handlers
# A volume with mountPropagation: Bidirectional, as a CSI node plugin has: the host directory is a shared mount
# (the CRI plugin refuses it otherwise), as the kubelet makes its own directory.
VOL=$TEST_TMPDIR/bidi
mkdir -p "$VOL"
mount --bind "$VOL" "$VOL" && mount --make-shared "$VOL" || bail "cannot make $VOL a shared mount"
cleanup_add umount -R -l "$VOL"
vol_group=$(awk -v m="$VOL" '$5 == m { for (i = 7; $i != "-"; i++) if ($i ~ /^shared:/) print $i }' /proc/self/mountinfo)

declare -A T
for handler in "${handlers[@]}"; do
        cri_pod_begin "$handler" CONTAINER
        slice=kubepods-besteffort-pod${uid//-/_}.slice

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
