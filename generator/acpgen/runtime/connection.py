"""A JSON-RPC 2.0 connection over asyncio streams, one JSON message per line.

Requests in both directions run concurrently; a ``$/cancel_request`` from the peer cancels the
handler of that request (answered with -32800); end of input fails the pending requests and
ends :meth:`Connection.run`. Messages may be up to ``max_message_bytes`` long (32 MiB by
default, whatever the stream reader's own line limit); a longer one ends the connection.
Support code: it knows no method of the protocol.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import logging
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

from ._rpc import INVALID_REQUEST, PARSE_ERROR, RequestError

__all__ = ["MAX_MESSAGE_BYTES", "Connection", "stdio_streams"]

_log = logging.getLogger(__name__)

Handler = Callable[[dict[str, Any]], Awaitable[dict[str, Any] | None]]
CANCEL_REQUEST = "$/cancel_request"
MAX_MESSAGE_BYTES = 32 * 1024 * 1024
_CHUNK = 64 * 1024


async def stdio_streams() -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """Streams over this process's stdin and stdout, for an agent spawned by its client."""
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    transport, protocol = await loop.connect_write_pipe(
        asyncio.streams.FlowControlMixin, sys.stdout
    )
    return reader, asyncio.StreamWriter(transport, protocol, reader, loop)


class Connection:
    """Both ends of a JSON-RPC conversation: sends requests to the peer and answers the peer's.

    ``handler`` is usually ``Dispatcher(my_handler, methods).dispatch``.
    """

    def __init__(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        handler: Handler,
        *,
        max_message_bytes: int = MAX_MESSAGE_BYTES,
    ) -> None:
        self._reader = reader
        self._max = max_message_bytes
        self._writer = writer
        self._handler = handler
        self._ids = itertools.count(1)
        self._pending: dict[Any, asyncio.Future[Any]] = {}
        self._running: dict[Any, asyncio.Task[None]] = {}
        self._write_lock = asyncio.Lock()
        self._closed = False

    async def request(self, method: str, params: Any) -> Any:
        """Send a request and wait for its result; an error answer raises :class:`RequestError`."""
        if self._closed:
            raise ConnectionError("the connection is closed")
        request_id = next(self._ids)
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending[request_id] = future
        try:
            await self._send(
                {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
            )
            return await future
        except asyncio.CancelledError:
            if not self._closed:
                with contextlib.suppress(Exception):
                    await self.notify(CANCEL_REQUEST, {"requestId": request_id})
            raise
        finally:
            self._pending.pop(request_id, None)

    async def notify(self, method: str, params: Any) -> None:
        """Send a notification."""
        await self._send({"jsonrpc": "2.0", "method": method, "params": params})

    async def run(self) -> None:
        """Read and handle messages until the peer closes its end."""
        try:
            async for line in self._lines():
                if line.strip():
                    self._receive(line)
        finally:
            self._closed = True
            for future in self._pending.values():
                if not future.done():
                    future.set_exception(ConnectionError("the peer closed the connection"))
            for task in list(self._running.values()):
                task.cancel()

    async def _lines(self) -> AsyncIterator[bytes]:
        """Lines of input, read in chunks: no reader limit applies below ``max_message_bytes``."""
        buffer = bytearray()
        while chunk := await self._reader.read(_CHUNK):
            buffer += chunk
            while (end := buffer.find(b"\n")) >= 0:
                yield bytes(buffer[:end])
                del buffer[: end + 1]
            if len(buffer) > self._max:
                _log.error("a message is longer than %d bytes; closing the connection", self._max)
                return
        if buffer.strip():
            yield bytes(buffer)

    async def close(self) -> None:
        """Stop writing; pending requests fail once the peer has closed its end."""
        self._closed = True
        self._writer.close()
        with contextlib.suppress(Exception):
            await self._writer.wait_closed()

    def _receive(self, line: bytes) -> None:
        try:
            message = json.loads(line)
        except ValueError:
            self._spawn(None, self._send_error(None, RequestError(PARSE_ERROR, "Parse error")))
            return
        if not isinstance(message, dict):
            self._spawn(
                None, self._send_error(None, RequestError(INVALID_REQUEST, "Invalid request"))
            )
        elif "method" in message:
            if message["method"] == CANCEL_REQUEST:
                self._cancel(message.get("params"))
            else:
                self._spawn(message.get("id"), self._answer(message))
        elif "id" in message:
            self._settle(message)

    def _spawn(self, request_id: Any, work: Awaitable[None]) -> None:
        task = asyncio.ensure_future(work)
        key = request_id if request_id is not None else object()
        self._running[key] = task
        task.add_done_callback(lambda _: self._running.pop(key, None))

    async def _answer(self, message: dict[str, Any]) -> None:
        try:
            response = await self._handler(message)
        except asyncio.CancelledError:
            if "id" in message and not self._closed:
                await self._send_error(message["id"], RequestError.cancelled())
            return
        if response is not None:
            await self._send(response)

    def _cancel(self, params: Any) -> None:
        task = self._running.get(params.get("requestId")) if isinstance(params, dict) else None
        if task is not None:
            task.cancel()

    def _settle(self, message: dict[str, Any]) -> None:
        future = self._pending.get(message["id"])
        if future is None or future.done():
            _log.debug("answer to an unknown request %r", message.get("id"))
        elif "error" in message:
            future.set_exception(RequestError.from_wire(message["error"]))
        else:
            future.set_result(message.get("result"))

    async def _send_error(self, request_id: Any, error: RequestError) -> None:
        await self._send({"jsonrpc": "2.0", "id": request_id, "error": error.to_wire()})

    async def _send(self, message: dict[str, Any]) -> None:
        data = json.dumps(message, separators=(",", ":"), ensure_ascii=False).encode() + b"\n"
        async with self._write_lock:
            self._writer.write(data)
            await self._writer.drain()
