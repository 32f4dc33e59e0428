#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# linux.netDevices (runtime-spec 1.3): host network devices moved into the container's network namespace,
# renamed (also by a "%d" template), with their permanent global addresses kept and set up; into a new
# namespace, one joined by path, and one of a user namespace; refused before anything exists where it
# cannot work (no network namespace of the container's own, a device that does not exist) and, with the
# device left on the host, where the name is taken in the container. The runtime runs in a network namespace
# of the test's own (nsenter --net), which stands for the host, so that the test never touches the machine's
# network. No control: Debian's runc 1.1 and crun 1.8 do not implement netDevices (crun ignores it).
. "$(dirname "$0")/lib.sh"

require_root
require_systemd
command -v ip >/dev/null || bail "ip is not installed (Debian package iproute2)"
command -v nsenter >/dev/null || bail "nsenter is not installed (Debian package util-linux)"

HOSTNS=sdt-nd-host-$$
ip netns add "$HOSTNS" || bail "ip netns add failed"
cleanup_add ip netns delete "$HOSTNS"
inhost() { ip netns exec "$HOSTNS" "$@"; }
sd() { nsenter --net="/run/netns/$HOSTNS" "$SDRUN" --root "$SDRUN_ROOT" "$@"; }

B=$TEST_TMPDIR/b
make_bundle "$B" || bail "make_bundle failed"
bundle_set "$B" 'del(.linux.resources)'
cp "$B/config.json" "$TEST_TMPDIR/base.json"

# run_sh JQ CMD: run the bundle edited by JQ with process.args=["sh","-c",CMD]: "rc=N" and the output
run_sh() {
        local id rc=0 out
        id=$(new_id nd); track_container "$id"
        cp "$TEST_TMPDIR/base.json" "$B/config.json"
        bundle_set "$B" "$1 | .process.args=[\"sh\",\"-c\",\$c]" --arg c "$2"
        out=$(sd run --bundle "$B" "$id" 2>&1 </dev/null) || rc=$?
        echo "$id" >"$TEST_TMPDIR/last-id"
        printf 'rc=%s\n%s\n' "$rc" "$out"
}
last_gone() { no_leftovers "$(cat "$TEST_TMPDIR/last-id")"; }
# a veth pair in the stand-in host: NAME is moved, its peer NAME-p stays
veth() { inhost ip link add "$1" type veth peer name "$1-p"; }

# ---- moved and renamed, its addresses kept, up ----
veth ndv0
inhost ip addr add 169.254.169.13/32 dev ndv0
inhost ip addr add 2001:db8::13/64 dev ndv0 nodad
inhost ip addr add 10.99.0.1/24 scope link dev ndv0
out=$(run_sh '.linux.netDevices={"ndv0": {"name": "ctr_d0"}}' \
        'ip -o addr show dev ctr_d0 | grep -v fe80 | tr -s " " | cut -d" " -f3-6 | sort | paste -sd, -; cat /sys/class/net/ctr_d0/flags')
like "$out" $'^rc=0\n' "netDevices: run with a device moved and renamed"
like "$out" $'inet 169.254.169.13/32 scope global,inet6 2001:db8::13/64 scope global' \
        "netDevices: its permanent global addresses (IPv4 and IPv6) are kept, the link-scope one not"
unlike "$out" '10\.99\.0\.1' "netDevices: an address of link scope is not carried over"
flags=$(sed -n 3p <<<"$out")
ok_desc "netDevices: the device is up inside (flags $flags)" test $((flags & 1)) = 1
ok_desc "netDevices: the device is gone from the host side" sh -c "! ip netns exec $HOSTNS ip link show ndv0 >/dev/null 2>&1"
last_gone

# ---- the same name, and two devices named by a template ----
veth ndt0
veth ndt1
out=$(run_sh '.linux.netDevices={"ndt0": {"name": "eth%d"}, "ndt1": {}}' 'ls /sys/class/net | paste -sd, -')
is "$out" $'rc=0\neth0,lo,ndt1' "netDevices: a \"%d\" template takes a name the kernel picks, a device without a name keeps its own"
last_gone

# ---- into a network namespace joined by path: the device stays there after the container ----
JOINNS=sdt-nd-join-$$
ip netns add "$JOINNS" && cleanup_add ip netns delete "$JOINNS"
veth ndj0
inhost ip addr add 169.254.171.1/32 dev ndj0
# a device there has the index ndj0 has on the host: the kernel gives ndj0 another one, and its address must
# still go to ndj0
idx=$(inhost cat /sys/class/net/ndj0/ifindex)
ip -n "$JOINNS" link add name occupy index "$idx" type veth peer name occupy-p
out=$(run_sh ".linux.netDevices={\"ndj0\": {}} | .linux.namespaces |= map(if .type == \"network\" then .path = \"/run/netns/$JOINNS\" else . end)" \
        'ip -o addr show | grep 169.254.171.1 | tr -s " " | cut -d" " -f2')
is "$out" $'rc=0\nndj0' "netDevices: into a network namespace joined by path, where its index is taken: the address on it"
ok_desc "netDevices: the device is in that namespace after the container is gone" ip netns exec "$JOINNS" ip link show ndj0
last_gone

# ---- a network namespace of the container's user namespace ----
chmod 0755 "$TEST_TMPDIR" "$B"
veth ndu0
inhost ip addr add 169.254.170.1/32 dev ndu0
out=$(run_sh '.linux.netDevices={"ndu0": {}} | .linux.namespaces += [{type: "user"}]
        | .linux.uidMappings=[{containerID: 0, hostID: 100000, size: 65536}]
        | .linux.gidMappings=[{containerID: 0, hostID: 100000, size: 65536}]' \
        'ip -o addr show dev ndu0 | grep -c 169.254.170.1')
is "$out" $'rc=0\n1' "netDevices: with a user namespace too (its address kept)"
last_gone

# ---- refused: nothing left, and the device still on the host ----
veth ndc0
out=$(run_sh '.linux.netDevices={"ndc0": {"name": "lo"}}' 'true')
like "$out" '^rc=1.*linux.netDevices\["ndc0"\]: a device named "lo" exists in the container.s network namespace already' \
        "netDevices: a name taken in the container is refused"
ok_desc "netDevices: ... and the device is still on the host" inhost ip link show ndc0
last_gone
out=$(run_sh '.linux.netDevices={"ndc0": {}} | del(.linux.namespaces[] | select(.type == "network"))' 'true')
like "$out" '^rc=1.*linux.netDevices: unable to move network devices without a NET namespace' \
        "netDevices without a network namespace of the container's own: refused in runc's words"
last_gone
out=$(run_sh '.linux.netDevices={"ndnone0": {}}' 'true')
like "$out" '^rc=1.*linux.netDevices\["ndnone0"\]: no network device "ndnone0" on the host' \
        "netDevices: a device the host does not have is refused, naming it"
last_gone
ok_desc "netDevices: the refused device is untouched" inhost ip link show ndc0

is "$(sd features | jq -c .linux.netDevices)" '{"enabled":true}' "features: netDevices enabled"

done_testing
