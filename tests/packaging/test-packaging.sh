#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Suite "packaging": the Debian package built from the tree as a user would build it, checked by lintian,
# installed in a booted box and purged again.
#
#  1. dpkg-buildpackage -us -uc -b of a copy of the tree (the checkout's files, committed or not; the
#     package's own unit and docs tests are left out with DEB_BUILD_OPTIONS=nocheck: they are the unit and
#     docs suites), and what the .deb holds.
#  2. lintian: no error (E:).
#  3. In a booted box (tests/harness/box, with a network namespace of its own: Docker's default bridge and
#     iptables rules stay in it): /usr gets a writable overlay and /var/lib/dpkg a copy of the host's
#     database, so that `apt-get install ./sdrun_*.deb` installs as on a real machine. The package must be
#     inert (Podman's default runtime unchanged), then `podman --runtime sdrun run` must work with only the
#     documented drop-in copied into /etc/containers/containers.conf.d/ (Podman finds the runtime by
#     name), `docker run --runtime sdrun` with only the documented daemon.json, and containerd must read
#     the documented CRI handler appended to Debian's config.toml.
#  4. apt-get purge: none of the files `dpkg -L sdrun` listed is left (directories other packages own
#     excepted), nor /var/lib/sdrun.
. "$(dirname "$0")/../integration/lib.sh"

require_root
for c in dpkg-buildpackage dh lintian podman docker containerd systemd-nspawn; do
        command -v "$c" >/dev/null || bail "$c is not installed (scripts/lib/common.sh SDRUN_DEBS)"
done
SRC=$SDRUN_SRCDIR
BOX_CMD=$SRC/tests/harness/box

# --- 1. the build ------------------------------------------------------------------------------------------------
version=$(dpkg-parsechangelog -l "$SRC/debian/changelog" -S Version) || bail "cannot read debian/changelog"
arch=$(dpkg --print-architecture)
W=$TEST_TMPDIR/pkg
T=$W/sdrun-$version
mkdir -p "$T"
if git -C "$SRC" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
        git -C "$SRC" ls-files -z -co --exclude-standard |
                tar -C "$SRC" --null -T - --ignore-failed-read -cf - 2>/dev/null | tar -C "$T" -xf - ||
                bail "cannot copy the tree"
else
        tar -C "$SRC" --exclude='./build*' --exclude='./obj-*' -cf - . | tar -C "$T" -xf - || bail "cannot copy the tree"
fi
t0=$SECONDS
if (cd "$T" && DEB_BUILD_OPTIONS="nocheck parallel=2" dpkg-buildpackage -us -uc -b) >"$W/build.log" 2>&1; then
        pass "dpkg-buildpackage -us -uc -b ($((SECONDS - t0)) s)"
else
        fail "dpkg-buildpackage -us -uc -b"
        tail -n 40 "$W/build.log" | _tap_diag_stream
        bail "no package to test"
fi
DEB=$W/sdrun_${version}_${arch}.deb
ok_desc "it wrote sdrun_${version}_${arch}.deb" test -s "$DEB"

contents=$(dpkg-deb -c "$DEB" | awk '{ print $6 }' | sed 's|^\./|/|; s|/$||')
completions=$(pkg-config --variable=completionsdir bash-completion 2>/dev/null)
has_file() { grep -qxF "$1" <<<"$contents"; }
for f in /usr/bin/sdrun /lib/systemd/system/sdrun@.service /usr/share/man/man8/sdrun.8.gz \
        /usr/share/man/man8/sdrun-create.8.gz /usr/share/man/man7/sdrun-systemd.7.gz \
        /usr/share/man/man7/sdrun-engines.7.gz /usr/share/man/man8/sdrun@.service.8.gz \
        "${completions:-/usr/share/bash-completion/completions}/sdrun" \
        /usr/share/doc/sdrun/examples/sdrun.conf /usr/share/doc/sdrun/examples/docker-daemon.json \
        /usr/share/doc/sdrun/examples/containerd-config.toml /usr/share/doc/sdrun/copyright /var/lib/sdrun/bundles; do
        ok_desc "the package has $f" has_file "$f"
done
unlike "$(grep -E '^/usr/share/containers|^/etc/' <<<"$contents")" . "the package configures no engine (nothing in /etc or /usr/share/containers)"
ok_desc "the man pages: one per verb and sdrun(8), sdrun-systemd(7), sdrun-engines(7), sdrun@.service(8)" \
        test "$(grep -c '^/usr/share/man/man[78]/.*\.gz$' <<<"$contents")" = "$(ls "$SRC"/man/*.scd | wc -l)"

# --- 2. lintian --------------------------------------------------------------------------------------------------
t0=$SECONDS
lintian --tag-display-limit 0 "$DEB" >"$W/lintian.log" 2>&1
grep -v '^running with root privileges' "$W/lintian.log" | _tap_diag_stream
unlike "$(grep '^E: ' "$W/lintian.log")" . "lintian reports no error ($((SECONDS - t0)) s)"

# --- 3. install in a booted box ----------------------------------------------------------------------------------
BOX=sdrun-pkg-$$
cp -a /var/lib/dpkg "$W/dpkg" || bail "cannot copy /var/lib/dpkg"
"$BOX_CMD" start "$BOX" --private-network --bind="$W" >"$W/box.log" 2>&1 || { cat "$W/box.log" | _tap_diag_stream; bail "box $BOX does not boot"; }
cleanup_add "$BOX_CMD" stop "$BOX"
# in_box CMD...: CMD in the box, with the environment apt needs to stay quiet and not restart the box's services.
in_box() {
        "$BOX_CMD" run "$BOX" --env=DEBIAN_FRONTEND=noninteractive --env=NEEDRESTART_SUSPEND=1 -- "$@"
}
# The box's /usr is the host's, read-only, and its /var an empty tmpfs: a writable overlay on /usr (in the
# box's mount namespace, which every later command and service of the box shares) and the host's dpkg
# database copied into /var/lib/dpkg.
ok_desc "the box gets a writable /usr and the host's dpkg database" in_box sh -ec "
        mkdir -p /var/tmp/usr-upper /var/tmp/usr-work /var/lib/apt/lists/partial /var/cache/apt/archives/partial /var/log/apt
        mount -t overlay overlay -o lowerdir=/usr,upperdir=/var/tmp/usr-upper,workdir=/var/tmp/usr-work /usr
        cp -a '$W/dpkg' /var/lib/dpkg
        systemctl daemon-reload" || bail "cannot prepare the box for dpkg"
rt_before=$(in_box podman info --format '{{.Host.OCIRuntime.Name}}' 2>&1)

t0=$SECONDS
ok_desc "apt-get install ./sdrun_${version}_${arch}.deb" in_box apt-get install -y -q "$DEB" ||
        bail "the package does not install"
diag "installed in $((SECONDS - t0)) s"
is "$(in_box sh -c 'command -v sdrun')" /usr/bin/sdrun "sdrun is /usr/bin/sdrun on the PATH"
like "$(in_box sdrun --version 2>&1)" $'\nlibsystemd: [^ ]+ \\(LIBSYSTEMD_[0-9]+, /' "/usr/bin/sdrun --version names the libsystemd it loads"
like "$(in_box sdrun --version 2>&1)" $'\nbuild options: prefix=/usr .*test_injection=false' "the package's build has no test injection"
like "$(in_box systemctl cat sdrun@web.service 2>&1)" 'ExecStart=/usr/bin/sdrun --keep-unit run --bundle \$\{SDRUN_BUNDLE\} %i' \
        "systemd finds sdrun@.service, which runs /usr/bin/sdrun"
is "$(in_box systemctl is-enabled sdrun@web.service 2>&1)" disabled "sdrun@.service is not enabled by the installation"
ok_desc "/var/lib/sdrun/bundles exists" in_box test -d /var/lib/sdrun/bundles
ok_desc "man sdrun-engines finds the page" in_box man -w sdrun-engines
is "$(in_box podman info --format '{{.Host.OCIRuntime.Name}}' 2>&1)" "$rt_before" \
        "installing changes no engine: Podman's default runtime is still $rt_before"

# Podman: only the documented drop-in, copied as sdrun-engines(7) says.
IMG_TAR=$W/busybox.tar
_make_rootfs_template || bail "cannot build the busybox rootfs"
tar -C "$_rootfs_template" -cf "$IMG_TAR" . || bail "cannot pack the busybox rootfs"
ok_desc "podman import of a busybox image" in_box podman import --change 'CMD ["/bin/sh"]' "$IMG_TAR" localhost/busybox:pkg
unlike "$(in_box podman --runtime sdrun run --rm --network none localhost/busybox:pkg echo hello 2>&1)" '^hello$' \
        "without the drop-in, podman --runtime sdrun does not run"
ok_desc "the documented Podman drop-in copied in" in_box sh -ec '
        mkdir -p /etc/containers/containers.conf.d
        cp /usr/share/doc/sdrun/examples/sdrun.conf /etc/containers/containers.conf.d/'
is "$(in_box podman --runtime sdrun run --rm --network none localhost/busybox:pkg echo hello 2>&1)" hello \
        "podman --runtime sdrun run prints hello"
cid=$(in_box podman --runtime sdrun run -d --network none localhost/busybox:pkg sleep 300 2>/dev/null)
is "$(in_box podman inspect --format '{{.OCIRuntime}}' "$cid" 2>&1)" sdrun "podman ran it with the runtime sdrun"
like "$(in_box sh -c 'ps -eo args | grep "^/usr/bin/conmon"' 2>&1)" ' -r /usr/bin/sdrun ' \
        "conmon drives /usr/bin/sdrun (the path of the drop-in)"
is "$(in_box systemctl is-active "libpod-$cid.scope" 2>&1)" active "the container is libpod-ID.scope"
ok_desc "podman rm -f" in_box podman rm -f -t 0 "$cid"
is "$(in_box podman info --format '{{.Host.OCIRuntime.Name}}' 2>&1)" "$rt_before" \
        "the drop-in does not make sdrun Podman's default ($rt_before)"

# Docker: only the documented daemon.json (the box has a network namespace of its own for Docker's bridge).
ok_desc "the documented daemon.json copied in, docker started" in_box sh -ec '
        mkdir -p /etc/docker
        cp /usr/share/doc/sdrun/examples/docker-daemon.json /etc/docker/daemon.json
        getent group docker >/dev/null || groupadd -f docker
        systemctl daemon-reload
        systemctl restart docker.socket docker.service
        for i in $(seq 100); do docker info >/dev/null 2>&1 && exit 0; sleep 0.2; done
        exit 1'
like "$(in_box docker info --format '{{json .Runtimes}}' 2>&1)" '"sdrun":\{"path":"/usr/bin/sdrun"' "docker info lists the runtime sdrun"
ok_desc "docker import of the busybox image" in_box sh -c "docker import '$IMG_TAR' busybox:pkg"
is "$(in_box docker run --rm --runtime sdrun busybox:pkg echo hello 2>&1)" hello "docker run --runtime sdrun prints hello"
in_box systemctl stop docker.service docker.socket containerd.service >/dev/null 2>&1

# containerd: the documented CRI handler, appended to Debian's config.toml, is read as one.
ok_desc "containerd reads the documented CRI handler sdrun appended to Debian's config.toml" in_box sh -ec "
        cat /etc/containerd/config.toml /usr/share/doc/sdrun/examples/containerd-config.toml >'$W/containerd.toml'
        containerd --config '$W/containerd.toml' config dump >'$W/containerd-dump.toml'"
dump=$(cat "$W/containerd-dump.toml" 2>/dev/null)
like "$dump" '\[plugins\."io\.containerd\.grpc\.v1\.cri"\.containerd\.runtimes\.sdrun\]' "containerd has the runtime handler sdrun"
like "$dump" 'BinaryName = "/usr/bin/sdrun"' "its BinaryName is /usr/bin/sdrun"
like "$dump" 'default_runtime_name = "runc"' "the default handler stays runc"

# --- 4. purge ----------------------------------------------------------------------------------------------------
listed=$(in_box dpkg -L sdrun 2>&1)
is "$(grep -cx /usr/bin/sdrun <<<"$listed")" 1 "dpkg -L sdrun lists the package's files"
diag "/run/sdrun before the purge: $(in_box ls -A /run/sdrun 2>&1 | tr '\n' ' ')"
# The snippets copied in are the administrator's (sdrun-engines(7), REMOVAL): removed first.
in_box rm -f /etc/containers/containers.conf.d/sdrun.conf /etc/docker/daemon.json
ok_desc "apt-get purge sdrun" in_box apt-get purge -y -q sdrun
# Those of the listed paths that still exist in the box, other than those another package owns (/usr/share/doc,
# the /lib link, ...).
left=$(in_box bash -c '
        for p in "$@"; do
                [ "$p" != /. ] || continue
                [ -e "$p" ] || [ -L "$p" ] || continue
                dpkg -S "$p" >/dev/null 2>&1 && continue
                echo "$p"
        done' left $listed 2>&1)
is "$left" "" "after the purge, no file of dpkg -L sdrun is left"
ok_desc "/var/lib/sdrun is gone" in_box test ! -e /var/lib/sdrun
ok_desc "/run/sdrun is gone (the seccomp cache of the podman and docker runs)" in_box test ! -e /run/sdrun
like "$(in_box dpkg-query -W -f '${db:Status-Abbrev}' sdrun 2>&1)" '^(un|dpkg-query: no packages)' "dpkg no longer knows sdrun"

done_testing
