#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""report.py RESULTS.tsv REPORT.md: the chaos driver's results as Markdown (issue 35).

RESULTS.tsv is what tests/chaos/chaos.sh --results writes (one line per runtime x fault); RESULTS.calls.tsv
(every call) and RESULTS.soak.tsv (the soak's samples) beside it are read when present.
"""
import collections
import os
import statistics
import sys

FIELDS = ["rt", "fault", "outcome", "calls", "err", "silent", "hang", "lies", "leaks", "left", "long", "msgs",
          "extra"]


def read_tsv(path, n):
    rows = []
    if not os.path.exists(path):
        return rows
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            parts = line.rstrip("\n").split("\t")
            rows.append(parts + [""] * (n - len(parts)))
    return rows


def pct(values, p):
    values = sorted(values)
    if not values:
        return 0
    k = min(len(values) - 1, max(0, int(round(p / 100.0 * len(values) + 0.5)) - 1))
    return values[k]


def main():
    res_path, out_path = sys.argv[1], sys.argv[2]
    base = res_path[:-4] if res_path.endswith(".tsv") else res_path
    results = [dict(zip(FIELDS, r)) for r in read_tsv(res_path, len(FIELDS))]
    calls = read_tsv(base + ".calls.tsv", 9)
    soak = read_tsv(base + ".soak.tsv", 8)
    rts = []
    faults = []
    for r in results:
        if r["rt"] not in rts:
            rts.append(r["rt"])
        if r["fault"] not in faults:
            faults.append(r["fault"])
    by = {(r["rt"], r["fault"]): r for r in results}

    out = []
    w = out.append
    w("# Chaos report (issue 35)")
    w("")
    w("Written by `tests/chaos/report.py` from a run of `tests/chaos/chaos.sh` (`scripts/test --chaos`).")
    w("Each fault is injected on its own while the workers run containers through create, start, exec,")
    w("pause/resume, update, kill and delete beside long-lived containers. A cell reads")
    w("`outcome: calls / failed with a message / silent / hung / lying state / leaked`; **survived** means no")
    w("silent failure, no call at the bound, no lying `state`, the long-lived containers unchanged and nothing")
    w("left behind (unit, cgroup directory, mount, state directory, process, machined registration).")
    w("")
    w("| fault | " + " | ".join(rts) + " |")
    w("|---|" + "---|" * len(rts))
    for f in faults:
        cells = []
        for rt in rts:
            r = by.get((rt, f))
            if not r:
                cells.append("not run")
                continue
            if f == "end":
                cells.append("%s: %s left; %s" % (r["outcome"], r["left"], r["msgs"]))
                continue
            cell = "%s: %s / %s / %s / %s / %s / %s" % (r["outcome"], r["calls"], r["err"], r["silent"], r["hang"],
                                                       r["lies"], r["leaks"] if r["left"] in ("", "0") else
                                                       "%s+%s left" % (r["leaks"], r["left"]))
            if r["long"] not in ("", "intact"):
                cell += "; long-lived: " + r["long"][:120].replace("|", "/")
            cells.append(cell)
        w("| %s | %s |" % (f, " | ".join(cells)))
    w("")
    w("## What the runtimes said when a call failed")
    w("")
    w("The most frequent messages of each runtime under each fault (numbers replaced by N), and what sdrun warned.")
    w("")
    for f in faults:
        for rt in rts:
            r = by.get((rt, f))
            if not r or f == "end":
                continue
            if r["msgs"] or r["extra"]:
                w("- %s, %s: %s %s" % (f, rt, r["msgs"].replace("|", "/").replace(";", "; "),
                                        ("(" + r["extra"].replace("|", "/") + ")") if r["extra"] else ""))
    w("")

    if soak:
        w("## Soak")
        w("")
        w("Samples every N containers through the workers (no fault): PID 1's RSS and fd count, dbus-daemon's")
        w("RSS and fd count, the number of units systemd has loaded, and the load average.")
        w("")
        w("| runtime | containers | PID 1 RSS (kB) | PID 1 fds | dbus-daemon RSS (kB) | dbus-daemon fds | units | load |")
        w("|---|---|---|---|---|---|---|---|")
        for s in soak:
            w("| " + " | ".join(s[:8]) + " |")
        w("")
        # create+start latency per thousand (per step): pair each worker's create with its next start
        step = int(os.environ.get("CHAOS_SOAK_STEP", "1000"))
        lat = collections.defaultdict(list)
        pending = {}
        for c in calls:
            if c[0] != "soak" or c[7] != "ok":
                continue
            key = (c[1], c[2])
            if c[3] == "create":
                pending[key] = int(c[6])
            elif c[3] == "start" and key in pending:
                lat[c[1]].append(pending.pop(key) + int(c[6]))
        if lat:
            w("create+start latency (ms) per %d containers:" % step)
            w("")
            w("| runtime | containers | n | p50 | p99 |")
            w("|---|---|---|---|---|")
            for rt, v in lat.items():
                for i in range(0, len(v), step):
                    chunk = v[i:i + step]
                    w("| %s | %d-%d | %d | %d | %d |" % (rt, i + 1, i + len(chunk), len(chunk), statistics.median(chunk),
                                                       pct(chunk, 99)))
            w("")
    with open(out_path, "w", encoding="utf-8") as f:
        f.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
