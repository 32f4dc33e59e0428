#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Issue 31, item 4: a --root (or a container's state directory in it) that another user owns, or that group
# or others can write, lets that user plant a state whose config.json has a poststop hook, which root's
# `delete --force` then runs as root. runc (the control here) accepts such a root; sdrun refuses it in
# every verb, naming the path and the problem, and does nothing. The setups engines use (a root sdrun
# makes itself, 0711; an existing 0755 one; a symlink to one; containerd's /run/containerd/runc/NS shape)
# keep working, and a rootless caller needs a root of its own.
. "$(dirname "$0")/lib.sh"

require_root
require_systemd
RUNC=$(command -v runc) || bail "runc is not installed (Debian package runc): it is the control here"
command -v runuser >/dev/null || bail "runuser is not installed (Debian package util-linux)"

R=$TEST_TMPDIR/root
mkdir -m 0711 "$R"
sr() { timeout -k 2 20 "$SDRUN" --root "$R" "$@"; }

B=$TEST_TMPDIR/b
make_bundle "$B" || bail "make_bundle failed"
bundle_set "$B" '.process.args=["sleep","1000"] | .root.readonly=false
        | .hooks.poststop=[{"path":"/bin/sh","args":["sh","-c",$h]}]' \
        --arg h "cat >$TEST_TMPDIR/poststop" || bail "bundle_set failed"

id=$(new_id untrusted)
cleanup_add sh -c "chown -R 0:0 '$R'; chmod 0711 '$R'; chmod 0700 '$R/$id'; '$SDRUN' --root '$R' delete -f '$id'"
ok_desc "a container in a root of our own runs" sr run -d --bundle "$B" "$id"
is "$(stat -c %a "$R")" 711 "the root was there already: its mode is kept (711)"

# refused VERB-DESC REGEX CMD...: CMD fails, its message matches REGEX
refused() {
        local desc=$1 re=$2 rc=0 out
        shift 2
        # a file, not a pipe: where a verb is not refused (sdrun before issue 31), a created container's
        # init would hold a pipe open
        "$@" >"$TEST_TMPDIR/out" 2>&1 </dev/null || rc=$?
        out=$(cat "$TEST_TMPDIR/out")
        like "$rc:$out" "^[1-9][0-9]*:.*$re" "$desc: refused, saying why: $(head -c 300 <<<"$out")"
}

# still_there WHAT: the container runs, its state is in place, no poststop hook ran
still_there() {
        local st
        st=$(sr state "$id" 2>/dev/null | jq -r .status)
        is "$st" running "$1: afterwards the container still runs"
        ok_desc "$1: no poststop hook ran" test ! -e "$TEST_TMPDIR/poststop"
}

# ---------------------------------------------------------------------------------------------------------
# 1. The root belongs to another user (uid 65534 stands for one): every verb refuses it.
chown 65534:65534 "$R"
owner="\"$R\" is owned by uid 65534"
refused "foreign root: delete --force" "$owner" sr delete --force "$id"
refused "foreign root: delete" "$owner" sr delete "$id"
refused "foreign root: state" "$owner" sr state "$id"
refused "foreign root: list" "$owner" sr list
refused "foreign root: kill" "$owner" sr kill "$id" KILL
refused "foreign root: kill --all" "$owner" sr kill --all "$id" KILL
refused "foreign root: ps" "$owner" sr ps "$id"
refused "foreign root: pause" "$owner" sr pause "$id"
refused "foreign root: resume" "$owner" sr resume "$id"
refused "foreign root: update" "$owner" sr update --pids-limit 100 "$id"
refused "foreign root: events --stats" "$owner" sr events --stats "$id"
refused "foreign root: exec" "$owner" sr exec "$id" true
refused "foreign root: start" "$owner" sr start "$id"
mkdir -p "$TEST_TMPDIR/img" && : >"$TEST_TMPDIR/img/inventory.img" # restore looks for it first
refused "foreign root: checkpoint" "$owner" sr checkpoint --image-path "$TEST_TMPDIR/img" "$id"
id2=$(new_id untrusted)
refused "foreign root: create" "$owner" sr create --bundle "$B" "$id2"
refused "foreign root: run" "$owner" sr run -d --bundle "$B" "$id2"
refused "foreign root: restore" "$owner" sr restore --image-path "$TEST_TMPDIR/img" --bundle "$B" "$id2"
ok_desc "foreign root: create made no state directory" test ! -e "$R/$id2"
chown 0:0 "$R"
still_there "foreign root"

# 2. The root is writable by group or others, sticky or not.
for mode in 0777 1777 0713 0731; do
        chmod "$mode" "$R"
        case $mode in 0777 | 1777) who="group and others" ;; 0713) who=others ;; *) who="its group" ;; esac
        refused "root of mode $mode: delete --force" "\"$R\" is writable by $who \\(mode $mode\\)" sr delete --force "$id"
        refused "root of mode $mode: list" "\"$R\" is writable by $who" sr list
        refused "root of mode $mode: run" "\"$R\" is writable by $who" sr run -d --bundle "$B" "$id2"
done
chmod 0711 "$R"
still_there "writable root"

# 3. The root is fine, the container's own state directory is not.
chmod 0770 "$R/$id"
refused "group-writable state directory: delete --force" "\"$R/$id\" is writable by its group" sr delete --force "$id"
refused "group-writable state directory: kill" "\"$R/$id\" is writable by its group" sr kill "$id" KILL
rc=0; out=$(sr list 2>&1) || rc=$?
like "$rc:$out" "^0:.*\"$R/$id\" is writable by its group" "group-writable state directory: list warns, naming it"
unlike "$(sr list -q 2>/dev/null)" "$id" "  and does not list it as a container"
chmod 0700 "$R/$id"
chown 65534:65534 "$R/$id"
refused "foreign state directory: delete --force" "\"$R/$id\" is owned by uid 65534" sr delete --force "$id"
refused "foreign state directory: exec" "\"$R/$id\" is owned by uid 65534" sr exec "$id" true
chown 0:0 "$R/$id"
still_there "untrusted state directory"

# 4. Put right, the same delete --force works and runs the hook: the refusals above were all that stopped it.
ok_desc "trusted again: delete --force succeeds" sr delete --force "$id"
like "$(cat "$TEST_TMPDIR/poststop" 2>/dev/null)" "\"id\": *\"$id\"" "  and runs the poststop hook"
SDRUN_ROOT=$R no_leftovers "$id"
rm -f "$TEST_TMPDIR/poststop"

# ---------------------------------------------------------------------------------------------------------
# 5. The control: runc 1.1 accepts a root that another user owns and anyone can write.
RR=$TEST_TMPDIR/runc
mkdir -m 0777 "$RR"
chown 65534:65534 "$RR"
rid=$(new_id runc)
cleanup_add "$RUNC" --root "$RR" delete --force "$rid"
rc=0; "$RUNC" --root "$RR" run -d --bundle "$B" "$rid" >/dev/null 2>"$TEST_TMPDIR/err" </dev/null || rc=$?
is "$rc" 0 "runc: run -d in a root owned by uid 65534 with mode 0777 is accepted ($(head -c 200 "$TEST_TMPDIR/err"))"
rc=0; "$RUNC" --root "$RR" delete --force "$rid" >/dev/null 2>&1 || rc=$?
is "$rc" 0 "runc: and so is delete --force there (whose poststop hooks runc would run)"
rm -f "$TEST_TMPDIR/poststop"

# ---------------------------------------------------------------------------------------------------------
# 6. Legitimate setups keep working.
bundle_set "$B" '.process.args=["true"] | del(.hooks)'
made=$TEST_TMPDIR/containerd/runc/k8s.io # the containerd shim's --root shape: sdrun makes it
lid=$(new_id legit)
ok_desc "a missing root (containerd's runc/NAMESPACE shape) is made, and a container runs there" \
        "$SDRUN" --root "$made" run --bundle "$B" "$lid"
"$SDRUN" --root "$made" delete -f "$lid" >/dev/null 2>&1
is "$(stat -c '%a %u' "$made" "$TEST_TMPDIR/containerd/runc")" "711 0
711 0" "  made with mode 0711, owned by root, parents too"
mkdir -m 0755 "$TEST_TMPDIR/r755"
ok_desc "an existing root of mode 0755 is fine" "$SDRUN" --root "$TEST_TMPDIR/r755" run --bundle "$B" "$lid"
"$SDRUN" --root "$TEST_TMPDIR/r755" delete -f "$lid" >/dev/null 2>&1
ln -s r755 "$TEST_TMPDIR/rlink"
ok_desc "a root that is a symlink to a good one is fine" "$SDRUN" --root "$TEST_TMPDIR/rlink" run --bundle "$B" "$lid"
"$SDRUN" --root "$TEST_TMPDIR/rlink" delete -f "$lid" >/dev/null 2>&1
track_container "$lid"
ok_desc "the default root ($SDRUN_ROOT) is fine" "$SDRUN" --root "$SDRUN_ROOT" run --bundle "$B" "$lid"
"$SDRUN" --root "$SDRUN_ROOT" delete -f "$lid" >/dev/null 2>&1
is "$(stat -c '%a %u' "$SDRUN_ROOT")" "711 0" "  and is mode 0711, owned by root"

# ---------------------------------------------------------------------------------------------------------
# 7. Rootless: the root must be the caller's own; root's is not.
U=$(mktemp -d /tmp/sdrun-untrusted-XXXXXX)
cleanup_add rm -rf "$U"
chmod 0755 "$U"
mkdir -m 0755 "$U/roots" "$U/mine"
chown 65534:65534 "$U/mine"
rc=0; out=$(runuser -u nobody -- "$SDRUN" --root "$U/roots" list 2>&1) || rc=$?
like "$rc:$out" "^1:.*\"$U/roots\" is owned by uid 0, not by uid 65534" "rootless: a root that root owns is refused: $out"
rc=0; out=$(runuser -u nobody -- "$SDRUN" --root "$U/mine" list 2>&1) || rc=$?
is "$rc" 0 "rootless: a root of one's own is fine ($out)"

done_testing
