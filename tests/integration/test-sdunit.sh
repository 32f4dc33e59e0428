#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# src/sdunit against a booted systemd: a transient scope created by sdunit-smoke, checked from the host side
# (systemctl show, cgroupfs), then frozen/thawed, killed and stopped.
. "$(dirname "$0")/lib.sh"

require_root
require_systemd
[ -n "${SDUNIT_SMOKE:-}" ] && [ -x "$SDUNIT_SMOKE" ] ||
        bail "SDUNIT_SMOKE is not set to the sdunit-smoke binary (meson test sets it)"

# --- scope creation ------------------------------------------------------------------------------------
coproc SMOKE { exec "$SDUNIT_SMOKE" scope 2>"$TEST_TMPDIR/smoke.err"; }
smoke_pid=$SMOKE_PID
cleanup_add kill "$smoke_pid"

declare -A info=()
# read_info: the smoke program's "key value" lines, up to "state".
read_info() {
        local key val
        info=()
        while read -r -t 20 key val <&"${SMOKE[0]}"; do
                info[$key]=$val
                [ "$key" = state ] && return 0
        done
        bail "sdunit-smoke failed: $(cat "$TEST_TMPDIR/smoke.err")"
}
read_info
unit=${info[unit]}
cleanup_add systemctl stop -- "$unit"
diag "scope $unit created in ${info[start_usec]} us, cgroup ${info[cgroup]}"

# cmd WORD: send a command to the smoke program and print its one-line answer.
cmd() {
        echo "$1" >&"${SMOKE[1]}"
        local line
        read -r -t 30 line <&"${SMOKE[0]}" || line="(no answer: $(cat "$TEST_TMPDIR/smoke.err"))"
        echo "$line"
}

is "${info[state]}" active "sdunit_get_active_state says active"
is "$(unit_prop "$unit" ActiveState)" active "systemctl: $unit is active"
is "$(unit_prop "$unit" ControlGroup)" "${info[cgroup]}" "sdunit_get_control_group matches systemctl's ControlGroup"
is "${info[cgroup]}" "/machine.slice/$unit" "the scope is in machine.slice"
is "$(unit_prop "$unit" Slice)" machine.slice "Slice=machine.slice"
is "$(unit_prop "$unit" Delegate)" yes "Delegate=yes"
is "$(unit_prop "$unit" CollectMode)" inactive-or-failed "CollectMode=inactive-or-failed"
is "$(unit_prop "$unit" DefaultDependencies)" no "DefaultDependencies=no"
is "$(unit_prop "$unit" Description)" "sdunit smoke test" "Description= as given"
is "$(unit_prop "$unit" TasksMax)" 42 "TasksMax=42 (extra property)"
is "$(cmd prop)" "TasksMax 42" "sdunit_get_property_string reads TasksMax"

is "$(cmd setprop)" "setprop ok" "sdunit_set_properties(TasksMax=43)"
is "$(unit_prop "$unit" TasksMax)" 43 "systemctl: TasksMax=43 after SetUnitProperties"

dir=$(cgroup_dir "$unit") || bail "no cgroup directory for $unit"
ok_desc "the child ${info[child]} is in $dir/cgroup.procs" grep -qx "${info[child]}" "$dir/cgroup.procs"

case $SDRUN_TEST_LAYOUT in
hybrid)
        is "$(unit_prop "$unit" MemoryLimit)" 67108864 "MemoryLimit=64M (extra property)"
        d=$(cgroup_v1_dir "$unit" memory) && is "$(cat "$d/memory.limit_in_bytes")" 67108864 "memory.limit_in_bytes in the v1 memory hierarchy" ||
                ok_desc "the unit has a v1 memory cgroup" false
        d=$(cgroup_v1_dir "$unit" pids) && is "$(cat "$d/pids.max")" 43 "pids.max in the v1 pids hierarchy" ||
                ok_desc "the unit has a v1 pids cgroup" false
        ;;
*)
        is "$(unit_prop "$unit" MemoryMax)" 67108864 "MemoryMax=64M (extra property)"
        if grep -qw memory "$dir/../cgroup.subtree_control" 2>/dev/null; then
                is "$(cat "$dir/memory.max")" 67108864 "memory.max in the unit's cgroup"
                is "$(cat "$dir/pids.max")" 43 "pids.max in the unit's cgroup"
        else
                skip "no v2 memory/pids controller on this kernel (bound to v1): limits checked through systemctl only"
        fi
        ;;
esac

# --- freeze / thaw -------------------------------------------------------------------------------------
ans=$(cmd freeze)
if [ "$SDRUN_TEST_LAYOUT" = hybrid ]; then
        # systemd 252 freezes only through the cgroup v2 freezer of a unified layout.
        like "$ans" "^freeze error 95 .*freeze unit $unit: org.freedesktop.DBus.Error.NotSupported" \
                "FreezeUnit is refused with -EOPNOTSUPP and a message naming the unit on hybrid"
else
        is "$ans" "freeze ok frozen" "FreezeUnit: FreezerState=frozen"
        is "$(cat "$dir/cgroup.freeze")" 1 "cgroup.freeze is 1"
        is "$(unit_prop "$unit" FreezerState)" frozen "systemctl: FreezerState=frozen"
        is "$(cmd thaw)" "thaw ok running" "ThawUnit: FreezerState=running"
        is "$(cat "$dir/cgroup.freeze")" 0 "cgroup.freeze is 0"
fi

# --- kill, stop ----------------------------------------------------------------------------------------
is "$(cmd kill)" "kill ok" "KillUnit(all, SIGSTOP)"
ok_desc "the child ${info[child]} is stopped" wait_for grep -q '^State:.*T (stopped)' "/proc/${info[child]}/status"
like "$(cmd stop)" "^stop ok (gone|inactive) child-exited$" "StopUnit returns once the unit is stopped and its process gone"
is "$(systemctl list-units --all --plain --no-legend --no-pager -- "$unit")" "" "the unit is no longer loaded"
echo quit >&"${SMOKE[1]}"
rc=0
wait "$smoke_pid" || rc=$?
is "$rc" 0 "sdunit-smoke scope exited 0"

# --- linux.resources mapped by cgroup-props.c, applied for real -----------------------------------------
coproc SMOKE { exec "$SDUNIT_SMOKE" resources 2>"$TEST_TMPDIR/smoke.err"; }
smoke_pid=$SMOKE_PID
cleanup_add kill "$smoke_pid"
read_info
unit=${info[unit]}
cleanup_add systemctl stop -- "$unit"
dir=$(cgroup_dir "$unit") || bail "no cgroup directory for $unit"
is "$(unit_prop "$unit" TasksMax)" 50 "resources: pids.limit -> TasksMax=50"
is "$(unit_prop "$unit" DevicePolicy)" strict "resources: deny-all devices rule -> DevicePolicy=strict"
is "$(unit_prop "$unit" DeviceAllow)" "/dev/char/1:3 rw" "resources: allow c 1:3 rw -> DeviceAllow=/dev/char/1:3 rw"
case $SDRUN_TEST_LAYOUT in
hybrid)
        is "${info[writes]}" 2 "resources: two file writes (memory.swappiness, cpuset.cpus)"
        is "$(unit_prop "$unit" MemoryLimit)" 33554432 "resources: memory.limit -> MemoryLimit=32M"
        is "$(unit_prop "$unit" CPUShares)" 512 "resources: cpu.shares -> CPUShares=512"
        is "$(cat "$(cgroup_v1_dir "$unit" memory)/memory.swappiness")" 10 "resources: memory.swappiness written"
        is "$(cat "$(cgroup_v1_dir "$unit" cpu)/cpu.shares")" 512 "resources: cpu.shares in the v1 cpu hierarchy"
        d=$(cgroup_v1_dir "$unit" cpuset) && is "$(cat "$d/cpuset.cpus")" 0 "resources: cpuset.cpus written in a cpuset cgroup created for the unit" ||
                ok_desc "resources: the unit has a v1 cpuset cgroup" false
        ok_desc "resources: the child is in that cpuset cgroup" grep -qx "${info[child]}" "$d/cgroup.procs"
        is "$(cat "$(cgroup_v1_dir "$unit" devices)/devices.list")" "c 1:3 rw" "resources: devices.list"
        ;;
*)
        is "${info[writes]}" 0 "resources: no file writes on v2"
        is "$(unit_prop "$unit" MemoryMax)" 33554432 "resources: memory.limit -> MemoryMax=32M"
        is "$(unit_prop "$unit" CPUWeight)" 20 "resources: cpu.shares 512 -> CPUWeight=20"
        is "$(unit_prop "$unit" AllowedCPUs)" 0 "resources: cpu.cpus -> AllowedCPUs=0"
        ;;
esac
# cgroup_freeze(): the v2 freezer directly (the unified hierarchy exists in both layouts).
is "$(cmd cgfreeze)" "cgfreeze ok" "cgroup_freeze(freeze)"
is "$(cat "$dir/cgroup.freeze")" 1 "cgroup.freeze is 1"
ok_desc "cgroup.events says frozen 1" grep -qx "frozen 1" "$dir/cgroup.events"
is "$(cmd cgthaw)" "cgthaw ok" "cgroup_freeze(thaw)"
ok_desc "cgroup.events says frozen 0" grep -qx "frozen 0" "$dir/cgroup.events"
echo quit >&"${SMOKE[1]}"
rc=0
wait "$smoke_pid" || rc=$?
is "$rc" 0 "sdunit-smoke resources exited 0"
ok_desc "the resources scope is gone once its process is" wait_for sh -c "[ -z \"\$(systemctl list-units --all --plain --no-legend --no-pager -- $unit)\" ]"

# --- error paths, names, timing ------------------------------------------------------------------------
out=$("$SDUNIT_SMOKE" exists 2>&1)
rc=$?
is "$rc" 0 "a second StartTransientUnit of an active scope gives -EEXIST"
like "$out" "already exists and is active" "... with a message saying the unit is active"

# A failed unit of the same name (left by a scope without CollectMode=) is reset and the start retried.
failed_unit=sdrun-smoke-failed-$$.scope
systemd-run --scope -q -u "$failed_unit" -p RuntimeMaxSec=1 sleep 30 >/dev/null 2>&1
# systemd-run returns when sleep is killed; the scope may still be "deactivating" for a moment (a CI run).
failed_now() { [ "$(unit_prop "$failed_unit" ActiveState)" = failed ]; }
WAIT_FOR_TIMEOUT=10 wait_for failed_now
is "$(unit_prop "$failed_unit" ActiveState)" failed "a failed $failed_unit is loaded"
out=$("$SDUNIT_SMOKE" start "$failed_unit" 2>&1)
is "$out" "start $failed_unit active" "sdunit_start_scope resets the failed unit and starts it"

out=$("$SDUNIT_SMOKE" names "/a/b" "system.slice:docker:abc" ":sdrun:x" "::x" "machine.slice:libpod:y.slice")
like "$out" '/a/b -> machine.slice a-b.scope' "a cgroupfs path is a scope in machine.slice (systemd's path escaping)"
like "$out" 'system.slice:docker:abc -> system.slice docker-abc.scope' "slice:prefix:name maps to prefix-name.scope"
like "$out" ':sdrun:x -> machine.slice sdrun-x.scope' "an empty slice means machine.slice"
like "$out" '::x -> machine.slice x.scope' "an empty prefix gives name.scope"
like "$out" 'y.slice -> error' "a slice as the name is refused"

out=$("$SDUNIT_SMOKE" bench "${SDUNIT_BENCH_N:-20}" 2>&1)
like "$out" "^bench n [0-9]+ median_usec [0-9]+" "scope round trips: $out"

# --- which connection: the system bus, PID 1's private socket only without one ---------------------------
# Through the bus, sdrun's StartTransientUnit shows up in busctl monitor; with the bus socket hidden (a
# mount namespace over /run/dbus/system_bus_socket) sdrun still works, over /run/systemd/private.
B=$TEST_TMPDIR/conn
make_bundle "$B" || bail "make_bundle failed"
cid=$(new_id conn); track_container "$cid"
busctl monitor --system >"$TEST_TMPDIR/monitor" 2>&1 &
mon=$!
# busctl says when it monitors (after BecomeMonitor); it is stopped once it saw the call, or after 10 s.
ok_desc "busctl monitor is ready" wait_for grep -q "Monitoring bus message stream" "$TEST_TMPDIR/monitor"
ok_desc "run through the system bus" "$SDRUN" --root "$SDRUN_ROOT" run --bundle "$B" "$cid"
saw_start() { grep -q "STRING \"$(unit_of "$cid")\"" "$TEST_TMPDIR/monitor"; }
wait_for saw_start
kill "$mon" 2>/dev/null; wait "$mon" 2>/dev/null
ok_desc "the scope was started through the broker (busctl monitor saw StartTransientUnit for it)" saw_start
no_leftovers "$cid"
cid=$(new_id conn-private); track_container "$cid"
ok_desc "without a system bus, run works over PID 1's private socket" \
        unshare -m sh -c 'mount --bind /dev/null /run/dbus/system_bus_socket && exec "$0" --root "$1" run --bundle "$2" "$3"' \
        "$SDRUN" "$SDRUN_ROOT" "$B" "$cid"
no_leftovers "$cid"

# --- libsystemd is loaded when a verb first talks to systemd ----------------------------------------------
# (src/sdunit/libsystemd-dl.c). LD_DEBUG=files makes the dynamic loader name every library it maps.
# LD_DEBUG_OUTPUT=F writes the loader's lines to F.PID, one file per process: only sdrun's own counts (`ps`
# runs procps's ps, which links libsystemd). Not through a pipe: create's init would hold it open.
loads_libsystemd() {
        local out=$TEST_TMPDIR/ld-debug pid rc
        rm -f "$out".*
        LD_DEBUG=files LD_DEBUG_OUTPUT=$out "$@" >/dev/null 2>&1 &
        pid=$!
        wait "$pid"
        rc=$?
        [ "$rc" = 0 ] || diag "$* exited $rc"
        grep -q 'file=libsystemd\.so\.0' "$out.$pid"
}
does_not_load_libsystemd() { ! loads_libsystemd "$@"; }
B=$TEST_TMPDIR/lazy
make_bundle "$B" || bail "make_bundle failed"
bundle_set "$B" '.process.args=["sleep","100"]' || bail "bundle_set failed"
cid=$(new_id lazy); track_container "$cid"
ok_desc "create loads libsystemd (it starts the scope)" loads_libsystemd "$SDRUN" --root "$SDRUN_ROOT" create --bundle "$B" "$cid"
for verb in "state $cid" "list" "ps $cid" "start $cid" "exec $cid true" "kill $cid CONT" "events --stats $cid"; do
        # shellcheck disable=SC2086 # the verb's words
        ok_desc "'sdrun $verb' does not load libsystemd" does_not_load_libsystemd "$SDRUN" --root "$SDRUN_ROOT" $verb
done
is "$("$SDRUN" --root "$SDRUN_ROOT" state "$cid" | jq -r .status)" running "the verbs above worked without it"
ok_desc "delete --force loads it (it stops the scope)" loads_libsystemd "$SDRUN" --root "$SDRUN_ROOT" delete --force "$cid"
no_leftovers "$cid"

# A libsystemd that cannot be loaded: create says which library and why, exits 1 and leaves nothing.
mkdir -p "$TEST_TMPDIR/badlib"
echo "not an ELF file" >"$TEST_TMPDIR/badlib/libsystemd.so.0"
cid=$(new_id badlib); track_container "$cid"
B=$TEST_TMPDIR/badlib-bundle
make_bundle "$B" || bail "make_bundle failed"
out=$(LD_LIBRARY_PATH=$TEST_TMPDIR/badlib "$SDRUN" --root "$SDRUN_ROOT" run --bundle "$B" "$cid" 2>&1)
is "$?" 1 "run with an unloadable libsystemd exits 1"
like "$out" "cannot load libsystemd\.so\.0 \(systemd's client library\): .*badlib/libsystemd\.so\.0" \
        "and names the library and the loader's reason: $out"
no_leftovers "$cid"

# --- sdrun's journal messages (the native protocol, src/sdunit/journal.c) ------------------------------------
# A one-line message, one with newlines (the length-prefixed field form) and one too big for a datagram (a
# sealed memfd), each with its fields, read back through journalctl.
jid=$(new_id journal)
junit="sdrun-$jid.scope"
{ printf '%s ' "$jid"; head -c 300000 /dev/zero | tr '\0' x; } >"$TEST_TMPDIR/big-message"
for msg in "one line from $jid" "$(printf 'first line %s\nsecond line\n\nfourth = line' "$jid")" "@$TEST_TMPDIR/big-message"; do
        out=$("$SDUNIT_SMOKE" journal "$jid" "$junit" "$msg")
        is "$out" "libsystemd not loaded" "journal sink (${msg:0:20}...) works without libsystemd"
done
journalctl --sync >/dev/null 2>&1
jr() { journalctl --no-pager --all -o json CONTAINER_ID="$jid" 2>/dev/null; }
three_entries() { [ "$(jr | wc -l)" -ge 3 ]; }
wait_for three_entries
is "$(jr | jq -r 'select(.MESSAGE | type == "string" and startswith("one line")) | .MESSAGE')" "one line from $jid" \
        "the one-line message"
is "$(jr | jq -r 'select(.MESSAGE | type == "string" and startswith("first line")) | .MESSAGE')" \
        "$(printf 'first line %s\nsecond line\n\nfourth = line' "$jid")" "the message with newlines, exactly"
is "$(jr | jq -r 'select(.MESSAGE | type == "string" and startswith("'"$jid"' x")) | .MESSAGE | length')" \
        "$((${#jid} + 1 + 300000))" "the 300 kB message, whole (through a memfd)"
is "$(jr | jq -r '[.PRIORITY, .SYSLOG_IDENTIFIER, .OBJECT_SYSTEMD_UNIT, .UNIT] | join(" ")' | sort -u)" \
        "6 sdrun $junit $junit" "PRIORITY, SYSLOG_IDENTIFIER, OBJECT_SYSTEMD_UNIT and UNIT of all three"
is "$(journalctl --no-pager -o cat -u "$junit" 2>/dev/null | grep -c "^one line from $jid")" 1 \
        "journalctl -u UNIT finds it"

done_testing
