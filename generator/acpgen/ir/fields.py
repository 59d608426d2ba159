"""A type's properties as IR fields, and what the IR reads of a property's schema.

Support of :mod:`acpgen.ir.build`: how a property reads (required, nullable, its default,
array or map, integer, its reading rules), named by :mod:`acpgen.ir.naming`.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping

from acpgen import ir
from acpgen.errors import AcpgenError, Problem, pointer
from acpgen.ir import naming
from acpgen.ir.shapes import canonical
from acpgen.load.inventory import (
    DEFAULT_ON_ERROR,
    DEFAULT_ON_NULL,
    SKIP_INVALID_ITEMS,
    Node,
    description,
    is_unconstrained,
    ref_name,
)

__all__ = ["TypeContext", "is_integer", "is_object_branch", "type_fields", "types_of"]


@dataclasses.dataclass(frozen=True, slots=True)
class TypeContext:
    """What building a type needs to know of the others."""

    unstable: frozenset[str]
    """The item keys present in this build that are not stable."""
    taken: frozenset[str]
    """The class names of every definition."""
    open_defs: frozenset[str]
    """The definitions that admit any JSON value (``ExtRequest``)."""


def is_integer(branch: Node) -> bool:
    return "integer" in types_of(branch)


def is_object_branch(branch: Node) -> bool:
    return ref_name(branch) is not None or "properties" in branch or branch.get("type") == "object"


def type_fields(owner: str, node: Node, scope: TypeContext) -> tuple[ir.Field, ...]:
    props = node.get("properties")
    if not isinstance(props, Mapping):
        return ()
    required = set(node.get("required") or [])
    fields = []
    seen: dict[str, str] = {}
    for wire in sorted(props):
        prop = props[wire] if isinstance(props[wire], Mapping) else {}  # a boolean schema: anything goes
        attr = naming.snake(wire)
        if attr in seen:
            raise AcpgenError(
                Problem(
                    what=f"properties {seen[attr]!r} and {wire!r} of {owner} would both become the attribute {attr!r}",
                    where=pointer("$defs", owner, "properties", wire),
                    hint="Rename one of the properties in the schema.",
                )
            )
        seen[attr] = wire
        fields.append(
            ir.Field(
                wire=wire,
                attr=attr,
                required=wire in required,
                nullable=_nullable(prop),
                default_json=json.dumps(prop["default"], sort_keys=True) if "default" in prop else None,
                is_array=_is_array(prop),
                is_map=_is_map(prop),
                integer=is_integer(prop),
                ref=ref_name(prop),
                lenience=ir.Lenience(
                    default_on_error=prop.get(DEFAULT_ON_ERROR) is True,
                    skip_invalid_items=prop.get(SKIP_INVALID_ITEMS) is True,
                    default_on_null=prop.get(DEFAULT_ON_NULL) is True,
                ),
                stable=f"field:{owner}.{wire}" not in scope.unstable,
                description=description(prop),
                extensible=_extensible(prop, scope.open_defs),
                shape=canonical(prop),
            )
        )
    return tuple(fields)


def _extensible(prop: Node, open_defs: frozenset[str]) -> bool:
    """A union of object types with a member that admits any value (an envelope's ``params``)."""
    members: list[Node] = []
    pending = [prop]
    while pending:
        node = pending.pop()
        for branch in node.get("anyOf") or node.get("oneOf") or []:
            if isinstance(branch, Mapping):
                (pending if "anyOf" in branch or "oneOf" in branch else members).append(branch)
    return any(ref_name(m) in open_defs for m in members) and any(is_object_branch(m) for m in members)


def types_of(prop: Node) -> set[str]:
    declared = prop.get("type")
    if isinstance(declared, str):
        return {declared}
    if isinstance(declared, list):
        return {t for t in declared if isinstance(t, str)}
    return set()


def _nullable(prop: Node) -> bool:
    if "null" in types_of(prop) or is_unconstrained(prop):  # no constraint at all admits null too
        return True
    branches = prop.get("anyOf") or prop.get("oneOf") or []
    return any(isinstance(b, Mapping) and b.get("type") == "null" for b in branches)


def _is_array(prop: Node) -> bool:
    return "array" in types_of(prop)


def _is_map(prop: Node) -> bool:
    extra = prop.get("additionalProperties")
    return "object" in types_of(prop) and not prop.get("properties") and extra not in (None, False)
