"""Read the unstable feature manifest (``schema/unstable-features.json``) and check its shape.

The shape is stated as a JSON Schema shipped with acpgen (``manifest.schema.json``, which
also documents every key); this module reads the file, refuses duplicate keys (which JSON
parsers silently drop), and reports every place that does not fit, each with its JSON pointer
and the description of what belongs there. Whether the items exist and are unstable is checked
against the schema by :mod:`acpgen.features.check`.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator

from acpgen.errors import AcpgenError, Problem, pointer

MANIFEST_FILE = "unstable-features.json"
SHAPE_FILE = Path(__file__).with_name("manifest.schema.json")


def load_manifest(path: Path) -> dict[str, Any]:
    """The manifest at ``path``, checked for shape (not yet against a schema)."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise AcpgenError(
            Problem(f"cannot read the feature manifest: {error}", str(path), "Fix or restore the file.")
        ) from None
    return parse_manifest(text, str(path))


def parse_manifest(text: str, origin: str) -> dict[str, Any]:
    """The manifest in ``text`` (read from ``origin``), checked for shape."""
    try:
        table = json.loads(text, object_pairs_hook=_unique_keys)
    except ValueError as error:
        raise AcpgenError(
            Problem(f"the feature manifest is not valid JSON: {error}", f"{origin}#", "Fix the JSON.")
        ) from None
    problems = [
        Problem(
            f"the feature manifest does not fit its schema: {error.message}",
            f"{origin}#{pointer(*error.absolute_path)}",
            f"{_hint(error.schema)} The manifest's shape: acpgen/features/{SHAPE_FILE.name}.",
        )
        for error in sorted(_validator().iter_errors(table), key=lambda e: [str(p) for p in e.absolute_path])
    ]
    if problems:
        raise AcpgenError(*problems)
    return table  # type: ignore[no-any-return]


@functools.cache
def _validator() -> Draft202012Validator:
    return Draft202012Validator(json.loads(SHAPE_FILE.read_text(encoding="utf-8")))


def _hint(schema: Any) -> str:
    text = schema.get("description") if isinstance(schema, dict) else None
    return str(text) if text else "Correct the value."


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for key, value in pairs:
        if key in found:
            raise ValueError(f"the key {key!r} appears twice in one object")
        found[key] = value
    return found
