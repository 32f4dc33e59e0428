#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Operations on a running container through systemd (issue 4): pause/resume (FreezeUnit, or the cgroup v2
# freezer where systemd 252 cannot freeze on a hybrid layout), update (flags, --resources FILE and -,
# checked with systemctl show and, in the hybrid box, cgroupfs; bad values name the field), events
# --stats (runc's JSON), events --interval (several lines, exits when the container stops), and an OOM
# event (hybrid box: the v1 memory controller counts oom_kill; the unified box has no memory controller).
. "$(dirname "$0")/lib.sh"

require_root
require_systemd

sd() { "$SDRUN" --root "$SDRUN_ROOT" "$@"; }
status_of() { sd state "$1" 2>/dev/null | jq -r .status; }
pid_of() { sd state "$1" 2>/dev/null | jq -r '.pid // empty'; }
unit_gone() { [ -z "$(systemctl list-units --all --plain --no-legend --no-pager -- "$1" 2>/dev/null)" ]; }
v2dir() { cgroup_dir "$unit"; }
frozen() { grep -qx 'frozen 1' "$(v2dir)/cgroup.events" 2>/dev/null; }
thawed() { grep -qx 'frozen 0' "$(v2dir)/cgroup.events" 2>/dev/null; }
if [ "$SDRUN_TEST_LAYOUT" = hybrid ]; then
        MEMPROP=MemoryLimit
else
        MEMPROP=MemoryMax
fi

B=$TEST_TMPDIR/b
make_bundle "$B" || bail "make_bundle failed"

# ---------------------------------------------------------------------------------------------------------
# pause / resume

id=$(new_id pause); track_container "$id"
unit=$(unit_of "$id")
bundle_set "$B" '.process.args=["sh","-c","i=0; while :; do i=$((i+1)); echo $i >/dev/shm/count; sleep 0.05; done"]'
ok_desc "create" sd create --bundle "$B" "$id"
ok_desc "start" sd start "$id"
pid=$(pid_of "$id")
count() { cat "/proc/$pid/root/dev/shm/count" 2>/dev/null; }
ok_desc "the container counts" wait_for test -s "/proc/$pid/root/dev/shm/count"
rc=0; err=$(sd resume "$id" 2>&1) || rc=$?
is "$rc" 1 "resume of a running container is refused"
like "$err" 'not paused' "and says so: $err"
ok_desc "pause" sd pause "$id"
is "$(status_of "$id")" paused "state says paused"
is "$(sd list --format json | jq -r --arg i "$id" '.[] | select(.id == $i) | .status')" paused "list says paused"
ok_desc "cgroup.events of the unit says frozen 1" frozen
if [ "$SDRUN_TEST_LAYOUT" = unified ]; then
        is "$(unit_prop "$unit" FreezerState)" frozen "FreezerState=frozen (FreezeUnit)"
else
        diag "hybrid: FreezerState=$(unit_prop "$unit" FreezerState) (systemd 252 refuses FreezeUnit on a hybrid layout; sdrun froze the cgroup v2 directly)"
fi
c1=$(count); sleep 0.5; c2=$(count)
is "$c2" "$c1" "processes frozen: the counter does not move while paused ($c1)"
rc=0; err=$(sd pause "$id" 2>&1) || rc=$?
is "$rc" 1 "pause of a paused container is refused"
ok_desc "resume" sd resume "$id"
is "$(status_of "$id")" running "state says running after resume"
ok_desc "cgroup.events says frozen 0" thawed
[ "$SDRUN_TEST_LAYOUT" = unified ] && is "$(unit_prop "$unit" FreezerState)" running "FreezerState=running after ThawUnit"
c1=$(count)
ok_desc "the counter moves again after resume" wait_for sh -c "[ \"\$(cat /proc/$pid/root/dev/shm/count)\" != '$c1' ]"
ok_desc "pause again, then delete --force a paused container" sh -c "$SDRUN --root $SDRUN_ROOT pause $id && $SDRUN --root $SDRUN_ROOT delete --force $id"
ok_desc "the unit is gone" wait_for unit_gone "$unit"
no_leftovers "$id"

# ---------------------------------------------------------------------------------------------------------
# update

id=$(new_id upd); track_container "$id"
unit=$(unit_of "$id")
bundle_set "$B" '.process.args=["sleep","1000"] | .linux.resources.memory={"limit":67108864} | .linux.resources.pids={"limit":100}'
ok_desc "create with memory 64M, pids 100" sd create --bundle "$B" "$id"
ok_desc "start" sd start "$id"
is "$(unit_prop "$unit" $MEMPROP)" 67108864 "$MEMPROP=64M at create"
ok_desc "update --memory 100m --pids-limit 50 --cpu-shares 256 --cpu-quota 20000 --cpu-period 100000" \
        sd update --memory 100m --pids-limit 50 --cpu-shares 256 --cpu-quota 20000 --cpu-period 100000 "$id"
is "$(unit_prop "$unit" $MEMPROP)" 104857600 "update --memory 100m -> $MEMPROP=104857600"
is "$(unit_prop "$unit" TasksMax)" 50 "update --pids-limit 50 -> TasksMax=50"
is "$(unit_prop "$unit" CPUQuotaPerSecUSec)" 200ms "update --cpu-quota 20000 --cpu-period 100000 -> CPUQuotaPerSecUSec=200ms"
if [ "$SDRUN_TEST_LAYOUT" = hybrid ]; then
        is "$(unit_prop "$unit" CPUShares)" 256 "update --cpu-shares 256 -> CPUShares=256"
        is "$(cat "$(cgroup_v1_dir "$unit" memory)/memory.limit_in_bytes")" 104857600 "memory.limit_in_bytes follows"
        is "$(cat "$(cgroup_v1_dir "$unit" pids)/pids.max")" 50 "pids.max follows"
        is "$(cat "$(cgroup_v1_dir "$unit" cpu)/cpu.shares")" 256 "cpu.shares follows"
        is "$(cat "$(cgroup_v1_dir "$unit" cpu)/cpu.cfs_quota_us")" 20000 "cpu.cfs_quota_us follows"
else
        is "$(unit_prop "$unit" CPUWeight)" 10 "update --cpu-shares 256 -> CPUWeight=10"
fi
echo '{"pids": {"limit": 60}, "memory": {"limit": 157286400}}' >"$TEST_TMPDIR/res.json"
ok_desc "update --resources FILE" sd update --resources "$TEST_TMPDIR/res.json" "$id"
is "$(unit_prop "$unit" TasksMax)" 60 "--resources FILE: TasksMax=60"
is "$(unit_prop "$unit" $MEMPROP)" 157286400 "--resources FILE: $MEMPROP=150M"
ok_desc "update --resources - (stdin) with a flag overriding it" \
        sh -c "echo '{\"pids\": {\"limit\": 70}}' | $SDRUN --root $SDRUN_ROOT update --resources - --pids-limit 71 $id"
is "$(unit_prop "$unit" TasksMax)" 71 "--resources - with --pids-limit 71: the flag wins (TasksMax=71)"
[ "$SDRUN_TEST_LAYOUT" = hybrid ] && is "$(cat "$(cgroup_v1_dir "$unit" pids)/pids.max")" 71 "pids.max follows"

rc=0; err=$(sd update --memory lots "$id" 2>&1) || rc=$?
is "$rc" 1 "update --memory lots fails"
like "$err" -- '--memory.*lots' "the error names --memory: $err"
echo '{"cpu": {"shares": "many"}}' >"$TEST_TMPDIR/bad.json"
rc=0; err=$(sd update --resources "$TEST_TMPDIR/bad.json" "$id" 2>&1) || rc=$?
is "$rc" 1 "update with a string cpu.shares fails"
like "$err" 'linux\.resources\.cpu\.shares' "the error names linux.resources.cpu.shares: $err"
rc=0; err=$(sd update --cpuset-cpus 'x-y' "$id" 2>&1) || rc=$?
is "$rc" 1 "update --cpuset-cpus x-y fails"
like "$err" 'cpu\.cpus' "the error names cpu.cpus: $err"
rc=0; err=$(sd update --pids-limit 5 no-such-container-$$ 2>&1) || rc=$?
is "$rc" 1 "update of an unknown container fails"
is "$(unit_prop "$unit" TasksMax)" 71 "failed updates changed nothing (TasksMax still 71)"

# ---------------------------------------------------------------------------------------------------------
# events --stats

ev=$(sd events --stats "$id" 2>"$TEST_TMPDIR/err")
ok_desc "events --stats prints one JSON object" jq -e . <<<"$ev"
is "$(jq -r .type <<<"$ev")" stats "type is stats"
is "$(jq -r .id <<<"$ev")" "$id" "id is the container's"
ok_desc "data has cpu, memory and pids" jq -e '.data.cpu and .data.memory and .data.pids' <<<"$ev"
ok_desc "pids.current counts the container's process" jq -e '.data.pids.current >= 1' <<<"$ev"
if [ "$SDRUN_TEST_LAYOUT" = hybrid ]; then
        ok_desc "memory usage is reported (> 0)" jq -e '.data.memory.usage.usage > 0' <<<"$ev"
        is "$(jq -r .data.memory.usage.limit <<<"$ev")" 157286400 "memory limit is reported (150M)"
        is "$(jq -r .data.pids.limit <<<"$ev")" 71 "pids limit is reported"
fi
ok_desc "delete --force" sd delete --force "$id"
no_leftovers "$id"

# ---------------------------------------------------------------------------------------------------------
# events --interval: several lines, exits when the container stops

id=$(new_id ev); track_container "$id"
bundle_set "$B" 'del(.linux.resources.memory) | del(.linux.resources.pids) | .process.args=["sleep","1.5"]'
ok_desc "create" sd create --bundle "$B" "$id"
ok_desc "start" sd start "$id"
t0=$SECONDS
rc=0; timeout 15 "$SDRUN" --root "$SDRUN_ROOT" events --interval 200ms "$id" >"$TEST_TMPDIR/ev" 2>"$TEST_TMPDIR/everr" || rc=$?
is "$rc" 0 "events --interval exits 0 when the container stops" || diag "$(cat "$TEST_TMPDIR/everr")"
ok_desc "and returned in time (not killed by timeout)" test $((SECONDS - t0)) -lt 10
n=$(grep -c '"type"' "$TEST_TMPDIR/ev")
ok_desc "it printed several lines ($n)" test "$n" -ge 3
ok_desc "every line is a JSON stats event" sh -c "jq -e -s 'all(.[]; .type == \"stats\" or .type == \"oom\")' <'$TEST_TMPDIR/ev'"
ok_desc "delete" sd delete "$id"
no_leftovers "$id"

# ---------------------------------------------------------------------------------------------------------
# OOM

if [ "$SDRUN_TEST_LAYOUT" = hybrid ]; then
        id=$(new_id oom); track_container "$id"
        unit=$(unit_of "$id")
        bundle_set "$B" '.linux.resources.memory={"limit":16777216,"swap":16777216} |
                .process.args=["sh","-c","sleep 0.7; dd if=/dev/zero of=/dev/null bs=64M count=1; echo dd=$?; sleep 1"]'
        [ -e /sys/fs/cgroup/memory/memory.memsw.limit_in_bytes ] || bundle_set "$B" 'del(.linux.resources.memory.swap)'
        ok_desc "create with a 16M memory limit" sd create --bundle "$B" "$id"
        timeout 15 "$SDRUN" --root "$SDRUN_ROOT" events --interval 100ms "$id" >"$TEST_TMPDIR/oomev" 2>&1 &
        evpid=$!
        # events prints the stats every 100 ms once it watches the container: start the hog after that
        ok_desc "events watches the container" wait_for test -s "$TEST_TMPDIR/oomev"
        out=$(sd start "$id" 2>&1)
        wait_for sh -c "grep -q 'oom_kill [1-9]' '$(cgroup_v1_dir "$unit" memory)/memory.oom_control'"
        like "$(cat "$(cgroup_v1_dir "$unit" memory)/memory.oom_control" 2>/dev/null)" 'oom_kill [1-9]' \
                "the memory hog was OOM-killed (memory.oom_control oom_kill)"
        wait "$evpid"
        ok_desc "events printed an oom event" jq -e -s 'any(.[]; .type == "oom")' "$TEST_TMPDIR/oomev"
        ok_desc "delete --force" sd delete --force "$id"
        no_leftovers "$id"
else
        diag "unified box: no memory controller, so no OOM can happen here (the VM tier has one)"
fi

done_testing
