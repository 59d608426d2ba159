"""Which items are unstable.

From v0.7.0 on, upstream publishes ``schema.json`` (stable) and ``schema.unstable.json``;
an item is unstable exactly when it is in the unstable file and not in the stable one (the
``**UNSTABLE**`` text in descriptions is incomplete). Older revisions have one file, and the
description marker is all there is: an item is unstable when it, or the type that holds it,
carries the marker.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from acpgen.load.inventory import (
    Node,
    is_marked_unstable,
    item_map,
    item_owner,
    json_copy,
    ref_name,
    references,
    union_branches,
    variant_keys,
)


def unstable_by_comparison(stable_defs: Mapping[str, Node], unstable_defs: Mapping[str, Node]) -> frozenset[str]:
    """Keys of the items of the unstable schema that the stable schema lacks."""
    return frozenset(item_map(unstable_defs).keys() - item_map(stable_defs).keys())


def unstable_by_marker(defs: Mapping[str, Node]) -> frozenset[str]:
    """Keys of the items whose description (or whose type's) carries the ``**UNSTABLE**`` marker."""
    items = item_map(defs)
    marked_types = {
        key.removeprefix("type:") for key, node in items.items() if key.startswith("type:") and is_marked_unstable(node)
    }
    keys = {key for key, node in items.items() if is_marked_unstable(node)}
    keys |= {key for key in items if item_owner(key) in marked_types}
    return frozenset(keys)


def strip_unstable(doc: Mapping[str, Any], unstable: frozenset[str]) -> dict[str, Any]:
    """A copy of a single-file schema without its unstable items (the stable build of old revisions).

    Types that remain but refer to a removed type lose that reference too (a removed
    variant, or a property whose type is gone), so that the result is self-consistent.
    """
    result, removed_types = without_types(doc, unstable)
    removed_fields: set[tuple[str, str]] = set()
    for name, node in result["$defs"].items():
        props = node.get("properties")
        if isinstance(props, dict):
            for prop in list(props):
                if f"field:{name}.{prop}" in unstable or _refers_to(props[prop], removed_types):
                    removed_fields.add((name, prop))
                    drop_property(node, prop)
        found = union_branches(node)
        if found is not None:
            keyword = found[0]
            keys = dict(zip(map(id, found[1]), variant_keys(found[1]), strict=True))
            node[keyword] = [
                b
                for b in node[keyword]
                if not (f"variant:{name}[{keys.get(id(b))}]" in unstable or _refers_to(b, removed_types))
                and not (isinstance(b, dict) and "const" in b and f"value:{name}={b['const']}" in unstable)
            ]
    drop_default_members(result, removed_fields)
    return result


def without_types(doc: Mapping[str, Any], keys: frozenset[str]) -> tuple[dict[str, Any], set[str]]:
    """A copy of ``doc`` without the definitions of the ``type:`` keys among ``keys``, and their names."""
    result: dict[str, Any] = json_copy(dict(doc))
    gone = {k.removeprefix("type:") for k in keys if k.startswith("type:")}
    for name in gone:
        result["$defs"].pop(name, None)
    return result, gone


def drop_property(node: dict[str, Any], prop: str) -> None:
    """Remove a property from an object schema, and from its required ones."""
    del node["properties"][prop]
    if prop in node.get("required", []):
        node["required"].remove(prop)


def drop_default_members(doc: dict[str, Any], removed: set[tuple[str, str]]) -> None:
    """Take the ``removed`` fields (type name, wire name) out of every default value of ``doc`` that
    is an object of that type, at any depth (a capabilities default spells out nested objects), so
    that a build without a field does not send it by default."""
    if not removed:
        return
    defs: Mapping[str, Any] = doc.get("$defs", {})
    for schema in _schemas(doc):
        if "default" in schema:
            schema["default"] = _without(schema["default"], _type_of(schema), defs, removed)


def _schemas(node: Any, in_map: bool = False) -> Any:
    """Every schema object inside ``node`` (the values of ``properties`` and ``$defs``, not the maps)."""
    if isinstance(node, list):
        for value in node:
            yield from _schemas(value)
    elif isinstance(node, dict):
        if not in_map:
            yield node
        for key, value in node.items():
            yield from _schemas(value, in_map=not in_map and key in ("properties", "$defs", "patternProperties"))


def _type_of(schema: Mapping[str, Any]) -> str | None:
    """The one named type a schema stands for: a reference (alone or in ``allOf``), or one beside ``null``."""
    named = ref_name(schema)
    for keyword in ("anyOf", "oneOf"):
        branches = schema.get(keyword)
        if named is None and isinstance(branches, list):
            refs = [ref_name(b) for b in branches if isinstance(b, dict) and b.get("type") != "null"]
            named = refs[0] if len(refs) == 1 else None
    return named


def _without(value: Any, type_name: str | None, defs: Mapping[str, Any], removed: set[tuple[str, str]]) -> Any:
    props = defs.get(type_name, {}).get("properties") if type_name else None
    if not isinstance(value, dict) or not isinstance(props, dict):
        return value
    return {
        key: _without(member, _type_of(props[key]) if isinstance(props.get(key), dict) else None, defs, removed)
        for key, member in value.items()
        if (type_name, key) not in removed
    }


def _refers_to(node: Any, names: set[str]) -> bool:
    """Whether a node refers, anywhere inside it, to one of ``names``."""
    return not references(node).isdisjoint(names)
