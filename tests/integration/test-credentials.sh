#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# systemd credentials (issue 33, item 2): the credentials of the unit that runs sdrun ($CREDENTIALS_DIRECTORY:
# SetCredential=, LoadCredential=) reach the container's process read-only, at /run/credentials with
# CREDENTIALS_DIRECTORY set, or at /run/credentials/@system when the process is systemd; owned by
# process.user; never on disk, never seen by a container started without them, gone with the container.
# (Neither runc nor crun passes credentials: no control.)
. "$(dirname "$0")/lib.sh"

require_root
require_systemd
UNIT_IN=$SDRUN_SRCDIR/units/sdrun@.service.in
[ -f "$UNIT_IN" ] || bail "$UNIT_IN is missing"
[ "$SDRUN_ROOT" = /run/sdrun ] || bail "the unit uses the default state root /run/sdrun, not $SDRUN_ROOT"
unset CREDENTIALS_DIRECTORY

UDIR=/run/systemd/system
sed "s|@SDRUN@|$SDRUN|g" "$UNIT_IN" >"$UDIR/sdrun@.service" || bail "cannot install sdrun@.service"
cleanup_add systemctl daemon-reload
cleanup_add rm -f "$UDIR/sdrun@.service"
systemctl daemon-reload

# What the container's process reports, one "key=value" a line.
REPORT='d=${CREDENTIALS_DIRECTORY:-/run/credentials}
echo "env=${CREDENTIALS_DIRECTORY:-unset}"
echo "greeting=$(cat "$d/greeting" 2>/dev/null || echo none)"
echo "secret=$(cat "$d/secret" 2>/dev/null || echo none)"
if echo x 2>/dev/null >"$d/greeting" || touch "$d/new" 2>/dev/null; then echo write=ok; else echo write=refused; fi
echo "mount=$(awk '"'"'$5 ~ "^/run/credentials" {print $5, substr($6, 1, 2)}'"'"' /proc/self/mountinfo)"
echo "owner=$(stat -c %a:%u "$d/greeting" 2>/dev/null || echo none)"
echo "run=$(ls /run 2>/dev/null | tr "\n" " ")"'
val() { sed -n "s/^$1=//p" <<<"$2" | head -1; }

SECRET=$TEST_TMPDIR/secret-file
echo "s3cret-$$" >"$SECRET"

# --- sdrun@ID with SetCredential= and LoadCredential= in a drop-in ----------------------------------------------
id=$(new_id cred)
track_container "$id"
cleanup_add rm -rf "$UDIR/sdrun@$id.service.d" "/var/lib/sdrun/bundles/$id"
cleanup_add systemctl reset-failed "sdrun@$id.service"
cleanup_add systemctl stop "sdrun@$id.service"
B=/var/lib/sdrun/bundles/$id
OUT=$TEST_TMPDIR/out-$id
mkdir -p "$OUT"
make_bundle "$B" || bail "make_bundle failed"
bundle_set "$B" '.process.args=["sh","-c",$s] |
        .mounts += [{destination: "/out", type: "bind", source: $o, options: ["rbind"]}]' \
        --arg s "trap 'exit 0' TERM; { $REPORT; } >/out/report.tmp; mv /out/report.tmp /out/report; sleep 1000 & wait" --arg o "$OUT" ||
        bail "bundle_set failed"
mkdir -p "$UDIR/sdrun@$id.service.d"
printf '[Service]\nSetCredential=greeting:hello-%s\nLoadCredential=secret:%s\n' "$id" "$SECRET" \
        >"$UDIR/sdrun@$id.service.d/creds.conf"
systemctl daemon-reload
out=$(systemctl start "sdrun@$id.service" 2>&1)
is "$?" 0 "systemctl start sdrun@$id.service (SetCredential=, LoadCredential= in a drop-in)" ||
        { diag "$out"; journalctl -q --no-pager -u "sdrun@$id.service" | tail -10 | _tap_diag_stream; }
wait_for test -s "$OUT/report"
r=$(cat "$OUT/report" 2>/dev/null)
is "$(val env "$r")" /run/credentials "  CREDENTIALS_DIRECTORY=/run/credentials in the process's environment"
is "$(val greeting "$r")" "hello-$id" "  SetCredential= greeting is there"
is "$(val secret "$r")" "s3cret-$$" "  LoadCredential= secret is there"
is "$(val write "$r")" refused "  neither writable nor can a file be added (as root in the container)"
is "$(val mount "$r")" "/run/credentials ro" "  a read-only mount of its own at /run/credentials"
is "$(val owner "$r")" 400:0 "  mode 0400, owned by process.user (root)"
ok_desc "  nothing of it on disk: not in the bundle's rootfs" sh -c "! grep -rqs 'hello-$id' '$B/rootfs'"
ok_desc "  nor anywhere under sdrun's state" sh -c "! grep -rqs 'hello-$id' /run/sdrun '$TEST_TMPDIR/.id-seq'"
ok_desc "  the host's mount table has nothing on the rootfs's /run/credentials" \
        sh -c "! grep -qF '$B/rootfs/run/credentials' /proc/self/mountinfo"

# --- a second container, run without credentials while the first runs: it sees none ------------------------------
id2=$(new_id nocred)
track_container "$id2"
B2=$TEST_TMPDIR/b-$id2
make_bundle "$B2" || bail "make_bundle failed"
bundle_set "$B2" '.process.args=["sh","-c",$s]' --arg s "$REPORT" || bail "bundle_set failed"
r2=$("$SDRUN" run --bundle "$B2" "$id2" 2>&1)
is "$?" 0 "a container run without CREDENTIALS_DIRECTORY next to it"
is "$(val env "$r2")" unset "  no CREDENTIALS_DIRECTORY"
is "$(val greeting "$r2")" none "  no credentials"
is "$(val mount "$r2")" "" "  no /run/credentials mount"
unlike "$(val run "$r2")" credentials "  no /run/credentials at all: $(val run "$r2")"
no_leftovers "$id2"

systemctl stop "sdrun@$id.service"
is "$(systemctl show -p ActiveState --value "sdrun@$id.service")" inactive "systemctl stop sdrun@$id"
no_leftovers "$id"

# --- plain `sdrun run` in a transient unit with credentials, as a user, and as systemd -----------------------------
id=$(new_id run)
track_container "$id"
B=$TEST_TMPDIR/b-$id
make_bundle "$B" || bail "make_bundle failed"
bundle_set "$B" '.process.args=["sh","-c",$s] | .process.user={uid: 1000, gid: 1000}' --arg s "$REPORT" ||
        bail "bundle_set failed"
# and one encrypted with the host's key (LoadCredentialEncrypted=), where systemd-creds can make one
ENC=$TEST_TMPDIR/enc.cred
enc=()
if encerr=$(echo -n "sealed-$id" | systemd-creds encrypt --with-key=host --name=sealed - "$ENC" 2>&1); then
        enc=(-p "LoadCredentialEncrypted=sealed:$ENC")
        bundle_set "$B" '.process.args[2] += "\necho \"sealed=$(cat $d/sealed 2>/dev/null || echo none)\""'
fi
r=$(systemd-run -q --wait --pipe --collect -p "SetCredential=greeting:hi-$id" -p "LoadCredential=secret:$SECRET" \
        "${enc[@]}" "$SDRUN" run --bundle "$B" "$id" 2>&1 </dev/null)
is "$?" 0 "systemd-run -p SetCredential= -p LoadCredential= ${enc[*]} sdrun run (process.user 1000)" || diag "$r"
if [ ${#enc[@]} -gt 0 ]; then
        is "$(val sealed "$r")" "sealed-$id" "  LoadCredentialEncrypted=: decrypted by systemd, there"
else
        skip "systemd-creds cannot encrypt here ($(tail -1 <<<"$encerr")): no LoadCredentialEncrypted= check"
fi
is "$(val env "$r")" /run/credentials "  CREDENTIALS_DIRECTORY=/run/credentials"
is "$(val greeting "$r") $(val secret "$r")" "hi-$id s3cret-$$" "  both credentials, readable by uid 1000"
is "$(val owner "$r")" 400:1000 "  mode 0400, owned by uid 1000"
is "$(val write "$r")" refused "  read-only"
no_leftovers "$id"

# the container's process is systemd: /sbin/init -> /lib/systemd/systemd (here a script that reports)
id=$(new_id sysd)
track_container "$id"
B=$TEST_TMPDIR/b-$id
make_bundle "$B" || bail "make_bundle failed"
mkdir -p "$B/rootfs/lib/systemd" "$B/rootfs/sbin"
printf '#!/bin/sh\n%s\n' "$REPORT" >"$B/rootfs/lib/systemd/systemd"
chmod 755 "$B/rootfs/lib/systemd/systemd"
ln -sf ../lib/systemd/systemd "$B/rootfs/sbin/init"
bundle_set "$B" '.process.args=["/sbin/init"]' || bail "bundle_set failed"
r=$(systemd-run -q --wait --pipe --collect -p "SetCredential=greeting:boot-$id" \
        "$SDRUN" run --bundle "$B" "$id" 2>&1 </dev/null)
is "$?" 0 "systemd-run -p SetCredential= sdrun run, process.args /sbin/init -> /lib/systemd/systemd" || diag "$r"
is "$(val env "$r")" /run/credentials/@system "  CREDENTIALS_DIRECTORY=/run/credentials/@system for systemd"
is "$(val greeting "$r")" "boot-$id" "  the credential is in /run/credentials/@system"
is "$(val mount "$r")" "/run/credentials/@system ro" "  a read-only mount there"
no_leftovers "$id"

done_testing
