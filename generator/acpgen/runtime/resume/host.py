"""A resumable agent: its connection outlives the client's transport.

Support code: it knows no method of the protocol (the one it must recognise, the
``initialize`` that opens a connection, is given). A :class:`Host` runs one agent's
connection over a transport of its own and carries its messages over the client's
transport of the moment, its *client side* (a WebSocket, a Streamable HTTP connection, a
pipe). When a client negotiates the resume extension at ``initialize``
(``_meta["acpgen/resume"]``, ``docs/resume.md``), the host numbers what the agent sends,
per session, in an :class:`~.event_log.EventLog`, keeps the agent's requests still
waiting for an answer, and counts the client messages the agent received. When the
client side is lost the agent goes on; a new one (any profile) that opens with
``initialize`` naming the connection's token is attached in its place and told how many
client messages arrived, and each session comes back with ``_acpgen/resume_session``:
the events after the one the client handled, in order, then live ones. The connection's
own events and those of the sessions the client names wait until it has resumed them
all, then go in the order the agent sent them (each event keeps what it comes after on
the other streams, :class:`~.event_log.Precedence`): an answer that followed a session's
updates (``session/load``'s) never overtakes them. A client that does not negotiate gets
plain ACP, byte for byte, and the agent ends with its transport.
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from pydantic_core import to_json

from ..connection import telemetry
from ..connection.log_ids import logger
from ..connection.transport import Oversized, Transport
from ..wire.messages import Routing, glance, id_key, json_object, session_of
from ..wire.rpc import Json
from .event_log import After, Coalescing, EventLog, Precedence, ResumeLimits
from .vocabulary import (
    EXTENSION,
    RECEIVED,
    RESUME_SESSION,
    Lost,
    answer,
    error,
    lost_error,
    resume_request,
    with_token,
)

__all__ = ["Host", "Hosts"]

_log = logger(__name__)

Stream = str | None
"""A session id, or None for the connection's own messages."""
Event = tuple[int, bytes, After]
"""An event to send: its id, its bytes, what it comes after."""


@dataclass(slots=True)
class _Pending:
    """An agent request the client has not answered."""

    stream: Stream
    event: int
    data: bytes
    request_id: Any
    after: After


class _AgentSide:
    """The agent connection's transport: what the host reads from and writes to."""

    telemetry_name = "resumable"
    """``acp.transport`` (``telemetry``): the client's profile may change."""

    def __init__(self, host: Host) -> None:
        self._host = host

    async def receive(self, limit: int) -> bytes | Oversized | None:
        if self._host.closed and self._host.inbound.empty():
            return None
        item = await self._host.inbound.get()
        if item is None:
            self._host.inbound.put_nowait(None)  # the end stays for any later read
            return None
        if isinstance(item, bytes) and len(item) > limit:
            return Oversized(item[:65536])
        return item

    async def ready(self) -> None:
        return None

    async def send(self, data: bytes) -> None:
        await self._host.outgoing(data)

    async def close(self) -> None:
        await self._host.close()


class Host:
    """One agent connection, carried over its client's transport of the moment."""

    def __init__(
        self,
        limits: ResumeLimits,
        coalescing: Coalescing | None,
        routing: Routing,
        *,
        max_message_bytes: int,
        on_close: Callable[[Host], None] = lambda host: None,
        on_detached: Callable[[Host], None] = lambda host: None,
    ) -> None:
        self.token = secrets.token_urlsafe(32)
        self.limits = limits
        self._coalescing = coalescing
        self._initialize = routing.initialize
        self._on_connection = routing.answered_on_connection
        self._max_bytes = max_message_bytes
        self._on_close = on_close
        self._on_detached = on_detached
        self.inbound: asyncio.Queue[bytes | Oversized | None] = asyncio.Queue(1)
        """One message at a time: the client side's own buffer (bounded in bytes) holds
        the rest while the agent does not read."""
        self.agent_side = _AgentSide(self)
        self.agent: Any = None
        """The agent's connection (a ``connection.Connection``)."""
        self.task: asyncio.Task[None] | None = None
        self.negotiated = False
        self.logs: dict[Stream, EventLog] = {}
        self._order = Precedence()
        """The order of the agent's events across its streams."""
        self.paused: set[Stream] = set()
        """Streams whose events wait for the client to resume them (on this client
        side)."""
        self._awaited: set[Stream] = set()
        """Sessions a reattached client named and has not resumed yet: until it has,
        the streams it resumed wait too (their events may come after these ones')."""
        self._resumed: dict[Stream, tuple[int, Any]] = {}
        """Streams resumed and waiting for the others: the last event id the client
        handled of each, and the agent requests it is still answering."""
        self._reattaching = False
        """A client came back and has not reattached yet: every event only waits."""
        self._routes: dict[tuple[str, Any], Stream] = {}
        self._pending: dict[tuple[str, Any], _Pending] = {}
        self.received = 0
        """Client messages handed to the agent."""
        self._init_id: tuple[str, Any] | None = None
        self._init_answer: dict[str, Any] | None = None
        self.client_side: Transport | None = None
        self._pump: asyncio.Task[None] | None = None
        self._lock = asyncio.Lock()
        self.detached_at: float | None = None
        self.profile = "http"  # of the connection that last carried it (telemetry)
        self._expiry: asyncio.TimerHandle | None = None
        self.closed = False

    def start(self, connect: Callable[[Transport], Any]) -> None:
        """Create the agent's connection over :attr:`transport` and run it."""
        self.agent = connect(self.agent_side)
        self.task = asyncio.get_running_loop().create_task(self._run())

    async def _run(self) -> None:
        try:
            await self.agent.run()
        except Exception:  # noqa: BLE001 - one connection never stops the server
            _log.exception("a resumable ACP connection failed")
        finally:
            await self.close()

    # -- the client side

    async def serve(
        self, client_side: Transport, *, left_on_purpose: Callable[[], bool]
    ) -> None:
        """Carry the agent's messages over ``client_side`` (the client's transport of
        the moment) until it ends; then the agent waits for a new one (or ends, when
        ``left_on_purpose()`` says the client left on purpose or it never negotiated the
        extension)."""
        previous, self._pump = self._pump, asyncio.current_task()
        old = self.client_side
        self.client_side = client_side
        if self._init_answer is not None:  # a client comes back: nothing goes out
            self._reattaching = True  # before its reattach, then each stream waits
            self.paused = set(self.logs) | {None}  # to be resumed
            self._awaited, self._resumed = set(), {}
        self.detached_at = None
        if self._expiry is not None:
            self._expiry.cancel()
        if old is not None:
            with contextlib.suppress(Exception):
                await old.close()
        if previous is not None and previous is not asyncio.current_task():
            with contextlib.suppress(BaseException):
                await previous  # what the old client side brought is handed over first
        try:
            while (data := await client_side.receive(self._max_bytes)) is not None:
                await self._from_client(client_side, data)
        except (ConnectionError, OSError) as error:
            _log.debug("a client side ended: %r", error)
        finally:
            await self._client_side_ended(client_side, left_on_purpose())

    async def _client_side_ended(
        self, client_side: Transport, left_on_purpose: bool
    ) -> None:
        if client_side is not self.client_side:
            return
        self.client_side = None
        if left_on_purpose or not self.negotiated or self.closed:
            await self.close()
            return
        self.detached_at = time.monotonic()
        loop = asyncio.get_running_loop()
        self._expiry = loop.call_later(self.limits.detached_for, self._expire)
        self._on_detached(self)

    def _expire(self) -> None:
        if self.client_side is None and not self.closed:
            _log.info("closing a resumable ACP connection nobody resumed")
            asyncio.get_running_loop().create_task(self.close())

    async def close(self) -> None:
        """End the agent's connection and the client's transport (idempotent)."""
        if self.closed:
            return
        self.closed = True
        if self._expiry is not None:
            self._expiry.cancel()
        while not self.inbound.empty():  # a pump waiting to hand the agent a message
            self.inbound.get_nowait()  # goes on (and then finds its client side closed)
        with contextlib.suppress(asyncio.QueueFull):
            self.inbound.put_nowait(None)
        self._on_close(self)
        client_side, self.client_side = self.client_side, None
        if client_side is not None:
            with contextlib.suppress(Exception):
                await client_side.close()
        if self.agent is not None and self.task is not asyncio.current_task():
            with contextlib.suppress(Exception):
                await self.agent.close()
            if self.task is not None:
                await asyncio.wait({self.task}, timeout=1.0)

    # -- client -> agent

    async def _from_client(
        self, client_side: Transport, data: bytes | Oversized
    ) -> None:
        if isinstance(data, Oversized):
            await self._to_agent(data)
            return
        message = glance(data)
        method = message.get("method")
        key = id_key(message.get("id")) if "id" in message else None
        if method == self._initialize and key is not None:
            meta = resume_request(message)
            if meta is not None and "token" in meta:
                await self._reattach(client_side, message, meta)
                return
            if meta is not None and self._init_id is None:
                self.negotiated = True
                params = {k: v for k, v in message["params"].items() if k != "_meta"}
                others = {
                    k: v
                    for k, v in message["params"]["_meta"].items()
                    if k != EXTENSION
                }
                data = to_json(
                    {
                        **message,
                        "params": {**params, **({"_meta": others} if others else {})},
                    }
                )
            if self._init_id is None:
                self._init_id = key
        elif self.negotiated and type(method) is str and method.startswith("_acpgen/"):
            await self._extension(message)
            return
        if self.negotiated:
            if method is None and key is not None:
                self._pending.pop(key, None)
            elif key is not None:
                on_connection = method in self._on_connection
                self._routes[key] = None if on_connection else session_of(message)
        await self._to_agent(data)

    async def _to_agent(self, data: bytes | Oversized) -> None:
        self.received += 1
        if not self.closed:
            await self.inbound.put(data)

    async def _reattach(
        self, client_side: Transport, message: dict[str, Any], meta: dict[str, Any]
    ) -> None:
        request_id = message["id"]
        if meta.get("token") != self.token or self._init_answer is None:
            telemetry.add("resumes", 1, {"acp.resume.outcome": "unknown"})
            await client_side.send(
                error(request_id, "unknown resume token", {"recover": "session/load"})
            )
            return
        handling = meta.get("handling")
        last = meta.get("lastEventId", 0)
        last = last if type(last) is int else -1  # not an id: nothing can follow it
        named: Json = meta.get("sessions")
        sessions: set[Stream] = set()  # the sessions it will resume, logged yet or not
        if type(named) is list:
            sessions = {s for s in named if type(s) is str}
        async with self._lock:
            self._reattaching = False
            self.paused |= sessions
            result = dict(self._init_answer.get("result") or {})
            mine = json_object(result.get("_meta"))
            ours = {"version": 1, "token": self.token, "received": self.received}
            result["_meta"] = {**mine, EXTENSION: ours}
            caught = self._catch_up(None, last, handling)
            outcome = "lost" if isinstance(caught, Lost) else "resumed"
            telemetry.add("resumes", 1, {"acp.resume.outcome": outcome})
            if isinstance(caught, Lost):
                await client_side.send(
                    error(request_id, *lost_error(None, last, caught))
                )
                return
            await client_side.send(answer(request_id, result))
            self._awaited = sessions
            self._resumed = {None: (last, handling)}
            await self._flush(client_side)

    async def _extension(self, message: dict[str, Any]) -> None:
        """Answer one of the extension's requests (the agent never sees them)."""
        method, request_id = message["method"], message.get("id")
        params = json_object(message.get("params"))
        client_side = self.client_side
        if client_side is None or request_id is None:
            return
        if method == RECEIVED:
            async with self._lock:
                await client_side.send(answer(request_id, {"received": self.received}))
            return
        session, last = params.get("sessionId"), params.get("lastEventId", 0)
        if (
            method != RESUME_SESSION
            or type(session) is not str
            or type(last) is not int
        ):
            known = method == RESUME_SESSION
            refusal = {
                "code": -32602 if known else -32601,
                "message": "Invalid params" if known else "Method not found",
            }
            async with self._lock:
                await client_side.send(
                    to_json({"jsonrpc": "2.0", "id": request_id, "error": refusal})
                )
            return
        handling = params.get("handling")
        async with self._lock:
            caught = self._catch_up(session, last, handling)
            self._awaited.discard(session)
            if isinstance(caught, Lost):
                self.paused.discard(session)
                await client_side.send(
                    error(request_id, *lost_error(session, last, caught))
                )
                await self._flush(client_side)  # what waited for it goes now
                return
            log = self.logs.get(session)
            reasked = [p.request_id for p in self._reasked(session, last, handling)]
            done = {
                "sessionId": session,
                "latestEventId": log.latest if log else 0,
                "reasked": reasked,
            }
            await client_side.send(answer(request_id, done))
            self._resumed[session] = (last, handling)
            await self._flush(client_side)

    def _catch_up(self, stream: Stream, last: int, handling: Any) -> list[Event] | Lost:
        """The requests to ask again, then the events after ``last``, with ids."""
        log = self.logs.get(stream)
        if log is None:
            return [] if last == 0 else Lost(1, 0)
        events = log.events_after(last)
        if isinstance(events, Lost):
            return events
        asked = [
            (p.event, p.data, p.after) for p in self._reasked(stream, last, handling)
        ]
        return asked + events

    def _reasked(self, stream: Stream, last: int, handling: Json) -> list[_Pending]:
        busy: set[tuple[str, Any] | None] = (
            {id_key(item) for item in handling} if type(handling) is list else set()
        )
        return [
            p
            for key, p in self._pending.items()
            if p.stream == stream and p.event <= last and key not in busy
        ]

    def lostanswer(self, stream: Stream, last: int, lost: Lost) -> str:
        """A JSON-RPC error (id null): why ``stream`` cannot resume after ``last``."""
        return error(None, *lost_error(stream, last, lost)).decode()

    async def _flush(self, client_side: Transport) -> None:
        """Once the client resumed every session it named, send what each stream resumed
        missed, in the order the agent sent it, and carry their events live again (under
        the lock). A stream whose missed events are gone meanwhile: the client side is
        closed, and the client's next reattach is told."""
        if self._awaited:
            return
        resumed, self._resumed = self._resumed, {}
        caught: dict[Stream, list[Event]] = {}
        for stream, (last, handling) in resumed.items():
            events = self._catch_up(stream, last, handling)
            if isinstance(events, Lost):
                await client_side.close()
                return
            caught[stream] = events
        self.paused -= set(resumed)
        telemetry.add("caught_up", sum(map(len, caught.values())), {})
        known = {stream: last for stream, (last, _) in resumed.items()}
        for stream, (event, data, after) in _in_order(caught, known):
            await client_side.ready()
            await _send(client_side, data, event, stream, after)

    async def replay(
        self,
        stream: Stream,
        last: int,
        reset: Callable[[list[Event]], None],
    ) -> Lost | None:
        """Hand the events of ``stream`` after ``last`` to ``reset`` (an SSE stream
        reopened with ``Last-Event-ID``), and carry its next ones live; or why not."""
        async with self._lock:
            caught = self._catch_up(stream, last, None)
            if isinstance(caught, Lost):
                return caught
            reset(caught)
            telemetry.add("caught_up", len(caught), {})
            self.paused.discard(stream)
            return None

    # -- agent -> client

    async def outgoing(self, data: bytes) -> None:
        """Number, keep and (when its stream is live) carry one agent message."""
        if not self.negotiated:
            await self._carry(None, data, None)
            return
        message = glance(data)
        key = id_key(message.get("id")) if "id" in message else None
        if "method" in message:
            stream = session_of(message)
        else:
            stream = self._routes.pop(key, None) if key is not None else None
            if key is not None and key == self._init_id and self._init_answer is None:
                self._init_answer = message
                data = with_token(message, self.token)
        log = self.logs.get(stream)
        if log is None:
            log = self.logs[stream] = EventLog(self.limits, self._coalescing)
        after = self._order.note(stream, log.latest + 1)
        event = log.append(data, after=after)
        if "method" in message and key is not None:
            self._pending[key] = _Pending(stream, event, data, message["id"], after)
        if stream not in self.paused:
            await self._carry(stream, data, event, after)

    async def _carry(
        self, stream: Stream, data: bytes, event: int | None, after: After = ()
    ) -> None:
        """Send one message now, if its stream is live (``event``: its number; None
        on a connection that did not negotiate the extension)."""
        numbered = event is not None
        async with self._lock:
            client_side = self.client_side
            waits = stream in self.paused or self._reattaching
            if client_side is None or (numbered and waits):
                if not numbered and not self.closed:
                    raise ConnectionError("the client is gone")
                return
            try:
                await client_side.ready()
                await _send(client_side, data, event, stream, after)
            except (ConnectionError, OSError) as error:
                if not numbered:
                    raise
                _log.debug("lost a client side while sending: %r", error)
                with contextlib.suppress(Exception):
                    await client_side.close()


async def _send(
    client_side: Transport,
    data: bytes,
    event: int | None,
    stream: Stream = None,
    after: After = (),
) -> None:
    """Send ``data`` on ``client_side``, with its event id, stream and what it comes
    after where that transport shows them (the SSE streams of Streamable HTTP)."""
    numbered = getattr(client_side, "send_event", None)
    if event is not None and numbered is not None:
        await numbered(data, event, stream, after)
    else:
        await client_side.send(data)


def _in_order(
    caught: dict[Stream, list[Event]], known: dict[Stream, int]
) -> Iterator[tuple[Stream, Event]]:
    """The events of several streams as one sequence, in the order the agent sent them:
    an event goes once what it comes after on the other streams of ``caught`` went (or
    the client had it: ``known``, the last id it handled of each). Never stuck: with no
    event ready (what no agent's order gives), the first stream's next goes."""
    at = dict(known)
    heads = {stream: 0 for stream, events in caught.items() if events}

    def ready(after: After) -> bool:
        return all(s not in caught or at.get(s, 0) >= n for s, n in after)

    while heads:
        stream = next((s for s, i in heads.items() if ready(caught[s][i][2])), None)
        if stream is None:
            stream = next(iter(heads))
        event = caught[stream][heads[stream]]
        yield stream, event
        at[stream] = max(at.get(stream, 0), event[0])
        heads[stream] += 1
        if heads[stream] == len(caught[stream]):
            del heads[stream]


class Hosts:
    """The resumable connections of one server, by token."""

    def __init__(
        self,
        connect: Callable[[Transport], Any],
        limits: ResumeLimits,
        coalescing: Coalescing | None,
        routing: Routing,
        max_message_bytes: int,
    ) -> None:
        self._connect = connect
        self.limits = limits
        self._coalescing = coalescing
        self._routing = routing
        self._max_bytes = max_message_bytes
        self.live: dict[str, Host] = {}
        self._closing: set[asyncio.Task[None]] = set()

    def new(self) -> Host:
        """A new host with a new agent."""
        host = Host(
            self.limits,
            self._coalescing,
            self._routing,
            max_message_bytes=self._max_bytes,
            on_close=self._forget,
            on_detached=self._bound_detached,
        )
        self.live[host.token] = host
        host.start(self._connect)
        return host

    def _forget(self, host: Host) -> None:
        self.live.pop(host.token, None)

    def get(self, token: Any) -> Host | None:
        host = self.live.get(token) if type(token) is str else None
        return host if host is not None and not host.closed else None

    def _bound_detached(self, host: Host) -> None:
        """``host`` lost its client: while more than ``max_detached`` agents wait for
        theirs, the one waiting longest is closed (its client, when it comes back, is
        told the connection is gone: -32060, recover with ``session/load``)."""
        detached = [
            h
            for h in self.live.values()
            if h.detached_at is not None and not h.closed and h.client_side is None
        ]
        excess = len(detached) - self.limits.max_detached
        if excess <= 0:
            return
        detached.sort(key=lambda h: h.detached_at or 0.0)
        loop = asyncio.get_running_loop()
        for oldest in detached[:excess]:
            _log.info("closing the resumable ACP connection waiting longest")
            oldest.detached_at = None  # counted once
            closing = loop.create_task(oldest.close())
            self._closing.add(closing)
            closing.add_done_callback(self._closing.discard)

    async def close(self) -> None:
        await asyncio.gather(*(host.close() for host in list(self.live.values())))
