#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The CLI's conventions that callers (conmon, Podman, scripts) rely on, without root or a bus: exit codes of
# bad invocations, --version, and the log formats (--log-format json: one JSON object per line with level,
# msg and time, on stderr without --log and in the file with it).
set -u
n=0 failed=0
t() { n=$((n + 1)); if "$@"; then echo "ok $n - ${desc}"; else echo "not ok $n - ${desc}"; failed=$((failed + 1)); fi; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
S=$SDRUN
R=(--root "$tmp/root")

desc="unknown verb exits 1"; rc=0; "$S" nosuchverb 2>"$tmp/e" || rc=$?; t test "$rc" = 1
desc="unknown verb names it"; t grep -q 'unknown command "nosuchverb"' "$tmp/e"
desc="unknown global flag exits 1"; rc=0; "$S" --bogus list 2>"$tmp/e" || rc=$?; t test "$rc" = 1
desc="unknown verb flag exits 1 and names it"; rc=0; "$S" "${R[@]}" kill --bogus x 2>"$tmp/e" || rc=$?
t grep -q -- '--bogus' "$tmp/e"
desc="--version: runc-style lines"; "$S" --version >"$tmp/v"
t grep -qE '^sdrun version [0-9]' "$tmp/v"
desc="--version: spec 1.3.0"; t grep -qx 'spec: 1.3.0' "$tmp/v"
desc="state of a missing container exits 1"; rc=0; "$S" "${R[@]}" state nope 2>"$tmp/e" || rc=$?; t test "$rc" = 1
desc="delete --force of a missing container succeeds (runc)"; rc=0; "$S" "${R[@]}" delete --force nope || rc=$?; t test "$rc" = 0
desc="invalid container id is refused"; rc=0; "$S" "${R[@]}" state ../x 2>"$tmp/e" || rc=$?; t test "$rc" = 1

json_lines_ok() {
        python3 -c '
import json, sys
lines = [l for l in open(sys.argv[1]) if l.strip()]
assert lines, "no lines"
for l in lines:
    o = json.loads(l)
    assert set(o) >= {"level", "msg", "time"}, o
    assert o["level"] == "error", o
print(len(lines))' "$1" >/dev/null
}
desc="--log-format json without --log: stderr lines are JSON objects"
"$S" --log-format json "${R[@]}" kill nope 2>"$tmp/j" || true
t json_lines_ok "$tmp/j"
desc="--log FILE --log-format json: the file has JSON lines"
"$S" --log "$tmp/log.json" --log-format json "${R[@]}" start nope 2>/dev/null || true
t json_lines_ok "$tmp/log.json"
desc="--log FILE: the message names the container"; t grep -q 'container \\"nope\\" does not exist' "$tmp/log.json"
desc="--log-format: unknown format refused"; rc=0; "$S" --log-format yaml list 2>/dev/null || rc=$?; t test "$rc" = 1

echo "1..$n"
[ $failed = 0 ]
