"""Which items are unstable.

From v0.7.0 on, upstream publishes ``schema.json`` (stable) and ``schema.unstable.json``;
an item is unstable exactly when it is in the unstable file and not in the stable one (the
``**UNSTABLE**`` text in descriptions is incomplete). Older revisions have one file, and the
description marker is all there is: an item is unstable when it, or the type that holds it,
carries the marker.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from acpgen.inventory import (
    Node,
    is_marked_unstable,
    item_map,
    item_owner,
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
    result = copy.deepcopy(dict(doc))
    defs: dict[str, Any] = result["$defs"]
    removed_types = {k.removeprefix("type:") for k in unstable if k.startswith("type:")}
    for name in removed_types:
        defs.pop(name, None)
    for name, node in defs.items():
        props = node.get("properties")
        if isinstance(props, dict):
            for prop in list(props):
                if f"field:{name}.{prop}" in unstable or _refers_to(props[prop], removed_types):
                    del props[prop]
                    if prop in node.get("required", []):
                        node["required"].remove(prop)
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
    return result


def _refers_to(node: Any, names: set[str]) -> bool:
    """Whether a node refers, anywhere inside it, to one of ``names``."""
    return not references(node).isdisjoint(names)
