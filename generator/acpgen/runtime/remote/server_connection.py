"""What the remote server keeps per ACP connection: the agent's transport, its outbound
streams and the routes that pair answers with streams; and what a profile needs of the
app serving it.

Support code: it knows no method of the protocol (the routing rules that name methods
come from the schema, as a :class:`~..wire.messages.Routing`). One
:class:`RemoteConnection` per ``Acp-Connection-Id`` owns:

- the agent's ``connection.Connection``, over a :class:`ServerTransport` that this
  module implements for both profiles;
- for Streamable HTTP, the :class:`Outbox`: one :class:`OutboundStream` for the
  connection and one per session, each the single owner of the messages waiting for
  its SSE receiver (an event log with event ids slots in there), bounded in bytes per
  stream and per connection; the agent's sends wait while a bound is reached, and a
  client that takes nothing for ``stall_timeout`` has its connection closed.

A client reads the SSE streams apart, so each event states where it stands in the order
the agent sent: its number on its stream (``id:`` on a resumable connection, the event
id; ``order:`` otherwise) and, when other streams carried messages since the stream's
previous event, what it comes after (``after:``, ``[[stream, number], ...]`` in JSON,
the connection's stream named null). A client that delivers each event after those
delivers the agent's messages in the order sent (``docs/remote.md``).
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import json
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from ..connection.log_ids import logger
from ..connection.transport import Oversized
from ..resume.event_log import After, Precedence
from ..wire.messages import Routing, glance, id_key
from ..wire.rpc import Json

if TYPE_CHECKING:
    from ..resume.host import Host

__all__ = [
    "LimitExceeded",
    "OutboundStream",
    "Outbox",
    "RemoteConnection",
    "RemoteLimits",
    "Server",
    "ServerTransport",
]

_log = logger(__name__)


@dataclass(frozen=True, slots=True)
class RemoteLimits:
    """What one remote client may make the server hold, with the defaults documented in
    ``docs/remote.md`` (the TypeScript SDK's where it has one)."""

    max_connections: int = 1024
    """ACP connections this app serves at once; beyond, 503 (HTTP and WebSocket)."""
    max_address_share: float = 0.5
    """The share of ``max_connections`` one client address may hold (as the ASGI server
    sees it: behind a proxy, run uvicorn with ``--proxy-headers``); beyond, 429."""
    max_buffered_bytes: int = 64 * 1024 * 1024
    """Outbound bytes one connection holds for its client; beyond, the agent waits."""
    max_stream_bytes: int = 32 * 1024 * 1024
    """Outbound bytes one SSE stream holds; beyond, the agent waits."""
    max_session_streams: int = 1024
    """Session streams one HTTP connection holds (open or buffering)."""
    max_id_length: int = 1024
    """The longest session id or string request id tracked (longer: 400, close 1008)."""
    stall_timeout: float = 60.0
    """Seconds a full connection waits for its client to read; then it is closed."""
    idle_timeout: float = 300.0
    """Seconds an HTTP connection without open stream or request lives (no DELETE)."""
    initialize_timeout: float = 30.0
    """Seconds the agent has to answer ``initialize`` (then 500, or close 1011)."""
    open_timeout: float = 10.0
    """Seconds a new connection has to open: a WebSocket from its upgrade to its
    ``initialize`` (then closed 1008), a Streamable HTTP connection from its
    ``initialize`` answer to its first stream (then closed, as by DELETE)."""
    drain_timeout: float = 10.0
    """Seconds a SIGTERM waits for the connections to end (the health probe answers 404
    meanwhile) before the ASGI server stops."""
    keepalive: float = 10.0
    """Seconds between heartbeats (an SSE comment) on a stream with nothing to send: for
    proxies, and for clients that count a stream silent for longer (25 s by default:
    ``Reconnect.silence``) as lost."""

    def __post_init__(self) -> None:
        for name in self.__slots__:
            if getattr(self, name) <= 0:
                raise ValueError(f"RemoteLimits.{name} must be positive")
        if self.max_address_share > 1:
            raise ValueError("RemoteLimits.max_address_share must be at most 1")

    @property
    def per_address(self) -> int:
        """The connections one client address may hold."""
        return max(1, int(self.max_connections * self.max_address_share))


class LimitExceeded(Exception):
    """A client or agent went past a :class:`RemoteLimits` bound."""


def _head(field: bytes, number: int, after: After) -> bytes:
    """The SSE lines before an event's data: its number on its stream (``field``) and
    what it comes after."""
    head = b"%s: %d\n" % (field, number)
    if after:
        pairs = json.dumps([[stream, last] for stream, last in after])
        head += b"after: " + pairs.encode() + b"\n"
    return head


class OutboundStream:
    """The messages waiting for one SSE stream's receiver, in order (one receiver at a
    time), each with its event id when the connection is resumable and the SSE lines
    that go before its data (:meth:`Outbox.head`)."""

    def __init__(self, outbox: Outbox, session: str | None) -> None:
        self._outbox = outbox
        self.session = session
        self._queue: collections.deque[tuple[bytes, int | None, bytes]] = (
            collections.deque()
        )
        self.size = 0
        self.attached = False
        self.receiver = 0
        """Counts receivers: a receiver whose number is no longer this one stops."""
        self.closed = False
        self._wake = asyncio.Event()

    @property
    def full(self) -> bool:
        return self.size >= self._outbox.limits.max_stream_bytes

    def push(self, data: bytes, event: int | None = None, head: bytes = b"") -> None:
        self._queue.append((data, event, head))
        self.size += len(data)
        self._outbox.size += len(data)
        self._wake.set()

    def replace(self, events: list[tuple[int, bytes, After]]) -> None:
        """Put ``events`` (a replay after ``Last-Event-ID``) in place of the numbered
        messages waiting (the replay holds those that come after the id)."""
        kept = [item for item in self._queue if item[1] is None]
        self._outbox.taken(self.size)
        self._queue.clear()
        self.size = 0
        for data, event, head in kept:
            self.push(data, event, head)
        for number, data, after in events:
            self.push(data, number, self._outbox.head(self.session, number, after))

    def take_over(self) -> int:
        """A new receiver replaces the current one (which stops): its number."""
        self.receiver += 1
        self.attached = True
        self._wake.set()
        return self.receiver

    async def take(self, wait: float, receiver: int) -> tuple[bytes, bytes] | None:
        """The next message and the SSE lines before its data; ``(b"", b"")`` when
        nothing came for ``wait`` seconds; None once the stream is closed or has another
        receiver."""
        while not self._queue:
            if self.closed or receiver != self.receiver:
                return None
            self._wake.clear()
            try:
                async with asyncio.timeout(wait):
                    await self._wake.wait()
            except TimeoutError:
                return (b"", b"")
        if receiver != self.receiver:
            return None
        data, _, head = self._queue.popleft()
        self.size -= len(data)
        self._outbox.taken(len(data))
        return data, head

    def close(self) -> None:
        self.closed = True
        self._wake.set()

    @property
    def idle(self) -> bool:
        """No receiver and nothing waiting: the stream may go."""
        return not self.attached and not self._queue


class Outbox:
    """The outbound streams of one HTTP connection and their byte accounting."""

    def __init__(self, limits: RemoteLimits) -> None:
        self.limits = limits
        self.connection_stream = OutboundStream(self, None)
        self.sessions: dict[str, OutboundStream] = {}
        self.size = 0
        self.progress = asyncio.Event()
        """Set when a receiver takes a message (or the connection closes)."""
        self._numbers: dict[str | None, int] = {}
        """The number of the last message of each stream (event ids on a resumable
        connection)."""
        self._order = Precedence()
        """The order across streams of a connection that numbers its messages itself."""

    def head(self, stream: str | None, event: int | None, after: After = ()) -> bytes:
        """The SSE lines before the data of the next message of ``stream``: numbered
        here (``order:``, and what it comes after) when ``event`` is None, else the
        resumable host's event ``event`` (``id:``), which comes after ``after`` (what of
        it this connection carried: the rest the client had before, or never reads)."""
        numbers = self._numbers
        if event is None:
            number = numbers[stream] = numbers.get(stream, 0) + 1
            return _head(b"order", number, self._order.note(stream, number))
        carried = tuple(pair for pair in after if numbers.get(pair[0], 0) >= pair[1])
        numbers[stream] = max(numbers.get(stream, 0), event)
        return _head(b"id", event, carried)

    def stream(self, session: str | None) -> OutboundStream:
        """The stream for ``session`` (None: the connection's), created on first use."""
        if session is None:
            return self.connection_stream
        found = self.sessions.get(session)
        if found is None:
            if len(self.sessions) >= self.limits.max_session_streams:
                raise LimitExceeded(
                    f"more than {self.limits.max_session_streams} session streams"
                )
            found = self.sessions[session] = OutboundStream(self, session)
        return found

    def detach(self, stream: OutboundStream, receiver: int) -> None:
        if receiver != stream.receiver:
            return  # another receiver took the stream over
        stream.attached = False
        if stream.session is not None and stream.idle:
            self.sessions.pop(stream.session, None)

    @property
    def full(self) -> bool:
        if self.size >= self.limits.max_buffered_bytes:
            return True
        streams = (self.connection_stream, *self.sessions.values())
        return any(stream.full for stream in streams)

    def taken(self, size: int) -> None:
        self.size -= size
        self.progress.set()

    def close(self) -> None:
        for stream in (self.connection_stream, *self.sessions.values()):
            stream.close()
        self.progress.set()


class RemoteConnection:
    """One ACP connection of the remote server (either profile)."""

    def __init__(
        self, limits: RemoteLimits, routing: Routing, *, websocket: bool
    ) -> None:
        self.id = str(uuid.uuid4())  # 122 random bits from os.urandom: unguessable
        self.limits = limits
        self.routing = routing
        self.websocket = websocket
        self.outbox = Outbox(limits)
        self.pending_routes: dict[tuple[str, Any], str | None] = {}
        """Client request id -> the session stream its answer goes to (None: the
        connection's)."""
        self.client_answer_routes: dict[tuple[str, Any], str | None] = {}
        """Agent request id -> the session its answer must name."""
        self.inbound: collections.deque[bytes | Oversized] = collections.deque()
        self.inbound_size = 0
        self.inbound_changed = asyncio.Event()
        self.busy = 0
        """HTTP requests and open streams of this connection right now."""
        self.address: str | None = None
        """The client's address (``Request.client``), counted by the app."""
        self.streamed = False
        """A stream was opened (HTTP): the connection is open, not only initialized."""
        self.last_seen = time.monotonic()
        self.closed = False
        self.farewell = False
        """The client ended the connection on purpose (DELETE, WebSocket close 1000)."""
        self.input_ended = False
        """The client is gone: the agent reads what it sent, then the end of input."""
        self.initialize: tuple[tuple[str, Any], asyncio.Future[bytes]] | None = None
        self.host: Any = None
        """The resumable host (``resume.host.Host``) this connection carries for."""
        self.agent: Any = None
        """The agent's connection (a ``connection.Connection``), once created (None when
        a resumable host owns it)."""
        self.task: asyncio.Task[None] | None = None
        self.on_close: list[Callable[[], None]] = []

    # -- inbound (client -> agent)

    def validate_id(self, label: str, value: Any) -> None:
        if type(value) is str and len(value) > self.limits.max_id_length:
            raise LimitExceeded(f"{label} longer than {self.limits.max_id_length}")

    async def deliver(self, data: bytes | Oversized) -> None:
        """Hand one client message to the agent, waiting while too much waits."""
        size = len(data.head) if isinstance(data, Oversized) else len(data)
        while (
            self.inbound and self.inbound_size + size > self.limits.max_buffered_bytes
        ):
            await self._changed()
        if self.closed:
            raise ConnectionError("the connection is closed")
        self.inbound.append(data)
        self.inbound_size += size
        self.inbound_changed.set()

    async def _changed(self) -> None:
        if self.closed:
            raise ConnectionError("the connection is closed")
        self.inbound_changed.clear()
        await self.inbound_changed.wait()

    async def wait_for_room(self) -> None:
        """Wait while the client has not read enough of the agent's output (a request
        adds output); close the connection when it reads nothing for the stall time."""
        while not self.closed and not self.websocket and self.outbox.full:
            self.outbox.progress.clear()
            try:
                async with asyncio.timeout(self.limits.stall_timeout):
                    await self.outbox.progress.wait()
            except TimeoutError:
                _log.warning("closing ACP connection %s: output stalled", self.id)
                await self.close()
        if self.closed:
            raise ConnectionError("the connection is closed")

    # -- outbound (agent -> client)

    def route(
        self,
        data: bytes,
        event: int | None = None,
        stream: str | None = None,
        after: After = (),
    ) -> None:
        """Queue one agent message (numbered ``event`` on a resumable connection, which
        comes after ``after``) on the stream it belongs to (HTTP profile); ``stream``:
        where an answer goes when its request came on another connection (a resumed
        one's)."""
        message = glance(data)
        if not message:
            self._push(None, data, event, after)
            return
        if "method" not in message:
            key = id_key(message.get("id"))
            if self._answers_initialize(key, data):
                return
            if key is not None and key in self.pending_routes:
                session = self.pending_routes.pop(key)
            else:
                session = stream
            result: Json = message.get("result")
            created = result.get("sessionId") if type(result) is dict else None
            self.validate_id("the session id", created)
            self._push(session, data, event, after)
            return
        params: Json = message.get("params")
        named = params.get("sessionId") if type(params) is dict else None
        session = named if type(named) is str else None
        self.validate_id("the session id", session)
        key = id_key(message.get("id")) if "id" in message else None
        if key is not None:
            self.client_answer_routes[key] = session
        self._push(session, data, event, after)

    def _push(
        self, session: str | None, data: bytes, event: int | None, after: After
    ) -> None:
        target = self.outbox.stream(session)
        if event is None and self.host is not None and self.host.negotiated:
            head = b""  # the resume extension's own messages: outside the agent's order
        else:
            head = self.outbox.head(session, event, after)
        target.push(data, event, head)

    def _answers_initialize(self, key: tuple[str, Any] | None, data: bytes) -> bool:
        if self.initialize is None or key != self.initialize[0]:
            return False
        future = self.initialize[1]
        self.initialize = None
        if not future.done():
            future.set_result(data)
        return True

    # -- lifecycle

    def end_input(self) -> None:
        """No more client messages will come (the socket closed)."""
        self.input_ended = True
        self.inbound_changed.set()

    def touch(self) -> None:
        self.last_seen = time.monotonic()

    async def close(self) -> None:
        """End the connection: agent input ends, streams close (idempotent)."""
        if self.closed:
            return
        self.closed = True
        self.inbound_changed.set()
        self.outbox.close()
        if self.initialize is not None and not self.initialize[1].done():
            self.initialize[1].set_exception(ConnectionError("closed"))
        for callback in self.on_close:
            callback()
        if self.agent is not None:
            with contextlib.suppress(Exception):
                await self.agent.close()


class ServerTransport:
    """The agent's side of one remote connection, as a ``transport.Transport``.

    Client messages come from :attr:`RemoteConnection.inbound` (HTTP POST bodies, or
    the WebSocket frames put there by the app); agent messages go to the outbox's
    streams (HTTP) or to ``send_frame`` (WebSocket).
    """

    def __init__(
        self,
        remote: RemoteConnection,
        send_frame: Callable[[bytes], Any] | None = None,
    ) -> None:
        self._remote = remote
        self._send_frame = send_frame

    @property
    def connection_id(self) -> str:
        """The connection's ``Acp-Connection-Id``."""
        return self._remote.id

    @property
    def telemetry_name(self) -> str:
        """``acp.transport`` (``telemetry``): the connection's profile."""
        return "websocket" if self._remote.websocket else "http"

    async def receive(self, limit: int) -> bytes | Oversized | None:
        remote = self._remote
        while not remote.inbound:
            if remote.closed or remote.input_ended:
                return None
            remote.inbound_changed.clear()
            await remote.inbound_changed.wait()
        data = remote.inbound.popleft()
        remote.inbound_size -= len(data.head if isinstance(data, Oversized) else data)
        remote.inbound_changed.set()
        if not isinstance(data, Oversized) and len(data) > limit:
            return Oversized(data[:65536])
        return data

    async def ready(self) -> None:
        remote = self._remote
        if remote.closed:
            raise ConnectionError("the connection is closed")
        if self._send_frame is None:
            await remote.wait_for_room()

    async def send(self, data: bytes) -> None:
        await self.send_event(data, None, None)

    async def send_event(
        self, data: bytes, event: int | None, stream: str | None, after: After = ()
    ) -> None:
        """Send a numbered event of ``stream`` that comes after ``after`` (its id goes
        on the SSE ``id:`` line)."""
        remote = self._remote
        if remote.closed:
            raise ConnectionError("the connection is closed")
        if self._send_frame is not None:
            await self._send_frame(data)
            return
        self._route(data, event, stream, after)

    def _route(
        self,
        data: bytes,
        event: int | None,
        stream: str | None = None,
        after: After = (),
    ) -> None:
        remote = self._remote
        try:
            remote.route(data, event, stream, after)
        except LimitExceeded as error:
            _log.warning("closing ACP connection %s: %s", remote.id, error)
            asyncio.get_running_loop().create_task(remote.close())
            raise ConnectionError(str(error)) from None

    async def close(self) -> None:
        await self._remote.close()


class Server(Protocol):
    """What a profile (``http_profile``, ``websocket_profile``) needs of the app serving
    it (``app.AcpApp``)."""

    routing: Routing
    limits: RemoteLimits
    max_depth: int
    max_message_bytes: int
    connections: dict[str, RemoteConnection]

    def admission(self, request: Any) -> int | None: ...

    def register(
        self, *, websocket: bool, address: str | None = None
    ) -> RemoteConnection: ...

    def start_agent(
        self,
        remote: RemoteConnection,
        transport: ServerTransport,
        host: Host | None = None,
    ) -> None: ...

    def resumed_host(self, message: dict[str, Any]) -> Host | bool | None: ...
