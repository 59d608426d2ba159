"""Load a schema file and check it before anything is built from it.

Checks, each reported with a JSON pointer and what to do: the file is JSON, it nests no deeper
than :data:`acpgen.load.nesting.MAX_DEPTH`, it is an object with ``$defs``, it is a valid JSON Schema
2020-12 document (meta-validation with jsonschema-rs, which also says what is wrong and where
in milliseconds; the jsonschema reference validator decides and explains only what jsonschema-rs
leaves out, the ``regex`` format), and every ``$ref`` points at an existing definition.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema_rs
from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError

from acpgen.errors import AcpgenError, Problem, pointer
from acpgen.load.nesting import check_depth, parse_shallow


def load_schema(path: Path, *, pinned: bool = False) -> dict[str, Any]:
    """The checked schema document at ``path``; ``pinned``: one of the pinned schema files (whose
    problems are fixed by restoring them), else a file the user gave (fixed by editing it)."""
    try:
        text = path.read_bytes().decode("utf-8")
    except OSError as error:
        raise AcpgenError(
            Problem(
                what=f"cannot read the schema file: {error.strerror}",
                where=str(path),
                hint=f"Restore the pinned schema files with `{_RESTORE}`." if pinned else "Check the path.",
            )
        ) from None
    except UnicodeDecodeError as error:
        raise AcpgenError(
            Problem(
                what=f"the schema file is not UTF-8 text ({error.reason} at byte {error.start})",
                where=f"{path}#",
                hint=f"Restore the pinned schema files with `{_RESTORE}`." if pinned else "Save it as UTF-8 JSON.",
            )
        ) from None
    fix = f"Restore the pinned schema files with `{_RESTORE}`, or fix the JSON." if pinned else "Fix the JSON."
    doc = parse_shallow(text, str(path), what="the schema file", hint=fix)
    check_schema(doc, str(path), pinned=pinned)
    return doc  # type: ignore[no-any-return]


_RESTORE = "make schema"
"""The command that restores the pinned schema files (in acpgen's repository)."""


def check_schema(doc: Any, origin: str, *, pinned: bool = False) -> None:
    """Raise :class:`AcpgenError` listing every structural problem of a schema document (``pinned``:
    see :func:`load_schema`)."""
    fix = f"Restore the pinned schema files with `{_RESTORE}`, or fix the JSON." if pinned else "Fix the JSON."
    check_depth(doc, origin, what="the schema", hint=fix)
    if not isinstance(doc, dict):
        raise AcpgenError(
            Problem(
                what=f"the schema must be a JSON object, not {type(doc).__name__}",
                where=f"{origin}#",
                hint="Point acpgen at an ACP schema file (schema.json or schema.unstable.json).",
            )
        )
    defs = doc.get("$defs")
    if not isinstance(defs, dict):
        raise AcpgenError(
            Problem(
                what="the schema has no `$defs` object, so it defines no types",
                where=f"{origin}#/$defs",
                hint="Point acpgen at an ACP schema file (schema.json or schema.unstable.json).",
            )
        )
    invalid = meta_error(doc)
    if invalid is not None:
        where, message = invalid
        raise AcpgenError(
            Problem(
                what=f"the schema is not a valid JSON Schema 2020-12 document: {_shortened(message)}",
                where=f"{origin}#{pointer(*where)}",
                hint="Fix the schema at that place"
                + (f" (or restore the pinned files with `{_RESTORE}`)." if pinned else "."),
            )
        )
    _check_definitions(doc, defs, origin)


def _check_definitions(doc: dict[str, Any], defs: dict[str, Any], origin: str) -> None:
    """Every definition is an object, and every ``$ref`` points at one."""
    booleans = [
        Problem(
            what=f"definition {name!r} is the boolean schema {str(node).lower()}, not an object",
            where=f"{origin}#{pointer('$defs', name)}",
            hint="Write a definition as an object ({} admits any value) or remove it.",
        )
        for name, node in defs.items()
        if isinstance(node, bool)
    ]
    if booleans:
        raise AcpgenError(*booleans)
    dangling = [
        Problem(
            what=f"`$ref` {ref!r} points at no definition",
            where=f"{origin}#{where}",
            hint="Define the referenced type under `$defs` or correct the reference.",
        )
        for where, ref in _refs(doc, ())
        if not _resolves(ref, defs)
    ]
    if dangling:
        raise AcpgenError(*dangling)


def meta_error(doc: Any) -> tuple[tuple[str | int, ...], str] | None:
    """Where ``doc`` first fails JSON Schema 2020-12 meta-validation and why, or None when it is valid.

    jsonschema-rs finds the place and the reason (the Python validator takes about a second on the
    pinned schema and agrees on the place); the Python validator is asked only when jsonschema-rs
    cannot decide or passes a document with a ``pattern`` that is not a regular expression."""
    try:
        jsonschema_rs.meta.validate(doc)
    except jsonschema_rs.ValidationError as error:
        return tuple(error.instance_path), error.message
    except (ValueError, jsonschema_rs.ReferencingError):
        pass
    else:
        if all(_compiles(p) for p in _patterns(doc)):
            return None
    try:
        Draft202012Validator.check_schema(doc)
    except SchemaError as error:
        return tuple(error.path or error.absolute_path), error.message
    return None


_MESSAGE_LIMIT = 300
"""Characters of a validator's message shown (it quotes the failing value, which may be a whole subtree)."""


def _shortened(message: str) -> str:
    return message if len(message) <= _MESSAGE_LIMIT else message[: _MESSAGE_LIMIT - 1] + "…"


def _patterns(node: Any) -> Iterator[Any]:
    """Every ``pattern`` value and ``patternProperties`` key in the document (walked without recursion)."""
    pending = [node]
    while pending:
        current = pending.pop()
        if isinstance(current, dict):
            if "pattern" in current and not isinstance(current["pattern"], dict):
                yield current["pattern"]
            if isinstance(current.get("patternProperties"), dict):
                yield from current["patternProperties"]
            pending.extend(current.values())
        elif isinstance(current, list):
            pending.extend(current)


def _compiles(pattern: Any) -> bool:
    if not isinstance(pattern, str):
        return False
    try:
        re.compile(pattern)
    except re.error:
        return False
    return True


def _refs(node: Any, path: tuple[str | int, ...]) -> Iterator[tuple[str, str]]:
    """(pointer, reference) of every ``$ref`` string below ``node``, in document order (without recursion)."""
    pending: list[tuple[Any, tuple[str | int, ...]]] = [(node, path)]
    while pending:
        current, here = pending.pop()
        if isinstance(current, dict):
            ref = current.get("$ref")
            if isinstance(ref, str):
                yield pointer(*here, "$ref"), ref
            pending.extend(reversed([(value, (*here, key)) for key, value in current.items()]))
        elif isinstance(current, list):
            pending.extend(reversed([(value, (*here, index)) for index, value in enumerate(current)]))


def _resolves(ref: str, defs: dict[str, Any]) -> bool:
    prefix = "#/$defs/"
    return ref.startswith(prefix) and ref.removeprefix(prefix).replace("~1", "/").replace("~0", "~") in defs
