#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# `update` and the CPU limits against runc 1.1 as the control, on the same bundle (issue 32, items 5-7):
#  5. a CPU quota above the parent's: on cgroup v1 the kernel refuses it (EINVAL), systemd logs that and goes
#     on, runc fails: so does sdrun, naming linux.resources.cpu.quota (create and update). Hybrid only: cgroup
#     v2 refuses nothing (the parent's limit applies to the child as well).
#  6. the quota across `systemctl daemon-reload`: systemd stores CPUQuotaPerSecUSec as a whole percentage and
#     re-applies what it reads back; rounded up to 10 ms as runc does, the quota stays at least the one asked
#     for (the same as runc's), and the period is unchanged. Between reloads the cgroup has the exact values.
#  7. cpu.cpus/mems on cgroup v1: AllowedCPUs=/AllowedMemoryNodes= are set too (systemctl show tells the truth,
#     as with runc), the cpuset files are written, and they survive a reload.
# The unified box has no cgroup controller (the host binds them to v1): there only the unit properties are
# checked; the cgroup files are hybrid-only checks, skipped with the reason. runc writes cpu.max and
# cpuset.cpus itself and fails where the cgroup has no such controller: it is the control in the hybrid box.
. "$(dirname "$0")/lib.sh"

require_root
require_systemd
RUNC=$(command -v runc) || bail "runc is not installed (Debian package runc): it is the control here"

sd() { "$SDRUN" --root "$SDRUN_ROOT" "$@"; }
rc() { "$RUNC" --systemd-cgroup --root "$TEST_TMPDIR/runc" "$@"; }
hybrid() { [ "$SDRUN_TEST_LAYOUT" = hybrid ]; }
# cpu_files UNIT: "quota/period" of the unit's v1 cpu cgroup
cpu_files() {
        local d
        d=$(cgroup_v1_dir "$1" cpu) || { echo "<no cpu cgroup for $1>"; return 0; }
        echo "$(cat "$d/cpu.cfs_quota_us")/$(cat "$d/cpu.cfs_period_us")"
}
cpuset_files() {
        local d
        d=$(cgroup_v1_dir "$1" cpuset) || { echo "<no cpuset cgroup for $1>"; return 0; }
        echo "$(cat "$d/cpuset.cpus")/$(cat "$d/cpuset.mems")"
}
props() { systemctl show -p CPUQuotaPerSecUSec -p CPUQuotaPeriodUSec --value -- "$1" | paste -sd' '; }

B=$TEST_TMPDIR/b
make_bundle "$B" || bail "make_bundle failed"
bundle_set "$B" '.process.args=["sleep","1000"]'
cp "$B/config.json" "$TEST_TMPDIR/config.orig"

# Ids without '-' (which the unit name would escape); units sdrun-ID.scope and runc-ID.scope in SLICE.
SLICE=machine.slice
sd_create() { # ID [JQ]: sdrun create in $SLICE (cgroupsPath "SLICE:sdrun:ID")
        cp "$TEST_TMPDIR/config.orig" "$B/config.json"
        bundle_set "$B" ".linux.cgroupsPath=\$p | ${2:-.}" --arg p "$SLICE:sdrun:$1" || return 1
        track_container "$1"
        sd create --bundle "$B" "$1"
}
runc_create() { # ID [JQ]: the same bundle with runc --systemd-cgroup (cgroupsPath "SLICE:runc:ID")
        local d=$TEST_TMPDIR/rb-$1
        mkdir -p "$d"
        jq --arg p "$SLICE:runc:$1" --arg r "$B/rootfs" ".linux.cgroupsPath=\$p | .root.path=\$r | ${2:-.}" \
                "$TEST_TMPDIR/config.orig" >"$d/config.json" || return 1
        cleanup_add runc_gone "$1"
        rc create --bundle "$d" "$1"
}
runc_gone() {
        rc delete --force "$1" >/dev/null 2>&1
        systemctl stop "runc-$1.scope" >/dev/null 2>&1
}
NOCONTROL="runc fails where the cgroup has no cpu/cpuset controller (this box has none): no control here"
# runc_step DESC CMD...: a step of the control (hybrid box); as_runc GOT RUNC_GOT DESC: compared with it
runc_step() {
        local d=$1
        shift
        if hybrid; then ok_desc "runc: $d" "$@"; else skip "runc: $d: $NOCONTROL"; fi
}
as_runc() {
        if hybrid; then is "$1" "$2" "$3"; else skip "$3: $NOCONTROL"; fi
}
new_ids() { sid=$(new_id upd | tr -d -); rid=$(new_id updr | tr -d -); su=sdrun-$sid.scope; ru=runc-$rid.scope; }

# ---------------------------------------------------------------------------------------------------------
# 5. A quota above the parent slice's

if hybrid; then
        SLICE=sdrunq$$.slice
        cleanup_add systemctl stop "$SLICE"
        cleanup_add systemctl revert "$SLICE"
        ok_desc "a slice with CPUQuota=20% (20000 of 100000 us)" systemctl set-property --runtime "$SLICE" CPUQuota=20%

        new_ids
        ok_desc "runc: create in $SLICE" runc_create "$rid"
        ok_desc "sdrun: create in $SLICE" sd_create "$sid"
        is "$(cat "/sys/fs/cgroup/cpu/$SLICE/cpu.cfs_quota_us" 2>&1)" 20000 "the slice's cpu.cfs_quota_us is 20000"
        out=$(rc update --cpu-quota 50000 "$rid" 2>&1); r=$?
        is "$r" 1 "runc: update --cpu-quota 50000 (50% > the slice's 20%) exits 1 (the kernel refuses it)"
        diag "runc says: $out"
        out=$(sd update --cpu-quota 50000 "$sid" 2>&1); r=$?
        is "$r" 1 "sdrun: update --cpu-quota 50000 exits 1 too (systemd applied nothing and said nothing)"
        like "$out" 'linux\.resources\.cpu\.quota: write "50000" to .*/cpu\.cfs_quota_us: Invalid argument' \
                "... naming the field, the file and the kernel's refusal"
        like "$out" 'above a parent cgroup' "... and the likely reason"
        is "$(cpu_files "$su")" "$(cpu_files "$ru")" "the quota in the cgroup is the same as runc's ($(cpu_files "$ru"))"
        out=$(rc update --cpu-quota 10000 "$rid" 2>&1); r=$?
        is "$r" 0 "runc: update --cpu-quota 10000 (below the slice's) works"
        ok_desc "sdrun: so does update --cpu-quota 10000" sd update --cpu-quota 10000 "$sid"
        is "$(cpu_files "$su")" 10000/100000 "... and the cgroup has 10000 of 100000"
        is "$(cpu_files "$su")" "$(cpu_files "$ru")" "... as runc's"
        ok_desc "sdrun: delete" sd delete --force "$sid"
        no_leftovers "$sid"
        runc_gone "$rid"

        # The same at create
        new_ids
        q='.linux.resources.cpu={quota: 50000, period: 100000}'
        runc_create "$rid" "$q" >"$TEST_TMPDIR/out" 2>&1; r=$?
        ok_desc "runc: create with cpu.quota 50000 in $SLICE fails ($r)" test "$r" != 0
        # to a file: a container that is created keeps the stdout it was given open
        sd_create "$sid" "$q" >"$TEST_TMPDIR/out" 2>&1; r=$?
        out=$(cat "$TEST_TMPDIR/out")
        is "$r" 1 "sdrun: create with cpu.quota 50000 in $SLICE fails too"
        like "$out" 'linux\.resources\.cpu\.quota: write "50000" to .*cpu\.cfs_quota_us: Invalid argument' \
                "... naming the field"
        no_leftovers "$sid"
        runc_gone "$rid"
        SLICE=machine.slice
else
        skip "cgroup v2 lets a child's cpu.max exceed its parent's (the parent's limit applies): nothing is refused; and this box has no cpu controller"
fi

# ---------------------------------------------------------------------------------------------------------
# 6. The quota and period across daemon-reload

# reload_case DESC: sdrun's $su and runc's $ru were given quota 500000 of period 900000
reload_case() {
        is "$(props "$su")" "560ms 900ms" "$1: CPUQuotaPerSecUSec rounded up to 560ms (555.556 exactly), period 900ms"
        as_runc "$(props "$su")" "$(props "$ru")" "$1: the same properties as runc's"
        if hybrid; then
                is "$(cpu_files "$su")" 500000/900000 "$1: the cgroup has quota 500000 of 900000"
                is "$(cpu_files "$ru")" 500000/900000 "$1: runc's too"
        fi
        ok_desc "$1: systemctl daemon-reload" systemctl daemon-reload
        is "$(props "$su")" "560ms 900ms" "$1: after daemon-reload still 560ms of 900ms (systemd keeps whole percents)"
        as_runc "$(props "$su")" "$(props "$ru")" "$1: after daemon-reload the same as runc's"
        if hybrid; then
                local f
                f=$(cpu_files "$su")
                is "${f#*/}" 900000 "$1: after daemon-reload the period is still 900000"
                ok_desc "$1: after daemon-reload the quota ($f) is not below the 500000 asked for" test "${f%/*}" -ge 500000
                is "$f" "$(cpu_files "$ru")" "$1: after daemon-reload the same as runc's"
        else
                skip "$1: no cpu controller in this box: cpu.max is not there to read"
        fi
}

new_ids
runc_step "create" runc_create "$rid"
ok_desc "sdrun: create" sd_create "$sid"
runc_step "update --cpu-period 900000 --cpu-quota 500000" rc update --cpu-period 900000 --cpu-quota 500000 "$rid"
ok_desc "sdrun: update --cpu-period 900000 --cpu-quota 500000" sd update --cpu-period 900000 --cpu-quota 500000 "$sid"
reload_case "update"
# a quota alone keeps the period the container has (here 900000), as runc
runc_step "update --cpu-quota 450000" rc update --cpu-quota 450000 "$rid"
ok_desc "sdrun: update --cpu-quota 450000 (no period)" sd update --cpu-quota 450000 "$sid"
is "$(props "$su")" "500ms 900ms" "the quota alone is one of the current period: 500ms per second"
as_runc "$(props "$su")" "$(props "$ru")" "... as runc's"
if hybrid; then
        is "$(cpu_files "$su")" 450000/900000 "... the cgroup has 450000 of 900000"
        systemctl daemon-reload
        is "$(cpu_files "$su")" 450000/900000 "... and still after daemon-reload (a whole percentage: exact)"
fi
ok_desc "sdrun: delete" sd delete --force "$sid"
no_leftovers "$sid"
runc_gone "$rid"

new_ids
q='.linux.resources.cpu={quota: 500000, period: 900000}'
runc_step "create with cpu quota 500000, period 900000" runc_create "$rid" "$q"
ok_desc "sdrun: create with cpu quota 500000, period 900000" sd_create "$sid" "$q"
reload_case "create"
ok_desc "sdrun: delete" sd delete --force "$sid"
no_leftovers "$sid"
runc_gone "$rid"

# ---------------------------------------------------------------------------------------------------------
# 7. cpu.cpus and cpu.mems: the unit's AllowedCPUs=/AllowedMemoryNodes=, and the v1 files

cpuset_props() { systemctl show -p AllowedCPUs -p AllowedMemoryNodes --value -- "$1" | paste -sd' '; }
last=$(($(nproc) - 1))
new_ids
q='.linux.resources.cpu={cpus: "0", mems: "0"}'
runc_step "create with cpu.cpus 0, mems 0" runc_create "$rid" "$q"
ok_desc "sdrun: create with cpu.cpus 0, mems 0" sd_create "$sid" "$q"
is "$(cpuset_props "$su")" "0 0" "create: AllowedCPUs=0, AllowedMemoryNodes=0"
as_runc "$(cpuset_props "$su")" "$(cpuset_props "$ru")" "create: the same as runc's unit"
if hybrid; then
        is "$(cpuset_files "$su")" 0/0 "create: cpuset.cpus 0, cpuset.mems 0 (v1: written by sdrun)"
else
        skip "create: no cpuset controller in this box: no cpuset files to read"
fi
runc_step "update --cpuset-cpus $last" rc update --cpuset-cpus "$last" "$rid"
ok_desc "sdrun: update --cpuset-cpus $last" sd update --cpuset-cpus "$last" "$sid"
is "$(cpuset_props "$su")" "$last 0" "update: AllowedCPUs=$last"
as_runc "$(cpuset_props "$su")" "$(cpuset_props "$ru")" "update: the same as runc's unit"
ok_desc "systemctl daemon-reload" systemctl daemon-reload
is "$(cpuset_props "$su")" "$last 0" "after daemon-reload: AllowedCPUs=$last, AllowedMemoryNodes=0"
if hybrid; then
        is "$(cpuset_files "$su")" "$last/0" "after daemon-reload: the cpuset files still hold $last and 0"
        pid=$(sd state "$sid" | jq -r .pid)
        is "$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' "/proc/$pid/status")" "$last" "the container's process runs on CPU $last only"
else
        skip "after daemon-reload: no cpuset controller in this box: no cpuset files to read"
fi
ok_desc "sdrun: delete" sd delete --force "$sid"
no_leftovers "$sid"
runc_gone "$rid"

done_testing
