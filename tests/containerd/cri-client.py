#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""A minimal CRI v1 client for the tests: one call per invocation.

    cri-client.py SOCKET METHOD [REQUEST-JSON]

METHOD is a RuntimeService or ImageService method of tests/containerd/cri-subset.proto (compiled here with
protoc into a temporary directory), REQUEST-JSON the request in protobuf's JSON mapping (field names as in
the .proto or lowerCamelCase). Prints one JSON object: the response (default values included) and
"seconds", the wall time of the call. Exits 0 on success; on a gRPC error prints
{"error": CODE, "message": ...} and exits 3.

    cri-client.py --stream URL

connects to the streaming URL that Exec (or Attach) answered, as a WebSocket client speaking Kubernetes'
"v4.channel.k8s.io" protocol (each message: a channel byte, then data; 1 stdout, 2 stderr, 3 the status),
and prints {"stdout": ..., "stderr": ..., "status": ...} once the server closes the stream.
"""

import base64
import importlib
import json
import os
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import time
import urllib.parse

HERE = os.path.dirname(os.path.abspath(__file__))
PROTO = "cri-subset.proto"


def load_messages():
    """Compile the .proto with protoc and import the generated module."""
    protoc = shutil.which("protoc")
    if not protoc:
        sys.exit("cri-client: protoc is not installed (Debian package protobuf-compiler)")
    out = tempfile.mkdtemp(prefix="cri-pb2.")
    try:
        subprocess.run([protoc, "-I", HERE, "--python_out=" + out, os.path.join(HERE, PROTO)], check=True)
        sys.path.insert(0, out)
        return importlib.import_module(PROTO[:-len(".proto")].replace("-", "_") + "_pb2")
    finally:
        shutil.rmtree(out, ignore_errors=True)


def recv_exact(sock, n):
    buf = b""
    while len(buf) < n:
        chunk = sock.recv(n - len(buf))
        if not chunk:
            raise EOFError("the stream closed in the middle of a frame")
        buf += chunk
    return buf


def stream(url):
    """Read a streaming session to its end (RFC 6455 framing, server frames are never masked)."""
    u = urllib.parse.urlsplit(url)
    sock = socket.create_connection((u.hostname, u.port or 80), timeout=60)
    key = base64.b64encode(os.urandom(16)).decode()
    path = u.path + ("?" + u.query if u.query else "")
    sock.sendall((f"GET {path} HTTP/1.1\r\nHost: {u.netloc}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                  f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n"
                  f"Sec-WebSocket-Protocol: v4.channel.k8s.io\r\n\r\n").encode())
    head = b""
    while b"\r\n\r\n" not in head:
        chunk = sock.recv(1)
        if not chunk:
            raise EOFError("the server closed the connection during the handshake")
        head += chunk
    status_line = head.split(b"\r\n", 1)[0].decode(errors="replace")
    if " 101 " not in status_line + " ":
        return {"error": "handshake", "message": status_line}
    out = {1: b"", 2: b"", 3: b""}
    message = b""
    while True:
        b0, b1 = recv_exact(sock, 2)
        opcode, length = b0 & 0x0F, b1 & 0x7F
        if length == 126:
            length = struct.unpack("!H", recv_exact(sock, 2))[0]
        elif length == 127:
            length = struct.unpack("!Q", recv_exact(sock, 8))[0]
        payload = recv_exact(sock, length) if length else b""
        if opcode == 8:
            break
        if opcode in (0, 1, 2):
            message += payload
            if b0 & 0x80 and message:
                if message[0] in out:
                    out[message[0]] += message[1:]
                message = b""
    sock.close()
    return {"stdout": out[1].decode(errors="replace"), "stderr": out[2].decode(errors="replace"),
            "status": out[3].decode(errors="replace")}


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--stream":
        try:
            print(json.dumps(stream(sys.argv[2])))
        except (OSError, EOFError) as e:
            print(json.dumps({"error": "stream", "message": str(e)}))
            return 3
        return 0
    if len(sys.argv) not in (3, 4):
        sys.exit(__doc__)
    sock, method = sys.argv[1], sys.argv[2]
    request_json = sys.argv[3] if len(sys.argv) == 4 else "{}"

    import grpc
    from google.protobuf import json_format

    pb = load_messages()
    file_desc = pb.DESCRIPTOR
    for svc in file_desc.services_by_name.values():
        m = svc.methods_by_name.get(method)
        if m:
            break
    else:
        sys.exit(f"cri-client: no method {method} in {PROTO}")

    req_cls = getattr(pb, m.input_type.name)
    resp_cls = getattr(pb, m.output_type.name)
    req = json_format.Parse(request_json, req_cls())
    path = f"/{svc.full_name}/{m.name}"

    with grpc.insecure_channel("unix://" + sock) as chan:
        call = chan.unary_unary(path, request_serializer=req_cls.SerializeToString,
                                response_deserializer=resp_cls.FromString)
        t0 = time.monotonic()
        try:
            resp = call(req, timeout=float(os.environ.get("CRI_CLIENT_TIMEOUT", "120")))
        except grpc.RpcError as e:
            print(json.dumps({"error": e.code().name, "message": e.details(),
                              "seconds": round(time.monotonic() - t0, 3)}))
            return 3
        seconds = time.monotonic() - t0
    d = json_format.MessageToDict(resp, preserving_proto_field_name=True, including_default_value_fields=True)
    d["seconds"] = round(seconds, 3)
    print(json.dumps(d))
    return 0


if __name__ == "__main__":
    sys.exit(main())
