"""Template data for the method stubs: the method table, interfaces, dispatcher and senders.

Every decision (which interface a method belongs to, whether a handler may leave it out,
its docstring) is made here, from the IR; the templates only lay the results out.
"""

from __future__ import annotations

from dataclasses import dataclass

from acpgen import ir

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


@dataclass(frozen=True, slots=True)
class Role:
    """A peer role: the interface its handlers implement and the sender its peer uses to call it."""

    interface: str
    sender: str
    sides: tuple[ir.Side, ...]
    summary: str
    methods: tuple[MethodView, ...]


_ROLES: tuple[tuple[str, str, tuple[ir.Side, ...], str], ...] = (
    ("Agent", "AgentSender", ("agent", "both"), "the agent"),
    ("Client", "ClientSender", ("client", "both"), "the client"),
    ("Proxy", "ProxySender", ("proxy",), "a proxy component"),
)


def method_views(protocol: ir.Protocol) -> tuple[MethodView, ...]:
    """Every method of the protocol, in wire-name order."""
    return tuple(_view(protocol, m) for m in sorted(protocol.methods, key=lambda m: (m.wire, m.side, m.kind)))


def roles(protocol: ir.Protocol) -> tuple[Role, ...]:
    """The roles that handle at least one method (``Proxy`` only where the schema has proxy methods)."""
    views = method_views(protocol)
    found = []
    for interface, sender, sides, summary in _ROLES:
        methods = tuple(v for v in views if v.side in sides)
        if methods:
            found.append(Role(interface, sender, sides, summary, methods))
    return tuple(found)


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
    )
