"""Which model classes get a builder function, and its name (:func:`acpgen.ir.naming.builder_name`).

Every variant of a union gets one (a tagged variant's builder sets the tag), and every method's
params and result types (what a side writes to call the other, and to answer); each only where it
is a model class: an object type (or a definition that is one reference to one, which extends its
class), or a branch with a class of its own that is an object (not a union of classes, as a branch
whose payload is itself spread over a union, or that holds an inline union, is). A class reached
twice keeps the builder of the first reach, in this order.
"""

from __future__ import annotations

from collections.abc import Iterator

from acpgen import ir
from acpgen.ir import naming


def builders(types: tuple[ir.TypeDef, ...], methods: tuple[ir.Method, ...]) -> tuple[ir.Builder, ...]:
    """The builders of a protocol's types and methods, in the order they are reached (variants, then
    methods' types)."""
    by_wire = {t.wire: t for t in types}
    models = _model_classes(types)
    found: dict[str, ir.Builder] = {}
    for builder in _candidates(types, methods, by_wire):
        if builder.class_name in models and builder.class_name not in found:
            found[builder.class_name] = builder
    return tuple(found.values())


def _candidates(
    types: tuple[ir.TypeDef, ...], methods: tuple[ir.Method, ...], by_wire: dict[str, ir.TypeDef]
) -> Iterator[ir.Builder]:
    for t in types:
        if t.kind != "union":
            continue
        for v in t.variants:
            if v.catch_all:
                continue
            tag = (t.discriminator, v.tag) if t.discriminator and v.tag is not None else None
            parts: list[tuple[str | None, str]] = [(key, cls) for key, cls, _ in v.spread] or [(None, v.class_name)]
            for part, cls in parts:
                yield ir.Builder(naming.builder_name(cls), cls, t.wire, v.key, tag, part)
    for m in methods:
        for name in (m.params, m.result):
            if name is not None:
                cls = by_wire[name].class_name
                yield ir.Builder(naming.builder_name(cls), cls, name)


def _model_classes(types: tuple[ir.TypeDef, ...]) -> frozenset[str]:
    """The classes the models module defines as model classes (not type aliases)."""
    found = {t.class_name for t in types if t.kind == "object"}
    by_wire = {t.wire: t for t in types}
    for t in types:  # a definition that is one reference to a model extends its class
        seen, target = {t.wire}, t
        while target.kind == "alias" and set(target.shape) == {"ref"} and target.shape["ref"] in by_wire:
            target = by_wire[target.shape["ref"]]
            if target.wire in seen:
                break
            seen.add(target.wire)
        if target is not t and target.kind == "object":
            found.add(t.class_name)
    spread_bases = {v.class_name for t in types for v in t.variants if v.spread}
    for t in types:
        if t.kind != "union":
            continue
        for v in t.variants:
            if v.spread:
                found.update(cls for _, cls, base in v.spread if base not in spread_bases)
            elif v.hoisted and v.class_name != "Any" and "union" not in v.shape:  # an inline union: no class
                found.add(v.class_name)
    return frozenset(found)
