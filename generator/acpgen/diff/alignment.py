"""Aligning two revisions' items so that representation changes compare as equal.

A type may stand for another (an alias, a union of one variant) on one side and declare the
same fields itself on the other; a union variant may be inline on one side and a reference on
the other; a field may leave a type's own properties for every variant of its new union. These
helpers spell such items out, or say when an addition or removal is only a change of spelling.
Everything is read from the IR of each side (:class:`~acpgen.diff.snapshot.Snapshot`).
"""

from __future__ import annotations

from collections.abc import Mapping

from acpgen import ir
from acpgen.diff.findings import Recorder
from acpgen.diff.snapshot import Item, Snapshot, field_item
from acpgen.ir.shapes import ANY
from acpgen.load.inventory import item_owner

_ALIAS_DEPTH = 4


def effective_items(
    diff: Recorder, old: Mapping[str, Item], new: Mapping[str, Item]
) -> tuple[dict[str, Item], dict[str, Item]]:
    """Both sides' items (variants already keyed alike), normalised so that representation
    changes compare as equal:

    - the fields of a type that stands for another object type on one side (an alias, a union
      of one variant) and declares them itself on the other are spelled out on the alias side;
    - the fields of a union variant that is inline on one side and a reference on the other
      are spelled out on the reference side.
    """
    old_items, new_items = dict(old), dict(new)
    for key in sorted(old_items.keys() & new_items.keys()):
        before, after = old_items[key], new_items[key]
        if key.startswith("type:"):
            old_type, new_type = _definition(before), _definition(after)
            old_alias, new_alias = alias_target(diff.old, old_type), alias_target(diff.new, new_type)
            if old_alias is not None and new_alias is None and new_type.declares_properties:
                old_items.update(_spelled_out(key, diff.old.types[old_alias], before))
            if new_alias is not None and old_alias is None and old_type.declares_properties:
                new_items.update(_spelled_out(key, diff.new.types[new_alias], after))
        elif key.startswith("variant:"):
            old_ref, new_ref = before.payload, after.payload
            if (old_ref is None) == (new_ref is None):
                continue
            if old_ref is not None and old_ref in diff.old.types:
                old_items.update(_spelled_out(key, diff.old.types[old_ref], before))
            if new_ref is not None and new_ref in diff.new.types:
                new_items.update(_spelled_out(key, diff.new.types[new_ref], after))
    return old_items, new_items


def alias_target(side: Snapshot, t: ir.TypeDef, depth: int = 0) -> str | None:
    """The object type a type stands for when it declares no properties itself: a reference, or
    a union of one variant that carries a type."""
    if t.declares_properties or depth > _ALIAS_DEPTH:
        return None
    if t.variants:
        target = t.variants[0].payload if len(t.variants) == 1 else None
    else:
        ref = t.shape.get("ref")
        target = ref if set(t.shape) == {"ref"} else None
    if target is None or target not in side.types:
        return None
    inner = side.types[target]
    return alias_target(side, inner, depth + 1) or (target if inner.declares_properties else None)


def _spelled_out(owner: str, target: ir.TypeDef, item: Item) -> dict[str, Item]:
    """The fields of ``target`` as the fields of ``owner`` (a variant or an alias), read as
    :func:`~acpgen.diff.snapshot.field_item` reads any field (lenient-reading keywords, default)."""
    prefix = "field:" + owner.split(":", 1)[1]
    return {
        f"{prefix}.{f.wire}": field_item(f"{prefix}.{f.wire}", f, item.stability)
        for f in sorted(target.fields, key=lambda f: f.wire)
    }


def _resolved_kind(side: Snapshot, t: ir.TypeDef) -> str:
    """object, union, enum or scalar, seeing through aliases and unions of one variant."""
    if t.declares_properties or alias_target(side, t) is not None:
        return "object"
    return _type_kind(t.shape)


def _definition(item: Item) -> ir.TypeDef:
    assert item.definition is not None, item.key  # a type item
    return item.definition


def kinds(diff: Recorder, before: Item, after: Item) -> tuple[str, str]:
    """The kinds of a type on both sides (of the definitions its items were taken from)."""
    old_type, new_type = _definition(before), _definition(after)
    if is_union(old_type) and is_union(new_type):
        return "union", "union"
    return _resolved_kind(diff.old, old_type), _resolved_kind(diff.new, new_type)


def is_union(t: ir.TypeDef) -> bool:
    """A definition spelled as a union (of objects or of scalars), not an enum of constants."""
    return not t.declares_properties and bool(t.variants) and "enum" not in t.shape


def _type_kind(shape: Mapping[str, object]) -> str:
    if shape == ANY:
        return "any"
    if "enum" in shape:
        return "enum"
    if "union" in shape:
        return "union"
    if shape.get("type") == "object" or "properties" in shape or "extends" in shape:
        return "object"
    return "scalar"


def reshaped_types(diff: Recorder, old_items: Mapping[str, Item], new_items: Mapping[str, Item]) -> set[str]:
    """Types present on both sides whose kind changed (object, union, enum/scalar)."""
    names = set()
    for key in old_items.keys() & new_items.keys():
        if key.startswith("type:"):
            old_kind, new_kind = kinds(diff, old_items[key], new_items[key])
            if old_kind != new_kind and not {old_kind, new_kind} <= {"scalar", "enum", "any"}:
                names.add(item_owner(key))
    return names


def promoted_union(diff: Recorder, key: str, other_items: Mapping[str, Item]) -> bool:
    """A variant of a one-variant union whose type, on the other side, is not a union at all
    (the object it stands for was wrapped in a union, or unwrapped): nothing was added or removed."""
    if not key.startswith("variant:"):
        return False
    other = other_items.get(f"type:{item_owner(key)}")
    return other is not None and not is_union(_definition(other))


def moved_into_variants(diff: Recorder, key: str) -> bool:
    """A field that left its type's own properties but that every variant of the type's new
    union declares (``SetSessionConfigOptionRequest.value`` moved into its variants)."""
    if not key.startswith("field:") or "[" in key:
        return False
    owner, name = item_owner(key), key.rsplit(".", 1)[1]
    t = diff.new.types.get(owner)
    if t is None or t.kind != "union" or not t.variants:
        return False
    return all(any(f.wire == name and f.required for f in v.fields) for v in t.variants)


def owner_variant(key: str) -> str:
    """For ``field:Union[tag].prop``, ``variant:Union[tag]``; else the empty string."""
    if not key.startswith("field:") or "[" not in key:
        return ""
    body = key.removeprefix("field:")
    return "variant:" + body[: body.index("]") + 1]


def is_extensible(t: ir.TypeDef | None) -> bool:
    """A union with a catch-all branch: readers take an unknown variant as that."""
    return t is not None and any(v.catch_all for v in t.variants)


def is_open_enum(t: ir.TypeDef | None) -> bool:
    """An enum that admits values it does not list (as the IR, and so the models, read it)."""
    return t is not None and t.kind == "enum" and t.open
