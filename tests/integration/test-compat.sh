#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Configs that runc 1.1 and crun accept and that real engines send (issue 12): sdrun accepts them with the
# same effect, checked against runc on the same bundle where the behaviour is compared. And what stays
# refused because it is unsafe (a namespace joined by path that is the runtime's own, no mount namespace
# with something to mount).
. "$(dirname "$0")/lib.sh"

require_root
require_systemd
RUNC=$(command -v runc) || bail "runc is not installed (Debian package runc): it is the control here"
command -v ip >/dev/null || bail "ip is not installed (Debian package iproute2)"
command -v unshare >/dev/null || bail "unshare is not installed (Debian package util-linux)"

sd() { "$SDRUN" --root "$SDRUN_ROOT" "$@"; }

B=$TEST_TMPDIR/b
make_bundle "$B" || bail "make_bundle failed"
cp "$B/config.json" "$TEST_TMPDIR/config.orig"
reset_bundle() {
        cp "$TEST_TMPDIR/config.orig" "$B/config.json"
        bundle_set "$B" '.root.readonly=false | .process.capabilities.ambient=[]'
}

# run_rt RUNTIME [BUNDLE]: run the bundle in the foreground; prints "rc=N" then the output
run_rt() {
        local rt=$1 b=${2:-$B} id out rc=0
        id=$(new_id compat)
        if [ "$rt" = runc ]; then
                out=$("$RUNC" --root "$TEST_TMPDIR/runc" run --bundle "$b" "$id" 2>&1 </dev/null) || rc=$?
                "$RUNC" --root "$TEST_TMPDIR/runc" delete --force "$id" >/dev/null 2>&1
        else
                track_container "$id"
                out=$(sd run --bundle "$b" "$id" 2>&1 </dev/null) || rc=$?
                echo "$id" >"$TEST_TMPDIR/last-id"
        fi
        printf 'rc=%s\n%s\n' "$rc" "$out"
}

# same DESC: sdrun and runc give the same exit status and output on the bundle as it is now (sdrun first:
# what the first run creates in the rootfs, the second finds)
same() {
        local a b
        b=$(run_rt sdrun | grep -v '^sdrun: .*ignoring it\.$')
        a=$(run_rt runc | grep -v 'level=warning')
        if [ "$a" = "$b" ]; then
                _tap_result 0 "$1: runc and sdrun agree"
        else
                _tap_result 1 "$1: runc and sdrun agree"
                diff <(echo "$a") <(echo "$b") | _tap_diag_stream
        fi
        like "$b" '^rc=0' "$1: sdrun runs it"
}

# 1. Docker: blockIO.weight 0 and cpu.shares 0 mean "not set"
reset_bundle
bundle_set "$B" '.linux.resources.blockIO={weight: 0, leafWeight: 0} | .linux.resources.cpu={shares: 0, quota: 0, period: 0}
        | .process.args=["echo","ok"]'
same "Docker's blockIO.weight 0 and cpu.shares 0"
reset_bundle
bundle_set "$B" '.linux.resources.blockIO={weight: 5}'
out=$(run_rt sdrun)
like "$out" 'linux.resources.blockIO.weight: value 5 out of range' "blockIO.weight 5 still refused, naming the JSON path"
# a blockIO limit on a device that is not a block device (1:3, /dev/null): runc fails (the kernel refuses the
# throttle file); systemd would skip the device without an error and the limit would silently not apply
reset_bundle
bundle_set "$B" '.linux.resources.blockIO={throttleReadBpsDevice: [{major: 1, minor: 3, rate: 1048576}]}
        | .process.args=["echo","ok"]'
out=$(run_rt runc)
like "$out" '^rc=[1-9]' "blockIO.throttleReadBpsDevice on 1:3 (not a block device): runc fails"
out=$(run_rt sdrun)
like "$out" '^rc=1' "... and so does sdrun"
like "$out" 'linux\.resources\.blockIO\.throttleReadBpsDevice\[0\]: 1:3 is not a block device' \
        "... naming the JSON path and the device"
# Podman reads "no such file or directory" in a runtime's error as "command not found" (exit 127)
unlike "$out" '[Nn]o such file or directory' "... without ENOENT's text, which Podman would report as exit 127"
no_leftovers "$(cat "$TEST_TMPDIR/last-id")"

# 2. Podman: devices[].fileMode with the file-type bits (020666)
reset_bundle
bundle_set "$B" '.linux.devices=[{path: "/dev/fuse2", type: "c", major: 10, minor: 229, fileMode: 8630, uid: 0, gid: 0}]
        | .process.args=["sh","-c","stat -c \"%a %F %t:%T\" /dev/fuse2"]'
same "linux.devices[0].fileMode 020666 (raw st_mode)"
like "$(run_rt sdrun)" '666 character special file a:e5' "fileMode masked to 0666, type from \"type\""

# 3. rootfsPropagation r-forms
for p in rprivate rslave rshared; do
        reset_bundle
        bundle_set "$B" '.linux.rootfsPropagation=$p | .process.args=["echo","ok"]' --arg p "$p"
        same "linux.rootfsPropagation $p"
done
reset_bundle
bundle_set "$B" '.linux.rootfsPropagation="rshared" | .process.args=["sh","-c","grep -c shared: /proc/self/mountinfo"]'
like "$(run_rt sdrun)" $'^rc=0\n[1-9]' "rshared: the container's mounts are shared"

# 4. an unknown capability: warned about (naming the JSON path) and skipped
reset_bundle
bundle_set "$B" '.process.capabilities.bounding += ["CAP_NOT_YET_INVENTED"] | .process.capabilities.permitted += ["CAP_NOT_YET_INVENTED"]
        | .process.args=["sh","-c","grep -E \"^Cap(Bnd|Prm)\" /proc/self/status"]'
same "unknown capability CAP_NOT_YET_INVENTED"
out=$(run_rt sdrun)
like "$out" 'process.capabilities.bounding\[[0-9]+\]: unknown capability "CAP_NOT_YET_INVENTED", ignoring it' \
        "the warning names the JSON path"
is "$(grep -c 'process.capabilities.bounding\[[0-9]*\]: unknown capability' <<<"$out")" 1 \
        "the warning is said once, not again by start and delete reading the stored config"

# a namespace with an empty path is a new one, as runc takes it (crun fails to open ""), with a warning
reset_bundle
bundle_set "$B" '.linux.namespaces |= map(if .type == "uts" then .path = "" else . end) | .hostname="empty-path"
        | .process.args=["hostname"]'
b=$(run_rt sdrun)
a=$(run_rt runc | grep -v 'level=warning')
is "$(echo "$b" | grep -v '^sdrun: ')" "$a" "linux.namespaces[].path \"\": runc and sdrun agree"
is "$a" $'rc=0\nempty-path' "... a new uts namespace with the hostname"
like "$b" 'linux.namespaces\[[0-9]+\].path: empty, taken as no path' "... with a warning naming the JSON path"

# null for an optional member is "not set" to runc and crun (Go, yajl), as in runc's own timens.bats
reset_bundle
bundle_set "$B" '.linux.resources = null | .hooks = {prestart: null} | .annotations = null | .process.rlimits = null
        | .linux.seccomp = null | .hostname = null | .linux.sysctl = null | .process.capabilities.ambient = null
        | .linux.devices = null | .linux.cgroupsPath = null | .process.user.additionalGids = null
        | .process.noNewPrivileges = null | .linux.namespaces |= map(.path = null)
        | .process.args=["sh","-c","hostname | grep -c . ; grep ^CapAmb /proc/self/status"]'
b=$(run_rt sdrun)
a=$(run_rt runc | grep -v 'level=warning')
is "$(echo "$b" | grep -v '^sdrun: ')" "$a" "null for optional members: runc and sdrun agree"
like "$b" '^rc=0' "... sdrun runs it"
like "$b" 'sdrun: linux.resources: null, taken as not set' "... with a warning naming the JSON path"
reset_bundle
bundle_set "$B" '.process.cwd = null'
out=$(run_rt sdrun)
like "$out" '^rc=1.*process.cwd: required property is null' "null for a required member (process.cwd): refused, naming it"
no_leftovers "$(cat "$TEST_TMPDIR/last-id")"

# 4b. more that runc and crun accept: warned about where the spec's letter is stricter
reset_bundle
bundle_set "$B" '.ociVersion="1.0" | .process.user.umask=4095 | .linux.resources.devices += [{allow: true, type: "c", major: 1, minor: 3, access: "rwx"}]
        | .linux.maskedPaths += ["proc/kcore"] | .linux.personality={domain: "LINUX", flags: ["ADDR_NO_RANDOMIZE"]}
        | .linux.resources.memory={kernel: 1048576} | .linux.timeOffsets={boottime: {secs: 1}}
        | .linux.seccomp={defaultAction: "SCMP_ACT_ALLOW", syscalls: [{names: [], action: "SCMP_ACT_ERRNO"}]}
        | .process.args=["sh","-c","umask; head -c1 /dev/null && echo devnull-ok"]'
b=$(run_rt sdrun)
a=$(run_rt runc | grep -v 'level=warning')
is "$(echo "$b" | grep -v '^sdrun: ')" "$a" "ociVersion 1.0, umask 07777, access rwx, relative maskedPaths, personality flags, kernel memory, timeOffsets without a time namespace, a seccomp rule without names: runc and sdrun agree"
like "$b" '^rc=0' "... sdrun runs it"
for w in 'ociVersion: "1.0"' 'linux.resources.devices\[[0-9]+\].access' 'linux.maskedPaths\[[0-9]+\]' 'linux.personality.flags\[0\]' \
        'linux.resources.memory.kernel' 'linux.timeOffsets' 'linux.seccomp.syscalls\[0\].names'; do
        like "$b" "sdrun: $w" "... with a warning naming $w"
done

# process.user with uid only (runc's own capabilities.bats sends {"uid": 0}): gid 0, with a warning
reset_bundle
bundle_set "$B" '.process.user={uid: 0} | .process.args=["id","-g"]'
b=$(run_rt sdrun)
a=$(run_rt runc | grep -v 'level=warning')
is "$(echo "$b" | grep -v '^sdrun: ')" "$a" "process.user without gid: runc and sdrun agree"
is "$a" $'rc=0\n0' "... gid 0"
like "$b" 'sdrun: process.user.gid: required by the runtime-spec but missing' "... with a warning naming process.user.gid"

# cpu.burst larger than the quota: the kernel refuses it, runc and crun do not apply it (the unified box has
# no cpu controller for runc to write cpu.max to: compared in the hybrid layout only)
reset_bundle
bundle_set "$B" '.linux.resources.cpu={quota: 1000, period: 100000, burst: 2000} | .process.args=["echo","ok"]'
[ "$SDRUN_TEST_LAYOUT" = hybrid ] && same "cpu.burst larger than cpu.quota"
like "$(run_rt sdrun)" $'^rc=0\n.*sdrun: linux.resources.cpu.burst: larger than the quota, ignoring it' \
        "cpu.burst larger than cpu.quota: run without it, with a warning naming the JSON path"

# 5. a namespaced sysctl in a network namespace joined by path (Podman's ping_group_range)
NS=sdrun-compat-$$
ip netns add "$NS" || bail "ip netns add failed"
cleanup_add ip netns delete "$NS"
host_pgr=$(cat /proc/sys/net/ipv4/ping_group_range)
reset_bundle
bundle_set "$B" '.linux.namespaces |= map(if .type == "network" then .path = $p else . end)
        | .linux.sysctl={"net.ipv4.ping_group_range": "0 2147483647"} | .process.args=["cat","/proc/sys/net/ipv4/ping_group_range"]' \
        --arg p "/run/netns/$NS"
same "net.ipv4.ping_group_range in a network namespace joined by path"
is "$(ip netns exec "$NS" cat /proc/sys/net/ipv4/ping_group_range | tr -s '\t ' ' ')" "0 2147483647" \
        "the sysctl is set in the joined namespace"
is "$(cat /proc/sys/net/ipv4/ping_group_range)" "$host_pgr" "the host's value is unchanged"
# joined by path, but it is the runtime's own: refused (as runc; crun 1.8 would change the host's value)
reset_bundle
bundle_set "$B" '.linux.namespaces |= map(if .type == "network" then .path = "/proc/self/ns/net" else . end)
        | .linux.sysctl={"net.ipv4.ping_group_range": "0 0"}'
out=$(run_rt sdrun)
like "$out" $'^rc=1\n.*linux.sysctl: "net.ipv4.ping_group_range" needs a network namespace of the container.s own' \
        "the runtime's own network namespace joined by path: refused"
like "$(run_rt runc)" '^rc=1' "runc refuses it too"
is "$(cat /proc/sys/net/ipv4/ping_group_range)" "$host_pgr" "the host's value is unchanged"
no_leftovers "$(cat "$TEST_TMPDIR/last-id")"

# 6. hostname in a uts namespace joined by path (a pod's); the runtime's own is refused
touch "$TEST_TMPDIR/uts"
unshare --uts="$TEST_TMPDIR/uts" hostname outer || bail "unshare --uts failed"
cleanup_add umount "$TEST_TMPDIR/uts"
reset_bundle
bundle_set "$B" '.linux.namespaces |= map(if .type == "uts" then .path = $p else . end) | .hostname="pod-host"
        | .process.args=["hostname"]' --arg p "$TEST_TMPDIR/uts"
same "hostname in a uts namespace joined by path"
like "$(run_rt sdrun)" $'^rc=0\npod-host$' "the hostname is set in the joined namespace"
reset_bundle
bundle_set "$B" '.linux.namespaces |= map(if .type == "uts" then .path = "/proc/self/ns/uts" else . end) | .hostname="evil"'
hn=$(hostname)
like "$(run_rt sdrun)" $'^rc=1\n.*hostname: the uts namespace joined by path is the host.s' \
        "hostname with the runtime's own uts namespace: refused"
is "$(hostname)" "$hn" "the host's name is unchanged"

# 7. kernel.hostname conflicts with hostname (runc and crun refuse it)
reset_bundle
bundle_set "$B" '.hostname="h" | .linux.sysctl={"kernel.hostname": "other"}'
out=$(run_rt sdrun)
like "$out" $'^rc=1\n.*linux.sysctl: "kernel.hostname" conflicts with the "hostname" field' "kernel.hostname next to hostname: refused"
like "$(run_rt runc)" $'^rc=1\n.*kernel.hostname' "runc refuses it too"
no_leftovers "$(cat "$TEST_TMPDIR/last-id")"

# 8. process.cwd missing from the rootfs: created (docker run -w, Kubernetes workingDir)
reset_bundle
bundle_set "$B" '.process.cwd="/work/dir/x" | .process.user={uid: 1000, gid: 1000}
        | .process.args=["sh","-c","pwd; stat -c \"%a %u\" /work/dir/x /work"]'
same "process.cwd /work/dir/x missing from the rootfs"
is "$(stat -c '%a %u' "$B/rootfs/work/dir/x")" "755 0" "created in the rootfs, root-owned, 0755"
rm -rf "$B/rootfs/work"

# 9. bind destinations that are dangling symlinks in the image
reset_bundle
mkdir -p "$B/rootfs/usr/share"
ln -s ../usr/share/zoneinfo/Europe/Paris "$B/rootfs/etc/localtime"
rm -f "$B/rootfs/etc/resolv.conf"
ln -s ../run/systemd/resolve/stub-resolv.conf "$B/rootfs/etc/resolv.conf"
echo zone >"$TEST_TMPDIR/zone"
echo "nameserver 192.0.2.1" >"$TEST_TMPDIR/resolv"
bundle_set "$B" '.mounts += [{destination: "/etc/localtime", type: "bind", source: $z, options: ["rbind","ro"]},
        {destination: "/etc/resolv.conf", type: "bind", source: $r, options: ["rbind","ro"]}]
        | .process.args=["sh","-c","cat /etc/localtime /etc/resolv.conf"]' --arg z "$TEST_TMPDIR/zone" --arg r "$TEST_TMPDIR/resolv"
same "bind onto /etc/localtime and /etc/resolv.conf, dangling symlinks"
ok_desc "the symlinks' targets were created inside the rootfs" \
        test -f "$B/rootfs/usr/share/zoneinfo/Europe/Paris" -a -f "$B/rootfs/run/systemd/resolve/stub-resolv.conf"
rm -rf "$B/rootfs/usr/share/zoneinfo" "$B/rootfs/run/systemd"
# hostile: absolute and ".." symlinks pointing out of the rootfs
ESC=$TEST_TMPDIR/escape
ln -s "$ESC-abs" "$B/rootfs/etc/evil-abs"
ln -s "../../../../../../../../..$ESC-rel" "$B/rootfs/etc/evil-rel"
bundle_set "$B" '.mounts += [{destination: "/etc/evil-abs", type: "bind", source: $z, options: ["bind"]},
        {destination: "/etc/evil-rel", type: "bind", source: $z, options: ["bind"]}]
        | .process.args=["cat","/etc/evil-abs","/etc/evil-rel"]' --arg z "$TEST_TMPDIR/zone"
out=$(run_rt sdrun)
is "$out" $'rc=0\nzone\nzone' "absolute and .. symlink destinations: mounted"
ok_desc "nothing was created outside the rootfs" test ! -e "$ESC-abs" -a ! -e "$ESC-rel"
ok_desc "their targets were created inside the rootfs" test -f "$B/rootfs$ESC-abs" -a -f "$B/rootfs$ESC-rel"
reset_bundle
ln -s loop2 "$B/rootfs/etc/loop1"
ln -s loop1 "$B/rootfs/etc/loop2"
bundle_set "$B" '.mounts += [{destination: "/etc/loop1", type: "bind", source: $z, options: ["bind"]}]' --arg z "$TEST_TMPDIR/zone"
like "$(run_rt sdrun)" $'^rc=1\n.*mounts\\[[0-9]+\\]: mount .* on "/etc/loop1" .*Too many levels of symbolic links' \
        "a symlink loop as destination: refused"
no_leftovers "$(cat "$TEST_TMPDIR/last-id")"
rm -f "$B/rootfs/etc/loop1" "$B/rootfs/etc/loop2" "$B/rootfs/etc/evil-abs" "$B/rootfs/etc/evil-rel"

# 10. bind sources only the host's root can reach, container in a user namespace
PRIV=$TEST_TMPDIR/priv
mkdir -p "$PRIV/sub" && chmod 700 "$PRIV" && echo secret-ok >"$PRIV/sub/file" && chmod 644 "$PRIV/sub/file"
BU=$TEST_TMPDIR/bu
chmod 0755 "$TEST_TMPDIR"
make_bundle "$BU" || bail "make_bundle failed"
chmod 0755 "$BU"
chown -R 100000:100000 "$BU/rootfs"
bundle_set "$BU" '.root.readonly=false | .process.capabilities.ambient=[] | .linux.namespaces += [{type: "user"}]
        | .linux.uidMappings=[{containerID: 0, hostID: 100000, size: 65536}]
        | .linux.gidMappings=[{containerID: 0, hostID: 100000, size: 65536}]
        | .mounts |= map(select(.type != "cgroup"))
        | .mounts += [{destination: "/f", type: "bind", source: $f, options: ["bind"]}] | .process.args=["cat","/f"]' \
        --arg f "$PRIV/sub/file"
a=$(run_rt runc "$BU"); b=$(run_rt sdrun "$BU")
is "$b" "$a" "userns: a file bind source below a 0700 host directory: runc and sdrun agree"
is "$b" $'rc=0\nsecret-ok' "userns: the file is bound"
bundle_set "$BU" '.mounts |= .[:-1] + [{destination: "/data", type: "bind", source: $d, options: ["rbind","ro"]}]
        | .process.args=["sh","-c","cat /data/file; touch /data/x 2>/dev/null || echo read-only"]' --arg d "$PRIV/sub"
is "$(run_rt sdrun "$BU")" $'rc=0\nsecret-ok\nread-only' "userns: a directory bind source below a 0700 host directory, read-only"
bundle_set "$BU" '.mounts |= .[:-1] + [.[-1] + {source: $d}]' --arg d "$PRIV/missing"
like "$(run_rt sdrun "$BU")" $'^rc=1\n.*mounts\\[[0-9]+\\]: mount ".*/priv/missing" on "/data" \\(type bind\\): source: No such file' \
        "userns: a missing bind source: clear error"
no_leftovers "$(cat "$TEST_TMPDIR/last-id")"

# 12. Podman's --ipc=none: no /dev/shm mount, and then no /dev/shm (nor /dev/pts without its mount), as runc
reset_bundle
bundle_set "$B" '.mounts |= map(select(.destination != "/dev/shm" and .destination != "/dev/pts" and .destination != "/dev/mqueue"))
        | .process.args=["ls","-a","/dev"]'
same "no /dev/shm and /dev/pts mounts: the /dev runc makes"
like "$(run_rt sdrun)" $'^rc=0\n(.*\n)*null' "... which lists the default devices"

# 13. no network namespace (Podman's --network=host): a fresh sysfs, as runc mounts, not the host's /sys with
# its submounts (on hybrid the host's cgroup2 at /sys/fs/cgroup/unified; on unified the host's cgroup2 where
# the container's cgroup is then mounted: EBUSY)
reset_bundle
bundle_set "$B" '.linux.namespaces |= map(select(.type != "network"))
        | .process.args=["sh","-c","awk '"'"'$5 ~ \"^/sys(/fs(/cgroup)?)?$\" || $5 == \"/sys/fs/cgroup/unified\" { print $5, $9 }'"'"' /proc/self/mountinfo"]'
same "no network namespace: /sys and /sys/fs/cgroup"
like "$(run_rt sdrun)" $'^rc=0\n/sys sysfs\n' "... /sys is a sysfs of its own"

# 11. no mount namespace. runc 1.1 and crun 1.8 run any config without one: both make mounts[] in the
# runtime's mount namespace and leave them there and write the default devices and the /dev links into the
# root's /dev (with root "/", the host's: /dev/ptmx becomes a symlink); runc also makes the host's mount tree
# rslave and binds the root onto itself (with "/", a second copy of every mount). sdrun runs what mounts
# nothing, as host-level agents ask (root.path the host's "/", no mounts, maskedPaths, readonlyPaths,
# linux.devices, rootfsPropagation nor read-only root), and refuses the rest naming the field.
host_mounts() { cut -d' ' -f4- /proc/self/mountinfo | sort; } # mount ids left out, propagation kept
no_mountns='.linux.namespaces |= map(select(.type != "mount")) | .mounts=[] | .linux.maskedPaths=[]
        | .linux.readonlyPaths=[] | .root.path="/"'
# runc in a mount namespace and with a /dev of its own: what it mounts and writes there stays there
run_runc_private() {
        local id out rc=0
        id=$(new_id compat)
        out=$(unshare -m sh -c 'mount -t tmpfs -o mode=755 runc-dev /dev && exec "$@"' sh \
                "$RUNC" --root "$TEST_TMPDIR/runc" run --bundle "$B" "$id" 2>&1 </dev/null) || rc=$?
        "$RUNC" --root "$TEST_TMPDIR/runc" delete --force "$id" >/dev/null 2>&1
        printf 'rc=%s\n%s\n' "$rc" "$out"
}
reset_bundle
bundle_set "$B" "$no_mountns"' | .process.cwd="/etc"
        | .process.args=["sh","-c","hostname; cat /etc/hostname; pwd; readlink /proc/self/root; cut -d\" \" -f5 /proc/self/mountinfo | sort -u"]'
mounts_before=$(host_mounts)
dev_before=$(ls -la /dev)
a=$(run_runc_private | grep -v 'level=warning')
b=$(run_rt sdrun)
is "$b" "$a" "no mount namespace, root \"/\", no mounts: runc and sdrun agree"
like "$b" $'^rc=0\nsdrun\n'"$(cat /etc/hostname)"$'\n/etc\n/\n' "... sdrun runs it in the host's \"/\" and cwd"
is "$(sed 1,5d <<<"$b")" "$(cut -d' ' -f5 /proc/self/mountinfo | sort -u)" "... where it sees the host's mounts"
is "$(host_mounts)" "$mounts_before" "... and changes none of them (propagation included)"
is "$(ls -la /dev)" "$dev_before" "... nor the host's /dev"
no_leftovers "$(cat "$TEST_TMPDIR/last-id")"
# create, start and exec: an exec'd process is in the host's "/" too, and delete leaves the host as it was
reset_bundle
bundle_set "$B" "$no_mountns"' | .process.args=["sleep","1000"]'
id=$(new_id compat)
track_container "$id"
ok_desc "no mount namespace: create and start" sh -c "cd / && $SDRUN --root $SDRUN_ROOT create --bundle $B $id \
        </dev/null >/dev/null 2>&1 && $SDRUN --root $SDRUN_ROOT start $id"
is "$(cd "$TEST_TMPDIR" && sd exec --cwd /etc "$id" sh -c 'pwd; readlink /proc/self/root; hostname' 2>&1)" \
        $'/etc\n/\nsdrun' "... exec: its --cwd in the host's \"/\", in the container's uts namespace"
ok_desc "... delete --force" sd delete --force "$id"
is "$(host_mounts)" "$mounts_before" "... no mount of the host changed"
no_leftovers "$id"
# a mount namespace joined by path that is the runtime's own is none of the container's
reset_bundle
bundle_set "$B" "$no_mountns"' | .linux.namespaces += [{type: "mount", path: "/proc/self/ns/mnt"}] | .process.args=["pwd"]'
like "$(run_rt sdrun)" $'^rc=0\n/$' "the runtime's mount namespace joined by path, root \"/\", no mounts: runs"

# refused JQ REGEX DESC: the shape, without a mount namespace, refused naming the field; nothing left behind
refused() {
        local out before
        reset_bundle
        bundle_set "$B" "$no_mountns | $1"
        before=$(host_mounts)
        out=$(run_rt sdrun)
        like "$out" $'^rc=1\n''sdrun: run [^ ]+: config\.json: '"$2" "no mount namespace, $3: refused naming the field"
        is "$(host_mounts)" "$before" "... no mount of the host changed"
        no_leftovers "$(cat "$TEST_TMPDIR/last-id")"
}
tail='needs a mount namespace \(linux\.namespaces has no "mount"\)'
refused '.root.path="rootfs"' 'root\.path: "[^"]*/b/rootfs" is not the host.s "/": a root of the container.s own '"$tail" \
        "a root of its own"
refused '.mounts=[{destination: "/proc", type: "proc", source: "proc"}]' \
        'mounts\[0\]: mount "proc" on "/proc" \(type proc\) '"$tail" "mounts"
refused '.linux.maskedPaths=["/proc/kcore"]' 'linux\.maskedPaths\[0\]: masking "/proc/kcore" '"$tail" "maskedPaths"
refused '.linux.readonlyPaths=["/proc/sys"]' 'linux\.readonlyPaths\[0\]: making "/proc/sys" read-only '"$tail" \
        "readonlyPaths"
refused '.root.readonly=true' 'root\.readonly: a read-only root '"$tail" "root.readonly"
refused '.linux.rootfsPropagation="rslave"' 'linux\.rootfsPropagation: "rslave" '"$tail" "rootfsPropagation"
refused '.linux.devices=[{path: "/dev/fuse2", type: "c", major: 10, minor: 229}]' \
        'linux\.devices\[0\]: creating "/dev/fuse2" '"$tail" "linux.devices"
refused '.linux.namespaces += [{type: "mount", path: "/proc/self/ns/mnt"}] | .linux.maskedPaths=["/proc/kcore"]' \
        'linux\.maskedPaths\[0\]: masking "/proc/kcore" needs a mount namespace of the container.s own \(the one linux\.namespaces joins by path is the runtime.s\)' \
        "the runtime's mount namespace joined by path, maskedPaths"

done_testing
