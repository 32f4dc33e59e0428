#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""sdrun vs crun vs runc, side by side, in one run (started by bench/run inside a booted systemd).

Every runtime uses its systemd cgroup manager and the same busybox rootfs; each container gets its own
config.json that differs only in linux.cgroupsPath ("machine.slice:bench-<rt>:<id>"), written before the
timed command. Runtimes alternate within every iteration, in a rotating order. Times are wall-clock
times of the runtime's process (fork to reap, measured here); peak RSS is measured by GNU time in an extra,
untimed run per iteration. CPU time is user+sys of the runtime's process from wait4()'s rusage, which also
counts the children it waited for. SDRUN_BASELINE=/path/to/another/sdrun adds a runtime "base" (another
sdrun build, e.g. the code before a change) measured in the same run.
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
import threading
import time

SRC = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RUNTIMES = ("sdrun", "crun", "runc", "base")  # base: $SDRUN_BASELINE, another sdrun build
GNU_TIME = "/usr/bin/time"  # Debian package "time"
LONG_SLEEP = ["/bin/sleep", "1000000"]

# name -> (description, target for sdrun as a multiple of crun's value (issue 18's), unit)
OPS = {
    "run": ("run /bin/true (create+start+wait+delete)", 0.75, "ms"),
    "create": ("create", 0.85, "ms"),
    "start": ("start", 1.0, "ms"),
    "delete": ("delete (stopped container)", 0.75, "ms"),
    "exec": ("exec /bin/true into a running container", 0.75, "ms"),
    "run_sc": ("run /bin/true, Podman's seccomp profile", 0.75, "ms"),
    "create_sc": ("create, Podman's seccomp profile", 0.85, "ms"),
    "run_docker": ("run /bin/true, Docker 20.10's config", 0.70, "ms"),
    "create_docker": ("create, Docker 20.10's config", 0.70, "ms"),
    "run_ctr": ("run /bin/true, containerd 1.6 (ctr)'s config", 0.70, "ms"),
    "create_ctr": ("create, containerd 1.6 (ctr)'s config", 0.70, "ms"),
    "rss": ("peak RSS of the runtime during run", 0.90, "KiB"),
    "seq": ("N sequential runs, total", 0.75, "ms"),
    "pid1": ("PID 1 CPU per container (seq, per block)", 1.0, "ms"),
    "pid1_sched": ("PID 1 on-CPU per container (schedstat)", 1.0, "ms"),
    "host": ("host CPU per container: PID 1+bus+machined+journald", 1.0, "ms"),
    "many_first": ("create+start, first 10% of the many", None, "ms"),
    "many_last": ("create+start, last 10% of the many", None, "ms"),
    "many_growth": ("growth: last 10% / first 10% (1.0 = flat)", None, "x"),
    "list": ("list of the many", 1.0, "ms"),
    "delete_all": ("delete --force of all the many, total", 1.0, "ms"),
    # issue 36's churn: containers/s >= 1.2x crun's is wall time per container <= 1/1.2 of crun's
    "churn_per": ("churn: wall per container, parallel run loops", 0.83, "ms"),
    "churn_p50": ("churn: run latency p50 in the loops", None, "ms"),
    "churn_p99": ("churn: run latency p99 in the loops", 1.0, "ms"),
    "churn_fail": ("churn: failed runs (target: none)", None, "n"),
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
        self.last_cpu = 0.0  # user+sys seconds of the last call()'s process and its waited-for children
        self.errlog = os.path.join(workdir, "stderr-" + name)
        self.annotations = {}  # added to every config of this runtime (--base-annotation)

    def new_id(self):
        self.seq += 1
        return "b%s%d" % (self.name, self.seq)

    def bundle(self, cid, args, seccomp=None, template=None):
        cfg = json.loads(json.dumps(template or self.base))
        cfg["process"]["args"] = args
        if seccomp is not None:
            cfg["linux"]["seccomp"] = seccomp
        cfg["root"]["path"] = self.rootfs
        cfg["linux"]["cgroupsPath"] = "machine.slice:bench-%s:%s" % (self.name, cid)
        if self.annotations:
            cfg.setdefault("annotations", {}).update(self.annotations)
        d = os.path.join(self.bundles, cid)
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, "config.json"), "w") as f:
            json.dump(cfg, f)
        return d

    def drop_bundle(self, cid):
        shutil.rmtree(os.path.join(self.bundles, cid), ignore_errors=True)

    def call(self, args, check=True, capture=False):
        """Run the runtime; return (seconds, ru_maxrss (not the runtime's own: see peak_rss), returncode,
        stdout). self.last_cpu is set to the process's ru_utime+ru_stime (seconds), which include the
        children it waited for (the container's init for a foreground run, the process of an exec)."""
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
            self.last_cpu = ru.ru_utime + ru.ru_stime
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
        self.cpu = {op: {rt.name: [] for rt in rts} for op in OPS}  # runtime's user+sys, ms
        self.pid1 = {}  # runtime -> {"runs", "ticks", "ms_per_run"} over the whole seq phase
        self.notes = []
        # What every Podman container carries (tests/podman/podman-4.3-config.json, as Podman 4.3 wrote it).
        src = os.path.join(SRC, "tests", "podman", "podman-4.3-config.json")
        with open(src) as f:
            self.seccomp = json.load(f)["linux"]["seccomp"]
        self.clients = {}  # "docker", "ctr" -> the captured config, adapted to this host
        self.host = {}  # runtime -> {daemon: ms per container} over the whole seq phase
        self.floor = {"scope": [], "unshare": []}  # (wall ms, cpu ms) of the floor commands
        self.counts = {}  # runtime -> the D-Bus and journal counts per container (--only count)

    def load_clients(self, workdir):
        """The configs Docker 20.10 and containerd 1.6's ctr wrote (tests/client-configs/*/default.json),
        adapted to this host by tests/client-configs/prepare.py once (the bind-mount sources it makes are
        shared by every container); each container then gets its own cgroupsPath and /bin/true."""
        corpus = os.path.join(SRC, "tests", "client-configs")
        for client in ("docker", "ctr"):
            d = os.path.join(workdir, "client-" + client)
            os.makedirs(d, exist_ok=True)
            subprocess.run([sys.executable, os.path.join(corpus, "prepare.py"),
                            os.path.join(corpus, client, "default.json"), d, "bench"],
                           check=True, stdout=subprocess.DEVNULL)
            with open(os.path.join(d, "config.json")) as f:
                cfg = json.load(f)
            cfg["process"]["terminal"] = False
            self.clients[client] = cfg

    def add(self, op, rt, value, cpu=None):
        self.samples[op][rt.name].append(value)
        if cpu is not None:
            self.cpu[op][rt.name].append(cpu)

    def add_last(self, op, rt, t):
        """Add a wall time (seconds) and the CPU time of the call that took it."""
        self.add(op, rt, t * 1000, rt.last_cpu * 1000)

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
                self.add_last("run", rt, t)
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
                self.add_last("create", rt, t)
                t, _, _, _ = rt.call(["start", cid])
                self.add_last("start", rt, t)
                rt.wait_stopped(cid)
                t, _, _, _ = rt.call(["delete", cid])
                self.add_last("delete", rt, t)
                rt.live.discard(cid)
                rt.drop_bundle(cid)
                if exec_ok[rt.name]:
                    t, _, _, _ = rt.call(["exec", exec_ids[rt.name], "/bin/true"])
                    self.add_last("exec", rt, t)
                # the same with the seccomp profile a Podman container has
                cid = rt.new_id()
                b = rt.bundle(cid, ["/bin/true"], seccomp=self.seccomp)
                rt.live.add(cid)
                t, _, _, _ = rt.call(["run", "--bundle", b, cid])
                self.add_last("run_sc", rt, t)
                rt.live.discard(cid)
                rt.drop_bundle(cid)
                cid = rt.new_id()
                b = rt.bundle(cid, ["/bin/true"], seccomp=self.seccomp)
                rt.live.add(cid)
                t, _, _, _ = rt.call(["create", "--bundle", b, cid])
                self.add_last("create_sc", rt, t)
                rt.call(["start", cid])
                rt.wait_stopped(cid)
                rt.call(["delete", cid])
                rt.live.discard(cid)
                rt.drop_bundle(cid)
                # the same with the whole config Docker and containerd's ctr give a container
                for client, tmpl in self.clients.items():
                    cid = rt.new_id()
                    b = rt.bundle(cid, ["/bin/true"], template=tmpl)
                    rt.live.add(cid)
                    t, _, _, _ = rt.call(["run", "--bundle", b, cid])
                    self.add_last("run_" + client, rt, t)
                    rt.live.discard(cid)
                    rt.drop_bundle(cid)
                    cid = rt.new_id()
                    b = rt.bundle(cid, ["/bin/true"], template=tmpl)
                    rt.live.add(cid)
                    t, _, _, _ = rt.call(["create", "--bundle", b, cid])
                    self.add_last("create_" + client, rt, t)
                    rt.call(["start", cid])
                    rt.wait_stopped(cid)
                    rt.call(["delete", cid])
                    rt.live.discard(cid)
                    rt.drop_bundle(cid)
            self.floor_once(i)
            progress("single operations", i + 1, n)
        for rt in self.rts:
            rt.cleanup()

    def one_run(self, rt):
        cid = rt.new_id()
        b = rt.bundle(cid, ["/bin/true"])
        rt.live.add(cid)
        rt.call(["run", "--bundle", b, cid])
        rt.live.discard(cid)
        rt.drop_bundle(cid)

    def one_lifecycle(self, rt):
        """create, start, wait until stopped, delete: what Docker and containerd's shims do."""
        cid = rt.new_id()
        b = rt.bundle(cid, ["/bin/true"])
        rt.live.add(cid)
        rt.call(["create", "--bundle", b, cid])
        rt.call(["start", cid])
        rt.wait_stopped(cid)
        rt.call(["delete", cid])
        rt.live.discard(cid)
        rt.drop_bundle(cid)

    def count(self, workdir):
        """What one container costs the rest of the host, counted rather than timed: every D-Bus message on
        the system bus (`busctl monitor`, by sender and receiver: the runtime, PID 1, machined, the broker)
        and every journal line (by the program that wrote it), over --count containers of one runtime after
        PID 1 went idle, until PID 1 is idle again and machined has collected the last machine; once for
        `run` and once for create, start, wait, delete."""
        k = self.opts.count
        for flow, one in (("run", self.one_run), ("create+start+delete", self.one_lifecycle)):
            self.counts[flow] = {}
            for rt in self.rts:
                one(rt)  # warm: machined started, caches filled
                self.pid1_idle()
                mon_path = os.path.join(workdir, "monitor-" + rt.name)
                with open(mon_path, "w") as out:
                    mon = subprocess.Popen(["busctl", "--json=short", "monitor"], stdin=subprocess.DEVNULL,
                                           stdout=out, stderr=subprocess.DEVNULL)
                try:
                    time.sleep(1.0)  # the monitor is connected
                    owners = bus_owners()
                    cursor = journal_cursor()
                    t0 = time.time()
                    for _ in range(k):
                        one(rt)
                    self.pid1_idle()
                    time.sleep(1.0)  # machined's collection of the last machine
                    t1 = time.time()
                    for role, names in bus_owners().items():
                        owners[role] |= names
                finally:
                    mon.terminate()
                    mon.wait()
                c = count_messages(mon_path, owners, t0, t1, k)
                c.update(count_journal(cursor, k))
                self.counts[flow][rt.name] = c
                progress("counted %d of %s" % (k, flow), self.rts.index(rt) + 1, len(self.rts))

    def floor_once(self, i):
        """The floor under any runtime's `run`: a transient scope with nothing in it (systemd-run --scope:
        StartTransientUnit, the job, /bin/true, the scope's end), and the namespaces alone (unshare)."""
        for what, argv in (("scope", ["systemd-run", "--scope", "--quiet", "--collect", "--slice=machine.slice",
                                      "--unit=bench-floor-%d" % i, "/bin/true"]),
                           ("unshare", ["unshare", "-fpmiun", "/bin/true"])):
            t0 = time.perf_counter()
            p = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            err = p.stderr.read()
            p.stderr.close()
            _, status, ru = os.wait4(p.pid, 0)
            t = time.perf_counter() - t0
            if os.waitstatus_to_exitcode(status) != 0:
                raise BenchError("%s: %s" % (" ".join(argv), err.decode(errors="replace")[-500:]))
            self.floor[what].append((t * 1000, (ru.ru_utime + ru.ru_stime) * 1000))

    def sequential(self):
        """N back-to-back runs per runtime, in blocks of --seq-block runs of one runtime.

        PID 1's CPU time cannot be told apart per run when runtimes alternate (systemd finishes a scope's
        clean-up after the runtime has returned, during the next runtime's run), so each runtime runs a
        block of consecutive runs; before and after every block PID 1 is left to go idle (its utime+stime
        from /proc/1/stat stops moving) and the delta over the block is that runtime's. The blocks rotate
        like the iterations elsewhere, so slow drifts of the machine still hit every runtime alike."""
        n = self.opts.seq
        block = max(1, self.opts.seq_block)
        tick_ms = 1000.0 / os.sysconf("SC_CLK_TCK")
        total = {rt.name: 0.0 for rt in self.rts}
        cpu = {rt.name: 0.0 for rt in self.rts}
        done = {rt.name: 0 for rt in self.rts}
        ticks = {rt.name: 0 for rt in self.rts}
        host = {rt.name: {d: 0 for d in DAEMONS} for rt in self.rts}
        r = 0
        while any(done[rt.name] < n for rt in self.rts):
            for rt in rotated(self.rts, r):
                k = min(block, n - done[rt.name])
                if k <= 0:
                    continue
                before = self.pid1_idle()
                sched0 = pid1_sched_ns()
                d0 = daemon_ticks()
                for _ in range(k):
                    cid = rt.new_id()
                    b = rt.bundle(cid, ["/bin/true"])
                    rt.live.add(cid)
                    t, _, _, _ = rt.call(["run", "--bundle", b, cid])
                    rt.live.discard(cid)
                    rt.drop_bundle(cid)
                    total[rt.name] += t
                    cpu[rt.name] += rt.last_cpu
                after = self.pid1_idle()
                sched1 = pid1_sched_ns()
                d1 = daemon_ticks()
                dd = {d: sum(v - d0[d].get(pid, 0) for pid, v in d1[d].items()) for d in DAEMONS}
                for d in DAEMONS:
                    host[rt.name][d] += dd[d]
                self.add("host", rt, sum(dd.values()) * tick_ms / k)
                ticks[rt.name] += after - before
                self.add("pid1", rt, (after - before) * tick_ms / k)
                if sched0 is not None and sched1 is not None:
                    self.add("pid1_sched", rt, (sched1 - sched0) / 1e6 / k)
                done[rt.name] += k
            r += 1
            progress("%d sequential runs" % n, min(done.values()), n)
        for rt in self.rts:
            self.add("seq", rt, total[rt.name] * 1000, cpu[rt.name] * 1000)
            self.pid1[rt.name] = {"runs": n, "ticks": ticks[rt.name], "ms_per_run": ticks[rt.name] * tick_ms / n}
            self.host[rt.name] = {d: host[rt.name][d] * tick_ms / n for d in DAEMONS}

    def churn(self):
        """--churn-workers loops of `run /bin/true`, side by side for --churn-seconds, one runtime at a time
        (rotated, so that drift hits them alike): what a busy CI node or a Kubernetes node restarting pods
        does. Per runtime: the wall time per completed container (the inverse of containers/s), the run
        latencies' p50 and p99, and the runs that failed (each one noted with its error)."""
        secs, workers = self.opts.churn_seconds, self.opts.churn_workers
        for rt in rotated(self.rts, 0):
            lat, fails, errors = [], [0], []
            lock = threading.Lock()
            stop = time.monotonic() + secs

            def loop(w):
                k = 0
                errlog = "%s.churn%d" % (rt.errlog, w)
                while time.monotonic() < stop:
                    k += 1
                    cid = "c%s%dw%d" % (rt.name, k, w)
                    b = rt.bundle(cid, ["/bin/true"])
                    with open(errlog, "w+b") as err:
                        t0 = time.perf_counter()
                        rc = subprocess.call(rt.argv + ["run", "--bundle", b, cid], stdin=subprocess.DEVNULL,
                                             stdout=subprocess.DEVNULL, stderr=err)
                        t = time.perf_counter() - t0
                        if rc != 0:
                            err.seek(0)
                            msg = err.read().decode(errors="replace").strip()[-300:]
                    with lock:
                        if rc == 0:
                            lat.append(t * 1000)
                        else:
                            fails[0] += 1
                            errors.append("%s run %s: exit %d: %s" % (rt.name, cid, rc, msg))
                    if rc != 0:
                        subprocess.call(rt.argv + ["delete", "--force", cid], stdin=subprocess.DEVNULL,
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                    rt.drop_bundle(cid)

            self.pid1_idle()
            t0 = time.monotonic()
            threads = [threading.Thread(target=loop, args=(w,)) for w in range(workers)]
            for th in threads:
                th.start()
            for th in threads:
                th.join()
            wall = time.monotonic() - t0
            if not lat:
                raise BenchError("%s: no run succeeded in the churn loops: %s" % (rt.name, errors[:1]))
            self.add("churn_per", rt, wall * 1000 / len(lat))
            self.add("churn_p50", rt, median(lat))
            self.add("churn_p99", rt, pct(lat, 99))
            self.add("churn_fail", rt, fails[0])
            self.notes.extend(errors[:5])
            progress("churn, %d loops for %d s (%s): %d containers, %.1f/s, %d failed" % (
                workers, secs, rt.name, len(lat), len(lat) / wall, fails[0]), 1, 1)

    def pid1_idle(self, settle=0.15, timeout=5.0):
        """PID 1's utime+stime (clock ticks) once it has gone idle: its on-CPU time (/proc/1/schedstat, ns)
        grew by less than 0.5 ms in `settle` seconds, or without schedstats its ticks did not move."""
        deadline = time.monotonic() + timeout
        while True:
            t0, s0 = pid1_ticks(), pid1_sched_ns()
            time.sleep(settle)
            t1, s1 = pid1_ticks(), pid1_sched_ns()
            if (s1 - s0 < 500000) if s0 is not None and s1 is not None else t1 == t0:
                return t1
            if time.monotonic() >= deadline:
                break
        note = "PID 1 did not go idle within %.0f s between seq blocks (its CPU numbers include other work)" % timeout
        if note not in self.notes:
            self.notes.append(note)
        return t1

    def many(self):
        n = self.opts.many
        tenth = max(1, n // 10)
        for k, rt in enumerate(rotated(self.rts, 0)):
            per = []
            per_cpu = []
            ids = []
            for i in range(n):
                cid = rt.new_id()
                b = rt.bundle(cid, LONG_SLEEP)
                rt.live.add(cid)
                t1, _, _, _ = rt.call(["create", "--bundle", b, cid])
                c1 = rt.last_cpu
                t2, _, _, _ = rt.call(["start", cid])
                per.append((t1 + t2) * 1000)
                per_cpu.append((c1 + rt.last_cpu) * 1000)
                ids.append(cid)
                if (i + 1) % 50 == 0 or i + 1 == n:
                    progress("%d long-lived containers (%s)" % (n, rt.name), i + 1, n)
            self.samples["many_first"][rt.name] = per[:tenth]
            self.samples["many_last"][rt.name] = per[-tenth:]
            self.cpu["many_first"][rt.name] = per_cpu[:tenth]
            self.cpu["many_last"][rt.name] = per_cpu[-tenth:]
            self.add("many_growth", rt, median(per[-tenth:]) / median(per[:tenth]))
            for _ in range(5):
                t, _, _, out = rt.call(["list"], capture=True)
                self.add_last("list", rt, t)
            listed = sum(1 for cid in ids if cid.encode() in out)
            if listed != n:
                raise BenchError("%s list shows %d of the %d containers" % (rt.name, listed, n))
            t0 = time.perf_counter()
            c = 0.0
            for cid in ids:
                rt.call(["delete", "--force", cid])
                c += rt.last_cpu
                rt.live.discard(cid)
            self.add("delete_all", rt, (time.perf_counter() - t0) * 1000, c * 1000)
            for cid in ids:
                rt.drop_bundle(cid)

    def summary(self):
        res = {}
        names = [rt.name for rt in self.rts]
        for op, (desc, target, unit) in OPS.items():
            row = {"description": desc, "unit": unit, "target_vs_crun": target}
            for name in names:
                v = self.samples[op][name]
                if not v:
                    continue
                row[name] = {"n": len(v), "median": median(v), "p95": pct(v, 95), "min": min(v), "max": max(v)}
                c = self.cpu[op][name]
                if c:
                    row[name]["cpu"] = {"n": len(c), "median": median(c), "p95": pct(c, 95)}
                if op == "pid1" and name in self.pid1:
                    row[name].update(self.pid1[name])
                if op == "host" and name in self.host:
                    row[name]["ms_per_run_by_daemon"] = self.host[name]
            sd = row.get("sdrun")
            for other in names:
                o = row.get(other)
                if other == "sdrun" or not sd or not o:
                    continue
                if o["median"]:
                    row["sdrun/" + other] = sd["median"] / o["median"]
                if "cpu" in sd and "cpu" in o and o["cpu"]["median"]:
                    row["cpu sdrun/" + other] = sd["cpu"]["median"] / o["cpu"]["median"]
            if target is not None and "sdrun/crun" in row:
                row["target_met"] = row["sdrun/crun"] <= target
            res[op] = row
        return res


def pid1_ticks():
    """utime+stime of PID 1 (the box's systemd) in clock ticks, from /proc/1/stat."""
    with open("/proc/1/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])  # fields 14 and 15 of proc(5), counted after the comm


def bus_owners():
    """The unique names of PID 1 and machined on the system bus."""
    res = {"pid1": set(), "machined": set()}
    for role, name in (("pid1", "org.freedesktop.systemd1"), ("machined", "org.freedesktop.machine1")):
        p = subprocess.run(["busctl", "--json=short", "call", "org.freedesktop.DBus", "/org/freedesktop/DBus",
                            "org.freedesktop.DBus", "GetNameOwner", "s", name], capture_output=True, text=True)
        if p.returncode == 0:
            res[role].add(json.loads(p.stdout)["data"][0])
    return res


def journal_cursor():
    out = subprocess.run(["journalctl", "-q", "-n", "0", "--show-cursor"], capture_output=True, text=True).stdout
    for line in out.splitlines():
        if line.startswith("-- cursor: "):
            return line[len("-- cursor: "):]
    return None


def count_messages(path, owners, t0, t1, k):
    """Per container: messages by type, method calls as "from -> to Member", signals as "from Member",
    AddMatch by whom; roles: runtime (any other connection), pid1, machined, broker."""
    def role(name):
        if name in (None, ""):
            return "all"
        if name == "org.freedesktop.DBus":
            return "broker"
        if name == "org.freedesktop.systemd1" or name in owners["pid1"]:
            return "pid1"
        if name == "org.freedesktop.machine1" or name in owners["machined"]:
            return "machined"
        return "runtime"

    c = {}

    def bump(key):
        c[key] = c.get(key, 0) + 1

    with open(path) as f:
        for line in f:
            try:
                m = json.loads(line)
            except ValueError:
                continue
            ts = m.get("timestamp-realtime", 0) / 1e6
            if ts < t0 or ts > t1:
                continue
            t = m.get("type")
            src, dst = role(m.get("sender")), role(m.get("destination"))
            bump("bus: messages, all")
            bump("bus: %s" % t)
            if t == "method_call":
                bump("call %s -> %s %s" % (src, dst, m.get("member")))
            elif t == "signal":
                bump("signal %s %s" % (src, m.get("member")))
            elif t == "error":
                bump("error %s -> %s" % (src, dst))
    return {key: v / k for key, v in c.items()}


def count_journal(cursor, k):
    """Per container: journal lines by writer ("systemd" is PID 1)."""
    argv = ["journalctl", "-q", "-o", "json"] + (["--after-cursor", cursor] if cursor else [])
    out = subprocess.run(argv, capture_output=True, text=True).stdout
    c = {}
    for line in out.splitlines():
        try:
            e = json.loads(line)
        except ValueError:
            continue
        who = e.get("SYSLOG_IDENTIFIER") or e.get("_COMM") or "?"
        if who == "dbus-daemon" and "Monitoring connection" in str(e.get("MESSAGE")):
            continue  # the monitor's own
        key = "journal: " + who
        c[key] = c.get(key, 0) + 1
        c["journal: lines, all"] = c.get("journal: lines, all", 0) + 1
    return {key: v / k for key, v in c.items()}


# The host's daemons that work for every container, by /proc/PID/comm (15 characters at most).
DAEMONS = ("systemd", "dbus-daemon", "systemd-machine", "systemd-journal")


def daemon_ticks():
    """{comm: {pid: utime+stime ticks}} of PID 1 and the processes named in DAEMONS (other processes called
    "systemd" are user managers: only PID 1 counts). A daemon that started during a block (machined is
    started on demand and exits when idle) counts from zero; one that exited loses its last ticks."""
    res = {d: {} for d in DAEMONS}
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % pid) as f:
                head, tail = f.read().rsplit(")", 1)
        except OSError:
            continue
        comm = head.split("(", 1)[1]
        if comm not in res or (comm == "systemd" and pid != "1"):
            continue
        fields = tail.split()
        res[comm][int(pid)] = int(fields[11]) + int(fields[12])
    return res


def pid1_sched_ns():
    """Time PID 1's main thread spent on a CPU (ns, /proc/1/schedstat), or None without schedstats."""
    try:
        with open("/proc/1/schedstat") as f:
            return int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return None


def progress(what, i, n):
    print("  %s: %d/%d" % (what, i, n), file=sys.stderr, flush=True)


def fmt(v, unit):
    if v is None:
        return "-"
    if unit == "KiB":
        return "%.0f" % v
    if unit == "x":
        return "%.2f" % v
    if unit == "n":
        return "%d" % v
    return "%.1f" % v if v < 1000 else "%.0f" % v


def print_table(summary, rts, meta):
    names = [rt.name for rt in rts]
    others = [n for n in names if n != "sdrun"]
    print()
    print("sdrun benchmark — %s, %s, %d iterations (seq %d in blocks of %d, many %d)" % (
        meta["host"], meta["cgroup_layout"], meta["iterations"], meta["seq"], meta["seq_block"], meta["many"]))
    print("  load average at start %s, at end %s" % (meta["load_start"], meta["load_end"]))
    for rt in names:
        print("  %-5s %s" % (rt, meta["versions"][rt]))
    hdr = "%-44s %5s" % ("operation", "unit")
    for rt in names:
        hdr += " %10s %10s %10s" % (rt + " med", rt + " p95", rt + " cpu")
    for o in others:
        hdr += " %8s" % ("sd/" + o)
    hdr += " %6s %5s" % ("target", "met")
    print(hdr)
    print("-" * len(hdr))
    for op, row in summary.items():
        if not any(rt in row for rt in names):
            continue  # not measured in this run (--only, or a count of 0)
        unit = row["unit"]
        line = "%-44s %5s" % (row["description"][:44], unit)
        for rt in names:
            s = row.get(rt)
            c = s and s.get("cpu")
            line += " %10s %10s %10s" % (fmt(s and s["median"], unit), fmt(s and s["p95"], unit),
                                         fmt(c and c["median"], "ms"))
        for o in others:
            r = row.get("sdrun/" + o)
            line += " %8s" % ("%.2f" % r if r is not None else "-")
        tgt = row["target_vs_crun"]
        met = row.get("target_met")
        line += " %6s %5s" % ("<=%.2f" % tgt if tgt is not None else "",
                              "" if met is None else ("yes" if met else "NO"))
        print(line)
    pid1 = summary.get("pid1", {})
    if any(rt in pid1 for rt in names):
        print()
        print("PID 1 CPU per container over all seq runs (utime+stime delta / runs): " + ", ".join(
            "%s %.2f ms (%d ticks / %d)" % (rt, pid1[rt]["ms_per_run"], pid1[rt]["ticks"], pid1[rt]["runs"])
            for rt in names if rt in pid1))
    host = summary.get("host", {})
    if any(rt in host for rt in names):
        print("host CPU per container over all seq runs (utime+stime / runs, ms): " + "; ".join(
            "%s %s" % (rt, ", ".join("%s %.2f" % (d, v) for d, v in host[rt]["ms_per_run_by_daemon"].items()))
            for rt in names if rt in host))
    floor = meta.get("floor") or {}
    for what, row in floor.items():
        print("floor %-8s wall median %.1f ms, p95 %.1f ms, cpu %.1f ms; sdrun run / it: %s" % (
            what, row["median"], row["p95"], row["cpu"],
            "%.2f" % row["sdrun run/floor"] if row.get("sdrun run/floor") else "-"))
    for flow, counts in (meta.get("counts") or {}).items():
        keys = sorted({key for v in counts.values() for key in v})
        print()
        print("per container (%s /bin/true), counted over %d containers of each runtime:" % (flow, meta["count"]))
        print("%-60s" % "" + "".join(" %8s" % rt for rt in counts))
        for key in keys:
            print("%-60s" % key[:60] + "".join(" %8s" % ("%.2f" % counts[rt][key] if key in counts[rt] else "-")
                                               for rt in counts))
    print("cpu = median user+sys of the runtime's process per operation (ms), including the children it waited for")
    for o in others:
        r = ["%s %.2f" % (op, row["cpu sdrun/" + o]) for op, row in summary.items() if "cpu sdrun/" + o in row]
        if r:
            print("cpu sdrun/%s: %s" % (o, ", ".join(r)))
    print()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--iterations", type=int, default=int(os.environ.get("BENCH_ITERATIONS", 40)))
    ap.add_argument("--seq", type=int, default=int(os.environ.get("BENCH_SEQ", 100)))
    ap.add_argument("--many", type=int, default=int(os.environ.get("BENCH_MANY", 200)))
    ap.add_argument("--seq-block", type=int, default=int(os.environ.get("BENCH_SEQ_BLOCK", 10)),
                    help="consecutive runs of one runtime per seq block (PID 1's CPU is measured per block)")
    ap.add_argument("--count", type=int, default=int(os.environ.get("BENCH_COUNT", 5)),
                    help="runs per runtime whose D-Bus messages and journal lines are counted")
    ap.add_argument("--churn-seconds", type=int, default=int(os.environ.get("BENCH_CHURN_SECONDS", 60)),
                    help="how long each runtime's churn loops run")
    ap.add_argument("--churn-workers", type=int, default=int(os.environ.get("BENCH_CHURN_WORKERS", 8)),
                    help="parallel `run` loops in the churn phase")
    ap.add_argument("--only", default="single,seq,many,count",
                    help="comma-separated: single, seq, many, count, churn (not in the default: "
                         "--churn-seconds per runtime)")
    ap.add_argument("--runtimes", default=os.environ.get("BENCH_RUNTIMES"),
                    help="comma-separated, sdrun first: sdrun,crun,runc,base (default sdrun,crun,runc, "
                         "plus base when $SDRUN_BASELINE is set)")
    ap.add_argument("--base-annotation", action="append", default=[], metavar="KEY=VALUE",
                    help="an annotation in every config of the base runtime (repeatable): with SDRUN_BASELINE "
                         "the same binary, a variant of sdrun's own, e.g. io.github.sdrun.machine=false")
    ap.add_argument("--json", default=None, help="summary file (default $SDRUN_BUILDDIR/bench-results.json)")
    opts = ap.parse_args()
    if opts.json is None:
        opts.json = os.path.join(os.environ.get("SDRUN_BUILDDIR", "."), "bench-results.json")
    parts = set(opts.only.split(","))

    sdrun = os.environ.get("SDRUN") or "sdrun"
    baseline = os.environ.get("SDRUN_BASELINE") or None
    binaries = {
        "sdrun": sdrun,
        "crun": os.environ.get("CRUN") or shutil.which("crun"),
        "runc": os.environ.get("RUNC") or shutil.which("runc"),
        "base": baseline,
    }
    if opts.runtimes is None:
        opts.runtimes = "sdrun,crun,runc" + (",base" if baseline else "")
    names = [n.strip() for n in opts.runtimes.split(",") if n.strip()]
    for n in names:
        if n not in RUNTIMES:
            print("bench: --runtimes: unknown runtime %r (known: %s)" % (n, ", ".join(RUNTIMES)), file=sys.stderr)
            return 1
    if len(set(names)) != len(names) or "sdrun" not in names:
        print("bench: --runtimes %s: sdrun must be in it (the ratios are sdrun's), each name once" % opts.runtimes,
              file=sys.stderr)
        return 1
    for a in opts.base_annotation:
        if "=" not in a or not a.split("=", 1)[0]:
            print("bench: --base-annotation %r: expected KEY=VALUE" % a, file=sys.stderr)
            return 1
    if opts.base_annotation and "base" not in names:
        print("bench: --base-annotation needs the base runtime (SDRUN_BASELINE)", file=sys.stderr)
        return 1
    if "base" in names and not (baseline and os.access(baseline, os.X_OK)):
        print("bench: --runtimes with base: SDRUN_BASELINE must name an sdrun executable (is %r)" % baseline,
              file=sys.stderr)
        return 1
    if not os.access(GNU_TIME, os.X_OK):
        print("bench: %s is missing (Debian package time)" % GNU_TIME, file=sys.stderr)
        return 1
    for n in ("crun", "runc"):
        if n in names and not binaries[n]:
            print("bench: %s is not installed (Debian package %s; or leave it out of --runtimes)" % (n, n),
                  file=sys.stderr)
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
        # Every runtime has its own --root and its own scope names (bench-<name>-<id>.scope).
        argv = {"sdrun": [sdrun], "base": [baseline] if baseline else None,
                "crun": [binaries["crun"], "--systemd-cgroup"], "runc": [binaries["runc"], "--systemd-cgroup"]}
        rts = [Runtime(n, argv[n], os.path.join(states, n), workdir, rootfs, cfg) for n in names]
        for rt in rts:
            if rt.name == "base":
                rt.annotations = dict(a.split("=", 1) for a in opts.base_annotation)
        meta = {
            "host": platform.node() + " " + platform.release(),
            "cgroup_layout": "unified" if os.path.exists("/sys/fs/cgroup/cgroup.controllers") else "hybrid/legacy",
            "cpus": os.cpu_count(),
            "iterations": opts.iterations, "seq": opts.seq, "count": opts.count, "seq_block": opts.seq_block, "many": opts.many,
            "runtimes": names,
            "base_annotations": opts.base_annotation,
            "binaries": {n: binaries[n] for n in names},
            "versions": {n: version([binaries[n]]) for n in names},
            "clk_tck": os.sysconf("SC_CLK_TCK"),
            "load_start": "%.2f %.2f %.2f" % os.getloadavg(),
            "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        }
        b = Bench(rts, opts)
        b.load_clients(workdir)
        if "single" in parts:
            b.single_ops()
        if "seq" in parts and opts.seq > 0:
            b.sequential()
        if "many" in parts and opts.many > 0:
            b.many()
        if "churn" in parts and opts.churn_seconds > 0 and opts.churn_workers > 0:
            b.churn()
            meta["churn"] = {"seconds": opts.churn_seconds, "workers": opts.churn_workers}
        if "count" in parts and opts.count > 0 and shutil.which("busctl"):
            b.count(workdir)
            meta["counts"] = b.counts
        meta["load_end"] = "%.2f %.2f %.2f" % os.getloadavg()
        s = b.summary()
        if b.floor["scope"]:
            meta["floor"] = {}
            for what, v in b.floor.items():
                wall = [x[0] for x in v]
                row = {"n": len(v), "median": median(wall), "p95": pct(wall, 95), "cpu": median([x[1] for x in v])}
                if s["run"].get("sdrun"):
                    row["sdrun run/floor"] = s["run"]["sdrun"]["median"] / row["median"]
                meta["floor"][what] = row
        # The "seq" row is one total per runtime: label it with the count.
        s["seq"]["description"] = "%d sequential runs, total" % opts.seq
        s["churn_per"]["description"] = "churn: wall per container, %d run loops" % opts.churn_workers
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
