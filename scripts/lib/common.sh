# SPDX-License-Identifier: LGPL-2.1-or-later
# shellcheck shell=bash
# Shared by scripts/test and scripts/demo: dependency installation, builds, a booted systemd.
# Source it from the repository root (the scripts cd there first).

# Debian packages the build, the tests and the demo need. Installed with their recommends (Podman
# needs fuse-overlayfs, slirp4netns, catatonit from them), except those in SDRUN_DEBS_NORECOMMENDS.
SDRUN_DEBS=(
        meson ninja-build pkg-config gcc clang libclang-rt-14-dev clang-format-14
        libsystemd-dev libseccomp-dev libcap-dev libcjson-dev
        systemd systemd-container dbus dbus-user-session busybox-static
        scdoc mandoc python3 python3-jsonschema jq
        runc crun podman conmon uidmap
        docker.io containerd containernetworking-plugins curl python3-grpcio python3-protobuf protobuf-compiler
        cpio iproute2 procps util-linux e2fsprogs time libc6-dev
        criu kmod
        bats socat docker-registry gawk
        dpkg-dev debhelper lintian bash-completion
)
SDRUN_DEBS_NORECOMMENDS=(qemu-system-x86)

section() {
        printf '\n==== %s ====\n' "$*"
}

note() {
        printf '%s: %s\n' "${SDRUN_PROG:-sdrun}" "$*" >&2
}

die() {
        note "$*"
        exit 1
}

# missing_debs PKG...: print the packages of the list that are not installed.
missing_debs() {
        local installed
        installed=$(dpkg-query -W -f='${Package} ${db:Status-Abbrev}\n' "$@" 2>/dev/null | awk '$2 == "ii" { print $1 }')
        local p
        for p in "$@"; do
                grep -qxF -- "$p" <<<"$installed" || echo "$p"
        done
}

# install_deps: install what is missing (apt-get update only then). Non-interactive; needs root.
install_deps() {
        local miss=() miss_nr=()
        command -v dpkg-query >/dev/null || die "not a Debian system: install the packages by hand: ${SDRUN_DEBS[*]} ${SDRUN_DEBS_NORECOMMENDS[*]}"
        mapfile -t miss < <(missing_debs "${SDRUN_DEBS[@]}")
        mapfile -t miss_nr < <(missing_debs "${SDRUN_DEBS_NORECOMMENDS[@]}")
        if [ ${#miss[@]} = 0 ] && [ ${#miss_nr[@]} = 0 ]; then
                echo "all ${#SDRUN_DEBS[@]}+${#SDRUN_DEBS_NORECOMMENDS[@]} Debian packages are installed"
                return 0
        fi
        [ "$(id -u)" = 0 ] || die "missing packages (${miss[*]} ${miss_nr[*]}): run as root to install them"
        echo "installing: ${miss[*]} ${miss_nr[*]}"
        export DEBIAN_FRONTEND=noninteractive
        local apt=(apt-get -y -q -o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold)
        "${apt[@]}" update >/dev/null || die "apt-get update failed"
        if [ ${#miss[@]} -gt 0 ]; then
                "${apt[@]}" install "${miss[@]}" </dev/null || die "apt-get install ${miss[*]} failed"
        fi
        if [ ${#miss_nr[@]} -gt 0 ]; then
                "${apt[@]}" install --no-install-recommends "${miss_nr[@]}" </dev/null ||
                        die "apt-get install ${miss_nr[*]} failed"
        fi
}

# fetch_deb_source PKG VERSION DIR: unpack the upstream tarball of Debian's source package PKG=VERSION into DIR
# (its top directory becomes DIR). The source comes through apt from the mirror the host's own deb lines name
# (as deb-src, in a private apt state: the host's lists and sources are not touched), so apt checks its
# signature and hashes.
fetch_deb_source() {
        local pkg=$1 ver=$2 dir=$3 tmp f
        tmp=$(mktemp -d) || return 1
        mkdir -p "$tmp/parts" "$tmp/lists/partial" "$tmp/cache/archives/partial" "$tmp/src" "$tmp/x"
        # deb lines become deb-src lines: one-line sources.list entries and deb822 .sources stanzas
        sed -n 's/^deb \(.*\)/deb-src \1/p' /etc/apt/sources.list 2>/dev/null >"$tmp/sources.list"
        for f in /etc/apt/sources.list.d/*.list; do
                [ -f "$f" ] && sed -n 's/^deb \(.*\)/deb-src \1/p' "$f" >>"$tmp/sources.list"
        done
        for f in /etc/apt/sources.list.d/*.sources; do
                [ -f "$f" ] && sed 's/^Types:.*/Types: deb-src/' "$f" >"$tmp/parts/$(basename "$f")"
        done
        local apt=(apt-get -q -o Dir::Etc::SourceList="$tmp/sources.list" -o Dir::Etc::SourceParts="$tmp/parts"
                -o Dir::State::Lists="$tmp/lists" -o Dir::Cache="$tmp/cache" -o APT::Sandbox::User=root)
        if ! "${apt[@]}" update >"$tmp/log" 2>&1 ||
                ! (cd "$tmp/src" && "${apt[@]}" source --download-only "$pkg=$ver" >>"$tmp/log" 2>&1); then
                cat "$tmp/log" >&2
                rm -rf "$tmp"
                note "cannot fetch the source of $pkg $ver (deb-src of the host's mirrors)"
                return 1
        fi
        local orig
        orig=$(ls "$tmp"/src/*.orig.tar.* 2>/dev/null | head -1)
        if [ -z "$orig" ] || ! tar -xf "$orig" -C "$tmp/x"; then
                rm -rf "$tmp"
                note "cannot unpack the source of $pkg $ver"
                return 1
        fi
        rm -rf "$dir" && mkdir -p "$(dirname "$dir")" && mv "$tmp/x/"* "$dir"
        local rc=$?
        rm -rf "$tmp"
        return $rc
}

# fetch_suite PKG DIR PART [PREPARE]: PART (a path in the source tree, as "tests" or "test/system") of the
# source of the installed PKG, at the same place below DIR, then PREPARE DIR if given; DIR/.version names the
# version, so that a later call with the same version does nothing.
fetch_suite() {
        local pkg=$1 dir=$2 part=$3 prepare=${4:-} ver
        ver=$(dpkg-query -W -f='${source:Version}' "$pkg" 2>/dev/null) || { note "$pkg is not installed"; return 1; }
        if [ -e "$dir/$part" ] && [ "$(cat "$dir/.version" 2>/dev/null)" = "$ver" ]; then
                echo "$pkg $ver test suite: already in $dir"
                return 0
        fi
        fetch_deb_source "$pkg" "$ver" "$dir.src" || return 1
        rm -rf "$dir" && mkdir -p "$dir/$(dirname "$part")" &&
                cp -a "$dir.src/$part" "$dir/$(dirname "$part")/" &&
                { [ -z "$prepare" ] || "$prepare" "$dir"; } &&
                echo "$ver" >"$dir/.version" || { rm -rf "$dir.src" "$dir"; note "cannot unpack $pkg $ver's tests"; return 1; }
        rm -rf "$dir.src"
        echo "$pkg $ver test suite: in $dir"
}

# fetch_crun_suite DIR: crun's own test suite (tests/*.py of Debian's crun source package, the version of the
# installed crun) in DIR/tests, with its helper tests/init built, for tests/integration/test-crun-suite.sh.
fetch_crun_suite() {
        fetch_suite crun "$1" tests _build_crun_test_init
}
_build_crun_test_init() {
        : >"$1/tests/config.h" && gcc -static -O2 -I"$1/tests" -o "$1/tests/init" "$1/tests/init.c"
}

# fetch_runc_suite DIR: runc's own integration tests (tests/integration/*.bats of Debian's runc source
# package, the version of the installed runc) in DIR/tests, for tests/integration/test-runc-suite.sh.
fetch_runc_suite() {
        fetch_suite runc "$1" tests
}

# fetch_podman_suite DIR: Podman's own system tests (test/system of Debian's source package of the installed
# podman, libpod) in DIR/test/system, for tests/podman/test-podman-system.sh.
fetch_podman_suite() {
        fetch_suite podman "$1" test/system
}

# meson_build DIR [MESON OPTIONS...]: set up DIR (--werror, debugoptimized) if needed, enforce the
# options, build.
meson_build() {
        local dir=$1
        shift
        local opts=(--werror -Dbuildtype=debugoptimized -Dtest_injection=true "$@")
        if [ -f "$dir/build.ninja" ] && [ -f "$dir/meson-private/coredata.dat" ]; then
                # the options may differ from the ones the directory was set up with
                meson configure "$dir" "${opts[@]/#--werror/-Dwerror=true}" >/dev/null ||
                        meson setup --wipe "$dir" "${opts[@]}" || return 1
        else
                rm -rf "$dir"
                meson setup "$dir" "${opts[@]}" || return 1
        fi
        # MESON_BUILD_TARGETS: only these targets (and what they need), not the whole tree
        # shellcheck disable=SC2086 # a list of target names
        ninja -C "$dir" ${MESON_BUILD_TARGETS:-}
}

# systemd_is_pid1: true where PID 1 is a booted systemd (then no box is needed).
systemd_is_pid1() {
        [ -d /run/systemd/system ] && [ "$(cat /proc/1/comm 2>/dev/null)" = systemd ]
}
