#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Upgrades keep running containers manageable (issue 38, item 3). An older sdrun, built here from a fixed
# commit of this repository, creates containers of each kind: plain (paused through the upgrade), with
# host hooks, one only created, a rootless one, and an sdrun@ service; one more through a "package" path
# whose binary is then replaced as dpkg does (a new file renamed over it, the unit template too,
# daemon-reload). Then the build under test lists them (status, pid), reads their state, execs into them,
# pauses (the cgroup frozen) and resumes them, updates them (TasksMax, pids.max), starts the created one,
# kills and deletes them (the poststop hook runs, nothing left); the service is stopped by the new unit
# and starts again with the new binary. Also: the containers keep running through the replacement.
#
# The older release: SDRUN_UPGRADE_FROM (commits, space-separated; default below), built from `git
# archive` of the source's repository (`meson setup`, `ninja src/cli/sdrun`: ~40 s) and kept in
# $SDRUN_BUILDDIR/test-upgrade/COMMIT for the next run. The source must be a git checkout holding the commit
# (a clone, as CI has); otherwise the test skips, saying why.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-rootless.sh"

require_root
require_systemd

# The parent of 83dc82e ("state.json carries its format and release"): the last release whose state has no
# sdrun.stateFormat (format 1 as every release before wrote it), and before --keep-unit (its sdrun@ service
# runs the container in a scope of its own) and the sealed re-exec.
UPGRADE_FROM=${SDRUN_UPGRADE_FROM:-82e7a39a16e84d9f79488718656ec73e13513f44}

git_src() { git -c safe.directory='*' -C "$SDRUN_SRCDIR" "$@"; }

if ! git_src rev-parse --git-dir >/dev/null 2>&1; then
        skip "the source $SDRUN_SRCDIR is not a git checkout (or its git directory is not reachable here): no older release to build"
        done_testing
fi

# build_old COMMIT: sdrun and the sdrun@.service.in of COMMIT in $SDRUN_BUILDDIR/test-upgrade/COMMIT (built
# once). Out: OLD (the binary), OLD_UNIT (the template).
build_old() {
        local c=$1 cache=$SDRUN_BUILDDIR/test-upgrade/$1 t=$TEST_TMPDIR/old-$1 stage
        OLD=$cache/sdrun OLD_UNIT=$cache/sdrun@.service.in
        [ -x "$OLD" ] && [ -f "$OLD_UNIT" ] && return 0
        git_src cat-file -e "$c^{commit}" 2>/dev/null || {
                diag "commit $c is not in the repository of $SDRUN_SRCDIR (a shallow clone?)"
                return 1
        }
        mkdir -p "$t/src" && git_src archive "$c" | tar -x -C "$t/src" || return 1
        if ! { meson setup -Dman=disabled "$t/build" "$t/src" && ninja -C "$t/build" src/cli/sdrun; } >"$t/log" 2>&1; then
                diag "the build of $c failed:"
                tail -20 "$t/log" | _tap_diag_stream
                return 1
        fi
        # (staged, then renamed into place: a box of the other layout may be building the same commit)
        mkdir -p "${cache%/*}" && stage=$(mktemp -d "$cache.XXXXXX") &&
                cp "$t/build/src/cli/sdrun" "$t/src/units/sdrun@.service.in" "$stage/" || return 1
        [ -x "$OLD" ] && [ -f "$OLD_UNIT" ] || rm -rf "$cache"
        mv -T "$stage" "$cache" 2>/dev/null || rm -rf "$stage"
        rm -rf "$t"
        [ -x "$OLD" ] && [ -f "$OLD_UNIT" ]
}

# sd BINARY ARGS...: sdrun (this build or another) on the tests' state root
sd() {
        local b=$1
        shift
        "$b" --root "$SDRUN_ROOT" "$@"
}
svc() { echo "sdrun@$1.service"; }
status_is() { [ "$(sd "$SDRUN" state "$1" 2>/dev/null | jq -r .status)" = "$2" ]; }
# events_frozen CGROUPDIR 0|1: cgroup.events says frozen 0 or 1
events_frozen() { grep -qx "frozen $2" "$1/cgroup.events" 2>/dev/null; }
# recorded_pid ID: the pid as the older release recorded it in state.json
recorded_pid() { jq -r .pid "$SDRUN_ROOT/$1/state.json" 2>/dev/null; }
# install_template TEMPLATE BINARY: TEMPLATE (an sdrun@.service.in) with BINARY, then daemon-reload
install_template() {
        sed "s|@SDRUN@|$2|g" "$1" >/run/systemd/system/sdrun@.service.new &&
                mv -f /run/systemd/system/sdrun@.service.new /run/systemd/system/sdrun@.service &&
                systemctl daemon-reload
}
# replace_file FROM TO: what dpkg does to a package's file: a new file next to it, renamed over it
replace_file() {
        cp "$1" "$2.dpkg-new" && chmod 755 "$2.dpkg-new" && mv -f "$2.dpkg-new" "$2"
}

# manage MGR ID UNIT WHAT: MGR (the new binary, by a path of its own or the package's) lists the running
# container ID, whose unit is UNIT, with the pid the old release recorded, reads its state, execs into it,
# pauses it (the cgroup frozen) and resumes it, and updates its pids limit.
manage() {
        local mgr=$1 id=$2 unit=$3 what=$4 pid cg v1 comm
        pid=$(recorded_pid "$id")
        is "$(sd "$mgr" list --format json 2>&1 | jq -r --arg i "$id" '.[] | select(.id == $i) | "\(.status) \(.pid)"')" \
                "running $pid" "$what: list shows it running, with the pid the old release recorded ($pid)"
        is "$(sd "$mgr" list -q 2>&1 | grep -cx -- "$id")" 1 "$what: list -q names it once"
        is "$(sd "$mgr" state "$id" 2>&1 | jq -r '"\(.status) \(.pid) \(.id)"')" "running $pid $id" "$what: state"
        comm=$(cat "/proc/$pid/comm" 2>&1)
        is "$(sd "$mgr" exec "$id" cat /proc/1/comm 2>&1)" "$comm" "$what: exec runs in it (its pid 1 is the init, $comm)"
        is "$(sd "$mgr" ps --format json "$id" 2>&1 | jq --argjson p "$pid" 'index($p) != null')" true "$what: ps lists its init"
        # An older release with --keep-unit: its sdrun@ container is the service's, with no unit of its own.
        if [ -z "$(jq -r '.sdrun.unit // empty' "$SDRUN_ROOT/$id/state.json" 2>/dev/null)" ]; then
                skip "$what: pause, resume, update: checked on a unit here; a --keep-unit container has none (test-keep-unit covers them)"
                return 0
        fi
        cg=$(cgroup_dir "$unit")
        ok_desc "$what: pause" sd "$mgr" pause "$id"
        ok_desc "$what: state says paused" status_is "$id" paused
        ok_desc "$what: $unit's cgroup is frozen (cgroup.events)" events_frozen "$cg" 1
        ok_desc "$what: resume" sd "$mgr" resume "$id"
        ok_desc "$what: state says running" status_is "$id" running
        ok_desc "$what: $unit's cgroup is thawed" events_frozen "$cg" 0
        ok_desc "$what: update --pids-limit 123" sd "$mgr" update --pids-limit 123 "$id"
        is "$(unit_prop "$unit" TasksMax)" 123 "$what: TasksMax=123 on $unit"
        if [ "$SDRUN_TEST_LAYOUT" = hybrid ]; then
                v1=$(cgroup_v1_dir "$unit" pids)
                is "$(cat "$v1/pids.max" 2>&1)" 123 "$what: pids.max follows (cgroup v1)"
        elif [ -f "$cg/pids.max" ]; then
                is "$(cat "$cg/pids.max" 2>&1)" 123 "$what: pids.max follows"
        fi
}

# finish MGR ID WHAT: MGR kills and deletes the container ID; nothing is left of it.
finish() {
        local mgr=$1 id=$2 what=$3
        ok_desc "$what: kill KILL" sd "$mgr" kill "$id" KILL
        ok_desc "$what: stopped" wait_for status_is "$id" stopped
        ok_desc "$what: delete" sd "$mgr" delete "$id"
        no_leftovers "$id"
}

# alive PID...: every PID is a live process
alive() {
        local p
        for p; do [ -d "/proc/$p" ] && [ "$(awk '{print $3}' "/proc/$p/stat" 2>/dev/null)" != Z ] || return 1; done
}

# A bundle running sleep, and one that also has host hooks recording the state they are given.
B=$TEST_TMPDIR/b
make_bundle "$B" || bail "make_bundle failed"
bundle_set "$B" '.process.args=["sleep","1000"]' || bail "bundle_set failed"
HB=$TEST_TMPDIR/hb
MARKS=$TEST_TMPDIR/marks
mkdir -p "$MARKS"
make_bundle "$HB" || bail "make_bundle failed"
# hook NAME: a host hook that writes the state it reads to $MARKS/NAME-ID
bundle_set "$HB" '
        def hook($n): {path: "/bin/sh", args: ["sh", "-c", "s=$(cat); printf %s \"$s\" >\"$1/$2-$(printf %s \"$s\" | jq -r .id)\"",
                                              "sh", $m, $n], env: ["PATH=/usr/bin:/bin"]};
        .process.args=["sleep","1000"] | .hooks={prestart: [hook("prestart")], poststop: [hook("poststop")]}' \
        --arg m "$MARKS" || bail "bundle_set failed"

ROOTLESS=1
if ! command -v newuidmap >/dev/null || ! command -v runuser >/dev/null; then
        ROOTLESS=0
fi
[ "$ROOTLESS" = 1 ] && rootless_setup sdrun-upg

for from in $UPGRADE_FROM; do
        short=${from:0:12}
        if ! build_old "$from"; then
                fail "build sdrun $short (the older release) with meson and ninja"
                continue
        fi
        diag "older release: $short ($OLD): $("$OLD" --version 2>&1 | paste -sd ' ')"
        [ "$(sd "$OLD" list -q 2>/dev/null | wc -l)" = 0 ] || diag "containers already in $SDRUN_ROOT: $(sd "$OLD" list -q | paste -sd ' ')"

        # ---- the older release creates them ----
        plain=$(new_id "up-plain"); track_container "$plain"
        ok_desc "$short: run -d (plain)" sd "$OLD" run -d --bundle "$B" "$plain"
        ok_desc "$short: pause it (paused through the upgrade)" sd "$OLD" pause "$plain"
        hooks=$(new_id "up-hooks"); track_container "$hooks"
        ok_desc "$short: create + start (host hooks)" sh -c "$OLD --root $SDRUN_ROOT create --bundle $HB $hooks &&
                $OLD --root $SDRUN_ROOT start $hooks"
        ok_desc "$short: its prestart hook ran" test -s "$MARKS/prestart-$hooks"
        created=$(new_id "up-created"); track_container "$created"
        ok_desc "$short: create (left created)" sd "$OLD" create --bundle "$B" "$created"
        diag "$short writes state format $(jq -r '.sdrun.stateFormat // "1 (no sdrun.stateFormat)"' "$SDRUN_ROOT/$plain/state.json" 2>&1)"

        # The "package": the older binary at PKG and its sdrun@.service pointing there, as installed.
        PKG=$TEST_TMPDIR/pkg-$short/usr/bin/sdrun
        mkdir -p "${PKG%/*}" && cp "$OLD" "$PKG" || bail "cannot copy $OLD to $PKG"
        pkgc=$(new_id "up-pkg"); track_container "$pkgc"
        ok_desc "$short: run -d by the package's binary" sd "$PKG" run -d --bundle "$B" "$pkgc"
        install_template "$OLD_UNIT" "$PKG" || bail "cannot install $short's sdrun@.service"
        cleanup_add rm -f /run/systemd/system/sdrun@.service
        unitc=$(new_id "up-unit"); track_container "$unitc"
        cleanup_add rm -rf "/var/lib/sdrun/bundles/$unitc"
        cleanup_add systemctl reset-failed "$(svc "$unitc")"
        cleanup_add systemctl stop "$(svc "$unitc")"
        mkdir -p /var/lib/sdrun/bundles && cp -a "$B" "/var/lib/sdrun/bundles/$unitc"
        bundle_set "/var/lib/sdrun/bundles/$unitc" '.process.args=["sh","-c","trap \"exit 0\" TERM; sleep 1000 & wait"]'
        rc=0; out=$(systemctl start "$(svc "$unitc")" 2>&1) || rc=$?
        is "$rc:$(unit_prop "$(svc "$unitc")" ActiveState)" 0:active "$short: systemctl start $(svc "$unitc")" || {
                diag "$out"
                journalctl -q --no-pager -u "$(svc "$unitc")" | tail -10 | _tap_diag_stream
        }
        runpid=$(unit_prop "$(svc "$unitc")" MainPID)

        rl=""
        if [ "$ROOTLESS" = 1 ]; then
                RL_OLD=$RL_TMP/sdrun-$short
                cp "$OLD" "$RL_OLD" && chown "$RL_USER:" "$RL_OLD" && chmod 755 "$RL_OLD" || bail "cannot copy $OLD for $RL_USER"
                rl_make_bundle "$RL_TMP/b" || bail "cannot make the user's bundle"
                rl=$(new_id "up-rl")
                ok_desc "$short: rootless --systemd-cgroup run -d" rl "$RL_OLD" --systemd-cgroup run -d --bundle "$RL_TMP/b" "$rl"
        fi

        pids=()
        for id in "$plain" "$hooks" "$pkgc" "$unitc"; do pids+=("$(recorded_pid "$id")"); done

        # ---- the upgrade: the package's binary and template replaced under them ----
        replace_file "$SDRUN" "$PKG" || bail "cannot replace $PKG"
        install_template "$SDRUN_SRCDIR/units/sdrun@.service.in" "$PKG" || bail "cannot install the new sdrun@.service"
        is "$("$PKG" --version 2>&1 | grep '^commit:')" "$("$SDRUN" --version 2>&1 | grep '^commit:')" \
                "the package's path is now the new binary"
        ok_desc "the containers' inits still run (${pids[*]})" alive "${pids[@]}"
        ok_desc "$(svc "$unitc")'s sdrun run ($runpid) still runs, from the replaced binary" alive "$runpid"
        diag "its /proc/$runpid/exe: $(readlink "/proc/$runpid/exe")"
        is "$(unit_prop "$(svc "$unitc")" ActiveState)" active "$(svc "$unitc") is still active after daemon-reload"

        # ---- the new release manages them ----
        is "$(sd "$SDRUN" list --format json 2>&1 | jq -r --arg i "$plain" '.[] | select(.id == $i) | .status')" paused \
                "$short plain: list shows it paused"
        ok_desc "$short plain: state says paused" status_is "$plain" paused
        ok_desc "$short plain: resume by the new release" sd "$SDRUN" resume "$plain"
        ok_desc "$short plain: $(unit_of "$plain")'s cgroup is thawed" events_frozen "$(cgroup_dir "$(unit_of "$plain")")" 0
        manage "$SDRUN" "$plain" "$(unit_of "$plain")" "$short plain"
        finish "$SDRUN" "$plain" "$short plain"

        manage "$SDRUN" "$hooks" "$(unit_of "$hooks")" "$short hooks"
        finish "$SDRUN" "$hooks" "$short hooks"
        is "$(jq -r '"\(.id) \(.status)"' "$MARKS/poststop-$hooks" 2>&1)" "$hooks stopped" \
                "$short hooks: the new delete ran the poststop hook the old create recorded, with the state"

        is "$(sd "$SDRUN" state "$created" 2>&1 | jq -r .status)" created "$short created: state says created"
        ok_desc "$short created: start by the new release" sd "$SDRUN" start "$created"
        ok_desc "$short created: running" status_is "$created" running
        is "$(sd "$SDRUN" exec "$created" cat /proc/1/comm 2>&1)" sleep "$short created: exec runs in it"
        ok_desc "$short created: delete --force" sd "$SDRUN" delete --force "$created"
        no_leftovers "$created"

        manage "$PKG" "$pkgc" "$(unit_of "$pkgc")" "$short package"
        finish "$PKG" "$pkgc" "$short package"

        # The service: its container in the scope the older release made; the new unit stops it.
        manage "$SDRUN" "$unitc" "$(unit_of "$unitc")" "$short sdrun@"
        rc=0; out=$(systemctl stop "$(svc "$unitc")" 2>&1) || rc=$?
        is "$rc:$(unit_prop "$(svc "$unitc")" ActiveState)" 0:inactive "$short sdrun@: systemctl stop (the new unit): inactive" ||
                diag "$out"
        no_leftovers "$unitc"
        rc=0; out=$(systemctl start "$(svc "$unitc")" 2>&1) || rc=$?
        is "$rc:$(sd "$SDRUN" state "$unitc" 2>&1 | jq -r .status)" 0:running "$short sdrun@: systemctl start again: the new binary runs it" ||
                diag "$out"
        ok_desc "$short sdrun@: now in the service's payload (--keep-unit)" grep -qx "$(recorded_pid "$unitc")" \
                "$(cgroup_dir "$(svc "$unitc")")/payload/cgroup.procs"
        systemctl stop "$(svc "$unitc")"
        no_leftovers "$unitc"

        if [ "$ROOTLESS" = 1 ]; then
                what="$short rootless"
                st=$(rl "$RL_SDRUN" state "$rl" 2>&1)
                pid=$(jq -r .pid "$RL_RUNTIME_DIR/sdrun/$rl/state.json" 2>/dev/null)
                is "$(jq -r '"\(.status) \(.pid)"' <<<"$st" 2>&1)" "running $pid" "$what: state (the user's root)"
                is "$(rl "$RL_SDRUN" list --format json 2>&1 | jq -r --arg i "$rl" '.[] | select(.id == $i) | "\(.status) \(.pid)"')" \
                        "running $pid" "$what: list shows it running"
                is "$(rl "$RL_SDRUN" exec "$rl" sh -c 'id -u; cat /proc/1/comm' 2>&1 | paste -sd ' ')" "0 sleep" \
                        "$what: exec runs in it, as the user namespace's root"
                cg=$(rl_unit_prop "sdrun-$rl.scope" ControlGroup)
                d=$([ "$SDRUN_TEST_LAYOUT" = hybrid ] && echo "/sys/fs/cgroup/unified$cg" || echo "/sys/fs/cgroup$cg")
                ok_desc "$what: pause" rl "$RL_SDRUN" pause "$rl"
                is "$(rl "$RL_SDRUN" state "$rl" | jq -r .status)" paused "$what: state says paused"
                ok_desc "$what: the scope's cgroup is frozen" events_frozen "$d" 1
                ok_desc "$what: resume" rl "$RL_SDRUN" resume "$rl"
                ok_desc "$what: the scope's cgroup is thawed" events_frozen "$d" 0
                if [[ " $(rl_delegated) " == *" pids "* ]]; then
                        ok_desc "$what: update --pids-limit 50" rl "$RL_SDRUN" update --pids-limit 50 "$rl"
                        is "$(cat "$d/pids.max" 2>&1)" 50 "$what: pids.max of the user's scope is 50"
                else
                        diag "$what: update not checked: the user manager has no pids controller delegated"
                fi
                ok_desc "$what: kill KILL" rl "$RL_SDRUN" kill "$rl" KILL
                _rl_stopped() { [ "$(rl "$RL_SDRUN" state "$rl" | jq -r .status)" = stopped ]; }
                ok_desc "$what: stopped" wait_for _rl_stopped
                ok_desc "$what: delete" rl "$RL_SDRUN" delete "$rl"
                ok_desc "$what: no state left" test ! -e "$RL_RUNTIME_DIR/sdrun/$rl"
                is "$(rl_units "*$rl*")" "" "$what: no unit left in the user's manager"
        else
                skip "rootless: newuidmap or runuser is not installed"
        fi
done

done_testing
