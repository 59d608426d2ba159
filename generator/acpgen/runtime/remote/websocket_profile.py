"""The WebSocket profile of the remote server: one ACP connection per socket.

Support code: it knows no method of the protocol. The upgrade is accepted with the
``Acp-Connection-Id`` header; the first message must be ``initialize`` (before it, what
is not JSON is answered -32700, other JSON -32600, responses are ignored, anything else
closes the socket with 1002, as the TypeScript SDK does); only then is the agent created
and every text frame handed to its connection, which answers as over stdio. Binary
frames are ignored (the RFD). A second ``initialize`` is answered -32600 here. The
socket closes with 1008 when a limit is passed (no ``initialize`` in time, output
stalled) and 1000 when the connection ends.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from typing import Any

from ..connection.log_ids import logger
from ..connection.transport import Oversized
from ..resume.vocabulary import unknown_token
from ..wire.codec import Unreadable, decode
from .asgi import Receive, Send
from .server_connection import RemoteConnection, Server, ServerTransport

__all__ = ["serve_socket"]

_log = logger(__name__)


def _error(code: int, message: str, request_id: Any = None) -> str:
    error = {"code": code, "message": message}
    return json.dumps({"jsonrpc": "2.0", "id": request_id, "error": error})


class _Socket:
    """Reads and writes one accepted WebSocket for its ACP connection."""

    def __init__(
        self, app: Server, remote: RemoteConnection, receive: Receive, send: Send
    ) -> None:
        self.app = app
        self.remote = remote
        self.receive = receive
        self.send = send
        self.close_code = 1000
        self.reason = ""

    async def frame(self) -> bytes | None:
        """The next text frame's bytes; None once the client disconnected."""
        while True:
            message = await self.receive()
            if message["type"] == "websocket.disconnect":
                self.remote.farewell = message.get("code") == 1000
                return None
            text = message.get("text")
            if text is not None:
                data: bytes = text.encode("utf-8", "surrogatepass")
                return data
            _log.debug("ignored a binary WebSocket frame")

    async def send_text(self, text: str) -> None:
        await self.send({"type": "websocket.send", "text": text})

    async def send_frame(self, data: bytes) -> None:
        """An agent message to the client; the connection closes when the client reads
        nothing for the stall time."""
        text = data.decode("utf-8", "surrogatepass")
        try:
            async with asyncio.timeout(self.remote.limits.stall_timeout):
                await self.send({"type": "websocket.send", "text": text})  # send_text's
        except TimeoutError:
            _log.warning("closing ACP connection %s: output stalled", self.remote.id)
            self.close_code, self.reason = 1008, "Output stalled"
            await self.remote.close()
            raise ConnectionError("output stalled") from None

    async def first_message(self) -> bytes | None:
        """The ``initialize`` request opening the connection (None: the socket ends)."""
        initialize = self.app.routing.initialize
        while (data := await self.frame()) is not None:
            message = decode(data, self.app.max_depth)
            if type(message) is Unreadable:
                error = message.error
                await self.send_text(
                    _error(error.code, error.message, message.request_id)
                )
                continue
            if type(message) is not dict:
                await self.send_text(_error(-32600, "Invalid request"))
                continue
            if "method" not in message:
                continue  # a response to nothing: ignored
            if message.get("method") != initialize or message.get("id") is None:
                self.close_code, self.reason = 1002, "First message must be initialize"
                return None
            return data
        return None

    async def read_frames(self) -> None:
        """Hand the client's frames to the agent until the client disconnects."""
        limit, initialize = self.app.max_message_bytes, self.app.routing.initialize
        marker = json.dumps(initialize).encode()
        while (data := await self.frame()) is not None:
            if len(data) > limit:
                await self.remote.deliver(Oversized(data[:65536]))
                continue
            if marker in data:
                message = decode(data, self.app.max_depth)
                if (
                    type(message) is dict
                    and message.get("method") == initialize
                    and "id" in message
                ):
                    refusal = _error(
                        -32600,
                        "Initialize not allowed on existing connection",
                        message["id"],
                    )
                    await self.send_text(refusal)
                    continue
            await self.remote.deliver(data)


async def serve_socket(
    app: Server, remote: RemoteConnection, receive: Receive, send: Send
) -> None:
    """Serve one accepted WebSocket upgrade until it, or its ACP connection, ends."""
    socket = _Socket(app, remote, receive, send)
    header = [(b"acp-connection-id", remote.id.encode())]
    await send({"type": "websocket.accept", "headers": header})
    try:
        await _serve(socket)
    except (ConnectionError, OSError) as error:
        _log.debug("WebSocket of %s ended: %s", remote.id, error)
    finally:
        await remote.close()
        with contextlib.suppress(Exception):
            async with asyncio.timeout(1.0):
                await send(
                    {
                        "type": "websocket.close",
                        "code": socket.close_code,
                        "reason": socket.reason,
                    }
                )


async def _serve(socket: _Socket) -> None:
    remote = socket.remote
    try:
        async with asyncio.timeout(remote.limits.open_timeout):
            first = await socket.first_message()
    except TimeoutError:
        socket.close_code, socket.reason = 1008, "No initialize in time"
        return
    if first is None:
        return
    message = decode(first, socket.app.max_depth)
    host = socket.app.resumed_host(message) if type(message) is dict else None
    if isinstance(host, bool):
        request_id = message.get("id") if type(message) is dict else None
        await socket.send_text(unknown_token(request_id))
        return
    try:
        socket.app.start_agent(remote, ServerTransport(remote, socket.send_frame), host)
    except Exception as error:  # noqa: BLE001 - refused, as over HTTP (500)
        _log.warning("initialize failed on %s: %r", remote.id, error)
        socket.close_code, socket.reason = 1011, "Initialize failed"
        return
    await remote.deliver(first)
    reader = asyncio.ensure_future(socket.read_frames())
    assert remote.task is not None
    try:
        await asyncio.wait({reader, remote.task}, return_when=asyncio.FIRST_COMPLETED)
        if reader.done():  # the client left: what it sent is still handled, briefly
            remote.end_input()
            await asyncio.wait({remote.task}, timeout=5.0)
    finally:
        reader.cancel()
        with contextlib.suppress(BaseException):
            await reader
