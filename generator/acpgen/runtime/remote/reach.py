"""The error of a remote agent that cannot be reached, the same over both profiles, and
the look that tells it before anything is sent.

Support code: it knows no method of the protocol, and imports nothing but the standard
library. ``connect_agent`` raises :class:`Unreachable` on entering its block, over
either profile: a URL that names no HTTP or WebSocket endpoint, a host that does not
resolve, a connection refused or timed out, a TLS handshake that fails. A WebSocket
learns it by opening; Streamable HTTP sends nothing before ``initialize``, so its
transport first opens (and closes) one connection to the server, or to the proxy the
environment names (:func:`reach`).
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import ssl
import urllib.parse
from typing import Literal

__all__ = ["OPEN_TIMEOUT", "Endpoint", "Unreachable", "endpoint", "reach", "reason_of"]

OPEN_TIMEOUT = 10.0
"""Seconds to open a connection (the WebSocket client's default opening time-out)."""
_PORTS = {"http": 80, "ws": 80, "https": 443, "wss": 443}


class Unreachable(ConnectionError):
    """The agent at :attr:`url` cannot be reached over :attr:`profile`: :attr:`reason`
    says why (the URL, the name, the connection or TLS). Raised on entering
    ``connect_agent``'s block, before anything is sent. A :class:`ConnectionError`, like
    ``Refused`` (a server that answered, but refused)."""

    def __init__(self, url: str, profile: Literal["ws", "http"], reason: str) -> None:
        self.url = url
        self.profile: Literal["ws", "http"] = profile
        self.reason = reason
        super().__init__(f"cannot reach {url!r} ({profile}): {reason}")


class Endpoint:
    """Where a URL's server listens."""

    def __init__(self, host: str, port: int, secure: bool) -> None:
        self.host, self.port, self.secure = host, port, secure


def endpoint(url: str, profile: Literal["ws", "http"]) -> Endpoint:
    """The host, port and TLS of ``url``; :class:`Unreachable` for a URL that names no
    HTTP or WebSocket server."""
    try:
        parts = urllib.parse.urlsplit(url)
        port = parts.port
    except ValueError as error:
        raise Unreachable(url, profile, f"not a URL: {error}") from None
    scheme = parts.scheme.lower()
    if scheme not in _PORTS or not parts.hostname:
        raise Unreachable(
            url,
            profile,
            "not an http(s) or ws(s) URL with a host (http://host:port/acp)",
        )
    return Endpoint(parts.hostname, port or _PORTS[scheme], scheme in ("https", "wss"))


def reason_of(error: BaseException) -> str:
    """Why a connection could not be opened, in words (a name that does not resolve,
    a refusal, a time-out, a TLS failure)."""
    if isinstance(error, socket.gaierror):
        return f"cannot resolve the host name ({error.strerror or error})"
    if isinstance(error, ConnectionRefusedError):
        return "connection refused (is the agent's server running there?)"
    if isinstance(error, TimeoutError):
        return f"no connection within {OPEN_TIMEOUT:g} s"
    if isinstance(error, ssl.SSLError):
        return f"TLS failed ({error.reason or error})"
    if isinstance(error, OSError):
        return error.strerror or str(error) or type(error).__name__
    return str(error) or type(error).__name__


async def reach(
    url: str,
    profile: Literal["ws", "http"],
    *,
    proxy: str | None = None,
    tls: ssl.SSLContext | None = None,
) -> None:
    """Open and close one connection to ``url``'s server (with TLS when the URL says
    so, checked with ``tls``), or to ``proxy`` when one is used; :class:`Unreachable`
    when it cannot be opened."""
    target = endpoint(url, profile)
    host, port = target.host, target.port
    secure = tls if target.secure else None
    if proxy is not None:  # the proxy is what must be reached (TLS goes through it)
        via = endpoint(proxy, profile)
        host, port, secure = via.host, via.port, None
    try:
        async with asyncio.timeout(OPEN_TIMEOUT):
            _, writer = await asyncio.open_connection(
                host,
                port,
                ssl=secure,
                server_hostname=target.host if secure is not None else None,
            )
    except (OSError, TimeoutError) as error:
        raise Unreachable(url, profile, reason_of(error)) from None
    writer.close()
    with contextlib.suppress(OSError, TimeoutError):
        async with asyncio.timeout(1.0):
            await writer.wait_closed()
