"""Writing a connection's messages: one at a time, in the order they were asked for,
each encoded only when the transport can take it.

Support code: it knows no method of the protocol. Every message a connection writes (our
requests and notifications, the answers to the peer's requests, its refusals) goes
through one :class:`Writer`: a message that waits for its turn holds what it will be
written from (a model, a reply), never its bytes, so thousands of waiting senders hold
no more encoded bytes than one.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from ..wire.rpc import RequestError
from .log_ids import logger
from .replies import ErrorReply, Reply
from .trace_writer import TraceWriter
from .transport import Transport

__all__ = ["Encoder", "Writer"]

_log = logger(__name__)

Encoder = Callable[..., bytes]


class Writer:
    """Writes messages to ``transport`` in turn, tracing each to ``trace`` once the
    transport has taken it."""

    def __init__(self, transport: Transport, trace: TraceWriter | None) -> None:
        self._transport = transport
        self._trace = trace
        self._lock = asyncio.Lock()
        self._writers = 0
        """Writers holding the lock or waiting for it."""
        self._send_now: Callable[[bytes], None] | None = getattr(
            transport, "send_now", None
        )
        self._can_send_now: Callable[[], bool] | None = (
            getattr(transport, "can_send_now", None)
            if self._send_now is not None
            else None
        )
        """The transport's optional way to write without awaiting (see :meth:`now`)."""
        self.closed = False
        """Set when the connection closes: nothing is written any more."""

    def now(self, encoder: Encoder, *message: Any) -> bool:
        """Write the message ``encoder(*message)`` gives at once, without awaiting,
        where nothing can come between: no writer holds or awaits the lock and the
        transport takes a message now (its optional ``can_send_now`` and ``send_now``:
        ``LineTransport``'s, when nothing waits in the stream's buffer). False: nothing
        was encoded or written; :meth:`in_turn` writes it. Raises what ``encoder``
        raises."""
        if self._writers or self.closed:
            return False
        can_send_now = self._can_send_now
        if can_send_now is None or not can_send_now():
            return False
        data = encoder(*message)
        self._send_now(data)  # type: ignore[misc] # (given with can_send_now)
        if self._trace is not None:
            self._trace.record("out", data)
        return True

    async def in_turn(self, encoder: Encoder, *message: Any) -> None:
        """Write the message under the lock, once the transport is ready for it: it is
        encoded only then. Raises :class:`ConnectionError` once closed, and what the
        transport or ``encoder`` raises."""
        lock = self._lock
        self._writers += 1
        try:
            await lock.acquire()  # as ``async with``, without its two coroutines
            try:
                if self.closed:
                    raise ConnectionError("the connection is closed")
                await self._transport.ready()
                data = encoder(*message)
                try:
                    await self._transport.send(data)
                except asyncio.CancelledError:
                    # cancelled while the transport sent it (a POST out, its answer
                    # not yet in): it may have reached the peer, so it is traced
                    if self._trace is not None:
                        self._trace.record("out", data)
                    raise
            finally:
                lock.release()
        finally:
            self._writers -= 1
        if self._trace is not None:
            self._trace.record("out", data)

    async def write(self, encoder: Encoder, *message: Any) -> None:
        """Write the message at once where :meth:`now` can, else in turn."""
        if not self.now(encoder, *message):
            await self.in_turn(encoder, *message)

    def reply_now(self, reply: Reply) -> bool:
        """Write ``reply`` at once where :meth:`now` can; False also for a reply that
        JSON cannot hold, which :meth:`reply` answers -32603 instead."""
        try:
            return self.now(reply.encode)  # (its bound method: no call more)
        except (TypeError, ValueError, RecursionError):
            return False

    async def reply(self, reply: Reply) -> None:
        """Write ``reply`` in turn; one that JSON cannot hold (NaN, objects, cycles) is
        logged and answered -32603."""
        try:
            await self.write(reply.encode)
        except (TypeError, ValueError, RecursionError) as error:
            request_id = reply.request_id
            _log.error("the answer to %.100r is not JSON: %s", request_id, error)
            refused = ErrorReply(request_id, RequestError.internal_error())
            await self.write(refused.encode)
