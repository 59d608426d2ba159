"""Wire shapes: schema nodes with representation churn normalised away, and how two compare.

The IR builder gives every type, field and union variant its shape (:func:`canonical`); the spec
diff compares the shapes of two IRs (:func:`relate`), never schema JSON.

:func:`canonical` turns a node into a plain JSON value that is equal for two nodes exactly
when they admit the same JSON, as far as spelling goes: annotations are dropped, ``allOf``
with one member and single-branch ``anyOf``/``oneOf`` are unwrapped, nullability is one flag
however it is spelled (``type: [X, "null"]``, a ``null`` branch), a union of constants is an
enum, integer ``format``s become bounds. References stay references (by name), so that a change
inside a referenced type is reported once, at that type.

:func:`relate` compares two canonical shapes and says whether the new one admits the same
values, more (wider), fewer (narrower) or other ones; a reference and an inline shape compare
by expanding the reference.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from acpgen.load.inventory import INTEGER_BOUNDS, def_name

_ANNOTATIONS = frozenset(
    {"description", "title", "$comment", "examples", "discriminator", "default", "deprecated", "readOnly", "writeOnly"}
)
_MAX_DEPTH = 4
MAX_NESTING = 200
"""How deep :func:`canonical` follows a node (far beyond any real schema)."""

Shape = Mapping[str, Any]
"""A wire shape: read-only JSON data (built as a dict, never changed afterwards)."""
MutableShape = dict[str, Any]
ANY: MutableShape = {"any": True}


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
        shape["extends"] = sorted((canonical(m, depth + 1) for m in all_of), key=_key)
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
        real = [_without_null(b) for b in real if b != {"null": True}]
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
        values = sorted({_key(v): v for values in consts for v in values}.values(), key=_key)
        shape: MutableShape = {"enum": values}
        if free_strings:
            shape["open"] = True
        return shape
    unique = {_key(b): b for b in branches}
    return {"union": [unique[k] for k in sorted(unique)]}


def _scalars(body: dict[str, Any], shape: MutableShape) -> None:
    if "const" in body:
        shape["enum"] = [body["const"]]
    elif isinstance(body.get("enum"), list):
        values = [v for v in body["enum"] if v is not None]
        if len(values) != len(body["enum"]):
            shape["null"] = True
        shape["enum"] = sorted({_key(v): v for v in values}.values(), key=_key)
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


def _without_null(shape: Shape) -> MutableShape:
    return {k: v for k, v in shape.items() if k != "null"}


def _key(value: Any) -> str:
    return json.dumps(value, sort_keys=True)


def shape_key(shape: Shape) -> str:
    """A string equal for equal shapes (for hashing and sorting)."""
    return _key(shape)


class Relation(Enum):
    """How the values a new shape admits relate to those the old one admits."""

    SAME = "same"
    WIDER = "wider"
    NARROWER = "narrower"
    CHANGED = "changed"
    SWAPPED = "swapped"
    """The same values, through a reference to another type of the same shape."""


def _combine(a: Relation, b: Relation) -> Relation:
    if a is Relation.SAME:
        return b
    if b is Relation.SAME or a is b:
        return a
    if {a, b} == {Relation.SWAPPED, Relation.WIDER} or {a, b} == {Relation.SWAPPED, Relation.NARROWER}:
        return a if a is not Relation.SWAPPED else b
    return Relation.CHANGED


@dataclass(frozen=True)
class Context:
    """What :func:`relate` needs to expand references: both revisions' type shapes and the renames."""

    old_types: Mapping[str, Shape]
    new_types: Mapping[str, Shape]
    renames: Mapping[str, str] = field(default_factory=dict)
    """Old type name -> new type name, for the types found renamed."""

    def old_shape(self, name: str) -> Shape:
        return self.old_types.get(name, ANY)

    def new_shape(self, name: str) -> Shape:
        return self.new_types.get(name, ANY)


def relate(old: Shape, new: Shape, ctx: Context, depth: int = 0) -> Relation:
    """How ``new`` relates to ``old`` (see :class:`Relation`)."""
    if old == new and "ref" not in old:
        return Relation.SAME
    if old == ANY:
        return Relation.SAME if new == ANY else Relation.NARROWER
    if new == ANY:
        return Relation.WIDER
    null_rel = Relation.SAME
    if bool(old.get("null")) != bool(new.get("null")):
        null_rel = Relation.WIDER if new.get("null") else Relation.NARROWER
    return _combine(_relate_base(_without_null(old), _without_null(new), ctx, depth), null_rel)


def _relate_base(old: Shape, new: Shape, ctx: Context, depth: int) -> Relation:
    old_ref, new_ref = old.get("ref"), new.get("ref")
    if old_ref is not None and set(old) == {"ref"} and new_ref is not None and set(new) == {"ref"}:
        if ctx.renames.get(old_ref, old_ref) == new_ref:
            return Relation.SAME
        if depth >= _MAX_DEPTH:
            return Relation.CHANGED
        inner = relate(ctx.old_shape(old_ref), ctx.new_shape(new_ref), ctx, depth + 1)
        return Relation.SWAPPED if inner is Relation.SAME else inner
    if old_ref is not None and set(old) == {"ref"}:
        return _unswap(relate(ctx.old_shape(old_ref), new, ctx, depth + 1)) if depth < _MAX_DEPTH else Relation.CHANGED
    if new_ref is not None and set(new) == {"ref"}:
        return _unswap(relate(old, ctx.new_shape(new_ref), ctx, depth + 1)) if depth < _MAX_DEPTH else Relation.CHANGED
    if old == new:
        return Relation.SAME
    if "enum" in old and "enum" in new:
        return _relate_enums(old, new)
    if "union" in old or "union" in new:
        return _relate_unions(old, new, ctx, depth)
    old_type, new_type = old.get("type"), new.get("type")
    if old_type != new_type:
        if (old_type, new_type) == ("integer", "number"):
            return Relation.WIDER
        if (old_type, new_type) == ("number", "integer"):
            return Relation.NARROWER
        return Relation.CHANGED
    if old_type == "array":
        rel = relate(old.get("items", ANY), new.get("items", ANY), ctx, depth + 1)
        return _combine(rel, _relate_rest(old, new, ("items",)))
    if old_type == "integer" and ("minimum" in old or "minimum" in new or "maximum" in old or "maximum" in new):
        return _combine(_relate_range(old, new), _relate_rest(old, new, ("minimum", "maximum")))
    if old_type == "object" and "properties" not in old and "properties" not in new:
        rel = relate(old.get("additionalProperties", ANY), new.get("additionalProperties", ANY), ctx, depth + 1)
        return _combine(rel, _relate_rest(old, new, ("additionalProperties",)))
    return _relate_rest(old, new, ())


def _unswap(rel: Relation) -> Relation:
    """An inline shape equal to a referenced one: the same values (inlining is representation)."""
    return Relation.SAME if rel is Relation.SWAPPED else rel


def _relate_rest(old: Shape, new: Shape, handled: tuple[str, ...]) -> Relation:
    """Constraints other than the handled ones: added ones narrow, removed ones widen."""
    a = {k: v for k, v in old.items() if k not in handled and k != "type"}
    b = {k: v for k, v in new.items() if k not in handled and k != "type"}
    if a == b:
        return Relation.SAME
    if all(b.get(k) == v for k, v in a.items()):
        return Relation.NARROWER
    if all(a.get(k) == v for k, v in b.items()):
        return Relation.WIDER
    return Relation.CHANGED


def _relate_range(old: Shape, new: Shape) -> Relation:
    inf = float("inf")
    low_a, high_a = old.get("minimum", -inf), old.get("maximum", inf)
    low_b, high_b = new.get("minimum", -inf), new.get("maximum", inf)
    if (low_a, high_a) == (low_b, high_b):
        return Relation.SAME
    if low_b <= low_a and high_b >= high_a:
        return Relation.WIDER
    if low_b >= low_a and high_b <= high_a:
        return Relation.NARROWER
    return Relation.CHANGED


def _relate_enums(old: Shape, new: Shape) -> Relation:
    a, b = {_key(v) for v in old["enum"]}, {_key(v) for v in new["enum"]}
    values = Relation.SAME if a == b else Relation.WIDER if a < b else Relation.NARROWER if b < a else Relation.CHANGED
    openness = Relation.SAME
    if bool(old.get("open")) != bool(new.get("open")):
        openness = Relation.WIDER if new.get("open") else Relation.NARROWER
    if old.get("open") and new.get("open") and values is not Relation.SAME:
        values = Relation.SAME  # an open enum admits every string either way
    return _combine(values, openness)


def _relate_unions(old: Shape, new: Shape, ctx: Context, depth: int) -> Relation:
    a = {_key(_rename(b, ctx.renames)): b for b in old.get("union", [old])}
    b = {_key(x): x for x in new.get("union", [new])}
    if a.keys() == b.keys():
        return Relation.SAME
    if a.keys() < b.keys():
        return Relation.WIDER
    if b.keys() < a.keys():
        return Relation.NARROWER
    return Relation.CHANGED


def _rename(shape: Shape, renames: Mapping[str, str]) -> Shape:
    ref = shape.get("ref")
    if isinstance(ref, str) and ref in renames:
        return {**shape, "ref": renames[ref]}
    return shape


def describe(shape: Shape) -> str:
    """A short reading of a shape: ``object or null``, ``integer 0..65535``, ``one of "a", "b"``."""
    if shape == ANY:
        return "any value"
    if shape == {"null": True}:
        return "null"
    text = _describe_base(_without_null(shape))
    return f"{text} or null" if shape.get("null") else text


_CONSTRAINTS: tuple[tuple[str, str], ...] = (
    ("minItems", "at least {} item(s)"),
    ("maxItems", "at most {} item(s)"),
    ("uniqueItems", "unique items"),
    ("minLength", "at least {} character(s)"),
    ("maxLength", "at most {} character(s)"),
    ("pattern", "matching {}"),
    ("contentEncoding", "{}-encoded"),
    ("contentMediaType", "{} content"),
    ("minProperties", "at least {} propert(y/ies)"),
    ("maxProperties", "at most {} propert(y/ies)"),
    ("exclusiveMinimum", "above {}"),
    ("exclusiveMaximum", "below {}"),
    ("multipleOf", "a multiple of {}"),
)
"""Constraints a reading names after the kind, so that a change of one reads as one
(``array of ContentBlock`` -> ``array of ContentBlock (at least 1 item)``)."""


def _describe_base(shape: Shape) -> str:
    text = _describe_kind(shape)
    named = [_constraint(wording, shape[key], key) for key, wording in _CONSTRAINTS if key in shape]
    named = [n for n in named if n]
    if not named:
        return text
    if text.endswith(")"):  # a format already in parentheses: one list
        return f"{text[:-1]}, {', '.join(named)})"
    return f"{text} ({', '.join(named)})"


def _constraint(wording: str, value: Any, key: str) -> str:
    if value is False:
        return ""
    if key == "pattern":
        value = json.dumps(value)
    one = value == 1
    text = wording.format(value)
    return text.replace("(s)", "" if one else "s").replace("propert(y/ies)", "property" if one else "properties")


def _describe_kind(shape: Shape) -> str:
    if "ref" in shape and set(shape) == {"ref"}:
        return str(shape["ref"])
    if not shape:
        return "any value"
    if "enum" in shape:
        values = ", ".join(json.dumps(v) for v in shape["enum"][:6]) + (", ..." if len(shape["enum"]) > 6 else "")
        return f"one of {values}" + (" or another string" if shape.get("open") else "")
    if "union" in shape:
        union = shape["union"]  # beside other keywords it is one shape: a branch, an enum or a union
        branches = union.get("union", [union]) if isinstance(union, Mapping) else union
        return " or ".join(describe(b) for b in branches)
    kind = shape.get("type", "value")
    if isinstance(kind, list):
        kind = " or ".join(kind)
    if kind in ("integer", "number") and ("minimum" in shape or "maximum" in shape):
        low, high = shape.get("minimum", "-inf"), shape.get("maximum", "inf")
        return f"{kind} {low}..{high}"
    if kind == "array":
        return f"array of {describe(shape.get('items', ANY))}"
    if kind == "object" and "properties" not in shape and "additionalProperties" in shape:
        extra = shape["additionalProperties"]
        return f"map of {describe(extra)}" if isinstance(extra, dict) else "object without extra properties"
    if "properties" in shape:
        return "object {" + ", ".join(shape["properties"]) + "}"
    if "format" in shape:
        return f"{kind} ({shape['format']})"
    return str(kind)
