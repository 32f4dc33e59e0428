#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Bad bundles and bad ids (issue 3): each fails with a clear message naming the field or object and leaves
# nothing behind: no state dir, no unit, no process, no mount.
. "$(dirname "$0")/lib.sh"

require_root
require_systemd

sd() { "$SDRUN" --root "$SDRUN_ROOT" "$@"; }
mounts_before=$(wc -l </proc/self/mountinfo)

# bad CASE REGEX [create|run]: fails, the error matches REGEX, nothing left (bundle in $B)
bad() {
        local desc=$1 re=$2 verb=${3:-run} id rc=0 err
        id=$(new_id bad); track_container "$id"
        err=$(sd "$verb" --bundle "$B" "$id" 2>&1 </dev/null) || rc=$?
        is "$rc" 1 "$desc: $verb fails"
        like "$err" "$re" "$desc: the error names it: $err"
        no_leftovers "$id"
}

B=$TEST_TMPDIR/b
make_bundle "$B" || bail "make_bundle failed"
cp "$B/config.json" "$TEST_TMPDIR/good.json"
reset() { cp "$TEST_TMPDIR/good.json" "$B/config.json"; }

bundle_set "$B" '.root.path="nonexistent"'
bad "missing rootfs" 'root.path.*nonexistent.*No such file'
: >"$B/afile"
bundle_set "$B" '.root.path="afile"'
bad "rootfs is a file" 'root.path.*afile.*not a directory'
reset

bundle_set "$B" '.process.args=["/bin/nonexistent-binary"]'
bad "args not found (absolute)" 'process.args.*nonexistent-binary' create
bundle_set "$B" '.process.args=["nonexistent-binary"]'
bad "args not found in PATH" 'process.args.*nonexistent-binary' create
printf '#!/bin/sh\necho hi\n' >"$B/rootfs/bin/notexec"; chmod 0644 "$B/rootfs/bin/notexec"
bundle_set "$B" '.process.args=["/bin/notexec"]'
bad "args not executable" 'process.args.*notexec.*(ermission|executable)' create
bundle_set "$B" '.process.args=["/etc"]'
bad "args is a directory" 'process.args.*/etc' create
bundle_set "$B" '.process.args=[]'
bad "empty args" 'process.args'
reset

bundle_set "$B" '.process.user={uid: 4294967295, gid: 0}'
bad "uid -1 (4294967295)" 'process.user.uid'
bundle_set "$B" '.process.user={uid: 0, gid: 0, additionalGids: [4294967295]}'
bad "additionalGids -1" 'process.user.additionalGids'
reset

bundle_set "$B" '.mounts += [{destination: "/data", type: "bind", source: "/nonexistent/source", options: ["rbind"]}]'
bad "bad bind mount source" 'mounts\[[0-9]+\].*(/nonexistent/source|/data)'
reset
bundle_set "$B" '.mounts += [{destination: "/data", type: "nosuchfs", source: "x"}]'
bad "unknown mount type" 'mounts\[[0-9]+\].*(nosuchfs|/data)'
reset

printf '{"ociVersion": "1.3.0", "process": ' >"$B/config.json"
bad "truncated config.json" 'config.json'
echo '{"ociVersion": "1.3.0", "root": {"path": 5}}' >"$B/config.json"
bad "wrong type in config.json" 'config.json.*root.path'
rm -f "$B/config.json"
bad "missing config.json" 'config.json.*(No such file|not found)'
reset

bundle_set "$B" '.process.terminal=true'
bad "terminal without --console-socket" 'terminal.*--console-socket' create
reset

# invalid ids: nothing created anywhere
before=$(ls -A "$SDRUN_ROOT" 2>/dev/null | sort)
for bid in "../x" "a/b" "" "." ".." ".hidden" "a b" "$(printf 'x%.0s' $(seq 1 1100))"; do
        rc=0; err=$(sd run --bundle "$B" "$bid" 2>&1 </dev/null) || rc=$?
        is "$rc" 1 "invalid id '${bid:0:20}': run fails"
        like "$err" '(container id|invalid)' "invalid id '${bid:0:20}': $err"
done
is "$(ls -A "$SDRUN_ROOT" 2>/dev/null | sort)" "$before" "invalid ids: nothing created under $SDRUN_ROOT"
ok_desc "invalid ids: ../x did not escape the state root" test ! -e "$SDRUN_ROOT/../x"

# an id that already exists: refused, the existing container is untouched
bundle_set "$B" '.process.args=["sleep","1000"]'
id=$(new_id dup); track_container "$id"
sd create --bundle "$B" "$id"
pid=$(sd state "$id" | jq -r .pid)
rc=0; err=$(sd create --bundle "$B" "$id" 2>&1) || rc=$?
is "$rc" 1 "create of an existing id fails"
like "$err" 'already exists' "existing id: $err"
is "$(sd state "$id" | jq -r '"\(.status) \(.pid)"')" "created $pid" "existing id: the first container is untouched"
is "$(systemctl show -p ActiveState --value "$(unit_of "$id")")" active "existing id: its unit is untouched"
sd delete --force "$id"
no_leftovers "$id"

is "$(wc -l </proc/self/mountinfo)" "$mounts_before" "no mount left in the host's mount namespace"

done_testing
