#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The static probe (src/init/static-probe.c) linked against musl instead of glibc, for bench/README.md's
# "Static container side": a measurement of what a musl-based container side would cost, not a port (the
# sources compile with warnings silenced, the missing glibc 2.36 declarations come from musl-compat.h).
# Needs musl-tools, cJSON's source (cJSON.c, e.g. from `apt-get source cjson`) and a configured BUILDDIR
# (for config.h and the trampoline's bytes).
# Usage: bench/static-init/build-musl-probe.sh BUILDDIR CJSON_C OUTPUT
set -euo pipefail
build=$(realpath "$1") cjson=$2 out=$3
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../../src" && pwd)
tmp=$(mktemp -d /tmp/sdrun-musl-probe.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
ninja -C "$build" src/init/trampoline-image.c >/dev/null
# musl-gcc searches only musl's headers: the kernel's, libcap's and libseccomp's (constants only) and
# cJSON's come from the system's, after musl's.
mkdir -p "$tmp/inc/sys"
for d in linux asm-generic cjson; do ln -s "/usr/include/$d" "$tmp/inc/$d"; done
ln -s "/usr/include/$(gcc -print-multiarch)/asm" "$tmp/inc/asm"
ln -s /usr/include/sys/capability.h "$tmp/inc/sys/capability.h"
ln -s /usr/include/seccomp.h /usr/include/seccomp-syscalls.h "$tmp/inc/"
flags=(-std=gnu17 -O2 -D_GNU_SOURCE -w -ffunction-sections -fdata-sections -idirafter "$tmp/inc")
objs=()
for f in "$src"/init/*.c "$src"/oci/*.c "$src"/basic/*.c "$cjson" "$build/src/init/trampoline-image.c"; do
        o="$tmp/$(basename "$(dirname "$f")")-$(basename "$f" .c).o"
        musl-gcc "${flags[@]}" -include "$here/musl-compat.h" -I"$build" -I"$src/init" -I"$src/oci" \
                -I"$src/basic" -c "$f" -o "$o"
        objs+=("$o")
done
musl-gcc "${flags[@]}" -c "$here/musl-compat.c" -o "$tmp/musl-compat.o"
musl-gcc -static -Wl,--gc-sections -s -o "$out" "${objs[@]}" "$tmp/musl-compat.o" \
        "/usr/lib/$(gcc -print-multiarch)/libcap.a"
size "$out"
