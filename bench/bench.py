#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""sdrun vs crun vs runc, side by side, in one run (started by bench/run inside a booted systemd).

Every runtime uses its systemd cgroup manager and the same busybox rootfs; each container gets its own
config.json that differs only in linux.cgroupsPath ("machine.slice:bench-<rt>:<id>"), written before the
timed command. Runtimes alternate within every iteration, in a rotating order. Times are wall-clock
times of the runtime's process (fork to reap, measured here); peak RSS is measured by GNU time in an extra,
untimed run per iteration.
"""

import argparse
import json
import os
import platform
import shutil
import signal
import subprocess
import sys
import tempfile
import time

RUNTIMES = ("sdrun", "crun", "runc")
GNU_TIME = "/usr/bin/time"  # Debian package "time"
LONG_SLEEP = ["/bin/sleep", "1000000"]

# name -> (description, target for sdrun as a multiple of crun's value, unit)
OPS = {
    "run": ("run /bin/true (create+start+wait+delete)", 0.75, "ms"),
    "create": ("create", 1.0, "ms"),
    "start": ("start", 1.0, "ms"),
    "delete": ("delete (stopped container)", 1.0, "ms"),
    "exec": ("exec /bin/true into a running container", 1.0, "ms"),
    "rss": ("peak RSS of the runtime during run", 1.0, "KiB"),
    "seq": ("N sequential runs, total", 0.75, "ms"),
    "many_first": ("create+start, first 10% of the many", None, "ms"),
    "many_last": ("create+start, last 10% of the many", None, "ms"),
    "many_growth": ("growth: last 10% / first 10% (1.0 = flat)", None, "x"),
    "list": ("list of the many", 1.0, "ms"),
    "delete_all": ("delete --force of all the many, total", 1.0, "ms"),
}


class BenchError(Exception):
    pass


def pct(values, p):
    """Nearest-rank percentile."""
    if not values:
        return None
    v = sorted(values)
    k = max(0, min(len(v) - 1, int(round(p / 100.0 * len(v) + 0.5)) - 1))
    return v[k]


def median(values):
    if not values:
        return None
    v = sorted(values)
    n = len(v)
    return v[n // 2] if n % 2 else (v[n // 2 - 1] + v[n // 2]) / 2.0


class Runtime:
    def __init__(self, name, argv, root, workdir, rootfs, base_config):
        self.name = name
        self.argv = argv + ["--root", root]
        self.root = root
        self.bundles = os.path.join(workdir, "bundles-" + name)
        os.makedirs(self.bundles, exist_ok=True)
        self.rootfs = rootfs
        self.base = base_config
        self.live = set()  # ids that may exist and must be cleaned up
        self.seq = 0
        self.errlog = os.path.join(workdir, "stderr-" + name)

    def new_id(self):
        self.seq += 1
        return "b%s%d" % (self.name, self.seq)

    def bundle(self, cid, args):
        cfg = json.loads(json.dumps(self.base))
        cfg["process"]["args"] = args
        cfg["root"]["path"] = self.rootfs
        cfg["linux"]["cgroupsPath"] = "machine.slice:bench-%s:%s" % (self.name, cid)
        d = os.path.join(self.bundles, cid)
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, "config.json"), "w") as f:
            json.dump(cfg, f)
        return d

    def drop_bundle(self, cid):
        shutil.rmtree(os.path.join(self.bundles, cid), ignore_errors=True)

    def call(self, args, check=True, capture=False):
        """Run the runtime; return (seconds, ru_maxrss (not the runtime's own: see peak_rss), returncode,
        stdout)."""
        with open(self.errlog, "w+b") as err:
            out = subprocess.PIPE if capture else subprocess.DEVNULL
            t0 = time.perf_counter()
            p = subprocess.Popen(self.argv + args, stdin=subprocess.DEVNULL, stdout=out, stderr=err)
            data = b""
            if capture:
                data = p.stdout.read()
                p.stdout.close()
            _, status, ru = os.wait4(p.pid, 0)
            t = time.perf_counter() - t0
            p.returncode = os.waitstatus_to_exitcode(status)
            if check and p.returncode != 0:
                err.seek(0)
                msg = err.read().decode(errors="replace").strip()
                raise BenchError("%s %s: exit %d: %s" % (self.name, " ".join(args), p.returncode, msg[-2000:]))
            return t, ru.ru_maxrss, p.returncode, data

    def peak_rss(self, args):
        """Peak RSS (KiB) of the runtime's process, measured by GNU time (ru_maxrss of its child)."""
        out = self.errlog + ".rss"
        with open(self.errlog, "w+b") as err:
            rc = subprocess.call([GNU_TIME, "-f", "%M", "-o", out, "--"] + self.argv + args,
                                 stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err)
            if rc != 0:
                err.seek(0)
                raise BenchError("%s %s (under %s): exit %d: %s" % (self.name, " ".join(args), GNU_TIME, rc,
                                                                   err.read().decode(errors="replace")[-2000:]))
        with open(out) as f:
            return int(f.read().split()[-1])

    def status(self, cid):
        _, _, rc, out = self.call(["state", cid], check=False, capture=True)
        if rc != 0:
            return None
        try:
            return json.loads(out).get("status")
        except ValueError:
            return None

    def wait_stopped(self, cid, timeout=10.0):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.status(cid) == "stopped":
                return
            time.sleep(0.002)
        raise BenchError("%s: container %s did not stop within %.0f s" % (self.name, cid, timeout))

    def cleanup(self):
        for cid in sorted(self.live):
            self.call(["delete", "--force", cid], check=False)
            self.drop_bundle(cid)
        self.live.clear()


def make_rootfs(path):
    bb = shutil.which("busybox")
    if not bb:
        raise BenchError("busybox is not installed (Debian package busybox-static)")
    if subprocess.run(["ldd", bb], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode == 0:
        raise BenchError("%s is dynamically linked: install busybox-static" % bb)
    for d in ("bin", "proc", "sys", "dev", "tmp", "etc", "root", "run"):
        os.makedirs(os.path.join(path, d), exist_ok=True)
    shutil.copy(bb, os.path.join(path, "bin", "busybox"))
    for a in ("sh", "true", "sleep", "cat", "ls", "ps"):
        os.symlink("busybox", os.path.join(path, "bin", a))
    with open(os.path.join(path, "etc", "passwd"), "w") as f:
        f.write("root:x:0:0:root:/root:/bin/sh\n")
    with open(os.path.join(path, "etc", "group"), "w") as f:
        f.write("root:x:0:\n")


def base_config(sdrun, workdir):
    """The runtime-spec default config (`sdrun spec`), with no terminal."""
    d = os.path.join(workdir, "spec")
    os.makedirs(d, exist_ok=True)
    subprocess.run([sdrun, "spec", "--bundle", d], check=True)
    with open(os.path.join(d, "config.json")) as f:
        cfg = json.load(f)
    # crun 1.8 refuses ociVersion 1.2+ ("unknown version specified"): the bundle uses nothing newer.
    cfg["ociVersion"] = "1.0.2"
    cfg["process"]["terminal"] = False
    cfg["root"]["readonly"] = True
    return cfg


def version(argv):
    try:
        out = subprocess.run(argv + ["--version"], capture_output=True, text=True, timeout=10).stdout
        return out.splitlines()[0].strip() if out else "?"
    except (OSError, subprocess.SubprocessError):
        return "?"


def rotated(rts, i):
    k = i % len(rts)
    return rts[k:] + rts[:k]


class Bench:
    def __init__(self, rts, opts):
        self.rts = rts
        self.opts = opts
        self.samples = {op: {rt.name: [] for rt in rts} for op in OPS}
        self.notes = []

    def add(self, op, rt, value):
        self.samples[op][rt.name].append(value)

    def single_ops(self):
        n = self.opts.iterations
        exec_ok = {}
        exec_ids = {}
        for rt in self.rts:
            cid = rt.new_id()
            b = rt.bundle(cid, LONG_SLEEP)
            rt.live.add(cid)
            rt.call(["create", "--bundle", b, cid])
            rt.call(["start", cid])
            exec_ids[rt.name] = cid
            _, _, rc, _ = rt.call(["exec", cid, "/bin/true"], check=False)
            exec_ok[rt.name] = rc == 0
            if rc != 0:
                with open(rt.errlog, errors="replace") as f:
                    why = f.read().strip().splitlines()
                self.notes.append("%s exec skipped: %s" % (rt.name, why[-1] if why else "exit %d" % rc))
        for i in range(n):
            for rt in rotated(self.rts, i):
                # run: create+start+wait+delete in one foreground command
                cid = rt.new_id()
                b = rt.bundle(cid, ["/bin/true"])
                rt.live.add(cid)
                t, _, _, _ = rt.call(["run", "--bundle", b, cid])
                rt.live.discard(cid)
                self.add("run", rt, t * 1000)
                # Peak RSS, untimed, through GNU time: ru_maxrss of a child forked from this (large) Python
                # process would carry Python's RSS across the exec.
                rt.live.add(cid)
                self.add("rss", rt, rt.peak_rss(["run", "--bundle", b, cid]))
                rt.live.discard(cid)
                rt.drop_bundle(cid)
                # create, start, delete separately
                cid = rt.new_id()
                b = rt.bundle(cid, ["/bin/true"])
                rt.live.add(cid)
                t, _, _, _ = rt.call(["create", "--bundle", b, cid])
                self.add("create", rt, t * 1000)
                t, _, _, _ = rt.call(["start", cid])
                self.add("start", rt, t * 1000)
                rt.wait_stopped(cid)
                t, _, _, _ = rt.call(["delete", cid])
                self.add("delete", rt, t * 1000)
                rt.live.discard(cid)
                rt.drop_bundle(cid)
                if exec_ok[rt.name]:
                    t, _, _, _ = rt.call(["exec", exec_ids[rt.name], "/bin/true"])
                    self.add("exec", rt, t * 1000)
            progress("single operations", i + 1, n)
        for rt in self.rts:
            rt.cleanup()

    def sequential(self):
        n = self.opts.seq
        total = {rt.name: 0.0 for rt in self.rts}
        for i in range(n):
            for rt in rotated(self.rts, i):
                cid = rt.new_id()
                b = rt.bundle(cid, ["/bin/true"])
                rt.live.add(cid)
                t, _, _, _ = rt.call(["run", "--bundle", b, cid])
                rt.live.discard(cid)
                rt.drop_bundle(cid)
                total[rt.name] += t
            if (i + 1) % 10 == 0 or i + 1 == n:
                progress("%d sequential runs" % n, i + 1, n)
        for rt in self.rts:
            self.add("seq", rt, total[rt.name] * 1000)

    def many(self):
        n = self.opts.many
        tenth = max(1, n // 10)
        for k, rt in enumerate(rotated(self.rts, 0)):
            per = []
            ids = []
            for i in range(n):
                cid = rt.new_id()
                b = rt.bundle(cid, LONG_SLEEP)
                rt.live.add(cid)
                t1, _, _, _ = rt.call(["create", "--bundle", b, cid])
                t2, _, _, _ = rt.call(["start", cid])
                per.append((t1 + t2) * 1000)
                ids.append(cid)
                if (i + 1) % 50 == 0 or i + 1 == n:
                    progress("%d long-lived containers (%s)" % (n, rt.name), i + 1, n)
            self.samples["many_first"][rt.name] = per[:tenth]
            self.samples["many_last"][rt.name] = per[-tenth:]
            self.add("many_growth", rt, median(per[-tenth:]) / median(per[:tenth]))
            for _ in range(5):
                t, _, _, out = rt.call(["list"], capture=True)
                self.add("list", rt, t * 1000)
            listed = sum(1 for cid in ids if cid.encode() in out)
            if listed != n:
                raise BenchError("%s list shows %d of the %d containers" % (rt.name, listed, n))
            t0 = time.perf_counter()
            for cid in ids:
                rt.call(["delete", "--force", cid])
                rt.live.discard(cid)
            self.add("delete_all", rt, (time.perf_counter() - t0) * 1000)
            for cid in ids:
                rt.drop_bundle(cid)

    def summary(self):
        res = {}
        for op, (desc, target, unit) in OPS.items():
            row = {"description": desc, "unit": unit, "target_vs_crun": target}
            for rt in self.rts:
                v = self.samples[op][rt.name]
                if not v:
                    continue
                row[rt.name] = {"n": len(v), "median": median(v), "p95": pct(v, 95), "min": min(v), "max": max(v)}
            sd = row.get("sdrun")
            for other in ("crun", "runc"):
                o = row.get(other)
                if sd and o and o["median"]:
                    row["sdrun/" + other] = sd["median"] / o["median"]
            if target is not None and "sdrun/crun" in row:
                row["target_met"] = row["sdrun/crun"] <= target
            res[op] = row
        return res


def progress(what, i, n):
    print("  %s: %d/%d" % (what, i, n), file=sys.stderr, flush=True)


def fmt(v, unit):
    if v is None:
        return "-"
    if unit == "KiB":
        return "%.0f" % v
    if unit == "x":
        return "%.2f" % v
    return "%.1f" % v if v < 1000 else "%.0f" % v


def print_table(summary, rts, meta):
    names = [rt.name for rt in rts]
    print()
    print("sdrun benchmark — %s, %s, %d iterations (seq %d, many %d)" % (
        meta["host"], meta["cgroup_layout"], meta["iterations"], meta["seq"], meta["many"]))
    for rt in names:
        print("  %-5s %s" % (rt, meta["versions"][rt]))
    hdr = "%-44s %5s" % ("operation", "unit")
    for rt in names:
        hdr += " %10s %10s" % (rt + " med", rt + " p95")
    hdr += " %8s %8s %6s %5s" % ("sd/crun", "sd/runc", "target", "met")
    print(hdr)
    print("-" * len(hdr))
    for op, row in summary.items():
        if not any(rt in row for rt in names):
            continue  # not measured in this run (--only, or a count of 0)
        unit = row["unit"]
        line = "%-44s %5s" % (row["description"][:44], unit)
        for rt in names:
            s = row.get(rt)
            line += " %10s %10s" % (fmt(s and s["median"], unit), fmt(s and s["p95"], unit))
        r1, r2 = row.get("sdrun/crun"), row.get("sdrun/runc")
        tgt = row["target_vs_crun"]
        met = row.get("target_met")
        line += " %8s %8s %6s %5s" % ("%.2f" % r1 if r1 is not None else "-", "%.2f" % r2 if r2 is not None else "-",
                                      "<=%.2f" % tgt if tgt is not None else "", "" if met is None else ("yes" if met else "NO"))
        print(line)
    print()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--iterations", type=int, default=int(os.environ.get("BENCH_ITERATIONS", 40)))
    ap.add_argument("--seq", type=int, default=int(os.environ.get("BENCH_SEQ", 100)))
    ap.add_argument("--many", type=int, default=int(os.environ.get("BENCH_MANY", 200)))
    ap.add_argument("--only", default="single,seq,many", help="comma-separated: single, seq, many")
    ap.add_argument("--json", default=None, help="summary file (default $SDRUN_BUILDDIR/bench-results.json)")
    opts = ap.parse_args()
    if opts.json is None:
        opts.json = os.path.join(os.environ.get("SDRUN_BUILDDIR", "."), "bench-results.json")
    parts = set(opts.only.split(","))

    sdrun = os.environ.get("SDRUN") or "sdrun"
    crun = os.environ.get("CRUN") or shutil.which("crun")
    runc = os.environ.get("RUNC") or shutil.which("runc")
    if not os.access(GNU_TIME, os.X_OK):
        print("bench: %s is missing (Debian package time)" % GNU_TIME, file=sys.stderr)
        return 1
    if not crun or not runc:
        print("bench: crun and runc must be installed (Debian packages crun, runc)", file=sys.stderr)
        return 1

    # SIGTERM (e.g. the box going down) unwinds through the finally below like Ctrl-C.
    signal.signal(signal.SIGTERM, lambda *_: (_ for _ in ()).throw(KeyboardInterrupt()))

    workdir = tempfile.mkdtemp(prefix="sdrun-bench.")
    rts = []
    rc = 1
    try:
        rootfs = os.path.join(workdir, "rootfs")
        make_rootfs(rootfs)
        cfg = base_config(sdrun, workdir)
        states = os.path.join(workdir, "state")
        rts = [
            Runtime("sdrun", [sdrun], os.path.join(states, "sdrun"), workdir, rootfs, cfg),
            Runtime("crun", [crun, "--systemd-cgroup"], os.path.join(states, "crun"), workdir, rootfs, cfg),
            Runtime("runc", [runc, "--systemd-cgroup"], os.path.join(states, "runc"), workdir, rootfs, cfg),
        ]
        meta = {
            "host": platform.node() + " " + platform.release(),
            "cgroup_layout": "unified" if os.path.exists("/sys/fs/cgroup/cgroup.controllers") else "hybrid/legacy",
            "cpus": os.cpu_count(),
            "iterations": opts.iterations, "seq": opts.seq, "many": opts.many,
            "versions": {"sdrun": version([sdrun]), "crun": version([crun]), "runc": version([runc])},
            "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        }
        b = Bench(rts, opts)
        if "single" in parts:
            b.single_ops()
        if "seq" in parts and opts.seq > 0:
            b.sequential()
        if "many" in parts and opts.many > 0:
            b.many()
        s = b.summary()
        # The "seq" row is one total per runtime: label it with the count.
        s["seq"]["description"] = "%d sequential runs, total" % opts.seq
        print_table(s, rts, meta)
        for note in b.notes:
            print("note: " + note)
        out = {"meta": meta, "notes": b.notes, "results": s}
        os.makedirs(os.path.dirname(os.path.abspath(opts.json)), exist_ok=True)
        with open(opts.json, "w") as f:
            json.dump(out, f, indent=2)
        print("JSON summary: " + opts.json)
        rc = 0
    except BenchError as e:
        print("bench: FAILED: %s" % e, file=sys.stderr)
    except KeyboardInterrupt:
        print("bench: interrupted", file=sys.stderr)
        rc = 130
    finally:
        for rt in rts:
            try:
                rt.cleanup()
            except Exception as e:  # noqa: BLE001 - keep cleaning the others
                print("bench: cleanup of %s: %s" % (rt.name, e), file=sys.stderr)
        shutil.rmtree(workdir, ignore_errors=True)
    return rc


if __name__ == "__main__":
    sys.exit(main())
