#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The automatic user namespace (issue 33, item 4; nspawn's --private-users=pick, Podman's --userns=auto):
# SDRUN_USERNS=auto in sdrun@.service's environment, or the annotation io.github.sdrun.userns "auto", gives
# the container a new user namespace mapping its 0..65535 onto 65,536 host ids that sdrun picks: derived
# from the name (the same after a restart), clear of /etc/subuid, /etc/subgid and every other container, its
# rootfs id-mapped so that nothing on disk is chowned. Root inside is nobody on the host: two such containers
# cannot read each other's files or signal each other. crun, given the same mapping explicitly, is the
# control for what the mapping looks like inside. Where the kernel cannot id-map the bundles' filesystem (the
# VM tier: Debian's 6.1 on overlayfs), that refusal is checked and the bundles go on a loop-mounted ext4.
. "$(dirname "$0")/lib.sh"

require_root
require_systemd
CRUN=$(command -v crun) || bail "crun is not installed (Debian package crun): it is the control here"
command -v setpriv >/dev/null || bail "setpriv is not installed (Debian package util-linux)"
install_sdrun_template
sd() { "$SDRUN" --root "$SDRUN_ROOT" "$@"; }

AREA_FIRST=$((0x80000)) AREA_LAST=$((0x6fff0000)) SIZE=65536
# first_candidate ID: the base sdrun tries first for ID (FNV-1a of the id over the area's 28664 ranges)
first_candidate() {
        local h=2166136261 i c
        for ((i = 0; i < ${#1}; i++)); do
                printf -v c '%d' "'${1:i:1}"
                h=$(( ((h ^ c) * 16777619) & 0xffffffff ))
        done
        echo $(( AREA_FIRST + (h % ((AREA_LAST - AREA_FIRST) / SIZE + 1)) * SIZE ))
}
pid_of() { sd state "$1" | jq -r .pid; }
# map_of PID: "inside host size" of the first line of its uid_map, then of its gid_map
map_of() { echo "$(awk 'NR==1{print $1, $2, $3}' "/proc/$1/uid_map") / $(awk 'NR==1{print $1, $2, $3}' "/proc/$1/gid_map")"; }
base_of() { awk 'NR==1{print $2}' "/proc/$1/uid_map"; }
# the base recorded in the state (sdrun.usernsBase of state.json)
state_base() { jq -r '.sdrun.usernsBase // "none"' "$SDRUN_ROOT/$1/state.json"; }

# A user namespace's root must reach the bundles on its way (as in test-idmap)
chmod 0755 "$TEST_TMPDIR"
SHARED=$TEST_TMPDIR/shared
mkdir -p "$SHARED" && chmod 1777 "$SHARED"

# Where the bundles go: the services' in /var/lib/sdrun/bundles (the unit's default), the others in
# $TEST_TMPDIR, when the kernel can id-map their filesystem. Debian 12's 6.1 kernel (the VM tier) cannot
# id-map overlayfs, the VM's root, nor tmpfs (id-mapped since 6.3): there sdrun's refusal of such a rootfs,
# naming the filesystem, is a check of its own, and the bundles go on a loop-mounted ext4 (id-mapped since
# 5.12), the services' through SDRUN_BUNDLE in their drop-in.
# idmap_probe DIR: REFUSAL= empty when a bundle in DIR runs with the annotation, else sdrun's refusal
idmap_probe() {
        local b=$1/probe-$$ id
        id=$(new_id una)
        track_container "$id"
        make_bundle "$b" || bail "make_bundle failed"
        bundle_set "$b" '.annotations["io.github.sdrun.userns"]="auto"' || bail "bundle_set failed"
        REFUSAL=""
        if ! REFUSAL=$(sd run --bundle "$b" "$id" 2>&1 </dev/null); then
                [[ "$REFUSAL" == *"cannot id-map it"* ]] || bail "a bundle in $1 with the annotation: $REFUSAL"
        else
                REFUSAL=""
        fi
        rm -rf "$b"
}
SVC_BUNDLES=/var/lib/sdrun/bundles TMP_BUNDLES=$TEST_TMPDIR
mkdir -p "$SVC_BUNDLES"
refused=0
for d in "$SVC_BUNDLES" "$TMP_BUNDLES"; do
        idmap_probe "$d"
        fs=$(findmnt -no FSTYPE -T "$d")
        if [ -n "$REFUSAL" ]; then
                refused=1
                like "$REFUSAL" "root.path \"$d/probe-$$/rootfs\": cannot id-map it: its filesystem \($fs\)" \
                        "a rootfs in $d, on $fs, which kernel $(uname -r) cannot id-map: refused, naming the filesystem"
        else
                diag "kernel $(uname -r) id-maps $fs, the filesystem of $d"
        fi
done
if [ $refused = 1 ]; then
        command -v mkfs.ext4 >/dev/null || bail "mkfs.ext4 is not installed (Debian package e2fsprogs)"
        modprobe loop 2>/dev/null || true
        EXT=$TEST_TMPDIR/ext4
        mkdir -p "$EXT"
        truncate -s 256M "$TEST_TMPDIR/bundles.ext4" && mkfs.ext4 -q -F "$TEST_TMPDIR/bundles.ext4" ||
                bail "mkfs.ext4 of an image in $TEST_TMPDIR failed"
        out=$(mount -o loop "$TEST_TMPDIR/bundles.ext4" "$EXT" 2>&1) || bail "mount -o loop of the ext4 image: $out"
        cleanup_add umount -d "$EXT"
        chmod 0755 "$EXT"
        SVC_BUNDLES=$EXT/services TMP_BUNDLES=$EXT
        mkdir -p "$SVC_BUNDLES"
        idmap_probe "$EXT"
        is "$REFUSAL" "" "  so the bundles go on a loop-mounted ext4 ($(findmnt -no SOURCE -T "$EXT")), whose rootfs is id-mapped"
fi

# instance: ID= a fresh id for sdrun@ID.service, whose unit, drop-ins and bundle go on exit (not in a
# subshell: the cleanups must reach the script's list, to run before the ext4 image is unmounted)
instance() {
        ID=$(new_id una)
        track_container "$ID"
        cleanup_add rm -rf "$UDIR/sdrun@$ID.service.d" "$SVC_BUNDLES/$ID"
        cleanup_add systemctl reset-failed "sdrun@$ID.service"
        cleanup_add systemctl stop "sdrun@$ID.service"
}
# service ID SCRIPT: $SVC_BUNDLES/ID runs sh -c SCRIPT (with /shared bound), SDRUN_USERNS=auto
service() {
        local b=$SVC_BUNDLES/$1
        make_bundle "$b" || bail "make_bundle failed"
        bundle_set "$b" '.process.args=["sh","-c",$s] | .root.readonly=false
                | .mounts += [{destination: "/shared", type: "bind", source: $d, options: ["rbind", "rw"]}]' \
                --arg s "trap 'exit 0' TERM; $2; sleep 1000 & wait" --arg d "$SHARED" || bail "bundle_set failed"
        mkdir -p "$b/rootfs/shared"
        mkdir -p "$UDIR/sdrun@$1.service.d"
        printf '[Service]\nEnvironment=SDRUN_USERNS=auto SDRUN_BUNDLE=%s\n' "$b" >"$UDIR/sdrun@$1.service.d/userns.conf"
        systemctl daemon-reload
}
start_unit() {
        local out
        out=$(systemctl start "sdrun@$1.service" 2>&1) && return 0
        diag "systemctl start sdrun@$1.service: $out"
        journalctl -q --no-pager -u "sdrun@$1.service" | tail -15 | _tap_diag_stream
        return 1
}
# rootfs_owners DIR: the owners and modes of everything in a rootfs (to see that nothing changed)
rootfs_owners() { find "$1" -xdev -printf '%U:%G:%m %P\n' | sort; }

# --- two services with SDRUN_USERNS=auto -------------------------------------------------------------------------
instance; A=$ID
instance; B=$ID
service "$A" 'echo a-data >/shared/a-file; chmod 600 /shared/a-file; touch /created-by-root'
service "$B" 'echo b-secret >/shared/b-secret; chmod 600 /shared/b-secret'
owners_before=$(rootfs_owners "$SVC_BUNDLES/$A/rootfs")
start_unit "$A" || fail "start sdrun@$A"
start_unit "$B" || fail "start sdrun@$B"
wait_for test -s "$SHARED/a-file" -a -s "$SHARED/b-secret"
pa=$(pid_of "$A") pb=$(pid_of "$B")
ba=$(base_of "$pa") bb=$(base_of "$pb")

fa=$(first_candidate "$A")
# host_uid PID: the uid the process runs as on the host; every check below that holds before the change as
# well (root is root) carries it, so that it cannot pass without the user namespace
host_uid() { awk '/^Uid:/{print $2}' "/proc/$1/status"; }

is "$(map_of "$pa")" "0 $ba 65536 / 0 $ba 65536" "SDRUN_USERNS=auto: the init of sdrun@$A maps 0..65535 onto one range (uid_map and gid_map)"
ok_desc "  the range is in the picking area, at a multiple of 65536 (base $ba)" \
        test "$ba" -ge "$AREA_FIRST" -a "$ba" -le "$AREA_LAST" -a $((ba % SIZE)) = 0
is "$ba" "$fa" "  it is the first candidate of the name (nothing else holds it)"
is "$(state_base "$A")" "$fa" "  state.json records it (sdrun.usernsBase)"
is "$(host_uid "$pa")/$(sd exec "$A" id -u)" "$fa/0" "  root in the container is uid $fa on the host"
ok_desc "  no user of the host's (getent -s files passwd $ba finds none)" sh -c "test $ba != 0 && ! getent -s files passwd $ba"
like "$(getent passwd "$ba")" "UID 0 of Container $A" "  systemd-machined names it as the container's (nss-mymachines)"
# The rootfs is an id-mapped mount of root.path: root inside owns the image's files, and what it creates is
# root's on disk; the owners on disk did not change.
is "$(awk '$5 == "/" && $6 ~ /(^|,)idmapped(,|$)/ { n++ } END { print n + 0 }' "/proc/$pa/mountinfo")" 1 \
        "  the container's / is an id-mapped mount" || awk '$5 == "/"' "/proc/$pa/mountinfo" | _tap_diag_stream
is "$(host_uid "$pa") $(sd exec "$A" stat -c %u:%g /bin/busybox)" "$fa 0:0" \
        "  the image's files are root's inside (root being $fa on the host)"
is "$(host_uid "$pa") $(stat -c %u:%g "$SVC_BUNDLES/$A/rootfs/created-by-root")" "$fa 0:0" \
        "  a file root created in / is root's on disk (id-mapped, not chowned to $fa)"
rm -f "$SVC_BUNDLES/$A/rootfs/created-by-root"
is "$(host_uid "$pa") $(rootfs_owners "$SVC_BUNDLES/$A/rootfs")" "$fa $owners_before" \
        "  nothing in the rootfs was chowned" ||
        diff <(echo "$owners_before") <(rootfs_owners "$SVC_BUNDLES/$A/rootfs") | head | _tap_diag_stream
is "$(stat -c %u "$SHARED/a-file")" "$fa" "  a file written to a plain bind mount is uid $fa's on the host"

is "$(map_of "$pb")" "0 $bb 65536 / 0 $bb 65536" "sdrun@$B: a range of its own ($bb)"
ok_desc "  the two ranges are disjoint" test $((ba + SIZE)) -le "$bb" -o $((bb + SIZE)) -le "$ba"
out=$(sd exec "$A" cat /shared/b-secret 2>&1 | grep -o "Permission denied")
is "$out/$(sd exec "$A" cat /shared/a-file 2>&1)" "Permission denied/a-data" \
        "root of $A cannot read the 0600 file of root of $B, but reads its own"
out=$(sd exec "$A" sh -c 'echo x >>/shared/b-secret' 2>&1)
like "$out" "Permission denied" "  nor write it"
rca=0 rcb=0
setpriv --reuid="$ba" --regid="$ba" --clear-groups kill -0 "$pb" 2>/dev/null || rca=$?
setpriv --reuid="$bb" --regid="$bb" --clear-groups kill -0 "$pb" 2>/dev/null || rcb=$?
is "$rca/$rcb" 1/0 "a process with the host uid of $A's root cannot signal $B's init (one with $B's can)"

# restart: a new container of the same name, the same range
rc=0
out=$(systemctl restart "sdrun@$A.service" 2>&1) || rc=$?
pa2=$(pid_of "$A")
[ -n "$pa2" ] && [ "$pa2" != null ] && [ "$pa2" != "$pa" ] && new=new || new="the same init $pa"
is "$rc, $new, $(map_of "$pa2")" "0, new, 0 $fa 65536 / 0 $fa 65536" \
        "systemctl restart sdrun@$A: a new container, the same range" || diag "$out"
systemctl stop "sdrun@$A.service" "sdrun@$B.service"
no_leftovers "$A"
no_leftovers "$B"

# --- /etc/subuid and /etc/subgid -----------------------------------------------------------------------------
# (How the pick avoids others' ranges does not depend on the kernel or the cgroup layout: in CI the VM, where
# each service start costs seconds of emulation, leaves it to the box lanes.)
if [ "${CI:+$SDRUN_TEST_LAYOUT}" = vm ]; then
        diag "the /etc/subuid, /etc/subgid and host-process checks run in the box lanes"
else
        for f in /etc/subuid /etc/subgid; do
                if [ -e "$f" ]; then
                        cp -a "$f" "$TEST_TMPDIR/$(basename "$f").orig"
                        cleanup_add cp -a "$TEST_TMPDIR/$(basename "$f").orig" "$f"
                else
                        cleanup_add rm -f "$f"
                fi
        done
        # restore_subid: both files as they were
        restore_subid() {
                local f
                for f in subuid subgid; do
                        if [ -e "$TEST_TMPDIR/$f.orig" ]; then cp -a "$TEST_TMPDIR/$f.orig" "/etc/$f"; else rm -f "/etc/$f"; fi
                done
        }
        instance; C=$ID
        service "$C" true
        c0=$(first_candidate "$C")
        for f in /etc/subuid /etc/subgid; do
                restore_subid
                # a range of someone's that covers the middle of the first candidate
                echo "sdrun-test-$$:$((c0 + 1000)):10" >>"$f"
                start_unit "$C" || fail "start sdrun@$C"
                c1=$(base_of "$(pid_of "$C")")
                ok_desc "an entry of $f inside the first candidate $c0: the pick moves ($c1)" \
                        test -n "$c1" -a "$c1" != "$c0" -a "$c1" -ge "$AREA_FIRST" -a $(( (c0 + 1000) < c1 || (c0 + 1000) >= c1 + SIZE )) = 1
                systemctl stop "sdrun@$C.service"
        done
        restore_subid
        # a process of the host that runs as an id of the first candidate
        setpriv --reuid=$((c0 + 5)) --regid=$((c0 + 5)) --clear-groups sleep 1000 &
        sp=$!
        cleanup_add kill "$sp"
        start_unit "$C" || fail "start sdrun@$C"
        c2=$(base_of "$(pid_of "$C")")
        ok_desc "a process of the host running as uid $((c0 + 5)): the pick moves ($c2)" \
                test -n "$c2" -a "$c2" != "$c0" -a "$c2" -ge "$AREA_FIRST" -a $(( (c0 + 5) < c2 || (c0 + 5) >= c2 + SIZE )) = 1
        systemctl stop "sdrun@$C.service"
        kill "$sp"
        wait "$sp" 2>/dev/null
        start_unit "$C" || fail "start sdrun@$C"
        is "$(base_of "$(pid_of "$C")")" "$c0" "  without them, the first candidate again"
        systemctl stop "sdrun@$C.service"
        no_leftovers "$C"
fi

# --- the annotation, on a plain create; two names with the same first candidate, created at once ------------------
P=$TMP_BUNDLES/p
make_bundle "$P" || bail "make_bundle failed"
bundle_set "$P" '.process.args=["sleep","1000"] | .annotations["io.github.sdrun.userns"]="auto"'
# two ids of the same first candidate (birthday: a few hundred tries)
declare -A seen=()
t1="" t2=""
for ((i = 0; i < 20000; i++)); do
        x="una-twin-$$-$i" h=$(first_candidate "$x")
        if [ -n "${seen[$h]:-}" ]; then t1=${seen[$h]} t2=$x; break; fi
        seen[$h]=$x
done
[ -n "$t2" ] || bail "no two ids with the same first candidate found"
track_container "$t1"
track_container "$t2"
sd create --bundle "$P" "$t1" >"$TEST_TMPDIR/t1.out" 2>&1 &
sd create --bundle "$P" "$t2" >"$TEST_TMPDIR/t2.out" 2>&1 &
wait
s1=$(sd state "$t1" 2>/dev/null | jq -r .status) s2=$(sd state "$t2" 2>/dev/null | jq -r .status)
b1=$(base_of "$(pid_of "$t1")" 2>/dev/null) b2=$(base_of "$(pid_of "$t2")" 2>/dev/null)
ft=$(first_candidate "$t1")
[ -n "$b1" ] && [ -n "$b2" ] && [ "$b1" != "$b2" ] && [ "$b1" = "$ft" -o "$b2" = "$ft" ] && d=different || d="$b1 $b2"
is "$s1/$s2 $d" "created/created different" \
        "the annotation \"auto\": $t1 and $t2 (first candidate $ft both), created at once, get different ranges, one of them the first candidate" ||
        diag "$(cat "$TEST_TMPDIR/t1.out" "$TEST_TMPDIR/t2.out")"
is "$(state_base "$t1")/$(state_base "$t2")" "$b1/$b2" "  each recorded in its state"
sd delete --force "$t1"
sd delete --force "$t2"
no_leftovers "$t1"

# --- crun, given the same mapping explicitly: the same view inside (except the image's owner) ---------------------
id=$(new_id una)
track_container "$id"
bundle_set "$P" '.ociVersion="1.0.2" | del(.linux.resources)
        | .process.args=["sh","-c","cat /proc/self/uid_map /proc/self/gid_map | tr -s \" \" | sed \"s/^ //\"; id -u; id -g; stat -c %u:%g /bin/busybox"]'
out=$(sd run --bundle "$P" "$id" 2>&1 </dev/null)
rb=$(awk 'NR==1{print $2}' <<<"$out")
is "$(paste -sd, <<<"$out")" "0 $rb 65536,0 $rb 65536,0,0,0:0" "sdrun run with the annotation: the mapping, root, the image root's"
bundle_set "$P" 'del(.annotations["io.github.sdrun.userns"]) | .linux.namespaces += [{type: "user"}]
        | .linux.uidMappings=[{containerID: 0, hostID: $b, size: 65536}] | .linux.gidMappings=.linux.uidMappings' \
        --argjson b "${rb:-0}"
cout=$("$CRUN" --root "$TEST_TMPDIR/crun" run --bundle "$P" "$id" 2>&1 </dev/null)
"$CRUN" --root "$TEST_TMPDIR/crun" delete --force "$id" >/dev/null 2>&1
is "$(paste -sd, <<<"$cout")" "0 $rb 65536,0 $rb 65536,0,0,65534:65534" \
        "  crun (the control) with the same mapping given: the same, but the image is nobody's without the id-mapped root"

# --- what is refused, naming the field -------------------------------------------------------------------------
bundle_set "$P" '.annotations["io.github.sdrun.userns"]="auto"'
id=$(new_id una)
track_container "$id"
out=$(sd run --bundle "$P" "$id" 2>&1 </dev/null)
like "$out" 'linux.uidMappings: given, but annotations\["io.github.sdrun.userns"\] is "auto"' \
        "the annotation and linux.uidMappings: refused, naming the field"
bundle_set "$P" 'del(.linux.uidMappings, .linux.gidMappings) | .linux.namespaces |= map(if .type == "user" then .path = "/proc/1/ns/user" else . end)'
out=$(SDRUN_USERNS=auto sd run --bundle "$P" "$id" 2>&1 </dev/null)
like "$out" 'linux.namespaces\[[0-9]+\].path: a user namespace to join, but annotations' \
        "  and a user namespace to join by path"
bundle_set "$P" '.linux.namespaces |= map(select(.type != "user")) | .annotations["io.github.sdrun.userns"]="pick"'
out=$(sd run --bundle "$P" "$id" 2>&1 </dev/null)
like "$out" 'annotations\["io.github.sdrun.userns"\]: "pick" is not "auto" or "host"' "  an unknown value"
bundle_set "$P" '.linux.namespaces |= map(select(.type != "mount")) | .mounts=[] | .root.path="/"
        | .annotations["io.github.sdrun.userns"]="auto"'
out=$(sd run --bundle "$P" "$id" 2>&1 </dev/null)
like "$out" 'linux.namespaces: no mount namespace of the container.s own, but annotations' \
        "  and no mount namespace of its own (the host's / cannot be id-mapped for it)"
bundle_set "$P" 'del(.annotations) | .linux.namespaces += [{type: "mount"}] | .root.path="rootfs"'
out=$(SDRUN_USERNS=yes sd run --bundle "$P" "$id" 2>&1 </dev/null)
like "$out" 'SDRUN_USERNS=yes: not "auto" or "host"' "  and in the environment"

# --- a rootfs whose filesystem cannot be id-mapped: refused loudly, naming it -------------------------------------
R=$TEST_TMPDIR/ramfs
mkdir -p "$R"
mount -t ramfs ramfs "$R" || bail "mount ramfs"
cleanup_add umount -l "$R"
cp -a "$P/rootfs" "$R/rootfs"
bundle_set "$P" '.process.args=["true"] | .root.path=$r | .annotations["io.github.sdrun.userns"]="auto"' --arg r "$R/rootfs"
out=$(sd run --bundle "$P" "$id" 2>&1 </dev/null)
like "$out" 'root.path .*cannot id-map it: its filesystem \(ramfs\)' "a rootfs on ramfs: refused, naming the filesystem"
no_leftovers "$id"

done_testing
