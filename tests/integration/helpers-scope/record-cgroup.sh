#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# A createRuntime hook (runs in the runtime namespace, state JSON on stdin): record what is true at that
# moment, before the container process exists: the init's pid from the state, its /proc/PID/cgroup and
# comm, the hook's own /proc/self/cgroup, and the unit's ActiveState.
#
#   record-cgroup.sh OUTFILE UNIT
out=$1
unit=$2
state=$(cat)
pid=$(printf '%s' "$state" | sed -n 's/.*"pid"[[:space:]]*:[[:space:]]*\([0-9][0-9]*\).*/\1/p')
status=$(printf '%s' "$state" | sed -n 's/.*"status"[[:space:]]*:[[:space:]]*"\([a-z]*\)".*/\1/p')
{
        echo "status=$status"
        echo "pid=$pid"
        echo "comm=$(cat "/proc/$pid/comm" 2>/dev/null)"
        echo "unit=$(systemctl show -p ActiveState --value -- "$unit" 2>/dev/null)"
        echo "[init]"
        cat "/proc/$pid/cgroup" 2>/dev/null
        echo "[self]"
        cat /proc/self/cgroup
} >"$out.tmp" && mv "$out.tmp" "$out"
