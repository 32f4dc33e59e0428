# SPDX-License-Identifier: LGPL-2.1-or-later
"""The receiving end of runc's fd-passing sockets (--console-socket, --pidfd-socket), shared by the helpers
console-recv.py and pidfd-recv.py."""
import array
import socket


def receive_fds(path, timeout=20):
    """Listen on the AF_UNIX stream socket PATH, create PATH.ready once listening, accept one connection
    (within timeout seconds) and return the fds that its one message carries over SCM_RIGHTS."""
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    srv.bind(path)
    srv.listen(1)
    srv.settimeout(timeout)
    open(path + ".ready", "w").close()
    conn, _ = srv.accept()
    fds = array.array("i")
    _, anc, _, _ = conn.recvmsg(4096, socket.CMSG_SPACE(fds.itemsize))
    for level, typ, data in anc:
        if level == socket.SOL_SOCKET and typ == socket.SCM_RIGHTS:
            fds.frombytes(data[: len(data) - (len(data) % fds.itemsize)])
    conn.close()
    srv.close()
    return list(fds)
