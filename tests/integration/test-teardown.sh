#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# delete's teardown of the unit (issue 9 made it cheaper): KillUnit is skipped only when the scope's cgroup
# is empty, and StopUnit only when the unit is no longer loaded. Both shortcuts must keep what delete
# promises: it returns once the unit is gone, with no process left, and does not wait out TimeoutStopUSec.
. "$(dirname "$0")/lib.sh"

require_root
require_systemd

sd() { "$SDRUN" --root "$SDRUN_ROOT" "$@"; }
status_of() { sd state "$1" 2>/dev/null | jq -r .status; }
unit_loaded() { [ -n "$(systemctl list-units --all --plain --no-legend --no-pager -- "$1" 2>/dev/null)" ]; }
now_ms() { echo $(( $(date +%s%N) / 1000000 )); }

B=$TEST_TMPDIR/b
make_bundle "$B" || bail "make_bundle failed"

# ---------------------------------------------------------------------------------------------------------
# The init exits, a child that ignores SIGTERM stays in the scope (no pid namespace, so nothing kills it):
# the container is stopped but its cgroup is populated. delete must SIGKILL it (KillUnit) rather than let
# StopUnit send a SIGTERM it ignores and wait TimeoutStopUSec (10 s) for it.

id=$(new_id orphan); track_container "$id"
unit=$(unit_of "$id")
bundle_set "$B" '.process.args=["sh","-c","trap \"\" TERM; sleep 1917 & exit 0"] |
        .linux.namespaces |= map(select(.type != "pid"))'
ok_desc "create (no pid namespace)" sd create --bundle "$B" "$id"
ok_desc "start" sd start "$id"
child_in_unit() { grep -qx "$(pgrep -f '^sleep 1917$' | head -n 1)" "$(cgroup_dir "$unit")/cgroup.procs" 2>/dev/null; }
ok_desc "the background child outlives the init, in the unit" wait_for child_in_unit
child=$(pgrep -f '^sleep 1917$' | head -n 1)
ok_desc "the container is stopped" wait_for sh -c "[ \"\$('$SDRUN' --root '$SDRUN_ROOT' state '$id' | jq -r .status)\" = stopped ]"
ok_desc "its unit is still loaded (the child holds it)" unit_loaded "$unit"
t0=$(now_ms)
ok_desc "delete (without --force) of the stopped container" sd delete "$id"
t=$(( $(now_ms) - t0 ))
ok_desc "delete did not wait out TimeoutStopUSec (${t} ms < 5000)" test "$t" -lt 5000
ok_desc "the child that ignored SIGTERM is gone" \
        sh -c "! [ -e /proc/$child ] || [ \"\$(cut -d' ' -f3 /proc/$child/stat)\" = Z ]"
ok_desc "the unit is gone when delete returns" sh -c "[ -z \"\$(systemctl list-units --all --plain --no-legend --no-pager -- '$unit')\" ]"
no_leftovers "$id"

# ---------------------------------------------------------------------------------------------------------
# The init exits and takes the pid namespace with it: the cgroup is empty, the unit is collected by systemd
# (or about to be). delete, without KillUnit, still returns only once the unit is gone.

bundle_set "$B" '.process.args=["true"] | .linux.namespaces += [{"type":"pid"}] | .linux.namespaces |= unique_by(.type)'
for i in 1 2 3; do
        id=$(new_id gone); track_container "$id"
        unit=$(unit_of "$id")
        ok_desc "run $i: create and start a container that exits at once" sh -c "'$SDRUN' --root '$SDRUN_ROOT' create --bundle '$B' '$id' && '$SDRUN' --root '$SDRUN_ROOT' start '$id'"
        # As soon as the container's process has exited (start returns at its exec, and `true` may not
        # have run yet on a loaded machine: a delete before that is rightly refused), while the unit may
        # still be active, stopping or collected; and once it certainly is collected.
        wait_for sh -c "[ \"\$('$SDRUN' --root '$SDRUN_ROOT' state '$id' | jq -r .status)\" = stopped ]"
        [ "$i" = 3 ] && wait_for sh -c "! systemctl list-units --all --plain --no-legend --no-pager -- '$unit' | grep -q ."
        ok_desc "run $i: delete" sd delete "$id"
        ok_desc "run $i: the unit is gone when delete returns" sh -c "[ -z \"\$(systemctl list-units --all --plain --no-legend --no-pager -- '$unit')\" ]"
        no_leftovers "$id"
done

# A foreground run (create, start, wait, delete in one process) right after another: nothing is left.
for i in 1 2 3; do
        id=$(new_id seq); track_container "$id"
        ok_desc "sequential run $i exits 0" sd run --bundle "$B" "$id"
        no_leftovers "$id"
done

done_testing
