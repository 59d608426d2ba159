"""A JSON-RPC 2.0 connection over any transport that moves whole messages.

Support code: it knows no method of the protocol. A transport (``transport.Transport``)
moves each message's bytes: lines on stdio (``lines.LineTransport``), WebSocket frames
and HTTP bodies and events (the remote modules); the wire layer reads
(``wire.messages.read_message``) and writes (``wire.codec.encode``) them. What the
connection guarantees, whatever the peer writes and over whichever transport:

- **Conformance.** Ids are strings, integers (64-bit) or null. A line that is not JSON
  gets -32700; a message that is not a JSON-RPC object (not an object, a batch, a wrong
  ``jsonrpc``, a method that is not a string, an id of another type) gets -32600, with
  id null when the id cannot be read; a request reusing the id of one still running gets
  -32600 and the first is unaffected. A message longer than ``Limits.max_message_bytes``
  or nested deeper than ``Limits.max_depth`` gets -32600 (with its id when it can be
  read) and is never parsed. Handler failures become -32603 without details; a result
  that cannot be written as JSON (NaN and infinities included) becomes -32603. Responses
  to unknown ids, and ``$/cancel_request`` for unknown or malformed ids, are dropped
  with a debug log. Notifications are never answered.
- **Order.** Notifications from the peer are handled one at a time, in arrival order: a
  handler that awaits delays the next notification, never reorders it. Requests from the
  peer run concurrently, each as its own task (started at once where the Python has
  eager tasks and no notification read before it waits: ``in_flight.start_task``). The
  answer to one of our requests is delivered only after every notification that arrived
  before it has been handled (so a ``session/prompt`` call returns after the turn's
  ``session/update`` notifications were applied), except to a notification handler
  waiting for it, which gets it at once (otherwise it would wait for itself).
- **Bounds.** Writing waits while the peer does not read (a message is encoded only once
  the transport is ready for it, typed params and results included, so at most one
  message beyond the transport's buffer limit is held, however many senders wait). At
  most ``Limits.max_running_requests`` peer requests run at once and at most
  ``Limits.max_queued_notifications`` notifications (and ``Limits.max_queued_bytes``)
  wait; beyond that, reading pauses, so the peer's writes wait in turn. Reading never
  pauses while a handler, or a task it started, waits for the peer's answer (the answer
  may be behind): a request arriving then over the limit is answered -32603 at once,
  and a notification handler that waits while twice the limit of notifications piles
  up has its requests failed rather than wait forever.
- **Lifecycle.** At the end of input, the notifications already received are still
  handled, pending requests fail with :class:`ConnectionError`, running handlers are
  cancelled and :meth:`Connection.run` returns. :meth:`Connection.close` is idempotent;
  ``async with`` starts the connection and closes it. No handler failure ends the
  connection.

The connection only reads, keeps order and writes: its :class:`~.reader.Reader` reads
and orders the peer's messages, the dispatcher's entry point (``dispatch``) says what
each one needs, and its :class:`~.writer.Writer` writes, one message at a time; our own
requests are kept in :class:`~.in_flight.Calls`.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import itertools
import os
from collections.abc import Awaitable, Callable, Generator, Iterable
from types import TracebackType
from typing import Any, Self, cast

from ..wire.codec import encode_call
from .dispatch import Dispatcher, Handled, Handler, entry_point
from .in_flight import CURRENT, Calls, Handling, Incoming, Outgoing
from .limits import Limits
from .log_ids import logger
from .reader import CANCEL_REQUEST, Reader
from .telemetry import FIND, Telemetry, find, transport_name
from .trace_writer import Trace, TraceWriter
from .traced import Traced
from .transport import Transport
from .writer import Writer

__all__ = ["CANCEL_REQUEST", "SENT", "Connection", "Handler"]

_log = logger(__name__)
_NUMBERS = itertools.count(1)


class _Sent:
    """An awaitable already done: what :meth:`Connection.notify` gives for a
    notification written at once."""

    __slots__ = ()

    def __await__(self) -> Generator[Any, None, None]:
        return
        yield  # (a generator that ends at once)


SENT: Awaitable[None] = _Sent()
"""What :meth:`Connection.notify` gives for a notification it wrote at once (awaiting it
returns at once)."""


class Connection:
    """Both ends of a JSON-RPC conversation: sends requests to the peer and answers the
    peer's.

    ``transport`` moves the messages (``LineTransport(reader, writer)`` over a pipe or
    a socket); ``handler`` is usually a :class:`~.dispatch.Dispatcher` (or its
    ``dispatch``), else a function answering each message. Serve with ``await
    connection.run()`` (until the peer closes its end), or ``async with connection:``
    (reading in the background until the block ends). Given ``trace`` (a text file, or a
    path to append to), every message in and out is written to it as one JSON line (see
    ``trace_writer``). Where the application set OpenTelemetry up (``telemetry.find``),
    or given ``telemetry``, its requests and the peer's are traced and measured
    (``traced``; None: not).
    """

    def __init__(
        self,
        transport: Transport,
        handler: Handler | Dispatcher,
        *,
        limits: Limits | None = None,
        trace: Trace = None,
        telemetry: Telemetry | object | None = FIND,
    ) -> None:
        self.transport = transport
        self.limits = limits or Limits()
        self._trace = TraceWriter(trace) if trace is not None else None
        self._calls = Calls()
        self._encode_call: Callable[..., bytes] = encode_call
        handle = entry_point(handler)
        found = find() if telemetry is FIND else telemetry
        if isinstance(found, Telemetry):
            handle = self._traced(found, handle)
        self._writer = Writer(transport, self._trace)
        self._reader = Reader(
            self,
            transport,
            handle,
            self._writer,
            self._calls,
            self.limits,
            self._trace,
            self._lost,
        )
        self._background: set[asyncio.Task[None]] = set()
        self._task: asyncio.Task[None] | None = None
        self._number = next(_NUMBERS)

    @property
    def id(self) -> str:
        """The connection's id in log records (``log_ids``): the transport's
        ``connection_id`` (a remote connection's ``Acp-Connection-Id``), else a number
        of this process's."""
        found = getattr(self.transport, "connection_id", None)
        return found if type(found) is str else f"{os.getpid()}.{self._number}"

    def running_messages(self) -> Iterable[Incoming]:
        """The peer's requests being handled (``log_ids``)."""
        return self._reader.running.values()

    def _traced(
        self, telemetry: Telemetry, handle: Callable[[dict[str, Any]], Handled]
    ) -> Callable[[dict[str, Any]], Handled]:
        """Trace and measure this connection (``traced``): the instance's ``request``
        and ``notify`` wrap the class's, its encoder carries the trace context, its
        trace is tapped for the message sizes. The entry point to use: ``handle``,
        traced."""
        traced = Traced(telemetry, transport_name(self.transport))
        self.request = functools.partial(traced.request, self.request)  # type: ignore[method-assign]
        self.notify = functools.partial(traced.notify, self.notify)  # type: ignore[method-assign]
        carry = traced.encode_call

        def encode(*message: Any) -> bytes:
            return encode_call(*carry(*message))

        self._encode_call = encode
        self._trace = cast("TraceWriter | None", traced.tap(self._trace))
        return traced.handling(handle)

    # -- our requests
    # ---------------------------------------------------------------------------

    async def request(
        self,
        method: str,
        params: Any = None,
        *,
        serializer: Any = None,
        read: Callable[[Any], Any] | None = None,
    ) -> Any:
        """Send a request and wait for its result; an error answer raises
        :class:`RequestError`. Given ``serializer`` (a pydantic-core serializer),
        ``params`` is the model it writes, when the request's turn to be written
        comes; given ``read`` (a typed sender's validator of the result model), the
        result is what ``read`` makes of it (of ``{}`` for a null result) and raises
        what ``read`` raises.

        Raises :class:`ConnectionError` when the connection is closed or the peer's
        input ends before the answer (or what the transport's ``failure()`` gives: a
        resuming transport that gave up, the -32060 that says to ``session/load``);
        ``ValueError``/``TypeError`` when ``params`` is not JSON (NaN too).
        """
        reader, writer, calls = self._reader, self._writer, self._calls
        if writer.closed or reader.input_ended:
            raise self._ended()
        request_id = next(calls.ids)
        work = CURRENT.get()
        origin = (
            work
            if work is not None and work.connection is self and work.running
            else None
        )
        loop = reader.loop or asyncio.get_running_loop()
        outgoing = Outgoing(loop.create_future(), origin)
        calls.pending[request_id] = outgoing
        if origin is not None:
            self._await_peer(origin, 1)
        try:
            encode = self._encode_call
            if not writer.now(encode, request_id, method, params, serializer):
                await writer.in_turn(encode, request_id, method, params, serializer)
            result = await outgoing.future
        except asyncio.CancelledError:
            if not outgoing.answered and not writer.closed:
                self._in_background(
                    self._send_quietly(CANCEL_REQUEST, {"requestId": request_id})
                )
            raise
        finally:
            del calls.pending[request_id]
            if origin is not None:
                self._await_peer(origin, -1)
            # an error raised here holds this frame in its traceback, and the future
            # holds the error: without this frame's hold on the future, no cycle
            del outgoing
        if read is None:
            return result
        return read({} if result is None else result)

    def notify(
        self, method: str, params: Any = None, *, serializer: Any = None
    ) -> Awaitable[None]:
        """Send a notification: what to await until it is written (it waits while the
        peer is not reading); :data:`SENT` when it was written at once. Given
        ``serializer``, ``params`` is the model it writes, as for :meth:`request`.
        Raises ``ValueError``/``TypeError`` at once when ``params`` is not JSON."""
        encode = self._encode_call
        if self._writer.now(encode, None, method, params, serializer):
            return SENT
        return self._writer.in_turn(encode, None, method, params, serializer)

    def _await_peer(self, origin: Handling, step: int) -> None:
        origin.awaiting += step
        self._calls.awaiting += step
        self._reader.room.set()

    def _lost(self) -> ConnectionError:
        """What a request waiting for its answer fails with when the peer's input ends:
        the transport's refusal, when the server refused the connection (a remote
        transport's ``refusal``), else that the peer closed the connection."""
        refusal = getattr(self.transport, "refusal", None)
        if isinstance(refusal, ConnectionError):
            return refusal
        return ConnectionError("the peer closed the connection before answering")

    def _ended(self) -> Exception:
        """What a request made after the connection ended raises: what the transport
        says (a resuming transport that gave up: the error that says how to recover),
        else that the connection is closed."""
        failure = getattr(self.transport, "failure", None)
        found = failure() if callable(failure) else None
        if isinstance(found, Exception):
            return found
        return ConnectionError("the connection is closed")

    def _in_background(self, work: Awaitable[None]) -> None:
        task = asyncio.ensure_future(work)
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def _send_quietly(self, method: str, params: Any) -> None:
        with contextlib.suppress(Exception):
            await self.notify(method, params)

    # -- the conversation
    # ---------------------------------------------------------------------------

    def start(self) -> None:
        """Start reading and handling the peer's messages in the background
        (idempotent)."""
        if self._task is None and not self._writer.closed:
            loop = self._reader.loop = asyncio.get_running_loop()
            self._task = loop.create_task(self._serve())

    async def run(self) -> None:
        """Read and handle messages until the peer closes its end (or :meth:`close`)."""
        self.start()
        if self._task is not None:
            await asyncio.wait({self._task})

    async def close(self) -> None:
        """Stop reading and writing, fail pending requests, cancel running handlers
        (idempotent)."""
        if self._writer.closed:
            return
        self._writer.closed = True
        self._calls.fail_all(ConnectionError("the connection is closed"))
        if self._task is not None and self._task is not asyncio.current_task():
            self._task.cancel()
        with contextlib.suppress(Exception):
            await self.transport.close()
        if self._task is None:
            self._close_trace()

    async def __aenter__(self) -> Self:
        self.start()
        return self

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.close()
        if self._task is not None and self._task is not asyncio.current_task():
            await asyncio.wait({self._task})

    async def _serve(self) -> None:
        reader = self._reader
        # this task's own context, which every request's handler task copies
        token = CURRENT.set(reader.requests)
        worker = asyncio.get_running_loop().create_task(reader.handle_notifications())
        try:
            await reader.read()
            reader.end_of_input()
            await asyncio.wait({worker})
        except (ConnectionError, OSError) as error:
            _log.debug("reading stopped: %s", error)
        finally:
            reader.input_ended = True
            self._calls.fail_all(self._lost())
            tasks = [
                worker,
                *(i.task for i in reader.running.values()),
                *self._background,
            ]
            for task in tasks:
                task.cancel()
            try:
                await asyncio.wait(tasks)
            finally:
                reader.requests.running = False
                # no cycle through this task's context; a coroutine closed outside its
                # task (its loop gone) runs this in another context, which has no token
                with contextlib.suppress(ValueError):
                    CURRENT.reset(token)
            self._close_trace()

    def _close_trace(self) -> None:
        if self._trace is not None:
            self._trace.close()
