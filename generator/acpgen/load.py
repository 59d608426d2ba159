"""Load a schema file and check it before anything is built from it.

Checks, each reported with a JSON pointer and what to do: the file is JSON, it is an object
with ``$defs``, it is a valid JSON Schema 2020-12 document (meta-validation), and every
``$ref`` points at an existing definition.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from importlib.metadata import version as _distribution_version
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError

from acpgen.errors import AcpgenError, Problem, pointer

jsonschema_version = _distribution_version("jsonschema")


def load_schema(path: Path, *, validated_dir: Path | None = None) -> dict[str, Any]:
    """The checked schema document at ``path``.

    Meta-validation is the slow step (about a second for the unstable schema). With
    ``validated_dir``, a document that passed it once is remembered there by the sha256 of its
    bytes and the jsonschema version, and not validated again.
    """
    try:
        raw = path.read_bytes()
        text = raw.decode("utf-8")
    except OSError as error:
        raise AcpgenError(
            Problem(
                f"cannot read the schema file: {error.strerror}", str(path), "Check the path, or run `make schema`."
            )
        ) from None
    except UnicodeDecodeError as error:
        raise AcpgenError(
            Problem(
                f"the schema file is not UTF-8 text ({error.reason} at byte {error.start})",
                f"{path}#",
                "Restore the file from the pinned package with `make schema`.",
            )
        ) from None
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as error:
        raise AcpgenError(
            Problem(
                f"the schema file is not valid JSON ({error.msg}; line {error.lineno}, column {error.colno})",
                f"{path}#",
                "Restore the file from the pinned package with `make schema`, or fix the JSON.",
            )
        ) from None
    marker = _marker(validated_dir, raw)
    check_schema(doc, str(path), meta_validate=marker is None or not marker.is_file())
    if marker is not None and not marker.is_file():
        try:
            marker.parent.mkdir(parents=True, exist_ok=True)
            marker.touch()
        except OSError:
            pass  # the cache is an optimisation only
    return doc  # type: ignore[no-any-return]


def _marker(validated_dir: Path | None, raw: bytes) -> Path | None:
    if validated_dir is None:
        return None
    digest = hashlib.sha256(raw).hexdigest()
    return validated_dir / f"jsonschema-{jsonschema_version}" / digest


def check_schema(doc: Any, origin: str, *, meta_validate: bool = True) -> None:
    """Raise :class:`AcpgenError` listing every structural problem of a schema document
    (without ``meta_validate``: all but JSON Schema meta-validation, for a document known to pass it)."""
    if not isinstance(doc, dict):
        raise AcpgenError(
            Problem(
                f"the schema must be a JSON object, not {type(doc).__name__}",
                f"{origin}#",
                "Point acpgen at an ACP schema file (schema.json or schema.unstable.json).",
            )
        )
    defs = doc.get("$defs")
    if not isinstance(defs, dict):
        raise AcpgenError(
            Problem(
                "the schema has no `$defs` object, so it defines no types",
                f"{origin}#/$defs",
                "Point acpgen at an ACP schema file (schema.json or schema.unstable.json).",
            )
        )
    try:
        if meta_validate:
            Draft202012Validator.check_schema(doc)
    except SchemaError as error:
        where = pointer(*error.path) if error.path else pointer(*error.absolute_path)
        raise AcpgenError(
            Problem(
                f"the schema is not a valid JSON Schema 2020-12 document: {error.message}",
                f"{origin}#{where}",
                "Fix the schema at that place (or restore the pinned files with `make schema`).",
            )
        ) from None
    dangling = [
        Problem(
            f"`$ref` {ref!r} points at no definition",
            f"{origin}#{where}",
            "Define the referenced type under `$defs` or correct the reference.",
        )
        for where, ref in _refs(doc, ())
        if not _resolves(ref, defs)
    ]
    if dangling:
        raise AcpgenError(*dangling)


def _refs(node: Any, path: tuple[str | int, ...]) -> Iterator[tuple[str, str]]:
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str):
            yield pointer(*path, "$ref"), ref
        for key, value in node.items():
            yield from _refs(value, (*path, key))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from _refs(value, (*path, index))


def _resolves(ref: str, defs: dict[str, Any]) -> bool:
    prefix = "#/$defs/"
    return ref.startswith(prefix) and ref.removeprefix(prefix).replace("~1", "/").replace("~0", "~") in defs
