"""The bookkeeping of one connection's messages in flight: peer messages being handled,
our requests awaiting their answer, and what waits in arrival order.

Support code for ``connection.Connection``: it knows no method of the protocol.
"""

from __future__ import annotations

import asyncio
import contextvars
import itertools
from collections.abc import Callable, Coroutine
from typing import Any

from ..wire.rpc import INTERNAL_ERROR, RequestError, read_id

__all__ = [
    "CURRENT",
    "EAGER",
    "Answer",
    "Calls",
    "Handling",
    "Incoming",
    "Notification",
    "Outgoing",
    "settle",
    "start_task",
]


class Handling:
    """What :data:`CURRENT` names while a handler runs: a peer notification being
    handled (one record each), or a connection's peer requests (one record for all of
    them), and how many of our requests made there await their answer."""

    __slots__ = ("awaiting", "connection", "notification", "running")

    def __init__(self, connection: object, *, notification: bool) -> None:
        self.connection = connection
        self.notification = notification
        self.awaiting = 0
        self.running = True


CURRENT: contextvars.ContextVar[Handling | None] = contextvars.ContextVar(
    "acp_handling", default=None
)
"""The peer messages whose handlers run in this context, each connection's own: the
notification being handled, in the notification worker and what its handler starts; the
connection's requests' record (``Connection._requests``), in every request's handler and
what it starts (set once, in the task that reads the peer's messages, whose context each
handler's task copies: no context variable is written per request)."""


class Outgoing:
    """One of our requests until its answer is delivered."""

    __slots__ = ("answered", "future", "origin")

    def __init__(self, future: asyncio.Future[Any], origin: Handling | None) -> None:
        self.future = future
        self.origin = origin
        self.answered = False
        """Its answer arrived (perhaps still queued behind notifications) or it was
        failed."""

    def fail(self, error: BaseException) -> None:
        """Fail the request unless it is answered already."""
        self.answered = True
        if not self.future.done():
            self.future.set_exception(error)


class Incoming:
    """A peer request being handled: its task, and where that task stands for
    ``$/cancel_request``.

    Registered before its task is started (an eagerly started handler may be done before
    :func:`start_task` returns); :attr:`task` is set right after.
    """

    __slots__ = ("answering", "cancelled", "message", "started", "task")

    task: asyncio.Task[None]

    def __init__(self, message: dict[str, Any]) -> None:
        self.message = message
        """The request (its log records name its session: ``log_ids``)."""
        self.answering = False
        """The handler is done and its answer is being written: too late to cancel."""
        self.started = False
        """Its task has begun to run (a task cancelled before that never runs its "
        "body)."""
        self.cancelled = False
        """``$/cancel_request`` came before the task began: it answers "request "
        "cancelled" at once."""


EAGER: Callable[..., asyncio.Task[Any]] | None = getattr(
    asyncio, "eager_task_factory", None
)
"""The running Python's factory of eager tasks (3.12+), else None."""


def start_task(
    coroutine: Coroutine[Any, Any, None],
    *,
    eager: bool,
    loop: asyncio.AbstractEventLoop | None = None,
) -> asyncio.Task[None]:
    """A task running ``coroutine`` on the running loop (``loop``, when the caller
    knows it).

    Where the running Python has eager tasks, ``eager`` is asked and the loop has no
    task factory of its own, the task starts at once: its coroutine runs, as that task
    (so ``asyncio.current_task()`` and time-outs inside it are its own), up to its first
    suspension before this returns. Elsewhere (Python 3.11) it starts at the loop's next
    turn, as any task.
    """
    if loop is None:
        loop = asyncio.get_running_loop()
    if eager and EAGER is not None and loop.get_task_factory() is None:
        task: asyncio.Task[None] = EAGER(loop, coroutine)
        return task
    return loop.create_task(coroutine)


class Notification(Handling):
    """A peer notification waiting for its handler, then its handler's
    :class:`Handling` (one record per notification; a plain class: made in a fraction
    of a frozen dataclass's time)."""

    __slots__ = ("message", "size")

    def __init__(self, connection: object, message: dict[str, Any], size: int) -> None:
        self.connection = connection
        self.notification = True
        self.awaiting = 0
        self.running = True
        self.message = message
        self.size = size


class Answer:
    """The peer's answer to one of our requests, waiting behind notifications."""

    __slots__ = ("message", "outgoing")

    def __init__(self, outgoing: Outgoing, message: dict[str, Any]) -> None:
        self.outgoing = outgoing
        self.message = message


def settle(outgoing: Outgoing, message: dict[str, Any]) -> None:
    """Deliver the peer's answer to the caller waiting for it (if it still waits)."""
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


class Calls:
    """Our requests awaiting their answer, by id (integers from 1), and how many of them
    the handlers of peer messages (or tasks they started) await."""

    __slots__ = ("awaiting", "ids", "pending")

    def __init__(self) -> None:
        self.ids = itertools.count(1)
        self.pending: dict[int, Outgoing] = {}
        self.awaiting = 0

    def answered(self, response_id: Any) -> Outgoing | None:
        """The request an answer with ``response_id`` answers, unless it is answered
        already (or no request of ours has that id)."""
        pending = self.pending
        # the common id (an integer, as we sent it) found without read_id: our ids are
        # 64-bit integers, so what is found is what read_id would have found
        outgoing = pending.get(response_id) if type(response_id) is int else None
        if outgoing is None:
            valid, found = read_id(response_id)
            outgoing = pending.get(found) if valid and type(found) is int else None
        return None if outgoing is None or outgoing.answered else outgoing

    def fail(self, error: Exception, *, origin: Handling | None = None) -> None:
        """Fail every request whose answer has not arrived (only those made by
        ``origin``'s handler, given one): an answer that arrived is still delivered,
        in its order."""
        for outgoing in self.pending.values():
            if not outgoing.answered and (origin is None or outgoing.origin is origin):
                outgoing.fail(error)

    def fail_all(self, error: Exception) -> None:
        """Fail every request still waiting, its answer arrived or not."""
        for outgoing in self.pending.values():
            outgoing.fail(error)
