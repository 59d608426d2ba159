"""Template data for the remote module (``remote.py``): the RFD's routing rules in this
schema's method names."""

from __future__ import annotations

from dataclasses import dataclass

from acpgen import ir

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
