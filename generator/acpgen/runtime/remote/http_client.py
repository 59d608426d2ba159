"""The remote client's Streamable HTTP transport (``httpx``), a ``transport.Transport``
under the same connection as stdio.

Support code: it knows no method of the protocol (the one it must name, the
``initialize`` that opens a Streamable HTTP connection, is given). It needs the
``remote`` extra (``deps``), through ``http_library``. What the peer sends is bounded
as on stdio: an SSE line longer than the message limit ends the stream (the lines are
split by the one line splitter, ``connection.lines``), and the messages waiting for the
connection are bounded in bytes (the SSE readers stop reading meanwhile).

Streamable HTTP, as the RFD and the TypeScript SDK's ``createHttpStream`` do it: the
first message (``initialize``) is POSTed alone and answered with ``200`` and the
``Acp-Connection-Id``; then the connection-scoped SSE stream is opened, and a session's
stream before its first message (and as soon as an answer names a new session); every
other message is POSTed (``202``) with the connection's id and, for a session's, its
``Acp-Session-Id``; closing DELETEs the connection. A stream or a POST that hears
nothing for ``silence`` seconds (the server sends a heartbeat comment on every waiting
stream more often: 10 s by default) ends the connection, as lost. A POST refused with
401, 403, 404 or 410 ends the connection (so does 502, 503 or 504 on a resumable one: a
balancer that cannot reach the worker); another refusal fails only that request (a
JSON-RPC error whose data has the status and the start of the body).

A refused connection raises :class:`~.refusal.Refused`: an HTTP error status answering
the ``initialize`` POST, a later POST refused with 401, 403, 404 or 410.

The agent's messages are handed over in the order the agent sent them, whatever stream
each came on, when the server states that order (ours does: each event's number on its
stream, ``id:`` or ``order:``, and what it comes after on the others, ``after:``): an
event waits until what it comes after, on the streams this client reads, was handed
over. So ``session/load``'s answer (on the connection's stream) follows its updates.

The POSTs (and the DELETE) and the SSE streams go on TCP connections of their own (two
``Requests``): over HTTP/2 httpcore reads a connection for one stream at a time, and a
POST's answer waited behind an idle stream's read until that stream's next event; and
a GOAWAY that ends every stream of a connection (hypercorn's at
``keep_alive_max_requests``) ends the POSTs' connection, not the streams'.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import json
from collections.abc import AsyncIterator, Mapping
from typing import Any

from ..connection.lines import split_lines
from ..connection.log_ids import logger
from ..connection.transport import Oversized
from ..wire.messages import glance, id_key
from ..wire.rpc import Json
from . import http_library as httpx
from .http_requests import CookieJar, Headers, Requests, http_url, post_failure
from .reach import Unreachable, reason_of
from .refusal import Refused, refused_by_response

__all__ = ["CookieJar", "HttpClientTransport", "dial", "http_url"]

_log = logger(__name__)
_GONE = frozenset({401, 403, 404, 410})
_GATEWAY = frozenset({502, 503, 504})
"""A balancer's answers when it cannot reach the worker: a resumable connection is
lost."""
_FAREWELL = 2.0
"""Seconds a DELETE closing the connection may take (a server that does not answer it
closes the connection after its idle time anyway)."""


class _Inbox:
    """Messages from the SSE streams, waiting for the connection (bounded in bytes)."""

    def __init__(self, max_bytes: int) -> None:
        self._items: collections.deque[bytes | Oversized | None] = collections.deque()
        self._size = 0
        self._max = max_bytes
        self._changed = asyncio.Event()

    async def put(self, item: bytes | Oversized | None) -> None:
        size = len(item) if isinstance(item, bytes) else 0
        while item is not None and self._items and self._size + size > self._max:
            self._changed.clear()
            await self._changed.wait()
        self._items.append(item)
        self._size += size
        self._changed.set()

    async def get(self) -> bytes | Oversized | None:
        while not self._items:
            self._changed.clear()
            await self._changed.wait()
        item = self._items[0]
        if item is not None:  # the end stays for every later reader
            self._items.popleft()
            self._size -= len(item) if isinstance(item, bytes) else 0
            self._changed.set()
        return item


class _Chunks:
    """An httpx response body as a reader of chunks (for the line splitter,
    ``connection.lines.split_lines``)."""

    def __init__(self, chunks: AsyncIterator[bytes]) -> None:
        self._chunks = chunks

    async def read(self, n: int = -1) -> bytes:
        return await anext(self._chunks, b"")


class HttpClientTransport:
    """ACP over Streamable HTTP: POSTs out, SSE streams in."""

    telemetry_name = "http"
    """``acp.transport`` (``telemetry``)."""

    def __init__(
        self,
        url: str,
        headers: Mapping[str, str],
        *,
        initialize: str,
        max_bytes: int,
        http2: bool | None = None,
        timeout: float = 120.0,
        resumable: bool = False,
        silence: float | None = 25.0,
        cookies: CookieJar | None = None,
    ) -> None:
        self.url = http_url(url)
        self._headers = dict(headers)
        self._jar = cookies or CookieJar()
        self._farewell_said = False
        self._resumable = resumable
        """Resumed when lost: a lost stream is opened again after its last event id,
        then ends the connection (resumed), not only that session's requests."""
        self._initialize = initialize
        self._max_bytes = max_bytes
        self._silence = silence
        limits = httpx.Timeout(timeout, read=None) if timeout else httpx.Timeout(None)
        self._heard = (
            limits if silence is None else httpx.Timeout(timeout or None, read=silence)
        )
        """A stream's or POST's time-outs: a read waits ``silence`` s (heartbeats)."""
        self.requests = Requests(
            self.url, headers, self._jar, http2=http2, timeout=limits
        )
        self._streaming = Requests(  # the SSE streams' own (module doc)
            self.url, headers, self._jar, http2=http2, timeout=limits
        )
        self._connection_header: Headers = []
        self.connection_id: str | None = None
        self.refusal: Refused | None = None
        """The refusal that ended the connection (a POST refused with 401, 403, 404 or
        410): the requests waiting fail with it."""
        self._inbox = _Inbox(2 * max_bytes)
        self._streams: dict[str | None, asyncio.Task[None]] = {}
        self._opened: dict[str | None, asyncio.Future[None]] = {}
        self._answer_routes: dict[tuple[str, Any], str] = {}
        """Agent request id -> the session whose stream it came on."""
        self._session_requests: dict[tuple[str, Any], tuple[str, Any]] = {}
        self.reopened = 0
        """Streams opened again after their last event id (``Last-Event-ID``)."""
        self._last_ids: dict[str | None, int] = {}
        """The id of the last event each stream brought (a resumable connection's)."""
        self._live: set[str | None] = set()
        """The streams read now (opening, or open)."""
        self._handed: dict[str | None, int] = {}
        """The number (on its stream) of the last event each stream handed over."""
        self._moved = asyncio.Event()
        """Set when a stream hands an event over, or ends."""
        self.ordered = False
        """The server states the order its messages were sent in (``order:`` or
        ``after:`` seen): then they are handed over in that order across streams;
        otherwise only each stream's own order holds."""
        self._closed = False

    # -- Transport

    async def receive(self, limit: int) -> bytes | Oversized | None:
        return await self._inbox.get()

    async def ready(self) -> None:
        return None

    async def send(self, data: bytes) -> None:
        if self._closed:
            raise ConnectionError("the connection is closed")
        message = glance(data)
        if self.connection_id is None:
            await self._post_initialize(message, data)
            return
        session = self._session_of(message)
        if session is not None:
            await self._open(session)
        headers = self._connection_header
        if session is not None:
            headers = [*headers, (b"acp-session-id", session.encode("ascii"))]
        key = (
            id_key(message.get("id"))
            if "method" in message and "id" in message
            else None
        )
        if key is not None and session is not None:
            self._session_requests[key] = (session, message.get("id"))
        try:
            response = await self.requests.post(data, headers, timeout=self._heard)
        except httpx.HTTPError as error:
            await self._end(f"POST failed: {error!r}")
            raise ConnectionError(post_failure(error)) from None
        if response.status_code != 202:
            await self._refused(message, key, response)

    async def close(self) -> None:
        await self._close(farewell=True)

    async def leave(self) -> bool:
        """Close for good: whether the server took the DELETE (it knew the
        connection)."""
        return await self._close(farewell=True)

    async def abandon(self) -> None:
        """Stop without DELETE: the agent's connection stays for a resume."""
        await self._close(farewell=False)

    async def farewell(self) -> bool:
        """DELETE the connection after :meth:`abandon` (the client left for good while
        its connection was lost: the agent need not wait for it); whether the server
        took it."""
        requests = Requests(
            self.url, self._headers, self._jar, http2=False, timeout=httpx.Timeout(5.0)
        )
        try:
            return await self._delete(requests)
        finally:
            await requests.aclose()

    async def _delete(self, requests: Requests) -> bool:
        """DELETE the connection; once more when a kept-alive socket turned out dead
        (DELETE is idempotent). Whether the server took it (2xx)."""
        if self.connection_id is None:
            return False
        headers = [(b"acp-connection-id", self.connection_id.encode("ascii"))]
        for attempt in (1, 2):
            try:
                response = await requests.send(
                    "DELETE", headers, timeout=httpx.Timeout(_FAREWELL)
                )
            except httpx.HTTPError as error:
                _log.debug("DELETE of the connection failed (%d): %r", attempt, error)
                continue
            return response.is_success
        return False

    async def _close(self, *, farewell: bool) -> bool:
        if self._closed:
            if farewell and not self._farewell_said:  # stopped, then closed for good
                self._farewell_said = True
                return await self.farewell()
            return False
        self._closed = True
        self._farewell_said = farewell
        self._moved.set()
        others = [t for t in self._streams.values() if t is not asyncio.current_task()]
        for task in others:
            task.cancel()
        await self._inbox.put(None)
        said = await self._delete(self.requests) if farewell else False
        await asyncio.gather(*others, return_exceptions=True)
        with contextlib.suppress(Exception):
            async with asyncio.timeout(_FAREWELL):  # a silent connection: given up
                await self.requests.aclose()
        with contextlib.suppress(Exception):
            async with asyncio.timeout(_FAREWELL):
                await self._streaming.aclose()
        return said

    # -- sending

    async def _post_initialize(self, message: dict[str, Any], data: bytes) -> None:
        if message.get("method") != self._initialize:
            raise ConnectionError(
                f"the first message over Streamable HTTP is {self._initialize}"
            )
        try:
            response = await self.requests.post(data, [])
        except httpx.HTTPError as error:  # reached when the block was entered, not now
            raise Unreachable(
                self.url, "http", reason_of(error.__context__ or error)
            ) from None
        connection_id = response.headers.get("Acp-Connection-Id")
        if (
            response.status_code == 200
            and not connection_id
            and "error" in glance(response.content)
        ):
            await self._inbox.put(
                response.content
            )  # refused by a JSON-RPC error: its answer
            await self._inbox.put(None)
            return
        if response.status_code != 200:
            raise refused_by_response(
                self.url, "http", response.status_code, response.content
            )
        if not connection_id:
            raise ConnectionError(
                f"the answer to {self._initialize} has no Acp-Connection-Id"
            )
        if len(response.content) > self._max_bytes:
            raise ConnectionError(
                f"the {self._initialize} answer is larger than the message limit"
            )
        self.connection_id = connection_id
        self._connection_header = [
            (b"acp-connection-id", connection_id.encode("ascii"))
        ]
        await self._inbox.put(response.content)
        self._stream(None)

    def _session_of(self, message: dict[str, Any]) -> str | None:
        params: Json = message.get("params")
        session = params.get("sessionId") if type(params) is dict else None
        if type(session) is str:
            return session
        if "method" not in message:  # our answer to the agent: the session it asked on
            key = id_key(message.get("id"))
            return self._answer_routes.pop(key, None) if key else None
        return None

    async def _refused(
        self, message: dict[str, Any], key: Any, response: httpx.Response
    ) -> None:
        status, body = response.status_code, response.text[:8192]
        if self._resumable and status in _GATEWAY:
            # the balancer could not reach the worker (it died, or hangs): the
            # connection is lost, and the message is sent again once it is resumed (or
            # fails with the error that says to load the session again)
            await self._end(f"the gateway answered HTTP {status}")
            raise ConnectionError(f"HTTP {status} {body!r}")
        if status in _GONE or key is None:
            refusal = refused_by_response(self.url, "http", status, response.content)
            self.refusal = refusal
            await self._end(f"the server refused a message: HTTP {status} {body!r}")
            raise refusal
        self._session_requests.pop(key, None)
        await self._inbox.put(
            _error_answer(
                message.get("id"), f"HTTP {status}", {"status": status, "body": body}
            )
        )

    # -- receiving

    async def _open(self, session: str) -> None:
        """Open a session's stream (once) and wait until the server has accepted it; a
        stream the server (or a balancer) refused is opened once more, and if refused
        again the message is not sent (ConnectionError): its answer would wait on the
        server for a stream that never comes."""
        for _ in range(2):
            if session not in self._streams:
                self._stream(session)
            reader = self._streams[session]
            try:
                await asyncio.shield(self._opened[session])
                return
            except ConnectionError:
                # the refused stream's reader ends: the session's requests waiting fail
                # (or, resumable, the connection is resumed)
                await asyncio.wait({reader})
            if self._closed:
                raise ConnectionError("the connection is closed")
        raise ConnectionError(f"the stream of session {session} was refused")

    def _stream(self, session: str | None) -> None:
        self._live.add(session)
        opened = self._opened[session] = asyncio.get_running_loop().create_future()
        # a refusal nobody waits for (a stream opened on an answer) is not an error
        opened.add_done_callback(lambda f: f.cancelled() or f.exception())
        self._streams[session] = asyncio.ensure_future(self._read_stream(session))

    async def _read_stream(self, session: str | None) -> None:
        opened = self._opened[session]
        by_server = False
        try:
            by_server = await self._read_once(session, opened)
            # a resumable connection's stream ended: open it again after the last
            # event id it brought (SSE ``Last-Event-ID``), once; a stream that
            # brought none is resumed with the connection
            if self._resumable and not self._closed and session in self._last_ids:
                by_server = await self._read_once(session, None) or by_server
        except (httpx.HTTPError, ConnectionError) as error:
            _log.debug("the %s stream ended: %r", session or "connection", error)
        finally:
            if not opened.done():
                opened.set_exception(ConnectionError("the stream was refused"))
            self._live.discard(session)  # nothing waits for it any more
            self._moved.set()
            await self._stream_ended(session, by_server)

    async def _read_once(
        self, session: str | None, opened: asyncio.Future[None] | None
    ) -> bool:
        """Read one GET of the stream (a reopening when ``opened`` is None): whether
        the server ended it (its body ended whole, not cut)."""
        assert self.connection_id is not None
        headers = [(b"accept", b"text/event-stream"), *self._connection_header]
        if session is not None:
            headers.append((b"acp-session-id", session.encode("ascii")))
        if opened is None:
            headers.append((b"last-event-id", str(self._last_ids[session]).encode()))
            self.reopened += 1
        try:
            async with self._streaming.stream(headers, timeout=self._heard) as response:
                if response.status_code != 200:
                    raise ConnectionError(f"HTTP {response.status_code}")
                if opened is not None:
                    opened.set_result(None)
                await self._events(session, response)
                return True
        except httpx.HTTPError as error:
            _log.debug("the %s stream broke: %r", session or "connection", error)
        return False

    async def _events(self, session: str | None, response: httpx.Response) -> None:
        lines = split_lines(_Chunks(response.aiter_raw()), self._max_bytes + 16)
        data: list[bytes] = []
        event: int | None = None
        number: int | None = None
        after = b""
        async for line in lines:
            if isinstance(line, Oversized):
                raise ConnectionError("an SSE line is longer than the message limit")
            line = line.removesuffix(b"\r")
            if line.startswith(b"data:"):
                data.append(line[6:] if line[5:6] == b" " else line[5:])
            elif line.startswith(b"id:") and line[3:].strip().isdigit():
                event = int(line[3:].strip())
            elif line.startswith(b"order:") and line[6:].strip().isdigit():
                number = int(line[6:].strip())
                self.ordered = True
            elif line.startswith(b"after:"):
                after = line[6:]
                self.ordered = True
            elif not line and data:
                await self._arrived(session, b"\n".join(data), after)
                if event is not None:
                    last = self._last_ids.get(session, 0)
                    self._last_ids[session] = max(last, event)
                number = number if number is not None else event
                if number is not None:
                    self._handed[session] = max(self._handed.get(session, 0), number)
                self._moved.set()
                data, event, number, after = [], None, None, b""

    async def _in_turn(self, session: str | None, after: bytes) -> None:
        """Wait until the events an event comes after (``after:``, ``[[stream,
        number], ...]``) were handed over, of the streams this client reads; what does
        not come within ``silence`` seconds ends the stream, as a silent one."""
        waited = [
            (pair[0], pair[1])
            for pair in _pairs(after)
            if (pair[0] is None or type(pair[0]) is str)
            and type(pair[1]) is int
            and pair[0] != session
        ]

        def behind() -> bool:
            return not self._closed and any(
                stream in self._live and self._handed.get(stream, 0) < number
                for stream, number in waited
            )

        if not behind():
            return
        try:
            async with asyncio.timeout(self._silence):
                while behind():
                    self._moved.clear()
                    await self._moved.wait()
        except TimeoutError:
            raise ConnectionError(
                f"the events an event of the {session or 'connection'} stream comes "
                f"after did not come within {self._silence} s"
            ) from None

    async def _arrived(self, session: str | None, data: bytes, after: bytes) -> None:
        """Hand one event over, once what it comes after was (a stream its answer
        creates is opened first: what the agent sent on it before comes first)."""
        message = glance(data)
        if "method" in message and "id" in message and session is not None:
            key = id_key(message["id"])
            if key is not None:
                self._answer_routes[key] = session
        elif "method" not in message:
            key = id_key(message.get("id"))
            if key is not None:
                self._session_requests.pop(key, None)
            result: Json = message.get("result")
            created = result.get("sessionId") if type(result) is dict else None
            if (
                type(created) is str
                and created not in self._streams
                and not self._closed
            ):
                self._stream(created)
        if after:
            await self._in_turn(session, after)
        await self._inbox.put(data)

    async def _stream_ended(self, session: str | None, by_server: bool) -> None:
        if self._closed:
            return
        if session is None or self._resumable:
            if by_server:
                await self._others_end()
            await self._end(f"the {session or 'connection'} stream ended")
            return
        self._streams.pop(session, None)
        for key, (owner, request_id) in list(self._session_requests.items()):
            if owner == session:
                del self._session_requests[key]
                await self._inbox.put(
                    _error_answer(request_id, "the session stream ended", None)
                )

    async def _others_end(self) -> None:
        """A stream the server ended ends the connection, after what the other streams
        still bring: the server ends them all when it closes the connection (an agent
        that died: the errors of the requests it left, on their session's stream), and
        the client reads each apart. Waits until each ended, or brought nothing for
        ``silence`` seconds."""
        while self._live and not self._closed:
            self._moved.clear()
            try:
                async with asyncio.timeout(self._silence):
                    await self._moved.wait()
            except TimeoutError:
                return

    async def _end(self, why: str) -> None:
        _log.debug("ending the ACP connection: %s", why)
        if not self._closed:
            await self._close(farewell=not self._resumable)


def _pairs(after: bytes) -> list[list[Any]]:
    """The ``[stream, number]`` pairs of an ``after:`` line (none when unreadable)."""
    try:
        pairs: Json = json.loads(after)
    except ValueError:
        return []
    if type(pairs) is not list:
        return []
    found: list[list[Any]] = []
    for element in pairs:
        pair: Json = element
        if type(pair) is list and len(pair) == 2:
            found.append(pair)
    return found


async def dial(
    url: str,
    headers: Mapping[str, str],
    *,
    initialize: str,
    max_bytes: int,
    http2: bool | None,
    resumable: bool,
    silence: float,
    cookies: CookieJar,
) -> HttpClientTransport:
    """The ``"http"`` profile's opening (``transports.Dialer``): nothing is sent before
    the first message, ``initialize``, which opens the connection on the server."""
    return HttpClientTransport(
        url,
        headers,
        initialize=initialize,
        max_bytes=max_bytes,
        http2=http2,
        resumable=resumable,
        silence=silence,
        cookies=cookies,
    )


def _error_answer(request_id: Any, message: str, data: Any) -> bytes:
    error: dict[str, Any] = {"code": -32603, "message": message}
    if data is not None:
        error["data"] = data
    return json.dumps({"jsonrpc": "2.0", "id": request_id, "error": error}).encode()
