#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Self-test of the integration harness: lib.sh's TAP counting and helpers, make_bundle, and the booted
# systemd the integration suite runs in (transient scope, its cgroup, stop).
. "$(dirname "$0")/lib.sh"

require_root
require_systemd

# --- TAP counting, in a child script (its output is checked, not passed through) ---
child=$TEST_TMPDIR/child.sh
cat >"$child" <<CHILD
. "$SDRUN_SRCDIR/tests/integration/lib.sh"
ok true
ok_desc "desc # with hash" test 1 = 1
is a a "is equal"
like abc 'b.' "like"
unlike abc '^z' "unlike"
skip "no such feature"
ok false
is x y "mismatch"
cleanup_add touch "$TEST_TMPDIR/cleanup-ran"
cleanup_add rm -f "$TEST_TMPDIR/cleanup-ran"
done_testing
CHILD
out=$(bash "$child" 2>"$TEST_TMPDIR/child.err"); rc=$?
is "$rc" 1 "done_testing exits 1 when a test failed"
is "$(grep -c '^ok ' <<<"$out")" 6 "six ok lines (one skip)"
is "$(grep -c '^not ok ' <<<"$out")" 2 "two not ok lines"
# meson shows a failed test's stderr (and CI keeps it): the failures and their diagnostics are there too.
is "$(grep -c '^not ok ' "$TEST_TMPDIR/child.err")" 2 "the two not ok lines also on stderr"
like "$(cat "$TEST_TMPDIR/child.err")" "#   got: 'x'" "... with their diagnostics"
unlike "$(cat "$TEST_TMPDIR/child.err")" '^ok ' "... and no passing test there"
like "$out" $'\n1\\.\\.8(\n|$)' "plan 1..8 printed at the end"
like "$out" 'ok 2 - desc \\# with hash' "# in a description is escaped"
like "$out" 'ok 6 # SKIP no such feature' "skip is a TAP SKIP"
like "$out" "#   got: 'x'"$'\n'"#   expected: 'y'" "is prints got/expected as # lines"
like "$out" '#   command: false' "ok prints the failing command"
ok_desc "cleanups run last-in first-out" test -e "$TEST_TMPDIR/cleanup-ran"

out=$(printf '. %q\nok true\ndone_testing\n' "$SDRUN_SRCDIR/tests/integration/lib.sh" | bash 2>&1); rc=$?
is "$rc" 0 "done_testing exits 0 when all passed"
out=$(printf '. %q\nok true\n' "$SDRUN_SRCDIR/tests/integration/lib.sh" | bash 2>&1); rc=$?
isnt_zero() { [ "$1" != 0 ]; }
ok_desc "a script that ends without done_testing fails" isnt_zero "$rc"
like "$out" 'Bail out!' "... and says so"
out=$(printf '. %q\nplan 2\nok true\ndone_testing\n' "$SDRUN_SRCDIR/tests/integration/lib.sh" | bash 2>&1); rc=$?
ok_desc "a plan mismatch fails" isnt_zero "$rc"

# ci_lane: in CI, a layout-independent test runs in its lane only (skipped whole elsewhere); outside CI, everywhere
ci_script=$(printf '. %q\nci_lane hybrid\nok true\ndone_testing\n' "$SDRUN_SRCDIR/tests/integration/lib.sh")
ci_run() { env "$@" bash <<<"$ci_script" >"$TEST_TMPDIR/ci.out" 2>&1; rc=$?; out=$(grep -v '^# layout=' "$TEST_TMPDIR/ci.out"); }
ci_run CI=true SDRUN_TEST_LAYOUT=unified
is "$rc|$out" "0|1..0 # SKIP layout-independent: in CI it runs in the hybrid box lane only" \
        "ci_lane hybrid in CI's unified lane: the whole test is a TAP skip"
ci_run CI=true SDRUN_TEST_LAYOUT=hybrid
is "$rc|$out" $'0|ok 1 - true\n1..1' "ci_lane hybrid in CI's hybrid lane: it runs"
for env in "CI= SDRUN_TEST_LAYOUT=unified" "CI=true SDRUN_TEST_LAYOUT=vm"; do
        ci_run $env
        is "$rc|$out" $'0|ok 1 - true\n1..1' "ci_lane hybrid with $env: it runs"
done

# --- ids ---
a=$(new_id); b=$(new_id); c=$(new_id x)
ok_desc "new_id gives distinct ids" test "$a" != "$b"
like "$a|$b" '^sdt-[0-9]+-001-[0-9a-f]{4}\|sdt-[0-9]+-002-' "new_id counts up, also in \$(...)"
like "$c" '^x-[0-9]+-[0-9]{3}-[0-9a-f]{4}$' "new_id PREFIX"
is "$(unit_of "$a")" "sdrun-$a.scope" "unit_of"
like "$SDRUN_TEST_LAYOUT" '^(hybrid|unified|vm)$' "layout is known: $SDRUN_TEST_LAYOUT"

# --- bundles ---
B=$TEST_TMPDIR/bundle
ok make_bundle "$B"
ok_desc "config.json is valid JSON with args [\"true\"]" jq -e '.process.args == ["true"] and .process.terminal == false and .root.path == "rootfs"' "$B/config.json"
ok_desc "busybox rootfs runs sh" chroot "$B/rootfs" /bin/sh -c 'echo ok'
is "$(chroot "$B/rootfs" /bin/sh -c 'echo ok')" ok "chroot sh prints ok"
is "$(chroot "$B/rootfs" /bin/id -u user 2>&1)" 1000 "user 1000 exists in the rootfs"
ok_desc "every applet is a symlink to busybox" test "$(readlink "$B/rootfs/bin/ls")" = busybox
ok bundle_set "$B" '.process.args=["echo","hi"]'
is "$(jq -c .process.args "$B/config.json")" '["echo","hi"]' "bundle_set edits in place"
ok bundle_set "$B" '.hostname=$h' --arg h box
is "$(jq -r .hostname "$B/config.json")" box "bundle_set passes jq arguments"
bundle_set "$B" '.[' 2>/dev/null; rc=$?
ok_desc "bundle_set fails on a bad expression" isnt_zero "$rc"
ok_desc "... and leaves config.json intact" jq -e '.hostname == "box"' "$B/config.json"
B2=$TEST_TMPDIR/bundle2
ok make_bundle "$B2"
ok_desc "a second bundle is independent" jq -e '.process.args == ["true"]' "$B2/config.json"

# --- wait_for ---
( sleep 0.3; touch "$TEST_TMPDIR/flag" ) &
ok wait_for test -e "$TEST_TMPDIR/flag"
WAIT_FOR_TIMEOUT=1
start=$SECONDS
wait_for false; rc=$?
unset WAIT_FOR_TIMEOUT
ok_desc "wait_for gives up (after $((SECONDS - start)) s)" isnt_zero "$rc"

# --- the booted systemd ---
is "$(unit_prop systemd-journald.service ActiveState)" active "unit_prop of an existing unit"
is "$(unit_prop -.slice Id)" -.slice "unit_prop of the root slice"
unit=sdrun-harness-$$-$RANDOM.scope
cleanup_add systemctl stop "$unit"
systemd-run --quiet --scope --unit="$unit" --collect -p TasksMax=50 sleep 300 >/dev/null 2>&1 &
scope_job=$!
scope_active() { [ "$(unit_prop "$unit" ActiveState)" = active ]; }
scope_gone() { [ -z "$(systemctl list-units --all --plain --no-legend -- "$unit")" ]; }
ok_desc "transient scope is active" wait_for scope_active
dir=$(cgroup_dir "$unit")
like "$dir" "^/sys/fs/cgroup/.*/$unit$" "cgroup_dir of the scope"
pid=$(head -1 "$dir/cgroup.procs" 2>/dev/null)
ok_desc "the scope's cgroup holds sleep" test "$(cat "/proc/$pid/comm" 2>/dev/null)" = sleep
like "$(cat "/proc/$pid/cgroup")" "$unit" "/proc/PID/cgroup names the scope"
if [ "$SDRUN_TEST_LAYOUT" = hybrid ]; then
        pids_dir=$(cgroup_v1_dir "$unit" pids)
        is "$(cat "$pids_dir/pids.max" 2>/dev/null)" 50 "TasksMax=50 reaches the v1 pids controller"
fi
ok systemctl stop "$unit"
wait "$scope_job" 2>/dev/null
ok_desc "the scope is gone" wait_for scope_gone
ok_desc "its process is gone" test ! -e "/proc/$pid"

# --- no_leftovers on an id that was never used ---
no_leftovers "$(new_id)"

done_testing
