"""Wire shapes: schema nodes with representation churn normalised away.

The IR builder gives every type, field and union variant its shape (:func:`canonical`); the spec
diff compares the shapes of two IRs (:mod:`acpgen.diff.relations`), never schema JSON.

:func:`canonical` turns a node into a plain JSON value that is equal for two nodes exactly
when they admit the same JSON, as far as spelling goes: annotations are dropped, ``allOf``
with one member and single-branch ``anyOf``/``oneOf`` are unwrapped, nullability is one flag
however it is spelled (``type: [X, "null"]``, a ``null`` branch), a union of constants is an
enum, integer ``format``s become bounds. References stay references (by name), so that a change
inside a referenced type is reported once, at that type.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from acpgen.load.inventory import def_name

_ANNOTATIONS = frozenset(
    {"description", "title", "$comment", "examples", "discriminator", "default", "deprecated", "readOnly", "writeOnly"}
)
MAX_NESTING = 200
"""How deep :func:`canonical` follows a node (far beyond any real schema)."""

Shape = Mapping[str, Any]
"""A wire shape: read-only JSON data (built as a dict, never changed afterwards)."""
MutableShape = dict[str, Any]
ANY: MutableShape = {"any": True}

INTEGER_BOUNDS: Mapping[str, tuple[int, int]] = {
    # the range of each integer ``format`` the schema uses
    "int8": (-(2**7), 2**7 - 1),
    "int16": (-(2**15), 2**15 - 1),
    "int32": (-(2**31), 2**31 - 1),
    "int64": (-(2**63), 2**63 - 1),
    "uint8": (0, 2**8 - 1),
    "uint16": (0, 2**16 - 1),
    "uint32": (0, 2**32 - 1),
    "uint64": (0, 2**64 - 1),
}


def canonical(node: Any, depth: int = 0) -> MutableShape:
    """The canonical wire shape of a schema node (see the module docstring).

    Nesting beyond ``MAX_NESTING`` reads as any value (the loader refuses such documents; this
    keeps the recursion bounded whatever it is given)."""
    if depth > MAX_NESTING or node is True or (isinstance(node, Mapping) and not _structural(node)):
        return dict(ANY)
    if not isinstance(node, Mapping):
        return {"never": True}
    body = _structural(node)
    all_of = body.pop("allOf", None)
    if isinstance(all_of, list) and len(all_of) == 1 and not body:
        return canonical(all_of[0], depth + 1)
    shape: MutableShape = {}
    if isinstance(all_of, list):
        shape["extends"] = sorted((canonical(m, depth + 1) for m in all_of), key=shape_key)
    ref = body.pop("$ref", None)
    if isinstance(ref, str):
        shape["ref"] = def_name(ref) if ref.startswith("#/$defs/") else ref
    types, nullable = _types(body.pop("type", None))
    if types == "null":
        return {"null": True}
    for keyword in ("anyOf", "oneOf"):
        branches = body.pop(keyword, None)
        if not isinstance(branches, list):
            continue
        real = [canonical(b, depth + 1) for b in branches]
        nullable = nullable or any(b == {"null": True} or b.get("null") for b in real)
        real = [without_null(b) for b in real if b != {"null": True}]
        if any(b == ANY for b in real):
            return dict(ANY)
        if not shape and types is None and not body:
            return _with_null(_union(real), nullable)
        shape["union"] = _union(real)
    if types is not None:
        shape["type"] = types
    _rest(body, shape, depth)
    return _with_null(shape, nullable)


def _types(declared: Any) -> tuple[Any, bool]:
    """The JSON type(s) a node declares (one name, a sorted list, or None) and whether null is one."""
    if not isinstance(declared, list):
        return declared, False
    named = sorted(t for t in declared if t != "null")
    return (named[0] if len(named) == 1 else named or None), "null" in declared


def _rest(body: dict[str, Any], shape: MutableShape, depth: int) -> None:
    """Scalar, object and array constraints, and any other keyword as it is."""
    _scalars(body, shape)
    _objects(body, shape, depth)
    if isinstance(body.get("items"), Mapping | bool):
        shape["items"] = canonical(body.pop("items"), depth + 1)
    for keyword in sorted(body):
        if keyword not in ("properties", "required", "additionalProperties", "items", "enum", "const", "format"):
            shape[keyword] = body[keyword]


def _structural(node: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in node.items() if k not in _ANNOTATIONS and not k.startswith("x-")}


def _union(branches: list[MutableShape]) -> MutableShape:
    """One shape for several branches: a single branch, an enum of constants, or a union."""
    if len(branches) == 1:
        return branches[0]
    consts = [b["enum"] for b in branches if set(b) <= {"enum", "type"} and "enum" in b]
    free_strings = [b for b in branches if b == {"type": "string"}]
    if consts and len(consts) + len(free_strings) == len(branches):
        values = sorted({shape_key(v): v for values in consts for v in values}.values(), key=shape_key)
        shape: MutableShape = {"enum": values}
        if free_strings:
            shape["open"] = True
        return shape
    unique = {shape_key(b): b for b in branches}
    return {"union": [unique[k] for k in sorted(unique)]}


def _scalars(body: dict[str, Any], shape: MutableShape) -> None:
    if "const" in body:
        shape["enum"] = [body["const"]]
    elif isinstance(body.get("enum"), list):
        values = [v for v in body["enum"] if v is not None]
        if len(values) != len(body["enum"]):
            shape["null"] = True
        shape["enum"] = sorted({shape_key(v): v for v in values}.values(), key=shape_key)
    if "enum" in shape:
        shape.pop("type", None)
    fmt = body.get("format")
    if shape.get("type") == "integer" and isinstance(fmt, str) and fmt in INTEGER_BOUNDS:
        low, high = INTEGER_BOUNDS[fmt]
        shape["minimum"] = max(low, body.pop("minimum", low))
        shape["maximum"] = min(high, body.pop("maximum", high))
    elif isinstance(fmt, str):
        shape["format"] = fmt


def _objects(body: dict[str, Any], shape: MutableShape, depth: int) -> None:
    props = body.get("properties")
    if isinstance(props, Mapping):
        shape["properties"] = {name: canonical(props[name], depth + 1) for name in sorted(props)}
    required = body.get("required")
    if isinstance(required, list) and required:
        shape["required"] = sorted(str(r) for r in required)
    extra = body.get("additionalProperties")
    if extra is not None and extra is not True:
        shape["additionalProperties"] = canonical(extra, depth + 1) if isinstance(extra, Mapping) else extra


def _with_null(shape: MutableShape, nullable: bool) -> MutableShape:
    if shape == ANY:
        return shape
    if nullable:
        return {**shape, "null": True}
    return shape


def without_null(shape: Shape) -> MutableShape:
    """``shape`` without its null flag."""
    return {k: v for k, v in shape.items() if k != "null"}


def shape_key(value: Any) -> str:
    """A string equal for equal shapes, or equal JSON values (for hashing and sorting)."""
    return json.dumps(value, sort_keys=True)
