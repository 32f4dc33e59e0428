#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Namespaces and the rest of the process (issue 3): a user namespace with id mappings, joining namespaces
# by path (network, pid: the stage1 path of the bootstrap), a time namespace with offsets, the scheduler,
# ioPriority, execCPUAffinity, personality, memoryPolicy, --no-pivot through the real binary, and a config without a
# process (create accepts it, start refuses it clearly). Checked inside the container and from the host.
. "$(dirname "$0")/lib.sh"

require_root
require_systemd

sd() { "$SDRUN" --root "$SDRUN_ROOT" "$@"; }
status_of() { sd state "$1" 2>/dev/null | jq -r .status; }

B=$TEST_TMPDIR/b
make_bundle "$B" || bail "make_bundle failed"
bundle_set "$B" 'del(.linux.resources)'
# With a cgroup namespace of its own on every layout (`sdrun spec`, as runc's, has one on cgroup v2 only):
# the joining tests below take it from the first container.
jq '.linux.namespaces |= (if any(.[]; .type == "cgroup") then . else . + [{type: "cgroup"}] end)' \
        "$B/config.json" >"$TEST_TMPDIR/base.json" || bail "jq failed"
reset_bundle() { cp "$TEST_TMPDIR/base.json" "$B/config.json"; }

# run_sh JQ CMD: run the bundle edited by JQ with process.args=["sh","-c",CMD]; output in $out, status in $rc
run_sh() {
        local id
        id=$(new_id ns); track_container "$id"
        reset_bundle
        bundle_set "$B" "$1 | .process.args=[\"sh\",\"-c\",\$c]" --arg c "$2"
        rc=0; out=$(sd run --bundle "$B" "$id" 2>"$TEST_TMPDIR/err") || rc=$?
        [ $rc = 0 ] || diag "run failed ($rc): $(cat "$TEST_TMPDIR/err")"
        no_leftovers "$id"
}

# ---------------------------------------------------------------------------------------------------------
# a user namespace with id mappings: root inside is 100000 outside. As with runc, the mapped root must be
# able to reach the rootfs: the test directory is made traversable.
chmod 0755 "$TEST_TMPDIR" "$B"

id=$(new_id userns); track_container "$id"
reset_bundle
bundle_set "$B" '.linux.namespaces += [{type: "user"}] |
        .linux.uidMappings=[{containerID: 0, hostID: 100000, size: 65536}] |
        .linux.gidMappings=[{containerID: 0, hostID: 100000, size: 65536}] |
        .process.args=["sleep","30"]'
ok_desc "userns: run --detach" sd run --detach --bundle "$B" "$id"
pid=$(sd state "$id" | jq -r .pid)
wait_for test -n "$(cat "/proc/$pid/uid_map" 2>/dev/null)"
like "$(awk '/^Uid:/ {print $2}' "/proc/$pid/status")" '^100000$' "userns: the init runs as host uid 100000"
like "$(tr -s ' ' <"/proc/$pid/uid_map")" '^ *0 100000 65536' "userns: uid_map written by the runtime"
like "$(tr -s ' ' <"/proc/$pid/gid_map")" '^ *0 100000 65536' "userns: gid_map written by the runtime"
isnt_host() { [ "$(readlink "/proc/$pid/ns/user")" != "$(readlink /proc/self/ns/user)" ]; }
ok_desc "userns: the init is in its own user namespace" isnt_host
ok_desc "userns: delete --force" sd delete --force "$id"
no_leftovers "$id"

run_sh '.linux.namespaces += [{type: "user"}] |
        .linux.uidMappings=[{containerID: 0, hostID: 100000, size: 65536}] |
        .linux.gidMappings=[{containerID: 0, hostID: 100000, size: 65536}]' \
        'id -u; id -g; cat /dev/null && echo devnull-ok; awk "{print \$1, \$2, \$3}" /proc/self/uid_map'
is "$out" $'0\n0\ndevnull-ok\n0 100000 65536' "userns: root inside, devices usable (bound from the host), the map seen inside"

# a user namespace whose mappings have no root (runc issue 1800: only the user the process runs as): the
# init takes the lowest mapped ids instead of root; run and exec work; crun (the control) runs it too
id=$(new_id noroot); track_container "$id"
reset_bundle
chown -R 100000:200000 "$B/rootfs"
# (a control of an earlier test in the lane, crun's or runc's, may have chowned the box's /dev/null: back to 0:0,
# so that what is checked below is sdrun's doing)
if [ "$(stat -c %u:%g /dev/null)" != 0:0 ]; then
        diag "an earlier test left this box's /dev/null owned by $(stat -c %u:%g /dev/null): given back to 0:0"
        chown 0:0 /dev/null
fi
bundle_set "$B" '.linux.namespaces += [{type: "user"}] | .linux.uidMappings=[{containerID: 1000, hostID: 100000, size: 1}]
        | .linux.gidMappings=[{containerID: 1000, hostID: 200000, size: 1}] | .process.user={uid: 1000, gid: 1000}
        | (.mounts[] | select(.destination == "/dev/pts") | .options) -= ["gid=5"]
        | .process.args=["sh","-c","id -u; id -g; tr -s \" \" </proc/self/uid_map"]'
rc=0; out=$(sd run --bundle "$B" "$id" 2>&1 </dev/null) || rc=$?
is "$rc:$(paste -sd, - <<<"$out")" "0:1000,1000, 1000 100000 1" "userns without a root mapping: runs as 1000, mapped to 100000"
is "$(stat -c %u:%g /dev/null)" 0:0 "userns without a root mapping: the caller's /dev/null (its stdin) is not chowned to the user"
no_leftovers "$id"
jq '.ociVersion="1.0.2"' "$B/config.json" >"$TEST_TMPDIR/crun.json" && cp "$TEST_TMPDIR/crun.json" "$B/config.json"
# (crun's stdin a pipe, not the box's /dev/null: crun 1.8.1 chowns its stdio to the process's user, and a
# /dev/null owned by 100000:200000 then broke later tests of the lane, such as runc's own "exec --user vs
# /dev/null ownership"; sdrun, as runc now, leaves a device of the caller's alone)
rc=0; cout=$(: | crun --root "$TEST_TMPDIR/crun" run --bundle "$B" "c$id" 2>&1) || rc=$?
crun --root "$TEST_TMPDIR/crun" delete -f "c$id" >/dev/null 2>&1
if [ "$(stat -c %u:%g /dev/null)" != 0:0 ]; then
        diag "crun (control) chowned this box's /dev/null to $(stat -c %u:%g /dev/null): given back to 0:0"
        chown 0:0 /dev/null
fi
is "$rc:$cout" "0:$out" "userns without a root mapping: crun (the control) the same"
bundle_set "$B" '.process.args=["sleep","30"]'
ok_desc "userns without a root mapping: run --detach" sd run --detach --bundle "$B" "$id"
is "$(sd exec "$id" sh -c 'id -u; id -g' 2>&1 | paste -sd, -)" "1000,1000" "userns without a root mapping: exec runs as 1000 too"
ok_desc "userns without a root mapping: delete --force" sd delete --force "$id"
no_leftovers "$id"
chown -R 0:0 "$B/rootfs"

# a user namespace joined by path (a bind-mounted nsfs file, of a container gone since) with a network
# namespace it does not own (runc issue 4390: the host's here, so /sys is bound from the host): the network
# namespace is joined first, while the runtime still has the host's privilege over it. Nothing of the
# container's mounts may reach the host's mount table (crun 1.8 leaks its cgroup mounts there in this case:
# no control).
ida=$(new_id extu); track_container "$ida"
reset_bundle
chown -R 100000:100000 "$B/rootfs"
bundle_set "$B" '.linux.namespaces += [{type: "user"}] | .linux.uidMappings=[{containerID: 0, hostID: 100000, size: 65536}]
        | .linux.gidMappings=[{containerID: 0, hostID: 100000, size: 65536}] | .process.args=["sleep","30"]'
ok_desc "external userns: a container to take the user namespace from" sd run --detach --bundle "$B" "$ida"
up=$TEST_TMPDIR/userns np=$TEST_TMPDIR/netns
touch "$up" "$np"
mount --bind "/proc/$(sd state "$ida" | jq -r .pid)/ns/user" "$up" && cleanup_add umount "$up"
sd delete --force "$ida"
mount --bind /proc/self/ns/net "$np" && cleanup_add umount "$np"
host_mounts=$(wc -l </proc/self/mountinfo)
id=$(new_id extu); track_container "$id"
bundle_set "$B" '.linux.namespaces |= map(if .type == "user" then .path = $u elif .type == "network" then .path = $n else . end)
        | del(.linux.uidMappings) | del(.linux.gidMappings)
        | .mounts |= map((select(.type == "sysfs") | {source: "/sys", destination: .destination, type: "bind", options: ["rbind"]}) // .)
        | .process.args=["sh","-c","readlink /proc/self/ns/user; readlink /proc/self/ns/net"]' \
        --arg u "$up" --arg n "$np"
cp "$B/config.json" "$TEST_TMPDIR/extu.json"
rc=0; out=$(sd run --bundle "$B" "$id" 2>&1 </dev/null) || rc=$?
is "$rc:$(paste -sd, - <<<"$out")" "0:user:[$(stat -c %i "$up")],net:[$(stat -c %i "$np")]" \
        "a user namespace joined by path with a network namespace it does not own: both joined"
is "$(wc -l </proc/self/mountinfo)" "$host_mounts" "... and the host's mount table is as it was"
no_leftovers "$id"
# /sys bound from the host holds the host's cgroup2: from a user namespace a fresh one cannot be mounted over
# it (EBUSY, on a real v2 host too), so the container's own cgroup is bound there, as runc does; a new user
# namespace here (Podman's --userns with --network=host)
id=$(new_id extu); track_container "$id"
bundle_set "$B" '.linux.namespaces |= map(if .type == "user" then del(.path) else . end)
        | .linux.uidMappings=[{containerID: 0, hostID: 100000, size: 65536}]
        | .linux.gidMappings=[{containerID: 0, hostID: 100000, size: 65536}]
        | .process.args=["sh","-c","cat /sys/fs/cgroup/cgroup.procs 2>/dev/null | paste -sd, -; echo ran"]'
rc=0; out=$(sd run --bundle "$B" "$id" 2>&1 </dev/null) || rc=$?
if [ "$(stat -fc %T /sys/fs/cgroup)" = cgroup2fs ]; then
        # the container's cgroup holds its pid 1 (and cat); the host's root cgroup would not
        like "$rc:$out" $'^0:1(,[0-9]+)*\nran$' "a user namespace with /sys bound from the host: /sys/fs/cgroup is the container's own cgroup"
else
        like "$rc:$out" '^0:ran$' "a user namespace with /sys bound from the host: runs, the v1 hierarchies on a tmpfs"
fi
no_leftovers "$id"
chown -R 0:0 "$B/rootfs"

# ---------------------------------------------------------------------------------------------------------
# joining namespaces by path: a network namespace made with ip netns, and the pid namespace of a container

netns=sdt-ns-$$
if ip netns add "$netns" 2>/dev/null; then
        cleanup_add ip netns delete "$netns"
        ip netns exec "$netns" ip link set lo up
        ip -n "$netns" link add sdt-dummy0 type dummy 2>/dev/null || true
        run_sh ".linux.namespaces |= map(if .type == \"network\" then .path = \"/run/netns/$netns\" else . end)" \
                'stat -L -c %i /proc/self/ns/net; ls /sys/class/net | sort | paste -sd,'
        lines=(); while IFS= read -r l; do lines+=("$l"); done <<<"$out"
        is "${lines[0]:-}" "$(stat -L -c %i "/run/netns/$netns")" "netns by path: the container is in the given network namespace"
        like "${lines[1]:-}" 'lo' "netns by path: sysfs shows that namespace's interfaces: ${lines[1]:-}"
else
        ok_desc "ip netns add works" false
fi

ida=$(new_id pidA); track_container "$ida"
reset_bundle
bundle_set "$B" '.process.args=["sleep","30"]'
ok_desc "pid ns by path: first container runs" sd run --detach --bundle "$B" "$ida"
pida=$(sd state "$ida" | jq -r .pid)
run_sh ".linux.namespaces |= map(if .type == \"pid\" then .path = \"/proc/$pida/ns/pid\" else . end)" \
        'ps -o pid,args | grep -v "ps -o" | grep "sleep 30" | awk "{print \$1}"; echo self=$$'
lines=(); while IFS= read -r l; do lines+=("$l"); done <<<"$out"
is "${lines[0]:-}" 1 "pid ns by path: the second container sees the first one's init as pid 1"
unlike "${lines[1]:-}" '^self=1$' "pid ns by path: the second container's process is not pid 1 there (${lines[1]:-})"
ok_desc "pid ns by path: delete the first container" sd delete --force "$ida"
no_leftovers "$ida"

# ---------------------------------------------------------------------------------------------------------
# a time namespace with offsets (made by the init, which writes the offsets before anything is in it)

host_up=$(cut -d. -f1 /proc/uptime)
run_sh '.linux.namespaces += [{type: "time"}] | .linux.timeOffsets={boottime: {secs: 86400, nanosecs: 0}, monotonic: {secs: 3600, nanosecs: 0}}' \
        'cut -d. -f1 /proc/uptime; readlink /proc/self/ns/time'
lines=(); while IFS= read -r l; do lines+=("$l"); done <<<"$out"
ok_desc "time namespace: boottime is 86400 s ahead inside (${lines[0]:-?} vs host $host_up)" \
        test "${lines[0]:-0}" -ge $((host_up + 86000))
isnt() { [ "$1" != "$2" ]; }
ok_desc "time namespace: the process is in its own time namespace" isnt "${lines[1]:-}" "$(readlink /proc/self/ns/time)"

# a user and a time namespace together, then a second container that joins every namespace of the first
# but its mount namespace (runc's run.bats "joining existing container namespaces"): the time namespace must
# belong to the container's user namespace, or the second container, which joins that user namespace first,
# may not enter it.
ida=$(new_id tnsA); track_container "$ida"
reset_bundle
bundle_set "$B" '.linux.namespaces += [{type: "user"}, {type: "time"}] |
        .linux.uidMappings=[{containerID: 0, hostID: 100000, size: 100}] |
        .linux.gidMappings=[{containerID: 0, hostID: 200000, size: 200}] |
        .linux.timeOffsets={monotonic: {secs: 7881, nanosecs: 2718281}, boottime: {secs: 1337, nanosecs: 3141519}} |
        .process.args=["sleep","300"]'
offs() { sd exec "$1" cat /proc/self/timens_offsets 2>&1 | tr -s ' ' | paste -sd, -; }
ok_desc "userns+timens: create" sd create --bundle "$B" "$ida"
ok_desc "userns+timens: start" sd start "$ida"
pida=$(sd state "$ida" | jq -r .pid)
is "$(offs "$ida")" "monotonic 7881 2718281,boottime 1337 3141519" "userns+timens: exec after start sees the offsets"
owner_ok() {
        [ "$(readlink "/proc/$pida/ns/time")" != "$(readlink /proc/self/ns/time)" ] &&
                [ "$(readlink "/proc/$pida/ns/user")" != "$(readlink /proc/self/ns/user)" ]
}
ok_desc "userns+timens: the init has a user and a time namespace of its own" owner_ok

idb=$(new_id tnsB); track_container "$idb"
bundle_set "$B" '.linux.namespaces |= map(.path = if .type == "mount" then "" else
                "/proc/" + $p + "/ns/" + ({network: "net"}[.type] // .type) end) |
        .linux |= (del(.uidMappings) | del(.gidMappings) | del(.timeOffsets))' --arg p "$pida"
rc=0; sd run --detach --bundle "$B" "$idb" 2>"$TEST_TMPDIR/err" || rc=$?
is "$rc" 0 "joining all namespaces of a userns+timens container: run --detach ($(tr '\n' ' ' <"$TEST_TMPDIR/err"))"
pidb=$(sd state "$idb" 2>/dev/null | jq -r .pid)
same_ns() {
        local t
        for t in user time pid net ipc uts cgroup; do
                [ "$(readlink "/proc/$pida/ns/$t")" = "$(readlink "/proc/$pidb/ns/$t")" ] || { diag "$t differs"; return 1; }
        done
        [ "$(readlink "/proc/$pida/ns/mnt")" != "$(readlink "/proc/$pidb/ns/mnt")" ]
}
ok_desc "joined: the same user, time, pid, net, ipc, uts and cgroup namespaces, its own mount namespace" same_ns
is "$(sd exec "$idb" ps -o args 2>&1 | grep -c '^sleep 300')" 2 "joined: both inits are seen in the shared pid namespace"
is "$(sd exec "$idb" cat /proc/self/uid_map /proc/self/gid_map 2>&1 | tr -s ' ' | paste -sd, -)" \
        " 0 100000 100, 0 200000 200" "joined: the same uid and gid mappings"
is "$(offs "$idb")" "monotonic 7881 2718281,boottime 1337 3141519" "joined: the same time offsets"
# its cgroup namespace is the first container's: a fresh cgroup mount, rooted at the first one's cgroup,
# whose processes are the first init (pid 1 there)
if [ "$(stat -fc %T /sys/fs/cgroup)" = cgroup2fs ]; then procs=/sys/fs/cgroup/cgroup.procs; else procs=/sys/fs/cgroup/systemd/cgroup.procs; fi
is "$(sd exec "$idb" cat "$procs" 2>&1 | paste -sd, -)" 1 \
        "joined cgroup namespace: /sys/fs/cgroup is the first container's cgroup (its cgroup.procs: its init)"
ok_desc "joined: delete the second container" sd delete --force "$idb"
no_leftovers "$idb"
ok_desc "joined: delete the first container" sd delete --force "$ida"
no_leftovers "$ida"

# the cgroup namespace of another container alone (Podman's --cgroupns=container:ID): /sys/fs/cgroup is a
# fresh cgroup mount, rooted at the other container's cgroup, so that the container's own cgroup is "/.." from
# there; runc, on the same bundle, is the control.
RUNC=$(command -v runc) || bail "runc is not installed (Debian package runc): it is the control here"
ida=$(new_id cgnsA); track_container "$ida"
reset_bundle
bundle_set "$B" '.process.args=["sleep","300"]'
ok_desc "cgroupns of another container: the first runs" sd run --detach --bundle "$B" "$ida"
pida=$(sd state "$ida" | jq -r .pid)
bundle_set "$B" '.linux.namespaces |= map(if .type == "cgroup" then .path = "/proc/" + $p + "/ns/cgroup" else . end) |
        .process.args=["sh","-c","grep ^0:: /proc/self/cgroup; test -e /sys/fs/cgroup/cgroup.procs -o -e /sys/fs/cgroup/systemd/cgroup.procs && echo mounted"]' \
        --arg p "$pida"
cgns_out() { sed -E 's#^0::(/\.\.)+/.*\.scope$#0::/../SCOPE#'; } # runc's scope is in system.slice, ours in machine.slice
idb=$(new_id cgnsB); track_container "$idb"
rc=0; out=$(sd run --bundle "$B" "$idb" 2>&1 </dev/null) || rc=$?
is "$rc:$(cgns_out <<<"$out" | paste -sd, -)" "0:0::/../SCOPE,mounted" \
        "cgroupns of another container: its own cgroup is outside that namespace's root, the cgroup mount works"
no_leftovers "$idb"
rc=0; out=$("$RUNC" --root "$TEST_TMPDIR/runc" --systemd-cgroup run --bundle "$B" "rc-$idb" 2>&1 </dev/null) || rc=$?
"$RUNC" --root "$TEST_TMPDIR/runc" delete --force "rc-$idb" >/dev/null 2>&1
is "$rc:$(cgns_out <<<"$out" | paste -sd, -)" "0:0::/../SCOPE,mounted" "cgroupns of another container: runc (the control) the same"
ok_desc "cgroupns of another container: delete the first" sd delete --force "$ida"
no_leftovers "$ida"

# ---------------------------------------------------------------------------------------------------------
# scheduler, ioPriority, execCPUAffinity, personality

run_sh '.process.scheduler={policy: "SCHED_BATCH", nice: 5}' 'grep -E "^policy" /proc/self/sched | tr -s " "; cut -d" " -f19 /proc/self/stat'
is "$out" $'policy : 3\n5' "scheduler: SCHED_BATCH (policy 3) with nice 5"
run_sh '.process.ioPriority={class: "IOPRIO_CLASS_IDLE", priority: 0}' 'ionice'
like "$out" '^idle' "ioPriority: IOPRIO_CLASS_IDLE (ionice inside: $out)"
run_sh '.process.ioPriority={class: "IOPRIO_CLASS_BE", priority: 6}' 'ionice'
like "$out" 'best-effort.*6' "ioPriority: IOPRIO_CLASS_BE 6 (ionice inside: $out)"
run_sh '.process.execCPUAffinity={initial: "0", final: "0"}' 'grep Cpus_allowed_list /proc/self/status | tr -d "\t "'
is "$out" "Cpus_allowed_list:0" "execCPUAffinity.final: the process runs on CPU 0 only"
run_sh '.linux.personality={domain: "LINUX32"}' 'uname -m'
like "$out" '^i[3-6]86$' "personality LINUX32: uname -m says $out"
run_sh '.linux.memoryPolicy={mode: "MPOL_BIND", nodes: "0"}' 'head -1 /proc/self/numa_maps'
like "$out" ' bind:0 ' "memoryPolicy MPOL_BIND 0: numa_maps shows bind:0 ($out)"
run_sh '.linux.memoryPolicy={mode: "MPOL_PREFERRED", nodes: "0"}' 'head -1 /proc/self/numa_maps'
like "$out" ' prefer:0 ' "memoryPolicy MPOL_PREFERRED 0: numa_maps shows prefer:0 ($out)"
# an empty memoryPolicy: runc takes it as no policy (runc's memorypolicy.bats), so do we, with a warning
run_sh '.linux.memoryPolicy={}' 'head -1 /proc/self/numa_maps'
like "$out" ' default ' "memoryPolicy {}: numa_maps shows default ($out)"

# ---------------------------------------------------------------------------------------------------------
# --no-pivot (ramfs roots): MS_MOVE + chroot through the real binary

id=$(new_id nopivot); track_container "$id"
reset_bundle
bundle_set "$B" '.process.args=["sh","-c","pwd; readlink /proc/self/cwd; test -x /bin/busybox && echo inside"]'
rc=0; out=$(sd run --no-pivot --bundle "$B" "$id" 2>&1) || rc=$?
is "$rc:$out" $'0:/\n/\ninside' "--no-pivot: the container runs in its rootfs, cwd /"
no_leftovers "$id"

# ---------------------------------------------------------------------------------------------------------
# no process: create accepts it (the spec requires process only for start); start refuses it clearly

id=$(new_id noproc); track_container "$id"
reset_bundle
bundle_set "$B" 'del(.process)'
ok_desc "no process: create succeeds" sd create --bundle "$B" "$id"
is "$(status_of "$id")" created "no process: the container is created"
rc=0; err=$(sd start "$id" 2>&1) || rc=$?
is "$rc" 1 "no process: start fails"
like "$err" 'no process' "no process: start says why: $err"
ok_desc "no process: delete --force" sd delete --force "$id"
no_leftovers "$id"

done_testing
