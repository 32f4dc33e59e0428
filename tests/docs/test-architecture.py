#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""docs/ARCHITECTURE.md's folder arrows against the include graph of src/ (TAP).

The page's table "folder | includes headers of" must list, for each folder of src/, exactly the other
folders whose headers its files include; every `src/X ──► src/Y` drawn in the diagram must be one of those
arrows; and the graph has no circle."""
import os
import re
import sys

src_root = os.environ.get("SDRUN_SRCDIR") or os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
folders = ["cli", "runtime", "init", "oci", "sdunit", "basic"]
n = 0
failed = 0


def ok(cond, name, diag=""):
    global n, failed
    n += 1
    print(("ok" if cond else "not ok") + f" {n} - {name}")
    if not cond:
        failed += 1
        for line in diag.splitlines():
            print(f"# {line}")


headers = {f: {h for h in os.listdir(os.path.join(src_root, "src", f)) if h.endswith(".h")} for f in folders}
graph = {f: set() for f in folders}
for f in folders:
    d = os.path.join(src_root, "src", f)
    for dirpath, _, files in os.walk(d):
        for name in files:
            if not name.endswith((".c", ".h")):
                continue
            with open(os.path.join(dirpath, name), encoding="utf-8") as fh:
                for inc in re.findall(r'^\s*#\s*include\s+"([^"]+)"', fh.read(), re.M):
                    base = os.path.basename(inc)
                    if base in headers[f] or inc.startswith("../"):
                        continue
                    graph[f] |= {g for g in folders if g != f and base in headers[g]}

page = open(os.path.join(src_root, "docs", "ARCHITECTURE.md"), encoding="utf-8").read()
table = {}
for m in re.finditer(r"^\|\s*`src/(\w+)`\s*\|\s*([^|]*)\|\s*$", page, re.M):
    table[m.group(1)] = {x for x in re.findall(r"`src/(\w+)`", m.group(2))}
ok(set(table) == set(folders), "the page's arrow table has one row per folder of src/",
   f"rows: {sorted(table)}\nfolders: {folders}")
for f in folders:
    want = graph[f]
    have = table.get(f, set())
    ok(have == want, f"src/{f}: the page's arrows are the folders whose headers it includes",
       f"page: {sorted(have)}\nincludes: {sorted(want)}\nmissing on the page: {sorted(want - have)}\n"
       f"on the page, not included: {sorted(have - want)}")

block = re.search(r"## The folders and their one-way dependencies\s+```\n(.*?)```", page, re.S)
ok(block is not None, "the page draws the folders")
drawn = re.findall(r"src/(\w+)\s*─+►\s*src/(\w+)", block.group(1) if block else "")
ok(len(drawn) > 0 and all(b in graph.get(a, set()) for a, b in drawn),
   "every arrow drawn between two folders is in the include graph",
   "\n".join(f"src/{a} -> src/{b}" for a, b in drawn if b not in graph.get(a, set())))

# no circle: a topological order exists
order, pending = [], {f: set(graph[f]) for f in folders}
while pending:
    free = [f for f, deps in pending.items() if not (deps & set(pending))]
    if not free:
        break
    for f in free:
        order.append(f)
        del pending[f]
ok(not pending, "the include graph between folders has no circle", f"in a circle: {sorted(pending)}")
print(f"1..{n}")
sys.exit(1 if failed else 0)
