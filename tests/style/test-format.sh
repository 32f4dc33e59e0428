#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# The C sources are formatted with the project's own .clang-format: one TAP case per source folder, each
# listing the files that clang-format would change and the first lines of the difference. The output of
# clang-format changes between its major versions, so the check pins the version Debian 12 ships
# (clang-format 14): with another version the test is skipped and says why; CI installs 14.
#
# To format a change: git clang-format-14 (changed lines) or clang-format-14 -i FILE.
set -uo pipefail

SRCDIR=${SDRUN_SRCDIR:?SDRUN_SRCDIR is not set}
CLANG_FORMAT=${CLANG_FORMAT:?CLANG_FORMAT is not set}
cd "$SRCDIR" || exit 1

version=$("$CLANG_FORMAT" --version 2>/dev/null | sed -n 's/.*clang-format version \([0-9]*\)\..*/\1/p')
if [ "$version" != 14 ]; then
        echo "1..0 # SKIP $CLANG_FORMAT is version ${version:-unknown}, the tree is formatted with 14"
        exit 0
fi

mapfile -t dirs < <(git ls-files 'src/*.c' 'src/*.h' 2>/dev/null | xargs -r -n1 dirname | sort -u)
if [ ${#dirs[@]} = 0 ]; then
        # not a git checkout (a release tarball): every source file below src/
        mapfile -t dirs < <(find src -name '*.[ch]' -printf '%h\n' | sort -u)
fi
[ ${#dirs[@]} -gt 0 ] || { echo "Bail out! no C sources found below $SRCDIR/src"; exit 1; }

echo "1..${#dirs[@]}"
n=0 failed=0
for d in "${dirs[@]}"; do
        n=$((n + 1))
        bad=()
        files=()
        for f in "$d"/*.[ch]; do
                [ -f "$f" ] && files+=("$f")
        done
        # One clang-format for the whole folder; only when it objects, one per file to name them.
        if [ ${#files[@]} -gt 0 ] && ! "$CLANG_FORMAT" --style=file --dry-run --Werror "${files[@]}" >/dev/null 2>&1; then
                for f in "${files[@]}"; do
                        "$CLANG_FORMAT" --style=file --dry-run --Werror "$f" >/dev/null 2>&1 || bad+=("$f")
                done
                [ ${#bad[@]} -gt 0 ] || bad=("(clang-format failed on the folder as a whole)")
        fi
        if [ ${#bad[@]} = 0 ]; then
                echo "ok $n - $d is formatted"
        else
                failed=$((failed + 1))
                echo "not ok $n - $d: ${#bad[@]} file(s) differ from clang-format: ${bad[*]}"
                for f in "${bad[@]:0:3}"; do
                        "$CLANG_FORMAT" --style=file "$f" | diff -u "$f" - | head -n 20 | sed 's/^/# /'
                done
        fi
done
[ $failed = 0 ]
