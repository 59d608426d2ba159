"""How two wire shapes compare: whether the new one admits the same values, more (wider), fewer
(narrower) or other ones, and a short reading of a shape for the diff's messages.

Shapes are the IR's canonical ones (:func:`acpgen.ir.shapes.canonical`); a reference and an
inline shape compare by expanding the reference, through both revisions' types
(:class:`Context`). Only the spec diff reads these.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from acpgen.ir.shapes import ANY, Shape, shape_key, without_null

_MAX_DEPTH = 4
"""How many references :func:`relate` follows into each other before it calls two shapes changed."""


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
    return _combine(_relate_base(without_null(old), without_null(new), ctx, depth), null_rel)


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
    a, b = {shape_key(v) for v in old["enum"]}, {shape_key(v) for v in new["enum"]}
    values = Relation.SAME if a == b else Relation.WIDER if a < b else Relation.NARROWER if b < a else Relation.CHANGED
    openness = Relation.SAME
    if bool(old.get("open")) != bool(new.get("open")):
        openness = Relation.WIDER if new.get("open") else Relation.NARROWER
    if old.get("open") and new.get("open") and values is not Relation.SAME:
        values = Relation.SAME  # an open enum admits every string either way
    return _combine(values, openness)


def _relate_unions(old: Shape, new: Shape, ctx: Context, depth: int) -> Relation:
    a = {shape_key(_rename(b, ctx.renames)): b for b in old.get("union", [old])}
    b = {shape_key(x): x for x in new.get("union", [new])}
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
    text = _describe_base(without_null(shape))
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
