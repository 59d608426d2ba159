"""Aligning two revisions' items so that representation changes compare as equal.

A type may stand for another (an alias, a union of one variant) on one side and declare the
same fields itself on the other; a union variant may be inline on one side and a reference on
the other; a field may leave a type's own properties for every variant of its new union. These
helpers spell such items out, or say when an addition or removal is only a change of spelling.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from acpgen.diff.findings import Recorder
from acpgen.diff.shapes import ANY, canonical
from acpgen.diff.snapshot import Item, variant_payload
from acpgen.inventory import Node, is_catch_all, item_owner, union_branches


def effective_items(diff: Recorder) -> tuple[dict[str, Item], dict[str, Item]]:
    """Both sides' items, normalised so that representation changes compare as equal:

    - the fields of a type that stands for another object type on one side (an alias, a union
      of one variant) and declares them itself on the other are spelled out on the alias side;
    - the fields of a union variant that is inline on one side and a reference on the other
      are spelled out on the reference side.
    """
    old_items, new_items = dict(diff.old.items), dict(diff.new.items)
    for key in sorted(old_items.keys() & new_items.keys()):
        before, after = old_items[key], new_items[key]
        if key.startswith("type:"):
            old_alias, new_alias = _alias_target(before.node, diff.old.defs), _alias_target(after.node, diff.new.defs)
            if old_alias is not None and new_alias is None and "properties" in after.node:
                old_items.update(_spelled_out(key, old_alias, before, diff.old.defs))
            if new_alias is not None and old_alias is None and "properties" in before.node:
                new_items.update(_spelled_out(key, new_alias, after, diff.new.defs))
        elif key.startswith("variant:"):
            old_ref, new_ref = variant_payload(before.node), variant_payload(after.node)
            if (old_ref is None) == (new_ref is None):
                continue
            if old_ref is not None:
                old_items.update(_spelled_out(key, old_ref, before, diff.old.defs))
            if new_ref is not None:
                new_items.update(_spelled_out(key, new_ref, after, diff.new.defs))
    return old_items, new_items


def _alias_target(node: Node, defs: Mapping[str, Node], depth: int = 0) -> str | None:
    """The object type a type stands for when it declares no properties itself: a reference, or
    a union of one variant that carries a type."""
    if "properties" in node or depth > _ALIAS_DEPTH:
        return None
    found = union_branches(node)
    if found is not None:
        target = variant_payload(found[1][0]) if len(found[1]) == 1 else None
    else:
        ref = canonical(node).get("ref")
        target = ref if set(canonical(node)) == {"ref"} else None
    if target is None or target not in defs:
        return None
    return _alias_target(defs[target], defs, depth + 1) or (target if "properties" in defs[target] else None)


_ALIAS_DEPTH = 4


def _spelled_out(owner: str, payload: str, item: Item, defs: Mapping[str, Node]) -> dict[str, Item]:
    target = defs.get(payload, {})
    props = target.get("properties") or {}
    required = set(target.get("required") or [])
    prefix = "field:" + owner.split(":", 1)[1]
    return {
        f"{prefix}.{name}": Item(f"{prefix}.{name}", item.stability, props[name], name in required)
        for name in sorted(props)
    }


def _resolved_kind(node: Node, defs: Mapping[str, Node]) -> str:
    """object, union, enum or scalar, seeing through aliases and unions of one variant."""
    if "properties" in node:
        return "object"
    alias = _alias_target(node, defs)
    if alias is not None:
        return "object"
    return _type_kind(canonical(node))


def kinds(diff: Recorder, name: str, before: Item, after: Item) -> tuple[str, str]:
    if is_union(before.node) and is_union(after.node):
        return "union", "union"
    return _resolved_kind(before.node, diff.old.defs), _resolved_kind(after.node, diff.new.defs)


def is_union(node: Node) -> bool:
    return "properties" not in node and union_branches(node) is not None and "enum" not in canonical(node)


def _type_kind(shape: Mapping[str, Any]) -> str:
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
            name = item_owner(key)
            old_kind, new_kind = kinds(diff, name, old_items[key], new_items[key])
            if old_kind != new_kind and not {old_kind, new_kind} <= {"scalar", "enum", "any"}:
                names.add(name)
    return names


def promoted_union(diff: Recorder, key: str, other_items: Mapping[str, Item]) -> bool:
    """A variant of a one-variant union whose type, on the other side, is not a union at all
    (the object it stands for was wrapped in a union, or unwrapped): nothing was added or removed."""
    if not key.startswith("variant:"):
        return False
    other = other_items.get(f"type:{item_owner(key)}")
    return other is not None and not is_union(other.node)


def moved_into_variants(diff: Recorder, key: str) -> bool:
    """A field that left its type's own properties but that every variant of the type's new
    union declares (``SetSessionConfigOptionRequest.value`` moved into its variants)."""
    if not key.startswith("field:") or "[" in key:
        return False
    owner, name = item_owner(key), key.rsplit(".", 1)[1]
    found = union_branches(diff.new.defs.get(owner, {}))
    if found is None:
        return False
    return all(name in (b.get("properties") or {}) and name in (b.get("required") or []) for b in found[1])


def owner_variant(key: str) -> str:
    """For ``field:Union[tag].prop``, ``variant:Union[tag]``; else the empty string."""
    if not key.startswith("field:") or "[" not in key:
        return ""
    body = key.removeprefix("field:")
    return "variant:" + body[: body.index("]") + 1]


def is_extensible(node: Node) -> bool:
    found = union_branches(node)
    return found is not None and any(is_catch_all(b) for b in found[1])


def is_open_enum(node: Node) -> bool:
    return bool(canonical(node).get("open"))
