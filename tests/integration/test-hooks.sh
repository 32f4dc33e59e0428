#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# OCI hooks (issue 5): all six at the step and in the namespace runtime-spec v1.3.0 names, with args, env,
# timeout and the state JSON on stdin; poststart after the user process was executed and before `start`
# returns (not during create: runc's bug in seeds/000); failure and timeout semantics; hook output never
# reaching the container's stdout; no hook ever sees a pid <= 0.
. "$(dirname "$0")/lib.sh"

require_root
require_systemd
ci_lane unified

sd() { "$SDRUN" --root "$SDRUN_ROOT" "$@"; }
status_of() { sd state "$1" 2>/dev/null | jq -r .status; }
is_status() { [ "$(status_of "$1")" = "$2" ]; }
HOOK=$SDRUN_SRCDIR/tests/integration/helpers/hook-record.sh
[ -x "$HOOK" ] || bail "$HOOK missing"
SLEEP=$(command -v sleep)
FALSE=$(command -v false)
host_mntns=$(readlink /proc/self/ns/mnt)
host_pidns=$(readlink /proc/self/ns/pid)

B=$TEST_TMPDIR/b
OUT=$TEST_TMPDIR/out
make_bundle "$B" || bail "make_bundle failed"
cp "$HOOK" "$B/rootfs/hook-record.sh"   # the startContainer hook exists only inside the rootfs
mkdir -p "$B/rootfs/hookout"

# hooks_json OUTDIR: a hooks object that records every hook into OUTDIR.
hooks_json() {
        jq -n --arg h "$HOOK" --arg o "$1" --arg r "$B/rootfs/bin/busybox" '
        def hk($n; $path; $dir): { path: $path, args: [$path, $dir, $n, $r], env: ["HOOKVAR=\($n)", "PATH=/usr/bin:/bin"],
                                   timeout: 10 };
        { prestart: [hk("prestart"; $h; $o)],
          createRuntime: [hk("createRuntime"; $h; $o)],
          createContainer: [hk("createContainer"; $h; $o)],
          startContainer: [hk("startContainer"; "/hook-record.sh"; "/hookout")],
          poststart: [hk("poststart"; $h; $o)],
          poststop: [hk("poststop"; $h; $o)] }'
}
set_hooks() { # set_hooks OUTDIR
        mkdir -p "$1"
        bundle_set "$B" '.hooks=$h | .mounts += [{destination: "/hookout", type: "bind", source: $o, options: ["rbind", "rw"]}] | .mounts |= unique_by(.destination)' \
                --argjson h "$(hooks_json "$1")" --arg o "$1"
}

# ---------------------------------------------------------------------------------------------------------
# all six hooks, one container

set_hooks "$OUT"
bundle_set "$B" '.process.args=["sh","-c","echo CONTAINER-OUT; exec sleep 1000"]'
id=$(new_id hooks); track_container "$id"
ok_desc "create with all six hooks" sd create --bundle "$B" "$id"
pid=$(sd state "$id" | jq -r .pid)
ct_mntns=$(readlink /proc/"$pid"/ns/mnt)
ct_pidns=$(readlink /proc/"$pid"/ns/pid)
for h in prestart createRuntime createContainer; do
        ok_desc "$h ran during create" test -s "$OUT/$h.stdin"
done
for h in startContainer poststart poststop; do
        ok_desc "$h did not run during create" test ! -e "$OUT/$h.stdin"
done
ok_desc "start" sd start "$id"
for h in startContainer poststart; do
        ok_desc "$h ran during start" test -s "$OUT/$h.stdin"
done
ok_desc "poststop did not run yet" test ! -e "$OUT/poststop.stdin"
sd kill "$id" KILL; wait_for is_status "$id" stopped
ok_desc "delete" sd delete "$id"
ok_desc "poststop ran during delete" test -s "$OUT/poststop.stdin"
no_leftovers "$id"

declare -A want_status=([prestart]=creating [createRuntime]=creating [createContainer]=creating
        [startContainer]=created [poststart]=running [poststop]=stopped)
for h in prestart createRuntime createContainer startContainer poststart poststop; do
        f=$OUT/$h.stdin
        is "$(jq -r .status "$f")" "${want_status[$h]}" "$h: stdin state status ${want_status[$h]}"
        is "$(jq -r .id "$f")" "$id" "$h: stdin state id"
        is "$(jq -r .bundle "$f")" "$B" "$h: stdin state bundle"
        ok_desc "$h: schema-valid state on stdin" python3 "$SDRUN_SRCDIR/tests/validate-json.py" \
                "$SDRUN_SRCDIR/tests/schema/state-schema.json" "$f"
        if [ $h = poststop ]; then
                ok_desc "$h: no pid, or a positive one" jq -e '(.pid == null) or (.pid > 0)' "$f"
        else
                ok_desc "$h: a positive pid" jq -e '.pid > 0' "$f"
        fi
        like "$(cat "$OUT/$h.env")" "HOOKVAR=$h" "$h: env from the config"
        like "$(cat "$OUT/$h.args")" " $h " "$h: args from the config"
done
# runtime namespace: prestart, createRuntime, poststart, poststop
for h in prestart createRuntime poststart poststop; do
        is "$(cat "$OUT/$h.mntns")" "$host_mntns" "$h runs in the runtime mount namespace"
        is "$(cat "$OUT/$h.pidns")" "$host_pidns" "$h runs in the runtime pid namespace"
        is "$(cat "$OUT/$h.cwd")" "$B" "$h: cwd is the bundle"
done
for h in prestart createRuntime poststart; do
        is "$(jq -r .pid "$OUT/$h.stdin")" "$pid" "$h: state pid is the init's host pid"
done
# container namespace: createContainer, startContainer
for h in createContainer startContainer; do
        is "$(cat "$OUT/$h.mntns")" "$ct_mntns" "$h runs in the container's mount namespace"
        is "$(cat "$OUT/$h.pidns")" "$ct_pidns" "$h runs in the container's pid namespace"
        # In its own pid namespace the init is pid 1: that is the pid the hook can use.
        is "$(jq -r .pid "$OUT/$h.stdin")" 1 "$h: state pid is the init as the hook's pid namespace sees it"
done
is "$(cat "$OUT/createContainer.sees")" yes "createContainer runs before pivot_root (sees the rootfs at its host path)"
like "$(cat "$OUT/createContainer.args")" "^$HOOK " "createContainer: path resolved in the runtime namespace"
is "$(cat "$OUT/startContainer.sees")" no "startContainer runs after pivot_root (host path not visible)"
like "$(cat "$OUT/startContainer.args")" '^/hook-record.sh ' "startContainer: path resolved inside the container"
is "$(cat "$OUT/startContainer.cwd")" / "startContainer: cwd /"
is "$(cat "$OUT/poststart.exe" 2>&1)" /bin/busybox "poststart: the user process was already executed (/proc/PID/exe)"
# (the runtime runs from a sealed memfd copy of itself: see sealed-exec.c)
like "$(cat "$OUT/prestart.exe" 2>&1)" '^/memfd:sdrun( \(deleted\))?$' "prestart: the init has not executed yet (/proc/PID/exe is sdrun's sealed copy)"

# ---------------------------------------------------------------------------------------------------------
# run: hook output never reaches the container's stdout; order of hooks

rm -rf "$OUT"; set_hooks "$OUT"
bundle_set "$B" '.process.args=["sh","-c","echo CONTAINER-OUT"]'
id=$(new_id hooks)
track_container "$id"
rc=0; out=$(sd run --bundle "$B" "$id" 2>"$TEST_TMPDIR/run.err") || rc=$?
is "$rc" 0 "run with all six hooks"
is "$out" CONTAINER-OUT "run's stdout holds only the container's output"
unlike "$out" HOOK- "no hook stdout/stderr in the container's stdout"
order=$(paste -sd' ' "$OUT/order")
is "$order" "prestart createRuntime createContainer startContainer poststart poststop" "hooks ran in the spec's order"
no_leftovers "$id"

# ---------------------------------------------------------------------------------------------------------
# poststart timing: create is fast, start waits for the hook (seeds/000: runc ran it in create)

bundle_set "$B" '.hooks={poststart: [{path: $s, args: ["sleep", "2"]}]} | .process.args=["sleep","1000"]' --arg s "$SLEEP"
id=$(new_id poststart); track_container "$id"
t0=$(date +%s%N); sd create --bundle "$B" "$id"; t1=$(date +%s%N)
sd start "$id"; t2=$(date +%s%N)
create_ms=$(( (t1 - t0) / 1000000 )); start_ms=$(( (t2 - t1) / 1000000 ))
diag "create ${create_ms} ms, start ${start_ms} ms"
ok_desc "create with a poststart sleep 2 returns in < 1 s (${create_ms} ms)" test "$create_ms" -lt 1000
ok_desc "start waits for the poststart hook: >= 2 s (${start_ms} ms)" test "$start_ms" -ge 2000
is "$(status_of "$id")" running "running after start with poststart"
sd delete --force "$id"
no_leftovers "$id"

# ---------------------------------------------------------------------------------------------------------
# the user process fails to exec: start fails, poststart does not run

rm -rf "$OUT"; set_hooks "$OUT"
cp "$B/rootfs/bin/busybox" "$B/rootfs/bin/vanish"
bundle_set "$B" '.process.args=["/bin/vanish","sleep","1000"]'
id=$(new_id execfail); track_container "$id"
ok_desc "execfail: create" sd create --bundle "$B" "$id"
rm -f "$B/rootfs/bin/vanish"
rc=0; err=$(sd start "$id" 2>&1) || rc=$?
is "$rc" 1 "execfail: start fails when the process cannot be executed"
like "$err" 'vanish|No such file' "execfail: start says why: $err"
ok_desc "execfail: poststart did not run" test ! -e "$OUT/poststart.stdin"
ok_desc "execfail: startContainer did run (before exec)" test -e "$OUT/startContainer.stdin"
is "$(status_of "$id")" stopped "execfail: stopped"
ok_desc "execfail: delete" sd delete "$id"
ok_desc "execfail: poststop ran at delete" test -e "$OUT/poststop.stdin"
no_leftovers "$id"

# ---------------------------------------------------------------------------------------------------------
# failing hooks

bundle_set "$B" '.process.args=["sleep","1000"]'
for h in prestart createRuntime createContainer; do
        rm -rf "$OUT"; set_hooks "$OUT"
        bundle_set "$B" ".hooks.$h[0].args[4]=\"3\""
        id=$(new_id fail); track_container "$id"
        rc=0; err=$(sd create --bundle "$B" "$id" 2>&1) || rc=$?
        is "$rc" 1 "a failing $h hook makes create fail"
        like "$err" "$h hook.*exit status 3" "failing $h: the error names the hook: $err"
        like "$err" "error running $h hook #0: " "failing $h: in runc's words (runc's hooks.bats looks for them)"
        unlike "$err" "HOOK-STDOUT-$h.*HOOK-STDOUT-$h" "failing $h: the hook output appears once at most"
        ok_desc "failing $h: startContainer never ran" test ! -e "$OUT/startContainer.stdin"
        rc=0; sd state "$id" >/dev/null 2>&1 || rc=$?
        is "$rc" 1 "failing $h: no state left"
        no_leftovers "$id"
done

rm -rf "$OUT"; set_hooks "$OUT"
bundle_set "$B" '.hooks.startContainer[0].args[4]="3"'
id=$(new_id fail); track_container "$id"
ok_desc "failing startContainer: create works" sd create --bundle "$B" "$id"
pid=$(sd state "$id" | jq -r .pid)
rc=0; err=$(sd start "$id" 2>&1) || rc=$?
is "$rc" 1 "a failing startContainer hook makes start fail"
like "$err" 'startContainer hook.*exit status 3' "failing startContainer: the error names the hook: $err"
ok_desc "failing startContainer: poststart did not run" test ! -e "$OUT/poststart.stdin"
ok_desc "failing startContainer: the init is gone" wait_for sh -c "! kill -0 $pid"
is "$(status_of "$id")" stopped "failing startContainer: stopped"
ok_desc "failing startContainer: delete" sd delete "$id"
no_leftovers "$id"
id=$(new_id fail); track_container "$id"
rc=0; sd run --bundle "$B" "$id" >/dev/null 2>&1 || rc=$?
is "$rc" 1 "failing startContainer: run fails"
no_leftovers "$id"

rm -rf "$OUT"; set_hooks "$OUT"
bundle_set "$B" '.hooks.poststart[0].args[4]="3"'
id=$(new_id fail); track_container "$id"
ok_desc "failing poststart: create works" sd create --bundle "$B" "$id"
pid=$(sd state "$id" | jq -r .pid)
rc=0; err=$(sd start "$id" 2>&1) || rc=$?
is "$rc" 1 "a failing poststart hook makes start fail"
like "$err" 'poststart hook.*exit status 3' "failing poststart: start reports it: $err"
ok_desc "failing poststart: the container was stopped" wait_for sh -c "! kill -0 $pid"
ok_desc "failing poststart: state stopped" wait_for is_status "$id" stopped
ok_desc "failing poststart: delete" sd delete "$id"
ok_desc "failing poststart: poststop ran at delete" test -e "$OUT/poststop.stdin"
no_leftovers "$id"

rm -rf "$OUT"; set_hooks "$OUT"
bundle_set "$B" '.hooks.poststop[0].args[4]="3"'
id=$(new_id fail); track_container "$id"
sd run --detach --bundle "$B" "$id" >/dev/null 2>&1
rc=0; err=$(sd delete --force "$id" 2>&1) || rc=$?
is "$rc" 0 "a failing poststop hook: delete still succeeds"
like "$err" 'poststop hook.*exit status 3' "failing poststop: the failure is logged: $err"
no_leftovers "$id"

# ---------------------------------------------------------------------------------------------------------
# a hook timeout kills the hook and fails

for h in createRuntime createContainer; do
        bundle_set "$B" ".hooks={$h: [{path: \$s, args: [\"sleep\", \"5.123\"], timeout: 1}]}" --arg s "$SLEEP"
        id=$(new_id timeout); track_container "$id"
        t0=$(date +%s%N)
        rc=0; err=$(sd create --bundle "$B" "$id" 2>&1) || rc=$?
        ms=$(( ($(date +%s%N) - t0) / 1000000 ))
        is "$rc" 1 "$h timeout 1 with sleep 5: create fails"
        like "$err" "$h hook.*timed out" "$h timeout: the error says so: $err"
        ok_desc "$h timeout: failed in ~1 s (${ms} ms)" test "$ms" -ge 900 -a "$ms" -lt 3000
        ok_desc "$h timeout: the hook was killed (no sleep 5.123 left)" sh -c "! pgrep -f '^[^ ]*sleep 5[.]123\$'"
        no_leftovers "$id"
done
bundle_set "$B" '.hooks={poststart: [{path: $s, args: ["sleep", "5.123"], timeout: 1}]}' --arg s "$SLEEP"
id=$(new_id timeout); track_container "$id"
sd create --bundle "$B" "$id" >/dev/null 2>&1
t0=$(date +%s%N)
rc=0; err=$(sd start "$id" 2>&1) || rc=$?
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
is "$rc" 1 "poststart timeout: start fails"
like "$err" 'poststart hook.*timed out' "poststart timeout: $err"
ok_desc "poststart timeout: failed in ~1 s (${ms} ms)" test "$ms" -ge 900 -a "$ms" -lt 3000
ok_desc "poststart timeout: container stopped" wait_for is_status "$id" stopped
sd delete "$id" >/dev/null 2>&1
no_leftovers "$id"

# a hook that is not executable
bundle_set "$B" '.hooks={createRuntime: [{path: "/nonexistent/hook"}]}'
id=$(new_id nohook); track_container "$id"
rc=0; err=$(sd create --bundle "$B" "$id" 2>&1) || rc=$?
is "$rc" 1 "a missing hook binary makes create fail"
like "$err" 'createRuntime hook.*/nonexistent/hook' "missing hook binary: $err"
no_leftovers "$id"

# 256 KiB of annotations (Kubernetes' limit) in the state a createContainer hook reads: more than a
# SOCK_SEQPACKET message between the runtime and the init can carry whole (212992 bytes by default)
bundle_set "$B" '.annotations = ([range(0; 256)] | map({key: "io.test.big\(.)", value: ("x" * 1024)}) | from_entries)
        | .hooks = {createContainer: [{path: "/bin/sh", args: ["sh", "-c", "wc -c >\($o)"]}]}' --arg o "$OUT/big.size"
id=$(new_id bigstate); track_container "$id"
rm -f "$OUT/big.size"
# (output through a file: the init inherits create's stdio and would hold a pipe open)
# (bounded: a runtime that cannot pass the state on must fail, not wait)
rc=0; timeout -k 5 120 "$SDRUN" --root "$SDRUN_ROOT" create --bundle "$B" "$id" >"$OUT/big.create" 2>&1 || rc=$?
is "$rc" 0 "create with 256 KiB of annotations and a createContainer hook: $(tail -n 3 "$OUT/big.create")"
ok_desc "the hook read the whole state ($(cat "$OUT/big.size" 2>/dev/null) bytes)" test "$(cat "$OUT/big.size" 2>/dev/null || echo 0)" -gt 262144
sd delete --force "$id" >/dev/null 2>&1
no_leftovers "$id"
# 1.2 MiB of annotations: more than the runtime passes to its init; create fails at once and says why
bundle_set "$B" '.annotations = ([range(0; 1200)] | map({key: "io.test.big\(.)", value: ("x" * 1024)}) | from_entries)'
id=$(new_id hugestate); track_container "$id"
rc=0; timeout -k 5 120 "$SDRUN" --root "$SDRUN_ROOT" create --bundle "$B" "$id" >"$OUT/huge.create" 2>&1 || rc=$?
is "$rc" 1 "create with 1.2 MiB of annotations and a createContainer hook fails (exit 1, not a hang)"
like "$(cat "$OUT/huge.create")" "more than the 1 MiB" "... and says why: $(tail -n 1 "$OUT/huge.create" | cut -c1-200)"
no_leftovers "$id"
# the same without a createContainer hook: the init needs no state then, and create works (as runc's)
bundle_set "$B" 'del(.hooks.createContainer)'
id=$(new_id hugenohook); track_container "$id"
rc=0; timeout -k 5 120 "$SDRUN" --root "$SDRUN_ROOT" create --bundle "$B" "$id" >"$OUT/huge2.create" 2>&1 || rc=$?
is "$rc" 0 "create with 1.2 MiB of annotations and no createContainer hook works: $(tail -n 1 "$OUT/huge2.create" | cut -c1-200)"
sd delete --force "$id" >/dev/null 2>&1
no_leftovers "$id"

ok_desc "features lists the hooks" sh -c "'$SDRUN' features | jq -e '.hooks | index(\"prestart\") and index(\"createRuntime\") and index(\"createContainer\") and index(\"startContainer\") and index(\"poststart\") and index(\"poststop\")'"

done_testing
