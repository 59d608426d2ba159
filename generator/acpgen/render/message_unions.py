"""The schema's top-level message unions, as datamodel-code-generator's input.

Which branches become which named types is the IR's (:mod:`acpgen.ir.messages`); this module
turns them into datamodel-code-generator's input. The schema's root is a union of what each side
may write (upstream's ``AgentOutgoingMessage``,
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
from acpgen.ir.messages import refs
from acpgen.render.expressions import Call, Name

KEYED = Call("ByEnvelope")
"""The reading rule of every top-level message union (the package's ``_support``)."""
JSONRPC = "jsonrpc"


@dataclass(slots=True)
class Root:
    """The root's part of the models' input: new definitions, their template data, the root schema."""

    schema: dict[str, Any]
    definitions: dict[str, Any] = field(default_factory=dict)
    template_data: dict[str, dict[str, Any]] = field(default_factory=dict)


def root(protocol: ir.Protocol) -> Root:
    """The root of the models' schema (``AcpMessage``) and the named types of its branches
    (:attr:`acpgen.ir.Protocol.messages`)."""
    found = Root(schema={})
    members: list[str] = []
    for union in protocol.messages:
        if union.kind == "types":  # a branch of no known shape: the types it refers to are members of the root
            members += union.refs
            continue
        if union.kind == "envelope":
            _envelope(union, found, protocol)
        else:
            found.definitions[union.class_name] = {
                "description": _description(
                    union.node, "Any message one side writes: its requests, responses and notifications."
                ),
                "anyOf": [{"$ref": f"#/$defs/{ref}"} for ref in union.refs],
            }
            found.template_data[union.class_name] = {"acp_alias_rules": (KEYED,)}
        members.append(union.class_name)
    members = list(dict.fromkeys(members))
    if not members:
        found.schema = {"title": naming.MESSAGE_ROOT, "type": "object"}
        return found
    found.schema = {
        "title": naming.MESSAGE_ROOT,
        "description": "Any message of the protocol, as the schema's root lists them.",
        "anyOf": [{"$ref": f"#/$defs/{n}"} for n in members],
    }
    found.template_data[naming.MESSAGE_ROOT] = {"acp_alias_rules": (KEYED,)}
    return found


def _envelope(union: ir.MessageUnion, found: Root, protocol: ir.Protocol) -> None:
    """A root branch that is an envelope itself (the protocol-level notification), as an object type."""
    branch = union.node
    props = {k: copy.deepcopy(v) for k, v in branch["properties"].items() if k != JSONRPC}
    if isinstance(props.get("params"), dict):
        props["params"] = _flat_union(props["params"])
    required = [r for r in branch.get("required") or () if r != JSONRPC and r in props]
    found.definitions[union.class_name] = {
        "type": "object",
        "description": _description(branch, "A protocol-level message, which either side may write."),
        "properties": props,
        "required": required,
        "additionalProperties": True,
    }
    kind = "request" if "id" in props else "notification"
    params = set(refs(props.get("params", {})))
    keyed = {
        m.wire: protocol.type(m.params).class_name for m in protocol.methods if m.kind == kind and m.params in params
    }
    if keyed:
        by_method = Call("ByMethod", ({method: Name(cls) for method, cls in sorted(keyed.items())},))
        found.template_data[union.class_name] = {"acp_field_meta": {"params": (by_method,)}}


def _flat_union(node: dict[str, Any]) -> dict[str, Any]:
    """A union of references nested in unions (``params``: the protocol-level notifications, or
    null) as one union of those references, so that no inline union needs a name of its own."""
    found = list(dict.fromkeys(refs(node)))
    if not found:
        return node
    nullable = any(isinstance(b, Mapping) and b.get("type") == "null" for b in node.get("anyOf") or ())
    flat: dict[str, Any] = {k: v for k, v in node.items() if k == "description"}
    flat["anyOf"] = [{"$ref": f"#/$defs/{r}"} for r in found] + ([{"type": "null"}] if nullable else [])
    return flat


def _description(branch: Mapping[str, Any], fallback: str) -> str:
    text = branch.get("description")
    return text if isinstance(text, str) and text else fallback
