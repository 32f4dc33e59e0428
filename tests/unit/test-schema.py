#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""`sdrun spec` and `sdrun features` against the runtime-spec JSON schemas in tests/schema (TAP).

Needs: SDRUN (the binary), SDRUN_SRCDIR; run with a python3 that has jsonschema. No root, no bus.
Everything is validated in this one process (starting python once per assertion cost most of the unit
suite's time).
"""

import json
import os
import subprocess
import sys
import tempfile

SDRUN = os.path.abspath(os.environ["SDRUN"])
SRCDIR = os.environ["SDRUN_SRCDIR"]
SCHEMA = os.path.join(SRCDIR, "tests", "schema")

n = 0
failed = 0


def ok(name):
    global n
    n += 1
    print(f"ok {n} - {name}")


def not_ok(name, *lines):
    global n, failed
    n += 1
    failed += 1
    print(f"not ok {n} - {name}")
    for block in lines:
        for line in str(block).splitlines():
            print(f"# {line}")


def check(name, cond, *lines):
    if cond:
        ok(name)
    else:
        not_ok(name, *lines)


try:
    sys.path.insert(0, os.path.join(SRCDIR, "tests"))
    import jsonschema  # noqa: F401
    import importlib.util

    spec = importlib.util.spec_from_file_location("validate_json", os.path.join(SRCDIR, "tests", "validate-json.py"))
    validate_json = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(validate_json)
except ImportError as e:
    not_ok(f"python3 jsonschema module is available ({sys.executable}; install python3-jsonschema)", e)
    print("1..1")
    sys.exit(1)

validators = {}


def errors_of(schema, doc):
    """The validator's messages for DOC against SCHEMA (a file in tests/schema), [] when valid."""
    if schema not in validators:
        validators[schema] = validate_json.make_validator(os.path.join(SCHEMA, schema))
    v = validators[schema]
    return [f"{validate_json.json_path(e)}: {e.message}" for e in v.iter_errors(doc)]


def check_valid(name, schema, doc):
    errs = errors_of(schema, doc)
    check(name, not errs, *errs)


def expect_eq(name, actual, expected):
    check(name, actual == expected, f"expected: {json.dumps(expected)}", f"got:      {json.dumps(actual)}")


def sdrun(*args):
    return subprocess.run([SDRUN, *args], capture_output=True, text=True)


def load(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


tmp = tempfile.TemporaryDirectory()
T = tmp.name

# Default spec, written into the current directory.
plain = os.path.join(T, "plain")
os.mkdir(plain)
r = subprocess.run([SDRUN, "spec"], cwd=plain, capture_output=True, text=True)
c = os.path.join(plain, "config.json")
check("sdrun spec writes config.json into the current directory",
      r.returncode == 0 and os.path.getsize(c) > 0 if os.path.exists(c) else False, r.stderr)
d = load(c)
check_valid("sdrun spec output is valid against config-schema.json", "config-schema.json", d)
expect_eq("default spec: ociVersion", d["ociVersion"], "1.3.0")
expect_eq("default spec: process",
          [d["process"][k] for k in ("terminal", "user", "args", "cwd", "noNewPrivileges")],
          [True, {"uid": 0, "gid": 0}, ["sh"], "/", True])
expect_eq("default spec: capabilities", d["process"]["capabilities"]["bounding"],
          ["CAP_AUDIT_WRITE", "CAP_KILL", "CAP_NET_BIND_SERVICE"])
expect_eq("default spec: rlimits", d["process"]["rlimits"], [{"type": "RLIMIT_NOFILE", "hard": 1024, "soft": 1024}])
expect_eq("default spec: root", d["root"], {"path": "rootfs", "readonly": True})
expect_eq("default spec: mount destinations", [m["destination"] for m in d["mounts"]],
          ["/proc", "/dev", "/dev/pts", "/dev/shm", "/dev/mqueue", "/sys", "/sys/fs/cgroup"])
# A cgroup namespace only on a cgroup v2 host, as runc and crun write it.
V2 = subprocess.run(["stat", "-fc", "%T", "/sys/fs/cgroup"], capture_output=True, text=True).stdout.strip() == "cgroup2fs"
CGNS = ["cgroup"] if V2 else []
expect_eq("default spec: namespaces (cgroup on a v2 host only: %s)" % ("v2" if V2 else "not v2"),
          [x["type"] for x in d["linux"]["namespaces"]], ["pid", "network", "ipc", "uts", "mount"] + CGNS)
expect_eq("default spec: devices denied", d["linux"]["resources"]["devices"], [{"allow": False, "access": "rwm"}])

# Rootless spec with --bundle.
rootless = os.path.join(T, "rootless")
os.mkdir(rootless)
r = sdrun("spec", "--rootless", "--bundle", rootless)
check("sdrun spec --rootless --bundle DIR succeeds", r.returncode == 0, r.stderr)
rd = load(os.path.join(rootless, "config.json"))
check_valid("sdrun spec --rootless output is valid against config-schema.json", "config-schema.json", rd)
expect_eq("rootless spec: namespaces (no network, a user namespace)", [x["type"] for x in rd["linux"]["namespaces"]],
          ["pid", "ipc", "uts", "mount"] + CGNS + ["user"])
expect_eq("rootless spec: uid mapping of the caller", rd["linux"]["uidMappings"],
          [{"containerID": 0, "hostID": os.getuid(), "size": 1}])
expect_eq("rootless spec: gid mapping of the caller", rd["linux"]["gidMappings"],
          [{"containerID": 0, "hostID": os.getgid(), "size": 1}])
expect_eq("rootless spec: /sys is a read-only rbind", [m for m in rd["mounts"] if m["destination"] == "/sys"],
          [{"destination": "/sys", "type": "none", "source": "/sys", "options": ["rbind", "nosuid", "noexec", "nodev", "ro"]}])
expect_eq("rootless spec: no uid=/gid= options, no resources",
          [o for m in rd["mounts"] for o in m.get("options", []) if o[:4] in ("uid=", "gid=")] + ["resources" in rd["linux"]],
          [False])

# -b is the short form.
short = os.path.join(T, "short")
os.mkdir(short)
sdrun("spec", "-b", short)
with open(os.path.join(short, "config.json"), "rb") as a, open(c, "rb") as b:
    check("sdrun spec -b DIR writes the default spec", a.read() == b.read())

# Refuses to overwrite.
with open(os.path.join(short, "config.json"), "w") as f:
    f.write('{"keep": true}\n')
r = sdrun("spec", "-b", short)
with open(os.path.join(short, "config.json")) as f:
    kept = '"keep"' in f.read()
check("sdrun spec refuses to overwrite config.json (exit 1, file kept)",
      r.returncode == 1 and "config.json exists" in r.stderr and kept, f"exit {r.returncode}", r.stderr)


# Bad invocations: exit 1 with a message that names the problem.
def bad_invocation(name, pattern, *args):
    res = sdrun(*args)
    check(name, res.returncode == 1 and pattern in res.stderr, f"exit {res.returncode}, stderr:", res.stderr)


missing = os.path.join(T, "missing")
bad_invocation("sdrun spec --frobnicate: exit 1, names the option", "--frobnicate", "spec", "--bundle", plain, "--frobnicate")
bad_invocation("sdrun spec -x: exit 1, names the option", "-x", "spec", "-x")
bad_invocation("sdrun spec --bundle without a value: exit 1", "needs an argument", "spec", "--bundle")
bad_invocation("sdrun spec EXTRA: exit 1, names the argument", "EXTRA", "spec", "-b", plain, "EXTRA")
bad_invocation("sdrun spec --bundle MISSING: exit 1, names the directory", missing, "spec", "--bundle", missing)
bad_invocation("sdrun features --frobnicate: exit 1, names the option", "--frobnicate", "features", "--frobnicate")
bad_invocation("sdrun features EXTRA: exit 1", "EXTRA", "features", "EXTRA")

# Features.
r = sdrun("features")
check("sdrun features succeeds", r.returncode == 0, r.stderr)
try:
    f = json.loads(r.stdout)
except ValueError as e:
    f = {}
    not_ok("sdrun features prints JSON", e)
check_valid("sdrun features output is valid against features-schema.json", "features-schema.json", f)
fl = f.get("linux", {})
expect_eq("features: versions", [f.get("ociVersionMin"), f.get("ociVersionMax")], ["1.0.0", "1.3.0"])
expect_eq("features: hooks", f.get("hooks"),
          ["prestart", "createRuntime", "createContainer", "startContainer", "poststart", "poststop"])
expect_eq("features: namespaces", sorted(fl.get("namespaces", [])),
          ["cgroup", "ipc", "mount", "network", "pid", "time", "user", "uts"])
expect_eq("features: every option of the default spec is a known mount option or data",
          sorted({"ro", "nosuid", "nodev", "noexec", "strictatime", "relatime", "rbind", "bind", "rro", "private", "rslave"}
                 - set(f.get("mountOptions", []))), [])
mo = f.get("mountOptions", [])
expect_eq("features: mountOptions has no duplicates and is sorted", mo == sorted(set(mo)), True)
expect_eq("features: idmap options listed only when idmap mounts are supported",
          ("idmap" in mo) == fl.get("mountExtensions", {}).get("idmap", {}).get("enabled"), True)
expect_eq("features: capabilities include the classic set",
          [x for x in ("CAP_CHOWN", "CAP_SYS_ADMIN", "CAP_NET_BIND_SERVICE", "CAP_AUDIT_READ")
           if x not in fl.get("capabilities", [])], [])
arch = {"x86_64": "SCMP_ARCH_X86_64", "aarch64": "SCMP_ARCH_AARCH64"}.get(os.uname().machine, "SCMP_ARCH_X86_64")
sc = fl.get("seccomp", {})
expect_eq("features: the native seccomp architecture is listed", arch in sc.get("archs", []), True)
expect_eq("features: supportedFlags is a subset of knownFlags",
          set(sc.get("supportedFlags", [])) <= set(sc.get("knownFlags", [])), True)


def kernel_accepts_seccomp_flag(flag):
    """seccomp(SECCOMP_SET_MODE_FILTER, flag, NULL): EFAULT means the kernel took the flags (nothing installed)."""
    import ctypes
    import errno
    libc = ctypes.CDLL(None, use_errno=True)
    nr = {"x86_64": 317, "aarch64": 277}.get(os.uname().machine, 317)
    if flag == 1 << 5:  # WAIT_KILLABLE_RECV is valid only with NEW_LISTENER
        flag |= 1 << 3
    return libc.syscall(nr, 1, ctypes.c_ulong(flag), None) < 0 and ctypes.get_errno() == errno.EFAULT


seccomp_flag_bits = {"SECCOMP_FILTER_FLAG_TSYNC": 1 << 0, "SECCOMP_FILTER_FLAG_LOG": 1 << 1,
                     "SECCOMP_FILTER_FLAG_SPEC_ALLOW": 1 << 2, "SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV": 1 << 5}
# The init passes linux.seccomp.flags to seccomp(2) itself: what the kernel accepts is what is supported.
expect_eq("features: supportedFlags are exactly the known flags the running kernel accepts",
          sorted(set(sc.get("supportedFlags", []))),
          sorted(n for n in sc.get("knownFlags", []) if n in seccomp_flag_bits
                 and kernel_accepts_seccomp_flag(seccomp_flag_bits[n])))
expect_eq("features: systemd cgroup manager", fl.get("cgroup", {}).get("systemd"), True)
# The libsystemd sdrun loads and the build options: the same as `sdrun --version` says (test-cli.sh checks
# those against the library file itself).
an = f.get("annotations", {})
version_lines = dict(line.split(": ", 1) for line in sdrun("--version").stdout.splitlines() if ": " in line)
vl = version_lines.get("libsystemd", "")
expect_eq("features: io.github.sdrun.libsystemd.* are --version's libsystemd line",
          f'{an.get("io.github.sdrun.libsystemd.version")} ({an.get("io.github.sdrun.libsystemd.interface")}, '
          f'{an.get("io.github.sdrun.libsystemd.path")})', vl)
expect_eq("features: io.github.sdrun.build-options is --version's build options line",
          an.get("io.github.sdrun.build-options"), version_lines.get("build options"))
check("features: the build options name the build type", "buildtype=" in an.get("io.github.sdrun.build-options", ""))

# The validator must be able to fail: a broken config and a broken features document are rejected, and
# the command-line validator the integration tests use still works on standard input.
broken = json.loads(json.dumps(d))
broken["linux"]["namespaces"][0]["type"] = "nope"
broken["process"]["user"]["uid"] = -1
check("validator rejects an invalid config.json", errors_of("config-schema.json", broken))
check("validator rejects an invalid features document",
      errors_of("features-schema.json",
                {"ociVersionMin": "1.0.0", "linux": {"seccomp": {"archs": ["SCMP_ARCH_NOPE"]}}}))
r = subprocess.run([sys.executable, os.path.join(SRCDIR, "tests", "validate-json.py"),
                    os.path.join(SCHEMA, "state-schema.json"), "-"],
                   input='{"ociVersion": "1.3.0", "id": "x", "status": "running", "pid": 42, "bundle": "/b"}',
                   capture_output=True, text=True)
check("validator accepts a state document on stdin", r.returncode == 0, r.stderr)

print(f"1..{n}")
sys.exit(1 if failed else 0)
