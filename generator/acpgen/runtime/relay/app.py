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
import logging
from collections.abc import Collection
from typing import Any

from ..connection.limits import Limits
from ..connection.transport import Transport
from ..remote.app import AcpApp, Authorize
from ..remote.server_connection import RemoteConnection, RemoteLimits, ServerTransport
from ..resume.event_log import Coalescing, ResumeLimits
from ..resume.host import Host
from ..wire.messages import Routing
from .pipe import AgentPipe, Spawn

__all__ = ["RelayApp", "relay_app"]

_log = logging.getLogger(__name__)


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
        self._starting = "?"

    def _pipe(self, transport: Transport) -> AgentPipe:
        pipe = AgentPipe(
            self.spawning,
            transport,
            tag=self._starting,
            max_message_bytes=self.max_message_bytes,
            max_depth=self.max_depth,
            max_pending=self.max_pending,
            max_id_length=self.limits.max_id_length,
            on_end=self.pipes.discard,
        )
        self.pipes.add(pipe)
        return pipe

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
        self._starting = remote.id
        try:
            super().start_agent(remote, transport, host)
        finally:
            self._starting = "?"

    async def close(self) -> None:
        """Close every connection; wait (boundedly) for every agent's group to end."""
        await super().close()
        waiting = [asyncio.ensure_future(pipe.ended.wait()) for pipe in self.pipes]
        if waiting:
            await asyncio.wait(waiting, timeout=3 * self.spawning.grace + 2.0)
            for wait in waiting:
                wait.cancel()


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
