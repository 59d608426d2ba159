"""Template data for the method stubs: the method table, interfaces, dispatcher and senders.

Every decision (which interface a method belongs to, whether a handler may leave it out,
its docstring) is made here, from the IR; the templates only lay the results out.
"""

from __future__ import annotations

from dataclasses import dataclass

from acpgen import ir
from acpgen.ir import naming

UNSTABLE_DOC = "**UNSTABLE**: not part of the stable protocol; it may change or be removed at any time."


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
    """A handler may leave it out: gated by a capability, or unstable; the default answers "method not found"."""
    doc: str
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
    return tuple(_view(protocol, m) for m in sorted(protocol.methods, key=lambda m: (m.wire, m.side, m.kind)))


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


def _view(protocol: ir.Protocol, m: ir.Method) -> MethodView:
    doc = m.description.strip() or f"The `{m.wire}` {m.kind}."
    if not m.stable and "**UNSTABLE**" not in doc:
        doc = f"{UNSTABLE_DOC}\n\n{doc}"
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
        optional=m.gate is not None or not m.stable,
        doc=doc,
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
            return Advertisement(attr=f.attr, model=protocol.type(f.ref).class_name)
    return None


VERSION_FIELD = "protocolVersion"


def _version_field(protocol: ir.Protocol, m: ir.Method) -> str | None:
    """The result field carrying the negotiated protocol version, for a request the agent handles."""
    if m.result is None or m.side != "agent":
        return None
    return VERSION_FIELD if any(f.wire == VERSION_FIELD for f in protocol.type(m.result).fields) else None


@dataclass(frozen=True, slots=True)
class CapabilityView:
    """One capability as the templates need it."""

    path: str
    side: ir.Owner
    presence: ir.Presence
    attrs: tuple[str, ...]
    accessor: str
    root_class: str
    doc: str


@dataclass(frozen=True, slots=True)
class RuleView:
    """One gating rule as the templates need it."""

    kind: ir.SubjectKind
    subject: str
    path: str
    side: ir.Owner
    classes: tuple[str, ...]
    attr: str | None
    value: str | None
    message: str
    """The plain-words violation message."""


def capability_views(protocol: ir.Protocol) -> tuple[CapabilityView, ...]:
    """Every capability of the tree, in schema order."""
    views = []
    for c in protocol.capabilities:
        meaning = c.description.strip() or "(no description in the schema)"
        judged = "is true" if c.presence == "true" else "is present and not null"
        doc = f"Whether the {c.owner} advertised `{c.path}` (it {judged}).\n\n{meaning}"
        if not c.stable:
            doc = f"{UNSTABLE_DOC}\n\n{doc}"
        views.append(
            CapabilityView(
                path=c.path,
                side=c.owner,
                presence=c.presence,
                attrs=c.attrs,
                accessor=c.accessor,
                root_class=protocol.type(c.root).class_name,
                doc=doc,
            )
        )
    return tuple(views)


def rule_views(protocol: ir.Protocol) -> tuple[RuleView, ...]:
    """Every gating rule of this build, in table order."""
    return tuple(
        RuleView(
            kind=r.kind,
            subject=r.subject,
            path=r.capability.path,
            side=r.capability.owner,
            classes=r.classes,
            attr=r.attr,
            value=r.value,
            message=f"{_subject_words(r)} needs {r.capability.path}, which the {r.capability.owner} did not advertise",
        )
        for r in protocol.rules
    )


def _subject_words(rule: ir.GatingRule) -> str:
    if rule.kind == "variant":
        union, _, key = rule.subject.partition("[")
        return f"{union} of type {key.rstrip(']')}"
    if rule.kind == "value":
        enum, _, value = rule.subject.partition("=")
        return f"{enum} {value!r}"
    return rule.subject


RFD_INITIALIZE = "initialize"
"""The request that opens a remote connection (RFD "Streamable HTTP & WebSocket Transport")."""
RFD_CONNECTION_ANSWERS = ("session/load",)
"""Session requests the RFD answers on the connection stream, not the session's."""


@dataclass(frozen=True, slots=True)
class RemoteRouting:
    """What the remote server's routing needs from the schema (``remote.py``'s ``ROUTING``)."""

    initialize: str
    session_scoped: tuple[str, ...]
    """Agent methods whose params require a ``sessionId``: their POSTs need ``Acp-Session-Id``."""
    answered_on_connection: tuple[str, ...]


def remote_routing(protocol: ir.Protocol) -> RemoteRouting | None:
    """The remote routing of a protocol that has the RFD's ``initialize``, else None."""
    wires = {m.wire for m in protocol.methods}
    if RFD_INITIALIZE not in wires:
        return None
    by_wire = {t.wire: t for t in protocol.types}
    scoped = sorted(
        m.wire
        for m in protocol.methods
        if m.side in ("agent", "both")
        and m.params in by_wire
        and any(f.wire == "sessionId" and f.required for f in by_wire[m.params].fields)
    )
    answered = tuple(wire for wire in RFD_CONNECTION_ANSWERS if wire in wires)
    return RemoteRouting(RFD_INITIALIZE, tuple(scoped), answered)
