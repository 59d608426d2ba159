"""Template data for the method stubs: the method table, interfaces, dispatcher and senders.

Every decision (which interface a method belongs to, whether a handler may leave it out,
its docstring) is made here, from the IR; the templates only lay the results out.
"""

from __future__ import annotations

from dataclasses import dataclass

from acpgen import ir
from acpgen.ir import naming
from acpgen.render.required import Optionality, optional_methods
from acpgen.render.unstable import UNSTABLE_NOTE


@dataclass(frozen=True, slots=True)
class MethodView:
    """One method as the templates need it."""

    wire: str
    constant: str
    python_name: str
    side: ir.Side
    kind: ir.MethodKind
    params: str
    """Class (or type alias) name of the params type."""
    result: str | None
    stable: bool
    gate: str | None
    optional: bool
    """A handler may leave it out (:mod:`acpgen.render.required` says when); the default answers
    "method not found" (requests) or ignores it (notifications)."""
    doc: str
    handler_doc: str
    """The docstring of the handler's method: ``doc``, and why a handler may leave it out."""
    version_field: str | None = None
    """For the request that negotiates the protocol version: the result's wire field holding the
    version the agent answered, which the caller's sender checks before it reads the rest (an
    agent of another version may answer in another shape)."""
    params_advertise: Advertisement | None = None
    """Where the params carry the capabilities of the side that calls the method."""
    result_advertise: Advertisement | None = None
    """Where the result carries the capabilities of the side that handles the method."""


@dataclass(frozen=True, slots=True)
class Advertisement:
    """A field that carries what a peer advertises (its capability tree's root)."""

    attr: str
    model: str
    """The class of the capability root, whose defaults stand for a peer that sent nothing."""
    admits_none: bool
    """The attribute's type admits None (the field is nullable, or optional without a default)."""


@dataclass(frozen=True, slots=True)
class Role:
    """A peer role: the interface its handlers implement and the sender its peer uses to call it."""

    interface: str
    sender: str
    sides: tuple[ir.Side, ...]
    summary: str
    methods: tuple[MethodView, ...]
    peer: ir.Owner | None
    """Whose capabilities gate what the sender sends (None: no capability rules apply)."""
    counterpart: str | None = None
    """The role on the other end of a connection (Agent and Client), if any."""
    peer_sender: str | None = None
    """The sender this role calls its counterpart with (an agent calls its client with ``ClientSender``)."""
    peer_attr: str | None = None
    """The attribute that holds that sender on the role's handler (``client``)."""

    @property
    def handler(self) -> str:
        """The parameter name of a handler of this role (``agent``)."""
        return naming.snake(self.interface)

    @property
    def serve_function(self) -> str:
        """The ``serve`` module's function that connects a handler of this role over streams."""
        return f"serve_{self.handler}"

    @property
    def attach_function(self) -> str:
        """The ``serve`` module's function that connects a handler of this role over any transport."""
        return f"attach_{self.handler}"


_ROLES: tuple[tuple[str, str, tuple[ir.Side, ...], str, ir.Owner | None, str | None], ...] = (
    ("Agent", "AgentSender", ("agent", "both"), "the agent", "agent", "Client"),
    ("Client", "ClientSender", ("client", "both"), "the client", "client", "Agent"),
    ("Proxy", "ProxySender", ("proxy",), "a proxy component", None, None),
)


def method_views(protocol: ir.Protocol) -> tuple[MethodView, ...]:
    """Every method of the protocol, in wire-name order."""
    optional = optional_methods(protocol)
    return tuple(
        _view(protocol, m, optional.get((m.wire, m.side)))
        for m in sorted(protocol.methods, key=lambda m: (m.wire, m.side, m.kind))
    )


def roles(protocol: ir.Protocol) -> tuple[Role, ...]:
    """The roles that handle at least one method (``Proxy`` only where the schema has proxy methods)."""
    views = method_views(protocol)
    found = []
    senders = {interface: sender for interface, sender, *_ in _ROLES}
    for interface, sender, sides, summary, peer, counterpart in _ROLES:
        methods = tuple(v for v in views if v.side in sides)
        if methods:
            peer_sender = senders[counterpart] if counterpart else None
            peer_attr = naming.snake(counterpart) if counterpart else None
            found.append(
                Role(
                    interface=interface,
                    sender=sender,
                    sides=sides,
                    summary=summary,
                    methods=methods,
                    peer=peer,
                    counterpart=counterpart,
                    peer_sender=peer_sender,
                    peer_attr=peer_attr,
                )
            )
    return tuple(found)


def connected_roles(protocol: ir.Protocol) -> tuple[tuple[Role, Role], ...]:
    """``(role, counterpart)`` for each role served on one end of a connection (Agent, Client)."""
    by_name = {r.interface: r for r in roles(protocol)}
    return tuple(
        (r, by_name[r.counterpart]) for r in by_name.values() if r.counterpart is not None and r.counterpart in by_name
    )


def _view(protocol: ir.Protocol, m: ir.Method, optional: Optionality | None) -> MethodView:
    doc = m.description.strip() or f"The `{m.wire}` {m.kind}."
    if not m.stable and ir.UNSTABLE_MARKER not in doc:
        doc = f"{UNSTABLE_NOTE}\n\n{doc}"
    handler_doc = doc
    if optional is not None:
        default = 'answers "method not found"' if m.kind == "request" else "ignores it"
        handler_doc = f"{doc}\n\nA handler may leave it out ({optional.reason}): the default {default}."
    return MethodView(
        wire=m.wire,
        constant=m.constant,
        python_name=m.python_name,
        side=m.side,
        kind=m.kind,
        params=protocol.type(m.params).class_name,
        result=protocol.type(m.result).class_name if m.result else None,
        stable=m.stable,
        gate=m.gate,
        optional=optional is not None,
        doc=doc,
        handler_doc=handler_doc,
        version_field=_version_field(protocol, m),
        params_advertise=_advertised_in(protocol, m.params, caller=True, side=m.side),
        result_advertise=_advertised_in(protocol, m.result, caller=False, side=m.side) if m.result else None,
    )


def _advertised_in(protocol: ir.Protocol, type_name: str, *, caller: bool, side: ir.Side) -> Advertisement | None:
    """The field of ``type_name`` holding the capability root of the caller (or the handler) of a method."""
    if side not in ("agent", "client"):
        return None
    owner = ("client" if side == "agent" else "agent") if caller else side
    roots = {c.root for c in protocol.capabilities if c.owner == owner}
    for f in protocol.type(type_name).fields:
        if f.ref in roots:
            admits_none = f.nullable or (not f.required and f.default_json is None)
            return Advertisement(attr=f.attr, model=protocol.type(f.ref).class_name, admits_none=admits_none)
    return None


VERSION_FIELD = "protocolVersion"


def _version_field(protocol: ir.Protocol, m: ir.Method) -> str | None:
    """The result field carrying the negotiated protocol version, for a request the agent handles."""
    if m.result is None or m.side != "agent":
        return None
    return VERSION_FIELD if any(f.wire == VERSION_FIELD for f in protocol.type(m.result).fields) else None
