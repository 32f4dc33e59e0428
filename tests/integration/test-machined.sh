#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Containers as systemd citizens (issue 8): machined registration (machinectl list/status/show/terminate),
# `systemctl stop` of the unit, the opt-out annotation io.github.sdrun.machine=false, the machine name
# mapping (sdunit_machine_name: machined wants a host name, so characters it refuses -- '_', '+', a
# leading, trailing or doubled '.' -- become '-'; an id longer than 64 characters is cut to 55 and suffixed with '-' and 8 hex digits of a
# FNV-1a hash of the whole id), and sdrun's own messages in the journal (`journalctl -u UNIT`) unless
# --log FILE is given.
. "$(dirname "$0")/lib.sh"

require_root
require_systemd

sd() { "$SDRUN" --root "$SDRUN_ROOT" "$@"; }
status_of() { sd state "$1" 2>/dev/null | jq -r .status; }
pid_of() { sd state "$1" 2>/dev/null | jq -r '.pid // empty'; }
unit_gone() { [ -z "$(systemctl list-units --all --plain --no-legend --no-pager -- "$1" 2>/dev/null)" ]; }
in_machines() { machinectl list --no-legend --no-pager 2>/dev/null | awk '{print $1}' | grep -qxF -- "$1"; }
not_in_machines() { ! in_machines "$1"; }

busctl --system status org.freedesktop.machine1 >/dev/null 2>&1 ||
        systemctl start systemd-machined >/dev/null 2>&1 || bail "systemd-machined cannot be started"

B=$TEST_TMPDIR/b
make_bundle "$B" || bail "make_bundle failed"
# A pid 1 that handles SIGTERM, so that terminate/stop end it at once (no 10 s escalation).
bundle_set "$B" '.process.args=["sh","-c","trap \"exit 0\" TERM; while :; do sleep 0.1; done"]'
POST=$TEST_TMPDIR/poststop
bundle_set "$B" '.hooks.poststop=[{"path":"/bin/sh","args":["sh","-c","cat >>\"$0\"; echo >>\"$0\"", $p]}]' --arg p "$POST"

# ---------------------------------------------------------------------------------------------------------
# machinectl list / status / show / terminate

id=$(new_id mach); track_container "$id"
unit=$(unit_of "$id")
ok_desc "create" sd create --bundle "$B" "$id"
ok_desc "start" sd start "$id"
pid=$(pid_of "$id")
line=$(machinectl list --no-legend --no-pager | awk -v n="$id" '$1 == n')
like "$line" "^$id +container +sdrun( |\$)" "machinectl list: name = id, class container, service sdrun"
st=$(machinectl status --no-pager -- "$id" 2>&1)
like "$st" "Unit: $unit" "machinectl status shows the unit $unit"
like "$st" "Leader: $pid" "machinectl status shows the init ($pid) as leader"
like "$st" "Root: $B/rootfs" "machinectl status shows the rootfs"
is "$(machinectl show -p RootDirectory --value -- "$id")" "$B/rootfs" "machinectl show RootDirectory = rootfs"
is "$(machinectl show -p Unit --value -- "$id")" "$unit" "machinectl show Unit = $unit"
is "$(machinectl show -p Class --value -- "$id")" container "machinectl show Class = container"
is "$(machinectl show -p Service --value -- "$id")" sdrun "machinectl show Service = sdrun"
is "$(machinectl show -p Leader --value -- "$id")" "$pid" "machinectl show Leader = init pid"

ok_desc "machinectl terminate" machinectl terminate "$id"
ok_desc "the unit is gone after terminate (within 10 s)" wait_for unit_gone "$unit"
ok_desc "the machine is gone" wait_for not_in_machines "$id"
is "$(status_of "$id")" stopped "sdrun state says stopped after machinectl terminate"
: >"$POST"
ok_desc "delete" sd delete "$id"
like "$(cat "$POST")" "\"id\": *\"$id\"" "the poststop hook ran on delete (state on its stdin)"
like "$(cat "$POST")" '"status": *"stopped"' "the poststop hook saw status stopped"
no_leftovers "$id"

# ---------------------------------------------------------------------------------------------------------
# systemctl stop

id=$(new_id stop); track_container "$id"
unit=$(unit_of "$id")
ok_desc "create" sd create --bundle "$B" "$id"
ok_desc "start" sd start "$id"
ok_desc "systemctl stop $unit" systemctl stop "$unit"
ok_desc "the unit is gone" wait_for unit_gone "$unit"
ok_desc "the machine is gone" wait_for not_in_machines "$id"
is "$(status_of "$id")" stopped "sdrun state says stopped after systemctl stop"
: >"$POST"
ok_desc "delete" sd delete "$id"
like "$(cat "$POST")" "\"id\": *\"$id\"" "the poststop hook ran on delete"
no_leftovers "$id"

# A pid 1 that ignores SIGTERM: TimeoutStopSec from the annotation keeps the escalation to SIGKILL short.
id=$(new_id stopk); track_container "$id"
unit=$(unit_of "$id")
bundle_set "$B" '.process.args=["sleep","1000"] | .annotations={"org.systemd.property.TimeoutStopSec":"1"}'
ok_desc "create (TimeoutStopSec=1, a pid 1 without a TERM handler)" sd create --bundle "$B" "$id"
ok_desc "start" sd start "$id"
t0=$SECONDS
ok_desc "machinectl terminate" machinectl terminate "$id"
ok_desc "the unit is gone (SIGKILL after 1 s)" wait_for unit_gone "$unit"
ok_desc "within 5 s" test $((SECONDS - t0)) -le 5
is "$(status_of "$id")" stopped "state says stopped"
ok_desc "delete" sd delete "$id"
no_leftovers "$id"

# ---------------------------------------------------------------------------------------------------------
# opt-out

id=$(new_id optout); track_container "$id"
bundle_set "$B" '.process.args=["sleep","1000"] | .annotations={"io.github.sdrun.machine":"false"}'
ok_desc "create with io.github.sdrun.machine=false" sd create --bundle "$B" "$id"
ok_desc "the unit exists" sh -c "systemctl is-active -q $(unit_of "$id")"
ok_desc "not in machinectl list" not_in_machines "$id"
is "$(jq -r '.sdrun.machine // "none"' "$SDRUN_ROOT/$id/state.json")" none "the state records no machine"
ok_desc "delete --force" sd delete --force "$id"
no_leftovers "$id"
bundle_set "$B" 'del(.annotations)'

# ---------------------------------------------------------------------------------------------------------
# name mapping

id="plus+und_$(new_id p)"; track_container "$id"
ok_desc "create id with '+' and '_'" sd create --bundle "$B" "$id"
name=${id//+/-}; name=${name//_/-}
ok_desc "machine name: '+' and '_' become '-' ($name)" in_machines "$name"
is "$(machinectl show -p Unit --value -- "$name")" "$(sd state "$id" | jq -r .systemdUnit)" "and it is bound to the container's unit"
is "$(jq -r .sdrun.machine "$SDRUN_ROOT/$id/state.json")" "$name" "the state records the name machined accepted"
ok_desc "delete --force" sd delete --force "$id"
# delete unregisters the machine before it stops the scope (machined would otherwise stop the unit by name
# when it collects the dead machine, maybe after a new container of the same id has its scope).
ok_desc "the machine is gone when delete returns" not_in_machines "$name"
no_leftovers "$id"

base=$(new_id long)
id="$base-$(printf 'x%.0s' $(seq 1 $((80 - ${#base} - 1))))"
track_container "$id"
fnv() { # FNV-1a 32 bit of $1, as 8 hex digits
        local s=$1 h=2166136261 i c
        for ((i = 0; i < ${#s}; i++)); do
                printf -v c '%d' "'${s:i:1}"
                h=$(( ((h ^ c) * 16777619) & 0xffffffff ))
        done
        printf '%08x' "$h"
}
name="${id:0:55}-$(fnv "$id")"
ok_desc "create with an 80-character id" sd create --bundle "$B" "$id"
is "${#name}" 64 "the expected machine name has 64 characters"
ok_desc "machine name: the first 55 characters, '-', FNV-1a hash ($name)" in_machines "$name"
ok_desc "delete --force" sd delete --force "$id"
no_leftovers "$id"

# ---------------------------------------------------------------------------------------------------------
# journal

id=$(new_id jrnl); track_container "$id"
unit=$(unit_of "$id")
ok_desc "create" sd create --bundle "$B" "$id"
journalctl --sync >/dev/null 2>&1
has_msg() { journalctl -u "$unit" --no-pager -o cat 2>/dev/null | grep -q "created container $id"; }
ok_desc "journalctl -u $unit shows sdrun's 'created container' message" wait_for has_msg
j=$(journalctl -u "$unit" --no-pager -o json 2>/dev/null | jq -r --arg i "$id" 'select(.MESSAGE | tostring | test("created container " + $i))' | head -50)
is "$(jq -r .CONTAINER_ID <<<"$j" | head -1)" "$id" "the journal entry carries CONTAINER_ID=$id"
is "$(jq -r .OBJECT_SYSTEMD_UNIT <<<"$j" | head -1)" "$unit" "and OBJECT_SYSTEMD_UNIT=$unit"
is "$(jq -r .PRIORITY <<<"$j" | head -1)" 6 "and PRIORITY=6 (info)"
ok_desc "delete --force" sd delete --force "$id"
no_leftovers "$id"

id=$(new_id logf); track_container "$id"
unit=$(unit_of "$id")
ok_desc "create --log FILE" "$SDRUN" --root "$SDRUN_ROOT" --log "$TEST_TMPDIR/log" create --bundle "$B" "$id"
like "$(cat "$TEST_TMPDIR/log" 2>/dev/null)" "created container $id" "with --log the message goes to the file"
# A marker sent after create returned, through the same native journal socket as sdrun's messages (whose
# datagrams journald reads in order): once it is in the journal, a message of create would be too.
marker="sdrun-test-marker-$id"
printf 'MESSAGE=%s\nSYSLOG_IDENTIFIER=sdrun-test\n' "$marker" | logger --journald
ok_desc "the marker sent after create reached the journal" \
        wait_for sh -c "journalctl --sync; journalctl -t sdrun-test --no-pager -o cat | grep -qx '$marker'"
ok_desc "and not to the journal" sh -c "! journalctl -u $unit --no-pager -o cat | grep -q 'created container $id'"
ok_desc "delete --force" sd delete --force "$id"
no_leftovers "$id"

done_testing
