#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The bash completion (shell-completion/bash/sdrun): verbs, options, values and container ids, and that it
# offers every verb and option of src/cli/main.c. TAP. Needs SDRUN_SRCDIR.
set -u

src=${SDRUN_SRCDIR:?SDRUN_SRCDIR must name the source tree}
main=$src/src/cli/main.c

n=0
failed=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $1"; shift; for l in "$@"; do echo "# $l"; done; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# A fake sdrun for `sdrun list --quiet`: prints ids, and records its arguments.
mkdir "$tmp/bin"
cat >"$tmp/bin/sdrun" <<FAKE
#!/bin/sh
echo "\$*" >"$tmp/args"
case "\$*" in
*"list --quiet") printf 'web1\nweb2\ndb\n' ;;
*) exit 1 ;;
esac
FAKE
chmod +x "$tmp/bin/sdrun"
PATH=$tmp/bin:$PATH

# shellcheck source=/dev/null
if ! source "$src/shell-completion/bash/sdrun"; then
        echo "1..1"
        not_ok "the completion file can be sourced"
        exit 1
fi
ok "the completion file can be sourced"
if complete -p sdrun 2>/dev/null | grep -q -- '-F _sdrun'; then ok "completion is registered for sdrun"; else not_ok "completion is registered for sdrun"; fi

# complete LINE: the completions offered at the end of LINE (a trailing space starts a new word), sorted,
# space-separated.
complete_line() {
        local line=$1
        read -r -a COMP_WORDS <<<"$line"
        [[ $line == *" " ]] && COMP_WORDS+=("")
        COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
        COMP_LINE=$line
        COMP_POINT=${#line}
        COMPREPLY=()
        _sdrun sdrun "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}"
        printf '%s\n' "${COMPREPLY[@]}" | sort | tr '\n' ' ' | sed 's/ $//'
}

expect() { # line expected
        local got
        got=$(complete_line "$1")
        if [ "$got" = "$2" ]; then ok "'$1<TAB>' -> '$2'"; else not_ok "'$1<TAB>' -> '$2'" "got '$got'"; fi
}

expect "sdrun cr" "create"
expect "sdrun create --b" "--bundle"
expect "sdrun st" "start state"
expect "sdrun --ro" "--root --rootless"
expect "sdrun --log-format " "json text"
expect "sdrun --root /tmp/x p" "pause ps"
expect "sdrun --debug exec --t" "--tty"
expect "sdrun list --format " "json table"
expect "sdrun update --pids" "--pids-limit"
expect "sdrun spec --r" "--rootless"
expect "sdrun kill " "db web1 web2"
expect "sdrun kill web1 KI" "KILL"
expect "sdrun delete --force w" "web1 web2"
expect "sdrun create " ""
expect "sdrun create c1 " ""
expect "sdrun features " ""
expect "sdrun --root /tmp/state state " "db web1 web2"
if grep -qx -- "--root /tmp/state list --quiet" "$tmp/args"; then
        ok "container ids are listed from the --root given on the command line"
else
        not_ok "container ids are listed from the --root given on the command line" "args: $(cat "$tmp/args")"
fi
mkdir -p "$tmp/bundles/b1" "$tmp/bundles/b2"
expect "sdrun run --bundle $tmp/bundles/b" "$tmp/bundles/b1 $tmp/bundles/b2"

# In step with main.c: every verb is offered, and each verb offers every option of its usage string.
mapfile -t verbs < <(sed -n 's/^[[:space:]]*{ "\([a-z-]*\)", verb_[a-z_]*,.*/\1/p' "$main")
if [ ${#verbs[@]} -ge 10 ]; then ok "main.c's verb table was found"; else not_ok "main.c's verb table was found"; fi
all_verbs=" $(complete_line "sdrun ") "
for v in "${verbs[@]}"; do
        if [[ $all_verbs == *" $v "* ]]; then ok "verb $v is completed"; else not_ok "verb $v is completed"; fi
        offered=" $(complete_line "sdrun $v --") "
        missing=""
        for opt in $(awk -v v="$v" '
                        $0 ~ "^[[:space:]]*\\{ \"" v "\", verb_" { on = 1 }
                        on { line = line $0 }
                        on && /"[^"]*" *},/ { print line; exit }' "$main" | grep -o -- '--[a-z][a-z-]*' | sort -u); do
                [[ $offered == *" $opt "* ]] || missing+=" $opt"
        done
        if [ -z "$missing" ]; then ok "sdrun $v offers the options of its usage"; else not_ok "sdrun $v offers the options of its usage" "missing:$missing"; fi
done
mapfile -t globals < <(awk '/^static int parse_global/ { on = 1 } on && /^}/ { exit }
        on' "$main" | sed -n 's/^[[:space:]]*{ "\([a-z-]*\)", [a-z_]*_argument,.*/\1/p')
offered=" $(complete_line "sdrun --") "
missing=""
for g in "${globals[@]}"; do
        [[ $offered == *" --$g "* ]] || missing+=" --$g"
done
if [ ${#globals[@]} -ge 5 ] && [ -z "$missing" ]; then ok "every global option is offered"; else not_ok "every global option is offered" "missing:$missing"; fi

echo "1..$n"
[ $failed = 0 ]
