"""A JSON-RPC 2.0 connection over asyncio streams, one JSON message per line.

Support code: it knows no method of the protocol. What it guarantees, whatever the peer
writes:

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
  peer run concurrently. The answer to one of our requests is delivered only after every
  notification that arrived before it has been handled (so a ``session/prompt`` call
  returns after the turn's ``session/update`` notifications were applied), except to a
  notification handler waiting for it, which gets it at once (otherwise it would wait
  for itself).
- **Bounds.** Writing waits while the peer does not read (at most one message beyond the
  transport's buffer limit is held). At most ``Limits.max_running_requests`` peer
  requests run at once and at most ``Limits.max_queued_notifications`` notifications
  (and ``Limits.max_queued_bytes``) wait; beyond that, reading pauses, so the peer's
  writes wait in turn. Reading never pauses while a handler waits for the peer's answer
  (the answer may be behind): a request arriving then over the limit is answered -32603
  at once, and a notification handler that waits while twice the limit of notifications
  piles up has its requests failed rather than wait forever.
- **Lifecycle.** At the end of input, the notifications already received are still
  handled, pending requests fail with :class:`ConnectionError`, running handlers are
  cancelled and :meth:`Connection.run` returns. :meth:`Connection.close` is idempotent;
  ``async with`` starts the connection and closes it. No handler failure ends the
  connection.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import contextvars
import datetime
import itertools
import json
import logging
import os
import re
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from types import TracebackType
from typing import Any, Self, TextIO

from pydantic_core import from_json

from ._rpc import (
    INTERNAL_ERROR,
    INVALID_REQUEST,
    PARSE_ERROR,
    Encoded,
    RequestError,
    read_id,
)

__all__ = [
    "CANCEL_REQUEST",
    "MAX_MESSAGE_BYTES",
    "TRACE_VARIABLE",
    "Connection",
    "Limits",
    "Trace",
    "Unreadable",
    "decode",
    "stdio_streams",
    "traced",
]

_log = logging.getLogger(__name__)

Handler = Callable[[dict[str, Any]], Awaitable[dict[str, Any] | None]]
"""Answers a request with a response message, or handles a notification and returns
None."""

CANCEL_REQUEST = "$/cancel_request"
TRACE_VARIABLE = "ACP_TRACE"
"""The environment variable naming a file to trace the wire to (see :func:`trace_file`).
"""
MAX_MESSAGE_BYTES = 32 * 1024 * 1024
_CHUNK = 64 * 1024
_ID_WINDOW = 64 * 1024
"""How much of an oversized or over-deep message is searched for its id."""
_FAST_DEPTH = 200
"""The nesting pydantic-core's JSON reader refuses beyond (without recursing into it).
"""


@dataclass(frozen=True, slots=True)
class Limits:
    """What one peer may make this process hold."""

    max_message_bytes: int = MAX_MESSAGE_BYTES
    """The longest line read (a longer one is answered -32600 and skipped)."""
    max_depth: int = 512
    """The deepest nesting of arrays and objects read (deeper is answered -32600)."""
    max_running_requests: int = 1024
    """Peer requests handled at once; beyond it, reading pauses."""
    max_queued_notifications: int = 1024
    """Peer notifications waiting for their turn; beyond it, reading pauses."""
    max_queued_bytes: int = 64 * 1024 * 1024
    """Bytes of the waiting notifications; beyond it, reading pauses."""

    def __post_init__(self) -> None:
        for name in self.__slots__:
            if getattr(self, name) < 1:
                raise ValueError(f"Limits.{name} must be at least 1")


async def stdio_streams() -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """Streams over this process's stdin and stdout, for an agent its client spawned."""
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader()
    await loop.connect_read_pipe(
        lambda: asyncio.StreamReaderProtocol(reader), sys.stdin
    )
    transport, protocol = await loop.connect_write_pipe(
        asyncio.streams.FlowControlMixin, sys.stdout
    )
    return reader, asyncio.StreamWriter(transport, protocol, reader, loop)


Trace = str | os.PathLike[str] | TextIO | None
"""Where to trace the wire: a path (appended to), an open text file, or nowhere."""


def traced(trace: Trace) -> Trace:
    """``trace``, or else the file named by the ``ACP_TRACE`` environment variable, if
    set."""
    return trace if trace is not None else os.environ.get(TRACE_VARIABLE) or None


class _Work:
    """A peer request or notification while its handler runs, and how many answers it
    awaits."""

    __slots__ = ("awaiting", "connection", "notification", "running")

    def __init__(self, connection: Connection, *, notification: bool) -> None:
        self.connection = connection
        self.notification = notification
        self.awaiting = 0
        self.running = True


_CURRENT: contextvars.ContextVar[_Work | None] = contextvars.ContextVar(
    "acp_current_work", default=None
)
"""The peer message whose handler runs in this context (each connection's own)."""


class _Outgoing:
    """One of our requests until its answer is delivered."""

    __slots__ = ("answered", "future", "origin")

    def __init__(self, future: asyncio.Future[Any], origin: _Work | None) -> None:
        self.future = future
        self.origin = origin
        self.answered = False
        """Its answer arrived (perhaps still queued behind notifications) or it was
        failed."""


class _Incoming:
    """A peer request being handled."""

    __slots__ = ("answering", "task")

    def __init__(self, task: asyncio.Task[None]) -> None:
        self.task = task
        self.answering = False
        """The handler is done and its answer is being written: too late to cancel."""


@dataclass(frozen=True, slots=True)
class _Notification:
    message: dict[str, Any]
    size: int


@dataclass(frozen=True, slots=True)
class _Answer:
    outgoing: _Outgoing
    message: dict[str, Any]


@dataclass(frozen=True, slots=True)
class _Oversized:
    head: bytes
    """The start of the line, searched for its id."""


class Connection:
    """Both ends of a JSON-RPC conversation: sends requests to the peer and answers the
    peer's.

    ``handler`` is usually ``Dispatcher(my_handler, methods).dispatch``. Serve with
    ``await connection.run()`` (until the peer closes its end), or ``async with
    connection:`` (reading in the background until the block ends). Given ``trace`` (a
    text file, or a path to append to), every message in and out is written to it as one
    JSON line: ``{"at": <UTC time>, "direction": "in"|"out", "message": ...}``
    (``"raw"``, the text, for a line that is not JSON).
    """

    def __init__(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        handler: Handler,
        *,
        limits: Limits | None = None,
        trace: Trace = None,
    ) -> None:
        self._reader = reader
        self._owns_trace = isinstance(trace, str | os.PathLike)
        if isinstance(trace, str | os.PathLike):
            trace = open(trace, "a", encoding="utf-8")  # noqa: SIM115 - closed when reading ends
        self._trace: TextIO | None = trace
        self._writer = writer
        self._handler = handler
        self.limits = limits or Limits()
        self._ids = itertools.count(1)
        self._pending: dict[int, _Outgoing] = {}
        self._running: dict[str | int | None, _Incoming] = {}
        self._inbox: collections.deque[_Notification | _Answer] = collections.deque()
        self._queued = 0
        self._queued_bytes = 0
        self._current: _Work | None = None
        """The notification being handled."""
        self._awaiting = 0
        """Our requests, sent by handlers of peer messages, that await their answer."""
        self._changed = asyncio.Event()
        self._write_lock = asyncio.Lock()
        self._background: set[asyncio.Task[None]] = set()
        self._task: asyncio.Task[None] | None = None
        self._input_ended = False
        self._closed = False

    # -- public API
    # ---------------------------------------------------------------------------

    async def request(self, method: str, params: Any = None) -> Any:
        """Send a request and wait for its result; an error answer raises
        :class:`RequestError`.

        Raises :class:`ConnectionError` when the connection is closed or the peer's
        input ends before the answer; ``ValueError``/``TypeError`` when ``params`` is
        not JSON (NaN too).
        """
        if self._closed or self._input_ended:
            raise ConnectionError("the connection is closed")
        request_id = next(self._ids)
        work = _CURRENT.get()
        origin = (
            work
            if work is not None and work.connection is self and work.running
            else None
        )
        outgoing = _Outgoing(asyncio.get_running_loop().create_future(), origin)
        self._pending[request_id] = outgoing
        self._await_peer(origin, 1)
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        try:
            await self._send(message)
            return await outgoing.future
        except asyncio.CancelledError:
            if not outgoing.answered and not self._closed:
                self._in_background(
                    self._send_quietly(CANCEL_REQUEST, {"requestId": request_id})
                )
            raise
        finally:
            del self._pending[request_id]
            self._await_peer(origin, -1)

    async def notify(self, method: str, params: Any = None) -> None:
        """Send a notification (waits while the peer is not reading)."""
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        await self._send(message)

    def start(self) -> None:
        """Start reading and handling the peer's messages in the background
        (idempotent)."""
        if self._task is None and not self._closed:
            self._task = asyncio.get_running_loop().create_task(self._serve())

    async def run(self) -> None:
        """Read and handle messages until the peer closes its end (or :meth:`close`)."""
        self.start()
        if self._task is not None:
            await asyncio.wait({self._task})

    async def close(self) -> None:
        """Stop reading and writing, fail pending requests, cancel running handlers
        (idempotent)."""
        if self._closed:
            return
        self._closed = True
        self._fail_pending(ConnectionError("the connection is closed"))
        if self._task is not None and self._task is not asyncio.current_task():
            self._task.cancel()
        self._writer.close()
        with contextlib.suppress(Exception):
            await self._writer.wait_closed()
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

    # -- the reading side
    # ---------------------------------------------------------------------

    async def _serve(self) -> None:
        worker = asyncio.get_running_loop().create_task(self._handle_notifications())
        try:
            await self._read_messages()
            self._end_of_input()
            await asyncio.wait({worker})
        except (ConnectionError, OSError) as error:
            _log.debug("reading stopped: %s", error)
        finally:
            self._input_ended = True
            self._fail_pending(
                ConnectionError("the peer closed the connection before answering")
            )
            tasks = [
                worker,
                *(i.task for i in self._running.values()),
                *self._background,
            ]
            for task in tasks:
                task.cancel()
            await asyncio.wait(tasks)
            self._close_trace()

    async def _read_messages(self) -> None:
        async for line in self._lines():
            while not self._may_read():
                self._changed.clear()
                if self._may_read():
                    break
                await self._changed.wait()
            try:
                if self._trace is not None:
                    self._record(
                        "in", line.head if isinstance(line, _Oversized) else line
                    )
                if isinstance(line, _Oversized):
                    limit = {"limit": self.limits.max_message_bytes}
                    await self._refuse(find_id(line.head), "Message too large", limit)
                elif line.strip():
                    await self._receive(line)
            except (ConnectionError, OSError) as error:
                _log.debug("could not answer the peer: %s", error)
            except Exception:  # noqa: BLE001 - one message never ends the conversation
                _log.exception("a message from the peer could not be handled")

    async def _lines(self) -> AsyncIterator[bytes | _Oversized]:
        """Lines of input in linear time, each byte copied once; an over-long line is
        skipped.

        The pieces of an unfinished line are kept as they came and joined once, when its
        newline arrives; a line that outgrows the limit is dropped up to its newline,
        its head kept so that the refusal can name its id.
        """
        limit = self.limits.max_message_bytes
        pieces: list[bytes] = []
        size = 0
        head: bytes | None = None  # set while skipping the rest of an over-long line
        while chunk := await self._reader.read(_CHUNK):
            start = 0
            while (end := chunk.find(b"\n", start)) >= 0:
                piece = chunk[start:end]
                if head is None and size + len(piece) <= limit:
                    yield b"".join((*pieces, piece)) if pieces else piece
                else:
                    yield _Oversized(
                        head if head is not None else _head((*pieces, piece))
                    )
                pieces, size, head, start = [], 0, None, end + 1
            if head is None and start < len(chunk):
                pieces.append(chunk[start:] if start else chunk)
                size += len(chunk) - start
                if size > limit:
                    head, pieces, size = _head(pieces), [], 0
        if head is not None or size > limit:
            yield _Oversized(head if head is not None else _head(pieces))
        elif pieces and (rest := b"".join(pieces)).strip():
            yield rest

    def _may_read(self) -> bool:
        limits = self.limits
        full = self._queued >= limits.max_queued_notifications
        if full or self._queued_bytes >= limits.max_queued_bytes:
            current = self._current
            if current is None or current.awaiting == 0:
                return False  # the notification handler will make room without the peer
        busy = len(self._running) >= limits.max_running_requests
        return not busy or self._awaiting > 0

    async def _receive(self, line: bytes) -> None:
        message = decode(line, self.limits.max_depth)
        if type(message) is Unreadable:
            await self._send_error(message.request_id, message.error)
            return
        if type(message) is not dict:
            await self._refuse(
                None, "Invalid request", {"reason": "a message is a JSON object"}
            )
        elif "method" in message:
            await self._on_call(message, len(line))
        elif "id" in message:
            self._on_answer(message)
        else:
            what = {"reason": "neither a request, a notification nor a response"}
            await self._refuse(None, "Invalid request", what)

    async def _on_call(self, message: dict[str, Any], size: int) -> None:
        method = message["method"]
        valid, request_id = read_id(message.get("id"))
        if not valid:
            reason = "an id is a string, an integer or null"
            await self._refuse(None, "Invalid request", {"reason": reason})
        elif message.get("jsonrpc") != "2.0" or type(method) is not str:
            reason = 'a request has "jsonrpc": "2.0" and a string "method"'
            await self._refuse(request_id, "Invalid request", {"reason": reason})
        elif "id" not in message:
            if method == CANCEL_REQUEST:
                self._cancel(message.get("params"))
            else:
                self._queue_notification(message, size)
        elif request_id in self._running:
            await self._refuse(
                request_id, "Invalid request", {"reason": "the id is in use"}
            )
        elif len(self._running) >= self.limits.max_running_requests:
            limit = {"limit": self.limits.max_running_requests}
            await self._send_error(
                request_id, RequestError(INTERNAL_ERROR, "Too busy", limit)
            )
        else:
            message["id"] = (
                request_id  # as read: the answer carries it in the same form
            )
            task = asyncio.get_running_loop().create_task(
                self._answer(request_id, message)
            )
            self._running[request_id] = _Incoming(task)

    def _queue_notification(self, message: dict[str, Any], size: int) -> None:
        current, limits = self._current, self.limits
        piled_up = self._queued >= 2 * limits.max_queued_notifications
        if current is not None and (
            piled_up or self._queued_bytes >= 2 * limits.max_queued_bytes
        ):
            self._give_up_waiting(current)
        self._inbox.append(_Notification(message, size))
        self._queued += 1
        self._queued_bytes += size
        self._changed.set()

    def _give_up_waiting(self, work: _Work) -> None:
        """Fail the requests of a notification handler while the peer's notifications
        pile up."""
        error = RequestError(
            INTERNAL_ERROR,
            "No answer while the peer's notifications piled up",
            {"queued": self._queued},
        )
        for outgoing in self._pending.values():
            if outgoing.origin is work and not outgoing.answered:
                outgoing.answered = True
                if not outgoing.future.done():
                    outgoing.future.set_exception(error)

    def _on_answer(self, message: dict[str, Any]) -> None:
        valid, response_id = read_id(message["id"])
        outgoing = (
            self._pending.get(response_id)
            if valid and type(response_id) is int
            else None
        )
        if outgoing is None or outgoing.answered:
            if response_id is None and "error" in message:
                _log.warning("the peer reported an error: %.1000r", message["error"])
            else:
                _log.debug(
                    "dropped an answer to no pending request: id %.100r", response_id
                )
            return
        outgoing.answered = True
        origin = outgoing.origin
        waiting_handler = origin is not None and origin.notification and origin.running
        if waiting_handler or (not self._inbox and self._current is None):
            _settle(outgoing, message)
        else:
            self._inbox.append(_Answer(outgoing, message))
            self._changed.set()

    def _cancel(self, params: Any) -> None:
        valid, request_id = read_id(
            params.get("requestId", ...) if type(params) is dict else ...
        )
        incoming = self._running.get(request_id) if valid else None
        if incoming is None:
            _log.debug("cancel of no running request: %.100r", params)
        elif not incoming.answering:
            incoming.task.cancel()

    def _end_of_input(self) -> None:
        self._input_ended = True
        for outgoing in self._pending.values():
            if (
                not outgoing.answered
            ):  # answers already received are still delivered in order
                outgoing.answered = True
                if not outgoing.future.done():
                    error = ConnectionError(
                        "the peer closed the connection before answering"
                    )
                    outgoing.future.set_exception(error)
        for incoming in self._running.values():
            incoming.task.cancel()
        self._changed.set()

    # -- handling
    # -----------------------------------------------------------------------------

    async def _handle_notifications(self) -> None:
        """Deliver notifications and queued answers one at a time, in arrival order."""
        while True:
            while not self._inbox:
                if self._input_ended:
                    return
                self._changed.clear()
                await self._changed.wait()
            item = self._inbox.popleft()
            if isinstance(item, _Answer):
                _settle(item.outgoing, item.message)
                continue
            self._queued -= 1
            self._queued_bytes -= item.size
            work = self._current = _Work(self, notification=True)
            token = _CURRENT.set(work)
            try:
                await self._handler(item.message)
            except Exception:  # noqa: BLE001 - a failing handler never ends the connection
                _log.exception(
                    "handler of notification %.100r failed", item.message.get("method")
                )
            finally:
                _CURRENT.reset(token)
                work.running = False
                self._current = None
                self._changed.set()

    async def _answer(
        self, request_id: str | int | None, message: dict[str, Any]
    ) -> None:
        work = _Work(self, notification=False)
        _CURRENT.set(work)  # this task's own context
        try:
            try:
                response = await self._handler(message)
            except asyncio.CancelledError:
                if self._input_ended or self._closed:
                    raise
                response = _error_message(request_id, RequestError.cancelled())
            except Exception:  # noqa: BLE001 - answered -32603, logged here
                _log.exception("handler of %.100r failed", message.get("method"))
                response = _error_message(request_id, RequestError.internal_error())
            if response is None:
                _log.error(
                    "the handler of request %.100r gave no answer",
                    message.get("method"),
                )
                response = _error_message(request_id, RequestError.internal_error())
            self._running[request_id].answering = True
            await self._send_answer(request_id, response)
        except (ConnectionError, OSError) as error:
            _log.debug("could not answer request %.100r: %s", request_id, error)
        finally:
            work.running = False
            self._running.pop(request_id, None)
            self._changed.set()

    def _await_peer(self, origin: _Work | None, step: int) -> None:
        if origin is not None:
            origin.awaiting += step
            self._awaiting += step
            self._changed.set()

    def _fail_pending(self, error: Exception) -> None:
        for outgoing in self._pending.values():
            outgoing.answered = True
            if not outgoing.future.done():
                outgoing.future.set_exception(error)

    def _in_background(self, work: Awaitable[None]) -> None:
        task = asyncio.ensure_future(work)
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    # -- the writing side
    # ---------------------------------------------------------------------

    async def _send(self, message: dict[str, Any]) -> None:
        """Write one message, once the peer has read what was written before.

        The message is encoded only when its turn comes, so waiting senders hold no
        bytes.
        """
        async with self._write_lock:
            if self._closed:
                raise ConnectionError("the connection is closed")
            await self._writer.drain()
            data = encode(message)
            self._writer.write(data)
        if self._trace is not None:
            self._record("out", data)

    async def _send_answer(
        self, request_id: str | int | None, response: dict[str, Any]
    ) -> None:
        try:
            await self._send(response)
        except (
            TypeError,
            ValueError,
            RecursionError,
        ) as error:  # not JSON: NaN, objects, cycles
            _log.error(
                "the answer to request %.100r is not JSON: %s", request_id, error
            )
            await self._send(_error_message(request_id, RequestError.internal_error()))

    async def _send_error(
        self, request_id: str | int | None, error: RequestError
    ) -> None:
        await self._send(_error_message(request_id, error))

    async def _refuse(
        self, request_id: Any, message: str, data: dict[str, Any]
    ) -> None:
        """Answer -32600 (with the id when it is a valid one)."""
        answer_id = read_id(request_id)[1]
        await self._send_error(answer_id, RequestError(INVALID_REQUEST, message, data))

    def _close_trace(self) -> None:
        if self._owns_trace and self._trace is not None:
            self._trace.close()
        self._trace = None

    def _record(self, direction: str, line: bytes) -> None:
        """One line of the wire trace (a failing trace is logged, never fatal)."""
        assert self._trace is not None
        at = datetime.datetime.now(datetime.UTC).isoformat(timespec="microseconds")
        entry: dict[str, Any] = {"at": at, "direction": direction}
        try:
            entry["message"] = json.loads(line, parse_constant=_refuse_constant)
        except (ValueError, RecursionError):
            entry["raw"] = line[:_ID_WINDOW].decode("utf-8", "replace")
        try:
            self._trace.write(json.dumps(entry, separators=(",", ":")) + "\n")
            self._trace.flush()
        except (OSError, ValueError, RecursionError) as error:
            _log.warning("could not write the wire trace: %s", error)

    async def _send_quietly(self, method: str, params: Any) -> None:
        with contextlib.suppress(Exception):
            await self.notify(method, params)


def _head(pieces: tuple[bytes, ...] | list[bytes]) -> bytes:
    """The first bytes of a line given in pieces (enough to find its id)."""
    taken: list[bytes] = []
    size = 0
    for piece in pieces:
        taken.append(piece[: _ID_WINDOW - size])
        size += len(taken[-1])
        if size >= _ID_WINDOW:
            break
    return b"".join(taken)


def _error_message(request_id: str | int | None, error: RequestError) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "error": error.to_wire()}


def _settle(outgoing: _Outgoing, message: dict[str, Any]) -> None:
    future = outgoing.future
    if future.done():  # the caller stopped waiting
        return
    has_result, has_error = "result" in message, "error" in message
    if message.get("jsonrpc") != "2.0" or has_result == has_error:
        reason = 'a response has "jsonrpc": "2.0" and either "result" or "error"'
        future.set_exception(
            RequestError(INTERNAL_ERROR, "Malformed response", {"reason": reason})
        )
    elif has_error:
        future.set_exception(RequestError.from_wire(message["error"]))
    else:
        future.set_result(message["result"])


@dataclass(frozen=True, slots=True)
class Unreadable:
    """A line that is not read: the error it is answered with, and the id when it is
    known."""

    request_id: Any
    error: RequestError


def decode(line: bytes, max_depth: int = 512) -> Any:
    """The JSON value a line holds, or :class:`Unreadable` (-32700, or -32600 when too
    deep).

    pydantic-core's JSON reader decodes (fast, and it refuses nesting beyond
    ``_FAST_DEPTH`` without recursing into it); what it refuses is read again by the
    standard library's, which also reads lone surrogates, after an exact depth check
    that never recurses either.
    """
    if max_depth >= _FAST_DEPTH or not too_deep(line, max_depth):
        try:
            return from_json(line, allow_inf_nan=False)
        except ValueError:
            pass
    if too_deep(line, max_depth):
        head = line[:_ID_WINDOW]
        refusal = RequestError(
            INVALID_REQUEST, "Nesting too deep", {"limit": max_depth}
        )
        return Unreadable(read_id(find_id(head))[1], refusal)
    try:
        return json.loads(line, parse_constant=_refuse_constant)
    except (ValueError, RecursionError):  # UnicodeDecodeError is a ValueError
        return Unreadable(None, RequestError(PARSE_ERROR, "Parse error"))


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


_JSON = json.JSONEncoder(
    ensure_ascii=False, allow_nan=False, separators=(",", ":")
).encode
_ASCII_JSON = json.JSONEncoder(allow_nan=False, separators=(",", ":")).encode


def encode(message: dict[str, Any]) -> bytes:
    """One line of JSON; raises on what JSON cannot hold (NaN, infinities, other
    objects).

    Members that are already JSON (:class:`Encoded`: params and results serialised by
    pydantic-core) are spliced in as they are.
    """
    return (
        b"{"
        + b",".join([_member(key, value) for key, value in message.items()])
        + b"}\n"
    )


def _member(key: str, value: Any) -> bytes:
    """``"key":value`` of an envelope, its common parts written without the JSON
    encoder."""
    head = _MEMBERS.get(key) or _dumps(key) + b":"
    if type(value) is Encoded:
        return head + value
    if type(value) is int:  # an id
        return head + str(value).encode()
    if type(value) is str:  # a method, an id, "2.0"
        try:
            return head + _string(value).encode()
        except UnicodeEncodeError:
            pass
    return head + _dumps(value)


_string = json.encoder.encode_basestring
_MEMBERS = {
    key: f'"{key}":'.encode()
    for key in ("jsonrpc", "id", "method", "params", "result", "error")
}


def _dumps(value: Any) -> bytes:
    try:
        return _JSON(value).encode()
    except (
        UnicodeEncodeError
    ):  # a lone surrogate: written escaped, as it may have come in
        return _ASCII_JSON(value).encode()


_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"', re.DOTALL)
_TOKEN = re.compile(rb'"(?:[^"\\]|\\.)*"|[][{},:]', re.DOTALL)
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")
_OPENING = frozenset(b"[{")


def too_deep(line: bytes, limit: int) -> bool:
    """Whether arrays and objects nest deeper than ``limit`` (in linear time, without
    parsing)."""
    if line.count(b"[") + line.count(b"{") <= limit:
        return False
    depth = 0
    for byte in _STRING.sub(b"", line).translate(None, _NOT_BRACKETS):
        if byte in _OPENING:
            depth += 1
            if depth > limit:
                return True
        else:
            depth -= 1
    return False


def find_id(data: bytes) -> Any:
    """The top-level ``"id"`` of a JSON object, read from its text (which may be cut
    short).

    Used for messages that are not parsed (too long, too deep) so that the refusal can
    name the request; ``None`` when no valid id can be read.
    """
    depth, key_next = 0, False
    for match in _TOKEN.finditer(data):
        token = match.group()
        if token in (b"{", b"["):
            depth += 1
            key_next = depth == 1 and token == b"{"
        elif token in (b"}", b"]"):
            depth -= 1
        elif token == b",":
            key_next = depth == 1
        elif token != b":" and key_next:
            key_next = False
            if token == b'"id"':
                return _id_after(data, match.end())
    return None


def _id_after(data: bytes, position: int) -> Any:
    text = data[position : position + 4096].decode("utf-8", "replace").lstrip()
    if not text.startswith(":"):
        return None
    try:
        value, _ = json.JSONDecoder().raw_decode(text[1:].lstrip())
    except ValueError:
        return None
    return read_id(value)[1]
