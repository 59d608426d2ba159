"""The remote client's WebSocket transport (``websockets``): one text frame per message,
a ``transport.Transport`` under the same connection as stdio.

Support code: it knows no method of the protocol. It needs the ``remote`` extra
(``deps``). A frame longer than the message limit closes the socket (1009). A refused
connection raises :class:`~.refusal.Refused`: an HTTP error status answering the
upgrade, or a socket the server closed before its first message (its close code and
reason: the requests waiting fail with it). The socket is pinged: a connection silent
for longer than its ``silence`` bound (a half-open one) counts as lost.
"""

from __future__ import annotations

from collections.abc import Mapping

from ..connection.log_ids import logger
from ..connection.transport import Oversized
from . import websocket_library as websockets
from .http_requests import CookieJar
from .reach import Unreachable, reason_of
from .refusal import Refused, refused_by_response
from .websocket_library import ClientConnection, connect

__all__ = ["WebSocketClientTransport", "dial", "websocket_url"]

_log = logger(__name__)


def websocket_url(url: str) -> str:
    """``url`` with the WebSocket scheme (``http`` -> ``ws``, ``https`` -> ``wss``)."""
    for plain, secure in (("http://", "ws://"), ("https://", "wss://")):
        if url.startswith(plain):
            return secure + url[len(plain) :]
    return url


class WebSocketClientTransport:
    """ACP over one WebSocket: a text frame per message."""

    telemetry_name = "websocket"
    """``acp.transport`` (``telemetry``)."""

    def __init__(self, socket: ClientConnection, url: str = "") -> None:
        self.socket = socket
        self.url = url
        self.connection_id = (
            socket.response.headers.get("Acp-Connection-Id")
            if socket.response
            else None
        )
        self.refusal: Refused | None = None
        """Why the server closed the socket before its first message (the connection
        fails the requests waiting with it)."""
        self._heard = False

    @classmethod
    async def open(
        cls,
        url: str,
        headers: Mapping[str, str],
        max_bytes: int,
        *,
        silence: float = 25.0,
        cookies: CookieJar | None = None,
    ) -> WebSocketClientTransport:
        """Open the socket; a ping goes out every 0.3 ``silence`` seconds, and a pong
        missing for 0.5 ``silence`` fails the socket (closed within 0.2 ``silence``): a
        silent connection counts as lost within ``silence`` seconds. ``cookies``: sent
        with the upgrade, and what its answer sets is kept."""
        jar = cookies or CookieJar()
        try:
            socket = await connect(
                websocket_url(url),
                additional_headers=jar.header(url, headers),
                max_size=max_bytes,
                compression=None,
                ping_interval=0.3 * silence,
                ping_timeout=0.5 * silence,
                close_timeout=0.2 * silence,
            )
        except websockets.InvalidStatus as error:
            response = error.response
            raise refused_by_response(
                url, "ws", response.status_code, bytes(response.body or b"")
            ) from None
        except (OSError, TimeoutError, websockets.InvalidURI) as error:
            raise Unreachable(url, "ws", reason_of(error)) from None
        except websockets.InvalidHandshake as error:  # not a WebSocket server there
            raise Unreachable(url, "ws", f"no WebSocket upgrade: {error}") from None
        if socket.response is not None:
            answer = socket.response
            jar.store(url, answer.status_code, list(answer.headers.raw_items()))
        return cls(socket, url)

    async def receive(self, limit: int) -> bytes | Oversized | None:
        while True:
            try:
                frame = await self.socket.recv()
            except websockets.ConnectionClosed as closed:
                self._closed_by(closed)
                return None
            self._heard = True
            if isinstance(frame, str):
                return frame.encode("utf-8", "surrogatepass")
            _log.debug("ignored a binary WebSocket frame")

    def _closed_by(self, closed: websockets.ConnectionClosed) -> None:
        """Note a refusal: the server closed the socket before its first message."""
        by_server = closed.rcvd is not None and (
            closed.sent is None or bool(closed.rcvd_then_sent)
        )
        if by_server and not self._heard and closed.rcvd is not None:
            code, reason = closed.rcvd.code, closed.rcvd.reason
            self.refusal = Refused(self.url, "ws", close_code=code, message=reason)

    async def ready(self) -> None:
        return None

    async def send(self, data: bytes) -> None:
        try:
            await self.socket.send(data, text=True)
        except websockets.ConnectionClosed as error:
            self._closed_by(error)
            raise self.refusal or ConnectionError(str(error)) from None

    async def close(self) -> None:
        await self.socket.close()

    async def leave(self) -> bool:
        """Close for good (code 1000): whether the server answered the closing
        handshake (a silent connection does not, within the close time-out)."""
        await self.socket.close()
        return self.socket.protocol.close_rcvd is not None

    async def abandon(self) -> None:
        """Drop the socket without a closing handshake (the agent may be resumed)."""
        self.socket.transport.abort()


async def dial(
    url: str,
    headers: Mapping[str, str],
    *,
    initialize: str,
    max_bytes: int,
    http2: bool | None,
    resumable: bool,
    silence: float,
    cookies: CookieJar,
) -> WebSocketClientTransport:
    """The ``"ws"`` profile's opening (``transports.Dialer``): the socket, upgraded."""
    return await WebSocketClientTransport.open(
        url, headers, max_bytes, silence=silence, cookies=cookies
    )
