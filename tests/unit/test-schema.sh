#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# `sdrun spec` and `sdrun features` against the runtime-spec JSON schemas in tests/schema (TAP).
# Needs: SDRUN (the binary), SDRUN_SRCDIR, PYTHON (a python3 with jsonschema). No root, no bus.
set -u

: "${SDRUN:?SDRUN must name the sdrun binary}"
: "${SDRUN_SRCDIR:?SDRUN_SRCDIR must name the source tree}"
PYTHON=${PYTHON:-python3}
SCHEMA=$SDRUN_SRCDIR/tests/schema
VALIDATE=("$PYTHON" "$SDRUN_SRCDIR/tests/validate-json.py")

n=0
failed=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $1"; shift; for l in "$@"; do echo "# $l"; done; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

if ! "$PYTHON" -c 'import jsonschema' 2>"$tmp/py.err"; then
        echo "1..1"
        not_ok "python3 jsonschema module is available ($PYTHON; install python3-jsonschema)" "$(cat "$tmp/py.err")"
        exit 1
fi

# Validate FILE against SCHEMA; on failure print the validator's messages as TAP comments.
check_valid() { # name schema file
        local out
        if out=$("${VALIDATE[@]}" "$SCHEMA/$2" "$3" 2>&1); then
                ok "$1"
        else
                # shellcheck disable=SC2086
                not_ok "$1" "$out"
        fi
}

# json_get FILE PYTHON-EXPRESSION-ON-d: prints the value (JSON-encoded).
json_get() {
        "$PYTHON" -c 'import json,sys; d=json.load(open(sys.argv[1])); print(json.dumps(eval(sys.argv[2])))' "$1" "$2"
}

expect_eq() { # name actual expected
        if [ "$2" = "$3" ]; then ok "$1"; else not_ok "$1" "expected: $3" "got:      $2"; fi
}

# 1-2: default spec, written into the current directory.
mkdir "$tmp/plain"
if (cd "$tmp/plain" && "$SDRUN" spec) 2>"$tmp/err" && [ -s "$tmp/plain/config.json" ]; then
        ok "sdrun spec writes config.json into the current directory"
else
        not_ok "sdrun spec writes config.json into the current directory" "$(cat "$tmp/err")"
fi
check_valid "sdrun spec output is valid against config-schema.json" config-schema.json "$tmp/plain/config.json"

c=$tmp/plain/config.json
expect_eq "default spec: ociVersion" "$(json_get "$c" 'd["ociVersion"]')" '"1.3.0"'
expect_eq "default spec: process" \
        "$(json_get "$c" '[d["process"][k] for k in ("terminal","user","args","cwd","noNewPrivileges")]')" \
        '[true, {"uid": 0, "gid": 0}, ["sh"], "/", true]'
expect_eq "default spec: capabilities" "$(json_get "$c" 'd["process"]["capabilities"]["bounding"]')" \
        '["CAP_AUDIT_WRITE", "CAP_KILL", "CAP_NET_BIND_SERVICE"]'
expect_eq "default spec: rlimits" "$(json_get "$c" 'd["process"]["rlimits"]')" \
        '[{"type": "RLIMIT_NOFILE", "hard": 1024, "soft": 1024}]'
expect_eq "default spec: root" "$(json_get "$c" 'd["root"]')" '{"path": "rootfs", "readonly": true}'
expect_eq "default spec: mount destinations" "$(json_get "$c" '[m["destination"] for m in d["mounts"]]')" \
        '["/proc", "/dev", "/dev/pts", "/dev/shm", "/dev/mqueue", "/sys", "/sys/fs/cgroup"]'
expect_eq "default spec: namespaces" "$(json_get "$c" '[n["type"] for n in d["linux"]["namespaces"]]')" \
        '["pid", "network", "ipc", "uts", "mount", "cgroup"]'
expect_eq "default spec: devices denied" "$(json_get "$c" 'd["linux"]["resources"]["devices"]')" \
        '[{"allow": false, "access": "rwm"}]'

# Rootless spec with --bundle.
mkdir "$tmp/rootless"
if "$SDRUN" spec --rootless --bundle "$tmp/rootless" 2>"$tmp/err"; then
        ok "sdrun spec --rootless --bundle DIR succeeds"
else
        not_ok "sdrun spec --rootless --bundle DIR succeeds" "$(cat "$tmp/err")"
fi
check_valid "sdrun spec --rootless output is valid against config-schema.json" config-schema.json \
        "$tmp/rootless/config.json"
r=$tmp/rootless/config.json
expect_eq "rootless spec: namespaces (no network, a user namespace)" \
        "$(json_get "$r" '[n["type"] for n in d["linux"]["namespaces"]]')" \
        '["pid", "ipc", "uts", "mount", "cgroup", "user"]'
expect_eq "rootless spec: uid mapping of the caller" "$(json_get "$r" 'd["linux"]["uidMappings"]')" \
        "[{\"containerID\": 0, \"hostID\": $(id -u), \"size\": 1}]"
expect_eq "rootless spec: gid mapping of the caller" "$(json_get "$r" 'd["linux"]["gidMappings"]')" \
        "[{\"containerID\": 0, \"hostID\": $(id -g), \"size\": 1}]"
expect_eq "rootless spec: /sys is a read-only rbind" "$(json_get "$r" '[m for m in d["mounts"] if m["destination"] == "/sys"]')" \
        '[{"destination": "/sys", "type": "none", "source": "/sys", "options": ["rbind", "nosuid", "noexec", "nodev", "ro"]}]'
expect_eq "rootless spec: no uid=/gid= options, no resources" \
        "$(json_get "$r" '[o for m in d["mounts"] for o in m.get("options", []) if o[:4] in ("uid=", "gid=")] + ["resources" in d["linux"]]')" \
        '[false]'

# -b is the short form.
mkdir "$tmp/short"
"$SDRUN" spec -b "$tmp/short" 2>/dev/null
if cmp -s "$tmp/short/config.json" "$c"; then ok "sdrun spec -b DIR writes the default spec"; else not_ok "sdrun spec -b DIR writes the default spec"; fi

# Refuses to overwrite.
echo '{"keep": true}' >"$tmp/short/config.json"
"$SDRUN" spec -b "$tmp/short" 2>"$tmp/err"
rc=$?
if [ $rc = 1 ] && grep -q 'config.json exists' "$tmp/err" && grep -q '"keep"' "$tmp/short/config.json"; then
        ok "sdrun spec refuses to overwrite config.json (exit 1, file kept)"
else
        not_ok "sdrun spec refuses to overwrite config.json (exit 1, file kept)" "exit $rc" "$(cat "$tmp/err")"
fi

# Bad invocations: exit 1 with a message that names the problem.
bad_invocation() { # name pattern args...
        local name=$1 pattern=$2 rc
        shift 2
        "$SDRUN" "$@" >"$tmp/out" 2>"$tmp/err"
        rc=$?
        if [ $rc = 1 ] && grep -q -- "$pattern" "$tmp/err"; then
                ok "$name"
        else
                not_ok "$name" "exit $rc, stderr:" "$(cat "$tmp/err")"
        fi
}
bad_invocation "sdrun spec --frobnicate: exit 1, names the option" '--frobnicate' spec --bundle "$tmp/plain" --frobnicate
bad_invocation "sdrun spec -x: exit 1, names the option" '-x' spec -x
bad_invocation "sdrun spec --bundle without a value: exit 1" 'needs an argument' spec --bundle
bad_invocation "sdrun spec EXTRA: exit 1, names the argument" 'EXTRA' spec -b "$tmp/plain" EXTRA
bad_invocation "sdrun spec --bundle MISSING: exit 1, names the directory" "$tmp/missing" spec --bundle "$tmp/missing"
bad_invocation "sdrun features --frobnicate: exit 1, names the option" '--frobnicate' features --frobnicate
bad_invocation "sdrun features EXTRA: exit 1" 'EXTRA' features EXTRA

# Features.
if "$SDRUN" features >"$tmp/features.json" 2>"$tmp/err"; then
        ok "sdrun features succeeds"
else
        not_ok "sdrun features succeeds" "$(cat "$tmp/err")"
fi
check_valid "sdrun features output is valid against features-schema.json" features-schema.json "$tmp/features.json"
f=$tmp/features.json
expect_eq "features: versions" "$(json_get "$f" '[d["ociVersionMin"], d["ociVersionMax"]]')" '["1.0.0", "1.3.0"]'
expect_eq "features: hooks" "$(json_get "$f" 'd["hooks"]')" \
        '["prestart", "createRuntime", "createContainer", "startContainer", "poststart", "poststop"]'
expect_eq "features: namespaces" "$(json_get "$f" 'sorted(d["linux"]["namespaces"])')" \
        '["cgroup", "ipc", "mount", "network", "pid", "time", "user", "uts"]'
expect_eq "features: every option of the default spec is a known mount option or data" \
        "$(json_get "$f" 'sorted({"ro","nosuid","nodev","noexec","strictatime","relatime","rbind","bind","rro","private","rslave"} - set(d["mountOptions"]))')" '[]'
expect_eq "features: mountOptions has no duplicates and is sorted" \
        "$(json_get "$f" 'd["mountOptions"] == sorted(set(d["mountOptions"]))')" 'true'
expect_eq "features: idmap options listed only when idmap mounts are supported" \
        "$(json_get "$f" '("idmap" in d["mountOptions"]) == d["linux"]["mountExtensions"]["idmap"]["enabled"]')" 'true'
expect_eq "features: capabilities include the classic set" \
        "$(json_get "$f" '[c for c in ("CAP_CHOWN","CAP_SYS_ADMIN","CAP_NET_BIND_SERVICE","CAP_AUDIT_READ") if c not in d["linux"]["capabilities"]]')" '[]'
expect_eq "features: the native seccomp architecture is listed" \
        "$(json_get "$f" '{"x86_64":"SCMP_ARCH_X86_64","aarch64":"SCMP_ARCH_AARCH64"}.get(__import__("os").uname().machine, "SCMP_ARCH_X86_64") in d["linux"]["seccomp"]["archs"]')" 'true'
expect_eq "features: supportedFlags is a subset of knownFlags" \
        "$(json_get "$f" 'set(d["linux"]["seccomp"]["supportedFlags"]) <= set(d["linux"]["seccomp"]["knownFlags"])')" 'true'
expect_eq "features: systemd cgroup manager" "$(json_get "$f" 'd["linux"]["cgroup"]["systemd"]')" 'true'

# The validator must be able to fail: a broken config and broken features documents are rejected.
"$PYTHON" -c 'import json,sys; d=json.load(open(sys.argv[1])); d["linux"]["namespaces"][0]["type"]="nope"; d["process"]["user"]["uid"]=-1; json.dump(d, open(sys.argv[2],"w"))' "$c" "$tmp/broken.json"
if ! "${VALIDATE[@]}" "$SCHEMA/config-schema.json" "$tmp/broken.json" >/dev/null 2>&1; then
        ok "validator rejects an invalid config.json"
else
        not_ok "validator rejects an invalid config.json"
fi
echo '{"ociVersionMin": "1.0.0", "linux": {"seccomp": {"archs": ["SCMP_ARCH_NOPE"]}}}' >"$tmp/broken-features.json"
if ! "${VALIDATE[@]}" "$SCHEMA/features-schema.json" "$tmp/broken-features.json" >/dev/null 2>&1; then
        ok "validator rejects an invalid features document"
else
        not_ok "validator rejects an invalid features document"
fi
echo '{"ociVersion": "1.3.0", "id": "x", "status": "running", "pid": 42, "bundle": "/b"}' \
        | "${VALIDATE[@]}" "$SCHEMA/state-schema.json" - >/dev/null 2>"$tmp/err" \
        && ok "validator accepts a state document on stdin" \
        || not_ok "validator accepts a state document on stdin" "$(cat "$tmp/err")"

echo "1..$n"
[ $failed = 0 ]
