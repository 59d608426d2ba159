"""The schema's top-level message unions, as datamodel-code-generator's input.

The schema's root is a union of what each side may write (upstream's ``AgentOutgoingMessage``,
``ClientOutgoingMessage``, the unstable build's ``ProxyOutgoingMessage``: the request, response
and notification envelopes of one side) and of the protocol-level notification (``$/cancel_request``,
either side), each a titled, inline branch. Each becomes a named type: a side's branch
``<title>OutgoingMessage`` (a union of its envelopes), the protocol-level branch
``<title>Message`` (an envelope itself, its ``params`` keyed by method as the other envelopes'
are); the root is ``AcpMessage``, the union of those. Every one of them reads a message by its
shape and method (``ByEnvelope``): pydantic-core picks the envelope and the params model from
``method`` in one pass, and what that refuses is read as the plain union reads it.

The envelopes' ``jsonrpc`` member is not named (the envelope definitions do not name it either):
it is kept as a member the schema does not name, and written back.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from acpgen import ir
from acpgen.ir import naming
from acpgen.render.expressions import Call, Name

ROOT_NAME = "AcpMessage"
KEYED = Call("ByEnvelope")
"""The reading rule of every top-level message union (the package's ``_support``)."""
JSONRPC = "jsonrpc"


@dataclass(slots=True)
class Root:
    """The root's part of the models' input: new definitions, their template data, the root schema."""

    schema: dict[str, Any]
    definitions: dict[str, Any] = field(default_factory=dict)
    template_data: dict[str, dict[str, Any]] = field(default_factory=dict)


def root(defs: Mapping[str, Any], protocol: ir.Protocol) -> Root:
    """The root of the models' schema (``AcpMessage``) and the named types of its branches."""
    found = Root(schema={})
    members: list[str] = []
    for branch in _branches(protocol.root):
        name = _named(branch, defs, found, protocol)
        if name is not None:
            members.append(name)
        else:  # a branch of no known shape: the types it refers to are members of the root
            members += [r for r in dict.fromkeys(_refs(branch)) if r in defs]
    members = list(dict.fromkeys(members))
    if not members:
        found.schema = {"title": ROOT_NAME, "type": "object"}
        return found
    found.schema = {
        "title": ROOT_NAME,
        "description": "Any message of the protocol, as the schema's root lists them.",
        "anyOf": [{"$ref": f"#/$defs/{n}"} for n in members],
    }
    found.template_data[ROOT_NAME] = {"acp_alias_rules": (KEYED,)}
    return found


def _branches(top: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    branches = top.get("anyOf")
    if isinstance(branches, list):
        return [b for b in branches if isinstance(b, Mapping)]
    return [top]


def _named(branch: Mapping[str, Any], defs: Mapping[str, Any], found: Root, protocol: ir.Protocol) -> str | None:
    """The named type of a titled root branch (added to ``found``), or None for another shape."""
    title = branch.get("title")
    if not isinstance(title, str) or not title.isidentifier():
        return None
    props = branch.get("properties")
    if isinstance(props, Mapping) and isinstance(props.get("method"), Mapping):
        return _envelope(naming.type_class_name(f"{title}Message"), branch, defs, found, protocol)
    envelopes = [ref for item in branch.get("anyOf") or () if isinstance(item, Mapping) for ref in _refs(item)[:1]]
    name = naming.type_class_name(f"{title}OutgoingMessage")
    if not envelopes or not all(ref in defs for ref in envelopes) or name in defs or name in found.definitions:
        return None
    found.definitions[name] = {
        "description": _description(branch, "Any message one side writes: its requests, responses and notifications."),
        "anyOf": [{"$ref": f"#/$defs/{ref}"} for ref in envelopes],
    }
    found.template_data[name] = {"acp_alias_rules": (KEYED,)}
    return name


def _envelope(
    name: str, branch: Mapping[str, Any], defs: Mapping[str, Any], found: Root, protocol: ir.Protocol
) -> str | None:
    """A root branch that is an envelope itself (the protocol-level notification), as an object type."""
    if name in defs or name in found.definitions:
        return None
    props = {k: copy.deepcopy(v) for k, v in branch["properties"].items() if k != JSONRPC}
    if isinstance(props.get("params"), dict):
        props["params"] = _flat_union(props["params"])
    required = [r for r in branch.get("required") or () if r != JSONRPC and r in props]
    found.definitions[name] = {
        "type": "object",
        "description": _description(branch, "A protocol-level message, which either side may write."),
        "properties": props,
        "required": required,
        "additionalProperties": True,
    }
    kind = "request" if "id" in props else "notification"
    params = set(_refs(props.get("params", {})))
    keyed = {
        m.wire: protocol.type(m.params).class_name for m in protocol.methods if m.kind == kind and m.params in params
    }
    if keyed:
        by_method = Call("ByMethod", ({method: Name(cls) for method, cls in sorted(keyed.items())},))
        found.template_data[name] = {"acp_field_meta": {"params": (by_method,)}}
    return name


def _flat_union(node: dict[str, Any]) -> dict[str, Any]:
    """A union of references nested in unions (``params``: the protocol-level notifications, or
    null) as one union of those references, so that no inline union needs a name of its own."""
    refs = list(dict.fromkeys(_refs(node)))
    if not refs:
        return node
    nullable = any(isinstance(b, Mapping) and b.get("type") == "null" for b in node.get("anyOf") or ())
    flat: dict[str, Any] = {k: v for k, v in node.items() if k == "description"}
    flat["anyOf"] = [{"$ref": f"#/$defs/{r}"} for r in refs] + ([{"type": "null"}] if nullable else [])
    return flat


def _description(branch: Mapping[str, Any], fallback: str) -> str:
    text = branch.get("description")
    return text if isinstance(text, str) and text else fallback


def _refs(node: Any) -> list[str]:
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
