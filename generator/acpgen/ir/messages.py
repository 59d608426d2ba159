"""The schema's root as named message unions (:class:`acpgen.ir.MessageUnion`).

The root is a union of what each side may write (a titled branch uniting the side's request,
response and notification envelopes: ``Agent`` -> ``AgentOutgoingMessage``) and of the
protocol-level notification (a titled branch that is an envelope itself: ``ProtocolLevel`` ->
``ProtocolLevelMessage``); their union is ``AcpMessage``. Names come from the branches' titles
(:func:`acpgen.ir.naming.message_class_name`), never their positions. A branch of another shape,
or whose name another class has, gets no class: the types it refers to are members of the root.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from acpgen import ir
from acpgen.ir import naming


def message_unions(root: Mapping[str, Any], types: tuple[ir.TypeDef, ...]) -> tuple[ir.MessageUnion, ...]:
    """The branches of the schema's root (the document without its definitions), in order."""
    taken = {t.wire for t in types} | {v.class_name for t in types for v in t.variants if v.hoisted}
    taken |= {cls for t in types for v in t.variants for _, cls, _ in v.spread}
    found: list[ir.MessageUnion] = []
    for branch in _branches(root):
        union = _named(branch, taken | {m.class_name for m in found})
        if union is None:
            union = ir.MessageUnion("types", "", tuple(r for r in dict.fromkeys(refs(branch)) if r in taken), branch)
        found.append(union)
    return tuple(found)


def _branches(top: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    branches = top.get("anyOf")
    if isinstance(branches, list):
        return [b for b in branches if isinstance(b, Mapping)]
    return [top]


def _named(branch: Mapping[str, Any], taken: set[str]) -> ir.MessageUnion | None:
    """The message union of a titled root branch, or None for another shape or a name already taken."""
    title = branch.get("title")
    if not isinstance(title, str) or not title.isidentifier():
        return None
    props = branch.get("properties")
    if isinstance(props, Mapping) and isinstance(props.get("method"), Mapping):
        name = naming.message_class_name(title, "envelope")
        params = props.get("params")
        held = tuple(dict.fromkeys(refs(params))) if isinstance(params, Mapping) else ()
        return None if name in taken else ir.MessageUnion("envelope", name, held, branch)
    envelopes = tuple(ref for item in branch.get("anyOf") or () if isinstance(item, Mapping) for ref in refs(item)[:1])
    name = naming.message_class_name(title, "outgoing")
    if not envelopes or not all(ref in taken for ref in envelopes) or name in taken:
        return None
    return ir.MessageUnion("outgoing", name, envelopes, branch)


def refs(node: Any) -> list[str]:
    """The ``$defs`` names a node refers to, in order."""
    out: list[str] = []
    pending = [node]
    while pending:
        current = pending.pop(0)
        if isinstance(current, Mapping):
            ref = current.get("$ref")
            if isinstance(ref, str) and ref.startswith("#/$defs/"):
                out.append(ref.removeprefix("#/$defs/"))
            pending[:0] = list(current.values())
        elif isinstance(current, list):
            pending[:0] = current
    return out
