#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Suite "containerd": no process of the runtime's binary is reachable from a container (issue 31, items 2 and
# 3) in a Kubernetes pod with shareProcessNamespace: true, through containerd's CRI plugin. One container runs
# exe-grab (tests/integration/helpers-sec/exe-grab.c, bound read-only from the host) with CAP_SYS_PTRACE: it
# opens /proc/PID/exe of every process of the pod's pid namespace, keeps each that is the runtime's binary and
# reopens it for writing once it can (CVE-2019-5736). Then two more containers are created, started and
# exec'd into (ExecSync) in the same pod. Each handler's BinaryName is a copy of the runtime's binary, the
# victim, so that a successful attack damages the copy, whose hash is checked: sdrun (handler "runc") and runc
# (handler "runc-control", the control; left out where it cannot run a pod, see cri_handlers). No user
# namespace variant: containerd 1.6's CRI has no user namespaces for pods (test-podman-exe-reach has one).
. "$(dirname "$0")/../integration/lib.sh"
. "$(dirname "$0")/lib-containerd.sh"

require_root
require_systemd
[ -n "${EXE_GRAB:-}" ] && [ -x "$EXE_GRAB" ] || bail "EXE_GRAB (the exe-grab helper) is not set or not executable"
RUNC=$(command -v runc) || bail "runc is not installed (the control runtime)"
declare -A ORIG=([sdrun]="$SDRUN" [runc]="$RUNC") SUM=() V=()
mkdir -p "$TEST_TMPDIR/victim"
for n in sdrun runc; do
        V[$n]=$TEST_TMPDIR/victim/$n
        cp "${ORIG[$n]}" "${V[$n]}" && chmod 0755 "${V[$n]}" || bail "cannot copy ${ORIG[$n]}"
        SUM[$n]=$(sha256sum <"${ORIG[$n]}")
done
# the handlers' binaries: cri_setup writes $SDRUN as handler runc's, $CRI_RUNC_BIN as runc-control's
SDRUN=${V[sdrun]}
CRI_RUNC_BIN=${V[runc]}
cri_setup
diag "set up at ${SECONDS}s"
cri_handlers
[ "$no_cpu" = 1 ] && skip "the runc control: runc cannot run a pod without a cpu controller (this $SDRUN_TEST_LAYOUT box)"

# container_config NAME SECURITY-CONTEXT-EXTRA MOUNTS COMMAND-JSON: a ContainerConfig in the pod's namespaces
container_config() {
        cat <<EOJ
{"metadata": {"name": "$1", "attempt": 0},
 "image": {"image": "$CTR_IMAGE"},
 "command": $4,
 "log_path": "$1.log",
 "labels": {"io.kubernetes.container.name": "$1"},
 "mounts": $3,
 "linux": {"resources": {"cpu_period": 100000, "cpu_shares": 2},
           "security_context": {$2 "namespace_options": {"network": "NODE", "pid": "POD", "ipc": "POD"}}}}
EOJ
}

for handler in "${handlers[@]}"; do
        cri_pod_begin "$handler" POD
        cri RunPodSandbox "{\"config\": $pcfg, \"runtime_handler\": \"$handler\"}"
        pod=$(jf .pod_sandbox_id)
        is "$RC" 0 "$rt: RunPodSandbox with shareProcessNamespace (handler $handler, a copy of $rt)" ||
                { diag "$R"; continue; }
        echo "$pod" >>"$IDS"

        # --- the attacker: exe-grab with CAP_SYS_PTRACE, for 90 s ----------------------------------------------
        gcfg=$(container_config grab '"capabilities": {"add_capabilities": ["SYS_PTRACE"]},' \
                "[{\"container_path\": \"/exe-grab\", \"host_path\": \"$EXE_GRAB\", \"readonly\": true}]" \
                "[\"/exe-grab\", \"90\", \"$(stat -c %d:%i "${V[$rt]}")\"]")
        cri CreateContainer "{\"pod_sandbox_id\": \"$pod\", \"config\": $gcfg, \"sandbox_config\": $pcfg}"
        grab=$(jf .container_id)
        echo "$grab" >>"$IDS"
        cri StartContainer "{\"container_id\": \"$grab\"}"
        is "$RC" 0 "$rt: the container running exe-grab (CAP_SYS_PTRACE) started" || diag "$R"

        # --- two more containers in its pid namespace, each exec'd into -----------------------------------------
        fails=0
        for i in 1 2; do
                vcfg=$(container_config "victim$i" "" "[]" '["sleep", "1000"]')
                cri CreateContainer "{\"pod_sandbox_id\": \"$pod\", \"config\": $vcfg, \"sandbox_config\": $pcfg}"
                [ "$RC" = 0 ] || { fails=$((fails + 1)); diag "$R"; continue; }
                vic=$(jf .container_id)
                echo "$vic" >>"$IDS"
                cri StartContainer "{\"container_id\": \"$vic\"}"
                [ "$RC" = 0 ] || { fails=$((fails + 1)); diag "$R"; continue; }
                cri ExecSync "{\"container_id\": \"$vic\", \"cmd\": [\"true\"], \"timeout\": 30}"
                [ "$RC|$(jf .exit_code)" = "0|0" ] || { fails=$((fails + 1)); diag "$R"; }
        done
        is "$fails" 0 "$rt: two containers created, started and exec'd into (ExecSync) in the pod's pid namespace"

        # --- the verdict: the attacker scanned all along, never held the binary, the copy is unchanged --------
        for i in $(seq 10); do
                [ "$(sha256sum <"${V[$rt]}")" = "${SUM[$rt]}" ] || break
                sleep 0.1
        done
        cri ContainerStatus "{\"container_id\": \"$grab\"}"
        is "$(jf .status.state)" CONTAINER_RUNNING "$rt: exe-grab was scanning all along"
        log=$D/logs/$name/grab.log
        is "$(grep -c ' held ' "$log")" 0 "$rt: exe-grab never opened /proc/PID/exe of a process that was the runtime's binary" ||
                diag "$(cat "$log")"
        is "$(sha256sum <"${V[$rt]}")" "${SUM[$rt]}" "$rt: the runtime's binary is unchanged"

        # (RemovePodSandbox removes the pod's containers too)
        cri StopPodSandbox "{\"pod_sandbox_id\": \"$pod\"}"
        cri RemovePodSandbox "{\"pod_sandbox_id\": \"$pod\"}"
        is "$RC" 0 "$rt: RemovePodSandbox" || diag "$R"
        diag "$rt: done at ${SECONDS}s"
done

done_testing
