# SPDX-License-Identifier: LGPL-2.1-or-later
# shellcheck shell=bash
#
# Shared helpers for the integration tests (tests/integration/test-*.sh). Source it first:
#
#     . "$(dirname "$0")/lib.sh"
#     require_root; require_systemd
#     B=$TEST_TMPDIR/b; make_bundle "$B"; bundle_set "$B" '.process.args=["echo","hi"]'
#     id=$(new_id); track_container "$id"
#     ok_desc "run prints hi" sh -c "$SDRUN run --bundle $B $id | grep -qx hi"
#     no_leftovers "$id"
#     done_testing
#
# Environment in: SDRUN (the binary), SDRUN_SRCDIR, SDRUN_BUILDDIR (set by meson test), SDRUN_TEST_LAYOUT
# (hybrid | unified | vm; detected from /sys/fs/cgroup when unset), SDRUN_ROOT (state dir, default /run/sdrun).
# Out: TEST_TMPDIR, a private directory removed on exit.
#
# Output is TAP on stdout: a test must send nothing else there (use diag, or >&2). Do not set your own
# EXIT trap: register cleanups with cleanup_add (run last-in first-out on exit, also after bail or a signal).

# ---------------------------------------------------------------------------------------------------------
# Environment

_lib_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
: "${SDRUN_SRCDIR:=$(cd "$_lib_dir/../.." && pwd -P)}"
: "${SDRUN_BUILDDIR:=$SDRUN_SRCDIR/build}"
: "${SDRUN:=$SDRUN_BUILDDIR/src/cli/sdrun}"
case "$SDRUN" in */*) [ "${SDRUN#/}" != "$SDRUN" ] || SDRUN=$(pwd -P)/$SDRUN ;; esac
: "${SDRUN_ROOT:=/run/sdrun}"
if [ -z "${SDRUN_TEST_LAYOUT:-}" ]; then
        if [ "$(stat -fc %T /sys/fs/cgroup 2>/dev/null)" = cgroup2fs ]; then
                SDRUN_TEST_LAYOUT=unified
        elif [ -d /sys/fs/cgroup/unified ] || [ -d /sys/fs/cgroup/systemd ]; then
                SDRUN_TEST_LAYOUT=hybrid
        else
                SDRUN_TEST_LAYOUT=unknown
        fi
fi
export SDRUN SDRUN_SRCDIR SDRUN_BUILDDIR SDRUN_ROOT SDRUN_TEST_LAYOUT
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin${PATH:+:$PATH}

TEST_TMPDIR=$(mktemp -d "${TMPDIR:-/tmp}/sdrun-test.XXXXXX") || { echo "Bail out! mktemp failed"; exit 1; }
export TEST_TMPDIR

# ---------------------------------------------------------------------------------------------------------
# TAP

_tap_n=0          # tests run
_tap_failed=0
_tap_skipped=0
_tap_planned=""   # set by plan
_tap_done=0

# Descriptions must not start a TAP directive: escape '#', keep one line.
_tap_escape() {
        local s=${1//$'\n'/ }
        printf '%s' "${s//#/\\#}"
}

_tap_diag_stream() {
        # prefix every line of stdin with "# "
        local line
        while IFS= read -r line || [ -n "$line" ]; do
                printf '#   %s\n' "$line"
                [ "${_tap_last_failed:-0}" = 0 ] || printf '#   %s\n' "$line" >&2
        done
}

plan() {
        _tap_planned=$1
        echo "1..$1"
}

# A failure and the diag lines after it also go to stderr: meson shows a failed test's stderr, and that is
# what a CI log keeps.
_tap_last_failed=0
_tap_result() {   # _tap_result PASSED(0|1) DESC
        _tap_n=$((_tap_n + 1))
        if [ "$1" = 0 ]; then
                _tap_last_failed=0
                echo "ok $_tap_n - $(_tap_escape "$2")"
        else
                _tap_last_failed=1
                _tap_failed=$((_tap_failed + 1))
                echo "not ok $_tap_n - $(_tap_escape "$2")"
                echo "not ok $_tap_n - $(_tap_escape "$2")" >&2
        fi
}

# ok_desc "desc" CMD...: run CMD (in this shell: functions work); pass if it exits 0. Its output is
# shown as # lines only when it fails.
ok_desc() {
        local desc=$1 out rc=0
        shift
        out=$TEST_TMPDIR/.ok-out
        "$@" >"$out" 2>&1 </dev/null || rc=$?
        if [ $rc = 0 ]; then
                _tap_result 0 "$desc"
        else
                _tap_result 1 "$desc"
                echo "#   command: $*"
                echo "#   exit status: $rc"
                [ -s "$out" ] && tail -n 40 "$out" | _tap_diag_stream
        fi
        rm -f "$out"
        return $rc
}

# ok CMD...: like ok_desc, with the command line as the description.
ok() {
        ok_desc "$*" "$@"
}

# is GOT EXPECTED DESC
is() {
        if [ "$1" = "$2" ]; then
                _tap_result 0 "${3:-}"
        else
                _tap_result 1 "${3:-}"
                printf '%s\n' "got: '$1'" | _tap_diag_stream
                printf '%s\n' "expected: '$2'" | _tap_diag_stream
                return 1
        fi
}

# like GOT REGEX DESC (bash extended regex, unanchored)
like() {
        if [[ "$1" =~ $2 ]]; then
                _tap_result 0 "${3:-}"
        else
                _tap_result 1 "${3:-}"
                printf '%s\n' "got: '$1'" | _tap_diag_stream
                printf '%s\n' "expected to match: /$2/" | _tap_diag_stream
                return 1
        fi
}

# unlike GOT REGEX DESC
unlike() {
        if [[ "$1" =~ $2 ]]; then
                _tap_result 1 "${3:-}"
                printf '%s\n' "got: '$1'" | _tap_diag_stream
                printf '%s\n' "expected not to match: /$2/" | _tap_diag_stream
                return 1
        else
                _tap_result 0 "${3:-}"
        fi
}

# pass DESC / fail DESC: one result decided by the caller (results read from another suite's output).
pass() {
        _tap_result 0 "$1"
}
fail() {
        _tap_result 1 "$1"
}

# bats_judge SUITE OWNER FILE OUT RETRY NOISE: the TAP output OUT of FILE, a bats file of another project's
# suite (runc's, Podman's), each of its tests one test here, named "SUITE FILE: NAME". A pass passes; a test
# its own file skipped is skipped with the reason ("skipped by OWNER test"); a failure listed in the caller's
# associative arrays known[FILE:NAME] (sdrun differs on purpose) or environment[FILE:NAME] /
# environment[FILE] (the machine, whatever the runtime) is skipped with that reason; any other failure is run
# again on its own with the caller's function RETRY FILE NAME (its output in $TEST_TMPDIR/retry) and passes
# only if it passes then: some of those tests race their own processes under load, and failing twice is a
# failure. NOISE: an extended regex of the report lines left out of the diagnostics. BATS_RAN is 1 when OUT
# had a result line.
bats_judge() {
        local suite=$1 owner=$2 f=$3 out=$4 retry=$5 noise=$6 line name="" failed=0 report="" n
        BATS_RAN=0
        _bats_flush() {
                [ -n "$name" ] || return 0
                if [ "$failed" = 0 ]; then
                        pass "$suite $f: $name"
                elif [ -n "${known[$f:$name]:-}" ]; then
                        skip "$suite $f: $name: differs on purpose: ${known[$f:$name]}"
                elif [ -n "${environment[$f:$name]:-${environment[$f]:-}}" ]; then
                        skip "$suite $f: $name: not on this machine: ${environment[$f:$name]:-${environment[$f]}}"
                elif "$retry" "$f" "$name"; then
                        pass "$suite $f: $name (failed once, passed when run again alone)"
                        diag "$suite $f: $name: the first run failed: $(grep -E 'FAIL|failed|expected|actual|status=' <<<"$report" | head -5)"
                else
                        fail "$suite $f: $name"
                        diag "$(grep -Ev "$noise" <<<"$report" | tail -40)"
                        diag "run again alone: $(grep -Ev "$noise" "$TEST_TMPDIR/retry" | tail -25)"
                fi
                name=""
        }
        # A result line, then its comment lines ("# ..."): the failure's report, kept for the diagnostics.
        while IFS= read -r line; do
                case $line in
                "ok "*" # skip"* | "ok "*" # SKIP"*)
                        _bats_flush; BATS_RAN=1
                        n=${line#ok * }; skip "$suite $f: ${n% # [sS][kK][iI][pP]*} (skipped by $owner test:${n#* # [sS][kK][iI][pP]})" ;;
                "ok "*) _bats_flush; BATS_RAN=1; name=${line#ok * }; failed=0; report="" ;;
                "not ok "*) _bats_flush; BATS_RAN=1; name=${line#not ok * }; failed=1; report="" ;;
                "#"*) [ -n "$name" ] && report+="$line"$'\n' ;;
                esac
        done <"$out"
        _bats_flush
}

# skip "reason": one skipped test. Only for a kernel feature that is truly missing.
skip() {
        _tap_n=$((_tap_n + 1))
        _tap_skipped=$((_tap_skipped + 1))
        _tap_last_failed=0
        echo "ok $_tap_n # SKIP $(_tap_escape "$1")"
}

# ci_lane LAYOUT [WHAT]: for a test whose subject does not depend on the cgroup layout (no cgroup, unit
# property or freezer is checked), or a control run (WHAT "a control run"). In CI ($CI set) the hybrid and the
# unified box lanes share such tests: each runs in its LAYOUT lane only and is skipped whole in the other, so
# that every CI run still runs it once. Outside CI, and in the VM, it runs in every layout.
ci_lane() {
        [ -n "${CI:-}" ] || return 0
        case "$SDRUN_TEST_LAYOUT" in hybrid | unified) ;; *) return 0 ;; esac
        [ "$SDRUN_TEST_LAYOUT" = "$1" ] && return 0
        _tap_done=1
        echo "1..0 # SKIP ${2:-layout-independent}: in CI it runs in the $1 box lane only"
        exit 0
}

diag() {
        local line
        while IFS= read -r line; do
                echo "# $line"
                [ "$_tap_last_failed" = 0 ] || echo "# $line" >&2
        done <<<"$*"
}

# bail "msg": abort the whole test (counts as a failure); cleanups still run.
bail() {
        echo "Bail out! $(_tap_escape "$*")"
        _tap_done=1
        exit 1
}

# done_testing: print the plan (unless plan was called), exit 1 if anything failed.
done_testing() {
        _tap_done=1
        if [ -z "$_tap_planned" ]; then
                echo "1..$_tap_n"
        elif [ "$_tap_planned" != "$_tap_n" ]; then
                diag "planned $_tap_planned tests but ran $_tap_n"
                exit 1
        fi
        [ "$_tap_failed" = 0 ] || { diag "$_tap_failed of $_tap_n tests failed"; exit 1; }
        exit 0
}

# ---------------------------------------------------------------------------------------------------------
# Cleanup

_cleanups=()

# cleanup_add CMD...: run CMD on exit (last registered runs first). Errors are ignored.
cleanup_add() {
        local q
        printf -v q '%q ' "$@"
        _cleanups+=("$q")
}

_lib_on_exit() {
        local rc=$? i
        set +e
        trap - EXIT INT TERM HUP
        for ((i = ${#_cleanups[@]} - 1; i >= 0; i--)); do
                eval "${_cleanups[i]}" >/dev/null 2>&1 </dev/null
        done
        [ -n "${TEST_TMPDIR:-}" ] && rm -rf --one-file-system "$TEST_TMPDIR"
        if [ "$_tap_done" = 0 ]; then
                echo "# test script exited ($rc) without done_testing"
                echo "Bail out! script ended early"
                [ "$rc" = 0 ] && rc=1
        fi
        exit "$rc"
}
trap _lib_on_exit EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP

# sdrun_cleanup ID: force-delete a container, ignoring errors.
sdrun_cleanup() {
        "$SDRUN" --root "$SDRUN_ROOT" delete --force "$1" >/dev/null 2>&1 || true
}

# track_container ID: force-delete ID on exit.
track_container() {
        cleanup_add sdrun_cleanup "$1"
}

# ---------------------------------------------------------------------------------------------------------
# Prerequisites: a missing one fails the test (an integration test never skips silently).

require_root() {
        [ "$(id -u)" = 0 ] || bail "this test needs root (uid is $(id -u))"
}

require_systemd() {
        [ -d /run/systemd/system ] || bail "no booted systemd: /run/systemd/system is missing (scripts/test boots one)"
        local comm
        comm=$(cat /proc/1/comm 2>/dev/null)
        [ "$comm" = systemd ] || bail "PID 1 is \"$comm\", not systemd"
        busctl --system call org.freedesktop.DBus /org/freedesktop/DBus org.freedesktop.DBus GetId \
                >/dev/null 2>&1 || bail "the system bus does not answer (busctl call org.freedesktop.DBus GetId failed)"
        systemctl show -p Version --value >/dev/null 2>&1 || bail "systemctl cannot talk to PID 1"
}

# ---------------------------------------------------------------------------------------------------------
# Ids, bundles

# new_id [PREFIX]: a unique container id (fixed width, so no id is a prefix of another). The counter
# lives in a file, since new_id is mostly called as $(new_id), in a subshell.
new_id() {
        local n=0
        [ -s "$TEST_TMPDIR/.id-seq" ] && n=$(<"$TEST_TMPDIR/.id-seq")
        n=$((n + 1))
        echo "$n" >"$TEST_TMPDIR/.id-seq"
        printf '%s-%d-%03d-%04x\n' "${1:-sdt}" "$$" "$n" "$((RANDOM))"
}

_rootfs_template=""

_make_rootfs_template() {
        local t=$TEST_TMPDIR/.rootfs-template bb a
        bb=$(command -v busybox) || bail "busybox is not installed (Debian package busybox-static)"
        # A dynamically linked busybox would not run in the container.
        if LC_ALL=C ldd "$bb" >/dev/null 2>&1; then
                bail "$bb is dynamically linked: install busybox-static"
        fi
        mkdir -p "$t"/{bin,sbin,etc,proc,sys,dev,tmp,root,home/user,usr/bin,usr/sbin,var/tmp,run} || return 1
        chmod 1777 "$t/tmp" "$t/var/tmp"
        chmod 700 "$t/root"
        chown 1000:1000 "$t/home/user"
        cp "$bb" "$t/bin/busybox" || return 1
        busybox_links "$t/bin" "$bb" || return 1
        cat >"$t/etc/passwd" <<'EOF'
root:x:0:0:root:/root:/bin/sh
user:x:1000:1000:user:/home/user:/bin/sh
nobody:x:65534:65534:nobody:/nonexistent:/bin/false
EOF
        cat >"$t/etc/group" <<'EOF'
root:x:0:
user:x:1000:
nogroup:x:65534:
EOF
        echo sdrun-test >"$t/etc/hostname"
        : >"$t/etc/resolv.conf"
        _rootfs_template=$t
}

# The runtime-spec defaults (what `runc spec` writes), for tests: terminal false, args ["true"].
_default_config() {
        cat <<'EOF'
{
  "ociVersion": "1.3.0",
  "process": {
    "terminal": false,
    "user": { "uid": 0, "gid": 0 },
    "args": [ "true" ],
    "env": [ "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "TERM=xterm" ],
    "cwd": "/",
    "capabilities": {
      "bounding": [ "CAP_AUDIT_WRITE", "CAP_KILL", "CAP_NET_BIND_SERVICE" ],
      "effective": [ "CAP_AUDIT_WRITE", "CAP_KILL", "CAP_NET_BIND_SERVICE" ],
      "permitted": [ "CAP_AUDIT_WRITE", "CAP_KILL", "CAP_NET_BIND_SERVICE" ]
    },
    "rlimits": [ { "type": "RLIMIT_NOFILE", "hard": 1024, "soft": 1024 } ],
    "noNewPrivileges": true
  },
  "root": { "path": "rootfs", "readonly": true },
  "hostname": "sdrun",
  "mounts": [
    { "destination": "/proc", "type": "proc", "source": "proc" },
    { "destination": "/dev", "type": "tmpfs", "source": "tmpfs",
      "options": [ "nosuid", "strictatime", "mode=755", "size=65536k" ] },
    { "destination": "/dev/pts", "type": "devpts", "source": "devpts",
      "options": [ "nosuid", "noexec", "newinstance", "ptmxmode=0666", "mode=0620", "gid=5" ] },
    { "destination": "/dev/shm", "type": "tmpfs", "source": "shm",
      "options": [ "nosuid", "noexec", "nodev", "mode=1777", "size=65536k" ] },
    { "destination": "/dev/mqueue", "type": "mqueue", "source": "mqueue",
      "options": [ "nosuid", "noexec", "nodev" ] },
    { "destination": "/sys", "type": "sysfs", "source": "sysfs",
      "options": [ "nosuid", "noexec", "nodev", "ro" ] },
    { "destination": "/sys/fs/cgroup", "type": "cgroup", "source": "cgroup",
      "options": [ "nosuid", "noexec", "nodev", "relatime", "ro" ] }
  ],
  "linux": {
    "resources": { "devices": [ { "allow": false, "access": "rwm" } ] },
    "namespaces": [
      { "type": "pid" }, { "type": "network" }, { "type": "ipc" },
      { "type": "uts" }, { "type": "mount" }, { "type": "cgroup" }
    ],
    "maskedPaths": [
      "/proc/acpi", "/proc/asound", "/proc/kcore", "/proc/keys", "/proc/latency_stats",
      "/proc/timer_list", "/proc/timer_stats", "/proc/sched_debug", "/sys/firmware", "/proc/scsi"
    ],
    "readonlyPaths": [ "/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys", "/proc/sysrq-trigger" ]
  }
}
EOF
}

# make_bundle DIR: DIR/rootfs (busybox) and DIR/config.json (`sdrun spec`, else the built-in defaults),
# with process.terminal=false and process.args=["true"].
make_bundle() {
        local dir=${1:?make_bundle: DIR missing}
        [ -n "$_rootfs_template" ] || _make_rootfs_template || bail "make_bundle: cannot build the rootfs template"
        mkdir -p "$dir" || return 1
        rm -rf "$dir/rootfs" "$dir/config.json"
        cp -a "$_rootfs_template" "$dir/rootfs" || { diag "make_bundle: copy of the rootfs to $dir failed"; return 1; }
        if "$SDRUN" spec --bundle "$dir" >/dev/null 2>&1 && jq -e .process "$dir/config.json" >/dev/null 2>&1; then
                bundle_set "$dir" '.process.terminal=false | .process.args=["true"] | .root.path="rootfs"' || return 1
        else
                rm -f "$dir/config.json"
                _default_config >"$dir/config.json" || return 1
        fi
}

# bundle_set DIR JQ-EXPR [JQ-ARGS...]: edit DIR/config.json in place,
# e.g. bundle_set "$B" '.process.args=$a' --argjson a '["echo","hi"]'
bundle_set() {
        local dir=${1:?bundle_set: DIR missing} expr=${2:?bundle_set: jq expression missing}
        shift 2
        if ! jq "$@" "$expr" "$dir/config.json" >"$dir/config.json.new" 2>"$dir/config.json.err"; then
                diag "bundle_set: jq '$expr' on $dir/config.json failed: $(cat "$dir/config.json.err")"
                rm -f "$dir/config.json.new" "$dir/config.json.err"
                return 1
        fi
        rm -f "$dir/config.json.err"
        mv -f "$dir/config.json.new" "$dir/config.json"
}

# ---------------------------------------------------------------------------------------------------------
# systemd and cgroups

unit_of() {
        echo "sdrun-$1.scope"
}

unit_prop() {
        systemctl show -p "$2" --value -- "$1"
}

# cgroup_dir UNIT: absolute cgroupfs directory of UNIT: on the unified hierarchy (unified layout, or
# /sys/fs/cgroup/unified in the hybrid one), else on name=systemd. Fails if the unit has no cgroup.
cgroup_dir() {
        local cg
        cg=$(systemctl show -p ControlGroup --value -- "$1" 2>/dev/null)
        [ -n "$cg" ] || return 1
        if [ "$(stat -fc %T /sys/fs/cgroup 2>/dev/null)" = cgroup2fs ]; then
                echo "/sys/fs/cgroup$cg"
        elif [ -d "/sys/fs/cgroup/unified$cg" ]; then
                echo "/sys/fs/cgroup/unified$cg"
        elif [ -d "/sys/fs/cgroup/systemd$cg" ]; then
                echo "/sys/fs/cgroup/systemd$cg"
        else
                return 1
        fi
}

# cgroup_v1_dir UNIT CONTROLLER: the unit's directory in a v1 controller hierarchy (hybrid layout).
cgroup_v1_dir() {
        local cg
        cg=$(systemctl show -p ControlGroup --value -- "$1" 2>/dev/null)
        [ -n "$cg" ] && [ -d "/sys/fs/cgroup/$2$cg" ] || return 1
        echo "/sys/fs/cgroup/$2$cg"
}

# busybox_links DIR BUSYBOX: DIR/APPLET -> busybox for each of BUSYBOX's applets. One process for the ~270
# links, not one ln each: under the VM tier's emulation a fork+exec costs a tenth of a second or more, and
# such a loop took minutes there.
busybox_links() {
        python3 -c 'import os, sys
for a in sys.argv[2:]:
    if a != "busybox":
        os.symlink("busybox", os.path.join(sys.argv[1], a))' "$1" $("$2" --list)
}

# wait_for CMD...: poll CMD until it succeeds, up to WAIT_FOR_TIMEOUT seconds (10) of sleeps between the
# polls: 20 ms at first, growing to 100 ms after half a second (a condition that takes longer does not
# need a fork every 20 ms: on a loaded machine and in the VM tier the polls slowed what they waited for).
# The sleeps are counted, not the clock: a slow machine stretches the wait, it does not fail it.
wait_for() {
        local slept=0 step=20 limit=$(( ${WAIT_FOR_TIMEOUT:-10} * 1000 ))
        while ((slept < limit)); do
                "$@" >/dev/null 2>&1 && return 0
                sleep "0.$(printf '%03d' "$step")"
                slept=$((slept + step))
                ((step < 100)) && step=$((step + 10))
        done
        "$@" >/dev/null 2>&1
}

# install_sdrun_template: units/sdrun@.service.in with this build's binary as /run/systemd/system/sdrun@.service
# (removed on exit); sets UDIR. The unit uses the default state root, so the tests' root must be it.
install_sdrun_template() {
        local unit_in=$SDRUN_SRCDIR/units/sdrun@.service.in
        [ -f "$unit_in" ] || bail "$unit_in is missing"
        [ "$SDRUN_ROOT" = /run/sdrun ] || bail "the unit uses the default state root /run/sdrun, not $SDRUN_ROOT"
        UDIR=/run/systemd/system
        sed "s|@SDRUN@|$SDRUN|g" "$unit_in" >"$UDIR/sdrun@.service" || bail "cannot install sdrun@.service"
        cleanup_add systemctl daemon-reload
        cleanup_add rm -f "$UDIR/sdrun@.service"
        systemctl daemon-reload
}

# unit_instance PREFIX: a fresh container id for sdrun@ID.service, whose unit is stopped and reset, and whose
# drop-ins and bundle directory are removed, on exit
unit_instance() {
        local id
        id=$(new_id "$1")
        track_container "$id"
        cleanup_add rm -rf "$UDIR/sdrun@$id.service.d" "/var/lib/sdrun/bundles/$id"
        cleanup_add systemctl reset-failed "sdrun@$id.service"
        cleanup_add systemctl stop "sdrun@$id.service"
        echo "$id"
}

# unit_dropin ID TEXT: a drop-in for sdrun@ID.service (TEXT in its [Service] section), then daemon-reload
unit_dropin() {
        mkdir -p "$UDIR/sdrun@$1.service.d"
        printf '[Service]\n%s\n' "$2" >"$UDIR/sdrun@$1.service.d/test.conf"
        systemctl daemon-reload
}

# no_leftovers ID: one test asserting that nothing of container ID remains: no state dir, no loaded
# unit, no process in a cgroup naming it, no mount naming it.
no_leftovers() {
        local id=${1:?no_leftovers: ID missing} bad=() units procs mounts f c
        [ ! -e "$SDRUN_ROOT/$id" ] || bad+=("state directory $SDRUN_ROOT/$id exists")
        units=$(systemctl list-units --all --plain --no-legend --no-pager -- "$(unit_of "$id")" 2>/dev/null)
        [ -z "$units" ] || bad+=("unit still loaded: $units")
        procs=""
        # builtins, not a grep per process: a fork costs tens of ms in the VM tier's emulation
        for f in /proc/[0-9]*/cgroup; do
                c=""
                read -r -d '' c <"$f" 2>/dev/null
                [[ $c == *"$id"* ]] || continue
                f=${f#/proc/}; f=${f%/cgroup}
                procs+=" $f($(cat "/proc/$f/comm" 2>/dev/null))"
        done
        [ -z "$procs" ] || bad+=("processes in its cgroup:$procs")
        mounts=$(grep -F -- "$id" /proc/self/mountinfo 2>/dev/null)
        [ -z "$mounts" ] || bad+=("mounts: $mounts")
        if [ ${#bad[@]} = 0 ]; then
                _tap_result 0 "no leftovers of $id"
        else
                _tap_result 1 "no leftovers of $id"
                printf '%s\n' "${bad[@]}" | _tap_diag_stream
                return 1
        fi
}

diag "layout=$SDRUN_TEST_LAYOUT kernel=$(uname -r) sdrun=$SDRUN"

# The watchdog: meson kills a test at its timeout without a word about where it hung. $SDRUN_TEST_WATCHDOG
# seconds in (570 by default: the integration suite's timeout is 600; 0: none), the processes of the test's
# session, with the kernel function each one sleeps in, go to its TAP output and to its stderr. While it
# waits it holds none of the test's output pipes (meson reads them to the end), and it ends with the test.
# It is not the test's child (forked from a subshell that exits at once): a test's plain `wait` for its own
# background jobs must not wait for it.
_lib_watchdog() {
        local main=$1 secs=$2 sid
        exec </dev/null >/dev/null 2>&1
        trap 'kill "$!"; exit 0' TERM
        sleep "$secs" &
        wait "$!"
        [ -d "/proc/$main" ] || exit 0
        sid=$(ps -o sid= -p "$main" | tr -d ' ')
        { echo "watchdog: the test still runs after $secs s; the processes of its session:"
          ps -o pid,ppid,stat,wchan:28,etimes,args --forest -s "$sid"; } 2>&1 | sed 's/^/# /' |
                tee "/proc/$main/fd/2" >"/proc/$main/fd/1"
}
if [ "${SDRUN_TEST_WATCHDOG:-570}" -gt 0 ] 2>/dev/null; then
        (_lib_watchdog "$$" "${SDRUN_TEST_WATCHDOG:-570}" &
         echo "$!" >"$TEST_TMPDIR/.watchdog")
        cleanup_add eval 'kill "$(cat "$TEST_TMPDIR/.watchdog")"'
fi
