"""Types, fields, union variants and enum values compared one by one.

Changes implied by a bigger one are not repeated: the fields of a removed type, the values of
an added enum, the members of a type whose kind changed, the fields of an item stabilised
together with its type.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
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
from acpgen.diff.catalogue import Level
from acpgen.diff.findings import Recorder, item_label
from acpgen.diff.names import compare_names
from acpgen.diff.relations import Relation, describe, relate
from acpgen.diff.renames import find_field_renames, find_variant_renames, rekey
from acpgen.diff.snapshot import Item
from acpgen.load.inventory import DEFAULT_ON_ERROR, DEFAULT_ON_NULL, LENIENCY_KEYWORDS, item_owner


def compare_items(diff: Recorder) -> None:
    """Every type, field, variant and enum value present on either side, compared."""
    old_items, new_items = _aligned(diff)
    compare_names(diff, old_items, new_items)
    pass_ = _ItemPass(diff=diff, old_items=old_items, new_items=new_items)
    for key in sorted(old_items.keys() | new_items.keys()):
        pass_.compare(key)
    _report_field_renames(diff, pass_.field_renames, new_items)


def _aligned(diff: Recorder) -> tuple[dict[str, Item], dict[str, Item]]:
    """Both sides' items with renamed variants under their new keys and spelling normalised."""
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
    return effective_items(diff, rekey(old_items, variant_renames), new_items)


@dataclass
class _ItemPass:
    """What comparing one item needs to know of the others: what was removed and added as a
    whole (a removed type's fields are not reported again), renames, reshaped types."""

    diff: Recorder
    old_items: dict[str, Item]
    new_items: dict[str, Item]
    removed: set[str] = field(init=False)
    added: set[str] = field(init=False)
    reshaped: set[str] = field(init=False)
    field_renames: dict[str, str] = field(init=False)

    def __post_init__(self) -> None:
        self.removed = self.old_items.keys() - self.new_items.keys()
        self.added = self.new_items.keys() - self.old_items.keys()
        self.reshaped = reshaped_types(self.diff, self.old_items, self.new_items)
        self.field_renames = find_field_renames(self.diff, self.old_items, self.new_items, self.removed, self.added)

    def compare(self, key: str) -> None:
        before, after = self.old_items.get(key), self.new_items.get(key)
        if key.startswith("method:"):  # added, removed and changed methods: see compare_methods
            if before is not None and after is not None:
                _stability_change(self.diff, key, before, after)
        elif not key.startswith("type:") and item_owner(key) in self.reshaped:
            return  # reported once, as the type's change of kind
        elif before is not None and after is not None:
            _stability_change(self.diff, key, before, after)
            _changed(self.diff, key, before, after)
        elif before is not None:
            self._gone(key, before)
        elif after is not None:
            self._new(key, after)

    def _gone(self, key: str, before: Item) -> None:
        owner = item_owner(key)
        if key.startswith("type:"):
            if owner not in self.diff.ctx.renames:
                writers = self.diff.old.writers_of(owner)
                message = f"type {owner} was removed"
                self.diff.add("type-removed", key, message, stability=before.stability, writers=writers)
        elif not (
            f"type:{owner}" in self.removed
            or owner_variant(key) in self.removed
            or key in self.field_renames
            or promoted_union(self.diff, key, self.new_items)
            or moved_into_variants(self.diff, key)
        ):
            _presence(self.diff, key, before, added=False)

    def _new(self, key: str, after: Item) -> None:
        owner = item_owner(key)
        if key.startswith("type:"):
            if owner not in set(self.diff.ctx.renames.values()):
                self.diff.add("type-added", key, f"type {owner} was added", stability=after.stability)
        elif not (
            f"type:{owner}" in self.added
            or owner_variant(key) in self.added
            or key in self.field_renames.values()
            or promoted_union(self.diff, key, self.old_items)
        ):
            _presence(self.diff, key, after, added=True)


def _report_field_renames(diff: Recorder, renames: dict[str, str], new_items: dict[str, Item]) -> None:
    for old_key, new_key in sorted(renames.items()):
        diff.add(
            "field-renamed",
            new_key,
            f"{item_label(old_key)} is now {item_label(new_key)} (same shape)",
            stability=new_items[new_key].stability,
            writers=diff.new.writers_of(item_owner(new_key)),
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
    old_kind, new_kind = kinds(diff, before, after)

    def add(rule_id: str, message: str, **details: Any) -> None:
        writers = diff.new.writers_of(name)
        diff.add(rule_id, key, message, stability=after.stability, writers=writers, **details)

    if old_kind != new_kind and not {old_kind, new_kind} <= {"scalar", "enum", "any"}:
        message = f"type {name} was {_a(old_kind)} and is now {_a(new_kind)}"
        add("type-kind-changed", message, old=old_kind, new=new_kind)
    elif old_kind == new_kind == "enum":
        was, now = is_open_enum(before.definition), is_open_enum(after.definition)
        if was != now:
            add(f"enum-{'opened' if now else 'closed'}", f"enum {name} now {_takes(now)} unknown values")
    elif old_kind == "union":
        was, now = is_extensible(before.definition), is_extensible(after.definition)
        if was != now:
            add(f"union-{'opened' if now else 'closed'}", f"union {name} now {_takes(now)} unknown variants")
    elif old_kind != "object":  # an object's fields are compared one by one
        rule_id = _TYPE_RULES.get(relate(before.shape, after.shape, diff.ctx))
        if rule_id is not None:
            old_text, new_text = describe(before.shape), describe(after.shape)
            add(rule_id, f"type {name} was {old_text} and is now {new_text}", old=old_text, new=new_text)


_TYPE_RULES = {Relation.WIDER: "type-widened", Relation.NARROWER: "type-narrowed", Relation.CHANGED: "type-changed"}


def _a(kind: str) -> str:
    return f"{'an' if kind[0] in 'aeiou' else 'a'} {kind}"


def _takes(opened: bool) -> str:
    return "accepts" if opened else "rejects"


@dataclass(frozen=True, slots=True)
class _FieldChange:
    """One field present on both sides: where its findings go and who they affect."""

    diff: Recorder
    key: str
    before: Item
    after: Item

    @property
    def label(self) -> str:
        return item_label(self.key)

    def add(self, rule_id: str, message: str, **details: Any) -> None:
        stable_both = self.before.stability == self.after.stability
        self.diff.add(
            rule_id,
            self.key,
            message,
            stability=self.after.stability if stable_both else "unstable",
            writers=self.diff.new.writers_of(item_owner(self.key)),
            **details,
        )


def _changed_field(diff: Recorder, key: str, before: Item, after: Item) -> None:
    change = _FieldChange(diff=diff, key=key, before=before, after=after)
    if before.required != after.required:
        now = "required" if after.required else "optional"
        change.add(f"field-made-{now}", f"{change.label} is now {now}")
    _field_shape(change)
    old_default, new_default = _default(before), _default(after)
    if old_default != new_default:
        change.add(
            "field-default-changed",
            f"{change.label}: the default was {_show(old_default)} and is now {_show(new_default)}",
            old=None if old_default is _MISSING else old_default,
            new=None if new_default is _MISSING else new_default,
        )
    for keyword in LENIENCY_KEYWORDS:
        if (keyword in before.lenience) != (keyword in after.lenience):
            gained = keyword in after.lenience
            change.add(
                "leniency-added" if gained else "leniency-removed",
                f"{change.label}: {keyword} was {'added' if gained else 'removed'}",
                old=None if gained else keyword,
                new=keyword if gained else None,
            )


_FIELD_RULES = {
    Relation.WIDER: "field-widened",
    Relation.NARROWER: "field-narrowed",
    Relation.CHANGED: "field-type-changed",
    Relation.SWAPPED: "field-type-swapped",
}


def _field_shape(change: _FieldChange) -> None:
    """A field whose values changed, softened where a lenient reader tolerates the difference."""
    old_shape, new_shape = change.before.shape, change.after.shape
    relation = relate(old_shape, new_shape, change.diff.ctx)
    if relation is Relation.SAME:
        return
    level, notes = _tolerated(relation, change.before, change.after)
    was, now = describe(old_shape), describe(new_shape)
    message = f"{change.label} was {was} and is now {now}"
    change.add(_FIELD_RULES[relation], message, level=level, notes=notes, old=was, new=now)


def _tolerated(relation: Relation, before: Item, after: Item) -> tuple[Level | None, list[str]]:
    """The level and note of a change of values that a lenient reader absorbs, if one does."""
    if relation in (Relation.NARROWER, Relation.CHANGED) and DEFAULT_ON_ERROR in after.lenience:
        return "warning", ["new readers replace a rejected value by the default"]
    if relation is Relation.WIDER and DEFAULT_ON_ERROR in before.lenience:
        return "info", ["old readers replace a value they reject by the default"]
    gains_null = after.shape.get("null") and not before.shape.get("null")
    if relation is Relation.WIDER and gains_null and DEFAULT_ON_NULL in before.lenience:
        return "info", ["old readers read null as the default"]
    return None, []


_MISSING: Any = object()


def _show(value: Any) -> str:
    """A default as the JSON it is on the wire (``none`` when there is none)."""
    return "none" if value is _MISSING else json.dumps(value, sort_keys=True, ensure_ascii=False)


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
