#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Suite "podman": image builds (issue 34, item 1). Every RUN step of a build is a container that Buildah
# runs through the OCI runtime: `buildah bud --runtime PATH`, `podman build --runtime PATH` and a plain
# `podman build` (the containers.conf drop-in) of a Containerfile FROM the local busybox image, with RUN in
# shell and exec form, RUN --mount=type=bind and type=cache, ENV, USER and WORKDIR of a missing directory;
# a RUN that fails (the build fails with the step's exit code); `buildah from` + `buildah run` + `buildah
# commit`. Under sdrun ($PODMAN_TEST_RUNTIME=sdrun) the same builds also run with the control runtime (crun,
# runc in the unified layout), and the two images' filesystems (names, modes, owners, sizes, contents) and
# the failed build's message and status must be the same. In that run, outside CI, a 20-step build is timed
# with each runtime (TAP diag lines; bench/README.md has the numbers), SDRUN_BUILD_ROUNDS times alternating.
. "$(dirname "$0")/../integration/lib.sh"
. "$(dirname "$0")/lib-podman.sh"

require_root
require_systemd
command -v buildah >/dev/null || bail "buildah is not installed"
podman_setup
IMG=$PODMAN_IMAGE
RT=$PODMAN_RUNTIME_PATH
# The control, built alongside when sdrun is the runtime under test.
CTL=""
if [ "$PODMAN_TEST_RUNTIME" = sdrun ]; then
        if [ "$SDRUN_TEST_LAYOUT" = unified ]; then CTL=$(command -v runc); else CTL=$(command -v crun); fi
        [ -x "$CTL" ] || bail "no control runtime (crun/runc) installed"
fi
diag "buildah $(buildah --version | awk '{print $3}'), runtime $RT${CTL:+, control $CTL}"

# ran_here SINCE: a RUN step since SINCE (a journal cursor) ran on the runtime under test, as PID 1's journal
# shows (its UNIT= field): under sdrun each step is a transient scope sdrun-buildah-buildah<N>.scope; crun and runc make none.
# (/proc/self/cgroup inside cannot tell: on cgroup v2 the step has a cgroup namespace and sees "0::/".)
journal_cursor() { journalctl -q -n1 --show-cursor -o cat | sed -n 's/^-- cursor: //p'; }
_sdrun_scopes_since() { journalctl -q --after-cursor "$1" -o export _PID=1 | grep -E '^UNIT=sdrun-buildah-buildah[0-9]+\.scope'; }
ran_here() {
        if [ "$PODMAN_TEST_RUNTIME" = sdrun ]; then
                WAIT_FOR_TIMEOUT=5 wait_for _sdrun_scopes_since "$1" >/dev/null
        else
                ! _sdrun_scopes_since "$1" >/dev/null
        fi
}
RAN_DESC="under $PODMAN_TEST_RUNTIME (sdrun: a sdrun-buildah-buildah<N>.scope per step)"

CTX=$TEST_TMPDIR/ctx
mkdir -p "$CTX" || bail "mkdir $CTX"
echo ctxdata >"$CTX/ctx.txt"
cat >"$CTX/Containerfile" <<EOF
FROM $IMG
ENV GREETING=hello
RUN echo "\$GREETING shell" >/shell.txt; cat /proc/self/cgroup
RUN ["/bin/sh", "-c", "echo exec form >/exec.txt"]
RUN ["/bin/busybox", "touch", "/exec-direct"]
WORKDIR /missing/dir
RUN pwd >/workdir.txt
RUN --mount=type=bind,source=ctx.txt,target=/mnt/ctx.txt cat /mnt/ctx.txt >/bind.txt
RUN --mount=type=cache,target=/cache sh -c 'echo cached >/cache/f; cat /cache/f >/cache.txt'
USER user
RUN id -u >/tmp/uid.txt; id -un >/tmp/user.txt
USER root
RUN chmod 0640 /tmp/uid.txt && ln -s /shell.txt /link
EOF
printf 'FROM %s\nRUN echo before\nRUN sh -c "exit 7"\nRUN echo never\n' "$IMG" >"$CTX/Fail"

# b_out VAR CMD...: stdout+stderr of CMD in VAR, its status in B_RC.
b_out() {
        local __v=$1 __o
        shift
        B_RC=0
        __o=$("$@" 2>&1 </dev/null) || B_RC=$?
        printf -v "$__v" '%s' "$__o"
}

# fs_listing IMAGE: every path of the image's filesystem with type, mode, owner, size, link target and
# the checksum of a regular file's contents (no times: they differ from build to build). The mode of the
# empty files that a RUN step leaves where Buildah bound its /etc/hosts, /etc/hostname and /etc/resolv.conf
# is left out: the runtime creates these mount targets, and the runtimes differ (crun 0700, runc 0755 less
# the umask, sdrun 0644 less the umask; the runtime-spec says nothing of it).
fs_listing() {
        local m
        m=$(podman image mount "$1") || return 1
        (cd "$m" && find . -printf '%p %y %m %U:%G %s %l\n' | sort |
                sed -E 's#^(\./etc/(hosts|hostname|resolv\.conf) f) [0-7]+ #\1 (mode) #' &&
                find . -type f -print0 | sort -z | xargs -0r md5sum)
        podman image unmount "$1" >/dev/null
}
# img_file IMAGE PATH: the contents of PATH in IMAGE (read from the mounted image, not through a runtime).
img_file() {
        local m
        m=$(podman image mount "$1") || return 1
        cat "$m$2" 2>&1
        podman image unmount "$1" >/dev/null
}

# check_image IMAGE WHAT: the Containerfile's steps had their effect.
check_image() {
        local i=$1 w=$2
        is "$(img_file "$i" /shell.txt)" "hello shell" "$w: RUN in shell form, with ENV"
        is "$(img_file "$i" /exec.txt)" "exec form" "$w: RUN in exec form (sh -c)"
        is "$(img_file "$i" /exec-direct && echo present)" present "$w: RUN in exec form (no shell)"
        is "$(img_file "$i" /workdir.txt)" /missing/dir "$w: WORKDIR of a missing directory is created and the cwd"
        is "$(img_file "$i" /bind.txt)" ctxdata "$w: RUN --mount=type=bind reads the context"
        is "$(img_file "$i" /cache.txt)" cached "$w: RUN --mount=type=cache is writable"
        is "$(img_file "$i" /tmp/uid.txt)|$(img_file "$i" /tmp/user.txt)" "1000|user" "$w: USER user: the step ran as uid 1000"
}

# --- buildah bud --runtime PATH ---------------------------------------------------------------------------
cur=$(journal_cursor)
b_out out buildah bud --runtime "$RT" -t localhost/built-rt -f "$CTX/Containerfile" "$CTX"
is "$B_RC" 0 "buildah bud --runtime $PODMAN_TEST_RUNTIME" || diag "$out"
ok_desc "  its RUN steps ran $RAN_DESC" ran_here "$cur"
check_image localhost/built-rt "buildah bud"
m=$(podman image mount localhost/built-rt)
ok_desc "buildah bud: the cache mount's file is not in the image" test -n "$m" -a ! -e "$m/cache/f"
podman image unmount localhost/built-rt >/dev/null

fail="" cfail=""
b_out fail buildah bud --runtime "$RT" -f "$CTX/Fail" "$CTX"
frc=$B_RC
is "$frc" 7 "buildah bud of a failing RUN exits with the step's status (7)"
like "$fail" 'building at STEP "RUN sh -c "exit 7"": while running runtime: exit status 7' "  and names the step and its status"
unlike "$fail" never "  no step after it ran"

if [ -n "$CTL" ]; then
        b_out out buildah bud --runtime "$CTL" -t localhost/built-ctl -f "$CTX/Containerfile" "$CTX"
        is "$B_RC" 0 "control: buildah bud --runtime $CTL" || diag "$out"
        a=$(fs_listing localhost/built-rt) b=$(fs_listing localhost/built-ctl)
        ok_desc "the images built with sdrun and $(basename "$CTL") have the same files, modes, owners and contents" \
                test -n "$a" -a "$a" = "$b" || diff <(echo "$b") <(echo "$a") | head -30 | _tap_diag_stream
        b_out cfail buildah bud --runtime "$CTL" -f "$CTX/Fail" "$CTX"
        is "$frc|$(grep '^Error' <<<"$fail")" "$B_RC|$(grep '^Error' <<<"$cfail")" \
                "a failing RUN: sdrun's build fails with the same status and message as $(basename "$CTL")'s"
        is "$B_RC" 7 "  (the control's status is 7)"
fi

# --- podman build --runtime PATH, and through the containers.conf drop-in ---------------------------------
cur=$(journal_cursor)
b_out out podman build --runtime "$RT" --no-cache -t localhost/built-podman -f "$CTX/Containerfile" "$CTX"
is "$B_RC" 0 "podman build --runtime $PODMAN_TEST_RUNTIME" || diag "$out"
ok_desc "  its RUN steps ran $RAN_DESC" ran_here "$cur"
check_image localhost/built-podman "podman build"
b_out out podman build -f "$CTX/Fail" "$CTX"
is "$B_RC" 7 "podman build (runtime from the drop-in) of a failing RUN exits with the step's status (7)"
like "$out" 'building at STEP "RUN sh -c "exit 7"": while running runtime: exit status 7' "  with the message of the step"
printf 'FROM %s\nRUN cat /proc/self/cgroup\n' "$IMG" >"$CTX/Cg"
cur=$(journal_cursor)
b_out out podman build --no-cache -f "$CTX/Cg" "$CTX"
ok_desc "podman build with no --runtime: the RUN step ran $RAN_DESC (the drop-in's runtime)" ran_here "$cur"

# --- buildah from + run + commit --------------------------------------------------------------------------
b_out ctr buildah from "$IMG"
is "$B_RC" 0 "buildah from" || diag "$ctr"
ctr=$(tail -1 <<<"$ctr")
cleanup_add buildah rm "$ctr"
cur=$(journal_cursor)
b_out out buildah run --runtime "$RT" "$ctr" -- sh -c 'echo committed >/committed.txt; cat /proc/self/cgroup'
is "$B_RC" 0 "buildah run --runtime $PODMAN_TEST_RUNTIME" || diag "$out"
ok_desc "  it ran $RAN_DESC" ran_here "$cur"
b_out out buildah run --runtime "$RT" "$ctr" -- sh -c 'exit 3'
is "$B_RC" 3 "buildah run: the command's exit status (3)" || diag "$out"
# shellcheck disable=SC2016 # expanded in the container
b_out out buildah run --runtime "$RT" --user user --workingdir /tmp "$ctr" -- sh -c 'echo $(id -u) $(pwd)'
is "$out" "1000 /tmp" "buildah run --user --workingdir"
b_out out buildah commit "$ctr" localhost/committed
is "$B_RC" 0 "buildah commit" || diag "$out"
is "$(img_file localhost/committed /committed.txt)" committed "  the committed image has the file buildah run wrote"
pm_is "  and podman runs it" committed 0 run --rm localhost/committed cat /committed.txt

# --- timing: a 20-step build ------------------------------------------------------------------------------
{
        echo "FROM $IMG"
        for i in $(seq 1 20); do echo "RUN echo $i >/step$i"; done
} >"$CTX/Steps20"
time_build() {
        local t0 rc
        t0=$(date +%s%N)
        buildah bud --runtime "$1" -t localhost/steps20 -f "$CTX/Steps20" "$CTX" >/dev/null 2>&1
        rc=$?
        echo "$(( ($(date +%s%N) - t0) / 1000000 )) $rc"
}
# (in the sdrun run, which times the control too). Two 20-step builds take 2-3 minutes: CI leaves them to
# the bench's machine (SDRUN_BUILD_TIMING=1 runs them there too).
if [ -n "$CTL" ] && [ -n "${CI:-}" ] && [ "${SDRUN_BUILD_TIMING:-0}" != 1 ]; then
        diag "the 20-step build timing is left out in CI (SDRUN_BUILD_TIMING=1 runs it)"
elif [ -n "$CTL" ]; then
        # SDRUN_BUILD_ROUNDS=N (default 1): N rounds, the two runtimes alternating (which one goes first
        # alternates too), and the medians; one build per runtime is no better than +-15 %.
        rounds=${SDRUN_BUILD_ROUNDS:-1}
        sd_ms=() ctl_ms=()
        for ((k = 1; k <= rounds; k++)); do
                order=("$RT" "$CTL")
                [ $((k % 2)) = 0 ] && order=("$CTL" "$RT")
                for r in "${order[@]}"; do
                        read -r ms rc <<<"$(time_build "$r")"
                        if [ "$r" = "$RT" ]; then name=$PODMAN_TEST_RUNTIME sd_ms+=("$ms"); else name=$(basename "$CTL") ctl_ms+=("$ms"); fi
                        is "$rc" 0 "a 20-step build with $name (round $k)"
                        diag "20-step buildah bud, $name: $ms ms ($((ms / 20)) ms per step); load: $(cut -d' ' -f1-3 /proc/loadavg)"
                done
        done
        median() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : int((a[NR/2]+a[NR/2+1])/2)}'; }
        if [ "$rounds" -gt 1 ]; then
                m=$(median "${sd_ms[@]}") c=$(median "${ctl_ms[@]}")
                diag "20-step buildah bud, medians of $rounds: $PODMAN_TEST_RUNTIME $m ms, $(basename "$CTL") $c ms, ratio $(awk -v a="$m" -v b="$c" 'BEGIN {printf "%.2f", a / b}')"
        fi
fi

done_testing
