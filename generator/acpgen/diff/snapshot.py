"""One side of a diff: every item of a revision, with its stability, node and writers.

A revision has a stable and an unstable schema (older revisions one file, whose unstable
items are marked in descriptions; their stable part is that file without them). An item is
*stable* when the stable schema has it, else *unstable*; its node is taken from the schema
that defines it as such. Items are keyed as in :mod:`acpgen.inventory`, plus the fields of
inline union variants (``field:SessionUpdate[plan].entries``).

Which side *writes* a type decides whom a change breaks: the caller writes a request's params
(the client for an agent-side method), the handler writes its result, the sender writes a
notification; a type written by one side is written by it wherever it is referenced from.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from acpgen.build import method_definitions
from acpgen.inventory import Node, item_map, ref_name, tag_of, union_branches, variant_keys
from acpgen.stability import strip_unstable, unstable_by_marker

Stability = Literal["stable", "unstable"]
Writer = Literal["agent", "client"]

BOTH: frozenset[Writer] = frozenset({"agent", "client"})
# The side that calls a method handled by an agent or a client (other sides: both may call).
CALLERS: dict[str, frozenset[Writer]] = {
    "agent": frozenset({"client"}),
    "client": frozenset({"agent"}),
}


@dataclass(frozen=True, slots=True)
class Method:
    """A wire method as the diff sees it."""

    wire: str
    side: str
    kind: Literal["request", "notification"]
    params: str
    result: str | None


@dataclass(frozen=True, slots=True)
class Item:
    """One item of a revision."""

    key: str
    stability: Stability
    node: Node
    required: bool = False
    """For a field: whether its owner requires it."""


@dataclass(frozen=True, slots=True)
class Snapshot:
    """Everything the comparison reads from one revision."""

    label: str
    items: Mapping[str, Item]
    defs: Mapping[str, Node]
    """The widest set of definitions (the unstable schema's)."""
    methods: Mapping[tuple[str, str], Method]
    """By (side, wire name)."""
    writers: Mapping[str, frozenset[Writer]]
    """Type name -> the sides that write it (both when no method reaches it)."""
    rules: Mapping[str, Mapping[str, Any]] | None
    """The capability rule table by subject (``method:session/load``), if the revision has one."""

    def writers_of(self, type_name: str) -> frozenset[Writer]:
        return self.writers.get(type_name, BOTH)


def snapshot(
    label: str,
    stable_doc: Mapping[str, Any],
    unstable_doc: Mapping[str, Any] | None,
    rules: Mapping[str, Any] | None = None,
) -> Snapshot:
    """The snapshot of a revision; without an unstable document, unstable items are the marked ones."""
    if unstable_doc is None:
        unstable_doc = stable_doc
        stable_doc = strip_unstable(stable_doc, unstable_by_marker(stable_doc["$defs"]))
    stable_defs: Mapping[str, Node] = stable_doc["$defs"]
    unstable_defs: Mapping[str, Node] = unstable_doc["$defs"]
    required = required_fields(stable_defs) | required_fields(unstable_defs)
    items = {key: Item(key, "stable", node, key in required) for key, node in _items(stable_defs).items()}
    for key, node in _items(unstable_defs).items():
        items.setdefault(key, Item(key, "unstable", node, key in required))
    methods = _methods(unstable_defs)
    return Snapshot(
        label=label,
        items=dict(sorted(items.items())),
        defs=unstable_defs,
        methods=methods,
        writers=_writers(unstable_defs, methods),
        rules=_rules_by_subject(rules),
    )


def _items(defs: Mapping[str, Node]) -> dict[str, Node]:
    items = item_map(defs)
    items.update(variant_fields(defs))
    return items


def required_fields(defs: Mapping[str, Node]) -> set[str]:
    """Keys of the fields (of types and of inline union variants) that their owner requires."""
    keys = set()
    for name, node in defs.items():
        keys |= {f"field:{name}.{prop}" for prop in node.get("required") or []}
        found = union_branches(node)
        if found is None:
            continue
        for branch, key in zip(found[1], variant_keys(found[1]), strict=True):
            keys |= {f"field:{name}[{key}].{prop}" for prop in branch.get("required") or []}
    return keys


def variant_fields(defs: Mapping[str, Node]) -> Iterator[tuple[str, Node]]:
    """``field:Union[key].prop`` for the properties an inline union variant declares itself (not its tag)."""
    for name in sorted(defs):
        found = union_branches(defs[name])
        if found is None:
            continue
        for branch, key in zip(found[1], variant_keys(found[1]), strict=True):
            props = branch.get("properties")
            if key is None or not isinstance(props, Mapping):
                continue
            tag = tag_of(branch)
            for prop in sorted(props):
                if tag is None or prop != tag[0]:
                    yield f"field:{name}[{key}].{prop}", props[prop] if isinstance(props[prop], Mapping) else {}


def variant_payload(branch: Node) -> str | None:
    """The type a union variant carries: its ``$ref``, or the one type its ``allOf`` refers to."""
    direct = ref_name(branch)
    if direct is not None:
        return direct
    all_of = branch.get("allOf")
    if isinstance(all_of, list):
        refs = [r for member in all_of if isinstance(member, Mapping) and (r := ref_name(member)) is not None]
        if len(refs) == 1:
            return refs[0]
    return None


def _methods(defs: Mapping[str, Node]) -> dict[tuple[str, str], Method]:
    found = method_definitions(defs)
    methods: dict[tuple[str, str], Method] = {}
    for (side, wire, role), name in sorted(found.items()):
        if role == "result":
            continue
        result = found.get((side, wire, "result")) if role == "params" else None
        kind: Literal["request", "notification"] = "request" if result is not None else "notification"
        methods.setdefault((side, wire), Method(wire, side, kind, name, result))
    return methods


def _writers(defs: Mapping[str, Node], methods: Mapping[tuple[str, str], Method]) -> dict[str, frozenset[Writer]]:
    writers: dict[str, set[Writer]] = {}
    for method in methods.values():
        caller = CALLERS.get(method.side, BOTH)
        handler: frozenset[Writer] = BOTH - caller if caller != BOTH else BOTH
        _spread(defs, method.params, caller, writers)
        if method.result is not None:
            _spread(defs, method.result, handler, writers)
    return {name: frozenset(sides) for name, sides in sorted(writers.items())}


def _spread(defs: Mapping[str, Node], root: str, sides: frozenset[Writer], writers: dict[str, set[Writer]]) -> None:
    """Mark ``root`` and every type it references as written by ``sides``."""
    stack = [root]
    while stack:
        name = stack.pop()
        known = writers.setdefault(name, set())
        if sides <= known:
            continue
        known |= sides
        stack.extend(sorted(_references(defs.get(name, {}))))


def _references(node: Any) -> set[str]:
    found: set[str] = set()
    if isinstance(node, Mapping):
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/"):
            found.add(ref.removeprefix("#/$defs/"))
        for value in node.values():
            found |= _references(value)
    elif isinstance(node, list):
        for value in node:
            found |= _references(value)
    return found


def _rules_by_subject(table: Mapping[str, Any] | None) -> dict[str, Mapping[str, Any]] | None:
    if table is None:
        return None
    rules: dict[str, Mapping[str, Any]] = {}
    for entry in table.get("rules", []):
        for kind in ("method", "field", "variant", "value"):
            if kind in entry:
                rules[f"{kind}:{entry[kind]}"] = entry
    return dict(sorted(rules.items()))
