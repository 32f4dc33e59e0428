#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The same bundle under `runc run` and `sdrun run` gives the same observable result (issue 3): id, hostname,
# capability sets, NoNewPrivs, rlimits, umask, cwd, environment, the mount list (type and target), /dev.
# The known differences are filtered out below, each with its reason.
. "$(dirname "$0")/lib.sh"

require_root
require_systemd
RUNC=$(command -v runc) || bail "runc is not installed (Debian package runc): it is the reference here"

B=$TEST_TMPDIR/b
make_bundle "$B" || bail "make_bundle failed"
SUMMARY='id; hostname; grep -E "^(Cap(Inh|Prm|Eff|Bnd|Amb)|NoNewPrivs|Seccomp):" /proc/self/status; ulimit -n; ulimit -Hn; umask; pwd;
env | sort; echo "pid $$"; awk "{ for (i = 7; i <= NF; i++) if (\$i == \"-\") { print \$5, \$(i + 1); break } }" /proc/self/mountinfo;
ls -A /dev | sort; ls -A /dev/pts | sort; readlink /dev/fd /dev/stdin /dev/stdout /dev/stderr /dev/ptmx;
ls -ln /dev/null /dev/zero /dev/full /dev/random /dev/urandom /dev/tty | awk "{print \$1, \$5, \$6, \$NF}"'

# summary RUNTIME: the summary of a container of this bundle under RUNTIME
summary() {
        local id
        id=$(new_id cmp)
        if [ "$1" = runc ]; then
                "$RUNC" --root "$TEST_TMPDIR/runc" run --bundle "$B" "$id" 2>&1 </dev/null
                "$RUNC" --root "$TEST_TMPDIR/runc" delete --force "$id" >/dev/null 2>&1
        else
                track_container "$id"
                "$SDRUN" --root "$SDRUN_ROOT" run --bundle "$B" "$id" 2>&1 </dev/null
        fi
}

# Known differences, normalised away:
# - /sys/fs/cgroup: runc mounts the v1 controllers each on its own cgroup mount under a tmpfs and sdrun the
#   hierarchies systemd uses; on the unified layout both mount cgroup2. Only "a cgroup mount exists" is compared.
# - mount order: runc applies readonlyPaths before maskedPaths, sdrun maskedPaths first; the paths are
#   disjoint, so the result is the same set of mounts: lines are compared sorted.
normalise() {
        sed -E '/^\/sys\/fs\/cgroup(\/| )/d' | sort
}

compare() { # compare DESC
        local a b
        a=$(summary runc | normalise)
        b=$(summary sdrun | normalise)
        if [ "$a" = "$b" ]; then
                _tap_result 0 "$1: runc and sdrun agree"
        else
                _tap_result 1 "$1: runc and sdrun agree"
                diff <(echo "$a") <(echo "$b") | _tap_diag_stream
        fi
        like "$b" 'CapBnd' "$1: the summary ran under sdrun"
}

bundle_set "$B" '.process.args=["sh","-c",$s]' --arg s "$SUMMARY"
compare "default bundle (root)"

bundle_set "$B" '.process.user={uid: 1000, gid: 1000, additionalGids: [10, 20], umask: 18} | .process.cwd="/home/user" |
        .process.rlimits=[{type: "RLIMIT_NOFILE", soft: 512, hard: 2048}] | .hostname="cmp-host" |
        .process.env += ["FOO=bar"] | .process.noNewPrivileges=false |
        .process.capabilities.ambient=["CAP_KILL"] | .process.capabilities.inheritable=["CAP_KILL"]'
compare "user 1000, groups, umask, cwd, rlimit, hostname, env, ambient caps, NNP off"

bundle_set "$B" '.root.readonly=false | .mounts += [{destination: "/scratch", type: "tmpfs", source: "tmpfs", options: ["nosuid","size=1m"]}]'
compare "root read-write and an extra tmpfs"

done_testing
