"""Connecting a client to a remote agent: what the generated ``remote.connect_agent``
does, given the schema's routing rules.

Support code: it knows no method of the protocol. It needs the ``remote`` extra (its
transports import it). The first transport is opened on the profile asked for
(``"ws"``: a WebSocket, ``"http"``: Streamable HTTP); with a :class:`~..resume.client.
Reconnect` policy, the client's connection runs over a
:class:`~..resume.client.ResumingTransport` that opens the next ones (by
``Reconnect.profiles`` in turn, else the same profile) and resumes every session, when
the agent grants it at ``initialize``. Either transport counts a connection silent for
longer than ``Reconnect.silence`` (25 s without one) as lost: Streamable HTTP by the
server's heartbeats (SSE comments), a WebSocket by its pings.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable, Mapping
from typing import Literal, TypeVar, cast

from ..connection.connection import Connection
from ..connection.limits import Limits
from ..connection.transport import Transport
from ..resume.client import SILENCE, Reconnect, ResumingTransport
from ..wire.messages import Routing
from .http_client import CookieJar, HttpClientTransport, proxy_for, tls_context
from .reach import endpoint, reach
from .websocket_client import WebSocketClientTransport

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
) -> AsyncIterator[S]:
    """``attach`` a client to the agent served at ``url`` over the profile
    ``transport``; yield its sender for the agent while the connection runs. An agent
    that cannot be reached raises :class:`~.reach.Unreachable` here, over both
    profiles, before the block is entered."""
    max_bytes = (limits or Limits()).max_message_bytes
    silence = reconnect.silence if reconnect is not None else SILENCE
    cookies = CookieJar()  # one jar for every connection: a balancer's affinity holds
    profiles = tuple(reconnect.profiles or (transport,)) if reconnect else (transport,)
    for profile in (transport, *profiles):
        if profile not in ("ws", "http"):
            raise ValueError(f"transport is 'ws' or 'http', not {profile!r}")
    transport = cast(Literal["ws", "http"], transport)

    async def opened(attempt: int) -> Transport:
        """The transport of attempt ``attempt`` (0: the first)."""
        profile = transport if attempt == 0 else profiles[(attempt - 1) % len(profiles)]
        if profile == "ws":
            return await WebSocketClientTransport.open(
                url, headers or {}, max_bytes, silence=silence, cookies=cookies
            )
        return HttpClientTransport(
            url,
            headers or {},
            initialize=routing.initialize,
            max_bytes=max_bytes,
            http2=http2,
            resumable=reconnect is not None,
            silence=silence,
            cookies=cookies,
        )

    endpoint(
        url, transport
    )  # a URL that names no server: Unreachable, over both profiles
    if transport == "http":  # it sends nothing before initialize: look first
        await reach(url, "http", proxy=proxy_for(url), tls=tls_context())
    moved: Transport = await opened(0)
    if reconnect is not None:
        moved = ResumingTransport(
            moved, opened, reconnect, routing=routing, max_bytes=max_bytes
        )
    connection, agent = attach(moved)
    async with connection:
        yield agent
