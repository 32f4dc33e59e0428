#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Suite "containerd": a Kubernetes pod as the kubelet asks for one, through containerd's CRI plugin with sdrun
# as the runc runtime's binary and runc as the control (handler "runc-control"), on a real pod network: Debian's
# CNI plugins (bridge, host-local, loopback) with a conflist of the test's own, dropped into /etc/cni/net.d
# ahead of any other. The pod shares its network, ipc and pid namespaces (shareProcessNamespace: true); one
# container serves HTTP, the other reaches it on localhost and runs as the kubelet's securityContext makes it:
# runAsUser/runAsGroup/supplementalGroups, readOnlyRootFilesystem, allowPrivilegeEscalation: false, seccomp
# RuntimeDefault. Then an exec with a tty through the CRI's streaming server (what `kubectl exec -t` does),
# ReopenContainerLog (the kubelet's log rotation), and ContainerStats/ListContainerStats (what the kubelet's
# summary API and `kubectl top` read). The box's network is private (tests/harness/box --private-network):
# the bridge and its range cannot meet another engine's.
. "$(dirname "$0")/../integration/lib.sh"
. "$(dirname "$0")/lib-containerd.sh"

require_root
require_systemd
command -v curl >/dev/null || bail "curl is not installed"
for p in bridge host-local loopback; do
        [ -x "/usr/lib/cni/$p" ] || bail "/usr/lib/cni/$p is missing (Debian package containernetworking-plugins)"
done
# The conflist sorts first in /etc/cni/net.d, so containerd uses it: never on a host whose pods it would take.
[ "$(stat -fc %T /)" = tmpfs ] || [ -n "${SDRUN_CRI_POD_ANY_ROOT:-}" ] ||
        bail "the test puts a CNI network first in /etc/cni/net.d: run it in a box (tests/harness/box), whose root is a fresh tmpfs"

NET=sdrun-test-cri-$$
SUBNET=10.241.77.0/24
BRIDGE=sdrcri$$
BRIDGE=${BRIDGE:0:15}
CONFLIST=/etc/cni/net.d/00-$NET.conflist
mkdir -p /etc/cni/net.d
cleanup_add rm -rf "$CONFLIST" "/var/lib/cni/networks/$NET"
cleanup_add ip link del "$BRIDGE"
cat >"$CONFLIST" <<EOF
{"cniVersion": "0.4.0", "name": "$NET",
 "plugins": [{"type": "bridge", "bridge": "$BRIDGE", "isGateway": true, "ipMasq": false, "hairpinMode": true,
              "ipam": {"type": "host-local", "ranges": [[{"subnet": "$SUBNET"}]], "routes": [{"dst": "0.0.0.0/0"}]}}]}
EOF
cri_setup

cri_handlers
if [ "$no_cpu" = 1 ]; then
        skip "the runc control: runc cannot run a pod without a cpu controller (this $SDRUN_TEST_LAYOUT box)"
fi
have_memory=1 have_cpu=1
if [ -f /sys/fs/cgroup/cgroup.controllers ]; then
        grep -qw memory /sys/fs/cgroup/cgroup.controllers || have_memory=0
        grep -qw cpu /sys/fs/cgroup/cgroup.controllers || have_cpu=0
fi

# pod_config NAME UID: a PodSandboxConfig as the kubelet writes one for a best-effort pod on the pod network
# with shareProcessNamespace: true and seccompProfile RuntimeDefault, systemd cgroup driver.
pod_config() {
        local name=$1 uid=$2
        cat <<EOJ
{"metadata": {"name": "$name", "uid": "$uid", "namespace": "sdrun-test", "attempt": 0},
 "hostname": "$name",
 "log_directory": "$D/logs/$name",
 "labels": {"io.kubernetes.pod.name": "$name"},
 "linux": {"cgroup_parent": "kubepods-besteffort-pod${uid//-/_}.slice",
           "security_context": {"namespace_options": {"network": "POD", "pid": "POD", "ipc": "POD"},
                                "seccomp": {"profile_type": "RuntimeDefault"}}}}
EOJ
}
# container_config NAME SECURITY-CONTEXT-JSON SCRIPT: a ContainerConfig running `sh -c SCRIPT`.
container_config() {
        cat <<EOJ
{"metadata": {"name": "$1", "attempt": 0},
 "image": {"image": "$CTR_IMAGE"},
 "command": ["sh", "-c"], "args": ["$3"],
 "log_path": "$1.log",
 "labels": {"io.kubernetes.container.name": "$1"},
 "linux": {"resources": {"cpu_period": 100000, "cpu_shares": 2},
           "security_context": $2}}
EOJ
}
in_pod=$(cat <<EOJ
"namespace_options": {"network": "POD", "pid": "POD", "ipc": "POD"}, "seccomp": {"profile_type": "RuntimeDefault"}
EOJ
)
# exec_in CID CMD...: ExecSync of CMD in container CID; its stdout in $OUT, its exit code in $EC.
exec_in() {
        local cid=$1 cmd
        shift
        cmd=$(printf '%s\n' "$@" | jq -R . | jq -sc .)
        cri ExecSync "{\"container_id\": \"$cid\", \"cmd\": $cmd, \"timeout\": 30}"
        OUT=$(jf .stdout | base64 -d)
        EC=$(jf .exit_code)
}
_gone() { [ -z "$(systemctl list-units --all --plain --no-legend --no-pager -- "$1" 2>/dev/null)" ]; }

for handler in "${handlers[@]}"; do
        cri_pod_begin "$handler"

        # --- the pod, on the bridge ------------------------------------------------------------------------------
        cri RunPodSandbox "{\"config\": $pcfg, \"runtime_handler\": \"$handler\"}"
        pod=$(jf .pod_sandbox_id)
        is "$RC" 0 "$rt: RunPodSandbox on the CNI bridge network (handler $handler)" || { diag "$R"; continue; }
        echo "$pod" >>"$IDS"
        cri PodSandboxStatus "{\"pod_sandbox_id\": \"$pod\"}"
        ip=$(jf .status.network.ip)
        like "$(jf .status.state) $ip" "^SANDBOX_READY 10\\.241\\.77\\.[0-9]+$" "$rt: the pod is ready with an address of $SUBNET" || diag "$R"

        # --- a server and a client in the pod ----------------------------------------------------------------------
        scfg=$(container_config server "{$in_pod}" \
                "mkdir -p /tmp/www && echo pong-$rt >/tmp/www/index.html && httpd -p 8080 -h /tmp/www && i=0 && while :; do echo tick-\$i; i=\$((i + 1)); sleep 0.2; done")
        cri CreateContainer "{\"pod_sandbox_id\": \"$pod\", \"config\": $scfg, \"sandbox_config\": $pcfg}"
        srv=$(jf .container_id)
        echo "$srv" >>"$IDS"
        cri StartContainer "{\"container_id\": \"$srv\"}"
        is "$RC" 0 "$rt: the server container started" || diag "$R"
        ccfg=$(container_config client "{$in_pod, \"run_as_user\": {\"value\": 1000}, \"run_as_group\": {\"value\": 1000}, \"supplemental_groups\": [2000, 3000], \"readonly_rootfs\": true, \"no_new_privs\": true}" \
                "exec sleep 2000000000")
        cri CreateContainer "{\"pod_sandbox_id\": \"$pod\", \"config\": $ccfg, \"sandbox_config\": $pcfg}"
        cli=$(jf .container_id)
        echo "$cli" >>"$IDS"
        cri StartContainer "{\"container_id\": \"$cli\"}"
        is "$RC" 0 "$rt: the client container (runAsUser, readOnlyRootFilesystem, ...) started" || diag "$R"

        srv_up() { exec_in "$cli" wget -qO- http://127.0.0.1:8080/ && [ "$OUT" = "pong-$rt" ]; }
        wait_until 20 srv_up
        srv_up
        is "$OUT" "pong-$rt" "$rt: the client reaches the server on localhost (the pod's network namespace)"
        exec_in "$cli" ip -4 -o addr show eth0
        like "$OUT" " inet $ip/24 " "$rt: eth0 in the pod has the pod's address $ip"
        is "$(curl -sS --noproxy '*' -m 10 "http://$ip:8080/" 2>&1)" "pong-$rt" "$rt: the node reaches the pod at $ip over the bridge" ||
                diag "$(ip addr show "$BRIDGE"; ip route)"
        exec_in "$cli" ps -o pid,args
        like "$OUT" "httpd -p 8080" "$rt: shareProcessNamespace: the client sees the server's process"
        is "$(awk '$1 == 1 { $1 = ""; print substr($0, 2) }' <<<"$OUT")" "/bin/sleep 2000000000" \
                "$rt: shareProcessNamespace: PID 1 is the sandbox's (pause) process"
        exec_in "$cli" sh -c "grep -E '^(Uid|Gid|Groups|NoNewPrivs|Seccomp):' /proc/self/status | tr -s '\t ' ' '"
        is "$OUT" "$(printf 'Uid: 1000 1000 1000 1000\nGid: 1000 1000 1000 1000\nGroups: 1000 2000 3000 \nNoNewPrivs: 1\nSeccomp: 2')" \
                "$rt: runAsUser, runAsGroup, supplementalGroups, allowPrivilegeEscalation: false, seccomp RuntimeDefault"
        exec_in "$cli" sh -c 'touch /x 2>&1; echo rc=$?'
        like "$OUT" "Read-only file system.*rc=1" "$rt: readOnlyRootFilesystem: the root is read-only"
        exec_in "$cli" sh -c 'echo x >/proc/sys/kernel/hostname 2>&1; echo rc=$?'
        like "$OUT" "rc=1" "$rt: /proc/sys is read-only for the pod's non-root user"

        # --- kubectl exec -it: Exec and its streaming URL -----------------------------------------------------------
        cri Exec "{\"container_id\": \"$cli\", \"cmd\": [\"sh\", \"-c\", \"tty; [ -t 1 ] && echo is-a-tty; id -u\"], \"tty\": true, \"stdin\": true, \"stdout\": true}"
        url=$(jf .url)
        like "$RC $url" "^0 http://" "$rt: Exec answers a streaming URL" || diag "$R"
        R=$(python3 "$CLIENT" --stream "$url" 2>&1)
        like "$(jf .stdout | tr -d '\r' | sed '/^$/d' | paste -sd ' ')" "^/dev/pts/[0-9]+ is-a-tty 1000$" "$rt: the exec with a tty runs on a pty, as the container's user" || diag "$R"
        like "$(jf .status)" '"Success"' "$rt: the stream ends with status Success" || diag "$R"
        cri Exec "{\"container_id\": \"$cli\", \"cmd\": [\"sh\", \"-c\", \"echo out; echo err >&2; id -u\"], \"stdout\": true, \"stderr\": true}"
        R=$(python3 "$CLIENT" --stream "$(jf .url)" 2>&1)
        is "$(jf .stdout | sed '/^$/d' | paste -sd ' ')|$(jf .stderr | sed '/^$/d')" "out 1000|err" "$rt: an exec without a tty: stdout and stderr apart" || diag "$R"

        # --- ReopenContainerLog: the kubelet rotates the log ------------------------------------------------------
        log=$D/logs/$name/server.log
        ok_desc "$rt: the server's output is in its log" grep -q 'tick-' "$log"
        mv "$log" "$log.1"
        cri ReopenContainerLog "{\"container_id\": \"$srv\"}"
        is "$RC" 0 "$rt: ReopenContainerLog" || diag "$R"
        wait_until 10 grep -q 'tick-' "$log"
        ok_desc "$rt: after ReopenContainerLog the output goes to a new log file" grep -q 'tick-' "$log"

        # --- ContainerStats, ListContainerStats ------------------------------------------------------------------
        cri ContainerStats "{\"container_id\": \"$srv\"}"
        cpu=$(jf '.stats.cpu.usage_core_nano_seconds.value // 0')
        mem=$(jf '.stats.memory.working_set_bytes.value // 0')
        if [ $have_cpu = 1 ]; then
                ok_desc "$rt: ContainerStats: the server's cumulative CPU is above zero ($cpu ns)" test "${cpu:-0}" -gt 0
        else
                # containerd's cgroup v2 reader reads cpu.stat only where the cpu controller is enabled; the
                # kernel keeps the figure in every cgroup: it is there, in the unit's cgroup.
                cg=$(systemctl show -p ControlGroup --value -- "cri-containerd-$srv.scope")
                usage=$(awk '$1 == "usage_usec" { print $2 }' "/sys/fs/cgroup$cg/cpu.stat" 2>/dev/null)
                ok_desc "$rt: the server's cgroup counts its CPU time (cpu.stat usage_usec $usage)" test "${usage:-0}" -gt 0
                skip "$rt: ContainerStats CPU: containerd reads no cpu.stat without a cpu controller (this $SDRUN_TEST_LAYOUT box)"
        fi
        if [ $have_memory = 1 ]; then
                ok_desc "$rt: ContainerStats: the server's working set is above zero ($mem bytes)" test "${mem:-0}" -gt 0
        else
                skip "$rt: ContainerStats memory: no memory controller in this $SDRUN_TEST_LAYOUT box"
        fi
        cri ListContainerStats "{\"filter\": {\"pod_sandbox_id\": \"$pod\"}}"
        is "$(jf '[.stats[].attributes.id] | sort | join(" ")')" "$(printf '%s\n' "$srv" "$cli" | sort | paste -sd ' ')" \
                "$rt: ListContainerStats of the pod: both containers" || diag "$R"

        # --- the pod goes, and all of it ---------------------------------------------------------------------------
        cri StopPodSandbox "{\"pod_sandbox_id\": \"$pod\"}"
        is "$RC" 0 "$rt: StopPodSandbox" || diag "$R"
        for c in "$srv" "$cli"; do cri RemoveContainer "{\"container_id\": \"$c\"}"; done
        cri RemovePodSandbox "{\"pod_sandbox_id\": \"$pod\"}"
        is "$RC" 0 "$rt: RemovePodSandbox" || diag "$R"
        for u in "cri-containerd-$pod.scope" "cri-containerd-$srv.scope" "cri-containerd-$cli.scope"; do
                wait_until 10 _gone "$u"
                ok_desc "$rt: $u is gone" _gone "$u"
        done
        ok_desc "$rt: the pod's address is released" test ! -e "/var/lib/cni/networks/$NET/$ip"
        ok_desc "$rt: no state left in the runtime's root" test -z "$(ls -A "$RROOT" 2>/dev/null | grep -E "$pod|$srv|$cli")"
done

done_testing
