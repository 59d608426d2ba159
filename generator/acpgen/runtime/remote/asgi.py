"""Small ASGI helpers for the remote server: request facts, bodies, plain responses,
server-sent event streams.

Support code: it knows no method of the protocol, and no HTTP server either: it speaks
the ASGI 3 interface that uvicorn, hypercorn and every other ASGI server call.
"""

from __future__ import annotations

import asyncio
import contextlib
import http.cookies
from collections.abc import Awaitable, Callable, Mapping, MutableMapping
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "Disconnected",
    "Receive",
    "Request",
    "Send",
    "TooLarge",
    "read_body",
    "request_of",
    "respond",
    "until_disconnect",
    "watch_disconnect",
]

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]


@dataclass(frozen=True, slots=True)
class Request:
    """What an ``authorize`` hook sees of one HTTP request or WebSocket upgrade."""

    method: str
    """``POST``, ``GET``, ``DELETE``... (``GET`` for a WebSocket upgrade)."""
    path: str
    headers: Mapping[str, str]
    """Header names in lower case (repeated headers joined with ``", "``)."""
    cookies: Mapping[str, str]
    client: tuple[str, int] | None
    """The peer's address as the ASGI server saw it (behind a proxy: the proxy's)."""
    websocket: bool
    """A WebSocket upgrade (else Streamable HTTP)."""
    connection_id: str | None = None
    """The ``Acp-Connection-Id`` header, if any (not yet checked)."""
    session_id: str | None = None
    """The ``Acp-Session-Id`` header, if any (not yet checked)."""
    scope: Mapping[str, Any] = field(default_factory=dict[str, Any], repr=False)
    """The ASGI scope, for anything else (TLS details, server extensions)."""


def request_of(scope: Scope) -> Request:
    """The :class:`Request` of an ASGI ``http`` or ``websocket`` scope."""
    headers: dict[str, str] = {}
    for raw_name, raw_value in scope.get("headers", ()):
        name, value = raw_name.decode("latin-1").lower(), raw_value.decode("latin-1")
        headers[name] = f"{headers[name]}, {value}" if name in headers else value
    cookies: dict[str, str] = {}
    if "cookie" in headers:
        jar = http.cookies.SimpleCookie()
        with contextlib.suppress(http.cookies.CookieError):
            jar.load(headers["cookie"].replace(", ", "; "))
        cookies = {key: morsel.value for key, morsel in jar.items()}
    client = scope.get("client")
    websocket = scope["type"] == "websocket"
    return Request(
        method="GET" if websocket else str(scope.get("method", "GET")),
        path=str(scope.get("path", "")),
        headers=headers,
        cookies=cookies,
        client=(str(client[0]), int(client[1])) if client else None,
        websocket=websocket,
        connection_id=headers.get("acp-connection-id"),
        session_id=headers.get("acp-session-id"),
        scope=scope,
    )


async def respond(
    send: Send,
    status: int,
    body: bytes | str = b"",
    *,
    content_type: str = "text/plain; charset=utf-8",
    headers: Mapping[str, str] | None = None,
) -> None:
    """A whole HTTP response (an empty body for 202 and 204)."""
    data = body.encode() if isinstance(body, str) else body
    pairs = [(k.lower().encode(), v.encode()) for k, v in (headers or {}).items()]
    if data:
        pairs.append((b"content-type", content_type.encode()))
    pairs.append((b"content-length", str(len(data)).encode()))
    await send({"type": "http.response.start", "status": status, "headers": pairs})
    await send({"type": "http.response.body", "body": data})


class TooLarge(Exception):
    """A request body longer than the limit."""


class Disconnected(Exception):
    """The client went away before its request body was read."""


async def read_body(receive: Receive, limit: int) -> bytes:
    """The request body, refused with :class:`TooLarge` as soon as it passes
    ``limit``."""
    pieces: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            raise Disconnected
        piece = message.get("body", b"")
        size += len(piece)
        if size > limit:
            raise TooLarge
        pieces.append(piece)
        if not message.get("more_body", False):
            return b"".join(pieces)


async def watch_disconnect(receive: Receive) -> None:
    """Return when the client disconnects (the request body must be read already)."""
    while (await receive())["type"] != "http.disconnect":
        pass


async def until_disconnect(receive: Receive, work: Awaitable[Any]) -> Any:
    """Run ``work`` unless the client disconnects first (then cancel it and raise
    :class:`Disconnected`)."""
    task = asyncio.ensure_future(work)
    watcher = asyncio.ensure_future(watch_disconnect(receive))
    try:
        done, _ = await asyncio.wait(
            {task, watcher}, return_when=asyncio.FIRST_COMPLETED
        )
    finally:
        watcher.cancel()
        if not task.done():
            task.cancel()
    if task not in done:
        raise Disconnected
    return task.result()
