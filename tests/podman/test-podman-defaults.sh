#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Suite "podman": what Podman does with Debian's stock containers.conf (loaded; the runtime comes from a
# drop-in, see lib-podman.sh) on the runtime under test: the default bridge network (netavark, with the
# default_sysctls Debian sets), --privileged, --device, pods, --network container:X, --userns=auto and --uidmap
# with a volume, --init, podman update, podman stats (CPU of a busy container), and the signal dispositions a
# container starts with (conmon ignores SIGPIPE; the container must not inherit that).
. "$(dirname "$0")/../integration/lib.sh"
. "$(dirname "$0")/lib-podman.sh"

require_root
require_systemd
podman_setup
IMG=$PODMAN_IMAGE

# --- the distribution's defaults are loaded ---------------------------------------------------------------------
ok_desc "no CONTAINERS_CONF replaces the configuration" test -z "${CONTAINERS_CONF:-}"
pm_like "Debian's default_sysctls reach the container (net.ipv4.ping_group_range = 0 0)" '^0[[:space:]]+0$' 0 \
        run --rm "$IMG" cat /proc/sys/net/ipv4/ping_group_range

# --- default bridge network ------------------------------------------------------------------------------------
pm_like "default network: eth0 on Podman's bridge (10.88.0.0/16)" "inet 10\.88\.[0-9]+\.[0-9]+/16" 0 \
        run --rm "$IMG" ip -4 addr show eth0
pm_out out run --rm "$IMG" readlink /proc/self/ns/net
like "$out" '^net:\[[0-9]+\]$' "default network: the container's network namespace" || diag "$PM_ERR"
ok_desc "default network: a network namespace of its own, not the host's" test "$out" != "$(readlink /proc/self/ns/net)"

# --- signals: nothing ignored, nothing blocked ---------------------------------------------------------------------
# (grep itself is the container's process: a shell would set dispositions of its own)
pm_like "SigIgn of the container's process is empty (SIGPIPE at default, though conmon ignores it)" \
        '^SigIgn:[[:space:]]+0000000000000000$' 0 run --rm "$IMG" grep SigIgn /proc/self/status
pm_like "SigBlk of the container's process is empty" '^SigBlk:[[:space:]]+0000000000000000$' 0 \
        run --rm "$IMG" grep SigBlk /proc/self/status
pm_is "a writer to a closed pipe dies of SIGPIPE (status 141)" 141 0 \
        run --rm "$IMG" sh -c '(yes; echo $? >/tmp/rc) | head -n 1 >/dev/null; cat /tmp/rc'

# --- --privileged, --device ----------------------------------------------------------------------------------------
# every capability the host has (these VMs lack CAP_SYS_RESOURCE)
pm_is "--privileged: every capability of the host in the effective set" "$(sed -n 's/^CapBnd:[[:space:]]*//p' /proc/self/status)" 0 \
        run --rm --privileged "$IMG" sh -c "sed -n 's/^CapEff:[[:space:]]*//p' /proc/self/status"
pm_is "--privileged: the host's devices are there (/dev/net/tun)" yes 0 \
        run --rm --privileged "$IMG" sh -c '[ -c /dev/net/tun ] && echo yes'
pm_is "--privileged: /sys writable (no read-only remount)" rw 0 \
        run --rm --privileged "$IMG" sh -c "awk '\$2 == \"/sys\" { split(\$4, o, \",\"); print o[1] }' /proc/mounts"
pm_is "--device /dev/zero:/dev/myzero: a character device 1:5, readable" "1:5 ok" 0 \
        run --rm --device /dev/zero:/dev/myzero "$IMG" sh -c 'set -- $(stat -c "%t %T" /dev/myzero); [ "$(head -c 3 /dev/myzero | wc -c)" = 3 ] && echo "$((0x$1)):$((0x$2)) ok"'
# a device outside the default allow list (1:11, what /dev/kmsg is), given read-only: writes are refused
mknod "$TEST_TMPDIR/kmsg" c 1 11 || bail "mknod failed"
pm_is "--device HOST:/dev/mykmsg:r: the device cgroup refuses writes" write-denied 0 \
        run --rm --device "$TEST_TMPDIR/kmsg:/dev/mykmsg:r" "$IMG" sh -c 'echo sdrun-test 2>/dev/null >/dev/mykmsg && echo write-ok || echo write-denied'

# --- pods, --network container:X ----------------------------------------------------------------------------------
pod=pod-$$
pm_out out pod create --name "$pod"
is "$PM_RC" 0 "pod create" || diag "$PM_ERR"
pm_out a run -d --pod "$pod" --name "$pod-a" "$IMG" sleep 1000
is "$PM_RC" 0 "run -d --pod (the pod's infra container starts too)" || diag "$PM_ERR"
pm_is "a second container in the pod shares its network namespace with the first" same 0 run --rm --pod "$pod" "$IMG" \
        sh -c "[ \"\$(readlink /proc/self/ns/net)\" = \"$(podman exec "$pod-a" readlink /proc/self/ns/net 2>/dev/null)\" ] && echo same"
pm_like "pod ps: the pod is Running" 'Running' 0 pod ps --filter name="$pod" --format '{{.Status}}'
pm_out out pod stop -t 1 "$pod"
is "$PM_RC" 0 "pod stop" || diag "$PM_ERR"
pm_out out pod rm -f "$pod"
is "$PM_RC" 0 "pod rm" || diag "$PM_ERR"

c=net-$$
pm_out out run -d --name "$c" "$IMG" sleep 1000
is "$PM_RC" 0 "run -d a container with the default network" || diag "$PM_ERR"
netns=$(podman exec "$c" readlink /proc/self/ns/net 2>/dev/null)
pm_is "--network container:X joins X's network namespace" "$netns" 0 run --rm --network "container:$c" "$IMG" readlink /proc/self/ns/net
pm_like "--network container:X sees X's eth0" "inet 10\.88\." 0 run --rm --network "container:$c" "$IMG" ip -4 addr show eth0

# --- --init ---------------------------------------------------------------------------------------------------
pm_like "--init: pid 1 is Podman's init (catatonit), the command is not pid 1" '^(podman-init|catatonit|tini|init) ([02-9]|[1-9][0-9]+)$' 0 \
        run --rm --init "$IMG" sh -c 'echo $(cat /proc/1/comm) $$'
pm_out out run --rm --init "$IMG" sh -c 'exit 9'
is "$PM_RC" 9 "--init: the command's exit status"

# --- user namespaces ------------------------------------------------------------------------------------------
VOL=$TEST_TMPDIR/vol
mkdir -p "$VOL"
echo host-data >"$VOL/file"
pm_is "--uidmap 0:100000:65536 with a volume: the container's root maps to 100000" "0 100000" 0 \
        run --rm --uidmap 0:100000:65536 --gidmap 0:100000:65536 -v "$VOL:/vol:Z" "$IMG" \
        sh -c 'echo $(id -u) $(awk "{ print \$2 }" /proc/self/uid_map)'
pm_out out run --rm --uidmap 0:100000:65536 --gidmap 0:100000:65536 -v "$VOL:/vol" "$IMG" sh -c 'cat /vol/file; touch /vol/new 2>/dev/null && echo wrote || echo denied'
is "$out|$PM_RC" $'host-data\ndenied|0' "--uidmap: the volume is readable; root-owned host files are not writable by the mapped root" || diag "$out $PM_ERR"
pm_out out run --rm --uidmap 0:100000:65536 --gidmap 0:100000:65536 -v "$VOL:/vol:U" "$IMG" sh -c 'touch /vol/new && stat -c %u /vol/new'
is "$out|$(stat -c %u "$VOL/new" 2>/dev/null)" "0|100000" "--uidmap with :U: the volume is chowned; a file made by the container's root is 100000 on the host" || diag "$PM_ERR"

# An id-mapped volume (:idmap, Podman passes the "idmap" mount option): the host's root is the container's root
# there, and what the container's root writes is the host root's. runc 1.1 (the control in the unified box) has
# no id-mapped mounts. (The :U run above chowned the volume to 100000: back to the host's root.)
rm -f "$VOL/new"
chown -R 0:0 "$VOL"
if [ "$PODMAN_TEST_RUNTIME" != runc ]; then
        pm_out out run --rm --uidmap 0:100000:65536 --gidmap 0:100000:65536 -v "$VOL:/vol:idmap" "$IMG" \
                sh -c 'stat -c %u:%g /vol/file; touch /vol/new && stat -c %u:%g /vol/new'
        is "$out|$PM_RC|$(stat -c %u:%g "$VOL/new" 2>/dev/null)" $'0:0\n0:0|0|0:0' \
                "--uidmap with an :idmap volume: host root's files are root's inside, the container root's new file is host root's" ||
                diag "$PM_ERR"
        rm -f "$VOL/new"
fi

# --userns=auto takes ranges of the "containers" user from /etc/subuid and /etc/subgid.
for f in /etc/subuid /etc/subgid; do
        if ! grep -q '^containers:' "$f" 2>/dev/null; then
                cp -a "$f" "$TEST_TMPDIR/$(basename "$f").orig" 2>/dev/null || : >"$TEST_TMPDIR/$(basename "$f").orig"
                echo 'containers:2147483647:2147483648' >>"$f"
                cleanup_add cp "$TEST_TMPDIR/$(basename "$f").orig" "$f"
        fi
done
pm_out out run --rm --userns=auto -v "$VOL:/vol" "$IMG" sh -c 'echo $(id -u) $(awk "{ print \$2 \" \" \$3 }" /proc/self/uid_map); cat /vol/file'
like "$out" $'^0 [1-9][0-9]* [0-9]+\nhost-data$' "--userns=auto with a volume: root in a user namespace of its own, the volume readable" || diag "$PM_ERR"
is "$PM_RC" 0 "--userns=auto: exit status 0"

# --- podman update ------------------------------------------------------------------------------------------------
if have_resource_control; then
        c2=upd-$$
        pm_out cid run -d --name "$c2" "$IMG" sleep 1000
        pid=$(pm_pid "$c2")
        # (Podman 4.3's update has no --pids-limit; --memory is in test-podman-lifecycle.sh)
        pm_out out update --cpus 0.5 "$c2"
        is "$PM_RC" 0 "update --cpus 0.5" || diag "$PM_ERR"
        if [ "$SDRUN_TEST_LAYOUT" = hybrid ]; then
                d=$(proc_cgroup_dir "$pid" cpu) && got="$(cat "$d/cpu.cfs_quota_us")/$(cat "$d/cpu.cfs_period_us")"
                is "$got" 50000/100000 "host: cpu.cfs_quota_us/period after update --cpus 0.5"
        else
                d=$(proc_cgroup_dir "$pid" "")
                is "$(cat "$d/cpu.max")" "50000 100000" "host: cpu.max after update --cpus 0.5"
        fi
        # --- podman stats: the CPU of a busy container --------------------------------------------------------
        pm_out out exec -d "$c2" sh -c 'while :; do :; done'
        sleep 3
        cpu=$(podman stats --no-stream --format '{{.CPUPerc}}' "$c2" 2>/dev/null)
        cpu=${cpu%\%}
        ok_desc "stats: a busy container (one spinning shell, --cpus 0.5) shows CPU use ($cpu%), not 0%" \
                awk -v c="${cpu:-0}" 'BEGIN { exit !(c >= 5) }'
        pm_out out rm -f -t 0 "$c2"
else
        skip "update/stats: no cpu/pids controller in the $SDRUN_TEST_LAYOUT layout"
fi

pm_out out rm -f -t 0 "$c"
is "$(podman ps -a -q)" "" "no container left"

done_testing
