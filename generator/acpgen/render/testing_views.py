"""Template data of ``testing.py``: whether the package can connect an agent and a client
in process (it has both roles), and whether it can record and run prompt turns (it has
the methods a turn uses, with the members the helpers write), with the names to call."""

from __future__ import annotations

from dataclasses import dataclass

from acpgen import ir
from acpgen.render.permission_views import permission_data

TURN_METHODS = {
    "initialize": ("protocolVersion",),
    "session/new": ("cwd", "mcpServers"),
    "session/prompt": ("sessionId", "prompt"),
    "session/update": ("sessionId", "update"),
}
"""The methods a turn uses, and the members of their params the helpers write or read."""


@dataclass(frozen=True, slots=True)
class Call:
    """A method as the turn helpers call it: the sender's method and its params' class."""

    python_name: str
    params: str
    result: str | None


def testing_data(protocol: ir.Protocol, connected: bool) -> dict[str, object]:
    """What ``testing.py`` is rendered from."""
    if not connected:
        return {"connected": False, "turns": None, "reason": "The schema has no agent and client to connect."}
    calls: dict[str, Call] = {}
    missing: list[str] = []
    for wire, members in TURN_METHODS.items():
        method = next((m for m in protocol.methods if m.wire == wire), None)
        fields = {f.wire for f in protocol.type(method.params).fields} if method is not None else set()
        if method is None or not set(members) <= fields:
            missing.append(wire)
            continue
        result = protocol.type(method.result).class_name if method.result else None
        calls[wire.replace("/", "_")] = Call(method.python_name, protocol.type(method.params).class_name, result)
    permissions = permission_data(protocol)
    if not permissions["available"]:
        missing.append("session/request_permission")
    if missing:
        reason = f"The schema ({protocol.source.file}) lacks what a turn uses: {', '.join(missing)}."
        return {"connected": True, "turns": None, "reason": reason}
    return {"connected": True, "turns": calls, "permissions": permissions, "reason": ""}
