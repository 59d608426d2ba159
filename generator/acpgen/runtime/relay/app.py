"""The relay's ASGI app: any stdio ACP agent served over the network, one agent
process per remote connection.

Support code: it knows no method of the protocol (the routing rules come from the
schema). It is the remote server's app (``remote.app.AcpApp``: both profiles, the
``authorize`` hook, the origin check, the limits, resume) whose agents are processes:
each connection's agent is an :class:`~.pipe.AgentPipe` that starts the command and
carries its messages byte for byte. With ``resume``, the agent outlives a lost
connection for ``detached_for`` seconds and a client that negotiated the extension
catches up (the host numbers the agent's session events); others see plain ACP.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Collection
from functools import partial
from typing import Any

from ..connection import telemetry
from ..connection.limits import Limits
from ..connection.log_ids import logger
from ..connection.transport import Transport
from ..remote.app import AcpApp, Authorize
from ..remote.server_connection import RemoteConnection, RemoteLimits, ServerTransport
from ..resume.event_log import Coalescing, ResumeLimits
from ..resume.host import Host
from ..wire.messages import Routing
from .pipe import AgentPipe, Spawn

__all__ = ["RelayApp", "relay_app"]

_log = logger(__name__)


class RelayApp(AcpApp):
    """An ASGI application serving the agent command of ``spawning`` per connection."""

    def __init__(
        self, spawning: Spawn, routing: Routing, max_pending: int, **options: Any
    ) -> None:
        super().__init__(self._pipe, routing, **options)
        self.spawning = spawning
        self.max_pending = max_pending
        """Client requests per connection the relay answers itself if the agent ends."""
        self.pipes: set[AgentPipe] = set()
        """The agents running now (their process groups not yet ended)."""
        self._starting: RemoteConnection | None = None

    def _pipe(self, transport: Transport) -> AgentPipe:
        remote = self._starting
        plain_http = remote is not None and not remote.websocket and self.hosts is None
        pipe = AgentPipe(
            self.spawning,
            transport,
            tag=remote.id if remote is not None else "?",
            max_message_bytes=self.max_message_bytes,
            max_depth=self.max_depth,
            max_pending=self.max_pending,
            max_id_length=self.limits.max_id_length,
            on_end=self.pipes.discard,
            settle=partial(_settled, remote) if plain_http and remote else None,
        )
        self.pipes.add(pipe)
        telemetry.count(self, "acp.relay.agents")
        return pipe

    def gauge(self, name: str) -> list[tuple[int, dict[str, str]]]:
        """As :meth:`AcpApp.gauge`, and the agent processes running now."""
        if name != "acp.relay.agents":
            return super().gauge(name)
        running = [p for p in list(self.pipes) if p.process and p.exit_code is None]
        return [(len(running), {})]

    def start_agent(
        self,
        remote: RemoteConnection,
        transport: ServerTransport,
        host: Host | None = None,
    ) -> None:
        """As :meth:`AcpApp.start_agent`; the agent's log lines name ``remote``."""
        if host is not None:
            started = getattr(host.agent, "tag", "?")
            _log.info("connection %s resumes the agent of %s", remote.id, started)
        self._starting = remote
        try:
            super().start_agent(remote, transport, host)
        finally:
            self._starting = None

    async def close(self) -> None:
        """Close every connection; wait (boundedly) for every agent's group to end."""
        await super().close()
        waiting = [asyncio.ensure_future(pipe.ended.wait()) for pipe in self.pipes]
        if waiting:
            await asyncio.wait(waiting, timeout=3 * self.spawning.grace + 2.0)
            for wait in waiting:
                wait.cancel()


LINGER = 1.0
"""Seconds a Streamable HTTP connection stays open after its client took the last
errors of an agent that ended: the client reads each SSE stream apart, and the end of
one must not overtake the last event of another."""


async def _settled(remote: RemoteConnection, limit: float = 5.0) -> None:
    """Wait (at most ``limit`` seconds) until the client took every message waiting for
    it on ``remote``, then :data:`LINGER` seconds more."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + limit
    while remote.outbox.size > 0 and not remote.closed:
        remaining = deadline - loop.time()
        if remaining <= 0:
            return
        remote.outbox.progress.clear()
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(remaining):
                await remote.outbox.progress.wait()
    if not remote.closed:
        await asyncio.sleep(LINGER)


def relay_app(
    spawning: Spawn,
    routing: Routing,
    coalescing: Coalescing | None,
    *,
    path: str,
    authorize: Authorize | None,
    allowed_origins: Collection[str],
    remote_limits: RemoteLimits | None,
    limits: Limits | None,
    resume: ResumeLimits | None,
) -> RelayApp:
    """The app of the generated ``relay.relay_app``: ``limits`` bounds the messages
    read on both sides (their size and depth) and the client requests tracked per
    connection (``max_running_requests``)."""
    message = limits or Limits()
    return RelayApp(
        spawning,
        routing,
        message.max_running_requests,
        path=path,
        authorize=authorize,
        allowed_origins=allowed_origins,
        limits=remote_limits,
        max_message_bytes=message.max_message_bytes,
        max_depth=message.max_depth,
        resume=resume,
        coalescing=coalescing,
    )
