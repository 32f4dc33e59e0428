#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Mount propagation between the host and a container (issue 32), with runc as the control on the same
# bundle. Kubernetes' mountPropagation: Bidirectional (every CSI driver) is a host directory that is a shared
# mount, bound with ["rbind","rshared"] under linux.rootfsPropagation "rshared": a mount made on the host
# under it appears in the container, and one made in the container appears on the host; the container's
# mount is in the host's peer group (mountinfo "shared:N" with the host's N, no "master:"). With the default,
# rslave and rprivate, a mount made in the container never reaches the host. In every mode nothing else of
# the container (its rootfs bind, /proc, the detached old root) reaches the host's mount table.
. "$(dirname "$0")/lib.sh"

require_root
require_systemd
ci_lane unified
RUNC=$(command -v runc) || bail "runc is not installed (Debian package runc): it is the control here"

sd() { "$SDRUN" --root "$SDRUN_ROOT" "$@"; }
runc_() { "$RUNC" --root "$TEST_TMPDIR/runc" "$@"; }

# The host side, as kubelet arranges it: a directory bound onto itself and made shared.
V=$TEST_TMPDIR/vol
mkdir -p "$V"
mount --bind "$V" "$V" || bail "mount --bind $V $V failed"
cleanup_add umount -R -l "$V"
mount --make-shared "$V" || bail "mount --make-shared $V failed"

# propagation FILE MOUNTPOINT: the optional fields of the last mount on MOUNTPOINT ("shared:N master:M", "")
propagation() {
        awk -v m="$2" '$5 == m { o = ""; for (i = 7; i < NF && $i != "-"; i++) o = o (o == "" ? "" : " ") $i; l = o }
                END { print l }' "$1"
}
host_group=$(propagation /proc/self/mountinfo "$V")
[[ "$host_group" =~ ^shared:[0-9]+$ ]] || bail "$V is not a shared mount on the host: '$host_group'"
diag "host: $V is $host_group"

# The host's mount table, but for the volume's subtree (where a container's mount in rshared mode is meant
# to appear).
host_mounts() { awk -v v="$V" 'index($5, v) != 1 {print $5}' /proc/self/mountinfo | sort; }

B=$TEST_TMPDIR/b
make_bundle "$B" || bail "make_bundle failed"
# crun 1.8 (tried by hand as a third opinion) knows ociVersion 1.0.x only
bundle_set "$B" '.ociVersion="1.0.2" | .process.args=["sleep","1000"]
        | .process.capabilities |= with_entries(.value += ["CAP_SYS_ADMIN"])
        | .mounts += [{destination: "/mnt/vol", type: "bind", source: $v, options: ["rbind","rshared"]}]' \
        --arg v "$V" || bail "bundle_set failed"

# start RUNTIME ID [OPTION...]: run the bundle detached
start() {
        local rt=$1 id=$2
        shift 2
        if [ "$rt" = runc ]; then
                cleanup_add "$RUNC" --root "$TEST_TMPDIR/runc" delete --force "$id"
                runc_ run -d "$@" --bundle "$B" "$id" </dev/null >/dev/null 2>"$TEST_TMPDIR/err"
        else
                track_container "$id"
                sd run -d "$@" --bundle "$B" "$id" </dev/null >/dev/null 2>"$TEST_TMPDIR/err"
        fi
}
# inside RUNTIME ID CMD...: run CMD in the container
inside() {
        local rt=$1 id=$2
        shift 2
        if [ "$rt" = runc ]; then runc_ exec "$id" "$@"; else sd exec "$id" "$@"; fi
}
stop() {
        if [ "$1" = runc ]; then runc_ delete --force "$2"; else sd delete --force "$2"; fi
}

# try RUNTIME PROPAGATION [OPTION...]: a container of the bundle with linux.rootfsPropagation PROPAGATION
# ("default": none). Sets h2c (yes: a host mount made under the volume appeared in the container), c2h (yes:
# a tmpfs and a bind mount made in the container under it appeared on the host; partly; no), ctr (the
# propagation fields of /mnt/vol in the container, the host's peer group id written HOST, others N), leak
# (no: the host's mount table outside the volume was the same while the container ran and after it).
try() {
        local rt=$1 p=$2 id c before during after
        shift 2
        id=$(new_id prop)
        c=$rt-$p${1:+-nopivot}
        if [ "$p" = default ]; then
                bundle_set "$B" 'del(.linux.rootfsPropagation)'
        else
                bundle_set "$B" '.linux.rootfsPropagation=$p' --arg p "$p"
        fi
        mkdir -p "$V/$c/fromhost" "$V/$c/fromctr" "$V/$c/bindctr"
        h2c=error c2h=error ctr=error leak=error
        before=$(host_mounts)
        if ! start "$rt" "$id" "$@"; then
                diag "$rt run -d ($p $*) failed: $(cat "$TEST_TMPDIR/err")"
                return 1
        fi
        during=$(host_mounts)
        mount -t tmpfs hostside "$V/$c/fromhost" && echo h >"$V/$c/fromhost/mark"
        h2c=no
        [ "$(inside "$rt" "$id" cat "/mnt/vol/$c/fromhost/mark" 2>/dev/null)" = h ] && h2c=yes
        # a bind mount from an unbindable tree fails (rootfsPropagation unbindable): the tmpfs is enough
        inside "$rt" "$id" sh -c "mount -t tmpfs ctrside /mnt/vol/$c/fromctr && echo c >/mnt/vol/$c/fromctr/mark &&
                mount --bind /etc /mnt/vol/$c/bindctr" >/dev/null 2>&1
        if [ "$(cat "$V/$c/fromctr/mark" 2>/dev/null)" = c ] &&
                [ "$(cat "$V/$c/bindctr/hostname" 2>/dev/null)" = sdrun-test ]; then
                c2h=yes
        elif mountpoint -q "$V/$c/fromctr" || mountpoint -q "$V/$c/bindctr"; then
                c2h=partly
        else
                c2h=no
        fi
        inside "$rt" "$id" cat /proc/self/mountinfo >"$TEST_TMPDIR/mi"
        ctr=$(propagation "$TEST_TMPDIR/mi" /mnt/vol | sed -E "s/:${host_group#shared:}( |\$)/:HOST\1/g; s/:[0-9]+/:N/g")
        stop "$rt" "$id" >/dev/null 2>&1
        after=$(host_mounts)
        leak=no
        [ "$before" = "$during" ] || leak="while it ran: $(diff <(echo "$before") <(echo "$during") | grep '^[<>]' | tr '\n' ' ')"
        [ "$before" = "$after" ] || leak="after it: $(diff <(echo "$before") <(echo "$after") | grep '^[<>]' | tr '\n' ' ')"
        umount -R -l "$V/$c/fromhost" "$V/$c/fromctr" "$V/$c/bindctr" 2>/dev/null
        return 0
}

# check RUNTIME PROPAGATION H2C C2H CTR-REGEX [OPTION...]
check() {
        local rt=$1 p=$2 eh=$3 ec=$4 re=$5 what
        shift 5
        what="$rt, rootfsPropagation $p${1:+ $*}"
        try "$rt" "$p" "$@"
        is "$h2c" "$eh" "$what: a host mount under the volume appears in the container: $eh"
        is "$c2h" "$ec" "$what: a mount made in the container under the volume appears on the host: $ec"
        like "$ctr" "$re" "$what: the container's /mnt/vol is $re"
        is "$leak" no "$what: nothing else reaches the host's mount table"
        result[$rt-$p${1:+-nopivot}]="$h2c $c2h $ctr"
}
declare -A result

# 1. Bidirectional: rshared (and shared) keep the container's bind in the host's peer group
for rt in runc sdrun; do
        check "$rt" rshared yes yes '^shared:HOST$'
        check "$rt" shared yes yes '^shared:HOST$'
done
# 2. the default and rslave: a slave of the host's group, in a group of its own ("rshared" on the bind)
for rt in runc sdrun; do
        check "$rt" default yes no '^shared:N master:HOST$'
        check "$rt" rslave yes no '^shared:N master:HOST$'
        check "$rt" rprivate no no '^shared:N$'
done
for p in rshared shared default rslave rprivate; do
        is "${result[sdrun-$p]}" "${result[runc-$p]}" "rootfsPropagation $p: runc and sdrun agree"
done
# 3. slave, private, unbindable: recursive in sdrun, nothing reaches the host. (runc applies these three to
# the mount at / alone: the host's other mounts keep their peer groups, so with it a mount made in the
# container under the volume does reach the host.)
check sdrun slave yes no '^shared:N master:HOST$'
check sdrun private no no '^shared:N$'
check sdrun unbindable no no '^unbindable$'

# 4. --no-pivot: the host's tree stays under the container's root; with rshared, its procfs and sysfs detached
# and the rootfs moved onto "/" must not reach the host (runc's rshared --no-pivot moves the container's rootfs
# onto the host's "/" where the mount holding the rootfs is not "/": not tried here)
check sdrun rshared yes yes '^shared:HOST$' --no-pivot
check sdrun default yes no '^shared:N master:HOST$' --no-pivot
# an unbindable mount would be left out of the tree that becomes the root there: refused, naming it
cp "$B/config.json" "$TEST_TMPDIR/config.saved"
bundle_set "$B" '.linux.rootfsPropagation="rshared" | .mounts += [{destination: "/mnt/unb", type: "tmpfs", source: "tmpfs", options: ["unbindable"]}]'
id=$(new_id prop)
before=$(host_mounts)
start sdrun "$id" --no-pivot
like "$(cat "$TEST_TMPDIR/err")" '--no-pivot: ".*/rootfs/mnt/unb" is unbindable, which rootfsPropagation shared cannot keep there' \
        "sdrun, rshared --no-pivot, an unbindable mount: refused, naming it"
is "$(host_mounts)" "$before" "... and nothing of it reaches the host's mount table"
cp "$TEST_TMPDIR/config.saved" "$B/config.json"

# 5. a user namespace, with the volume reachable by the host's root only (the runtime clones it on the host
# side): the kernel copies shared mounts as slaves into its mount namespace, so never Bidirectional
chmod 0755 "$TEST_TMPDIR" "$B"
mkdir -m 0700 "$TEST_TMPDIR/locked"
V=$TEST_TMPDIR/locked/vol
mkdir -p "$V"
mount --bind "$V" "$V" || bail "mount --bind $V $V failed"
cleanup_add umount -R -l "$V"
mount --make-shared "$V" || bail "mount --make-shared $V failed"
host_group=$(propagation /proc/self/mountinfo "$V")
bundle_set "$B" '.linux.namespaces += [{type: "user"}] | .linux.uidMappings=[{containerID: 0, hostID: 100000, size: 65536}]
        | .linux.gidMappings=[{containerID: 0, hostID: 100000, size: 65536}]
        | .mounts |= map(if .destination == "/mnt/vol" then .source = $v else . end)
        | .mounts |= map(select(.type != "cgroup" and .type != "sysfs"))' --arg v "$V" || bail "bundle_set failed"
for rt in runc sdrun; do
        check "$rt" rshared yes no '^shared:N master:HOST$'
        check "$rt" default yes no '^shared:N master:HOST$'
        check "$rt" rprivate no no '^shared:N$'
done

done_testing
