"""What the feature checks need to know of a schema's items: where each one is (a JSON pointer),
which types it refers to, which items a type key covers, and which property holds a capability.

Item keys are those of :mod:`acpgen.load.inventory`; capability paths those of
:func:`acpgen.load.capabilities.capability_properties`.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from acpgen.errors import pointer
from acpgen.load.capabilities import CapabilityProperty
from acpgen.load.inventory import Node, item_owner, ref_name


def kind_of(key: str) -> str:
    """``type``, ``field``, ``variant``, ``value`` or ``method``."""
    return key.split(":", 1)[0]


def by_owner(unstable: frozenset[str]) -> dict[str, frozenset[str]]:
    """The unstable items grouped by the type that holds them (a type key under its own name;
    methods under none): what a type key of the manifest stands for."""
    groups: dict[str, set[str]] = {}
    for key in unstable:
        if kind_of(key) != "method":
            groups.setdefault(item_owner(key), set()).add(key)
    return {name: frozenset(keys) for name, keys in groups.items()}


def covered_by_type(key: str, owned: Mapping[str, frozenset[str]]) -> frozenset[str]:
    """The unstable items a type key stands for: the type and its fields, variants and values
    (``owned`` is :func:`by_owner` of the unstable items)."""
    return owned.get(key.removeprefix("type:"), frozenset())


def method_definitions(defs: Mapping[str, Node], key: str) -> list[str]:
    """The definitions (params, result, notification) that carry a method key's ``x-method``/``x-side``."""
    _, side, wire = key.split(":", 2)
    return sorted(n for n, d in defs.items() if d.get("x-method") == wire and d.get("x-side") == side)


def references(defs: Mapping[str, Node], items: Mapping[str, Node], key: str) -> frozenset[str]:
    """The ``$defs`` names that an item refers to: anywhere inside its schema, or a method's definitions."""
    if kind_of(key) == "method":
        return frozenset(method_definitions(defs, key))
    return frozenset(_refs(items.get(key, {}))) - {item_owner(key)}


def _refs(node: Any) -> Iterator[str]:
    if isinstance(node, Mapping):
        name = ref_name({"$ref": node["$ref"]}) if isinstance(node.get("$ref"), str) else None
        if name is not None:
            yield name
        for value in node.values():
            yield from _refs(value)
    elif isinstance(node, list):
        for value in node:
            yield from _refs(value)


def item_pointer(defs: Mapping[str, Node], items: Mapping[str, Node], key: str) -> str:
    """The JSON pointer of an item in the schema document."""
    kind = kind_of(key)
    if kind == "method":
        names = [n for n in method_definitions(defs, key) if not n.endswith("Response")]
        return pointer("$defs", names[0]) if names else pointer("$defs")
    owner = item_owner(key)
    if kind == "field":
        return pointer("$defs", owner, "properties", key.split(".", 1)[1])
    if kind in ("variant", "value"):
        return pointer("$defs", owner, *_branch_place(defs.get(owner, {}), items.get(key), key))
    return pointer("$defs", owner)


def _branch_place(node: Node, branch: Node | None, key: str) -> tuple[str | int, ...]:
    """Where a union branch or enum value sits in its type: ``("oneOf", 2)``, ``("enum", 0)``."""
    for keyword in ("oneOf", "anyOf"):
        for index, candidate in enumerate(node.get(keyword) or []):
            if candidate is branch:
                return keyword, index
    enum = node.get("enum")
    if isinstance(enum, list):
        value = key.split("=", 1)[1]
        for index, candidate in enumerate(enum):
            if str(candidate) == value:
                return "enum", index
    return ()


def capability_field(defs: Mapping[str, Node], capability: CapabilityProperty) -> str | None:
    """The key of the property that holds a capability (``field:SessionCapabilities.fork``)."""
    type_name = capability.root
    *parents, leaf = capability.path.split(".")[1:]
    for segment in parents:
        prop = _properties(defs, type_name).get(segment)
        target = _target(prop) if isinstance(prop, Mapping) else None
        if target is None:
            return None
        type_name = target
    return f"field:{type_name}.{leaf}" if leaf in _properties(defs, type_name) else None


def _properties(defs: Mapping[str, Node], name: str) -> Mapping[str, Any]:
    props = defs.get(name, {}).get("properties")
    return props if isinstance(props, Mapping) else {}


def _target(prop: Node) -> str | None:
    """The type a property refers to, directly or as the non-null branch of a nullable union."""
    found = ref_name(prop)
    for branch in prop.get("anyOf") or prop.get("oneOf") or []:
        if found is None and isinstance(branch, Mapping):
            found = ref_name(branch)
    return found
