#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The conmon model: become a child subreaper, run `sdrun create --pid-file`, read the pid file as soon as
create exits, `sdrun start`, then reap the container's init ourselves and print its exit status.

    subreaper.py SDRUN ROOT BUNDLE ID PIDFILE

Prints "status N" (N as a shell reports it: 128+signal when killed), then "zombies N": how many children
were still left to reap afterwards (must be 0). Exit status 0 when create, start and the wait worked."""
import ctypes
import os
import subprocess
import sys

PR_SET_CHILD_SUBREAPER = 36


def main():
    sdrun, root, bundle, cid, pidfile = sys.argv[1:6]
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        print("prctl(PR_SET_CHILD_SUBREAPER) failed", file=sys.stderr)
        return 2
    r = subprocess.run([sdrun, "--root", root, "create", "--bundle", bundle, "--pid-file", pidfile, cid])
    if r.returncode != 0:
        print(f"create failed: {r.returncode}", file=sys.stderr)
        return 1
    with open(pidfile) as f:
        pid = int(f.read().strip())
    if pid <= 0:
        print(f"bad pid {pid}", file=sys.stderr)
        return 1
    r = subprocess.run([sdrun, "--root", root, "start", cid])
    if r.returncode != 0:
        print(f"start failed: {r.returncode}", file=sys.stderr)
        return 1
    # The init was create's child; create exited, so the init is ours now.
    _, status = os.waitpid(pid, 0)
    if os.WIFEXITED(status):
        print(f"status {os.WEXITSTATUS(status)}")
    else:
        print(f"status {128 + os.WTERMSIG(status)}")
    zombies = 0
    while True:
        try:
            p, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            break
        if p == 0:
            break
        zombies += 1
    print(f"zombies {zombies}")
    return 0


sys.exit(main())
