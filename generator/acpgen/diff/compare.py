"""Compare two snapshots item by item and classify every change by a rule.

The order of the work: find renamed types (a removed and an added type of the same shape),
then compare methods, then every other item present on either side, then the capability rule
tables. Changes implied by a bigger one are not repeated: the fields of a removed type, the
values of an added enum, the fields of an item stabilised together with its type.
"""

from __future__ import annotations

import difflib
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from acpgen.diff.rules import LEVELS, Level, rule
from acpgen.diff.shapes import ANY, Context, Relation, canonical, describe, relate, shape_key
from acpgen.diff.snapshot import BOTH, CALLERS, Item, Method, Snapshot, Writer, variant_payload
from acpgen.inventory import Node, is_catch_all, item_owner, union_branches

LENIENCY_KEYWORDS = (
    "x-deserialize-default-on-error",
    "x-deserialize-skip-invalid-items",
    "x-deserialize-default-on-null",
)
_PEER: dict[Writer, Writer] = {"agent": "client", "client": "agent"}
_UNSTABLE_NOTE = "unstable item: no compatibility promise"


@dataclass(frozen=True, slots=True)
class Finding:
    """One classified change."""

    rule: str
    level: Level
    category: str
    item: str
    """The item key (``field:NewSessionRequest.cwd``) or rule subject it is about."""
    stability: str
    """``stable`` or ``unstable``: the item's stability in the new revision (the old one if removed)."""
    message: str
    affects: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    old: Any = None
    new: Any = None

    def sort_key(self) -> tuple[int, str, str]:
        return LEVELS.index(self.level), self.rule, self.item


@dataclass
class _Diff:
    old: Snapshot
    new: Snapshot
    ctx: Context
    findings: list[Finding] = field(default_factory=list)

    def add(
        self,
        rule_id: str,
        item: str,
        message: str,
        *,
        stability: str,
        writers: Iterable[Writer] = (),
        notes: Iterable[str] = (),
        level: Level | None = None,
        old: Any = None,
        new: Any = None,
    ) -> None:
        r = rule(rule_id)
        chosen = level or r.level
        notes = list(notes)
        category = r.category
        if category == "wire" and self.off_the_wire(item):
            category = "source"
            notes.append("not part of any method's params or result")
        if stability == "unstable" and chosen == "breaking":
            chosen = "warning"
            notes.append(_UNSTABLE_NOTE)
        self.findings.append(
            Finding(
                rule=rule_id,
                level=chosen,
                category=category,
                item=item,
                stability=stability,
                message=message,
                affects=_affects(r.direction, category, chosen, frozenset(writers)),
                notes=tuple(notes),
                old=old,
                new=new,
            )
        )

    def off_the_wire(self, item: str) -> bool:
        """Whether an item belongs to a type that no method of either revision sends (routing
        types such as ``AgentRequest``); only when the revisions name their methods at all."""
        kind = item.split(":", 1)[0]
        if kind not in ("type", "field", "variant", "value") or not (self.old.methods or self.new.methods):
            return False
        owner = item_owner(item)
        return owner not in self.old.writers and owner not in self.new.writers


def _affects(direction: str, category: str, level: Level, writers: frozenset[Writer]) -> tuple[str, ...]:
    if level == "info":
        return ()
    if category == "source":
        return ("code using the generated bindings",)
    pairs = []
    for writer in sorted(writers or BOTH):
        reader = _PEER[writer]
        if direction in ("old-writer", "both"):
            pairs.append(f"old {writer}s -> new {reader}s")
        if direction in ("new-writer", "both"):
            pairs.append(f"new {writer}s -> old {reader}s")
    return tuple(sorted(pairs))


def compare(old: Snapshot, new: Snapshot) -> list[Finding]:
    """Every finding between ``old`` and ``new``, most severe first, then by rule and item."""
    renames = find_renames(old, new)
    diff = _Diff(old, new, Context(old.defs, new.defs, renames))
    for old_name, new_name in sorted(renames.items()):
        diff.add(
            "type-renamed",
            f"type:{new_name}",
            f"type {old_name} is now named {new_name} (same shape)",
            stability=new.items[f"type:{new_name}"].stability,
            old=old_name,
            new=new_name,
        )
    _compare_methods(diff)
    _compare_items(diff)
    _compare_rule_tables(diff)
    return sorted(diff.findings, key=Finding.sort_key)


# --- renames ---------------------------------------------------------------------------------


def find_renames(old: Snapshot, new: Snapshot) -> dict[str, str]:
    """Old name -> new name for each removed type that an added type of the same shape replaces.

    Shapes are compared with annotations dropped; among several candidates of one shape the
    most similar names pair first; a trivial shape (a bare string alias) pairs only with a similar name.
    """
    removed = sorted(set(old.defs) - set(new.defs))
    added = sorted(set(new.defs) - set(old.defs))
    by_shape: dict[str, list[str]] = defaultdict(list)
    for name in added:
        by_shape[shape_key(canonical(new.defs[name]))].append(name)
    candidates = []
    for name in removed:
        shape = canonical(old.defs[name])
        for other in by_shape.get(shape_key(shape), []):
            similarity = difflib.SequenceMatcher(None, name, other).ratio()
            if _trivial(shape) and similarity < 0.6:
                continue
            candidates.append((-similarity, name, other))
    renames: dict[str, str] = {}
    taken: set[str] = set()
    for _, name, other in sorted(candidates):
        if name not in renames and other not in taken:
            renames[name] = other
            taken.add(other)
    return renames


def _trivial(shape: Mapping[str, Any]) -> bool:
    return not ({"properties", "union", "enum", "extends"} & set(shape))


# --- methods ---------------------------------------------------------------------------------


def _method_stability(snapshot: Snapshot, method: Method) -> str:
    item = snapshot.items.get(f"method:{method.side}:{method.wire}")
    return item.stability if item is not None else "stable"


def _callers(method: Method) -> frozenset[Writer]:
    return CALLERS.get(method.side, BOTH)


def _compare_methods(diff: _Diff) -> None:
    old, new, renames = diff.old.methods, diff.new.methods, diff.ctx.renames
    removed = [old[k] for k in sorted(old.keys() - new.keys())]
    added = {k: new[k] for k in sorted(new.keys() - old.keys())}
    for method in removed:
        moved = [m for m in added.values() if m.wire == method.wire]
        same_types = [
            m
            for m in added.values()
            if m.side == method.side
            and m.kind == method.kind
            and renames.get(method.params, method.params) == m.params
            and (method.result is None or renames.get(method.result, method.result) == m.result)
        ]
        stability = _method_stability(diff.old, method)
        if moved:
            target = moved[0]
            added.pop((target.side, target.wire))
            diff.add(
                "method-side-changed",
                f"method:{target.side}:{target.wire}",
                f"{method.wire} is now handled by the {target.side} side, not the {method.side} side",
                stability=_method_stability(diff.new, target),
                old=method.side,
                new=target.side,
            )
            _compare_method_pair(diff, method, target)
        elif len(same_types) == 1:
            target = same_types[0]
            added.pop((target.side, target.wire))
            diff.add(
                "method-renamed",
                f"method:{target.side}:{target.wire}",
                f"{method.wire} is now called {target.wire} (same params and result)",
                stability=_method_stability(diff.new, target),
                writers=_callers(target),
                old=method.wire,
                new=target.wire,
            )
        else:
            diff.add(
                "method-removed",
                f"method:{method.side}:{method.wire}",
                f"{method.wire} ({method.kind}, handled by the {method.side} side) was removed",
                stability=stability,
                writers=_callers(method),
            )
    for method in added.values():
        diff.add(
            "method-added",
            f"method:{method.side}:{method.wire}",
            f"{method.wire} ({method.kind}, handled by the {method.side} side) was added",
            stability=_method_stability(diff.new, method),
        )
    for key in sorted(old.keys() & new.keys()):
        _compare_method_pair(diff, old[key], new[key])


def _compare_method_pair(diff: _Diff, before: Method, after: Method) -> None:
    item = f"method:{after.side}:{after.wire}"
    stability = _method_stability(diff.new, after)
    if before.kind != after.kind:
        diff.add(
            "method-kind-changed",
            item,
            f"{after.wire} was a {before.kind} and is now a {after.kind}",
            stability=stability,
            writers=_callers(after),
            old=before.kind,
            new=after.kind,
        )
        return
    for rule_id, was, now in (
        ("method-params-changed", before.params, after.params),
        ("method-result-changed", before.result, after.result),
    ):
        if was is None or now is None or diff.ctx.renames.get(was, was) == now:
            continue
        relation = relate({"ref": was}, {"ref": now}, diff.ctx)
        if relation in (Relation.SAME, Relation.SWAPPED):
            continue
        diff.add(
            rule_id,
            item,
            f"{after.wire} now uses {now} instead of {was}, of a different shape",
            stability=stability,
            writers=_callers(after),
            old=was,
            new=now,
        )


# --- items -----------------------------------------------------------------------------------


def _effective_items(diff: _Diff) -> tuple[dict[str, Item], dict[str, Item]]:
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


def _kinds(diff: _Diff, name: str, before: Item, after: Item) -> tuple[str, str]:
    if _is_union(before.node) and _is_union(after.node):
        return "union", "union"
    return _resolved_kind(before.node, diff.old.defs), _resolved_kind(after.node, diff.new.defs)


def _is_union(node: Node) -> bool:
    return "properties" not in node and union_branches(node) is not None and "enum" not in canonical(node)


def _variant_renames(diff: _Diff, old_items: dict[str, Item], new_items: dict[str, Item]) -> dict[str, str]:
    """Removed variant -> added variant of the same union and the same shape (its key changed:
    another title, or keyed by required properties now that it has a title)."""
    removed = sorted(k for k in old_items.keys() - new_items.keys() if k.startswith("variant:"))
    added = sorted(k for k in new_items.keys() - old_items.keys() if k.startswith("variant:"))
    found: dict[str, str] = {}
    for key in removed:
        union = item_owner(key)
        shape = shape_key(canonical(old_items[key].node))
        matches = [
            k
            for k in added
            if item_owner(k) == union and k not in found.values() and shape_key(canonical(new_items[k].node)) == shape
        ]
        if len(matches) == 1:
            found[key] = matches[0]
    return found


def _rekey(items: dict[str, Item], renames: Mapping[str, str]) -> dict[str, Item]:
    """``items`` with renamed variants (and their fields) under their new keys."""
    prefixes = {
        "field:" + old.removeprefix("variant:"): "field:" + new.removeprefix("variant:") for old, new in renames.items()
    }
    result: dict[str, Item] = {}
    for key, item in items.items():
        if key in renames:
            key = renames[key]
        elif key.startswith("field:") and "[" in key and (prefix := key.rsplit(".", 1)[0]) in prefixes:
            key = prefixes[prefix] + key[len(prefix) :]
        result[key] = Item(key, item.stability, item.node, item.required)
    return result


def _compare_items(diff: _Diff) -> None:
    old_items, new_items = _effective_items(diff)
    variant_renames = _variant_renames(diff, old_items, new_items)
    for old_key, new_key in sorted(variant_renames.items()):
        diff.add(
            "variant-renamed",
            new_key,
            f"variant {_field_label(old_key)} is now keyed {_field_label(new_key)} (same shape)",
            stability=new_items[new_key].stability,
            old=old_key,
            new=new_key,
        )
    old_items = _rekey(old_items, variant_renames)
    renames = diff.ctx.renames
    renamed_new = set(renames.values())
    removed_keys = old_items.keys() - new_items.keys()
    added_keys = new_items.keys() - old_items.keys()
    removed_types = {k.removeprefix("type:") for k in removed_keys if k.startswith("type:")}
    added_types = {k.removeprefix("type:") for k in added_keys if k.startswith("type:")}
    reshaped = _reshaped_types(diff, old_items, new_items)
    field_renames = _field_renames(diff, old_items, new_items, removed_keys, added_keys)
    for key in sorted(removed_keys | added_keys | (old_items.keys() & new_items.keys())):
        before, after = old_items.get(key), new_items.get(key)
        if key.startswith("method:"):  # added, removed and changed methods: see _compare_methods
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
                and _owner_variant(key) not in removed_keys
                and key not in field_renames
                and not _promoted_union(diff, key, new_items)
                and not _moved_into_variants(diff, key)
            ):
                _removed(diff, key, before)
        elif before is None and after is not None:
            if key.startswith("type:"):
                if owner not in renamed_new:
                    diff.add("type-added", key, f"type {owner} was added", stability=after.stability)
            elif (
                owner not in added_types
                and _owner_variant(key) not in added_keys
                and key not in field_renames.values()
                and not _promoted_union(diff, key, old_items)
            ):
                _added(diff, key, after)
        elif before is not None and after is not None:
            _stability_change(diff, key, before, after)
            _changed(diff, key, before, after)
    for old_key, new_key in sorted(field_renames.items()):
        after = new_items[new_key]
        owner = item_owner(new_key)
        diff.add(
            "field-renamed",
            new_key,
            f"{_field_label(old_key)} is now {_field_label(new_key)} (same shape)",
            stability=after.stability,
            writers=diff.new.writers_of(owner),
            old=old_key,
            new=new_key,
        )


def _reshaped_types(diff: _Diff, old_items: Mapping[str, Item], new_items: Mapping[str, Item]) -> set[str]:
    """Types present on both sides whose kind changed (object, union, enum/scalar)."""
    names = set()
    for key in old_items.keys() & new_items.keys():
        if key.startswith("type:"):
            name = item_owner(key)
            old_kind, new_kind = _kinds(diff, name, old_items[key], new_items[key])
            if old_kind != new_kind and not {old_kind, new_kind} <= {"scalar", "enum", "any"}:
                names.add(name)
    return names


def _promoted_union(diff: _Diff, key: str, other_items: Mapping[str, Item]) -> bool:
    """A variant of a one-variant union whose type, on the other side, is not a union at all
    (the object it stands for was wrapped in a union, or unwrapped): nothing was added or removed."""
    if not key.startswith("variant:"):
        return False
    other = other_items.get(f"type:{item_owner(key)}")
    return other is not None and not _is_union(other.node)


def _moved_into_variants(diff: _Diff, key: str) -> bool:
    """A field that left its type's own properties but that every variant of the type's new
    union declares (``SetSessionConfigOptionRequest.value`` moved into its variants)."""
    if not key.startswith("field:") or "[" in key:
        return False
    owner, name = item_owner(key), key.rsplit(".", 1)[1]
    found = union_branches(diff.new.defs.get(owner, {}))
    if found is None:
        return False
    return all(name in (b.get("properties") or {}) and name in (b.get("required") or []) for b in found[1])


def _owner_variant(key: str) -> str:
    """For ``field:Union[tag].prop``, ``variant:Union[tag]``; else the empty string."""
    if not key.startswith("field:") or "[" not in key:
        return ""
    body = key.removeprefix("field:")
    return "variant:" + body[: body.index("]") + 1]


def _field_label(key: str) -> str:
    return key.split(":", 1)[1]


def _field_renames(
    diff: _Diff, old_items: Mapping[str, Item], new_items: Mapping[str, Item], removed: set[str], added: set[str]
) -> dict[str, str]:
    """Removed field -> added field of the same owner, shape and required-ness (only unique matches)."""
    found: dict[str, str] = {}
    for key in sorted(k for k in removed if k.startswith("field:")):
        owner = key.rsplit(".", 1)[0]
        before = old_items[key]
        shape = canonical(before.node)
        matches = [
            k
            for k in sorted(added)
            if k.startswith("field:")
            and k.rsplit(".", 1)[0] == owner
            and new_items[k].required == before.required
            and relate(shape, canonical(new_items[k].node), diff.ctx) is Relation.SAME
            and shape != ANY
        ]
        if len(matches) == 1 and matches[0] not in found.values():
            found[key] = matches[0]
    return found


def _removed(diff: _Diff, key: str, before: Item) -> None:
    owner = item_owner(key)
    writers = diff.old.writers_of(owner)
    kind = key.split(":", 1)[0]
    label = _field_label(key)
    if kind == "field":
        rule_id = "required-field-removed" if before.required else "field-removed"
        adjective = "required" if before.required else "optional"
        diff.add(rule_id, key, f"{adjective} field {label} was removed", stability=before.stability, writers=writers)
    elif kind == "variant":
        open_union = _extensible(diff.new.defs.get(owner, {}))
        diff.add(
            "variant-removed",
            key,
            f"variant {label} was removed",
            stability=before.stability,
            writers=writers,
            level="warning" if open_union else None,
            notes=["new readers take it as an unknown variant of an extensible union"] if open_union else (),
        )
    elif kind == "value":
        open_enum = _open_enum(diff.new.defs.get(owner, {}))
        diff.add(
            "enum-value-removed",
            key,
            f"enum value {label} was removed",
            stability=before.stability,
            writers=writers,
            level="warning" if open_enum else None,
            notes=["new readers accept it as an unknown value of an open enum"] if open_enum else (),
        )


def _added(diff: _Diff, key: str, after: Item) -> None:
    owner = item_owner(key)
    writers = diff.new.writers_of(owner)
    kind = key.split(":", 1)[0]
    label = _field_label(key)
    if kind == "field":
        if after.required:
            diff.add(
                "required-field-added",
                key,
                f"required field {label} was added",
                stability=after.stability,
                writers=writers,
                new=describe(canonical(after.node)),
            )
        else:
            diff.add(
                "field-added",
                key,
                f"optional field {label} was added",
                stability=after.stability,
                new=describe(canonical(after.node)),
            )
    elif kind == "variant":
        open_union = _extensible(diff.old.defs.get(owner, {}))
        diff.add(
            "variant-added",
            key,
            f"variant {label} was added",
            stability=after.stability,
            writers=writers,
            level="info" if open_union else None,
            notes=["old readers keep it as an unknown variant of an extensible union"] if open_union else (),
        )
    elif kind == "value":
        open_enum = _open_enum(diff.old.defs.get(owner, {}))
        diff.add(
            "enum-value-added",
            key,
            f"enum value {label} was added",
            stability=after.stability,
            writers=writers,
            level="info" if open_enum else None,
            notes=["old readers accept it as an unknown value of an open enum"] if open_enum else (),
        )


def _stability_change(diff: _Diff, key: str, before: Item, after: Item) -> None:
    if before.stability == after.stability:
        return
    owner_key = f"type:{item_owner(key)}"
    if not key.startswith(("type:", "method:")):
        owner_before, owner_after = diff.old.items.get(owner_key), diff.new.items.get(owner_key)
        if owner_before and owner_after and owner_before.stability != owner_after.stability:
            return  # reported once, at the type
    if after.stability == "stable":
        diff.add(
            "stabilised", key, f"{_field_label(key)} is now stable", stability="stable", old="unstable", new="stable"
        )
    else:
        diff.add(
            "destabilised",
            key,
            f"{_field_label(key)} is now unstable",
            stability="stable",
            old="stable",
            new="unstable",
        )


def _changed(diff: _Diff, key: str, before: Item, after: Item) -> None:
    kind = key.split(":", 1)[0]
    if kind == "type":
        _changed_type(diff, key, before, after)
    elif kind == "field":
        _changed_field(diff, key, before, after)
    elif kind == "variant":
        _changed_variant(diff, key, before, after)


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


def _changed_type(diff: _Diff, key: str, before: Item, after: Item) -> None:
    name = item_owner(key)
    old_shape, new_shape = canonical(before.node), canonical(after.node)
    old_kind, new_kind = _kinds(diff, name, before, after)
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
        if bool(old_shape.get("open")) != bool(new_shape.get("open")):
            opened = bool(new_shape.get("open"))
            diff.add(
                "enum-opened" if opened else "enum-closed",
                key,
                f"enum {name} now {'accepts' if opened else 'rejects'} unknown values",
                stability=stability,
                writers=writers,
            )
        return
    if old_kind == "union":
        was, now = _extensible(before.node), _extensible(after.node)
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


def _changed_field(diff: _Diff, key: str, before: Item, after: Item) -> None:
    owner = item_owner(key)
    writers = diff.new.writers_of(owner)
    label = _field_label(key)
    stability = after.stability if before.stability == after.stability else "unstable"
    old_lenient, new_lenient = _leniency(before.node), _leniency(after.node)
    if before.required != after.required:
        diff.add(
            "field-made-required" if after.required else "field-made-optional",
            key,
            f"{label} is now {'required' if after.required else 'optional'}",
            stability=stability,
            writers=writers,
        )
    old_shape, new_shape = canonical(before.node), canonical(after.node)
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
        if relation in (Relation.NARROWER, Relation.CHANGED) and "x-deserialize-default-on-error" in new_lenient:
            level, notes = "warning", ["new readers replace a rejected value by the default"]
        elif relation is Relation.WIDER and "x-deserialize-default-on-error" in old_lenient:
            level, notes = "info", ["old readers replace a value they reject by the default"]
        elif (
            relation is Relation.WIDER
            and new_shape.get("null")
            and not old_shape.get("null")
            and "x-deserialize-default-on-null" in old_lenient
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
    old_default, new_default = before.node.get("default", _MISSING), after.node.get("default", _MISSING)
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


def _leniency(node: Node) -> frozenset[str]:
    return frozenset(k for k in LENIENCY_KEYWORDS if node.get(k))


def _changed_variant(diff: _Diff, key: str, before: Item, after: Item) -> None:
    old_ref, new_ref = variant_payload(before.node), variant_payload(after.node)
    if old_ref is None or new_ref is None or diff.ctx.renames.get(old_ref, old_ref) == new_ref:
        return
    relation = relate({"ref": old_ref}, {"ref": new_ref}, diff.ctx)
    if relation in (Relation.SAME, Relation.SWAPPED):
        return
    diff.add(
        "variant-payload-changed",
        key,
        f"variant {_field_label(key)} carried {old_ref} and now carries {new_ref}, of a different shape",
        stability=after.stability,
        writers=diff.new.writers_of(item_owner(key)),
        old=old_ref,
        new=new_ref,
    )


def _extensible(node: Node) -> bool:
    found = union_branches(node)
    return found is not None and any(is_catch_all(b) for b in found[1])


def _open_enum(node: Node) -> bool:
    return bool(canonical(node).get("open"))


# --- capability rule tables ------------------------------------------------------------------


def _compare_rule_tables(diff: _Diff) -> None:
    old, new = diff.old.rules, diff.new.rules
    if old is None or new is None:
        return
    for subject in sorted(old.keys() | new.keys()):
        before, after = old.get(subject), new.get(subject)
        stability = _subject_stability(diff.new if after is not None else diff.old, subject)
        if before is None and after is not None:
            diff.add(
                "capability-rule-added",
                subject,
                f"{_field_label(subject)} now needs {after['needs']} (advertised by the {after['side']})",
                stability=stability,
                writers=[_PEER[after["side"]]] if after["side"] in _PEER else BOTH,
                new=dict(after),
            )
        elif after is None and before is not None:
            diff.add(
                "capability-rule-removed",
                subject,
                f"{_field_label(subject)} no longer needs {before['needs']}",
                stability=stability,
                old=dict(before),
            )
        elif before is not None and after is not None and dict(before) != dict(after):
            diff.add(
                "capability-rule-changed",
                subject,
                f"{_field_label(subject)} needed {before['needs']} ({before.get('presence')}) and now needs "
                f"{after['needs']} ({after.get('presence')})",
                stability=stability,
                writers=[_PEER[after["side"]]] if after["side"] in _PEER else BOTH,
                old=dict(before),
                new=dict(after),
            )


def _subject_stability(snapshot: Snapshot, subject: str) -> str:
    kind, name = subject.split(":", 1)
    if kind == "method":
        for item in snapshot.items.values():
            if item.key.startswith("method:") and item.key.split(":", 2)[2] == name:
                return item.stability
        return "stable"
    found = snapshot.items.get(subject)
    return found.stability if found is not None else "stable"
