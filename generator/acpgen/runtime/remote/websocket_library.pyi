# What the WebSocket client uses of websockets, typed (``websocket_library.py`` is
# websockets' own).

import asyncio
from collections.abc import Awaitable, Iterable, Mapping

__all__ = [
    "ClientConnection",
    "ConnectionClosed",
    "InvalidHandshake",
    "InvalidStatus",
    "InvalidURI",
    "connect",
]

class Headers:
    def get(self, key: str) -> str | None: ...
    def raw_items(self) -> Iterable[tuple[str, str]]: ...

class Response:
    status_code: int
    headers: Headers
    body: bytes | None

class Close:
    code: int
    reason: str

class Protocol:
    close_rcvd: Close | None

class ClientConnection:
    response: Response | None
    protocol: Protocol
    transport: asyncio.Transport
    async def recv(self) -> str | bytes: ...
    async def send(self, message: str | bytes, *, text: bool | None = None) -> None: ...
    async def close(self) -> None: ...

class ConnectionClosed(Exception):
    rcvd: Close | None
    sent: Close | None
    rcvd_then_sent: bool | None

class InvalidHandshake(Exception): ...

class InvalidStatus(InvalidHandshake):
    response: Response

class InvalidURI(Exception): ...

def connect(
    uri: str,
    *,
    additional_headers: Mapping[str, str] | None = None,
    max_size: int | None = ...,
    compression: str | None = ...,
    ping_interval: float | None = ...,
    ping_timeout: float | None = ...,
    close_timeout: float | None = ...,
) -> Awaitable[ClientConnection]: ...
