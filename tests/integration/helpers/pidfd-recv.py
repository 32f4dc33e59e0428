#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""A --pidfd-socket receiver (runc's protocol, as for --console-socket): listen on SOCK, receive one fd over
SCM_RIGHTS, print the pid the pidfd refers to (its fdinfo's "Pid:"); then, once it gets SIGTERM (as runc's
pidfd-kill), send SIGNAL through the pidfd (pidfd_send_signal) and print "sent".

    pidfd-recv.py SOCK SIGNAL

Creates SOCK.ready once listening. Exits 1 on a timeout (20 s) or if what came is not a pidfd."""
import signal
import sys

from fdsocket import receive_fds


def main():
    path, signame = sys.argv[1], sys.argv[2]
    signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGTERM])
    fds = receive_fds(path)
    if len(fds) != 1:
        print("expected one fd, got %d" % len(fds), file=sys.stderr)
        return 1
    pid = None
    with open("/proc/self/fdinfo/%d" % fds[0]) as f:
        for line in f:
            if line.startswith("Pid:"):
                pid = line.split()[1]
    if pid is None:
        print("the fd is not a pidfd", file=sys.stderr)
        return 1
    print(pid, flush=True)
    signal.sigwait([signal.SIGTERM])
    signal.pidfd_send_signal(fds[0], getattr(signal, signame))
    print("sent", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
