"""Renames: a removed and an added type, field or union variant of the same shape.

A renamed type keeps the wire (a source change); a renamed field changes it; a variant keyed
differently (another title) keeps the wire but renames its generated class.
"""

from __future__ import annotations

import dataclasses
import difflib
from collections import defaultdict
from collections.abc import Mapping
from typing import Any

from acpgen import ir
from acpgen.diff.findings import Recorder
from acpgen.diff.relations import Relation, relate
from acpgen.diff.snapshot import Item, Snapshot
from acpgen.ir.shapes import ANY, Shape, shape_key
from acpgen.load.inventory import item_owner


def find_renames(old: Snapshot, new: Snapshot) -> dict[str, str]:
    """Old name -> new name for each removed type that an added type of the same shape replaces.

    Shapes are compared with annotations dropped; among several candidates of one shape the
    most similar names pair first; a trivial shape (a bare string alias) pairs only with a similar name.
    """
    removed = sorted(set(old.types) - set(new.types))
    added = sorted(set(new.types) - set(old.types))
    by_shape: dict[str, list[str]] = defaultdict(list)
    for name in added:
        by_shape[shape_key(new.types[name].shape)].append(name)
    candidates = []
    for name in removed:
        shape = old.types[name].shape
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


def find_variant_renames(diff: Recorder, old_items: dict[str, Item], new_items: dict[str, Item]) -> dict[str, str]:
    """Removed variant -> added variant of the same union that is the same branch on the wire (its
    key changed: another title, keyed by its title now rather than by the type it refers to, or by
    required properties now that it has a title).

    Identity is the wire shape, however spelled: a referenced type and the same shape written
    inline are one variant; so are two spellings of an untagged branch that require the same
    members (what a reader tells the branch by), whatever else changed inside it: those changes
    are reported on its fields, not as a removed and an added variant."""
    removed = sorted(k for k in old_items.keys() - new_items.keys() if k.startswith("variant:"))
    added = sorted(k for k in new_items.keys() - old_items.keys() if k.startswith("variant:"))
    found: dict[str, str] = {}
    for key in removed:
        union, shape = item_owner(key), old_items[key].shape
        matches = [
            k
            for k in added
            if item_owner(k) == union
            and k not in found.values()
            and relate(shape, new_items[k].shape, diff.ctx) in (Relation.SAME, Relation.SWAPPED)
        ]
        if len(matches) == 1:
            found[key] = matches[0]
    found.update(_same_required_members(diff, removed, added, old_items, new_items, found))
    return found


def _same_required_members(
    diff: Recorder,
    removed: list[str],
    added: list[str],
    old_items: Mapping[str, Item],
    new_items: Mapping[str, Item],
    paired: Mapping[str, str],
) -> dict[str, str]:
    """The remaining removed and added variants of one union that require the same members, where
    that identity is unique on both sides."""
    old_ids = {k: wire_identity(old_items[k].shape, diff.old.types) for k in removed if k not in paired}
    new_ids = {k: wire_identity(new_items[k].shape, diff.new.types) for k in added if k not in paired.values()}
    found: dict[str, str] = {}
    for key, identity in old_ids.items():
        union = item_owner(key)
        if identity is None or _count(old_ids, union, identity) != 1:
            continue
        matches = [k for k, other in new_ids.items() if item_owner(k) == union and other == identity]
        if len(matches) == 1:
            found[key] = matches[0]
    return found


def _count(ids: Mapping[str, str | None], union: str, identity: str) -> int:
    return sum(1 for k, other in ids.items() if item_owner(k) == union and other == identity)


def wire_identity(shape: Shape, types: Mapping[str, ir.TypeDef]) -> str | None:
    """What tells an untagged object branch apart on the wire: the members it requires, and the
    constant each of them must hold if any (references followed); None for a branch that requires
    nothing (it cannot be told apart by its members)."""
    for _ in range(_REFERENCE_HOPS):
        ref = shape.get("ref")
        if set(shape) != {"ref"} or not isinstance(ref, str) or ref not in types:
            break
        shape = types[ref].shape
    required = shape.get("required")
    if not required:
        return None
    props = shape.get("properties", {})
    constants = {name: props[name]["enum"] for name in required if len(props.get(name, {}).get("enum", ())) == 1}
    return shape_key({"required": required, "constants": constants})


_REFERENCE_HOPS = 4


def rekey(items: dict[str, Item], renames: Mapping[str, str]) -> dict[str, Item]:
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
        result[key] = dataclasses.replace(item, key=key)
    return result


def find_field_renames(
    diff: Recorder, old_items: Mapping[str, Item], new_items: Mapping[str, Item], removed: set[str], added: set[str]
) -> dict[str, str]:
    """Removed field -> added field of the same owner, shape and required-ness (only unique matches)."""
    found: dict[str, str] = {}
    for key in sorted(k for k in removed if k.startswith("field:")):
        owner = key.rsplit(".", 1)[0]
        before = old_items[key]
        shape = before.shape
        matches = [
            k
            for k in sorted(added)
            if k.startswith("field:")
            and k.rsplit(".", 1)[0] == owner
            and new_items[k].required == before.required
            and relate(shape, new_items[k].shape, diff.ctx) is Relation.SAME
            and shape != ANY
        ]
        if len(matches) == 1 and matches[0] not in found.values():
            found[key] = matches[0]
    return found
