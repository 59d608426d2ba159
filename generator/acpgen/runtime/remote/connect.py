"""Connecting a client to a remote agent: what the generated ``remote.connect_agent``
does, given the schema's routing rules.

Support code: it knows no method of the protocol. It needs the ``remote`` extra (its
transports import it). The first transport is opened on the profile asked for (one of
``profiles``: ``"ws"``, a WebSocket, ``"http"``, Streamable HTTP); with a
:class:`~..resume.client.Reconnect` policy, the client's connection runs over a
:class:`~..resume.client.ResumingTransport` that opens the next ones (by
``Reconnect.profiles`` in turn, else the same profile) and resumes every session, when
the agent grants it at ``initialize``. Either transport counts a connection silent for
longer than ``Reconnect.silence`` (25 s without one) as lost: Streamable HTTP by the
server's heartbeats (SSE comments), a WebSocket by its pings.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncGenerator, Callable, Mapping
from typing import TypeVar

from ..connection.connection import Connection
from ..connection.limits import Limits
from ..connection.transport import Transport
from ..resume.client import SILENCE, Reconnect, ResumingTransport
from ..wire.messages import Routing
from .http_requests import CookieJar, proxy_for, tls_context
from .reach import endpoint, reach
from .transports import TRANSPORTS, Profile, checked

__all__ = ["connect"]

S = TypeVar("S")


@contextlib.asynccontextmanager
async def connect(
    url: str,
    attach: Callable[[Transport], tuple[Connection, S]],
    routing: Routing,
    *,
    transport: str,
    headers: Mapping[str, str] | None,
    http2: bool | None,
    limits: Limits | None,
    reconnect: Reconnect | None,
) -> AsyncGenerator[S, None]:
    """``attach`` a client to the agent served at ``url`` over the profile
    ``transport``; yield its sender for the agent while the connection runs. An agent
    that cannot be reached raises :class:`~.reach.Unreachable` here, over both
    profiles, before the block is entered."""
    max_bytes = (limits or Limits()).max_message_bytes
    silence = reconnect.silence if reconnect is not None else SILENCE
    cookies = CookieJar()  # one jar for every connection: a balancer's affinity holds
    first = checked(transport)
    profiles: tuple[Profile, ...] = (
        tuple(checked(p) for p in (reconnect.profiles or (first,)))
        if reconnect
        else (first,)
    )

    async def opened(attempt: int) -> Transport:
        """The transport of attempt ``attempt`` (0: the first)."""
        profile: Profile = (
            first if attempt == 0 else profiles[(attempt - 1) % len(profiles)]
        )
        return await TRANSPORTS[profile](
            url,
            headers or {},
            initialize=routing.initialize,
            max_bytes=max_bytes,
            http2=http2,
            resumable=reconnect is not None,
            silence=silence,
            cookies=cookies,
        )

    endpoint(url, first)  # a URL that names no server: Unreachable, over both profiles
    if first == "http":  # it sends nothing before initialize: look first
        await reach(url, "http", proxy=proxy_for(url), tls=tls_context())
    moved: Transport = await opened(0)
    if reconnect is not None:
        moved = ResumingTransport(
            moved, opened, reconnect, routing=routing, max_bytes=max_bytes
        )
    connection, agent = attach(moved)
    async with connection:
        yield agent
