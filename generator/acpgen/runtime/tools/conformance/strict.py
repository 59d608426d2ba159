"""Judging what was sent against the build's schema itself, strictly.

The models read as the schema tells a *reader* to (``x-deserialize-default-on-error``
forgives a malformed value), which is right for a runtime and wrong for a judge. Here
a message's params or result are validated with ``jsonschema`` (JSON Schema 2020-12)
against the method's definition in the build's own schema: the lenient-reading
keywords have no effect on validation, integer formats (``uint32``...) are bounds,
and what the schema leaves open stays allowed (``_meta``, open enums, members it does
not close).

Each violation names the JSON pointer of the value, the schema path that refuses it
and whether the schema *requires* the value where it sits: every member on the way
from the message to it is a required one (a missing required member counts as
required when the object holding it is). Unions are followed into the one branch the
value's tag selects, so a ``tool_call_update`` with ``status: "done"`` is reported at
``/update/status``, not as "no branch matched".

Where ``jsonschema-rs`` is installed (acpgen has it), it screens each payload first:
a payload it finds valid is not validated again, one it refuses is validated by
``jsonschema``, whose errors decide. A peer streaming thousands of updates is judged
at the speed it writes them."""

from __future__ import annotations

import importlib
from collections import defaultdict
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

try:
    import jsonschema
    from jsonschema.exceptions import ValidationError as SchemaError
except ImportError as error:  # pragma: no cover - the kit's dependency
    raise ImportError(
        "the conformance kit judges with jsonschema: pip install 'jsonschema>=4.18'"
    ) from error
_fast: Any
try:
    _fast = importlib.import_module("jsonschema_rs")
except ImportError:  # pragma: no cover - only the screen is lost
    _fast = None

_BOUNDS = {
    "int32": (-(2**31), 2**31 - 1),
    "uint16": (0, 2**16 - 1),
    "uint32": (0, 2**32 - 1),
    "int64": (-(2**63), 2**63 - 1),
    "uint64": (0, 2**64 - 1),
}
_UNIONS = ("oneOf", "anyOf")
_PASS_THROUGH = ("items", "prefixItems", "additionalProperties", "patternProperties")


@dataclass(frozen=True, slots=True)
class SchemaViolation:
    """A value the schema refuses."""

    pointer: str
    """Where the value is, in the params or result (a JSON pointer; ``""``: all of
    it)."""
    schema_path: str
    """Where the schema refuses it (``#/$defs/ToolCallUpdate/properties/status``)."""
    message: str
    required: bool
    """The schema requires the value where it sits (a MUST), not an optional member."""

    def line(self) -> str:
        return f"{self.message} at {self.pointer or '/'} (schema {self.schema_path})"


def _bounded(node: Any) -> Any:
    """The schema with each integer format also written as ``minimum`` and
    ``maximum`` (the screen checks formats of strings only)."""
    if isinstance(node, list):
        return [_bounded(item) for item in node]
    if not isinstance(node, dict):
        return node
    found = {key: _bounded(value) for key, value in node.items()}
    bounds = _BOUNDS.get(str(node.get("format")))
    if bounds is not None:
        low, high = bounds
        found["minimum"] = max(low, node.get("minimum", low))
        found["maximum"] = min(high, node.get("maximum", high))
    return found


def _within(low: int, high: int) -> Any:
    def within(value: object) -> bool:
        return not isinstance(value, int) or low <= value <= high

    return within


def _format_checker() -> Any:
    checker = jsonschema.FormatChecker(formats=())
    for name, bounds in _BOUNDS.items():
        checker.checks(name)(_within(*bounds))
    return checker


class StrictReader:
    """Validates payloads against the definitions of one schema document."""

    def __init__(self, document: Mapping[str, Any]) -> None:
        self._defs = document.get("$defs", {})
        self._validators: dict[str, Any] = {}
        self._screens: dict[str, Any] = {}
        self._checker = _format_checker()

    def violations(self, definition: str, payload: Any) -> list[SchemaViolation]:
        """What ``payload`` breaks of ``$defs/<definition>``, deepest first per
        branch."""
        if self._screened(definition, payload):
            return []
        validator = self._validators.get(definition)
        if validator is None:
            schema = {"$ref": f"#/$defs/{definition}", "$defs": self._defs}
            validator = jsonschema.Draft202012Validator(
                schema, format_checker=self._checker
            )
            self._validators[definition] = validator
        found: list[SchemaViolation] = []
        for error in validator.iter_errors(payload):
            for leaf in _leaves(error):
                found.append(self._describe(definition, leaf))
        found.sort(key=lambda v: (v.pointer, v.schema_path))
        return found

    def _screened(self, definition: str, payload: Any) -> bool:
        """Whether the fast validator finds ``payload`` valid (False without one)."""
        if _fast is None:
            return False
        screen = self._screens.get(definition)
        if screen is None:
            schema = {"$ref": f"#/$defs/{definition}", "$defs": _bounded(self._defs)}
            screen = _fast.Draft202012Validator(schema)
            self._screens[definition] = screen
        try:
            return bool(screen.is_valid(payload))
        except (ValueError, TypeError, OverflowError):  # what it cannot hold
            return False

    def _describe(self, definition: str, error: SchemaError) -> SchemaViolation:
        required, where = self._walk(definition, list(error.absolute_schema_path))
        pointer = "".join(f"/{_escape(part)}" for part in error.absolute_path)
        return SchemaViolation(pointer, where, _message(error), required)

    def _walk(self, definition: str, path: list[Any]) -> tuple[bool, str]:
        """Whether every member stepped through is required, and the schema path of
        the last step as ``#/$defs/<def>/...``."""
        node: Any = self._defs.get(definition, {})
        here = [definition]
        required = True
        for step, key in enumerate(path):
            node, here = self._resolve(node, here)
            if key == "properties" and step + 1 < len(path):
                member = path[step + 1]
                if member not in (node.get("required") or ()):
                    required = False
            if (isinstance(node, Mapping) and key in node) or (
                isinstance(node, list) and isinstance(key, int) and key < len(node)
            ):
                node = node[key]
            else:
                break
            here = [*here, str(key)]
        return required, "#/$defs/" + "/".join(here)

    def _resolve(self, node: Any, here: list[str]) -> tuple[Any, list[str]]:
        while isinstance(node, Mapping) and "$ref" in node:
            name = str(node["$ref"]).rsplit("/", 1)[-1]
            if name not in self._defs:
                break
            node, here = self._defs[name], [name]
        return node, here


def _leaves(error: SchemaError) -> Iterator[SchemaError]:
    """The error itself, or, for a union whose value one branch was meant for (its
    tag matches, or its type, or it failed deepest), that branch's errors
    (recursively)."""
    if error.validator not in _UNIONS or not error.context:
        yield error
        return
    branches: dict[Any, list[SchemaError]] = defaultdict(list)
    for sub in error.context:
        branches[sub.relative_schema_path[0]].append(sub)
    depth = len(error.absolute_path)
    meant = [
        errors
        for errors in branches.values()
        if not any(_tag_miss(e, depth) for e in errors)
        and not _other_type(errors, depth)
    ]
    if len(meant) > 1:  # the branch that went deepest into the value before failing
        deepest = max(_depth(errors) for errors in meant)
        meant = [errors for errors in meant if _depth(errors) == deepest]
    if len(meant) != 1:
        yield error
        return
    for sub in meant[0]:
        yield from _leaves(sub)


def _tag_miss(error: SchemaError, depth: int) -> bool:
    """The branch refuses the value's tag (a ``const`` member of the value itself)."""
    return (
        error.validator in ("const", "enum") and len(error.absolute_path) == depth + 1
    )


def _other_type(errors: list[SchemaError], depth: int) -> bool:
    """The branch is for another JSON type (the ``null`` of a nullable member)."""
    return all(e.validator == "type" and len(e.absolute_path) == depth for e in errors)


def _depth(errors: list[SchemaError]) -> int:
    return max(len(e.absolute_path) for e in errors)


def _message(error: SchemaError) -> str:
    if error.validator in _UNIONS and error.context:
        consts = [e.validator_value for e in error.context if e.validator == "const"]
        if consts and len(consts) == len(error.context):
            listed = ", ".join(repr(c) for c in consts)
            return f"{_short(error.instance)} is none of {listed}"
        return f"{_short(error.instance)} matches no branch of the union"
    if error.validator == "format":
        return f"{_short(error.instance)} is out of the {error.validator_value} range"
    text = error.message
    return text if len(text) <= 160 else text[:157] + "..."


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _escape(part: Any) -> str:
    return str(part).replace("~", "~0").replace("/", "~1")
