#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Lint one built man page with mandoc: any warning (or worse) fails.
# usage: lint-man.sh PAGE
set -u

page=${1:?usage: lint-man.sh PAGE}
if ! command -v mandoc >/dev/null; then
        echo "lint-man: mandoc is not installed (Debian package mandoc)" >&2
        exit 1
fi
if [ ! -s "$page" ]; then
        echo "lint-man: $page is missing or empty" >&2
        exit 1
fi

# scdoc starts every paragraph with .PP, also right after .SH and before a
# list item's .RS/.IP, which mandoc reports as "skipping paragraph macro: PP
# empty" / "PP after SH". The output is correct (the macro is just redundant)
# and scdoc offers no way to avoid it, so exactly these two messages are
# dropped; everything else mandoc says at level warning or above fails.
out=$(mandoc -T lint -W warning "$page" 2>&1)
out=$(printf '%s\n' "$out" | grep -v \
        -e 'WARNING: skipping paragraph macro: PP empty$' \
        -e 'WARNING: skipping paragraph macro: PP after SH$' \
        | grep -v '^$')
if [ -n "$out" ]; then
        printf '%s\n' "$out" >&2
        exit 1
fi
# Also make sure the page renders to text at all.
if ! mandoc -T ascii "$page" >/dev/null 2>&1; then
        echo "lint-man: mandoc cannot render $page" >&2
        exit 1
fi
exit 0
