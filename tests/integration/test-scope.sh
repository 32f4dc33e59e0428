#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The transient scope (issue 4): it exists before the init runs and holds the init from its first
# instruction, unit naming from linux.cgroupsPath (default, Podman's, another slice, a refused root cgroup path
# value), a failed leftover unit of the same name is reset and reused, an active one refused, the unit's
# description/processes/properties in systemctl, the unit collected when the container exits by itself,
# and kill --all through KillUnit.
. "$(dirname "$0")/lib.sh"

require_root
require_systemd

sd() { "$SDRUN" --root "$SDRUN_ROOT" "$@"; }
status_of() { sd state "$1" 2>/dev/null | jq -r .status; }
pid_of() { sd state "$1" 2>/dev/null | jq -r '.pid // empty'; }
is_status() { [ "$(status_of "$1")" = "$2" ]; }
unit_loaded() { [ -n "$(systemctl list-units --all --plain --no-legend --no-pager -- "$1" 2>/dev/null)" ]; }
unit_gone() { ! unit_loaded "$1"; }
HS=$SDRUN_SRCDIR/tests/integration/helpers-scope

B=$TEST_TMPDIR/b
make_bundle "$B" || bail "make_bundle failed"
# Without a cgroup namespace the container sees its cgroup path as the host (box) names it.
bundle_set "$B" '.linux.namespaces |= map(select(.type != "cgroup"))' || bail "bundle_set failed"

# ---------------------------------------------------------------------------------------------------------
# The unit exists before the init runs: a createRuntime hook (the init exists, blocked before exec) sees the
# init in the scope, and the container process's very first action sees itself there.

id=$(new_id scope); track_container "$id"
unit=$(unit_of "$id")
rec=$TEST_TMPDIR/hook-$id
bundle_set "$B" '.process.args=["cat","/proc/self/cgroup"] |
        .hooks.createRuntime=[{"path":"/bin/sh","args":["sh",$h,$o,$u]}]' \
        --arg h "$HS/record-cgroup.sh" --arg o "$rec" --arg u "$unit"
out=$(sd run --bundle "$B" "$id" 2>"$TEST_TMPDIR/err")
rc=$?
is "$rc" 0 "run with a createRuntime hook recording cgroups exits 0"
[ $rc = 0 ] || diag "$(cat "$TEST_TMPDIR/err")"
ok_desc "the createRuntime hook ran" test -s "$rec"
hook=$(cat "$rec" 2>/dev/null)
like "$hook" $'(^|\n)status=creating(\n|$)' "createRuntime hook: state says creating"
like "$hook" $'(^|\n)unit=active(\n|$)' "createRuntime hook: unit $unit is already active"
like "$hook" $'(^|\n)comm=sdrun(:init)?(\n|$)' "createRuntime hook: the init exists and has not exec'd yet (comm sdrun)"
init_cg=$(sed -n '/^\[init\]$/,/^\[self\]$/p' "$rec" 2>/dev/null)
like "$init_cg" "0::/machine\.slice/$unit" "createRuntime hook: /proc/<init>/cgroup is in machine.slice/$unit (unified)"
if [ "$SDRUN_TEST_LAYOUT" = hybrid ]; then
        like "$init_cg" ":name=systemd:/machine\.slice/$unit" "createRuntime hook: the init is in $unit on name=systemd too"
        like "$init_cg" ":memory:/machine\.slice/$unit" "createRuntime hook: the init is in $unit on the v1 memory controller"
fi
self_cg=$(sed -n '/^\[self\]$/,$p' "$rec" 2>/dev/null)
unlike "$self_cg" "$unit" "createRuntime hook: the runtime left the scope (the hook itself is not in $unit)"
like "$out" "0::/machine\.slice/$unit" "the container's first action (cat /proc/self/cgroup) shows it in $unit"
no_leftovers "$id"
bundle_set "$B" 'del(.hooks)'

# ---------------------------------------------------------------------------------------------------------
# Naming

# default: sdrun-<id>.scope in machine.slice
id=$(new_id name); track_container "$id"
bundle_set "$B" '.process.args=["sleep","1000"] | del(.linux.cgroupsPath)'
ok_desc "create with no cgroupsPath" sd create --bundle "$B" "$id"
unit=$(unit_of "$id")
is "$(sd state "$id" | jq -r .systemdUnit)" "$unit" "state names the unit sdrun-<id>.scope"
is "$(unit_prop "$unit" Slice)" machine.slice "default unit in machine.slice"
is "$(unit_prop "$unit" ControlGroup)" "/machine.slice/$unit" "ControlGroup /machine.slice/$unit"
is "$(unit_prop "$unit" Delegate)" yes "Delegate=yes"
is "$(unit_prop "$unit" CollectMode)" inactive-or-failed "CollectMode=inactive-or-failed"
is "$(unit_prop "$unit" DefaultDependencies)" no "DefaultDependencies=no"
is "$(unit_prop "$unit" MemoryAccounting)/$(unit_prop "$unit" TasksAccounting)" yes/yes "memory and tasks accounting on"
is "$(unit_prop "$unit" TimeoutStopUSec)" 10s "TimeoutStopUSec=10s"
is "$(unit_prop "$unit" Description)" "sdrun container $id (bundle $B)" "Description names the id and the bundle"
ok_desc "start" sd start "$id"
pid=$(pid_of "$id")
wait_for sh -c "grep -q sleep /proc/$pid/cmdline"
st=$(systemctl status --no-pager --full -- "$unit" 2>&1)
like "$st" "sdrun container $id \\(bundle $B\\)" "systemctl status shows the description"
like "$st" "CGroup: /machine\\.slice/$unit" "systemctl status shows the scope's cgroup"
like "$st" "$pid sleep 1000" "systemctl status lists the container's process ($pid sleep 1000)"
like "$(sd list --format json | jq -r --arg i "$id" '.[] | select(.id == $i) | .systemdUnit // .unit // empty')" \
        "^$unit\$" "list --format json includes the unit name"
ok_desc "delete --force" sd delete --force "$id"
ok_desc "after delete the unit is gone" wait_for unit_gone "$unit"
no_leftovers "$id"

# Podman's machine.slice:libpod:<id>
id=$(new_id pod); track_container "$id"
unit="libpod-$id.scope"
bundle_set "$B" '.linux.cgroupsPath=$p' --arg p "machine.slice:libpod:$id"
ok_desc "create with cgroupsPath machine.slice:libpod:<id>" sd create --bundle "$B" "$id"
is "$(unit_prop "$unit" ActiveState)" active "unit libpod-<id>.scope is active"
is "$(unit_prop "$unit" Slice)" machine.slice "libpod-<id>.scope in machine.slice"
is "$(sd state "$id" | jq -r .systemdUnit)" "$unit" "state names $unit"
ok_desc "unit sdrun-<id>.scope does not exist" unit_gone "$(unit_of "$id")"
ok_desc "delete --force" sd delete --force "$id"
ok_desc "$unit is gone after delete" wait_for unit_gone "$unit"
no_leftovers "$id"

# another slice: system.slice:foo:bar -> foo-bar.scope in system.slice
id=$(new_id sys); track_container "$id"
unit=foo-bar.scope
cleanup_add systemctl stop "$unit"
bundle_set "$B" '.linux.cgroupsPath="system.slice:foo:bar"'
ok_desc "create with cgroupsPath system.slice:foo:bar" sd create --bundle "$B" "$id"
is "$(unit_prop "$unit" ActiveState)" active "unit foo-bar.scope is active"
is "$(unit_prop "$unit" Slice)" system.slice "foo-bar.scope is in system.slice"
is "$(unit_prop "$unit" ControlGroup)" /system.slice/foo-bar.scope "its cgroup is /system.slice/foo-bar.scope"
ok_desc "delete --force" sd delete --force "$id"
ok_desc "foo-bar.scope is gone after delete" wait_for unit_gone "$unit"
no_leftovers "$id"

# A cgroupfs path that names the root cgroup: refused before anything exists (other cgroupfs paths are
# scopes: test-cgroupfs-path.sh).
id=$(new_id path); track_container "$id"
bundle_set "$B" '.linux.cgroupsPath="/a/.."'
rc=0; err=$(sd create --bundle "$B" "$id" 2>&1 >/dev/null) || rc=$?
is "$rc" 1 "create with the cgroupsPath /a/.. (the root cgroup) fails (exit 1)"
like "$err" 'cgroupsPath.*"/a/\.\.".*root cgroup' "the error names linux.cgroupsPath and why: $err"
ok_desc "no state dir after the refused create" test ! -e "$SDRUN_ROOT/$id"
ok_desc "no unit a.scope" sh -c '[ -z "$(systemctl list-units --all --plain --no-legend -- a.scope)" ]'
no_leftovers "$id"
bundle_set "$B" 'del(.linux.cgroupsPath)'

# ---------------------------------------------------------------------------------------------------------
# A unit of the same name already loaded: failed -> reset and reused; active -> refused, and left alone.

id=$(new_id failed); track_container "$id"
unit=$(unit_of "$id")
cleanup_add systemctl reset-failed "$unit"
cleanup_add systemctl stop "$unit"
# A scope that fails: its runtime limit kills it; CollectMode=inactive keeps the failed unit loaded.
systemd-run --quiet --scope --unit="$unit" -p RuntimeMaxSec=1 -p CollectMode=inactive sleep 30 >/dev/null 2>&1 &
is_failed() { [ "$(unit_prop "$unit" ActiveState)" = failed ]; }
if WAIT_FOR_TIMEOUT=10 wait_for is_failed; then
        ok_desc "a leftover $unit is loaded and failed" is_failed
        ok_desc "create over a failed unit of the same name succeeds" sd create --bundle "$B" "$id"
        is "$(unit_prop "$unit" ActiveState)" active "the unit was reset and is active again"
        pid=$(pid_of "$id")
        like "$(cat "/proc/$pid/cgroup" 2>/dev/null)" "/machine\\.slice/$unit" "the new init is in the reused unit"
        is "$(unit_prop "$unit" Description)" "sdrun container $id (bundle $B)" "the reused unit carries sdrun's description"
        ok_desc "delete --force" sd delete --force "$id"
else
        _tap_result 1 "a leftover $unit is loaded and failed (could not make one: $(unit_prop "$unit" ActiveState))"
fi
wait
no_leftovers "$id"

id=$(new_id active); track_container "$id"
unit=$(unit_of "$id")
cleanup_add systemctl stop "$unit"
systemd-run --quiet --scope --unit="$unit" sleep 60 >/dev/null 2>&1 &
foreign=$!
is_active() { [ "$(unit_prop "$unit" ActiveState)" = active ]; }
WAIT_FOR_TIMEOUT=10 wait_for is_active
ok_desc "a foreign active $unit is running" is_active
rc=0; err=$(sd create --bundle "$B" "$id" 2>&1) || rc=$?
is "$rc" 1 "create over an active unit of the same name is refused"
like "$err" "$unit.*already exists.*active" "the refusal names the unit and says it is active: $err"
ok_desc "the foreign unit was left alone (still active)" is_active
ok_desc "no state dir after the refusal" test ! -e "$SDRUN_ROOT/$id"
systemctl stop "$unit" >/dev/null 2>&1
wait "$foreign" 2>/dev/null
no_leftovers "$id"

# ---------------------------------------------------------------------------------------------------------
# The container exits by itself: systemd collects the unit, state says stopped, delete still works.

id=$(new_id exit); track_container "$id"
unit=$(unit_of "$id")
bundle_set "$B" '.process.args=["sh","-c","sleep 0.3"]'
ok_desc "create" sd create --bundle "$B" "$id"
ok_desc "start" sd start "$id"
ok_desc "the unit is collected once the container exited (within 10 s)" wait_for unit_gone "$unit"
is "$(status_of "$id")" stopped "state says stopped"
is "$(sd state "$id" | jq -r '.pid // "none"')" none "a stopped container reports no pid"
is "$(sd list --format json | jq -r --arg i "$id" '.[] | select(.id == $i) | .status')" stopped "list says stopped"
ok_desc "delete (without --force) works" sd delete "$id"
no_leftovers "$id"

# ---------------------------------------------------------------------------------------------------------
# kill --all: KillUnit reaches every process of the unit, also those the init does not know of. No pid
# namespace here, so killing the init alone would leave its background child running.

id=$(new_id killall); track_container "$id"
unit=$(unit_of "$id")
bundle_set "$B" '.process.args=["sh","-c","sleep 1001 & exec sleep 1002"] | .linux.namespaces |= map(select(.type != "pid"))'
ok_desc "create (no pid namespace)" sd create --bundle "$B" "$id"
ok_desc "start" sd start "$id"
procs_of() { cat "$(cgroup_dir "$unit")/cgroup.procs" 2>/dev/null | sort -n | tr '\n' ' '; }
two_procs() { [ "$(procs_of | wc -w)" -ge 2 ]; }
wait_for two_procs
ok_desc "the unit holds the init and its background child" two_procs
ok_desc "exec --detach into it" sd exec --detach "$id" sleep 1003
ok_desc "exec'd process joined the unit" wait_for sh -c "[ \$(cat '$(cgroup_dir "$unit")/cgroup.procs' | wc -l) -ge 3 ]"
before=$(procs_of)
diag "processes in $unit before kill --all: $before"
ok_desc "kill --all KILL" sd kill --all "$id" KILL
none_left() { for p in $before; do [ -e "/proc/$p" ] && [ "$(cat /proc/$p/stat 2>/dev/null | cut -d' ' -f3)" != Z ] && return 1; done; return 0; }
ok_desc "every process of the unit is gone (background child too)" wait_for none_left
ok_desc "the unit is gone" wait_for unit_gone "$unit"
is "$(status_of "$id")" stopped "state says stopped"
ok_desc "kill --all of a stopped container whose scope is gone exits 0 (as runc)" sd kill --all "$id" KILL
ok_desc "delete" sd delete "$id"
no_leftovers "$id"

# run.oci.systemd.subgroup (crun's annotation): the init is born in a sub-cgroup of the scope, which then
# holds no process of its own; ps, exec, pause and delete work on the whole subtree.
id=$(new_id sub); track_container "$id"
bundle_set "$B" '.annotations={"run.oci.systemd.subgroup": "payload"} | .process.args=["sleep","30"]'
ok_desc "subgroup: run --detach" sd run --detach --bundle "$B" "$id"
unit=$(unit_of "$id"); d=$(cgroup_dir "$unit")
pid=$(sd state "$id" | jq -r .pid)
is "$(cat "$d/cgroup.procs")" "" "subgroup: the scope itself holds no process"
is "$(cat "$d/payload/cgroup.procs")" "$pid" "subgroup: the init was born in the sub-cgroup"
like "$(sd exec "$id" cat /proc/self/cgroup | grep '^0::')" '^0::(/|/.*\.scope/payload)$' "subgroup: exec joins it (payload, or / in a cgroup namespace)"
like "$(sd ps --format json "$id")" "$pid" "subgroup: ps lists the init"
ok_desc "subgroup: pause" sd pause "$id"
is "$(sd state "$id" | jq -r .status)" paused "subgroup: paused"
ok_desc "subgroup: resume" sd resume "$id"
ok_desc "subgroup: delete --force" sd delete --force "$id"
no_leftovers "$id"

for bad in "a/b" ".." "cgroup.procs" ""; do
        id=$(new_id sub); track_container "$id"
        bundle_set "$B" '.annotations={"run.oci.systemd.subgroup": $s}' --arg s "$bad"
        rc=0; err=$(sd run --bundle "$B" "$id" 2>&1) || rc=$?
        like "$rc:$err" '^1:.*run.oci.systemd.subgroup.*invalid sub-cgroup' "subgroup \"$bad\" is refused clearly"
        no_leftovers "$id"
done
bundle_set "$B" 'del(.annotations)'

done_testing
