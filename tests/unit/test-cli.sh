#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The CLI's conventions that callers (conmon, Podman, scripts) rely on, without root or a bus: exit codes of
# bad invocations, --version, and the log formats (--log-format json: one JSON object per line with level,
# msg and time, on stderr without --log and in the file with it; text: logfmt lines in the file, and on stderr
# with --debug).
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

# libsystemd is dlopen()ed, so ldd does not show it: --version names the file it loads, the newest
# LIBSYSTEMD_NNN symbol version that file defines and, from its ELF package note, the package's version.
# Each is checked against what binutils read from the file itself.
libsd_line=$(grep '^libsystemd: ' "$tmp/v")
libsd_re='^libsystemd: ([^ ]+) \(LIBSYSTEMD_([0-9]+), (/[^)]+)\)$'
desc="--version: a libsystemd line \"VERSION (LIBSYSTEMD_N, FILE)\": $libsd_line"; t eval '[[ $libsd_line =~ $libsd_re ]]'
libsd_version=${BASH_REMATCH[1]:-} libsd_interface=${BASH_REMATCH[2]:-} libsd_path=${BASH_REMATCH[3]:-}
libsd_expect=$(python3 -c 'import ctypes, os
ctypes.CDLL("libsystemd.so.0")
print(next(os.path.realpath(l.split()[-1]) for l in open("/proc/self/maps") if "/libsystemd.so" in l))' 2>/dev/null)
desc="--version: the libsystemd file is the one the dynamic loader finds ($libsd_expect)"
t test -n "$libsd_expect" -a "$libsd_path" = "$libsd_expect"
desc="--version: the interface is the newest LIBSYSTEMD_ version node of the file (>= 252)"
t test "$libsd_interface" = "$(LC_ALL=C readelf -V --wide "$libsd_path" 2>/dev/null |
        sed -n '/^Version definition section/,/^Version needs section/s/.*Name: LIBSYSTEMD_\([0-9]*\).*/\1/p' | sort -n | tail -n 1)" -a "${libsd_interface:-0}" -ge 252
libsd_note=$(LC_ALL=C readelf -n "$libsd_path" 2>/dev/null | sed -n 's/.*Packaging Metadata: //p' |
        python3 -c 'import json, sys; print(json.loads(sys.stdin.read()).get("version", ""))' 2>/dev/null)
desc="--version: the libsystemd version is its package note's (${libsd_note:-none}), else the interface"
t test "$libsd_version" = "${libsd_note:-$libsd_interface}"
desc="--version: without a loadable libsystemd, \"libsystemd: not available\" and the reason"
mkdir -p "$tmp/nolib"; : >"$tmp/nolib/libsystemd.so.0"
LD_LIBRARY_PATH="$tmp/nolib" "$S" --version >"$tmp/v2"
t grep -qE '^libsystemd: not available \(cannot load libsystemd.so.0 .*\)$' "$tmp/v2"
# The build options: meson passes the real values of this build in (tests/unit/meson.build).
has_build_options() {
        local o
        for o in $SDRUN_EXPECT_BUILD; do
                grep -qE "^build options: (.* )?$o( |\$)" "$tmp/v" || return 1
        done
}
desc="--version: build options name this build's ($SDRUN_EXPECT_BUILD)"; t has_build_options
# A state written by a newer sdrun in a newer state format: refused by every verb, naming both releases.
mkdir -p -m 700 "$tmp/root-new/x"; : >"$tmp/root-new/x/lock"
echo '{"ociVersion":"1.3.0","id":"x","status":"running","pid":1,"bundle":"/b","sdrun":{"pidStartTime":"5","stateFormat":2,"version":"99.0.0"}}' >"$tmp/root-new/x/state.json"
chmod 600 "$tmp/root-new/x/lock" "$tmp/root-new/x/state.json"
newer_msg='state of container "x" was written by sdrun 99.0.0 in state format 2; this is sdrun [0-9.]+, which reads state formats up to 1: manage the container with sdrun 99.0.0 or newer'
for v in state "delete --force" "kill"; do
        desc="$v of a newer release's state: exit 1, names both releases"; rc=0
        # shellcheck disable=SC2086
        "$S" --root "$tmp/root-new" $v x 2>"$tmp/e" || rc=$?
        t eval 'test "$rc" = 1 && grep -qE "$newer_msg" "$tmp/e"'
done
desc="delete --force left the newer release's state alone"; t test -f "$tmp/root-new/x/state.json"
desc="list warns about a newer release's state"; "$S" --root "$tmp/root-new" list >/dev/null 2>"$tmp/e"
t grep -qE "list: $newer_msg" "$tmp/e"
desc="state of a missing container exits 1"; rc=0; "$S" "${R[@]}" state nope 2>"$tmp/e" || rc=$?; t test "$rc" = 1
desc="delete --force of a missing container succeeds (runc)"; rc=0; "$S" "${R[@]}" delete --force nope || rc=$?; t test "$rc" = 0
desc="invalid container id is refused"; rc=0; "$S" "${R[@]}" state ../x 2>"$tmp/e" || rc=$?; t test "$rc" = 1
# libsystemd is called only through src/sdunit's sym_ pointers (libsystemd-dl.h): sdrun neither defines its
# functions nor needs them from a linked library, so nothing can go around the loader.
desc="sdrun has a symbol table (for the next check)"; t bash -c 'nm "$1" | grep -q " T main$"' _ "$S"
desc="sdrun defines and needs no sd_bus_* function"; t bash -c '! nm "$1" | grep -E " [TtWwUu] sd_bus_"' _ "$S"

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
# The text format is logfmt as runc's logrus writes it: quotes in msg escaped, so that the line parses.
desc="--log FILE (text): time, level and a quoted msg with its quotes escaped"
"$S" --log "$tmp/log.txt" "${R[@]}" start nope 2>/dev/null || true
t grep -qE '^time="[0-9T:.-]+Z" level=error msg=".*container \\"nope\\" does not exist"$' "$tmp/log.txt"
# --debug without --log: the terminal lines are log lines too (runc's debug.bats looks for level=debug).
desc="--debug: stderr lines are text log lines with their level"
"$S" --debug "${R[@]}" state nope 2>"$tmp/d" || true
t grep -qE '^time="[^"]+" level=error msg="' "$tmp/d"
desc="without --debug: stderr keeps its plain lines"
"$S" "${R[@]}" state nope 2>"$tmp/d" || true
t grep -qE '^sdrun: .*container "nope" does not exist$' "$tmp/d"
desc="--cgroup-manager: an unknown manager is refused, naming it"; rc=0
"$S" --cgroup-manager bogus list 2>"$tmp/e" || rc=$?
t grep -qF -- '--cgroup-manager: unknown manager "bogus"' "$tmp/e"
desc="--cgroup-manager: an unknown manager exits 1"; t test "$rc" = 1
desc="--cgroup-manager disabled: a warning, not silence"; "$S" --cgroup-manager disabled "${R[@]}" list >/dev/null 2>"$tmp/e"
t grep -q 'cgroup-manager=disabled: ignored' "$tmp/e"
desc="--keep-unit is a global option (the template's): accepted before the verb"; rc=0
"$S" --keep-unit "${R[@]}" list >/dev/null 2>"$tmp/e" || rc=$?; t test "$rc" = 0
desc="--help lists --keep-unit"; t sh -c "'$S' --help | grep -q -- '--keep-unit'"
# Options after the id, as runc takes them (its update.bats: `runc update ID --cpuset-cpus 1`); not for exec
desc="options may follow the id: delete nope --force succeeds (a missing container with --force)"; rc=0
"$S" "${R[@]}" delete nope --force 2>"$tmp/e" || rc=$?; t test "$rc" = 0
desc="options may follow the id: update nope --cpu-period 5 is about the container, not the option"; rc=0
"$S" "${R[@]}" update nope --cpu-period 5 2>"$tmp/e" || rc=$?; t grep -q 'container "nope" does not exist' "$tmp/e"
desc="--log-format: unknown format refused"; rc=0; "$S" --log-format yaml list 2>/dev/null || rc=$?; t test "$rc" = 1

# Every verb's option handling (one table-driven parser since issue 14): exit codes and messages as callers see them.
rc_and_msg() { test "$1" = "$2" && grep -qF -- "$3" "$4"; }
u() {
        local want_rc=$1 want=$2; shift 2
        local rc=0
        "$S" "${R[@]}" "$@" >"$tmp/o" 2>"$tmp/e" </dev/null || rc=$?
        desc="$* exits $want_rc and says: $want"
        t rc_and_msg "$rc" "$want_rc" "$want" "$tmp/e"
}
for v in create start run exec kill delete state list ps pause resume events update spec features checkpoint restore; do
        desc="$v --help exits 0 with its usage"; rc=0; "$S" "${R[@]}" "$v" --help >"$tmp/o" 2>&1 || rc=$?
        t rc_and_msg "$rc" 0 "Usage: sdrun [GLOBAL OPTIONS] $v" "$tmp/o"
        case $v in
        spec | features) u 1 "$v: unknown option \"--bogus\"" "$v" --bogus ;;
        *) u 1 "$v: unknown or incomplete option \"--bogus\"" "$v" --bogus x ;;
        esac
done
u 1 'spec: option "--bundle" needs an argument' spec --bundle
u 1 'spec: unknown option "-x"' spec -x
u 1 'spec: --bundle: empty directory name' spec --bundle ''
u 1 'features: unexpected argument "extra"' features extra
u 1 'create: unknown option --detach' create --detach x
u 1 'create: unknown option --keep' create --keep x
u 1 'create: --preserve-fds: invalid number "-1"' create --preserve-fds -1 x
u 1 'create: missing argument: container id' create --bundle /nonexistent
u 1 'exec: --cwd: "rel" is not an absolute path' exec --cwd rel x true
u 1 'exec: --user: "a" is not UID[:GID] (numeric)' exec --user a x true
u 1 'exec: exec args cannot be empty' exec x
u 1 'checkpoint: --manage-cgroups-mode: unknown mode "x"' checkpoint --manage-cgroups-mode x c
u 1 'restore: --manage-cgroups-mode: unknown mode "x"' restore --manage-cgroups-mode x c
u 1 'checkpoint: --empty-ns: only "network" is supported, got "ipc"' checkpoint --empty-ns ipc c
u 1 'checkpoint c: container "c" does not exist' checkpoint --manage-cgroups-mode full --empty-ns network --shell-job c
u 1 'events: --interval: invalid duration "0"' events --interval 0 c
u 1 'events c: container "c" does not exist' events --stats --interval 1s c
u 1 'ps: --format: unknown format "x" (table or json)' ps --format x c
u 1 'list: unexpected argument "extra"' list -q extra
u 1 'kill: invalid signal "NOPE"' kill c NOPE
u 1 'kill c: container "c" does not exist' kill --all c KILL
u 1 'pause: unexpected argument "d"' pause c d
u 1 'update: --memory: invalid value "1x"' update --memory 1x c
u 1 'update: --pids-limit: invalid value "5k"' update --pids-limit 5k c
u 1 'update: unknown or incomplete option "--mem"' update --mem 5 c
u 1 'update: nothing to update: give --resources or a resource option' update c
u 1 'update: --resources: "-" is not a JSON object' update --resources - c
u 1 'update c: container "c" does not exist' update --memory 1k --cpuset-cpus 0 c
desc="delete --force of a missing container with -f succeeds"; rc=0; "$S" "${R[@]}" delete -f nope || rc=$?; t test "$rc" = 0

echo "1..$n"
[ $failed = 0 ]
