"""The client side of resumable sessions: a transport that reconnects and resumes.

Support code: it knows no method of the protocol (the one it must name, the
``initialize`` it repeats to reattach, is given). A :class:`ResumingTransport` sits
under a client's connection, over the transport of the moment. It
asks for the resume extension in the client's ``initialize``
(``_meta["acpgen/resume"]``, ``docs/resume.md``); when the agent's answer grants it,
the transport counts, per stream (each session, and the connection), the agent
messages it handed over, and keeps the client messages the agent may not have
received yet. When that transport is lost it opens a new one (the same profile or the
next of ``Reconnect.profiles``) with backoff, reattaches with ``initialize`` naming
the token, resends what the agent did not receive, and resumes every session from
the last event handled: the connection above sees each message once, in order, and
its pending requests get their real answers. What cannot be resumed ends the
requests waiting on it with a JSON-RPC error that says to ``session/load``.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import random
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from pydantic_core import to_json

from ..connection.log_ids import logger
from ..connection.transport import Oversized, Transport
from ..wire.messages import Routing, glance, id_key, json_object, session_of
from ..wire.rpc import Json, RequestError
from .vocabulary import EXTENSION, LOST, RECEIVED, RESUME_SESSION, coalesced, granted

__all__ = ["SILENCE", "Reconnect", "ResumingTransport"]

_log = logger(__name__)

Stream = str | None
Key = tuple[str, Any]
_T = TypeVar("_T")

SILENCE = 25.0
"""Seconds a remote connection may stay silent before the client counts it lost (the
server's heartbeats come every 10 s on Streamable HTTP; the client pings a
WebSocket)."""


@dataclass(frozen=True, slots=True)
class Reconnect:
    """When and how a client reconnects to an agent after losing its connection."""

    initial_delay: float = 0.05
    """Seconds before the first new attempt (then doubled, with jitter)."""
    max_delay: float = 2.0
    """The longest wait between two attempts."""
    give_up_after: float = 30.0
    """Seconds of failed attempts before the pending requests fail."""
    attempt_timeout: float = 10.0
    """Seconds one attempt (connect and reattach) may take."""
    profiles: Sequence[str] | None = None
    """Transports for successive attempts, in turn (``("http", "ws")``); None: the
    transport of the first connection."""
    confirm_every: int = 256
    """Client messages kept unconfirmed before asking the agent what it received."""
    silence: float = SILENCE
    """Seconds the connection may stay silent (no byte, no heartbeat, no WebSocket pong)
    before it counts as lost and is resumed: a half-open connection (a NAT that forgot
    it, a peer asleep) is noticed within this bound."""

    def __post_init__(self) -> None:
        for name in (
            "silence",
            "initial_delay",
            "max_delay",
            "give_up_after",
            "attempt_timeout",
            "confirm_every",
        ):
            if getattr(self, name) <= 0:
                raise ValueError(f"Reconnect.{name} must be positive")


class ResumingTransport:
    """A client's transport that survives the loss of the transport under it."""

    @property
    def telemetry_name(self) -> str:
        """``acp.transport`` (``telemetry``): the profile of the first transport."""
        return self._first

    def __init__(
        self,
        transport: Transport,
        reopen: Callable[[int], Awaitable[Transport]],
        policy: Reconnect,
        *,
        routing: Routing,
        max_bytes: int,
    ) -> None:
        self._transport = transport
        self._first = str(getattr(transport, "telemetry_name", "other"))
        self._open = reopen
        """Opens the transport of attempt ``n`` (1, 2...) after a loss."""
        self._policy = policy
        self._initialize = routing.initialize
        self._on_connection = routing.answered_on_connection
        self._max_bytes = max_bytes
        self._init: dict[str, Any] | None = None
        self.token: str | None = None
        """The agent's token for this connection, once granted."""
        self.seen: dict[Stream, int] = {}
        """The id of the last event handed over, per stream."""
        self._mine: dict[Key, tuple[int, Stream]] = {}
        self._handling: dict[Key, tuple[Any, Stream]] = {}
        """The agent's requests the client handles now: their raw id and stream."""
        self._answered: dict[Key, int] = {}
        """The agent's requests the client answered, until the agent confirms it
        received the answer: the sequence number of the answer."""
        self._unconfirmed: collections.deque[tuple[int, bytes]] = collections.deque()
        self._seq = 0
        self._reasked: set[Key] = set()
        self._abandoned: set[Key] = set()
        self._resuming: dict[Key, Stream] = {}
        """Our ``_acpgen/resume_session`` requests, and the session each resumes."""
        self._counting: set[Key] = set()
        """Our ``_acpgen/received`` requests."""
        self._counter = 0
        self._early: collections.deque[bytes] = collections.deque()
        self._synthetic: collections.deque[bytes] = collections.deque()
        self._attached = asyncio.Event()
        self._attached.set()
        self._lock = asyncio.Lock()
        self._closing = False
        self._lost: list[Transport] = []
        """The transports lost or left since the last one that reattached: the agent may
        still wait on one of them."""
        self._closed = asyncio.Event()
        """Set by :meth:`close`: a reconnection in progress stops at once."""
        self._gone = False
        self._given_up: dict[str, Any] | None = None
        """The error the connection ended with when it could not be resumed."""
        self.reconnects = 0
        """Carriers replaced so far."""
        self._attempts = 0

    # -- Transport

    async def receive(self, limit: int) -> bytes | Oversized | None:
        while True:
            if self._synthetic:
                return self._synthetic.popleft()
            if self._gone:
                return None
            if self._early:
                data: bytes | Oversized | None = self._early.popleft()
            else:
                data = await self._transport.receive(limit)
            if data is None:
                if self._closing or self.token is None:
                    _log.debug("the connection ended (resumable: %s)", bool(self.token))
                    self._gone = True
                    self._attached.set()
                else:
                    await self._reconnect()
                continue
            if isinstance(data, Oversized) or self._take(glance(data)):
                return data

    async def ready(self) -> None:
        return None

    @property
    def current(self) -> Transport:
        """The transport of the moment."""
        return self._transport

    def failure(self) -> Exception:
        """What a call made after the connection ended raises: the documented -32060
        (recover with ``session/load``) when it was lost and could not be resumed."""
        if self._given_up is not None:
            return RequestError.from_wire(self._given_up)
        return ConnectionError("the connection to the agent is closed")

    async def send(self, data: bytes) -> None:
        if self._gone:
            raise self.failure()
        message = glance(data)
        key = id_key(message.get("id")) if "id" in message else None
        if "method" in message:
            if (
                message["method"] == self._initialize
                and self._init is None
                and key is not None
            ):
                data = self._asking(message)
            if key is not None:
                session = session_of(message)
                on_connection = message["method"] in self._on_connection
                self._mine[key] = (self._seq + 1, None if on_connection else session)
                if session is not None:
                    self.seen.setdefault(session, 0)
        elif key is not None:
            self._handling.pop(key, None)
            if self.token is not None:
                self._answered[key] = self._seq + 1
        self._seq += 1
        generation = self.reconnects
        if self.token is not None or self._init_id_pending():
            self._unconfirmed.append((self._seq, data))  # the agent may lack it later
        await self._write(data, generation)
        many = len(self._unconfirmed) > self._policy.confirm_every
        if self.token is not None and many and not self._counting:
            key, data = self._ours(RECEIVED, {})
            self._counting.add(key)
            await self._write(data, self.reconnects)

    async def close(self) -> None:
        """Leave for good. When the agent may not have learnt it (the connection was
        lost, or went silent: the goodbye was not acknowledged), reattach on a new
        transport and close that one: the agent ends now, not after ``detached_for``."""
        self._closing = True
        self._closed.set()
        self._attached.set()
        lost, self._lost = self._lost, []
        farewells = [f for c in lost if (f := getattr(c, "farewell", None)) is not None]
        said = False
        if farewells:  # leaving while the connection is lost: say so where we can
            told = await asyncio.gather(
                *(f() for f in farewells), return_exceptions=True
            )
            said = any(answer is True for answer in told)
        if self._transport not in lost:
            said = await _leave(self._transport) or said
        if self.token is not None and not said and not self._gone:
            await self._farewell()

    async def _farewell(self) -> None:
        """Reattach on a new transport, then close it for good (bounded by the attempt
        time-out)."""
        transport: Transport | None = None
        try:
            async with asyncio.timeout(self._policy.attempt_timeout):
                self._attempts += 1
                transport = await self._open(self._attempts)
                await self._reattach(transport)
        except Exception as error:  # noqa: BLE001 - the agent ends after detached_for
            _log.debug("could not tell the agent the client left: %r", error)
        if transport is not None:
            await _leave(transport)

    # -- what arrives

    def _take(self, message: dict[str, Any]) -> bool:
        """Account for one agent message; False: it is ours or seen already."""
        key = id_key(message.get("id")) if "id" in message else None
        if "method" not in message and key in self._counting:
            self._counting.discard(key)
            received = json_object(message.get("result")).get("received")
            if type(received) is int:
                self._confirm(received)
            return False
        if "method" not in message and key in self._resuming:
            self._session_resumed(self._resuming.pop(key), message)
            return False
        if "method" in message:
            stream = session_of(message)
            if key is not None:
                if key in self._reasked:
                    self._reasked.discard(key)
                    self._handling[key] = (message["id"], stream)
                    return True  # asked again: counted when first asked
                if key in self._handling or key in self._answered:
                    # the same request again (a stream reopened after its last event
                    # id brings the agent's pending requests back): the client handles
                    # it already, or its answer is on the way
                    _log.debug("the agent asked %s again: the same request", key)
                    return False
                self._handling[key] = (message["id"], stream)
        else:
            if key in self._abandoned:
                self._abandoned.discard(key)
                return False
            mine = self._mine.pop(key, None) if key is not None else None
            stream = mine[1] if mine else None
            if mine:
                self._confirm(mine[0])
            result: Json = message.get("result")
            created = result.get("sessionId") if type(result) is dict else None
            if type(created) is str:
                self.seen.setdefault(created, 0)
        if self.token is None and key is not None and _is_initialize(self._init, key):
            self.token = granted(message)
        span = coalesced(message)
        handled = self.seen.get(stream, 0)
        if span is not None:
            if span[1] <= handled:
                return False
            self.seen[stream] = span[1]
        else:
            self.seen[stream] = handled + 1
        return True

    def _session_resumed(self, stream: Stream, message: dict[str, Any]) -> None:
        if "error" in message:
            self._session_lost(stream, message["error"])
            return
        reasked: Json = json_object(message.get("result")).get("reasked")
        if type(reasked) is list:
            self._reasked.update(
                k for item in reasked if (k := id_key(item)) is not None
            )

    def _session_lost(self, stream: Stream, error: Any) -> None:
        """The session's missed events are gone: its requests end with ``error``."""
        latest = json_object(json_object(error).get("data")).get("latestEventId")
        if type(latest) is int:
            self.seen[stream] = latest
        _log.warning("session %s could not be resumed: %s", stream, error)
        for key, (_, owner) in list(self._mine.items()):
            if owner == stream:
                self._fail(key, error)

    def _fail(self, key: Key, error: Any) -> None:
        del self._mine[key]
        self._abandoned.add(key)
        answer = {"jsonrpc": "2.0", "id": key[1], "error": error}
        self._synthetic.append(to_json(answer))

    def _init_id_pending(self) -> bool:
        """The client's ``initialize`` is not answered yet (the extension may come)."""
        return self._init is None or id_key(self._init.get("id")) in self._mine

    def _confirm(self, seq: int) -> None:
        while self._unconfirmed and self._unconfirmed[0][0] <= seq:
            self._unconfirmed.popleft()
        if self._answered:
            self._answered = {k: n for k, n in self._answered.items() if n > seq}

    # -- what goes out

    def _asking(self, message: dict[str, Any]) -> bytes:
        """The client's ``initialize``, asking for the extension."""
        self._init = message
        params = json_object(message.get("params"))
        meta = json_object(params.get("_meta"))
        asked = {**params, "_meta": {**meta, EXTENSION: {"version": 1}}}
        return to_json({**message, "params": asked})

    def _ours(self, method: str, params: dict[str, Any]) -> tuple[Key, bytes]:
        """One of our own requests: its id key, and its bytes."""
        self._counter += 1
        request_id = f"acpgen-{self._counter}"
        message = {"jsonrpc": "2.0", "id": request_id, "method": method}
        return ("str", request_id), to_json({**message, "params": params})

    async def _write(self, data: bytes, generation: int) -> None:
        """Send ``data`` on the transport of the moment, unless a reconnection since
        ``generation`` has sent it already."""
        while not self._attached.is_set():
            await self._attached.wait()
        if self._gone:
            raise self.failure()
        async with self._lock:
            if generation != self.reconnects:
                return
            try:
                await self._transport.ready()
                await self._transport.send(data)
            except (ConnectionError, OSError):
                if self.token is None:
                    raise
                # kept unconfirmed: resent after the reconnection if the agent lacks it

    # -- reconnecting

    async def _reconnect(self) -> None:
        self._attached.clear()
        self._lost.append(self._transport)
        await _abandon(self._transport)
        policy, started = self._policy, time.monotonic()
        delay, why = policy.initial_delay, "no attempt"
        while not self._closing:
            self._attempts += 1
            try:
                found = await self._unless_closed(self._attempt(policy.attempt_timeout))
            except Exception as error:  # noqa: BLE001 - any failed attempt is retried
                why = repr(error)
                _log.debug("reconnection attempt %d failed: %s", self._attempts, why)
                if time.monotonic() - started + delay > policy.give_up_after:
                    break
                pause = asyncio.sleep(delay * (0.5 + random.random()))
                with contextlib.suppress(ConnectionError):
                    await self._unless_closed(pause)
                delay = min(2 * delay, policy.max_delay)
                continue
            transport, answer = found
            if "error" in answer:
                with contextlib.suppress(Exception):
                    await transport.close()
                self._give_up(answer["error"])
                return
            await self._resumed(transport, answer)
            return
        self._give_up(
            {"code": LOST, "message": f"the agent could not be reached again: {why}"}
        )

    async def _attempt(self, timeout: float) -> tuple[Transport, dict[str, Any]]:
        """Open a transport and reattach on it (dropped again when that fails)."""
        transport: Transport | None = None
        try:
            async with asyncio.timeout(timeout):
                transport = await self._open(self._attempts)
                return transport, await self._reattach(transport)
        except BaseException:
            if transport is not None:
                self._lost.append(transport)
                await _abandon(transport)
            raise

    async def _unless_closed(self, work: Awaitable[_T]) -> _T:
        """``work``'s result, unless the transport is closed first (ConnectionError)."""
        task = asyncio.ensure_future(work)
        closing = asyncio.ensure_future(self._closed.wait())
        try:
            await asyncio.wait({task, closing}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            closing.cancel()
        if not task.done():
            task.cancel()
            with contextlib.suppress(BaseException):
                await task
            raise ConnectionError("the connection was closed")
        return task.result()

    async def _reattach(self, transport: Transport) -> dict[str, Any]:
        assert self._init is not None
        params = json_object(self._init.get("params"))
        meta = json_object(params.get("_meta"))
        handling = [raw for raw, stream in self._handling.values() if stream is None]
        ours = {
            "version": 1,
            "token": self.token,
            "lastEventId": self.seen.get(None, 0),
            "handling": handling,
            "sessions": [session for session in self.seen if session is not None],
        }
        asked = {**params, "_meta": {**meta, EXTENSION: ours}}
        (_, request_id), data = self._ours(self._initialize, asked)
        await transport.send(data)
        while (arrived := await transport.receive(self._max_bytes)) is not None:
            if isinstance(arrived, Oversized):
                raise ConnectionError("an oversized message before the reattach answer")
            message = glance(arrived)
            if "method" not in message and message.get("id") == request_id:
                return message
            self._early.append(arrived)
        raise ConnectionError("the connection ended before the reattach answer")

    async def _resumed(self, transport: Transport, answer: dict[str, Any]) -> None:
        ours = json_object(json_object(answer.get("result")).get("_meta")).get(
            EXTENSION
        )
        received = json_object(ours).get("received")
        self._transport = transport
        self._lost.clear()
        _log.debug("reattached (the agent received %s messages)", received)
        self._confirm(received if type(received) is int else 0)
        self._resuming.clear()  # what the lost transport was asked is asked again below
        self._counting.clear()
        async with self._lock:
            resent = list(self._unconfirmed)
            self.reconnects += 1
            try:
                # first what the agent lacks (an answer among it settles the request
                # it answers), then each session's events after the last handled
                for _, data in resent:
                    await transport.send(data)
                for stream in [s for s in self.seen if s is not None]:
                    key, data = self._ours(RESUME_SESSION, self._resume_params(stream))
                    self._resuming[key] = stream
                    await transport.send(data)
            except (ConnectionError, OSError) as error:
                # this transport is lost too: its end brings the next reconnection
                _log.debug("lost the new transport while resuming: %r", error)
        self._attached.set()

    def _resume_params(self, stream: str) -> dict[str, Any]:
        handling = [raw for raw, owner in self._handling.values() if owner == stream]
        return {
            "sessionId": stream,
            "lastEventId": self.seen[stream],
            "handling": handling,
        }

    def _give_up(self, error: dict[str, Any]) -> None:
        _log.debug("giving up: %s", error)
        message = error.get("message", "") if type(error) is dict else ""
        error = {
            **error,
            "message": "the connection to the agent was lost and could not be "
            f"resumed: {message}",
        }
        error.setdefault("data", {"recover": "session/load"})
        self._given_up = error
        for key in list(self._mine):
            self._fail(key, error)
        self._gone = True
        self._attached.set()


async def _leave(transport: Transport) -> bool:
    """Close ``transport`` for good: whether the agent's side acknowledged it (a
    transport that cannot say is taken at its word)."""
    leave = getattr(transport, "leave", None)
    try:
        if leave is None:
            await transport.close()
            return True
        return bool(await leave())
    except Exception:  # noqa: BLE001 - not acknowledged
        return False


async def _abandon(transport: Transport) -> None:
    """Drop a lost transport without telling the agent the client left (when it can)."""
    drop = getattr(transport, "abandon", None) or transport.close
    with contextlib.suppress(Exception):
        await drop()


def _is_initialize(init: dict[str, Any] | None, key: Key) -> bool:
    """Whether ``key`` is the id of the client's ``initialize``."""
    return init is not None and id_key(init.get("id")) == key
