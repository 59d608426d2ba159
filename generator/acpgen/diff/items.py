"""Types, fields, union variants and enum values compared one by one.

Changes implied by a bigger one are not repeated: the fields of a removed type, the values of
an added enum, the members of a type whose kind changed, the fields of an item stabilised
together with its type.
"""

from __future__ import annotations

import json
from typing import Any

from acpgen.diff.alignment import (
    effective_items,
    is_extensible,
    is_open_enum,
    kinds,
    moved_into_variants,
    owner_variant,
    promoted_union,
    reshaped_types,
)
from acpgen.diff.findings import Recorder, item_label
from acpgen.diff.names import compare_names
from acpgen.diff.renames import find_field_renames, find_variant_renames, rekey
from acpgen.diff.rules import Level
from acpgen.diff.snapshot import Item
from acpgen.inventory import DEFAULT_ON_ERROR, DEFAULT_ON_NULL, LENIENCY_KEYWORDS, item_owner
from acpgen.shapes import Relation, describe, relate


def compare_items(diff: Recorder) -> None:
    old_items, new_items = dict(diff.old.items), dict(diff.new.items)
    variant_renames = find_variant_renames(diff, old_items, new_items)
    for old_key, new_key in sorted(variant_renames.items()):
        if _keyed_by_reference(old_key, old_items[old_key]) or _keyed_by_reference(new_key, new_items[new_key]):
            continue  # a reference on one side, the same shape inline and titled on the other: spelling
        diff.add(
            "variant-renamed",
            new_key,
            f"variant {item_label(old_key)} is now keyed {item_label(new_key)} (same shape)",
            stability=new_items[new_key].stability,
            old=old_key,
            new=new_key,
        )
    old_items = rekey(old_items, variant_renames)
    old_items, new_items = effective_items(diff, old_items, new_items)
    compare_names(diff, old_items, new_items)
    renames = diff.ctx.renames
    renamed_new = set(renames.values())
    removed_keys = old_items.keys() - new_items.keys()
    added_keys = new_items.keys() - old_items.keys()
    removed_types = {k.removeprefix("type:") for k in removed_keys if k.startswith("type:")}
    added_types = {k.removeprefix("type:") for k in added_keys if k.startswith("type:")}
    reshaped = reshaped_types(diff, old_items, new_items)
    field_renames = find_field_renames(diff, old_items, new_items, removed_keys, added_keys)
    for key in sorted(removed_keys | added_keys | (old_items.keys() & new_items.keys())):
        before, after = old_items.get(key), new_items.get(key)
        if key.startswith("method:"):  # added, removed and changed methods: see compare_methods
            if before is not None and after is not None:
                _stability_change(diff, key, before, after)
            continue
        owner = item_owner(key)
        if not key.startswith("type:") and owner in reshaped:
            continue  # reported once, as the type's change of kind
        if after is None and before is not None:
            if key.startswith("type:"):
                if owner not in renames:
                    diff.add(
                        "type-removed",
                        key,
                        f"type {owner} was removed",
                        stability=before.stability,
                        writers=diff.old.writers_of(owner),
                    )
            elif (
                owner not in removed_types
                and owner_variant(key) not in removed_keys
                and key not in field_renames
                and not promoted_union(diff, key, new_items)
                and not moved_into_variants(diff, key)
            ):
                _presence(diff, key, before, added=False)
        elif before is None and after is not None:
            if key.startswith("type:"):
                if owner not in renamed_new:
                    diff.add("type-added", key, f"type {owner} was added", stability=after.stability)
            elif (
                owner not in added_types
                and owner_variant(key) not in added_keys
                and key not in field_renames.values()
                and not promoted_union(diff, key, old_items)
            ):
                _presence(diff, key, after, added=True)
        elif before is not None and after is not None:
            _stability_change(diff, key, before, after)
            _changed(diff, key, before, after)
    for old_key, new_key in sorted(field_renames.items()):
        after = new_items[new_key]
        owner = item_owner(new_key)
        diff.add(
            "field-renamed",
            new_key,
            f"{item_label(old_key)} is now {item_label(new_key)} (same shape)",
            stability=after.stability,
            writers=diff.new.writers_of(owner),
            old=old_key,
            new=new_key,
        )


def _keyed_by_reference(key: str, item: Item) -> bool:
    """A variant keyed by the type it refers to (it has no tag or title of its own)."""
    return item.payload is not None and key.endswith(f"[{item.payload}]")


def _presence(diff: Recorder, key: str, item: Item, *, added: bool) -> None:
    """A field, variant or enum value that one side has and the other lacks.

    Whether readers tolerate a variant or value they do not know is judged on the side that
    lacks it: old readers for an addition, new readers for a removal.
    """
    owner = item_owner(key)
    verb = "added" if added else "removed"
    writers = (diff.new if added else diff.old).writers_of(owner)
    lacking = diff.old if added else diff.new
    kind = key.split(":", 1)[0]
    text = item_label(key)
    if kind == "field":
        prefix = "required-" if item.required else ""
        adjective = "required" if item.required else "optional"
        diff.add(
            f"{prefix}field-{verb}",
            key,
            f"{adjective} field {text} was {verb}",
            stability=item.stability,
            writers=writers if item.required or not added else (),
            new=describe(item.shape) if added else None,
        )
        return
    if kind == "variant":
        tolerant = is_extensible(lacking.types.get(owner))
        note = "readers without it take it as an unknown variant of an extensible union"
        rule_id, what = f"variant-{verb}", "variant"
    elif kind == "value":
        tolerant = is_open_enum(lacking.types.get(owner))
        note = "readers without it accept it as an unknown value of an open enum"
        rule_id, what = f"enum-value-{verb}", "enum value"
    else:
        return
    softened: Level = "info" if added else "warning"
    diff.add(
        rule_id,
        key,
        f"{what} {text} was {verb}",
        stability=item.stability,
        writers=writers,
        level=softened if tolerant else None,
        notes=[note] if tolerant else (),
    )


def _stability_change(diff: Recorder, key: str, before: Item, after: Item) -> None:
    if before.stability == after.stability:
        return
    owner_key = f"type:{item_owner(key)}"
    if not key.startswith(("type:", "method:")):
        owner_before, owner_after = diff.old.items.get(owner_key), diff.new.items.get(owner_key)
        if owner_before and owner_after and owner_before.stability != owner_after.stability:
            return  # reported once, at the type
    if after.stability == "stable":
        diff.add(
            "stabilised", key, f"{item_label(key)} is now stable", stability="stable", old="unstable", new="stable"
        )
    else:
        diff.add(
            "destabilised",
            key,
            f"{item_label(key)} is now unstable",
            stability="stable",
            old="stable",
            new="unstable",
        )


def _changed(diff: Recorder, key: str, before: Item, after: Item) -> None:
    kind = key.split(":", 1)[0]
    if kind == "type":
        _changed_type(diff, key, before, after)
    elif kind == "field":
        _changed_field(diff, key, before, after)
    elif kind == "variant":
        _changed_variant(diff, key, before, after)


def _changed_type(diff: Recorder, key: str, before: Item, after: Item) -> None:
    name = item_owner(key)
    old_shape, new_shape = before.shape, after.shape
    old_kind, new_kind = kinds(diff, before, after)
    writers = diff.new.writers_of(name)
    stability = after.stability
    if old_kind != new_kind and not {old_kind, new_kind} <= {"scalar", "enum", "any"}:
        diff.add(
            "type-kind-changed",
            key,
            f"type {name} was a{'n' if old_kind[0] in 'aeiou' else ''} {old_kind} and is now a"
            f"{'n' if new_kind[0] in 'aeiou' else ''} {new_kind}",
            stability=stability,
            writers=writers,
            old=old_kind,
            new=new_kind,
        )
        return
    if old_kind == "enum" and new_kind == "enum":
        was_open, opened = is_open_enum(before.definition), is_open_enum(after.definition)
        if was_open != opened:
            diff.add(
                "enum-opened" if opened else "enum-closed",
                key,
                f"enum {name} now {'accepts' if opened else 'rejects'} unknown values",
                stability=stability,
                writers=writers,
            )
        return
    if old_kind == "union":
        was, now = is_extensible(before.definition), is_extensible(after.definition)
        if was != now:
            diff.add(
                "union-opened" if now else "union-closed",
                key,
                f"union {name} now {'accepts' if now else 'rejects'} unknown variants",
                stability=stability,
                writers=writers,
            )
        return
    if old_kind == "object":
        return  # its fields are compared one by one
    relation = relate(old_shape, new_shape, diff.ctx)
    rule_id = {
        Relation.WIDER: "type-widened",
        Relation.NARROWER: "type-narrowed",
        Relation.CHANGED: "type-changed",
    }.get(relation)
    if rule_id is not None:
        diff.add(
            rule_id,
            key,
            f"type {name} was {describe(old_shape)} and is now {describe(new_shape)}",
            stability=stability,
            writers=writers,
            old=describe(old_shape),
            new=describe(new_shape),
        )


def _changed_field(diff: Recorder, key: str, before: Item, after: Item) -> None:
    owner = item_owner(key)
    writers = diff.new.writers_of(owner)
    label = item_label(key)
    stability = after.stability if before.stability == after.stability else "unstable"
    old_lenient, new_lenient = before.lenience, after.lenience
    if before.required != after.required:
        diff.add(
            "field-made-required" if after.required else "field-made-optional",
            key,
            f"{label} is now {'required' if after.required else 'optional'}",
            stability=stability,
            writers=writers,
        )
    old_shape, new_shape = before.shape, after.shape
    relation = relate(old_shape, new_shape, diff.ctx)
    if relation is not Relation.SAME:
        rule_id = {
            Relation.WIDER: "field-widened",
            Relation.NARROWER: "field-narrowed",
            Relation.CHANGED: "field-type-changed",
            Relation.SWAPPED: "field-type-swapped",
        }[relation]
        level: Level | None = None
        notes: list[str] = []
        if relation in (Relation.NARROWER, Relation.CHANGED) and DEFAULT_ON_ERROR in new_lenient:
            level, notes = "warning", ["new readers replace a rejected value by the default"]
        elif relation is Relation.WIDER and DEFAULT_ON_ERROR in old_lenient:
            level, notes = "info", ["old readers replace a value they reject by the default"]
        elif (
            relation is Relation.WIDER
            and new_shape.get("null")
            and not old_shape.get("null")
            and DEFAULT_ON_NULL in old_lenient
        ):
            level, notes = "info", ["old readers read null as the default"]
        diff.add(
            rule_id,
            key,
            f"{label} was {describe(old_shape)} and is now {describe(new_shape)}",
            stability=stability,
            writers=writers,
            level=level,
            notes=notes,
            old=describe(old_shape),
            new=describe(new_shape),
        )
    old_default, new_default = _default(before), _default(after)
    if old_default != new_default:
        diff.add(
            "field-default-changed",
            key,
            f"{label}: the default was {_show(old_default)} and is now {_show(new_default)}",
            stability=stability,
            writers=writers,
            old=None if old_default is _MISSING else old_default,
            new=None if new_default is _MISSING else new_default,
        )
    for keyword in LENIENCY_KEYWORDS:
        if (keyword in old_lenient) == (keyword in new_lenient):
            continue
        gained = keyword in new_lenient
        diff.add(
            "leniency-added" if gained else "leniency-removed",
            key,
            f"{label}: {keyword} was {'added' if gained else 'removed'}",
            stability=stability,
            writers=writers,
            old=None if gained else keyword,
            new=keyword if gained else None,
        )


_MISSING: Any = object()


def _show(value: Any) -> str:
    return "none" if value is _MISSING else repr(value)


def _default(item: Item) -> Any:
    return _MISSING if item.default_json is None else json.loads(item.default_json)


def _changed_variant(diff: Recorder, key: str, before: Item, after: Item) -> None:
    old_ref, new_ref = before.payload, after.payload
    if old_ref is None or new_ref is None or diff.ctx.renames.get(old_ref, old_ref) == new_ref:
        return
    relation = relate({"ref": old_ref}, {"ref": new_ref}, diff.ctx)
    if relation in (Relation.SAME, Relation.SWAPPED):
        return
    diff.add(
        "variant-payload-changed",
        key,
        f"variant {item_label(key)} carried {old_ref} and now carries {new_ref}, of a different shape",
        stability=after.stability,
        writers=diff.new.writers_of(item_owner(key)),
        old=old_ref,
        new=new_ref,
    )
