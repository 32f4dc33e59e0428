#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# An OCI hook for test-hooks.sh: records what it sees into OUTDIR/NAME.*
#   hook-record.sh OUTDIR NAME [PATH-THAT-SHOULD-EXIST] [EXIT-STATUS]
# stdin (the state JSON), cwd, mount and pid namespace, environment, argv, whether PATH exists. Prints a
# line on stdout and on stderr (which must never reach the container's stdio) and exits EXIT-STATUS.
out=$1 name=$2
cat >"$out/$name.stdin.tmp" && mv "$out/$name.stdin.tmp" "$out/$name.stdin"
pwd >"$out/$name.cwd"
readlink /proc/self/ns/mnt >"$out/$name.mntns"
readlink /proc/self/ns/pid >"$out/$name.pidns"
env >"$out/$name.env"
echo "$0 $*" >"$out/$name.args"
# The pid in the state (flattened JSON), and what /proc/PID/exe of it is at this moment.
pid=$(tr -d ' \n\t' <"$out/$name.stdin" | sed -n 's/.*"pid":\(-\{0,1\}[0-9]*\).*/\1/p')
if [ -n "$pid" ] && [ "$pid" -gt 0 ] 2>/dev/null; then
        readlink "/proc/$pid/exe" >"$out/$name.exe" 2>&1
fi
if [ -n "${3:-}" ]; then
        if [ -e "$3" ]; then echo yes; else echo no; fi >"$out/$name.sees"
fi
echo "HOOK-STDOUT-$name"
echo "HOOK-STDERR-$name" >&2
echo "$name" >>"$out/order"
exit "${4:-0}"
