#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The measurement of bench/README.md, "Static container side" (issue 31): CPU time (perf stat task-clock,
# children included) of
#   reexec-rw / reexec-ro  `sdrun exec` of a missing container, the binary on a writable directory (sealed
#                          re-exec taken) and on a read-only bind mount of the same (skipped): the difference
#                          is what the re-exec costs today
#   fork / file / embedded exec-cost.c: fork+wait, and memfd copy + seal + execveat of the static container
#                          side (sdrun-init-static, stripped) from a file or from mapped bytes
#   nop                    the same for a 2-instruction static program without libc: what the trampoline
#                          hop (src/init/trampoline) costs, which a sealed static init would make unneeded
# Usage: bench/static-init/measure.sh SDRUN STATIC_INIT [RUNS] [ROUNDS]   (as root; mounts under a temporary
# directory, undone at exit)
set -euo pipefail
sdrun=$1 static=$2 runs=${3:-300} rounds=${4:-3}
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d /tmp/sdrun-static-init.XXXXXX)
cleanup() { umount "$tmp/ro" 2>/dev/null || true; rm -rf "$tmp"; }
trap cleanup EXIT
mkdir "$tmp/rw" "$tmp/ro"
cp "$sdrun" "$tmp/rw/sdrun"
cp "$sdrun" "$tmp/ro/sdrun"
mount --bind "$tmp/ro" "$tmp/ro"
mount -o remount,bind,ro "$tmp/ro"
strip -o "$tmp/init" "$static"
cc -O2 -o "$tmp/exec-cost" "$here/exec-cost.c"
printf 'void _start(void) { __asm__ volatile("mov $60, %%eax; xor %%edi, %%edi; syscall"); }\n' >"$tmp/nop.c"
cc -O2 -static -nostdlib -o "$tmp/nop" "$tmp/nop.c"
echo "static init: $(stat -c %s "$static") bytes, stripped $(stat -c %s "$tmp/init"); $(size "$tmp/init" | tail -1 | awk '{print "text " $1 " data " $2 " bss " $3}')"

msec() { # perf stat -r N CMD...: the mean task-clock in ms and its +- percentage, the page faults
        perf stat -x, -e task-clock,page-faults -r "$runs" "$@" 2>&1 >/dev/null |
                awk -F, '/task-clock/ {printf "%7.3f ms +-%-6s", $1, $4} /page-faults/ {printf " %4d faults", $1}'
}
for round in $(seq "$rounds"); do
        echo "round $round, load average $(cut -d' ' -f1-3 /proc/loadavg)"
        echo "  reexec-rw $(msec "$tmp/rw/sdrun" --root "$tmp/none" exec x true)"
        echo "  reexec-ro $(msec "$tmp/ro/sdrun" --root "$tmp/none" exec x true)"
        echo "  fork      $(msec "$tmp/exec-cost" fork)"
        echo "  nop       $(msec "$tmp/exec-cost" file "$tmp/nop")"
        echo "  file      $(msec "$tmp/exec-cost" file "$tmp/init")"
        echo "  embedded  $(msec "$tmp/exec-cost" embedded "$tmp/init")"
done
