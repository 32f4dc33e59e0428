#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# machinectl on sdrun containers (issue 33, item 3), with a busybox container and with systemd as the
# container's init: show (Leader, Unit, RootDirectory), status (the OS from the container's os-release, its
# processes), copy-to / copy-from (machined enters the container's mount namespace), kill --signal,
# reboot / poweroff (SIGINT / SIGRTMIN+4 to the leader), and shell (machined asks the container's systemd
# for a unit with PAMName=login: pam_loginuid writes /proc/self/loginuid, which needs CAP_AUDIT_CONTROL
# once the loginuid is set; nspawn keeps that capability by default, Podman's default set does not). The
# shell is tried with the loginuid unset (a container started by a service manager: works with Podman's
# capabilities) and set (one started from an admin's login shell: fails without CAP_AUDIT_CONTROL).
# crun runs the same systemd bundle as the control: crun does not register machines, so the test
# registers its container with RegisterMachine itself and compares what machinectl does with it.
. "$(dirname "$0")/lib.sh"

require_root
require_systemd

sd() { "$SDRUN" --root "$SDRUN_ROOT" "$@"; }
pid_of() { sd state "$1" 2>/dev/null | jq -r '.pid // empty'; }
status_of() { sd state "$1" 2>/dev/null | jq -r .status; }
in_machines() { machinectl list --no-legend --no-pager 2>/dev/null | awk '{print $1}' | grep -qxF -- "$1"; }

busctl --system status org.freedesktop.machine1 >/dev/null 2>&1 ||
        systemctl start systemd-machined >/dev/null 2>&1 || bail "systemd-machined cannot be started"

# ---------------------------------------------------------------------------------------------------------
# busybox: a shell as pid 1 that records the signals it gets in /sig (38 = SIGRTMIN+4 with glibc's SIGRTMIN)

B=$TEST_TMPDIR/b
make_bundle "$B" || bail "make_bundle failed"
mkdir -p "$B/rootfs/etc"
printf 'ID=sdrun-test\nPRETTY_NAME="sdrun busybox test"\n' >"$B/rootfs/etc/os-release"
bundle_set "$B" '.root.readonly=false | .process.args=["sh","-c",$s]' --arg s \
        'trap "echo usr1 >>/sig" USR1; trap "echo int >>/sig" INT; trap "echo rtmin4 >>/sig" 38; trap "exit 0" TERM; while :; do sleep 0.1; done' ||
        bail "bundle_set failed"
sigs() { sd exec "$1" cat /sig 2>/dev/null | tr '\n' ' '; }
has_sig() { sigs "$1" | grep -qw "$2"; }

id=$(new_id mbb); track_container "$id"
unit=$(unit_of "$id")
ok_desc "busybox: create" sd create --bundle "$B" "$id"
ok_desc "busybox: start" sd start "$id"
pid=$(pid_of "$id")
# machinectl show prints the properties in the object's order: Unit, Leader, ..., RootDirectory
is "$(machinectl show -p Leader -p Unit -p RootDirectory --value -- "$id" | tr '\n' ' ')" \
        "$unit $pid $B/rootfs " "busybox: show --property=Leader,Unit,RootDirectory"
st=$(machinectl status --no-pager -l -- "$id" 2>&1)
like "$st" 'OS: sdrun busybox test' "busybox: status shows the OS from the container's /etc/os-release"
like "$st" "$pid sh -c \"trap" "busybox: status shows the container's processes (the init)"

echo "to-$id" >"$TEST_TMPDIR/host-file"
ok_desc "busybox: copy-to" machinectl copy-to "$id" "$TEST_TMPDIR/host-file" /copied
is "$(sd exec "$id" cat /copied 2>&1)" "to-$id" "busybox: the file is in the container"
sd exec "$id" sh -c "echo from-$id >/inside" || diag "exec failed"
ok_desc "busybox: copy-from" machinectl copy-from "$id" /inside "$TEST_TMPDIR/from-file"
is "$(cat "$TEST_TMPDIR/from-file" 2>&1)" "from-$id" "busybox: the file is on the host"

ok_desc "busybox: kill --signal=SIGUSR1 --kill-whom=leader" machinectl kill --signal=SIGUSR1 --kill-whom=leader "$id"
ok_desc "busybox: the init got SIGUSR1" wait_for has_sig "$id" usr1
ok_desc "busybox: reboot" machinectl reboot "$id"
ok_desc "busybox: the init got SIGINT" wait_for has_sig "$id" int
ok_desc "busybox: poweroff" machinectl poweroff "$id"
ok_desc "busybox: the init got SIGRTMIN+4" wait_for has_sig "$id" rtmin4
is "$(status_of "$id")" running "busybox: the container still runs (its init chose to)"
ok_desc "busybox: terminate" machinectl terminate "$id"
ok_desc "busybox: stopped" wait_for sh -c "[ \"\$($SDRUN --root $SDRUN_ROOT state $id | jq -r .status)\" = stopped ]"
ok_desc "busybox: delete" sd delete "$id"
no_leftovers "$id"

# ---------------------------------------------------------------------------------------------------------
# systemd as the container's init: /usr from the host (read-only), a copy of /etc, a target of its own, and
# /run, /run/lock and /tmp as tmpfs, as Podman's --systemd=always gives them: without CAP_SYS_ADMIN systemd
# cannot mount them itself ("Failed to mount tmpfs at /run/lock: Operation not permitted", then PID 1 exits).
# A cgroup namespace too (sdrun spec, as runc spec, has none on a hybrid host): without one, systemd takes its
# cgroup's full path from /proc/1/cgroup and makes init.scope below that path again inside its own cgroup.

[ -x /lib/systemd/systemd ] || { skip "no /lib/systemd/systemd on this host"; done_testing; exit 0; }
R=$TEST_TMPDIR/sysroot
mkdir -p "$R"/{usr,etc,var,run,tmp,proc,sys,dev,root}
cp -a /etc/. "$R/etc/" 2>/dev/null
: >"$R/etc/machine-id"
for l in bin sbin lib lib64; do
        [ -e "/$l" ] && ln -s "usr/$l" "$R/$l"
done
mkdir -p "$R/etc/systemd/system"
# No user manager for the shells' sessions: on cgroup v1 the container's systemd gets no cgroup-empty
# notification, and a poweroff then waits out user@0.service's stop timeout although it has exited (the
# hybrid box, with crun the same; seen as a stop job left "running" by `systemctl list-jobs`).
ln -s /dev/null "$R/etc/systemd/system/user@.service"
wants=systemd-journald.service
[ -e /lib/systemd/system/dbus.socket ] && wants="$wants dbus.socket"
printf '[Unit]\nDescription=sdrun test target\nWants=%s\nAfter=%s\n' "$wants" "$wants" \
        >"$R/etc/systemd/system/sdrun-test.target"
os=$(. /usr/lib/os-release 2>/dev/null || . /etc/os-release; echo "$PRETTY_NAME")

# Podman's default capabilities; $1: more, as JSON strings
S=$TEST_TMPDIR/s
sys_bundle() {
        local caps='["CAP_CHOWN","CAP_DAC_OVERRIDE","CAP_FOWNER","CAP_FSETID","CAP_KILL","CAP_NET_BIND_SERVICE",
                "CAP_SETFCAP","CAP_SETGID","CAP_SETPCAP","CAP_SETUID","CAP_SYS_CHROOT"'"${1:+,$1}"']'
        mkdir -p "$S" && rm -f "$S/config.json" && true &&
                "$SDRUN" spec --bundle "$S" >/dev/null &&
                bundle_set "$S" '.root={path: $r, readonly: false} | .process.terminal=false |
                .process.args=["/lib/systemd/systemd","--unit=sdrun-test.target","--log-target=console"] |
                .process.env += ["container=sdrun"] |
                .linux.namespaces |= (if any(.type == "cgroup") then . else . + [{type: "cgroup"}] end) |
                .process.capabilities=({bounding: $c, effective: $c, permitted: $c}) |
                .mounts |= map(if .type == "cgroup" then .options |= map(if . == "ro" then "rw" else . end) else . end) |
                .mounts += [{destination: "/usr", type: "bind", source: "/usr", options: ["rbind", "ro"]},
                            {destination: "/run", type: "tmpfs", source: "tmpfs", options: ["nosuid", "nodev", "mode=755"]},
                            {destination: "/tmp", type: "tmpfs", source: "tmpfs", options: ["nosuid", "nodev"]},
                            {destination: "/run/lock", type: "tmpfs", source: "tmpfs", options: ["nosuid", "nodev", "noexec"]}]' \
                        --argjson c "$caps" --arg r "$R"
}
booted() { # $1: exec command prefix
        local s
        s=$("$@" systemctl is-system-running 2>/dev/null)
        [ "$s" = running ] || [ "$s" = degraded ]
}
shell_echo() { # $1: machine; prints what `machinectl shell` printed
        timeout 30 machinectl -q shell "$1" /bin/echo "hello-$1" </dev/null 2>&1 | tr -d '\r'
}

WAIT_FOR_TIMEOUT=60
# 1. Podman's capabilities
sys_bundle || bail "cannot make the systemd bundle"
id=$(new_id msd); track_container "$id"
unit=$(unit_of "$id")
# the container's stdio (systemd's console) goes to a file, not to the TAP stream
sd_quiet() { sd "$@" >>"$TEST_TMPDIR/sys.out" 2>&1 </dev/null; }
ok_desc "systemd: create" sd_quiet create --bundle "$S" "$id"
ok_desc "systemd: start" sd start "$id"
pid=$(pid_of "$id")
if ! wait_for booted sd exec "$id"; then
        skip "systemd as the container's init did not boot here: $(tail -5 "$TEST_TMPDIR/sys.out" | tr '\n' '|')"
        diag "$(tail -30 "$TEST_TMPDIR/sys.out")"
        diag "state: $(sd state "$id" 2>&1 | tr '\n' ' ')"
        diag "journal: $(journalctl --no-pager -o cat -u "$unit" 2>&1 | tail -15)"
        diag "init: $(ls -l "$R/lib/systemd/systemd" "$R/lib" 2>&1)"
        done_testing
        exit 0
fi
pass "systemd: boots (is-system-running)"
is "$(machinectl show -p Leader -p Unit -p RootDirectory --value -- "$id" | tr '\n' ' ')" \
        "$unit $pid $R " "systemd: show --property=Leader,Unit,RootDirectory"
st=$(machinectl status --no-pager -l -- "$id" 2>&1)
like "$st" "OS: $(sed 's/[][\\.*^$()+?{}|]/\\&/g' <<<"$os")" "systemd: status shows the OS ($os)"
if [ "$SDRUN_TEST_LAYOUT" = hybrid ]; then
        # machinectl shows the unified hierarchy's tree, which a systemd inside (legacy there: the container
        # gets the v1 hierarchies) does not use: its cgroups are in name=systemd
        like "$(grep '^[0-9]*:name=systemd:' "/proc/$pid/cgroup")" "/$unit/init\.scope\$" \
                "systemd: it made its own cgroups (init.scope, in name=systemd)"
else
        like "$st" "init\.scope" "systemd: status shows the container's own cgroups (init.scope)"
fi
like "$st" "systemd-journald" "systemd: and its processes (journald)"
# The container's processes inherit the loginuid of whoever ran sdrun: unset here, as under a service
# manager (sdrun@.service), and pam_loginuid may then set it without CAP_AUDIT_CONTROL.
is "$(cat "/proc/$pid/loginuid")" 4294967295 "systemd: the init's loginuid is unset (as the test's)"
out=$(shell_echo "$id")
like "$out" "^hello-$id\$" "systemd: machinectl shell runs a command in it (Podman's capabilities, loginuid unset)" ||
        diag "$out"
ok_desc "systemd: copy-to" machinectl copy-to "$id" "$TEST_TMPDIR/host-file" /root/copied
is "$(sd exec "$id" cat /root/copied 2>&1)" "$(cat "$TEST_TMPDIR/host-file")" "systemd: the file is in the container"
ok_desc "systemd: poweroff" machinectl poweroff "$id"
ok_desc "systemd: powers off (the container stops)" wait_for sh -c "[ \"\$($SDRUN --root $SDRUN_ROOT state $id | jq -r .status)\" = stopped ]"
ok_desc "systemd: delete" sd delete "$id"
no_leftovers "$id"

# 2. created from a login session (an admin's shell: loginuid 4242), with Podman's capabilities: the
# container inherits that loginuid, pam_loginuid cannot change it without CAP_AUDIT_CONTROL, and the
# shell's PAM session fails. (Under sdrun@.service the loginuid is unset, as in 1.)
sd_login() { sh -c 'echo 4242 >/proc/self/loginuid && exec "$@"' sh "$SDRUN" --root "$SDRUN_ROOT" "$@" \
        >>"$TEST_TMPDIR/sys.out" 2>&1 </dev/null; }
sys_bundle || bail "cannot make the systemd bundle"
id=$(new_id msl); track_container "$id"
ok_desc "systemd, loginuid 4242: create" sd_login create --bundle "$S" "$id"
ok_desc "systemd, loginuid 4242: start" sd start "$id"
ok_desc "systemd, loginuid 4242: boots" wait_for booted sd exec "$id"
is "$(cat "/proc/$(pid_of "$id")/loginuid")" 4242 "systemd, loginuid 4242: the init inherited it"
out=$(shell_echo "$id")
unlike "$out" "^hello-$id\$" "systemd, loginuid 4242, Podman's capabilities: machinectl shell fails (its PAM session)"
jpam() { sd exec "$id" journalctl -b -q -o cat --no-pager 2>/dev/null | grep 'pam_loginuid'; }
like "$(jpam)" "Error writing /proc/self/loginuid: Operation not permitted" \
        "systemd, loginuid 4242: the container's journal says pam_loginuid could not write the loginuid" ||
        diag "$(sd exec "$id" journalctl -b -q -o cat --no-pager 2>&1 | tail -8)"
ok_desc "systemd, loginuid 4242: delete --force" sd delete --force "$id"
no_leftovers "$id"

# 3. the same with CAP_AUDIT_CONTROL added: machinectl shell works
sys_bundle '"CAP_AUDIT_CONTROL"' || bail "cannot make the systemd bundle"
id=$(new_id msa); track_container "$id"
ok_desc "systemd+AUDIT_CONTROL: create (loginuid 4242)" sd_login create --bundle "$S" "$id"
ok_desc "systemd+AUDIT_CONTROL: start" sd start "$id"
ok_desc "systemd+AUDIT_CONTROL: boots" wait_for booted sd exec "$id"
out=$(shell_echo "$id")
like "$out" "^hello-$id\$" "systemd+AUDIT_CONTROL: machinectl shell runs a command in it" || diag "$out"
ok_desc "systemd+AUDIT_CONTROL: reboot" machinectl reboot "$id"
ok_desc "systemd+AUDIT_CONTROL: systemd reboots (the container stops)" wait_for sh -c "[ \"\$($SDRUN --root $SDRUN_ROOT state $id | jq -r .status)\" = stopped ]"
ok_desc "systemd+AUDIT_CONTROL: delete" sd delete "$id"
no_leftovers "$id"

# ---------------------------------------------------------------------------------------------------------
# crun, the control: the same bundle, registered by hand

if ! command -v crun >/dev/null; then
        skip "no crun"
else
        cid=$(new_id mcr)
        CR=(crun --root "$TEST_TMPDIR/crun" --systemd-cgroup)
        cleanup_add "${CR[@]}" delete -f "$cid"
        # (crun 1.8 refuses an ociVersion newer than 1.0.2, which sdrun spec writes)
        bundle_set "$S" '.linux.cgroupsPath=$p | .ociVersion="1.0.2" | del(.process.rlimits)' --arg p "machine.slice:crun:$cid"
        if "${CR[@]}" run -d --bundle "$S" "$cid" >/dev/null 2>"$TEST_TMPDIR/crun.err" </dev/null; then
                cpid=$("${CR[@]}" state "$cid" | jq -r .pid)
                cbooted() { booted "${CR[@]}" exec "$cid"; }
                ok_desc "crun: the same bundle boots" wait_for cbooted
                ok_desc "crun: RegisterMachine by hand" busctl call org.freedesktop.machine1 /org/freedesktop/machine1 \
                        org.freedesktop.machine1.Manager RegisterMachine sayssus "$cid" 0 crun container "$cpid" "$S/rootfs"
                out=$(shell_echo "$cid")
                like "$out" "^hello-$cid\$" "crun+AUDIT_CONTROL: machinectl shell runs a command in it" || diag "$out"
                ok_desc "crun: poweroff" machinectl poweroff "$cid"
                cgone() { ! "${CR[@]}" state "$cid" 2>/dev/null | jq -e '.status == "running"' >/dev/null; }
                ok_desc "crun: systemd powers off" wait_for cgone
        else
                skip "crun cannot run the systemd bundle here: $(tail -1 "$TEST_TMPDIR/crun.err")"
        fi
fi

done_testing
