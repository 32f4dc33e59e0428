#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""A minimal CRI v1 client for the tests: one call per invocation.

    cri-client.py SOCKET METHOD [REQUEST-JSON]

METHOD is a RuntimeService or ImageService method of tests/containerd/cri-subset.proto (compiled here with
protoc into a temporary directory), REQUEST-JSON the request in protobuf's JSON mapping (field names as in
the .proto or lowerCamelCase). Prints one JSON object: the response (default values included) and
"seconds", the wall time of the call. Exits 0 on success; on a gRPC error prints
{"error": CODE, "message": ...} and exits 3.
"""

import importlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

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


def main():
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
