#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Socket activation of sdrun@.service (issue 33, item 1), the recipe of sdrun@.service(8): NAME.socket with
# Service=sdrun@NAME.service. The first connection starts the container, whose process gets the listening
# fds from 3 with LISTEN_FDS, LISTEN_PID=1 and LISTEN_FDNAMES (FileDescriptorName=); after `systemctl stop`,
# and after a container that exits, the next connection starts it again; several sockets, each fd with its
# name. crun (runc in the unified box), started by the same kind of socket unit, is the control for the fd and
# LISTEN_PID.
. "$(dirname "$0")/lib.sh"

require_root
require_systemd
[ -n "${SD_LISTEN:-}" ] && [ -x "$SD_LISTEN" ] || bail "SD_LISTEN (the sd-listen helper) is not set or not executable"
install_sdrun_template

# instance ID-PREFIX: a fresh id whose service and sockets are stopped and removed on exit
instance() {
        local id
        id=$(new_id "${1:-sa}")
        track_container "$id"
        cleanup_add rm -rf "$UDIR/sdrun@$id.service.d" "/var/lib/sdrun/bundles/$id" "$UDIR/$id.socket" \
                "$UDIR/$id-admin.socket"
        cleanup_add systemctl reset-failed "sdrun@$id.service"
        cleanup_add systemctl stop "$id.socket" "$id-admin.socket" "sdrun@$id.service"
        echo "$id"
}
# socket_unit NAME PATH FDNAME SERVICE: NAME.socket listening on the unix socket PATH for SERVICE
socket_unit() {
        printf '[Socket]\nListenStream=%s\nFileDescriptorName=%s\nService=%s\n' "$2" "$3" "$4" >"$UDIR/$1.socket"
}
# bundle DIR [ARGS...]: a busybox bundle running sd-listen ARGS, with a stale LISTEN_FDNAMES in process.env
bundle() {
        local dir=$1
        shift
        make_bundle "$dir" || bail "make_bundle failed"
        cp "$SD_LISTEN" "$dir/rootfs/bin/sd-listen"
        bundle_set "$dir" '.process.args=(["/bin/sd-listen"] + $a) |
                .process.env += ["LISTEN_FDNAMES=stale", "LISTEN_FDS=7"]' \
                --argjson a "$(jq -cn '$ARGS.positional' --args "$@")" || bail "bundle_set failed"
}
# ask PATH: connect to the unix socket PATH and print the server's line
ask() {
        python3 -c 'import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.settimeout(20)
s.connect(sys.argv[1])
sys.stdout.write(s.makefile().read())' "$1" 2>/dev/null
}
field() { sed -n "s/.* $1=\([^ ]*\).*/\1/p; s/^$1=\([^ ]*\).*/\1/p" <<<"$2" | head -1; }
active() { systemctl show -p ActiveState --value "$1"; }

# --- one socket, the service's container started by its first connection ---------------------------------------
id=$(instance)
S=/run/$id.sock
bundle "/var/lib/sdrun/bundles/$id"
socket_unit "$id" "$S" web "sdrun@$id.service"
systemctl daemon-reload
out=$(systemctl start "$id.socket" 2>&1)
is "$?" 0 "systemctl start $id.socket (Service=sdrun@$id.service)" || diag "$out"
is "$(active "sdrun@$id.service")" inactive "  the service is not started by the socket alone"
a=$(ask "$S")
like "$a" '^pid=1 ' "the first connection starts the container and its process answers: $a" ||
        journalctl -q --no-pager -u "sdrun@$id.service" -u "sdrun-$id.scope" | tail -15 | _tap_diag_stream
is "$(field fds "$a")" 1 "  LISTEN_FDS=1 (process.env's LISTEN_FDS=7 replaced)"
is "$(field lpid "$a")" 1 "  LISTEN_PID=1, its pid in the container"
is "$(field names "$a")" web "  LISTEN_FDNAMES=web, the socket's FileDescriptorName= (process.env's replaced)"
is "$(field fd "$a")" 3 "  the listening socket is fd 3"
is "$(active "sdrun@$id.service")" active "  sdrun@$id.service is active"
pid1=$("$SDRUN" state "$id" | jq -r .pid)
a=$(ask "$S")
is "$(field pid "$a")" 1 "a second connection is answered by the same container"
ok_desc "  (the same init, $pid1)" test -n "$pid1" -a "$("$SDRUN" state "$id" | jq -r .pid)" = "$pid1"

systemctl stop "sdrun@$id.service"
is "$(active "sdrun@$id.service")" inactive "systemctl stop sdrun@$id: inactive"
is "$(active "$id.socket")" active "  the socket still listens"
a=$(ask "$S")
is "$(field names "$a")" web "the next connection starts the container again: $a"
pid2=$("$SDRUN" state "$id" | jq -r .pid)
ok_desc "  a new container (init $pid1 -> $pid2)" test -n "$pid2" -a "$pid2" != null -a "$pid2" != "$pid1"
systemctl stop "$id.socket" "sdrun@$id.service"
no_leftovers "$id"

# --- a container that exits after one answer: the socket starts it again -----------------------------------------
id=$(instance)
S=/run/$id.sock
bundle "/var/lib/sdrun/bundles/$id" once
socket_unit "$id" "$S" once "sdrun@$id.service"
systemctl daemon-reload
systemctl start "$id.socket"
a=$(ask "$S")
is "$(field names "$a")" once "a container that answers once and exits: first answer"
ok_desc "  the service ends with it (inactive, not failed)" \
        wait_for sh -c "[ \"\$(systemctl show -p ActiveState --value sdrun@$id.service)\" = inactive ]"
ok_desc "  the container is gone" wait_for sh -c "! '$SDRUN' state '$id' >/dev/null 2>&1"
a=$(ask "$S")
is "$(field names "$a")" once "  the next connection starts it again: $a"
a=$(ask "$S")
is "$(field names "$a")" once "  and the next: $a"
# (journald may write the last start's line a moment after the answer: a loaded CI run counted 2)
starts() { journalctl -q --no-pager -u "sdrun@$id.service" | grep -c "Started.*sdrun container $id"; }
three_starts() { [ "$(starts)" -ge 3 ]; }
wait_for three_starts
ok_desc "  three starts of the service ($(starts))" three_starts
systemctl stop "$id.socket" "sdrun@$id.service"
no_leftovers "$id"

# --- two sockets for one container: each fd with its name ----------------------------------------------------------
id=$(instance)
S=/run/$id.sock
SA=/run/$id-admin.sock
bundle "/var/lib/sdrun/bundles/$id"
socket_unit "$id" "$S" http "sdrun@$id.service"
socket_unit "$id-admin" "$SA" admin "sdrun@$id.service"
systemctl daemon-reload
systemctl start "$id.socket" "$id-admin.socket"
a=$(ask "$SA")
is "$(field fds "$a")" 2 "two sockets (Service= in each): the first connection (admin) starts it, LISTEN_FDS=2"
names=$(field names "$a")
ok_desc "  LISTEN_FDNAMES names both: $names" test "$names" = http:admin -o "$names" = admin:http
IFS=: read -r -a nm <<<"$names"
fd=$(field fd "$a")
is "${nm[$((fd - 3))]}" admin "  the admin socket's connection came on fd $fd, named admin"
b=$(ask "$S")
fd=$(field fd "$b")
is "${nm[$((fd - 3))]}" http "  the http socket's connection came on fd $fd, named http"
is "$(field pid "$b")" 1 "  the same container answers both"
systemctl stop "$id.socket" "$id-admin.socket" "sdrun@$id.service"
no_leftovers "$id"

# --- control: crun (runc in the unified box, where crun cannot raise RLIMIT_MEMLOCK) under the same kind of socket
# unit ----------------------------------------------------------------------------------------------------------------
CTL=crun
[ "$SDRUN_TEST_LAYOUT" = unified ] && CTL=runc
if command -v "$CTL" >/dev/null; then
        id=$(new_id ctl)
        B=$TEST_TMPDIR/b-$id
        bundle "$B"
        # what crun 1.8 knows; no LISTEN_* in process.env, which crun lets win over its own
        bundle_set "$B" '.ociVersion="1.0.2" | .process.env -= ["LISTEN_FDNAMES=stale", "LISTEN_FDS=7"]'
        S=/run/$id.sock
        printf '[Service]\nExecStart=%s --root %s run --bundle %s %s\n' "$(command -v "$CTL")" "$TEST_TMPDIR/$CTL" \
                "$B" "$id" >"$UDIR/ctl-$id.service"
        socket_unit "$id" "$S" web "ctl-$id.service"
        cleanup_add rm -f "$UDIR/ctl-$id.service" "$UDIR/$id.socket"
        cleanup_add systemctl stop "$id.socket" "ctl-$id.service"
        systemctl daemon-reload
        systemctl start "$id.socket"
        a=$(ask "$S")
        is "$(field lpid "$a") $(field fd "$a")" "1 3" \
                "control: $CTL gives the container's process the socket on fd 3 and LISTEN_PID=1: $a" ||
                journalctl -q --no-pager -u "ctl-$id.service" | tail -15 | _tap_diag_stream
        diag "$CTL's LISTEN_FDS: $(field fds "$a"), LISTEN_FDNAMES: $(field names "$a")"
        systemctl stop "$id.socket" "ctl-$id.service"
        "$CTL" --root "$TEST_TMPDIR/$CTL" delete -f "$id" >/dev/null 2>&1
else
        skip "$CTL is not installed: no control"
fi

done_testing
