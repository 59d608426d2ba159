"""Validate the ACP JSON-RPC message corpus against the ACP JSON schemas.

Layout checked (relative to the corpus directory, by default the directory of
this script):

    stable/<NN>-<name>.json    validated against <schema-dir>/schema.json
    unstable/<NN>-<name>.json  validated against <schema-dir>/schema.unstable.json

Every corpus file is an object ``{"def": ..., "message": ..., "payload": ...}``
where ``message[payload]`` must be an instance of ``$defs[def]``.  For each file
this script checks that:

* the file is well formed (keys, file name pattern, unique ``NN`` per folder);
* ``message`` is a JSON-RPC 2.0 envelope whose shape matches the def: requests
  carry ``id`` and ``method``, notifications carry ``method`` and no ``id``,
  responses carry ``id`` and ``result`` (or ``error`` for def ``Error``) and no
  ``method``; ``method`` equals the def's ``x-method``;
* ``message[payload]`` validates against ``$defs[def]`` (Draft 2020-12, with
  references resolved inside the whole schema document);
* the whole ``message`` validates against the root schema of the folder's schema;
* ``message[payload]`` uses no property that the schema does not define
  (everything below a ``_meta`` key, and schemas that explicitly allow
  additional properties, are exempt);
* files in ``unstable/`` really need the unstable schema: their payload must fail
  (plain or strict) validation against the stable schema, or their def must be
  missing from it.

Stable files that do not also validate against the unstable schema are reported
as warnings.  Exit status is 0 when every file passes, 1 otherwise.

Usage::

    python check_corpus.py --schema-dir /path/to/schema/v1 [--corpus-dir DIR] [-v]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema

FOLDERS = {"stable": "schema.json", "unstable": "schema.unstable.json"}
FILE_RE = re.compile(r"^(\d{2,3})-[a-z0-9]+(?:-[a-z0-9]+)*\.json$")
ENVELOPE_KEYS = {"jsonrpc", "id", "method", "params", "result", "error"}


class Schema:
    """One schema document plus cached validators for its parts."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.doc: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
        self.defs: dict[str, Any] = self.doc["$defs"]
        self.root = jsonschema.Draft202012Validator(self.doc)
        self._cache: dict[int, jsonschema.Draft202012Validator] = {}

    def validator_for(self, node: Any) -> jsonschema.Draft202012Validator:
        """A validator for a sub-schema; its ``#/$defs/...`` refs resolve in this document."""
        key = id(node)
        v = self._cache.get(key)
        if v is None:
            v = jsonschema.Draft202012Validator({"$defs": self.defs, "allOf": [node]})
            self._cache[key] = v
        return v

    def def_validator(self, name: str) -> jsonschema.Draft202012Validator:
        return self.validator_for({"$ref": f"#/$defs/{name}"})

    def resolve(self, node: Any) -> Any:
        seen = 0
        while isinstance(node, dict) and "$ref" in node:
            ref = node["$ref"]
            if not ref.startswith("#/$defs/"):
                raise ValueError(f"unsupported $ref {ref!r}")
            extra = {k: v for k, v in node.items() if k != "$ref"}
            target = self.defs[ref[len("#/$defs/") :]]
            if extra:
                # $ref with sibling keywords: treat as allOf of both.
                return {"allOf": [target, extra]}
            node = target
            seen += 1
            if seen > 50:
                raise ValueError("reference loop")
        return node

    # ------------------------------------------------------------------ strict
    def _collect(self, node: Any, inst: Any, acc: dict[str, Any]) -> None:
        """Gather, from the sub-schemas of ``node`` that apply to ``inst``, the
        property names they define and the schemas of those properties.

        An object is treated as closed (unknown keys reported) only when some
        applicable sub-schema lists ``properties``; schemas such as ``{}`` (raw
        tool input, opaque MCP results) leave it open."""
        node = self.resolve(node)
        if not isinstance(node, dict):
            if node is True:
                acc["open"] = True
            return
        if isinstance(inst, dict):
            if "properties" in node:
                acc["closed"] = True
            for k, sub in node.get("properties", {}).items():
                acc["props"].setdefault(k, []).append(sub)
            ap = node.get("additionalProperties")
            if ap is True:
                acc["open"] = True
            elif isinstance(ap, dict):
                acc["extra"].append(ap)
            if node.get("unevaluatedProperties") is True:
                acc["open"] = True
        if isinstance(inst, list) and isinstance(node.get("items"), (dict, bool)):
            acc["items"].append(node["items"])
        for sub in node.get("allOf", []):
            self._collect(sub, inst, acc)
        for kw in ("anyOf", "oneOf"):
            for sub in node.get(kw, []):
                if self.validator_for(sub).is_valid(inst):
                    self._collect(sub, inst, acc)

    def unknown_properties(self, node: Any, inst: Any, path: str = "") -> Iterator[str]:
        acc: dict[str, Any] = {
            "props": {},
            "extra": [],
            "items": [],
            "open": False,
            "closed": False,
        }
        self._collect(node, inst, acc)
        if isinstance(inst, dict):
            for key, value in inst.items():
                sub_path = f"{path}/{key}"
                if key == "_meta":
                    continue  # free-form by definition
                if key in acc["props"]:
                    for sub in acc["props"][key]:
                        yield from self.unknown_properties(sub, value, sub_path)
                elif acc["extra"]:
                    for sub in acc["extra"]:
                        yield from self.unknown_properties(sub, value, sub_path)
                elif acc["closed"] and not acc["open"]:
                    yield sub_path or "/"
        elif isinstance(inst, list):
            for i, item in enumerate(inst):
                for sub in acc["items"]:
                    yield from self.unknown_properties(sub, item, f"{path}/{i}")


def errors_of(validator: jsonschema.Draft202012Validator, inst: Any, limit: int = 3) -> list[str]:
    out = []
    for err in sorted(validator.iter_errors(inst), key=lambda e: list(e.absolute_path)):
        best = jsonschema.exceptions.best_match([err])
        loc = "/" + "/".join(str(p) for p in best.absolute_path)
        out.append(f"{loc}: {best.message[:300]}")
        if len(out) >= limit:
            break
    return out


def payload_problems(schema: Schema, def_name: str, inst: Any) -> list[str]:
    """Plain + strict validation problems of ``inst`` against ``$defs[def_name]``."""
    if def_name not in schema.defs:
        return [f"$defs has no {def_name!r}"]
    problems = errors_of(schema.def_validator(def_name), inst)
    if not problems:
        problems = [
            f"{p}: property not defined by the schema"
            for p in schema.unknown_properties({"$ref": f"#/$defs/{def_name}"}, inst)
        ]
    return problems


def check_envelope(schema: Schema, def_name: str, payload: str, msg: Any) -> list[str]:
    p: list[str] = []
    if not isinstance(msg, dict):
        return ["message is not an object"]
    if msg.get("jsonrpc") != "2.0":
        p.append('message.jsonrpc must be "2.0"')
    extra = set(msg) - ENVELOPE_KEYS
    if extra:
        p.append(f"message has non JSON-RPC keys {sorted(extra)}")
    if payload not in msg:
        p.append(f"message has no {payload!r}")
    body_keys = {"params", "result", "error"} & set(msg)
    if body_keys - {payload}:
        p.append(f"message carries {sorted(body_keys - {payload})} besides {payload!r}")
    d = schema.defs.get(def_name, {})
    x_method = d.get("x-method")
    if payload == "params":
        if x_method is None:
            p.append(f"def {def_name} has no x-method, cannot be params")
        elif msg.get("method") != x_method:
            p.append(f"message.method {msg.get('method')!r} != x-method {x_method!r}")
        is_request = def_name.endswith("Request")
        is_notification = def_name.endswith("Notification")
        if is_request and "id" not in msg:
            p.append("request message has no id")
        if is_notification and "id" in msg:
            p.append("notification message must not have an id")
        if not (is_request or is_notification):
            p.append(f"def {def_name} is neither a request nor a notification")
    elif payload == "result":
        if "method" in msg:
            p.append("response message must not have a method")
        if "id" not in msg:
            p.append("response message has no id")
        if x_method is None:
            p.append(f"def {def_name} has no x-method, cannot be a result")
        if not def_name.endswith("Response"):
            p.append(f"def {def_name} is not a response type")
    elif payload == "error":
        if "method" in msg or "id" not in msg:
            p.append("error response needs an id and no method")
        if def_name != "Error":
            p.append('payload "error" requires def "Error"')
    else:
        p.append(f"payload must be params, result or error, not {payload!r}")
    return p


def main(argv: list[str] | None = None) -> int:
    here = Path(__file__).resolve().parent
    default_schema = os.environ.get("ACP_SCHEMA_DIR") or str(here.parent.parent / "schema")
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--schema-dir",
        default=default_schema,
        metavar="DIR",
        help="directory holding schema.json and schema.unstable.json (default: $ACP_SCHEMA_DIR or <repo>/schema)",
    )
    ap.add_argument(
        "--corpus-dir",
        default=str(here),
        metavar="DIR",
        help="corpus root containing stable/ and unstable/ (default: this script's directory)",
    )
    ap.add_argument("-v", "--verbose", action="store_true", help="print every file checked")
    args = ap.parse_args(argv)

    schema_dir = Path(args.schema_dir)
    corpus = Path(args.corpus_dir)
    for fname in FOLDERS.values():
        if not (schema_dir / fname).is_file():
            ap.error(f"{schema_dir / fname} not found (use --schema-dir)")
    schemas = {folder: Schema(schema_dir / fname) for folder, fname in FOLDERS.items()}

    failures = 0
    warnings = 0
    counts: dict[str, int] = {}
    for folder in FOLDERS:
        schema = schemas[folder]
        other = schemas["unstable" if folder == "stable" else "stable"]
        files = sorted((corpus / folder).glob("*.json"))
        counts[folder] = len(files)
        numbers: dict[str, str] = {}
        for f in files:
            rel = f"{folder}/{f.name}"
            problems: list[str] = []
            m = FILE_RE.match(f.name)
            if not m:
                problems.append("file name is not <NN>-<kebab-description>.json")
            elif m.group(1) in numbers:
                problems.append(f"number {m.group(1)} also used by {numbers[m.group(1)]}")
            else:
                numbers[m.group(1)] = f.name
            try:
                entry = json.loads(f.read_text(encoding="utf-8"))
            except (OSError, ValueError) as e:
                entry = None
                problems.append(f"unreadable JSON: {e}")
            if entry is not None:
                if not isinstance(entry, dict) or set(entry) != {
                    "def",
                    "message",
                    "payload",
                }:
                    problems.append('file must be an object with exactly "def", "message", "payload"')
                else:
                    def_name, msg, payload = (
                        entry["def"],
                        entry["message"],
                        entry["payload"],
                    )
                    problems += check_envelope(schema, def_name, payload, msg)
                    if isinstance(msg, dict) and payload in msg:
                        inst = msg[payload]
                        problems += payload_problems(schema, def_name, inst)
                        root_errs = errors_of(schema.root, msg, limit=1)
                        if root_errs:
                            problems.append(f"whole message fails root schema of {schema.path.name}: {root_errs[0]}")
                        cross = payload_problems(other, def_name, inst)
                        if folder == "unstable" and not cross:
                            problems.append(
                                "payload is also valid (strictly) against the stable schema; "
                                "move it to stable/ or use an unstable-only feature"
                            )
                        if folder == "stable" and cross and not problems:
                            warnings += 1
                            print(f"WARN {rel}: not valid against {other.path.name}: {cross[0]}")
            if problems:
                failures += 1
                for prob in problems:
                    print(f"FAIL {rel}: {prob}")
            elif args.verbose:
                print(f"ok   {rel}")

    total = sum(counts.values())
    summary = ", ".join(f"{k}: {v}" for k, v in counts.items())
    print(f"checked {total} files ({summary}); {total - failures} passed, {failures} failed, {warnings} warnings")
    return 1 if failures or total == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
