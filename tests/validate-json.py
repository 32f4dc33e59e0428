#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Validate a JSON document against one of the OCI runtime-spec schemas.

usage: validate-json.py SCHEMA FILE|-

SCHEMA is a schema file (e.g. tests/schema/config-schema.json); its relative $refs ("defs.json#/...")
are resolved against the schema's directory, so nothing is fetched from the network. FILE "-" reads
standard input. Exit status: 0 valid, 1 invalid (each error printed with its JSON path), 2 usage or I/O
error.
"""

import json
import os
import sys

import jsonschema


def load_json(path):
    if path == "-":
        return json.load(sys.stdin)
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def json_path(error):
    out = "$"
    for p in error.absolute_path:
        out += f"[{p}]" if isinstance(p, int) else f".{p}"
    return out


def make_validator(schema_path):
    schema_path = os.path.abspath(schema_path)
    schema_dir = os.path.dirname(schema_path)
    schema = load_json(schema_path)
    cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft4Validator)

    try:
        # jsonschema >= 4.18: the referencing library.
        from referencing import Registry, Resource
        from referencing.jsonschema import DRAFT4

        def retrieve(uri):
            name = os.path.basename(uri.split("#", 1)[0])
            path = os.path.join(schema_dir, name)
            if not os.path.isfile(path):
                raise FileNotFoundError(f"{uri}: no such schema in {schema_dir}")
            return Resource.from_contents(load_json(path), default_specification=DRAFT4)

        # The schemas have no ids: a relative $ref ("defs.json#/...") reaches retrieve() as it is.
        return cls(schema, registry=Registry(retrieve=retrieve))
    except ImportError:
        # Older jsonschema (Debian 12 ships 4.10): RefResolver with a file: base URI.
        resolver = jsonschema.RefResolver(base_uri="file://" + schema_dir + "/", referrer=schema)
        return cls(schema, resolver=resolver)


def main(argv):
    if len(argv) != 3:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    try:
        validator = make_validator(argv[1])
        doc = load_json(argv[2])
    except (OSError, ValueError) as e:
        print(f"validate-json: {e}", file=sys.stderr)
        return 2

    errors = sorted(validator.iter_errors(doc), key=lambda e: list(e.absolute_path))
    name = argv[2] if argv[2] != "-" else "<stdin>"
    for e in errors:
        print(f"{name}: {json_path(e)}: {e.message}", file=sys.stderr)
    if errors:
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
