#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# runc's own integration tests (tests/integration/*.bats of Debian's runc source package, the version of the
# installed runc, fetched by scripts/test into $SDRUN_BUILDDIR/runc-suite) against sdrun, through their RUNC
# switch and with RUNC_USE_SYSTEMD set (sdrun's containers are systemd units: runc's cgroupfs mode checks
# /sys/fs/cgroup/CONTROLLER/PATH, where sdrun has a scope): another project's tests of what a runc-compatible
# runtime does (lifecycle, exec, kill, delete, ps, pause, events, hooks, tty, update, mounts, devices, masks,
# seccomp, user namespaces, cgroups). Each of its tests is one test here.
#
# What they need that this machine lacks is provided here: the busybox image (its get-images.sh downloads
# it) from busybox-static, and runc's recvtty (Go) as tests/integration/helpers-runc/recvtty.c. The few
# tests that check what is runc's own, or need a Go helper of runc's, are listed below with the reason and
# count as skipped when they fail. Files not run: checkpoint (CRIU 3.17 fails on this kernel: the VM tier
# checkpoints), seccomp-notify* (runc's Go seccompagent), help and version (runc's name and its urfave/cli
# layout), spec (a Go validator), mounts_sshfs (sshfs), no_pivot (on this kernel runc's and crun's own runs
# mount the fresh procfs the test expects refused, checked by hand).
. "$(dirname "$0")/lib.sh"

require_root
require_systemd
# In CI the hybrid lane runs it: the v1 hierarchies hold every controller there; the unified box's cgroup v2
# hierarchy offers none, so runc's cgroup tests could not read a single limit.
ci_lane hybrid

SUITE=$SDRUN_BUILDDIR/runc-suite
if [ ! -f "$SUITE/tests/integration/helpers.bash" ]; then
        skip "runc's test suite is not in $SUITE (scripts/test fetches it: fetch_runc_suite in scripts/lib/common.sh)"
        done_testing
fi
for c in bats gawk; do
        command -v "$c" >/dev/null || bail "$c is not installed (Debian packages bats, gawk)"
done
[ -n "${RECVTTY:-}" ] && [ -x "$RECVTTY" ] || bail "RECVTTY (the recvtty helper) is not set or not executable"

files=(state start kill delete list create exec run ps pause events hooks tty update cwd umask mask dev mounts
        mounts_recursive root start_detached start_hello debug seccomp userns cgroups cgroup_delegation)
[ -n "${SDRUN_RUNC_FILES:-}" ] && read -ra files <<<"$SDRUN_RUNC_FILES"

# FILE:TEST -> why sdrun differs on purpose
declare -A known=(
        ["cgroups:runc run/create should warn about a non-empty cgroup"]="runc puts a second container into a cgroup that holds one, with a warning; sdrun refuses it, naming the container that has it: one systemd scope is one container (containers that belong together share a parent slice)"
        ["update:update cpuset parameters via resources.CPU"]="the test writes linux.resources.CPU with Cpus and Mems, which runc's Go JSON decoder matches to cpu.cpus and cpu.mems whatever their case; sdrun, as crun, reads the runtime-spec's names"
)
# FILE:TEST (or FILE) -> why it fails here whatever sdrun does
declare -A environment=(
        ["update:update cpu period in a pod cgroup with pod limit set"]="it makes the pod's slice with runc's sd-helper, a Go program of runc's tree that Debian does not ship"
)

W=$TEST_TMPDIR/runc-suite
mkdir -p "$W/contrib/cmd/recvtty" "$W/img/rootfs"
cp -a "$SUITE/tests" "$W/"
install -m 755 "$RECVTTY" "$W/contrib/cmd/recvtty/recvtty" || bail "cannot install recvtty"
# The busybox image: busybox-static with its applets, and the users and groups the tests name. No /proc or
# /sys: the runtime makes them, and mask.bats puts a symlink there (which must be refused).
r=$W/img/rootfs
mkdir -p "$r"/{bin,etc,dev,tmp,root,var,run} && chmod 1777 "$r/tmp" &&
        cp "$(command -v busybox)" "$r/bin/busybox" && busybox_links "$r/bin" "$r/bin/busybox" ||
        bail "cannot build the busybox image"
printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\n' >"$r/etc/passwd"
printf 'root:x:0:\nnogroup:x:65534:\n' >"$r/etc/group"
tar -C "$r" -cf "$W/img/busybox.tar" . || bail "cannot pack the busybox image"
# get-images.sh, which would download busybox and Debian: the one image for both (the tests that need
# Debian's own files skip or are listed above).
cat >"$W/tests/integration/get-images.sh" <<EOF
#!/bin/bash
# written by tests/integration/test-runc-suite.sh: no download, the busybox image built there
echo BUSYBOX_IMAGE=$W/img/busybox.tar
echo DEBIAN_IMAGE=$W/img/busybox.tar
EOF
chmod 755 "$W/tests/integration/get-images.sh"
diag "runc test suite $(cat "$SUITE/.version" 2>/dev/null) against $SDRUN (RUNC_USE_SYSTEMD=1)"

# runc_bats ARGS...: bats in the suite's directory, sdrun as its runc
runc_bats() {
        (cd "$W/tests/integration" && env RUNC="$SDRUN" RUNC_USE_SYSTEMD=1 timeout -k 10 600 bats --tap "$@") </dev/null
}
# retry_passes FILE NAME: the test NAME of FILE, run once more on its own, passes.
retry_passes() {
        local re
        re=$(printf '%s' "$2" | sed 's/[][\\.*^$()+?{}|/]/\\&/g')
        runc_bats --filter "^$re\$" "$1.bats" >"$TEST_TMPDIR/retry" 2>&1
        grep -q '^ok 1 ' "$TEST_TMPDIR/retry" && ! grep -q '^not ok' "$TEST_TMPDIR/retry" &&
                ! grep -qi '^ok 1 .*# skip' "$TEST_TMPDIR/retry"
}

units() {
        systemctl list-units --plain --no-legend --type=scope --state=active,failed,activating,deactivating \
                -- 'runc-cgroups-integration-test*' | awk '{print $1}'
}
for f in "${files[@]}"; do
        [ -f "$W/tests/integration/$f.bats" ] || { fail "runc $f: the file is in the suite"; continue; }
        t0=$SECONDS
        rc=0
        runc_bats "$f.bats" >"$TEST_TMPDIR/out" 2>&1 || rc=$?
        diag "runc $f: $((SECONDS - t0)) s"
        if [ $rc = 124 ] || [ $rc = 137 ]; then
                fail "runc $f: finished within 600 s"
                diag "$(tail -30 "$TEST_TMPDIR/out")"
                continue
        fi
        bats_judge runc "runc's" "$f" "$TEST_TMPDIR/out" retry_passes 'rmdir: failed to remove'
        if [ "$BATS_RAN" = 0 ]; then
                fail "runc $f: ran (exit $rc, no result line)"
                diag "$(tail -30 "$TEST_TMPDIR/out")"
        fi
done
# The suite's teardown deletes its containers; a scope left behind would be sdrun's.
is "$(units | paste -sd ' ')" "" "no scope of the suite's containers is left"

done_testing
