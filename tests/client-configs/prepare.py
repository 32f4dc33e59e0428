#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Adapt a captured client config.json (tests/client-configs/<client>/<case>.json) to a bundle on this host.

    prepare.py CAPTURED BUNDLE ID [NETNS]

Writes BUNDLE/config.json. What the engine set up around its container and what no longer exists is
replaced, everything else is kept as the engine wrote it:
- process.terminal off (no console socket here); the trailing "true" of process.args (every capture runs
  `true`, after Docker's or Podman's init where there is one) becomes a shell printing "client-config-ok";
- hooks dropped (they call back into the engine: Docker's libnetwork-setkey);
- a network namespace joined by path (the engine's, e.g. Podman's netavark one) becomes NETNS (a path the
  test made with `ip netns add`), or a new one without NETNS; other namespace paths are dropped;
- bind-mount sources that do not exist on this host (the engine's hostname/hosts/resolv.conf, ...) are
  made below BUNDLE/host/ (a file where the source or destination names one, else a directory);
- linux.cgroupsPath gets ID: "system.slice:sdtest-cc:ID" in the systemd form (slice:prefix:name), else
  "/sdtest-cc/ID";
- a seccomp listenerPath (an agent of the engine) is dropped;
- capabilities outside this process's bounding set are dropped (these test VMs lack CAP_SYS_RESOURCE, so
  --privileged fails with runc and crun alike otherwise).
Prints "systemd" or "cgroupfs": the cgroup driver the config was written for.
"""

import json
import os
import sys

CAPS = ["CHOWN", "DAC_OVERRIDE", "DAC_READ_SEARCH", "FOWNER", "FSETID", "KILL", "SETGID", "SETUID", "SETPCAP",
        "LINUX_IMMUTABLE", "NET_BIND_SERVICE", "NET_BROADCAST", "NET_ADMIN", "NET_RAW", "IPC_LOCK", "IPC_OWNER",
        "SYS_MODULE", "SYS_RAWIO", "SYS_CHROOT", "SYS_PTRACE", "SYS_PACCT", "SYS_ADMIN", "SYS_BOOT", "SYS_NICE",
        "SYS_RESOURCE", "SYS_TIME", "SYS_TTY_CONFIG", "MKNOD", "LEASE", "AUDIT_WRITE", "AUDIT_CONTROL", "SETFCAP",
        "MAC_OVERRIDE", "MAC_ADMIN", "SYSLOG", "WAKE_ALARM", "BLOCK_SUSPEND", "AUDIT_READ", "PERFMON", "BPF",
        "CHECKPOINT_RESTORE"]


def bounding_set():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("CapBnd:"):
                mask = int(line.split()[1], 16)
    return {"CAP_" + n for i, n in enumerate(CAPS) if mask >> i & 1}


FILE_NAMES = {"hostname", "hosts", "resolv.conf", ".containerenv", "localtime", "passwd", "group"}


def looks_like_file(src, dst):
    for p in (src, dst):
        b = os.path.basename(p.rstrip("/"))
        if b in FILE_NAMES or (b.find(".") > 0 and not b.endswith(".d")):
            return True
    return False


def main():
    captured, bundle, cid = sys.argv[1:4]
    netns = sys.argv[4] if len(sys.argv) > 4 else ""
    with open(captured) as f:
        c = json.load(f)

    c["root"]["path"] = "rootfs"
    p = c.setdefault("process", {})
    p["terminal"] = False
    p.pop("consoleSize", None)
    args = p.get("args") or ["true"]
    if args[-1] == "true":
        args = args[:-1]
    p["args"] = args + ["/bin/sh", "-c", "echo client-config-ok"]

    caps = p.get("capabilities")
    if caps:
        have = bounding_set()
        for k, v in caps.items():
            caps[k] = [x for x in v if x in have]

    c.pop("hooks", None)
    lin = c.setdefault("linux", {})
    for ns in lin.get("namespaces", []):
        if "path" in ns:
            if ns.get("type") == "network" and netns:
                ns["path"] = netns
            else:
                del ns["path"]

    host = os.path.join(bundle, "host")
    for m in c.get("mounts", []):
        opts = m.get("options") or []
        if m.get("type") != "bind" and "bind" not in opts and "rbind" not in opts:
            continue
        src = m.get("source", "")
        if os.path.exists(src):
            continue
        new = os.path.join(host, src.lstrip("/"))
        os.makedirs(os.path.dirname(new), exist_ok=True)
        if looks_like_file(src, m.get("destination", "")):
            with open(new, "a"):
                pass
        else:
            os.makedirs(new, exist_ok=True)
        m["source"] = new

    driver = "cgroupfs"
    cg = lin.get("cgroupsPath")
    if cg is not None:
        if ":" in cg:
            driver = "systemd"
            lin["cgroupsPath"] = "system.slice:sdtest-cc:" + cid
        else:
            lin["cgroupsPath"] = "/sdtest-cc/" + cid
    sec = lin.get("seccomp")
    if sec:
        sec.pop("listenerPath", None)
        sec.pop("listenerMetadata", None)

    with open(os.path.join(bundle, "config.json"), "w") as f:
        json.dump(c, f, indent=2)
    print(driver)


if __name__ == "__main__":
    main()
