#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Id-mapped bind mounts (mounts[].uidMappings/gidMappings, the "idmap" and "ridmap" options): the runtime
# makes them on the host side (mount_setattr(MOUNT_ATTR_IDMAP) needs CAP_SYS_ADMIN over the source's
# filesystem) and the init attaches them. With the container's user namespace mappings when the mount has
# none, with the mount's own otherwise, also without a user namespace; ridmap maps the submounts too. crun,
# which implements them the same way, is the control for what the container sees and what the host gets.
# What cannot be done is refused at create, naming the mount, with nothing left.
. "$(dirname "$0")/lib.sh"

require_root
require_systemd
ci_lane unified

CRUN=$(command -v crun) || bail "crun is not installed (Debian package crun): it is the control here"
sd() { "$SDRUN" --root "$SDRUN_ROOT" "$@"; }

chmod 0755 "$TEST_TMPDIR"
B=$TEST_TMPDIR/b
make_bundle "$B" || bail "make_bundle failed"
# crun 1.8 refuses newer versions; a writable root for the mapped root's files
bundle_set "$B" '.ociVersion="1.0.2" | .root.readonly=false | del(.linux.resources)'
mkdir -p "$B/rootfs/m" "$B/rootfs/m2"
chmod 0755 "$B"
cp "$B/config.json" "$TEST_TMPDIR/base.json"

D=$TEST_TMPDIR/d
mkdir -p "$D/sub"
chmod 0777 "$D"
touch "$D/root-file" "$D/user-file"
chown 1000:1000 "$D/user-file"

UNS='.linux.namespaces += [{type: "user"}] | .linux.uidMappings=[{containerID: 0, hostID: 100000, size: 65536}]
        | .linux.gidMappings=[{containerID: 0, hostID: 100000, size: 65536}]'
# What the container sees of the two files, then the owner of a file its root creates there.
CMD='.process.args=["sh","-c","stat -c %u:%g /m/root-file /m/user-file | paste -sd, -; touch /m/new && stat -c new=%u:%g /m/new"]'

# run_rt RUNTIME JQ: the bundle made from the base by JQ, run in the foreground; prints "rc=N output" on one
# line, then the host's owner of the file the container created (or "none"), which it removes.
run_rt() {
        local rt=$1 id out rc=0
        cp "$TEST_TMPDIR/base.json" "$B/config.json"
        bundle_set "$B" "$2" || return 1
        id=$(new_id idmap)
        if [ "$rt" = crun ]; then
                # (stdin a pipe: crun 1.8.1 chowns its stdio to the process's user, and the box's /dev/null
                # was left owned by the mapped root, 100000:100000, for the rest of the lane)
                out=$(: | "$CRUN" --root "$TEST_TMPDIR/crun" run --bundle "$B" "$id" 2>&1) || rc=$?
                "$CRUN" --root "$TEST_TMPDIR/crun" delete --force "$id" >/dev/null 2>&1
                [ "$(stat -c %u:%g /dev/null)" = 0:0 ] || chown 0:0 /dev/null
        else
                track_container "$id"
                # (an earlier test's control may have chowned it: what is checked below is sdrun's doing)
                [ "$(stat -c %u:%g /dev/null)" = 0:0 ] || chown 0:0 /dev/null
                out=$(sd run --bundle "$B" "$id" 2>&1 </dev/null) || rc=$?
                echo "$id" >"$TEST_TMPDIR/last-id"
                # sdrun leaves the caller's /dev/null alone
                [ "$(stat -c %u:%g /dev/null)" = 0:0 ] || out+=" /dev/null-chowned-to-$(stat -c %u:%g /dev/null)"
        fi
        printf 'rc=%s %s host=%s\n' "$rc" "$(paste -sd' ' - <<<"$out")" "$(stat -c %u:%g "$D/new" 2>/dev/null || echo none)"
        rm -f "$D/new"
}

# same DESC JQ EXPECTED: sdrun gives EXPECTED, and crun the same
same() {
        local a b
        b=$(run_rt sdrun "$2")
        is "$b" "$3" "$1"
        no_leftovers "$(cat "$TEST_TMPDIR/last-id")"
        a=$(run_rt crun "$2")
        is "$a" "$b" "$1: crun (the control) the same"
}

bind() { printf '.mounts += [{destination: "/m", type: "bind", source: "%s", options: %s%s}]' "$D" "$1" "${2:-}"; }
MAPS=', uidMappings: [{containerID: 0, hostID: 101000, size: 2000}], gidMappings: [{containerID: 0, hostID: 101000, size: 2000}]'

same "a user namespace, a plain bind: the host's ids are unmapped inside" "$UNS | $CMD | $(bind '["bind"]')" \
        "rc=0 65534:65534,65534:65534 new=0:0 host=100000:100000"
same "a user namespace, idmap without mappings: the container's, so host root is root inside and its files stay the host's root's" \
        "$UNS | $CMD | $(bind '["bind", "idmap"]')" "rc=0 0:0,1000:1000 new=0:0 host=0:0"
same "a user namespace, idmap with the mount's mappings (0 -> 101000): host 0 is 1000 inside" \
        "$UNS | $CMD | $(bind '["bind", "idmap"]' "$MAPS")" \
        "rc=1 1000:1000,2000:2000 touch: /m/new: Value too large for defined data type host=none"
same "no user namespace, the mount's mappings (0 -> 1234)" \
        "$CMD | $(bind '["bind", "idmap"]' ', uidMappings: [{containerID: 0, hostID: 1234, size: 1}], gidMappings: [{containerID: 0, hostID: 1234, size: 1}]')" \
        "rc=1 1234:1234,65534:65534 touch: /m/new: Value too large for defined data type host=none"

# mappings without "idmap" or "ridmap" (the runtime-spec: the options SHOULD name one; runc's idmap.bats gives
# "bind" alone): id-mapped as with "idmap", with a warning
out=$(run_rt sdrun "$CMD | $(bind '["bind"]' ', uidMappings: [{containerID: 0, hostID: 1234, size: 1}], gidMappings: [{containerID: 0, hostID: 1234, size: 1}]')")
like "$out" '^rc=1 sdrun: mounts\[[0-9]+\]: uidMappings or gidMappings without the "idmap" or "ridmap" option: .* 1234:1234,65534:65534 ' \
        "mappings without the idmap option: id-mapped all the same, with a warning"
no_leftovers "$(cat "$TEST_TMPDIR/last-id")"

# the same source twice with other mappings, several ranges each, uids and gids apart (runc's idmap.bats
# cases): each mount maps on its own
M=$TEST_TMPDIR/multi
mkdir -p "$M"
touch "$M/a" "$M/b"
chown 100:211 "$M/a"
chown 101:222 "$M/b"
mnt() { printf '{destination: "%s", type: "bind", source: "%s", options: ["bind", "idmap"%s], uidMappings: [%s], gidMappings: [%s]}' "$1" "$M" "$2" "$3" "$4"; }
m() { printf '{containerID: %s, hostID: %s, size: %s}' "$1" "$2" "$3"; }
out=$(run_rt sdrun "$UNS | .mounts += [$(mnt /m '' "$(m 100 100000 100)" "$(m 200 100000 100)"),
        $(mnt /m2 ', "shared"' "$(m 100 101000 1), $(m 101 102000 1)" "$(m 210 101100 10), $(m 220 102200 10)")]
        | .process.args=[\"sh\",\"-c\",\"stat -c %u:%g /m/a /m/b /m2/a /m2/b | paste -sd, -; grep -c ' /m2 .* shared:' /proc/self/mountinfo\"]")
is "$out" "rc=0 0:11,1:22,1000:1101,2000:2202 1 host=none" \
        "one source, two id-mapped mounts with their own multi-range mappings; shared propagation kept on the mapped mount"
no_leftovers "$(cat "$TEST_TMPDIR/last-id")"

# ridmap maps every mount of an rbind tree, idmap only its top (a tmpfs mounted on d/sub holds a root file);
# crun 1.8 has no ridmap (it binds the top mount alone), so these have no control
mount -t tmpfs -o mode=0755 tmpfs "$D/sub" && cleanup_add umount "$D/sub"
touch "$D/sub/f"
SUBCMD='.process.args=["sh","-c","stat -c %u:%g /m/root-file /m/sub/f | paste -sd, -"]'
out=$(run_rt sdrun "$UNS | $SUBCMD | $(bind '["rbind", "ridmap"]')")
is "$out" "rc=0 0:0,0:0 host=none" "ridmap on an rbind: the submount is id-mapped too"
no_leftovers "$(cat "$TEST_TMPDIR/last-id")"
out=$(run_rt sdrun "$UNS | $SUBCMD | $(bind '["rbind", "idmap"]')")
is "$out" "rc=0 0:0,65534:65534 host=none" "idmap on an rbind: only the top mount is id-mapped"
no_leftovers "$(cat "$TEST_TMPDIR/last-id")"

# refused at create, naming the mount, with nothing left
refused() {
        local out
        out=$(run_rt sdrun "$2")
        like "$out" "^rc=1 .*$3" "$1: refused"
        no_leftovers "$(cat "$TEST_TMPDIR/last-id")"
}
refused "idmap without mappings and without a user namespace" "$CMD | $(bind '["bind", "idmap"]')" \
        'mounts\[[0-9]+\]: "idmap" without uidMappings and gidMappings needs the container'
refused "idmap on a tmpfs" "$UNS | $CMD | .mounts += [{destination: \"/m\", type: \"tmpfs\", source: \"tmpfs\", options: [\"idmap\"]}]" \
        'mounts\[[0-9]+\].options: "idmap" and "ridmap" are supported for bind mounts only'
refused "uidMappings without gidMappings" \
        "$UNS | $CMD | $(bind '["bind", "idmap"]' ', uidMappings: [{containerID: 0, hostID: 1234, size: 1}]')" \
        'mounts\[[0-9]+\].uidMappings: must be given together with gidMappings'
refused "a source that does not exist" \
        "$UNS | $CMD | .mounts += [{destination: \"/m\", type: \"bind\", source: \"$TEST_TMPDIR/nonexistent\", options: [\"bind\", \"idmap\"]}]" \
        'mounts\[[0-9]+\]: mount .*/nonexistent.*: source: No such file or directory'

is "$(sd features | jq -c '.linux.mountExtensions.idmap.enabled, (.mountOptions | map(select(. == "idmap" or . == "ridmap")))' | paste -sd' ' -)" \
        'true ["idmap","ridmap"]' "features: id-mapped mounts enabled, idmap and ridmap listed"

done_testing
