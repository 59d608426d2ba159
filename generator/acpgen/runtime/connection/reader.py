"""Reading a connection's peer: its messages read, bounded, ordered and handed to the
handler, the answers to its requests written.

Support code: it knows no method of the protocol. The :class:`Reader` reads one message
at a time from the transport (``wire.messages.read_message``), refuses what is no
message, and routes the rest: an answer to one of our requests to its caller, in order
behind the notifications read before it; a request to its handler, in a task of its
own; a notification to the one worker that handles them one at a time, in arrival
order. What a handler does is the entry point's (``dispatch``); writing is the writer's
(``writer``). Reading pauses while the handlers are behind (``Limits``), except while a
handler, or a task it started, awaits the peer's answer.
"""

from __future__ import annotations

import asyncio
import collections
from collections.abc import Awaitable, Callable
from typing import Any

from ..wire.codec import Unreadable, find_id
from ..wire.messages import read_message
from ..wire.rpc import INTERNAL_ERROR, INVALID_REQUEST, Json, RequestError, read_id
from . import in_flight
from .dispatch import Handled, Pending
from .in_flight import (
    Answer,
    Calls,
    Handling,
    Incoming,
    Notification,
    settle,
    start_task,
)
from .limits import Limits
from .log_ids import logger
from .replies import ErrorReply, Reply
from .trace_writer import TraceWriter
from .transport import Oversized, Transport
from .writer import Writer

__all__ = ["CANCEL_REQUEST", "Reader"]

_log = logger(__name__)

CANCEL_REQUEST = "$/cancel_request"


class Reader:
    """The reading side of ``owner``'s connection (the owner is what
    :data:`~.in_flight.CURRENT` names as a handler's connection)."""

    def __init__(
        self,
        owner: object,
        transport: Transport,
        handle: Callable[[dict[str, Any]], Handled],
        writer: Writer,
        calls: Calls,
        limits: Limits,
        trace: TraceWriter | None,
        lost: Callable[[], ConnectionError],
    ) -> None:
        self._owner = owner
        self._transport = transport
        self._handle = handle
        self._writer = writer
        self._calls = calls
        self._limits = limits
        self._trace = trace
        self._lost = lost
        """What our requests waiting for their answer fail with when the input ends."""
        self.running: dict[Any, Incoming] = {}
        """The peer's requests being handled, by id."""
        self._inbox: collections.deque[Notification | Answer] = collections.deque()
        self._queued = 0
        self._queued_bytes = 0
        self.current: Handling | None = None
        """The notification being handled."""
        self.requests = Handling(owner, notification=False)
        """What :data:`~.in_flight.CURRENT` names in the handlers of the peer's requests
        and in the tasks they start (set once, in the reading task)."""
        self._queued_or_ended = asyncio.Event()
        """Set when a message waits for the notification worker, or the input ends."""
        self._worker_waits = False
        """The notification worker waits for :attr:`_queued_or_ended` (a notification
        queued sets it only then: the worker looks at the queue itself before it
        waits)."""
        self.room = asyncio.Event()
        """Set when a handler ends or awaits the peer: reading may go on."""
        self._reader_waits = False
        """The reading waits for :attr:`room` (a request's handler that ends sets it
        only then: the reading looks for room itself before it waits)."""
        self.input_ended = False
        self.loop: asyncio.AbstractEventLoop | None = None
        """The loop the connection runs on (asked once: on Python 3.11 each
        ``asyncio.get_running_loop()`` is a system call)."""

    # -- reading

    async def read(self) -> None:
        """Read and route the peer's messages until its input ends."""
        limits, running, trace = self._limits, self.running, self._trace
        most, depth = limits.max_message_bytes, limits.max_depth
        most_queued, most_queued_bytes = (
            limits.max_queued_notifications,
            limits.max_queued_bytes,
        )
        most_running, transport = limits.max_running_requests, self._transport
        # the transport's optional way to give a message already read without awaiting
        received: Callable[[], bytes | Oversized | None] | None = getattr(
            transport, "received", None
        )
        while True:
            line = received() if received is not None else None
            if line is None and (line := await transport.receive(most)) is None:
                break
            if (  # below every limit, may_read is True: asked only at one
                self._queued >= most_queued
                or self._queued_bytes >= most_queued_bytes
                or len(running) >= most_running
            ):
                await self._room_to_read()
            try:
                if isinstance(line, Oversized):
                    if trace is not None:
                        trace.record("in", line.head)
                    limit = {"limit": most}
                    await self._refuse(find_id(line.head), "Message too large", limit)
                    continue
                if trace is not None:
                    trace.record("in", line)
                if line and not line.isspace():  # (no copy of the line)
                    # routed here (no call more per message); the common messages are
                    # handled without awaiting
                    message = read_message(line, depth)
                    if isinstance(message, Unreadable):
                        await self._answer_now(
                            ErrorReply(message.request_id, message.error)
                        )
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

    async def _room_to_read(self) -> None:
        """Wait while the handlers are behind and none awaits the peer."""
        while not self._may_read():
            self.room.clear()
            if self._may_read():
                break
            self._reader_waits = True
            try:
                await self.room.wait()
            finally:
                self._reader_waits = False

    def _may_read(self) -> bool:
        limits = self._limits
        full = self._queued >= limits.max_queued_notifications
        if full or self._queued_bytes >= limits.max_queued_bytes:
            current = self.current
            if current is None or current.awaiting == 0:
                return False  # the notification handler will make room without the peer
        busy = len(self.running) >= limits.max_running_requests
        return not busy or self._calls.awaiting > 0

    def _on_request(self, message: dict[str, Any]) -> Awaitable[None] | None:
        """Start the request's handler; the refusal to await if it is refused."""
        request_id = message["id"]
        running = self.running
        if request_id in running:
            reason = {"reason": "the id is in use"}
            return self._refuse(request_id, "Invalid request", reason)
        if len(running) >= self._limits.max_running_requests:
            busy = {"limit": self._limits.max_running_requests}
            refusal = RequestError(INTERNAL_ERROR, "Too busy", busy)
            return self._answer_now(ErrorReply(request_id, refusal))
        incoming = running[request_id] = Incoming(message)
        answering, loop = self._answer(incoming, request_id, message), self.loop
        if in_flight.EAGER is None and loop is not None:
            # no eager start (Python 3.11): start_task's task, without its call
            incoming.task = loop.create_task(answering)
        else:  # started at once where that cannot overtake a notification read first
            incoming.task = start_task(answering, eager=not self._inbox, loop=loop)
        return None

    def _queue_notification(self, message: dict[str, Any], size: int) -> None:
        current = self.current
        if current is not None:  # a handler that awaits: does it wait too long?
            limits = self._limits
            piled_up = self._queued >= 2 * limits.max_queued_notifications
            if piled_up or self._queued_bytes >= 2 * limits.max_queued_bytes:
                # its requests fail rather than wait forever
                error = RequestError(
                    INTERNAL_ERROR,
                    "No answer while the peer's notifications piled up",
                    {"queued": self._queued},
                )
                self._calls.fail(error, origin=current)
        self._inbox.append(Notification(self._owner, message, size))
        self._queued += 1
        self._queued_bytes += size
        if self._worker_waits:
            self._queued_or_ended.set()

    def _on_answer(self, message: dict[str, Any]) -> None:
        outgoing = self._calls.answered(message["id"])
        if outgoing is None:
            if message["id"] is None and "error" in message:
                _log.warning("the peer reported an error: %.1000r", message["error"])
            else:
                response_id = message["id"]
                _log.debug(
                    "dropped an answer to no pending request: id %.100r", response_id
                )
            return
        outgoing.answered = True
        origin = outgoing.origin
        waiting_handler = origin is not None and origin.notification and origin.running
        if waiting_handler or (not self._inbox and self.current is None):
            settle(outgoing, message)
        else:
            self._inbox.append(Answer(outgoing, message))
            self._queued_or_ended.set()

    def _cancel(self, params: Json) -> None:
        valid, request_id = read_id(
            params.get("requestId", ...) if type(params) is dict else ...
        )
        incoming = self.running.get(request_id) if valid else None
        if incoming is None:
            _log.debug("cancel of no running request: %.100r", params)
        elif not incoming.started:
            incoming.cancelled = (
                True  # cancelling a task not yet begun skips its answer
            )
        elif not incoming.answering:
            incoming.task.cancel()

    def end_of_input(self) -> None:
        """The peer's input ended: our requests not answered fail, the handlers of its
        requests are cancelled, the notifications received are still handled."""
        self.input_ended = True
        self._calls.fail(self._lost())
        for incoming in self.running.values():
            incoming.task.cancel()
        self._queued_or_ended.set()

    # -- handling

    async def handle_notifications(self) -> None:
        """Deliver notifications and queued answers one at a time, in arrival order."""
        inbox, handle = self._inbox, self._handle
        while True:
            while not inbox:
                if self.input_ended:
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
            work = self.current = item  # its handler's record, now running
            token = in_flight.CURRENT.set(work)
            try:
                handled = handle(item.message)
                if isinstance(handled, Pending):
                    try:
                        handled.answered(await handled.awaitable)
                    except Exception as error:  # noqa: BLE001 - never ends the connection
                        handled.failed(error)  # (logged)
            finally:
                in_flight.CURRENT.reset(token)
                work.running = False
                self.current = None
                if self._reader_waits:
                    self.room.set()

    async def _answer(
        self,
        incoming: Incoming,
        request_id: Any,
        message: dict[str, Any],
    ) -> None:
        """Handle a peer request and write its answer (the task of the request)."""
        incoming.started = True
        writer = self._writer
        try:
            try:
                if incoming.cancelled:
                    raise asyncio.CancelledError
                handled = self._handle(message)
                if isinstance(handled, Pending):
                    try:
                        value = await handled.awaitable
                        incoming.answering = True
                        reply = handled.answered(value)
                    except Exception as error:  # noqa: BLE001 - answered (-32603 logged)
                        reply = handled.failed(error)
                else:
                    reply = handled
            except asyncio.CancelledError:
                if self.input_ended or writer.closed:
                    raise
                reply = ErrorReply(request_id, RequestError.cancelled())
            if reply is None:
                reply = _no_answer(request_id, message)
            incoming.answering = True
            try:  # writer.reply_now, without its call
                written = writer.now(reply.encode)
            except (TypeError, ValueError, RecursionError):
                written = False  # not JSON: writer.reply answers -32603
            if not written:
                await writer.reply(reply)
        except (ConnectionError, OSError) as error:
            _log.debug("could not answer request %.100r: %s", request_id, error)
        finally:
            self.running.pop(request_id, None)
            if self._reader_waits:
                self.room.set()

    # -- refusals

    async def _answer_now(self, reply: Reply) -> None:
        if not self._writer.reply_now(reply):
            await self._writer.reply(reply)

    async def _refuse(
        self, request_id: Any, message: str, data: dict[str, Any]
    ) -> None:
        """Answer -32600 (with the id when it is a valid one)."""
        answer_id = read_id(request_id)[1]
        refusal = RequestError(INVALID_REQUEST, message, data)
        await self._answer_now(ErrorReply(answer_id, refusal))


def _no_answer(request_id: Any, message: dict[str, Any]) -> Reply:
    _log.error("the handler of request %.100r gave no answer", message.get("method"))
    return ErrorReply(request_id, RequestError.internal_error())
