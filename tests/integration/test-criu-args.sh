#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# checkpoint/restore on the host (the boxes): argument errors are refused before anything happens, with a
# message naming the argument, and leave nothing behind; --version and features report CRIU; and on a kernel
# where CRIU cannot work (the development machines' 6.18: CRIU 3.17 fails in its vDSO detection), checkpoint
# fails at once with a message naming the cause and leaves the container running. The real checkpoint and
# restore are tested in the VM tier (test-vm-criu.sh), on a kernel CRIU supports.
. "$(dirname "$0")/lib.sh"

require_root
require_systemd
command -v criu >/dev/null || bail "criu is not installed (Debian package criu)"

S() { "$SDRUN" --root "$SDRUN_ROOT" "$@"; }

# --version and features.
criu_version=$(criu --version | sed -n 's/^Version: //p')
like "$(S --version)" "criu: $criu_version \(" "--version names CRIU's version ($criu_version)"
like "$(S --version)" '\+CRIU' "--version lists +CRIU"
like "$(S --criu /nonexistent/criu --version)" 'criu: not available \(not installed\)' "--version with --criu naming nothing: not available"
f=$(S features)
is "$(jq -r '.annotations["org.criu.version"]' <<<"$f")" "$criu_version" "features: annotations org.criu.version"
is "$(jq -r '.annotations["io.github.sdrun.criu"]' <<<"$f")" available "features: annotations io.github.sdrun.criu"

B=$TEST_TMPDIR/b
make_bundle "$B"
bundle_set "$B" '.process.args=["sleep","1000"]'
id=$(new_id crargs)
track_container "$id"
S run -d --bundle "$B" "$id" </dev/null >/dev/null 2>&1
is "$(S state "$id" | jq -r .status)" running "a container to checkpoint is running"

# expect_refused DESC REGEX CMD...: CMD fails (exit 1) with a message matching REGEX.
expect_refused() {
        local desc=$1 re=$2 out rc=0
        shift 2
        out=$("$@" 2>&1) || rc=$?
        if [ "$rc" = 1 ] && [[ $out =~ $re ]]; then
                ok_desc "$desc" true
        else
                ok_desc "$desc (exit $rc: $out)" false
        fi
}

img=$TEST_TMPDIR/img
expect_refused "checkpoint --manage-cgroups-mode bogus is refused" '--manage-cgroups-mode: unknown mode "bogus"' \
        S checkpoint --image-path "$img" --manage-cgroups-mode bogus "$id"
expect_refused "checkpoint --empty-ns ipc is refused" '--empty-ns: only "network"' \
        S checkpoint --image-path "$img" --empty-ns ipc "$id"
expect_refused "checkpoint --lazy-pages is refused" '--lazy-pages: not supported' \
        S checkpoint --image-path "$img" --lazy-pages "$id"
expect_refused "checkpoint --page-server without a port is refused" '--page-server: expected ADDRESS:PORT' \
        S checkpoint --image-path "$img" --page-server localhost "$id"
expect_refused "checkpoint without an id is refused" 'missing argument: container id' S checkpoint
expect_refused "checkpoint of a container that does not exist" 'does not exist' S checkpoint --image-path "$img" nosuch-$$
expect_refused "checkpoint --criu naming nothing: CRIU is not installed" 'CRIU is not installed' \
        S --criu /nonexistent/criu checkpoint --image-path "$img" "$id"
# --parent-path (the images of an earlier --pre-dump, relative to the image directory): one that is absolute
# or names nothing is refused before CRIU runs, with a message naming the option, as runc does (the control).
expect_refused "checkpoint --pre-dump --parent-path naming nothing is refused, naming the option" \
        '--parent-path: "\.\./nothing" \(.*/nothing\): No such file or directory' \
        S checkpoint --pre-dump --image-path "$img" --parent-path ../nothing "$id"
expect_refused "checkpoint --parent-path naming nothing is refused" '--parent-path: "\.\./nothing"' \
        S checkpoint --image-path "$img" --parent-path ../nothing "$id"
touch "$TEST_TMPDIR/afile"
expect_refused "checkpoint --pre-dump --parent-path naming a file is refused" '--parent-path: "\.\./afile" .* is not a directory' \
        S checkpoint --pre-dump --image-path "$img" --parent-path ../afile "$id"
expect_refused "checkpoint --pre-dump --parent-path absolute is refused" '--parent-path: "/tmp" must be a path relative to the image directory' \
        S checkpoint --pre-dump --image-path "$img" --parent-path /tmp "$id"
RC() { runc --root "$TEST_TMPDIR/runc" --systemd-cgroup "$@"; }
rcid=runc-crparent-$$
cleanup_add runc --root "$TEST_TMPDIR/runc" delete -f "$rcid"
RC run -d --bundle "$B" "$rcid" </dev/null >/dev/null 2>&1
rout=$(RC checkpoint --pre-dump --image-path "$TEST_TMPDIR/rimgp" --parent-path ../nothing "$rcid" 2>&1) && rrc=0 || rrc=$?
ok_desc "runc (control) refuses that --parent-path too, naming it (exit $rrc: $(tail -c 200 <<<"$rout"))" \
        eval '[ "$rrc" != 0 ] && [[ $rout == *"--parent-path"* ]]'
rout=$(RC checkpoint --pre-dump --image-path "$TEST_TMPDIR/rimgp" --parent-path /tmp "$rcid" 2>&1) && rrc=0 || rrc=$?
ok_desc "runc (control) refuses an absolute --parent-path (exit $rrc: $(tail -c 200 <<<"$rout"))" \
        eval '[ "$rrc" != 0 ] && [[ $rout == *"--parent-path must be relative"* ]]'
RC delete -f "$rcid" >/dev/null 2>&1
is "$(S state "$id" | jq -r .status)" running "the container is still running after the refused checkpoints"

idc=$(new_id crcreated)
track_container "$idc"
S create --bundle "$B" "$idc" </dev/null >/dev/null 2>&1
expect_refused "checkpoint of a created (not started) container is refused" 'it is created, not running' \
        S checkpoint --image-path "$img" "$idc"
S delete -f "$idc"

# Restore: refused before any state, scope or mount exists.
rid=$(new_id crrestore)
track_container "$rid"
expect_refused "restore from a missing image directory is refused" '--image-path: .*No such file or directory' \
        S restore -d --image-path "$TEST_TMPDIR/nothing" --bundle "$B" "$rid"
no_leftovers "$rid"
mkdir -p "$TEST_TMPDIR/empty"
expect_refused "restore from a directory without a checkpoint is refused" 'holds no checkpoint \(no inventory.img\)' \
        S restore -d --image-path "$TEST_TMPDIR/empty" --bundle "$B" "$rid"
no_leftovers "$rid"
expect_refused "restore --console-socket without process.terminal is refused" '--console-socket given but process.terminal is false' \
        S restore -d --console-socket /tmp/x.sock --image-path "$TEST_TMPDIR/empty" --bundle "$B" "$rid"
no_leftovers "$rid"
BT=$TEST_TMPDIR/bt
make_bundle "$BT"
bundle_set "$BT" '.process.terminal=true | .process.args=["sh"]'
expect_refused "restore of a container with process.terminal without --console-socket is refused" \
        'process.terminal is true: --console-socket is required' \
        S restore -d --image-path "$TEST_TMPDIR/empty" --bundle "$BT" "$rid"
mkdir -p "$TEST_TMPDIR/noterm"
touch "$TEST_TMPDIR/noterm/inventory.img"
expect_refused "restore --console-socket from a checkpoint that records no terminal is refused" \
        '--console-socket: the checkpoint in .* records no terminal' \
        S restore -d --console-socket /tmp/x.sock --image-path "$TEST_TMPDIR/noterm" --bundle "$BT" "$rid"
expect_refused "restore --manage-cgroups-mode bogus is refused" '--manage-cgroups-mode: unknown mode' \
        S restore --manage-cgroups-mode bogus "$rid"
expect_refused "restore of an invalid id is refused" 'invalid|not a valid' \
        S restore -d --image-path "$TEST_TMPDIR/empty" --bundle "$B" '../x'
no_leftovers "$rid"

# Restore checks config.json exactly as create does (it used to skip create's checks: it made the state and
# the scope and ran CRIU for a config create refuses). Each config below is refused by create (the control)
# and by restore with the same message naming the field, before any state, scope or mount exists (the
# checkpoint is a stand-in: CRIU is never reached).
mkdir -p "$TEST_TMPDIR/fake"
touch "$TEST_TMPDIR/fake/inventory.img"
BV=$TEST_TMPDIR/bv
mkdir -p "$BV"
refused_like_create() {
        local desc=$1 expr=$2 re=$3 cid
        jq --arg root "$B/rootfs" '.root.path=$root' "$B/config.json" >"$BV/config.json"
        bundle_set "$BV" "$expr"
        cid=$(new_id crcreate)
        track_container "$cid"
        expect_refused "create refuses $desc (the control)" "config.json: $re" S create --bundle "$BV" "$cid"
        expect_refused "restore refuses $desc, naming the field as create does" "config.json: $re" \
                S restore -d --image-path "$TEST_TMPDIR/fake" --bundle "$BV" "$rid"
        no_leftovers "$rid"
}
refused_like_create "a sysctl that would rename the host" '.linux.sysctl={"kernel.hostname":"x"}' \
        'linux.sysctl: "kernel.hostname" conflicts with the "hostname" field'
refused_like_create "uid 4294967295 (setresuid's \"unchanged\")" '.process.user.uid=4294967295' \
        'process.user.uid: 4294967295 is not a valid user id'
refused_like_create "a memory limit too low to start" '.linux.resources.memory.limit=1048576' \
        'linux.resources.memory.limit: 1048576 bytes is too low'
refused_like_create "a root of its own without a mount namespace" \
        'del(.linux.namespaces[] | select(.type == "mount"))' 'root.path: ".*" is not the host'"'"'s "/"'
refused_like_create "a hostname in the runtime's own uts namespace, joined by path" \
        '.hostname="x" | .linux.namespaces |= map(if .type == "uts" then .path="/proc/self/ns/uts" else . end)' \
        'hostname: the uts namespace joined by path is the host'"'"'s'

# The fail-fast path: does CRIU work on this kernel at all? (`criu check` fails in its kernel feature
# detection where it cannot.)
check_out=$(criu check 2>&1) && criu_ok=1 || criu_ok=0
if [ $criu_ok = 0 ] && grep -q 'kernel features detection\|kerndat' <<<"$check_out"; then
        start=$(date +%s%N)
        out=$(S checkpoint --image-path "$img" "$id" 2>&1) && rc=0 || rc=$?
        ms=$(( ($(date +%s%N) - start) / 1000000 ))
        is "$rc" 1 "checkpoint fails on this kernel ($(uname -r))"
        like "$out" "CRIU $criu_version cannot work on this kernel \(Linux $(uname -r)\)" \
                "the message names CRIU's version and the kernel"
        like "$out" 'vdso|kerndat' "the message names CRIU's own reason ($out)"
        # CRIU stops in its kernel feature detection (~0.4 s idle); the bound leaves room for a loaded machine.
        ok_desc "checkpoint failed at once (${ms} ms < 20000 ms)" test "$ms" -lt 20000
        is "$(S state "$id" | jq -r .status)" running "the container is still running after the failed checkpoint"
        ok_desc "no checkpointed marker was left" test ! -e "$SDRUN_ROOT/$id/checkpointed"
        # runc as the control: CRIU fails for it too on this kernel (so it is the kernel, not sdrun).
        R() { runc --root "$TEST_TMPDIR/runc" --systemd-cgroup "$@"; }
        rid2=runc-crargs-$$
        cleanup_add runc --root "$TEST_TMPDIR/runc" delete -f "$rid2"
        R run -d --bundle "$B" "$rid2" </dev/null >/dev/null 2>&1
        start=$(date +%s%N)
        rout=$(R checkpoint --image-path "$TEST_TMPDIR/rimg" "$rid2" 2>&1) && rrc=0 || rrc=$?
        rms=$(( ($(date +%s%N) - start) / 1000000 ))
        ok_desc "runc (control) fails to checkpoint on this kernel too (exit $rrc, ${rms} ms; sdrun ${ms} ms)" test "$rrc" != 0
        diag "runc says: $(tail -c 300 <<<"$rout")"
        R delete -f "$rid2" >/dev/null 2>&1
else
        skip "CRIU works on this kernel ($(uname -r)): the fail-fast path is for kernels it cannot work on"
        skip "(same)"
        skip "(same)"
        skip "(same)"
        skip "(same)"
        skip "(same)"
        skip "(same)"
fi

S delete -f "$id"
no_leftovers "$id"
done_testing
