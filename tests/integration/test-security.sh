#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Capabilities, privileges and the runtime's own defences (issue 6), through the real binary: the five
# capability sets and NoNewPrivs from /proc/self/status, additionalGids, the session keyring, no fd of the
# runtime in the container (run, create+start, exec), the cwd, /proc/PID/exe never the runtime, hostile
# bundles (symlinked proc, dev, mount targets), and masked/readonly paths that the container cannot undo.
. "$(dirname "$0")/lib.sh"

require_root
require_systemd
ci_lane hybrid

sd() { "$SDRUN" --root "$SDRUN_ROOT" "$@"; }
status_of() { sd state "$1" 2>/dev/null | jq -r .status; }
[ -n "${SEC_SYSC:-}" ] && [ -x "$SEC_SYSC" ] || bail "SEC_SYSC (the sec-sysc helper) is not set or not executable"

B=$TEST_TMPDIR/b
make_bundle "$B" || bail "make_bundle failed"
cp "$SEC_SYSC" "$B/rootfs/bin/sec-sysc" || bail "copy of sec-sysc failed"
cp "$B/config.json" "$TEST_TMPDIR/config.orig"
reset_config() { cp "$TEST_TMPDIR/config.orig" "$B/config.json"; }

# srun SCRIPT [JQ-EXTRA] [RUN-OPTIONS...]: run `sh -c SCRIPT` (bounded); out, err, rc
srun() {
        local script=$1 extra=${2:-.} id
        shift 2 2>/dev/null || shift $#
        id=$(new_id sec); track_container "$id"
        bundle_set "$B" ".process.args=[\"sh\",\"-c\",\$s] | $extra" --arg s "$script" || bail "bundle_set failed"
        rc=0
        out=$(timeout -k 2 10 "$SDRUN" --root "$SDRUN_ROOT" run "$@" --bundle "$B" "$id" 2>"$TEST_TMPDIR/err") || rc=$?
        err=$(cat "$TEST_TMPDIR/err")
        last_id=$id
}

# Capability numbers from the kernel headers; mask NAME... -> 16 hex digits as /proc/PID/status shows them.
declare -A CAPNR
while read -r _ n v; do CAPNR[$n]=$v; done < <(grep -E '^#define CAP_[A-Z_]+[[:space:]]+[0-9]+$' /usr/include/linux/capability.h)
[ -n "${CAPNR[CAP_KILL]:-}" ] || bail "cannot read capability numbers from /usr/include/linux/capability.h"
mask() {
        local m=0 c
        for c in "$@"; do m=$((m | (1 << ${CAPNR[$c]}))); done
        printf '%016x' "$m"
}
caps_inside='grep -E "^Cap(Inh|Prm|Eff|Bnd|Amb):" /proc/self/status | tr -d "\t" | paste -sd" "'

# ---------------------------------------------------------------------------------------------------------
# Capabilities

reset_config
mapfile -t bnd < <(jq -r '.process.capabilities.bounding[]' "$B/config.json")
srun "$caps_inside"
# root (uid 0) gets bounding (= permitted here) as permitted and effective at execve; no ambient.
is "$rc:$out" "0:CapInh:$(mask) CapPrm:$(mask "${bnd[@]}") CapEff:$(mask "${bnd[@]}") CapBnd:$(mask "${bnd[@]}") CapAmb:$(mask)" \
        "default capabilities (${bnd[*]}): the five sets in /proc/self/status"

bundle_set "$B" '.process.user={uid: 1000, gid: 1000} | .process.capabilities={
        bounding: ["CAP_CHOWN","CAP_KILL","CAP_NET_RAW","CAP_SETUID"], effective: ["CAP_CHOWN","CAP_KILL","CAP_NET_RAW"],
        permitted: ["CAP_CHOWN","CAP_KILL","CAP_NET_RAW"], inheritable: ["CAP_KILL","CAP_NET_RAW"], ambient: ["CAP_NET_RAW"]}'
srun "$caps_inside"
# uid 1000 executing a file without capabilities keeps only the ambient set in permitted and effective.
is "$rc:$out" "0:CapInh:$(mask CAP_KILL CAP_NET_RAW) CapPrm:$(mask CAP_NET_RAW) CapEff:$(mask CAP_NET_RAW) CapBnd:$(mask CAP_CHOWN CAP_KILL CAP_NET_RAW CAP_SETUID) CapAmb:$(mask CAP_NET_RAW)" \
        "custom sets with ambient CAP_NET_RAW for uid 1000: inheritable, permitted, effective, bounding, ambient"

reset_config
id=$(new_id secbad); track_container "$id"
bundle_set "$B" '.process.capabilities.bounding += ["CAP_TEST"]'
# Unknown to sdrun and the kernel: warned about, naming the JSON path, and skipped (runtime-spec: "MUST be
# logged as a warning ... SHOULD NOT fail"; runc and crun do the same). The init keeps stderr: a file, not a
# pipe this shell would wait on.
rc=0; timeout -k 2 10 "$SDRUN" --root "$SDRUN_ROOT" create --bundle "$B" "$id" >/dev/null 2>"$TEST_TMPDIR/captest.err" </dev/null || rc=$?
err=$(cat "$TEST_TMPDIR/captest.err")
like "$rc:$err" '^0:.*process\.capabilities\.bounding.*CAP_TEST' "CAP_TEST in process.capabilities.bounding: create warns naming it and goes on: $err"
"$SDRUN" --root "$SDRUN_ROOT" delete --force "$id" >/dev/null 2>&1
no_leftovers "$id"
reset_config

# ---------------------------------------------------------------------------------------------------------
# noNewPrivileges, additionalGids, keyring

srun 'grep NoNewPrivs /proc/self/status | tr -d "\t"' '.process.noNewPrivileges=true'
is "$out" "NoNewPrivs:1" "noNewPrivileges true: NoNewPrivs 1"
srun 'grep NoNewPrivs /proc/self/status | tr -d "\t"' '.process.noNewPrivileges=false'
is "$out" "NoNewPrivs:0" "noNewPrivileges false: NoNewPrivs 0"
srun 'grep Groups /proc/self/status | tr -d "\t" | sed "s/ *$//"' '.process.user={uid: 1000, gid: 1000, additionalGids: [5, 44, 100]}'
is "$out" "Groups:5 44 100" "additionalGids [5, 44, 100]: Groups in /proc/self/status"
srun 'grep Groups /proc/self/status | tr -d "\t" | sed "s/ *$//"' '.process.user={uid: 1000, gid: 1000}'
is "$out" "Groups:" "no additionalGids: no supplementary group is inherited from the runtime"

# /proc/keys is masked by default: unmask it for these two.
unmask_keys='.linux.maskedPaths -= ["/proc/keys"]'
srun 'grep -o "keyring *_ses[^:]*" /proc/keys | tr -s " "' "$unmask_keys"
is "$rc:$out" "0:keyring _ses.$last_id" "default: a fresh session keyring named _ses.<id> (/proc/keys inside)"
srun 'grep -c "keyring *_ses\.sec-" /proc/keys' "$unmask_keys" --no-new-keyring
is "$out" 0 "--no-new-keyring: no _ses.<id> keyring is created"

# ---------------------------------------------------------------------------------------------------------
# File descriptors and cwd (CVE-2024-21626 class)

srun 'sec-sysc fds; readlink /proc/self/cwd; readlink /proc/1/cwd'
is "$rc:$(echo $out)" "0:0 1 2 / /" "run: fds 0 1 2 only, cwd / (self and the init)"
exec 3>"$TEST_TMPDIR/fd3" 4>"$TEST_TMPDIR/fd4"
srun 'sec-sysc fds; echo three >&3; echo four >&4' '.' --preserve-fds 2
exec 3>&- 4>&-
is "$rc:$out:$(cat "$TEST_TMPDIR/fd3" "$TEST_TMPDIR/fd4" | paste -sd,)" "0:0 1 2 3 4:three,four" "run --preserve-fds 2: exactly fds 0-4, 3 and 4 are the caller's"
srun 'readlink /proc/self/cwd; readlink /proc/1/cwd' '.process.cwd="/home/user"'
is "$(echo $out)" "/home/user /home/user" "process.cwd /home/user: the cwd inside, never a host path"

# create + start: the process's stdout is create's.
cs_fds() { # cs_fds PRESERVE
        local id
        id=$(new_id secfd); track_container "$id"
        bundle_set "$B" '.process.args=["sh","-c","sec-sysc fds; readlink /proc/self/cwd"] | .process.cwd="/"'
        rc=0
        timeout -k 2 10 "$SDRUN" --root "$SDRUN_ROOT" create --preserve-fds "$1" --bundle "$B" "$id" \
                >"$TEST_TMPDIR/cs.out" 2>"$TEST_TMPDIR/cs.err" 3>"$TEST_TMPDIR/fd3" 4>"$TEST_TMPDIR/fd4" 5>"$TEST_TMPDIR/fd5" </dev/null || rc=$?
        timeout -k 2 10 "$SDRUN" --root "$SDRUN_ROOT" start "$id" 2>>"$TEST_TMPDIR/cs.err" || rc=$?
        WAIT_FOR_TIMEOUT=5 wait_for sh -c "[ \"\$($SDRUN --root $SDRUN_ROOT state $id | jq -r .status)\" = stopped ]"
        out=$(cat "$TEST_TMPDIR/cs.out")
        [ $rc = 0 ] || diag "create/start: $(cat "$TEST_TMPDIR/cs.err")"
        timeout 10 "$SDRUN" --root "$SDRUN_ROOT" delete --force "$id" >/dev/null 2>&1
}
cs_fds 0
is "$rc:$(echo $out)" "0:0 1 2 /" "create+start: fds 0 1 2 only (create had 3, 4, 5 open), cwd /"
cs_fds 2
is "$rc:$(echo $out)" "0:0 1 2 3 4 /" "create --preserve-fds 2 + start: exactly fds 0-4 (not 5)"

# ---------------------------------------------------------------------------------------------------------
# exec: fds, cwd; /proc/PID/exe is never the runtime (CVE-2019-5736 class)

id=$(new_id secx); track_container "$id"
# The init watches /proc for any process whose exe is not busybox or sec-sysc and tries to open it for
# writing, while we exec into the container. The one other exe it may see is the sealed trampoline
# the exec child hops through (a memfd, never a host file; test-cve-2019-5736 attacks it).
bundle_set "$B" '.root.readonly=false | .process.args=["sh","-c",$s]' --arg s '
        : >/tmp/seen
        while :; do
                for p in /proc/[0-9]*; do
                        l=$(readlink $p/exe 2>/dev/null)
                        case "$l" in ""|/bin/busybox|/bin/sec-sysc|"/memfd:sdrun-trampoline (deleted)") ;; *) echo "$p $l $(sec-sysc write-exe $p/exe)" >>/tmp/seen ;; esac
                done
        done'
sum_before=$(sha256sum <"$SDRUN")
rc=0; timeout -k 2 10 "$SDRUN" --root "$SDRUN_ROOT" run -d --bundle "$B" "$id" >/dev/null 2>"$TEST_TMPDIR/err" </dev/null || rc=$?
is "$rc" 0 "exec: container running: $(cat "$TEST_TMPDIR/err")"
exec 3>"$TEST_TMPDIR/fd3"
out=$(timeout -k 2 10 "$SDRUN" --root "$SDRUN_ROOT" exec "$id" sh -c 'sec-sysc fds; readlink /proc/self/cwd; readlink /proc/1/exe' 2>&1 </dev/null)
exec 3>&-
is "$(echo $out)" "0 1 2 / /bin/busybox" "exec: fds 0 1 2 only (exec had 3 open), cwd /, /proc/1/exe is the user binary"
out=$(timeout -k 2 10 "$SDRUN" --root "$SDRUN_ROOT" exec --cwd /home/user "$id" readlink /proc/self/cwd 2>&1 </dev/null)
is "$out" "/home/user" "exec --cwd /home/user: the cwd inside"
for i in 1 2 3 4 5 6 7 8 9 10; do
        timeout -k 2 10 "$SDRUN" --root "$SDRUN_ROOT" exec "$id" true >/dev/null 2>&1 </dev/null
done
seen=$(cat "$B/rootfs/tmp/seen" 2>/dev/null)
is "$seen" "" "during 10 execs the container saw no process whose /proc/PID/exe is not its own binaries"
is "$(sha256sum <"$SDRUN")" "$sum_before" "the sdrun binary is unchanged"
timeout 10 "$SDRUN" --root "$SDRUN_ROOT" delete --force "$id" >/dev/null 2>&1
no_leftovers "$id"
reset_config
srun 'readlink /proc/1/exe; readlink /proc/self/exe'
is "$(echo $out)" "/bin/busybox /bin/busybox" "run: /proc/1/exe inside is the user binary, never sdrun"

# ---------------------------------------------------------------------------------------------------------
# Hostile bundles: everything stays inside the rootfs

host_mounts() { wc -l </proc/self/mountinfo; }
hostile() { # hostile DESC SETUP-CMD JQ SCRIPT: run the container; out/err/rc
        local hb=$TEST_TMPDIR/hostile id
        rm -rf "$hb"; mkdir -p "$hb"
        cp -a "$B/rootfs" "$hb/rootfs"; cp "$TEST_TMPDIR/config.orig" "$hb/config.json"
        (cd "$hb/rootfs" && eval "$2") || bail "hostile setup for $1 failed"
        bundle_set "$hb" ".process.args=[\"sh\",\"-c\",\$s] | $3" --arg s "$4" || bail "bundle_set failed"
        id=$(new_id sech); track_container "$id"
        rc=0
        out=$(timeout -k 2 10 "$SDRUN" --root "$SDRUN_ROOT" run --bundle "$hb" "$id" 2>"$TEST_TMPDIR/err") || rc=$?
        err=$(cat "$TEST_TMPDIR/err")
}
passwd_sum=$(sha256sum </etc/passwd)
m0=$(host_mounts)

hostile "proc -> /" 'rm -rf proc && ln -s / proc' '.' 'test -e /proc/self/status && echo proc-ok; ls / | grep -c .'
if [ $rc = 0 ]; then
        like "$out" '^proc-ok' "rootfs/proc -> /: proc mounted inside the container (run works)"
else
        like "$err" 'proc' "rootfs/proc -> /: create refuses clearly: $err"
fi
is "$(host_mounts)" "$m0" "rootfs/proc -> /: no mount appeared on the host"
no_leftovers "$id"

rm -f /etc/sdrun-evil-$$; cleanup_add rm -rf "/etc/sdrun-evil-$$"
hostile "mount through a symlink to /etc" 'ln -s /etc etcl && ln -s ../../../../../../etc etcr' \
        ".mounts += [{destination: \"/etcl/sdrun-evil-$$\", type: \"tmpfs\", source: \"tmpfs\"},
                     {destination: \"/etcr/sdrun-evil-$$-2\", type: \"tmpfs\", source: \"tmpfs\"}]" \
        "grep -c sdrun-evil-$$ /proc/self/mountinfo"
[ -e "/etc/sdrun-evil-$$" ] || [ -e "/etc/sdrun-evil-$$-2" ]
is "$?" 1 "mount destinations through symlinks to /etc (absolute and ../..): nothing appears in the host's /etc"
if [ $rc = 0 ]; then
        is "$out:$(ls -d "$TEST_TMPDIR/hostile/rootfs/etc/sdrun-evil-$$"* 2>/dev/null | wc -l)" "2:2" \
                "... both tmpfs are mounted inside, at rootfs/etc"
else
        like "$err" 'etc' "... or create refuses clearly: $err"
fi
is "$(host_mounts)" "$m0" "... no mount appeared on the host"

hostile "dev -> /dev" 'rm -rf dev && ln -s /dev dev' '.' 'ls /dev/null >/dev/null && echo dev-ok'
if [ $rc = 0 ]; then
        is "$out" dev-ok "rootfs/dev -> /dev: the container's /dev is inside its rootfs"
else
        like "$err" 'dev' "rootfs/dev -> /dev: create refuses clearly: $err"
fi
is "$(host_mounts)" "$m0" "rootfs/dev -> /dev: no mount appeared on the host"

hostile "dev/null -> /etc/passwd" 'rm -rf dev && mkdir dev && ln -s /etc/passwd dev/null' \
        '.mounts |= map(select(.destination != "/dev"))' 'test -c /dev/null && echo null-is-char; head -c 5 /etc/passwd'
is "$(sha256sum </etc/passwd)" "$passwd_sum" "rootfs/dev/null -> /etc/passwd (no /dev tmpfs): the host's /etc/passwd is untouched"
if [ $rc = 0 ]; then
        is "$out" "null-is-char
root:" "... /dev/null inside is the device, the container's /etc/passwd intact"
else
        like "$err" 'null' "... or create refuses clearly: $err"
fi
is "$(host_mounts)" "$m0" "... no mount appeared on the host"

# ---------------------------------------------------------------------------------------------------------
# maskedPaths and readonlyPaths cannot be undone without CAP_SYS_ADMIN

undo='umount /proc/kcore 2>/dev/null && echo umount-kcore; umount -l /proc/sys 2>/dev/null && echo umount-sys;
      mount -o remount,rw /proc/sys 2>/dev/null && echo remount-sys; mount -o remount,rw,bind /proc/sys 2>/dev/null && echo remount-bind;
      echo 1 >/proc/sys/kernel/ns_last_pid 2>/dev/null && echo wrote-sys; echo kcore=$(cat /proc/kcore 2>/dev/null | wc -c) keys=$(cat /proc/keys 2>/dev/null | wc -c)'
srun "$undo" '.process.noNewPrivileges=true'
is "$(echo $out)" "kcore=0 keys=0" "default capabilities: umount/remount of masked and readonly paths fail, /proc/kcore and /proc/keys stay empty"
srun "$undo" '.process.capabilities.bounding += ["CAP_SYS_ADMIN"] | .process.capabilities.effective += ["CAP_SYS_ADMIN"] | .process.capabilities.permitted += ["CAP_SYS_ADMIN"]'
sdrun_admin=$(echo $out)
diag "with CAP_SYS_ADMIN kept, sdrun: $sdrun_admin"
like "$sdrun_admin" '^umount-sys wrote-sys kcore=0' "with CAP_SYS_ADMIN the container can lazily unmount the read-only /proc/sys and write it (masking is no defence against CAP_SYS_ADMIN)"
if command -v runc >/dev/null; then
        rb=$TEST_TMPDIR/runcb; rm -rf "$rb"; mkdir -p "$rb"; cp -a "$B/rootfs" "$rb/rootfs"; cp "$B/config.json" "$rb/config.json"
        rid=$(new_id secrunc)
        rout=$(timeout -k 2 20 runc --root "$TEST_TMPDIR/runc-root" run --bundle "$rb" "$rid" 2>"$TEST_TMPDIR/runc.err")
        timeout 10 runc --root "$TEST_TMPDIR/runc-root" delete --force "$rid" >/dev/null 2>&1
        if [ -n "$rout" ]; then
                is "$sdrun_admin" "$(echo $rout)" "with CAP_SYS_ADMIN: the same outcome as runc ($(echo $rout))"
        else
                diag "runc could not run the comparison bundle: $(head -c 300 "$TEST_TMPDIR/runc.err")"
        fi
fi
reset_config

done_testing
