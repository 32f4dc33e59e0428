#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
# notify-listen.py ADDR OUT: bind a datagram socket at ADDR ("/path" or "@abstract") and append each message
# it receives to OUT as one line: "pid=<sender pid> <the message's lines joined by spaces>". Runs until killed.
import os
import socket
import struct
import sys

addr, out = sys.argv[1], sys.argv[2]
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_PASSCRED, 1)
s.bind("\0" + addr[1:] if addr.startswith("@") else addr)
with open(out + ".ready", "w"):
    pass
while True:
    msg, anc, _, _ = s.recvmsg(4096, socket.CMSG_SPACE(12))
    pid = 0
    for level, kind, data in anc:
        if level == socket.SOL_SOCKET and kind == socket.SCM_CREDENTIALS:
            pid = struct.unpack("iII", data[:12])[0]
    with open(out, "a") as f:
        f.write("pid=%d %s\n" % (pid, " ".join(msg.decode(errors="replace").strip().split("\n"))))
