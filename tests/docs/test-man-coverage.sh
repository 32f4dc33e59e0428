#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Every verb of src/cli/main.c's verb table has a man page that is built, and is listed in sdrun(8);
# every global option of main.c is documented in sdrun(8); every option in a verb's usage string is
# documented in its page. TAP. Needs SDRUN_SRCDIR.
set -u

src=${SDRUN_SRCDIR:?SDRUN_SRCDIR must name the source tree}
main=$src/src/cli/main.c
man=$src/man

n=0
failed=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $1"; }
check() { if eval "$2"; then ok "$1"; else not_ok "$1"; fi; }

# The verb table: lines like `{ "create", verb_create,`.
mapfile -t verbs < <(sed -n 's/^[[:space:]]*{ "\([a-z-]*\)", verb_[a-z_]*,.*/\1/p' "$main")
check "main.c's verb table was found (${#verbs[@]} verbs)" '[ ${#verbs[@]} -ge 10 ]'

# The usage string of a verb: the C string literals after its table entry, up to its summary line.
usage_of() {
        awk -v v="$1" '
                $0 ~ "^[[:space:]]*\\{ \"" v "\", verb_" { on = 1 }
                on { line = line $0 }
                on && /"[^"]*" *},/ { print line; exit }
        ' "$main" | grep -o -- '--[a-z][a-z-]*' | sort -u
}

for v in "${verbs[@]}"; do
        page=$man/sdrun-$v.8.scd
        check "verb $v has a man page (man/sdrun-$v.8.scd)" '[ -s "$page" ]'
        check "man/meson.build builds sdrun-$v.8" "grep -q \"\\['sdrun-$v', '8'\\]\" '$man/meson.build'"
        check "sdrun(8) lists the verb $v" "grep -q '^\\*$v\\*' '$man/sdrun.8.scd'"
        check "sdrun(8) refers to sdrun-$v(8)" "grep -q '\\*sdrun-$v\\*(8)' '$man/sdrun.8.scd'"
        [ -s "$page" ] || continue
        while read -r opt; do
                [ -n "$opt" ] || continue
                check "sdrun-$v(8) documents $opt" "grep -q -- '\\*$opt\\*' '$page'"
        done < <(usage_of "$v")
done

# Global options: the long options of parse_global()'s table.
mapfile -t globals < <(awk '/^static int parse_global/ { on = 1 } on && /^}/ { exit }
        on' "$main" | sed -n 's/^[[:space:]]*{ "\([a-z-]*\)", [a-z_]*_argument,.*/\1/p')
check "main.c's global options were found (${#globals[@]})" '[ ${#globals[@]} -ge 5 ]'
for g in "${globals[@]}"; do
        check "sdrun(8) documents --$g" "grep -q -- '\\*--$g\\*' '$man/sdrun.8.scd'"
done

# And no page documents a verb that does not exist.
for page in "$man"/sdrun-*.8.scd; do
        v=$(basename "$page" .8.scd)
        v=${v#sdrun-}
        check "man/sdrun-$v.8.scd is the page of a verb in main.c" 'printf "%s\n" "${verbs[@]}" | grep -qx "$v"'
done

echo "1..$n"
[ $failed = 0 ]
