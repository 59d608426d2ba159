"""The MCP servers of an agent's ACP sessions: connected when a session starts, kept
for it, closed with it.

Support code: it reads the ``mcpServers`` of ``session/new`` (or ``session/load``...)
by their wire members only (a stdio server: ``name``, ``command``, ``args``, ``env``
as ``[{name, value}]``; an HTTP or SSE one has a ``type``), so it knows no model of the
schema. Servers over other transports are not connected (an agent that advertises no
``mcpCapabilities`` is not handed them) and are listed in :attr:`McpServers.failures`
with the reason, as is a server that fails to start or answer: a session starts without
it, as the spec has agents connect to the servers they can.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Mapping, Sequence
from typing import IO, Any, Self, cast

from .stdio_client import McpConnection, McpError, connect_stdio, members

__all__ = ["McpServers"]

_log = logging.getLogger(__name__)


class McpServers:
    """Each session's MCP connections: ``await servers.open(session_id,
    params.mcp_servers, cwd=params.cwd)`` when a session starts,
    ``servers.of(session_id)`` while it runs, ``await servers.close(session_id)`` when
    it ends and ``await servers.aclose()`` (or ``async with``) when the agent stops."""

    def __init__(
        self,
        *,
        client_info: Mapping[str, str] | None = None,
        timeout: float = 10.0,
        stderr: int | IO[Any] | None = None,
    ) -> None:
        self.client_info = dict(client_info or {"name": "acp-agent", "version": "0"})
        """What this agent says of itself to the MCP servers (``clientInfo``)."""
        self.timeout = timeout
        self.stderr = stderr
        self._sessions: dict[str, tuple[McpConnection, ...]] = {}
        self.failures: dict[str, list[tuple[str, str]]] = {}
        """Session id -> (server name, why it is not connected), for each server named
        but not connected."""

    async def open(
        self,
        session_id: str,
        servers: Sequence[Any],
        *,
        cwd: str | os.PathLike[str] | None = None,
    ) -> tuple[McpConnection, ...]:
        """Connect to the stdio ``servers`` (the session's ``mcpServers``: models or
        their wire dicts), all at once, and keep them for ``session_id`` (closing what
        it had); the connections made."""
        await self.close(session_id)
        wires = [_wire(server) for server in servers]
        tries = [self._connect(wire, cwd) for wire in wires]
        made = await asyncio.gather(*tries, return_exceptions=True)
        connected: list[McpConnection] = []
        failed: list[tuple[str, str]] = []
        for wire, outcome in zip(wires, made, strict=True):
            if isinstance(outcome, McpConnection):
                connected.append(outcome)
            elif not isinstance(outcome, Exception):
                raise outcome  # a cancellation: not the server's fault
            else:
                failed.append((str(wire.get("name", "")), str(outcome)))
                _log.warning(
                    "session %s: MCP server not connected: %s", session_id, outcome
                )
        self._sessions[session_id] = tuple(connected)
        if failed:
            self.failures[session_id] = failed
        return tuple(connected)

    def of(self, session_id: str) -> tuple[McpConnection, ...]:
        """The connected MCP servers of ``session_id`` (none for an unknown session)."""
        return self._sessions.get(session_id, ())

    async def close(self, session_id: str) -> None:
        """Close the MCP servers of ``session_id``."""
        self.failures.pop(session_id, None)
        await asyncio.gather(*(c.close() for c in self._sessions.pop(session_id, ())))

    async def aclose(self) -> None:
        """Close the MCP servers of every session."""
        for session_id in list(self._sessions):
            await self.close(session_id)

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.aclose()

    async def _connect(
        self, wire: Mapping[str, Any], cwd: str | os.PathLike[str] | None
    ) -> McpConnection:
        name = str(wire.get("name", ""))
        kind = wire.get("type", "stdio")
        if kind != "stdio" or not isinstance(wire.get("command"), str):
            raise McpError(
                f"MCP server {name!r}: transport {kind!r} is not connected (stdio only)"
            )
        pairs = [members(v) or {} for v in _items(wire.get("env"))]
        env = {
            str(v["name"]): str(v.get("value"))
            for v in pairs
            if isinstance(v.get("name"), str)
        }
        args = [str(a) for a in _items(wire.get("args"))]
        return await connect_stdio(
            name,
            wire["command"],
            args,
            env,
            cwd=cwd,
            client_info=self.client_info,
            timeout=self.timeout,
            stderr=self.stderr,
        )


def _items(value: object) -> list[object]:
    """``value`` when it is a JSON array, else none."""
    return cast("list[object]", value) if isinstance(value, list) else []


def _wire(server: Any) -> Mapping[str, Any]:
    """A server entry as its wire members (a pydantic model is dumped as JSON)."""
    dump = getattr(server, "model_dump", None)
    if callable(dump):
        return members(dump(mode="json")) or {}
    if isinstance(server, Mapping):
        return {str(k): v for k, v in cast("Mapping[object, Any]", server).items()}
    return {}
