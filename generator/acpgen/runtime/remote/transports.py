"""The client transports of remote ACP, by profile name: the one place a transport is
added.

Support code: it knows no method of the protocol. A profile is a way to carry a
connection's messages over the network: ``"ws"``, one WebSocket (``websocket_client``),
and ``"http"``, Streamable HTTP (``http_client``), the two of the RFD "Streamable HTTP &
WebSocket Transport", which the ASGI app serves on one endpoint. Each is opened by its
client module's ``dial``. Like those modules, this one needs the ``remote`` extra; what
only names a profile (a refusal, the ``remote`` module's signatures) imports
:data:`Profile` for type checkers alone.

A new transport: its client module (a ``connection.transport.Transport``, and a
``dial`` that opens it, as :class:`Dialer` says), named here in :data:`Profile` and
:data:`TRANSPORTS` (``tests/runtime/test_remote_transports.py`` checks that they agree
and that no other module picks a transport).
"""

from __future__ import annotations

from collections.abc import Awaitable, Mapping
from typing import Literal, Protocol, cast

from ..connection.transport import Transport
from . import http_client, websocket_client
from .http_requests import CookieJar

__all__ = ["TRANSPORTS", "Dialer", "Profile", "checked"]

Profile = Literal["ws", "http"]
"""A profile's name (``connect_agent``'s ``transport``, ``Reconnect.profiles``)."""


class Dialer(Protocol):
    """A profile's ``dial``: opens a client transport to ``url``.

    ``initialize`` is the request that opens a connection (Streamable HTTP posts it
    alone); ``max_bytes`` the longest message taken from the server; ``http2`` None
    where TLS negotiates it, True always, False never; ``resumable``: the connection is
    resumed when lost (``resume.client``); ``silence``: seconds without a word from the
    server (a heartbeat, a pong) before the connection counts as lost; ``cookies``: the
    client's, one jar across its connections (a balancer's affinity).
    """

    def __call__(
        self,
        url: str,
        headers: Mapping[str, str],
        *,
        initialize: str,
        max_bytes: int,
        http2: bool | None,
        resumable: bool,
        silence: float,
        cookies: CookieJar,
    ) -> Awaitable[Transport]: ...


TRANSPORTS: Mapping[Profile, Dialer] = {
    "ws": websocket_client.dial,
    "http": http_client.dial,
}
"""Each profile's ``dial``."""


def checked(profile: str) -> Profile:
    """``profile``, when it names one; else a ValueError naming them."""
    if profile not in TRANSPORTS:
        names = " or ".join(repr(name) for name in TRANSPORTS)
        raise ValueError(f"transport is {names}, not {profile!r}")
    return cast(Profile, profile)
