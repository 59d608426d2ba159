"""How deeply a JSON document nests, checked before anything recursive reads it.

Every stage after loading (meta-validation, the IR builder, datamodel-code-generator, copies)
walks schema nodes recursively, so an input error must stop a document that nests too deeply
first. The deepest ACP schema so far nests 12 levels; :data:`MAX_DEPTH` allows far more, and
far less than what would exhaust Python's stack in any stage.

:func:`parse` reads JSON text into a document no deeper than the limit;
:func:`deepest_path` finds where a parsed document exceeds it. Both report the place as a JSON
pointer, and neither recurses.
"""

from __future__ import annotations

import json
import re
from typing import Any

from acpgen.errors import AcpgenError, Problem, pointer

MAX_DEPTH = 100
"""The deepest nesting of objects and arrays accepted in an input file (the root is level 1)."""

Path = tuple[str | int, ...]
_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}:,]', re.DOTALL)


def parse(text: str, origin: str, *, what: str, hint: str) -> Any:
    """The JSON document in ``text``, read from file ``origin``; refused with a pointer when it is not
    JSON or nests deeper than :data:`MAX_DEPTH`. ``what`` names the file (``the schema file``) and
    ``hint`` says how to fix it."""
    doc = parse_shallow(text, origin, what=what, hint=hint)
    check_depth(doc, origin, what=what, hint=hint)
    return doc


def parse_shallow(text: str, origin: str, *, what: str, hint: str) -> Any:
    """As :func:`parse`, but the depth of a document the parser could read is left to :func:`check_depth`."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise AcpgenError(
            Problem(
                what=f"{what} is not valid JSON ({error.msg}; line {error.lineno}, column {error.colno})",
                where=f"{origin}#",
                hint=hint,
            )
        ) from None
    except RecursionError:  # nested far beyond the limit: the parser itself gave up
        raise too_deep(f"{origin}#{pointer(*_deep_in_text(text))}", what, hint) from None


def check_depth(doc: Any, origin: str, *, what: str, hint: str) -> None:
    """Refuse a document nested deeper than :data:`MAX_DEPTH`, pointing at the first place it does."""
    where = deepest_path(doc)
    if where is not None:
        raise too_deep(f"{origin}#{pointer(*where)}", what, hint)


def too_deep(where: str, what: str, hint: str) -> AcpgenError:
    """The error for a document that nests deeper than :data:`MAX_DEPTH` at ``where`` (``file#pointer``)."""
    return AcpgenError(
        Problem(
            what=f"{what} nests objects and arrays deeper than {MAX_DEPTH} levels "
            "(real ACP schemas nest about a dozen)",
            where=where,
            hint=hint,
        )
    )


def deepest_path(doc: Any) -> Path | None:
    """The path of the first container (in document order) nested deeper than :data:`MAX_DEPTH`, or None."""
    level = [doc] if isinstance(doc, dict | list) else []
    for _ in range(MAX_DEPTH):  # breadth first, containers only: fast on documents within the limit
        level = [
            child
            for node in level
            for child in (node.values() if isinstance(node, dict) else node)
            if isinstance(child, dict | list)
        ]
    return _first_at_limit(doc) if level else None


def _first_at_limit(doc: Any) -> Path:
    """The path of the first container at depth :data:`MAX_DEPTH` (one exists), depth first in document order."""
    pending: list[tuple[Any, Path]] = [(doc, ())]
    while pending:
        node, path = pending.pop()
        if len(path) == MAX_DEPTH:
            return path
        items = node.items() if isinstance(node, dict) else enumerate(node)
        children = [(value, (*path, key)) for key, value in items if isinstance(value, dict | list)]
        pending.extend(reversed(children))
    raise AssertionError("no container at the depth limit")


def _deep_in_text(text: str) -> Path:
    """Where text that the parser could not descend into exceeds :data:`MAX_DEPTH` (read token by token)."""
    stack: list[list[Any]] = []  # per open container: [is_object, key or index, expecting a key]
    last_string: str | None = None
    for match in _TOKEN.finditer(text):
        token = match.group()
        if token in "[{":
            if len(stack) >= MAX_DEPTH:
                break
            stack.append([token == "{", 0 if token == "[" else "", token == "{"])
        elif token in "]}" and stack:
            stack.pop()
        elif token == ":" and stack and last_string is not None:
            stack[-1][1], stack[-1][2] = last_string, False
        elif token == "," and stack:
            is_object = stack[-1][0]
            stack[-1][1:] = ["", True] if is_object else [stack[-1][1] + 1, False]
        last_string = _string(token) if token.startswith('"') else None
    return tuple(entry[1] for entry in stack)


def _string(token: str) -> str:
    try:
        value = json.loads(token)
    except ValueError:
        return token[1:-1]
    return value if isinstance(value, str) else token[1:-1]
