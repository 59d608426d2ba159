"""The items of a schema, each under a stable key.

Keys name what a user of the bindings sees, independent of representation:

- ``type:SessionUpdate``
- ``field:NewSessionRequest.additionalDirectories``
- ``variant:SessionUpdate[plan_update]`` (keyed by tag, else title, else referenced type)
- ``value:StopReason=cancelled`` (enum values)
- ``method:agent:session/new`` (side that handles it, wire name)

Stability (:mod:`acpgen.load.stability`) and the spec diff compare these keys.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any

UNSTABLE_MARKER = "**UNSTABLE**"
"""What the schema writes in the description of an unstable item (not in every one)."""

# The schema's lenient-reading keywords (on a property): a value that fails validation reads as
# the default; list items that fail are dropped; null reads as the default.
DEFAULT_ON_ERROR = "x-deserialize-default-on-error"
SKIP_INVALID_ITEMS = "x-deserialize-skip-invalid-items"
DEFAULT_ON_NULL = "x-deserialize-default-on-null"
LENIENCY_KEYWORDS = (DEFAULT_ON_ERROR, SKIP_INVALID_ITEMS, DEFAULT_ON_NULL)

Node = Mapping[str, Any]


def ref_name(node: Node) -> str | None:
    """The ``$defs`` name a node refers to, directly or through a one-element ``allOf``."""
    ref = node.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/"):
        return def_name(ref)
    all_of = node.get("allOf")
    if isinstance(all_of, list) and len(all_of) == 1 and isinstance(all_of[0], Mapping):
        return ref_name(all_of[0])
    return None


def json_copy(doc: Any) -> Any:
    """A deep copy of a JSON document (as fast as the C JSON codec, many times faster than ``copy.deepcopy``)."""
    return json.loads(json.dumps(doc))


def def_name(ref: str) -> str:
    """The ``$defs`` name a ``#/$defs/...`` reference names (its JSON pointer escapes undone)."""
    return ref.removeprefix("#/$defs/").replace("~1", "/").replace("~0", "~")


def references(node: Any) -> frozenset[str]:
    """Every ``$defs`` name a node refers to, anywhere inside it (the one reference walker)."""
    found: set[str] = set()
    pending = [node]
    while pending:
        current = pending.pop()
        if isinstance(current, Mapping):
            ref = current.get("$ref")
            if isinstance(ref, str) and ref.startswith("#/$defs/"):
                found.add(def_name(ref))
            pending.extend(current.values())
        elif isinstance(current, list):
            pending.extend(current)
    return frozenset(found)


def variant_payload(branch: Node) -> str | None:
    """The type a union branch carries: its ``$ref``, or the one type its ``allOf`` refers to."""
    direct = ref_name(branch)
    if direct is not None:
        return direct
    all_of = branch.get("allOf")
    if isinstance(all_of, list):
        refs = [r for member in all_of if isinstance(member, Mapping) and (r := ref_name(member)) is not None]
        if len(refs) == 1:
            return refs[0]
    return None


def union_branches(node: Node) -> tuple[str, list[Node]] | None:
    """The keyword (``oneOf``/``anyOf``) and branches of a union node, ignoring a lone ``null`` branch."""
    for keyword in ("oneOf", "anyOf"):
        branches = node.get(keyword)
        if isinstance(branches, list):
            real = [b for b in branches if isinstance(b, Mapping) and b.get("type") != "null"]
            if len(real) >= 2 or (len(real) == 1 and len(branches) == 1):
                return keyword, real
    return None


def const_of(node: Node) -> str | int | None:
    """The single value a scalar branch admits (``const`` or one-element ``enum``)."""
    if "const" in node and isinstance(node["const"], str | int) and not isinstance(node["const"], bool):
        return node["const"]
    enum = node.get("enum")
    if isinstance(enum, list) and len(enum) == 1 and isinstance(enum[0], str | int):
        return enum[0]
    return None


def tag_of(branch: Node) -> tuple[str, str] | None:
    """``(property, value)`` when a branch is tagged by a required property with a constant string."""
    props = branch.get("properties")
    required = branch.get("required") or []
    if not isinstance(props, Mapping):
        return None
    for name, prop in sorted(props.items()):
        if name in required and isinstance(prop, Mapping):
            value = const_of(prop)
            if isinstance(value, str):
                return name, value
    return None


def is_unconstrained(branch: Node) -> bool:
    """A branch that admits any value (only annotations such as a description, or extension
    keywords such as ``x-deserialize-default-on-error``, which constrain nothing): keyed ``any``."""
    return not {k for k in branch if not k.startswith("x-")} - {"description", "title", "$comment", "examples"}


def is_catch_all(branch: Node) -> bool:
    """The ``not`` branch of an extensible union."""
    return "not" in branch


def variant_key(branch: Node) -> str | None:
    """The key of a union branch: its tag value, else its title, else the type it refers to."""
    if is_catch_all(branch):
        return str(branch.get("title") or "other")
    tag = tag_of(branch)
    if tag is not None:
        return tag[1]
    title = branch.get("title")
    if isinstance(title, str) and title:
        return title
    return ref_name(branch)


def variant_keys(branches: list[Node]) -> list[str | None]:
    """The keys of a union's branches. A branch with no tag, title or reference is keyed by the
    required properties that it alone has (``result`` vs ``error`` in an old response envelope),
    else by all its required properties (``id_method`` vs ``method``) when no sibling has the same."""
    keys = [variant_key(b) or ("any" if is_unconstrained(b) else None) for b in branches]
    required = [frozenset(b.get("required") or []) for b in branches]
    for index in range(len(branches)):
        if keys[index] is not None:
            continue
        others = frozenset().union(*(r for i, r in enumerate(required) if i != index))
        distinct = sorted(required[index] - others)
        if distinct:
            keys[index] = "_".join(distinct)
        elif required[index] and required.count(required[index]) == 1:
            keys[index] = "_".join(sorted(required[index]))
    return keys


def enum_values(node: Node) -> list[tuple[str | int, Node]]:
    """The constant values of an enum-like node (``enum`` list, or union of constants)."""
    enum = node.get("enum")
    if isinstance(enum, list) and len(enum) > 1:
        return [(v, {}) for v in enum if isinstance(v, str | int)]
    found = union_branches(node)
    if found is None:
        return []
    return [(v, b) for b in found[1] if (v := const_of(b)) is not None]


def description(node: Node) -> str:
    """A node's description, or the empty string."""
    text = node.get("description")
    return text if isinstance(text, str) else ""


def is_marked_unstable(node: Node) -> bool:
    """Whether the description carries the ``**UNSTABLE**`` marker."""
    return UNSTABLE_MARKER in description(node)


def iter_items(defs: Mapping[str, Node]) -> Iterator[tuple[str, Node]]:
    """Every item of a schema's ``$defs`` with its node, in a deterministic order."""
    for name in sorted(defs):
        node = defs[name]
        if not isinstance(node, Mapping):
            continue
        yield f"type:{name}", node
        method, side = node.get("x-method"), node.get("x-side")
        if isinstance(method, str) and isinstance(side, str) and not name.endswith("Response"):
            yield f"method:{side}:{method}", node
        props = node.get("properties")
        if isinstance(props, Mapping):
            for prop in sorted(props):
                yield f"field:{name}.{prop}", props[prop] if isinstance(props[prop], Mapping) else {}
        for value, branch in enum_values(node):
            yield f"value:{name}={value}", branch
        found = union_branches(node)
        if found is not None:
            for branch, key in zip(found[1], variant_keys(found[1]), strict=True):
                if const_of(branch) is None and key is not None:
                    yield f"variant:{name}[{key}]", branch


def item_owner(key: str) -> str:
    """The ``$defs`` name an item key belongs to (the empty string for a method)."""
    if key.startswith("method:"):
        return ""
    body = key.split(":", 1)[1]
    for sep in (".", "[", "="):
        body = body.split(sep, 1)[0]
    return body


def item_map(defs: Mapping[str, Node]) -> dict[str, Node]:
    """Every item of ``defs`` by key."""
    return dict(iter_items(defs))
