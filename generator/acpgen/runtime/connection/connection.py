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
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import itertools
import logging
from collections.abc import Awaitable, Callable
from types import MethodType, TracebackType
from typing import Any, Self

from ..wire.codec import (
    Unreadable,
    encode,
    encode_call,
    encode_model_notification,
    encode_model_result,
    encode_result,
    find_id,
)
from ..wire.messages import read_message
from ..wire.rpc import (
    INTERNAL_ERROR,
    INVALID_REQUEST,
    Deferred,
    Json,
    RequestError,
    read_id,
)
from . import in_flight
from .dispatcher import Dispatcher
from .in_flight import (
    CURRENT,
    Answer,
    Handling,
    Incoming,
    Notification,
    Outgoing,
    error_message,
    settle,
    start_task,
)
from .limits import Limits
from .trace_writer import Trace, TraceWriter
from .transport import Oversized, Transport

__all__ = ["CANCEL_REQUEST", "Connection", "Handler"]

_log = logging.getLogger(__name__)

Handler = Callable[[dict[str, Any]], Awaitable[dict[str, Any] | None]]
"""Answers a request with a response message, or handles a notification and returns
None."""

CANCEL_REQUEST = "$/cancel_request"


class Connection:
    """Both ends of a JSON-RPC conversation: sends requests to the peer and answers the
    peer's.

    ``transport`` moves the messages (``LineTransport(reader, writer)`` over a pipe or
    a socket); ``handler`` is usually ``Dispatcher(my_handler, methods).dispatch``.
    Serve with ``await connection.run()`` (until the peer closes its end), or
    ``async with connection:`` (reading in the background until the block ends). Given
    ``trace`` (a text file, or a path to append to), every message in and out is written
    to it as one JSON line (see ``trace_writer``).
    """

    def __init__(
        self,
        transport: Transport,
        handler: Handler,
        *,
        limits: Limits | None = None,
        trace: Trace = None,
    ) -> None:
        self.transport = transport
        self._trace = TraceWriter(trace) if trace is not None else None
        self._handler = handler
        self.limits = limits or Limits()
        self._ids = itertools.count(1)
        self._pending: dict[int, Outgoing] = {}
        self._running: dict[str | int | None, Incoming] = {}
        self._inbox: collections.deque[Notification | Answer] = collections.deque()
        self._queued = 0
        self._queued_bytes = 0
        self._current: Handling | None = None
        """The notification being handled."""
        self._requests = Handling(self, notification=False)
        """What :data:`CURRENT` names in the handlers of the peer's requests and in the
        tasks they start (set once, in :meth:`_serve`'s task)."""
        self._awaiting = 0
        """Our requests, sent by handlers of peer messages (or tasks they started), that
        await their answer."""
        self._queued_or_ended = asyncio.Event()
        """Set when a message waits for the notification worker, or the input ends."""
        self._worker_waits = False
        """The notification worker waits for :attr:`_queued_or_ended` (a notification
        queued sets it only then: the worker looks at the queue itself before it
        waits)."""
        self._room = asyncio.Event()
        """Set when a handler ends or awaits the peer: reading may go on."""
        self._reader_waits = False
        """The reading waits for :attr:`_room` (a request's handler that ends sets it
        only then: the reading looks for room itself before it waits)."""
        self._write_lock = asyncio.Lock()
        self._writers = 0
        """Writers holding the write lock or waiting for it."""
        self._send_now: Callable[[bytes], None] | None = getattr(
            transport, "send_now", None
        )
        self._can_send_now: Callable[[], bool] | None = (
            getattr(transport, "can_send_now", None)
            if self._send_now is not None
            else None
        )
        """The transport's optional way to write without awaiting (see
        :meth:`_wrote`)."""
        self._background: set[asyncio.Task[None]] = set()
        self._loop: asyncio.AbstractEventLoop | None = None
        """The loop the connection was started on (asked once: on Python 3.11 each
        ``asyncio.get_running_loop()`` is a system call)."""
        owner = (
            handler.__self__
            if isinstance(handler, MethodType)
            and handler.__func__ is Dispatcher.dispatch
            else None
        )
        self._dispatcher: Dispatcher | None = (
            owner if isinstance(owner, Dispatcher) else None
        )
        """The handler's dispatcher when the handler is ``Dispatcher.dispatch``: a
        request of its table is then handled in its own task without ``dispatch``'s
        coroutine (:meth:`_answer`), and answered alike."""
        self._task: asyncio.Task[None] | None = None
        self._input_ended = False
        self._closed = False

    # -- public API
    # ---------------------------------------------------------------------------

    async def request(
        self,
        method: str,
        params: Any = None,
        *,
        read: Callable[[Any], Any] | None = None,
    ) -> Any:
        """Send a request and wait for its result; an error answer raises
        :class:`RequestError`. Given ``read`` (a typed sender's validator of the result
        model), the result is what ``read`` makes of it (of ``{}`` for a null result)
        and raises what ``read`` raises.

        Raises :class:`ConnectionError` when the connection is closed or the peer's
        input ends before the answer (or what the transport's ``failure()`` gives: a
        resuming transport that gave up, the -32060 that says to ``session/load``);
        ``ValueError``/``TypeError`` when ``params`` is not JSON (NaN too).
        """
        if self._closed or self._input_ended:
            raise self._ended()
        request_id = next(self._ids)
        work = CURRENT.get()
        origin = (
            work
            if work is not None and work.connection is self and work.running
            else None
        )
        loop = self._loop or asyncio.get_running_loop()
        outgoing = Outgoing(loop.create_future(), origin)
        self._pending[request_id] = outgoing
        if origin is not None:
            self._await_peer(origin, 1)
        try:
            if not self._wrote(encode_call, request_id, method, params):
                await self._write_in_turn(encode_call, request_id, method, params)
            result = await outgoing.future
        except asyncio.CancelledError:
            if not outgoing.answered and not self._closed:
                self._in_background(
                    self._send_quietly(CANCEL_REQUEST, {"requestId": request_id})
                )
            raise
        finally:
            del self._pending[request_id]
            if origin is not None:
                self._await_peer(origin, -1)
            # an error raised here holds this frame in its traceback, and the future
            # holds the error: without this frame's hold on the future, no cycle
            del outgoing
        if read is None:
            return result
        return read({} if result is None else result)

    async def notify(self, method: str, params: Any = None) -> None:
        """Send a notification (waits while the peer is not reading)."""
        if not self._wrote(encode_call, None, method, params):
            await self._write_in_turn(encode_call, None, method, params)

    def notified_at_once(
        self, method: str, params: Any = None, serializer: Any = None
    ) -> bool:
        """Send a notification at once, where :meth:`notify` would without waiting;
        False: nothing was sent, await :meth:`notify` (for a typed sender, which then
        has no coroutine of the connection's to await). Raises as :meth:`notify` does
        for params that are not JSON.

        With ``serializer`` (a pydantic-core serializer), ``params`` is the model it
        writes, as ``Deferred(serializer, params)`` would be written."""
        if serializer is None:
            return self._wrote(encode_call, None, method, params)
        return self._wrote(encode_model_notification, method, serializer, params)

    def start(self) -> None:
        """Start reading and handling the peer's messages in the background
        (idempotent)."""
        if self._task is None and not self._closed:
            loop = self._loop = asyncio.get_running_loop()
            self._task = loop.create_task(self._serve())

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

    # -- the reading side
    # ---------------------------------------------------------------------

    async def _serve(self) -> None:
        # this task's own context, which every request's handler task copies
        token = CURRENT.set(self._requests)
        worker = asyncio.get_running_loop().create_task(self._handle_notifications())
        try:
            await self._read_messages()
            self._end_of_input()
            await asyncio.wait({worker})
        except (ConnectionError, OSError) as error:
            _log.debug("reading stopped: %s", error)
        finally:
            self._input_ended = True
            self._fail_pending(self._lost())
            tasks = [
                worker,
                *(i.task for i in self._running.values()),
                *self._background,
            ]
            for task in tasks:
                task.cancel()
            try:
                await asyncio.wait(tasks)
            finally:
                self._requests.running = False
                # no cycle through this task's context; a coroutine closed outside its
                # task (its loop gone) runs this in another context, which has no token
                with contextlib.suppress(ValueError):
                    CURRENT.reset(token)
            self._close_trace()

    async def _read_messages(self) -> None:
        limits = self.limits
        most, depth = limits.max_message_bytes, limits.max_depth
        most_queued, most_queued_bytes = (
            limits.max_queued_notifications,
            limits.max_queued_bytes,
        )
        most_running, running = limits.max_running_requests, self._running
        transport, trace = self.transport, self._trace
        # the transport's optional way to give a message already read without awaiting
        received: Callable[[], bytes | Oversized | None] | None = getattr(
            transport, "received", None
        )
        while True:
            line = received() if received is not None else None
            if line is None and (line := await transport.receive(most)) is None:
                break
            while (  # below every limit, _may_read is True: asked only at one
                self._queued >= most_queued
                or self._queued_bytes >= most_queued_bytes
                or len(running) >= most_running
            ) and not self._may_read():
                self._room.clear()
                if self._may_read():
                    break
                self._reader_waits = True
                try:
                    await self._room.wait()
                finally:
                    self._reader_waits = False
            try:
                if isinstance(line, Oversized):
                    if trace is not None:
                        trace.record("in", line.head)
                    limit = {"limit": self.limits.max_message_bytes}
                    await self._refuse(find_id(line.head), "Message too large", limit)
                    continue
                if trace is not None:
                    trace.record("in", line)
                if line and not line.isspace():  # (no copy of the line)
                    # routed here (no call more per message); the common messages are
                    # handled without awaiting
                    message = read_message(line, depth)
                    if isinstance(message, Unreadable):
                        await self._send_error(message.request_id, message.error)
                    elif "method" not in message:
                        self._on_answer(message)
                    elif "id" in message:
                        refusal = self._on_request(message)
                        if refusal is not None:
                            await refusal
                    elif message["method"] == CANCEL_REQUEST:
                        self._cancel(message.get("params"))
                    else:
                        self._queue_notification(message, len(line))
            except (ConnectionError, OSError) as error:
                _log.debug("could not answer the peer: %s", error)
            except Exception:  # noqa: BLE001 - one message never ends the conversation
                _log.exception("a message from the peer could not be handled")

    def _may_read(self) -> bool:
        limits = self.limits
        full = self._queued >= limits.max_queued_notifications
        if full or self._queued_bytes >= limits.max_queued_bytes:
            current = self._current
            if current is None or current.awaiting == 0:
                return False  # the notification handler will make room without the peer
        busy = len(self._running) >= limits.max_running_requests
        return not busy or self._awaiting > 0

    def _on_request(self, message: dict[str, Any]) -> Awaitable[None] | None:
        """Start the request's handler; the refusal to await if it is refused."""
        request_id = message["id"]
        running = self._running
        if request_id in running:
            reason = {"reason": "the id is in use"}
            return self._refuse(request_id, "Invalid request", reason)
        if len(running) >= self.limits.max_running_requests:
            limit = {"limit": self.limits.max_running_requests}
            return self._send_error(
                request_id, RequestError(INTERNAL_ERROR, "Too busy", limit)
            )
        incoming = running[request_id] = Incoming()
        answering, loop = self._answer(incoming, request_id, message), self._loop
        if in_flight.EAGER is None and loop is not None:
            # no eager start (Python 3.11): start_task's task, without its call
            incoming.task = loop.create_task(answering)
        else:  # started at once where that cannot overtake a notification read first
            incoming.task = start_task(answering, eager=not self._inbox, loop=loop)
        return None

    def _queue_notification(self, message: dict[str, Any], size: int) -> None:
        current = self._current
        if current is not None:  # a handler that awaits: does it wait too long?
            limits = self.limits
            piled_up = self._queued >= 2 * limits.max_queued_notifications
            if piled_up or self._queued_bytes >= 2 * limits.max_queued_bytes:
                self._give_up_waiting(current)
        self._inbox.append(Notification(self, message, size))
        self._queued += 1
        self._queued_bytes += size
        if self._worker_waits:
            self._queued_or_ended.set()

    def _give_up_waiting(self, work: Handling) -> None:
        """Fail the requests of a notification handler while the peer's notifications
        pile up."""
        error = RequestError(
            INTERNAL_ERROR,
            "No answer while the peer's notifications piled up",
            {"queued": self._queued},
        )
        for outgoing in self._pending.values():
            if outgoing.origin is work and not outgoing.answered:
                outgoing.fail(error)

    def _on_answer(self, message: dict[str, Any]) -> None:
        response_id = message["id"]
        # the common id (an integer, as we sent it) found without read_id: our ids are
        # 64-bit integers, so what is found is what read_id would have found
        outgoing = self._pending.get(response_id) if type(response_id) is int else None
        if outgoing is None:
            valid, response_id = read_id(response_id)
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
            settle(outgoing, message)
        else:
            self._inbox.append(Answer(outgoing, message))
            self._queued_or_ended.set()

    def _cancel(self, params: Json) -> None:
        valid, request_id = read_id(
            params.get("requestId", ...) if type(params) is dict else ...
        )
        incoming = self._running.get(request_id) if valid else None
        if incoming is None:
            _log.debug("cancel of no running request: %.100r", params)
        elif not incoming.started:
            incoming.cancelled = (
                True  # cancelling a task not yet begun would skip its answer
            )
        elif not incoming.answering:
            incoming.task.cancel()

    def _end_of_input(self) -> None:
        self._input_ended = True
        for outgoing in self._pending.values():
            if not outgoing.answered:  # answers received are still delivered in order
                outgoing.fail(self._lost())
        for incoming in self._running.values():
            incoming.task.cancel()
        self._queued_or_ended.set()

    # -- handling
    # -----------------------------------------------------------------------------

    async def _handle_notifications(self) -> None:
        """Deliver notifications and queued answers one at a time, in arrival order."""
        inbox, dispatcher = self._inbox, self._dispatcher
        prepare = dispatcher.prepare_notification if dispatcher is not None else None
        while True:
            while not inbox:
                if self._input_ended:
                    return
                self._queued_or_ended.clear()
                self._worker_waits = True
                try:
                    await self._queued_or_ended.wait()
                finally:
                    self._worker_waits = False
            item = inbox.popleft()
            if isinstance(item, Answer):
                settle(item.outgoing, item.message)
                continue
            self._queued -= 1
            self._queued_bytes -= item.size
            work = self._current = item  # its handler's record, now running
            token = CURRENT.set(work)
            general = prepare is None
            try:
                handled = None if prepare is None else prepare(item.message)
                if handled is None:
                    general = True  # the handler handles it by itself
                    await self._handler(item.message)
                else:  # as dispatch() handles it, without its coroutine
                    await handled
            except Exception as error:  # noqa: BLE001 - never ends the connection
                method = item.message.get("method")
                if not general and dispatcher is not None:  # as dispatch() logs it
                    dispatcher.notification_failed(method, error)
                else:
                    _log.exception("handler of notification %.100r failed", method)
            finally:
                CURRENT.reset(token)
                work.running = False
                self._current = None
                if self._reader_waits:
                    self._room.set()

    async def _answer(
        self,
        incoming: Incoming,
        request_id: str | int | None,
        message: dict[str, Any],
    ) -> None:
        incoming.started = True
        dispatcher = self._dispatcher
        try:
            try:
                if incoming.cancelled:
                    raise asyncio.CancelledError
                prepared = (
                    dispatcher.prepare(message) if dispatcher is not None else None
                )
                if prepared is None:
                    dispatcher = None  # the handler answers by itself
                    response = await self._handler(message)
                else:  # as dispatch() answers it, without its coroutine
                    handled, route = prepared
                    value = await handled
                    if type(value) is not route.result_class:  # (checked: unchanged)
                        value = route.checked(value)
                    incoming.answering = True
                    serializer, warnings = route.serializer, route.warnings
                    try:  # at once where it can be (_wrote_answer, without its call)
                        if self._wrote(
                            encode_model_result, request_id, serializer, value, warnings
                        ):
                            return
                    except (TypeError, ValueError, RecursionError):
                        pass  # not JSON: _send_answer encodes it again, answers -32603
                    result = Deferred(serializer, value, warnings)
                    response = {"jsonrpc": "2.0", "id": request_id, "result": result}
            except asyncio.CancelledError:
                if self._input_ended or self._closed:
                    raise
                response = error_message(request_id, RequestError.cancelled())
            except Exception as error:  # noqa: BLE001 - answered -32603, logged
                method = message.get("method")
                if dispatcher is not None:  # what dispatch() answers
                    response = dispatcher.error_answer(request_id, method, error)
                else:
                    _log.exception("handler of %.100r failed", method)
                    response = error_message(request_id, RequestError.internal_error())
            if response is None:
                _log.error(
                    "the handler of request %.100r gave no answer",
                    message.get("method"),
                )
                response = error_message(request_id, RequestError.internal_error())
            incoming.answering = True
            if not self._answered_at_once(response):
                await self._send_answer(request_id, response)
        except (ConnectionError, OSError) as error:
            _log.debug("could not answer request %.100r: %s", request_id, error)
        finally:
            self._running.pop(request_id, None)
            if self._reader_waits:
                self._room.set()

    def _await_peer(self, origin: Handling | None, step: int) -> None:
        if origin is not None:
            origin.awaiting += step
            self._awaiting += step
            self._room.set()

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

    def _fail_pending(self, error: Exception) -> None:
        for outgoing in self._pending.values():
            outgoing.fail(error)

    def _in_background(self, work: Awaitable[None]) -> None:
        task = asyncio.ensure_future(work)
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    # -- the writing side
    # ---------------------------------------------------------------------

    async def _send(self, message: dict[str, Any]) -> None:
        """Write one message, once the peer has read what was written before."""
        await self._write(encode, message)

    async def _write(self, encoder: Callable[..., bytes], *message: Any) -> None:
        """Write the message ``encoder(*message)`` gives, once the peer has read what
        was written before.

        The message is encoded only when its turn comes, so waiting senders hold no
        bytes.
        """
        if not self._wrote(encoder, *message):
            await self._write_in_turn(encoder, *message)

    def _wrote(self, encoder: Callable[..., bytes], *message: Any) -> bool:
        """Write the message at once, without awaiting, where nothing can come between:
        no writer holds or awaits the write lock and the transport takes a message now
        (its optional ``can_send_now`` and ``send_now``: ``LineTransport``'s, when
        nothing waits in the stream's buffer). False: nothing was encoded or written;
        :meth:`_write_in_turn` writes it."""
        if self._writers or self._closed:
            return False
        can_send_now = self._can_send_now
        if can_send_now is None or not can_send_now():
            return False
        data = encoder(*message)
        self._send_now(data)  # type: ignore[misc] # (given with can_send_now)
        if self._trace is not None:
            self._trace.record("out", data)
        return True

    async def _write_in_turn(
        self, encoder: Callable[..., bytes], *message: Any
    ) -> None:
        """Write the message under the write lock, once the transport is ready."""
        lock = self._write_lock
        self._writers += 1
        try:
            await lock.acquire()  # as ``async with``, without its two coroutines
            try:
                if self._closed:
                    raise ConnectionError("the connection is closed")
                await self.transport.ready()
                data = encoder(*message)
                try:
                    await self.transport.send(data)
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

    def _answered_at_once(self, response: Json) -> bool:
        """Write the common answer (a result, as :func:`_is_result` reads it) at once
        where :meth:`_wrote` can; False: nothing was written."""
        if (
            type(response) is dict
            and len(response) == 3
            and "result" in response
            and response.get("jsonrpc") == "2.0"
            and "id" in response
        ):
            return self._wrote_answer(encode_result, response["id"], response["result"])
        return False

    def _wrote_answer(self, encoder: Callable[..., bytes], *message: Any) -> bool:
        """:meth:`_wrote` for an answer; False also for a result that is not JSON,
        which is left to :meth:`_send_answer` (it encodes it again and answers -32603).
        """
        try:
            return self._wrote(encoder, *message)
        except (TypeError, ValueError, RecursionError):
            return False

    async def _send_answer(
        self, request_id: str | int | None, response: dict[str, Any]
    ) -> None:
        try:
            if _is_result(response):  # the common answer, written in one step
                await self._write(encode_result, response["id"], response["result"])
            else:
                await self._send(response)
        except (TypeError, ValueError, RecursionError) as error:  # NaN, objects, cycles
            _log.error("the answer to %.100r is not JSON: %s", request_id, error)
            await self._send_error(request_id, RequestError.internal_error())

    async def _send_error(
        self, request_id: str | int | None, error: RequestError
    ) -> None:
        await self._send(error_message(request_id, error))

    async def _refuse(
        self, request_id: Any, message: str, data: dict[str, Any]
    ) -> None:
        """Answer -32600 (with the id when it is a valid one)."""
        answer_id = read_id(request_id)[1]
        await self._send_error(answer_id, RequestError(INVALID_REQUEST, message, data))

    def _close_trace(self) -> None:
        if self._trace is not None:
            self._trace.close()

    async def _send_quietly(self, method: str, params: Any) -> None:
        with contextlib.suppress(Exception):
            await self.notify(method, params)


def _is_result(response: Json) -> bool:
    """Whether ``response`` is ``{"jsonrpc": "2.0", "id": ..., "result": ...}`` (in any
    order), the answer :func:`encode_result` writes in one step."""
    return (
        type(response) is dict
        and len(response) == 3
        and "result" in response
        and response.get("jsonrpc") == "2.0"
        and "id" in response
    )
