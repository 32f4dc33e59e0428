#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""A --console-socket receiver (the protocol conmon and runc use): listen on SOCK, receive the pty master
over SCM_RIGHTS, type INPUT into it, and print everything the container writes (as it comes) until it closes the pty.

    console-recv.py SOCK INPUT

Prints "received-fd" first once the master arrived, then the terminal output. Exits 1 on a timeout (20 s, or $CONSOLE_RECV_SECONDS)."""
import os
import select
import sys
import time

from fdsocket import receive_fds


def main():
    path, text = sys.argv[1], sys.argv[2]
    fds = receive_fds(path)
    if not fds:
        print("no fd received", file=sys.stderr)
        return 1
    master = fds[0]
    print("received-fd", flush=True)
    os.write(master, text.encode() + b"\n")
    # Each chunk is printed as it arrives, so that a test can wait for a line while the session goes on.
    deadline = time.monotonic() + float(os.environ.get("CONSOLE_RECV_SECONDS", "20"))
    while time.monotonic() < deadline:
        r, _, _ = select.select([master], [], [], 0.5)
        if not r:
            continue
        try:
            chunk = os.read(master, 4096)
        except OSError:  # EIO: the last slave fd closed
            break
        if not chunk:
            break
        sys.stdout.write(chunk.decode(errors="replace"))
        sys.stdout.flush()
    else:
        print("timeout", file=sys.stderr)
        return 1
    return 0


sys.exit(main())
