#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# src/init/rootfs.c, mount.c, devices.c through tests/integration/rootfs-driver (no lifecycle, no
# systemd needed; root only): mounts and their options as mountinfo shows them inside, /dev, masked and
# read-only paths, root.readonly, hostile bundles, and no mount leaking into the host.
. "$(dirname "$0")/lib.sh"

require_root
: "${ROOTFS_DRIVER:=$SDRUN_BUILDDIR/tests/integration/rootfs-driver}"
[ -x "$ROOTFS_DRIVER" ] || bail "rootfs-driver not built: $ROOTFS_DRIVER"

host_mounts() { awk -v t="$TEST_TMPDIR" 'index($5, t) != 1 {print $5}' /proc/self/mountinfo | sort; }
host_before=$(host_mounts)

drv() { # drv BUNDLE [OPTS] -- CMD...
        local b=$1
        shift
        local opts=()
        while [ "$1" != -- ]; do opts+=("$1"); shift; done
        shift
        rc=0
        out=$("$ROOTFS_DRIVER" "${opts[@]}" "$b" -- "$@" 2>&1 </dev/null) || rc=$?
}
mi_line() { # mi_line MOUNTPOINT: the mountinfo line of the last mount on it, from $out
        awk -v m="$1" '$5 == m { l = $0 } END { print l }' <<<"$out"
}

B=$TEST_TMPDIR/b
make_bundle "$B" || bail "make_bundle failed"
bundle_set "$B" '.root.readonly=true' || bail "bundle_set failed"

# ---------------------------------------------------------------------------------------------------
# the default mounts of `sdrun spec`

drv "$B" -- cat /proc/self/mountinfo
is "$rc" 0 "default bundle: container runs"
like "$(mi_line /)" '^[0-9]+ [0-9]+ [^ ]+ [^ ]+ / ro[, ]' "root.readonly: / is mounted ro"
like "$(mi_line /proc)" ' - proc ' "proc mounted on /proc"
like "$(mi_line /dev)" ' /dev rw,nosuid[ ,].*tmpfs .*size=65536k' "/dev: tmpfs, nosuid, size=65536k"
like "$(mi_line /dev)" 'mode=755' "/dev: mode=755"
like "$(mi_line /dev/pts)" ' - devpts .*ptmxmode=666' "devpts with ptmxmode=666"
like "$(mi_line /dev/pts)" 'nosuid,noexec' "devpts nosuid,noexec"
like "$(mi_line /dev/shm)" 'rw,nosuid,nodev,noexec.* - tmpfs shm .*size=65536k' "/dev/shm tmpfs nosuid,nodev,noexec"
like "$(mi_line /dev/mqueue)" ' - mqueue ' "mqueue on /dev/mqueue"
like "$(mi_line /sys)" ' /sys ro,nosuid,nodev,noexec.* - sysfs ' "sysfs read-only on /sys"
if [ "$SDRUN_TEST_LAYOUT" = unified ]; then
        like "$(mi_line /sys/fs/cgroup)" ' ro,nosuid,nodev,noexec.* - cgroup2 ' "cgroup2 read-only on /sys/fs/cgroup"
else
        like "$(mi_line /sys/fs/cgroup)" ' - tmpfs ' "hybrid: tmpfs on /sys/fs/cgroup"
        like "$(mi_line /sys/fs/cgroup/memory)" ' ro,nosuid,nodev,noexec,relatime( [^ ]+:[0-9]+)* - cgroup cgroup .*memory' \
                "hybrid: memory hierarchy, ro"
        like "$(mi_line /sys/fs/cgroup/systemd)" ' - cgroup cgroup .*name=systemd' "hybrid: name=systemd hierarchy"
        # As runc and crun: a systemd inside would take the layout for hybrid and fail to find its own cgroup
        # there (test-podman-systemd.sh boots one).
        is "$(awk '$5 ~ "^/sys/fs/cgroup" && / - cgroup2 /' <<<"$out")" "" \
                "hybrid: the cgroup2 hierarchy (/sys/fs/cgroup/unified) is not mounted in the container"
fi
like "$(mi_line /proc/sys)" ' /proc/sys ro[, ]' "readonlyPaths: /proc/sys is ro"
like "$(mi_line /proc/acpi)" ' /proc/acpi ro,.* - tmpfs ' "maskedPaths: /proc/acpi is a ro tmpfs"
like "$(mi_line /proc/keys)" ' /null /proc/keys ' "maskedPaths: /proc/keys is /dev/null"

drv "$B" -- sh -c 'cat /proc/keys | wc -c; ls -A /proc/acpi | wc -l; touch /proc/acpi/x 2>/dev/null && echo writable; true'
is "$out" $'0\n0' "masked paths read as empty and cannot be written"

drv "$B" --drop-sys-admin -- sh -c 'mount -o remount,rw /proc/sys 2>/dev/null && echo remounted; umount /proc/keys 2>/dev/null && echo unmounted; umount /proc/acpi 2>/dev/null && echo unmounted; { echo 1 > /proc/sys/vm/overcommit_memory; } 2>/dev/null && echo written; cat /proc/keys | wc -c'
is "$out" 0 "without CAP_SYS_ADMIN: readonly paths cannot be remounted rw, masks cannot be unmounted"

drv "$B" -- sh -c 'touch /newfile 2>/dev/null && echo created; touch /dev/shm/f && echo shm-ok'
is "$out" shm-ok "root.readonly: / is not writable, /dev/shm is"
bundle_set "$B" '.root.readonly=false'
drv "$B" -- sh -c 'touch /newfile && echo created && rm /newfile'
is "$out" created "root.readonly=false: / is writable"

# ---------------------------------------------------------------------------------------------------
# /dev

drv "$B" -- sh -c 'ls -l /dev | awk "{print \$1, \$3, \$4, \$5, \$6, \$NF}"'
printf '%s\n' "$out" >"$TEST_TMPDIR/devs"
for d in "null 1, 3" "zero 1, 5" "full 1, 7" "random 1, 8" "urandom 1, 9" "tty 5, 0"; do
        set -- $d
        ok_desc "/dev/$1: char $2$3 mode 0666 root" grep -qx "crw-rw-rw- root root $2 $3 $1" "$TEST_TMPDIR/devs"
done
for l in "fd /proc/self/fd" "stdin /proc/self/fd/0" "stdout /proc/self/fd/1" "stderr /proc/self/fd/2" "ptmx pts/ptmx"; do
        set -- $l
        drv "$B" -- readlink "/dev/$1"
        is "$out" "$2" "/dev/$1 -> $2"
done
drv "$B" -- sh -c 'ls /dev/fd/ >/dev/null && test -c /dev/pts/ptmx && test -d /dev/shm && echo ok'
is "$out" ok "/dev/fd lists, /dev/pts/ptmx is a char device, /dev/shm exists"

bundle_set "$B" '.linux.devices=[{"path":"/dev/mydev","type":"c","major":1,"minor":3,"fileMode":384,"uid":1000,"gid":1001},
        {"path":"/dev/sub/fifo","type":"p","fileMode":416},{"path":"/dev/null","type":"c","major":1,"minor":3,"fileMode":438,"uid":5}]'
drv "$B" -- sh -c 'ls -ln /dev/mydev /dev/sub/fifo /dev/null | awk "{print \$1, \$3, \$4}"'
is "$out" $'crw------- 1000 1001\ncrw-rw-rw- 5 0\nprw-r----- 0 0' "linux.devices: nodes with mode, uid, gid; overrides a default device"
bundle_set "$B" 'del(.linux.devices)'

bundle_set "$B" '.process.terminal=true'
drv "$B" -- sh -c 'test -f /dev/console && test ! -s /dev/console && echo placeholder'
is "$out" placeholder "process.terminal: /dev/console placeholder is an empty regular file"
bundle_set "$B" '.process.terminal=false'

# ---------------------------------------------------------------------------------------------------
# config mounts with options

hostfile=$TEST_TMPDIR/hostfile
echo hello >"$hostfile"
src=$TEST_TMPDIR/src
mkdir -p "$src/sub"
mount -t tmpfs -o size=1m subtmp "$src/sub" || bail "cannot mount a tmpfs on $src/sub"
cleanup_add umount -l "$src/sub"
touch "$src/sub/subfile"
mount --make-shared "$src/sub" || bail "cannot make $src/sub shared"

B2=$TEST_TMPDIR/b2
make_bundle "$B2"
bundle_set "$B2" '.root.readonly=false | .mounts += [
 {"destination":"/mnt/t","type":"tmpfs","source":"tmpfs","options":["nosuid","nodev","noexec","noatime","mode=700","size=1m"]},
 {"destination":"/etc/bound","type":"bind","source":$f,"options":["bind","ro"]},
 {"destination":"/mnt/rro","type":"bind","source":$s,"options":["rbind","rro"]},
 {"destination":"/mnt/ro","type":"bind","source":$s,"options":["rbind","ro","nosuid"]},
 {"destination":"/mnt/priv","type":"bind","source":$s,"options":["rbind","rprivate"]},
 {"destination":"/mnt/shared","type":"bind","source":$s,"options":["rbind","rshared"]},
 {"destination":"/mnt/unb","type":"tmpfs","source":"tmpfs","options":["unbindable","strictatime"]},
 {"destination":"mnt/rel","type":"tmpfs","source":"tmpfs","options":["relatime","size=2m"]}]' \
        --arg f "$hostfile" --arg s "$src"
drv "$B2" -- cat /proc/self/mountinfo
is "$rc" 0 "bundle with option mounts runs"
like "$(mi_line /mnt/t)" ' /mnt/t rw,nosuid,nodev,noexec,noatime .*tmpfs tmpfs rw,size=1024k,mode=700' \
        "tmpfs: nosuid,nodev,noexec,noatime, size and mode data"
like "$(mi_line /etc/bound)" ' /etc/bound ro[, ]' "bind of a file, ro"
like "$(mi_line /mnt/rro)" ' /mnt/rro ro[, ]' "rbind,rro: top mount ro"
like "$(mi_line /mnt/rro/sub)" ' /mnt/rro/sub ro[, ]' "rbind,rro: submount ro too"
like "$(mi_line /mnt/ro)" ' /mnt/ro ro,nosuid[, ]' "rbind,ro,nosuid: top mount ro,nosuid"
like "$(mi_line /mnt/ro/sub)" ' /mnt/ro/sub rw[, ]' "rbind,ro: submount stays rw (ro is not recursive)"
unlike "$(mi_line /mnt/priv/sub)" ' (shared|master):' "rprivate: submount has no propagation peers"
like "$(mi_line /mnt/shared/sub)" ' shared:[0-9]+' "rshared: submount is shared"
like "$(mi_line /mnt/unb)" ' unbindable( |$)' "unbindable propagation"
like "$(mi_line /mnt/unb)" 'rw,relatime|rw ' "strictatime tmpfs mounted" # mountinfo prints no strictatime
like "$(mi_line /mnt/rel)" ' /mnt/rel rw,relatime .*tmpfs tmpfs rw,size=2048k' "relative destination lands under /"

drv "$B2" -- sh -c 'cat /etc/bound; { echo x > /etc/bound; } 2>/dev/null && echo written; stat -c %a /mnt/t; test -f /mnt/rro/sub/subfile && echo sub; touch /mnt/rro/sub/x 2>/dev/null && echo written; touch /mnt/ro/sub/y && rm /mnt/ro/sub/y && echo rw-sub'
is "$out" $'hello\n700\nsub\nrw-sub' "file bind readable, not writable; tmpfs mode 700; rro submount not writable"

# missing source: clear error naming the mount and its index
B3=$TEST_TMPDIR/b3
make_bundle "$B3"
n=$(jq '.mounts | length' "$B3/config.json")
bundle_set "$B3" '.mounts += [{"destination":"/x","type":"bind","source":"/nonexistent/src","options":["rbind"]}]'
drv "$B3" -- true
is "$rc" 125 "bind mount with a missing source fails"
like "$out" "mounts\\[$n\\]: mount \"/nonexistent/src\" on \"/x\" \\(type bind\\): source: No such file or directory" \
        "error names the mount index, source, destination and errno"

# readonlyPaths / maskedPaths on rootfs content
B4=$TEST_TMPDIR/b4
make_bundle "$B4"
mkdir -p "$B4/rootfs/data/inner" "$B4/rootfs/secret"
echo s >"$B4/rootfs/secret/file"
echo f >"$B4/rootfs/secretfile"
bundle_set "$B4" '.root.readonly=false | .linux.readonlyPaths += ["/data", "/does/not/exist"] |
        .linux.maskedPaths += ["/secret", "/secretfile", "/missing"]'
drv "$B4" --drop-sys-admin -- sh -c 'touch /data/x 2>/dev/null && echo written; touch /data/inner/x 2>/dev/null && echo written;
        mount -o remount,rw /data 2>/dev/null && echo remounted; mount -o remount,rw,bind /data 2>/dev/null && echo remounted;
        ls -A /secret | wc -l; wc -c </secretfile; umount /secret 2>/dev/null && echo unmounted; touch /ok && echo root-rw'
is "$out" $'0\n0\nroot-rw' "custom readonlyPaths not writable nor remountable, maskedPaths hidden, missing ones ignored"
# the masked directories share one read-only tmpfs, as with runc (runc's mask.bats "directories share tmpfs")
mkdir -p "$B4/rootfs/secret2"
bundle_set "$B4" '.linux.maskedPaths += ["/secret2"]'
drv "$B4" -- sh -c 'stat -c %d /secret /secret2 | uniq | wc -l; touch /secret2/foo 2>&1 | grep -c "Read-only file system"'
is "$out" $'1\n1' "masked directories: one tmpfs (same device), read-only"

# linux.rootfsPropagation
for p in shared unbindable; do
        bundle_set "$B" '.linux.rootfsPropagation=$p' --arg p "$p"
        drv "$B" -- cat /proc/self/mountinfo
        like "$(mi_line /) $(mi_line /proc/sys)" "^[^ ]+ [^ ]+ [^ ]+ [^ ]+ / .* ${p}(:[0-9]+)? .* /proc/sys .* ${p}(:[0-9]+)? " \
                "rootfsPropagation $p: / and its submounts are $p"
done
bundle_set "$B" 'del(.linux.rootfsPropagation)'

# --no-pivot
drv "$B" --no-pivot -- sh -c 'pwd; test -x /bin/busybox && echo inside; readlink /proc/self/cwd'
is "$out" $'/\ninside\n/' "--no-pivot: MS_MOVE + chroot, cwd /"
drv "$B" -- readlink /proc/1/cwd
is "$out" / "pivot_root: cwd of the init is the container's /"

# cgroup namespace
if [ "$SDRUN_TEST_LAYOUT" != unified ]; then
        drv "$B" --cgroupns -- cat /proc/self/mountinfo
        like "$(mi_line /sys/fs/cgroup/memory)" '[0-9]+ [0-9]+ [^ ]+ / /sys/fs/cgroup/memory ro,.* - cgroup cgroup rw,memory' \
                "cgroupns: fresh v1 memory hierarchy rooted at /"
fi
drv "$B" --no-netns -- sh -c 'cat /proc/self/mountinfo; ls /sys/class/net'
like "$(mi_line /sys)" ' /sys ro,' "without a netns: the host's /sys is bound read-only"

# user namespace: device nodes cannot be created there, they are bind-mounted from the host
BU=$TEST_TMPDIR/bu
make_bundle "$BU"
bundle_set "$BU" '.mounts |= map(if .type == "devpts" then .options -= ["gid=5"] else . end)' # gid 5 is not mapped
rc=0
out=$(unshare -U --map-root-user "$ROOTFS_DRIVER" --userns "$BU" -- sh -c \
        'grep -c " /dev/\(null\|zero\|full\|random\|urandom\|tty\) " /proc/self/mountinfo; echo x >/dev/null && head -c 3 /dev/zero | wc -c' 2>&1) || rc=$?
is "$out" $'6\n3' "user namespace: the six default devices are bind mounts (of the host's nodes), and work"

# ---------------------------------------------------------------------------------------------------
# hostile bundles

H=$TEST_TMPDIR/h
make_bundle "$H"
rm -rf "$H/rootfs/proc"
ln -s / "$H/rootfs/proc"
drv "$H" -- true
is "$rc" 125 "rootfs/proc -> /: refused"
like "$out" 'mounts\[0\]: mount "proc" on "/proc" \(type proc\): destination is a symlink, it must be mounted on ordinary directory' "... with a clear error (with the words runc uses)"

H2=$TEST_TMPDIR/h2
make_bundle "$H2"
tag=sdrun-escape-$$
ln -s /etc "$H2/rootfs/evil"
ln -s /etc/passwd "$H2/rootfs/evilfile"
ln -s "/tmp/$tag-dangling" "$H2/rootfs/dangling"
bundle_set "$H2" '.root.readonly=false | .mounts += [
 {"destination":("/evil/"+$t+"/x"),"type":"tmpfs","source":"tmpfs"},
 {"destination":"/evilfile","type":"bind","source":$f,"options":["bind"]},
 {"destination":("/../../../../tmp/"+$t),"type":"tmpfs","source":"tmpfs"}] |
 .linux.devices=[{"path":("/dev/../evil/"+$t+"-dev"),"type":"c","major":1,"minor":3}]' --arg t "$tag" --arg f "$hostfile"
drv "$H2" -- sh -c "test -d /etc/$tag/x && test -d /tmp/$tag && test -c /etc/$tag-dev && cat /etc/passwd"
is "$rc" 0 "symlinks to host paths are resolved inside the rootfs"
is "$out" hello "bind onto evilfile -> /etc/passwd lands on the rootfs' /etc/passwd"
ok_desc "nothing created in the host's /etc or /tmp" sh -c "! ls -d /etc/$tag* /tmp/$tag* 2>/dev/null | grep -q ."
ok_desc "the rootfs got them instead" test -d "$H2/rootfs/etc/$tag/x" -a -d "$H2/rootfs/tmp/$tag" -a -c "$H2/rootfs/etc/$tag-dev"
is "$(cat /etc/passwd | head -1 | cut -d: -f1)" root "host /etc/passwd untouched"

bundle_set "$H2" '.mounts += [{"destination":"/dangling/x","type":"tmpfs","source":"tmpfs"}]'
drv "$H2" -- true
# runc creates a dangling symlink's target (issue 12: an image's /etc/localtime -> ../usr/share/zoneinfo/X)
is "$rc" 0 "a destination through a dangling symlink: its target is created, as runc does"
ok_desc "... inside the rootfs" test -d "$H2/rootfs/tmp/$tag-dangling/x"
ok_desc "... and nothing on the host" test ! -e "/tmp/$tag-dangling"

# ---------------------------------------------------------------------------------------------------
is "$(host_mounts)" "$host_before" "no mount leaked into the host's mount namespace"

done_testing
