#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The engines' snippets (engines/*.in) are shown in sdrun-engines(7) as they are installed by the Debian
package (the binary at /usr/bin/sdrun), and are well-formed (JSON, TOML). TAP. Needs SDRUN_SRCDIR."""

import json
import os
import re
import sys
import tomllib  # Python 3.11 (Debian 12)

SRC = os.environ["SDRUN_SRCDIR"]
n = failed = 0


def check(name, cond, detail=""):
    global n, failed
    n += 1
    if cond:
        print(f"ok {n} - {name}")
    else:
        failed += 1
        print(f"not ok {n} - {name}")
        for line in str(detail).splitlines():
            print(f"# {line}")


page = open(os.path.join(SRC, "man", "sdrun-engines.7.scd"), encoding="utf-8").read()
blocks = [b.strip("\n") for b in re.findall(r"^```\n(.*?)^```$", page, re.S | re.M)]
check("sdrun-engines(7) has literal blocks", len(blocks) >= 4, f"{len(blocks)} blocks")
for name in ("sdrun.conf", "docker-daemon.json", "containerd-config.toml"):
    text = open(os.path.join(SRC, "engines", name + ".in"), encoding="utf-8").read()
    check(f"engines/{name}.in names the binary as @SDRUN@", '"@SDRUN@"' in text)
    shown = text.replace("@SDRUN@", "/usr/bin/sdrun").strip("\n")
    check(f"sdrun-engines(7) shows {name} as the package installs it", shown in blocks,
          "\n".join(["expected a block:", shown]))
    check(f"sdrun-engines(7) names /usr/share/doc/sdrun/examples/{name}",
          f"/usr/share/doc/sdrun/examples/{name}" in page)
    if name.endswith(".json"):
        try:
            json.loads(shown)
            check(f"{name} is JSON", True)
        except ValueError as e:
            check(f"{name} is JSON", False, e)
    else:
        try:
            tomllib.loads(shown)
            check(f"{name} is TOML", True)
        except ValueError as e:
            check(f"{name} is TOML", False, e)
print(f"1..{n}")
sys.exit(1 if failed else 0)
