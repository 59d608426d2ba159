"""The remote server: an ASGI application serving ACP on one endpoint with both profiles
of the RFD "Streamable HTTP & WebSocket Transport", one agent per connection.

Support code: it knows no method of the protocol (the method names its routing needs
come as a ``Routing`` from the package's schema) and needs no third-party package: any
ASGI server (uvicorn, hypercorn...) runs it. Where the RFD is silent, or where it and
the TypeScript SDK's ``AcpServer`` disagree, it does what the SDK does
(``docs/remote.md`` lists each case). Every request is checked, in this order,
before any agent code runs: the path (404), the ``Origin`` header when present (403
unless allowed: the DNS rebinding rule of MCP's Streamable HTTP), then the
``authorize`` hook (401 or 403).
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import json
import logging
import time
from collections.abc import Awaitable, Callable, Collection
from typing import Any

from ._asgi import (
    Disconnected,
    Receive,
    Request,
    Scope,
    Send,
    TooLarge,
    read_body,
    request_of,
    respond,
    until_disconnect,
)
from ._event_log import Coalescing, ResumeLimits
from ._remote_socket import serve_socket
from ._remote_state import (
    LimitExceeded,
    OutboundStream,
    RemoteConnection,
    RemoteLimits,
    Routing,
    ServerTransport,
    id_key,
)
from ._resume_host import Host, Hosts
from ._resume_wire import lost_answer, resume_request, unknown_token
from .codec import Unreadable, decode
from .transport import Transport

__all__ = ["AcpApp", "Authorize", "Connect"]

_log = logging.getLogger(__name__)

Connect = Callable[[Transport], Any]
"""Builds one agent's connection over a transport (``serve.attach_agent`` does)."""
Authorize = Callable[[Request], "bool | int | Awaitable[bool | int]"]
"""True to allow a request; False (403), 401 or 403 to refuse it."""

_BATCH = {
    "jsonrpc": "2.0",
    "id": None,
    "error": {"code": -32600, "message": "JSON-RPC batches are not supported"},
}


class AcpApp:
    """An ASGI application serving an agent per connection at ``path``."""

    def __init__(
        self,
        connect: Connect,
        routing: Routing,
        *,
        path: str = "/acp",
        authorize: Authorize | None = None,
        allowed_origins: Collection[str] = (),
        limits: RemoteLimits | None = None,
        max_message_bytes: int = 32 * 1024 * 1024,
        max_depth: int = 512,
        resume: ResumeLimits | None = None,
        coalescing: Coalescing | None = None,
    ) -> None:
        self._connect = connect
        self.routing = routing
        self.path = path
        self._authorize = authorize
        self._origins = frozenset(allowed_origins)
        self.limits = limits or RemoteLimits()
        self.max_message_bytes = max_message_bytes
        self.max_depth = max_depth
        self.connections: dict[str, RemoteConnection] = {}
        """The ACP connections served now, by ``Acp-Connection-Id``."""
        self.hosts = (
            Hosts(connect, resume, coalescing, routing, max_message_bytes)
            if resume is not None
            else None
        )
        """The resumable agents (``resume``) by token: they outlive their connection."""
        self._reaper: asyncio.Task[None] | None = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        kind = scope["type"]
        if kind == "lifespan":
            await self._lifespan(receive, send)
        elif kind == "websocket":
            if (await receive())["type"] != "websocket.connect":
                return
            request = request_of(scope)
            status = await self._refusal(request)
            if status is None and len(self.connections) >= self.limits.max_connections:
                status = 503
            if status is not None:
                await _deny_socket(scope, send, status)
                return
            remote = self._register(websocket=True)
            await serve_socket(self, remote, receive, send)
        elif kind == "http":
            request = request_of(scope)
            status = await self._refusal(request)
            if status is not None:
                await respond(send, status, _REASONS.get(status, ""))
                return
            await self._http(request, receive, send)

    async def close(self) -> None:
        """Close every connection (as at the ASGI server's shutdown)."""
        await asyncio.gather(*(c.close() for c in list(self.connections.values())))
        if self.hosts is not None:
            await self.hosts.close()
        if self._reaper is not None:
            self._reaper.cancel()

    # -- checks before anything else

    async def _refusal(self, request: Request) -> int | None:
        """The status refusing ``request`` (404, 403, 401, 500), or None."""
        if request.path != self.path:
            return 404
        origin = request.headers.get("origin")
        if origin is not None and origin not in self._origins:
            return 403
        if self._authorize is None:
            return None
        try:
            verdict = self._authorize(request)
            if inspect.isawaitable(verdict):
                verdict = await verdict
        except Exception:  # noqa: BLE001 - a failing hook refuses, logged here
            _log.exception("the authorize hook failed")
            return 500
        if verdict is True:
            return None
        return verdict if verdict in (401, 403) else 403

    # -- Streamable HTTP

    async def _http(self, request: Request, receive: Receive, send: Send) -> None:
        if request.method == "POST":
            await self._post(request, receive, send)
        elif request.method == "GET":
            await self._get(request, receive, send)
        elif request.method == "DELETE":
            await self._delete(request, send)
        else:
            await respond(send, 405, "Method Not Allowed", headers=_ALLOW)

    def _connection(self, request: Request) -> RemoteConnection | int:
        """The HTTP connection a request names, or its refusal (400, 404)."""
        if request.connection_id is None:
            return 400
        remote = self.connections.get(request.connection_id)
        if remote is None or remote.closed or remote.websocket:
            return 404
        return remote

    async def _post(self, request: Request, receive: Receive, send: Send) -> None:
        body = await self._body(request, receive, send)
        if body is None:
            return
        message = decode(body, self.max_depth)
        refusal = _malformed(message)
        if refusal is not None:
            await respond(send, 400, refusal[0], content_type=refusal[1])
            return
        if message.get("method") == self.routing.initialize and "id" in message:
            await self._initialize(request, message, body, receive, send)
            return
        remote = self._connection(request)
        if isinstance(remote, int):
            text = "Missing" if remote == 400 else "Unknown"
            await respond(send, remote, f"{text} Acp-Connection-Id")
            return
        remote.busy += 1
        try:
            await self._forward(remote, request, message, body, receive, send)
        finally:
            remote.busy -= 1
            remote.touch()

    async def _body(
        self, request: Request, receive: Receive, send: Send
    ) -> bytes | None:
        kind = request.headers.get("content-type", "").split(";", 1)[0].strip()
        if kind.lower() != "application/json":
            await respond(send, 415, "Unsupported Media Type")
            return None
        length = request.headers.get("content-length", "")
        if length.isdigit() and int(length) > self.max_message_bytes:
            await respond(send, 413, "Payload Too Large")
            return None
        try:
            return await read_body(receive, self.max_message_bytes)
        except TooLarge:
            await respond(send, 413, "Payload Too Large")
        except Disconnected:
            pass
        return None

    async def _forward(
        self,
        remote: RemoteConnection,
        request: Request,
        message: dict[str, Any],
        body: bytes,
        receive: Receive,
        send: Send,
    ) -> None:
        try:
            route = self._route(remote, request, message)
        except LimitExceeded as error:
            await respond(send, 400, str(error))
            return
        if isinstance(route, str):
            await respond(send, 400, route)
            return
        try:
            if "method" in message and "id" in message:  # the agent will answer
                await until_disconnect(receive, remote.wait_for_room())
                key = id_key(message["id"])
                if key is not None:
                    remote.pending_routes[key] = route[0]
            await remote.deliver(body)
        except Disconnected:
            return
        except ConnectionError:
            await respond(send, 404, "Unknown Acp-Connection-Id")
            return
        await respond(send, 202)

    def _route(
        self, remote: RemoteConnection, request: Request, message: dict[str, Any]
    ) -> tuple[str | None] | str:
        """The stream the answer goes to (a 1-tuple), or why the message is refused."""
        header = request.session_id
        remote.validate_id("Acp-Session-Id", header)
        if "method" not in message:  # the client answers the agent
            key = id_key(message.get("id"))
            session = remote.client_answer_routes.pop(key, None) if key else None
            if session is not None and header != session:
                return (
                    "Missing Acp-Session-Id"
                    if header is None
                    else "Mismatched Acp-Session-Id"
                )
            return (None,)
        params = message.get("params")
        named = params.get("sessionId") if type(params) is dict else None
        named = named if type(named) is str else None
        method = message.get("method")
        scoped = method in self.routing.session_scoped or named is not None
        if scoped and header is None:
            return "Missing Acp-Session-Id"
        if header is not None and named is not None and header != named:
            return "Mismatched Acp-Session-Id"
        remote.validate_id("the request id", message.get("id"))
        if method in self.routing.answered_on_connection:
            return (None,)
        return (header or named,)

    async def _initialize(
        self,
        request: Request,
        message: dict[str, Any],
        body: bytes,
        receive: Receive,
        send: Send,
    ) -> None:
        if request.connection_id is not None:
            await respond(send, 400, "Initialize not allowed on existing connection")
            return
        if message["id"] is None:
            await respond(send, 400, "Initialize request must include an ID")
            return
        if len(self.connections) >= self.limits.max_connections:
            await respond(send, 503, "Too many connections")
            return
        host = self.resumed_host(message)
        if isinstance(host, bool):
            text = unknown_token(message["id"])
            await respond(send, 200, text, content_type="application/json")
            return
        remote = self._register(websocket=False)
        future: asyncio.Future[bytes] = asyncio.get_running_loop().create_future()
        remote.initialize = (id_key(message["id"]) or ("", None), future)
        remote.busy += 1
        try:
            answer = await self._first_answer(remote, future, body, receive, host)
        except Disconnected:
            await remote.close()
            return
        except Exception as error:  # noqa: BLE001 - answered as the TypeScript SDK does
            _log.warning("initialize failed on %s: %r", remote.id, error)
            future.cancel()  # never awaited: the agent did not start
            await remote.close()
            failed = {"code": -32603, "message": "Initialize failed"}
            text = json.dumps({"jsonrpc": "2.0", "id": message["id"], "error": failed})
            await respond(send, 500, text, content_type="application/json")
            return
        finally:
            remote.busy -= 1
            remote.touch()
        headers = {"Acp-Connection-Id": remote.id}
        await respond(
            send, 200, answer, content_type="application/json", headers=headers
        )

    async def _first_answer(
        self,
        remote: RemoteConnection,
        future: asyncio.Future[bytes],
        body: bytes,
        receive: Receive,
        host: Host | None,
    ) -> bytes:
        self.start_agent(remote, ServerTransport(remote), host)
        await remote.deliver(body)
        wait = asyncio.wait_for(future, self.limits.initialize_timeout)
        answer: bytes = await until_disconnect(receive, wait)
        return answer

    async def _get(self, request: Request, receive: Receive, send: Send) -> None:
        if request.headers.get("upgrade", "").lower() == "websocket":
            await respond(send, 426, "WebSocket upgrade is not available here")
            return
        if "text/event-stream" not in request.headers.get("accept", "").lower():
            await respond(send, 406, "Not Acceptable")
            return
        remote = self._connection(request)
        if isinstance(remote, int):
            text = "Missing" if remote == 400 else "Unknown"
            await respond(send, remote, f"{text} Acp-Connection-Id")
            return
        try:
            remote.validate_id("Acp-Session-Id", request.session_id)
            stream = remote.outbox.stream(request.session_id)
        except LimitExceeded as error:
            status = 400 if "longer" in str(error) else 429
            await respond(send, status, str(error))
            return
        host = (
            remote.host if remote.host is not None and remote.host.negotiated else None
        )
        last = request.headers.get("last-event-id") if host is not None else None
        if stream.attached and last is None:
            await respond(send, 409, "Outbound stream already has an active receiver")
            return
        if last is not None and host is not None:
            if not last.isdigit() or len(last) > 18:
                await respond(send, 400, "Invalid Last-Event-ID")
                return
            lost = await host.replay(request.session_id, int(last), stream.replace)
            if lost is not None:
                text = lost_answer(request.session_id, int(last), lost)
                await respond(send, 410, text, content_type="application/json")
                return
        receiver = stream.take_over()
        remote.busy += 1
        try:
            await _pump(stream, receiver, receive, send, self.limits.keepalive)
        finally:
            remote.outbox.detach(stream, receiver)
            remote.busy -= 1
            remote.touch()

    async def _delete(self, request: Request, send: Send) -> None:
        if request.connection_id is None:
            await respond(send, 400, "Missing Acp-Connection-Id")
            return
        remote = self.connections.get(request.connection_id)
        if remote is None:
            await respond(send, 404, "Unknown Acp-Connection-Id")
            return
        remote.farewell = True
        await remote.close()
        await respond(send, 202)

    # -- connections

    def _register(self, *, websocket: bool) -> RemoteConnection:
        remote = RemoteConnection(self.limits, self.routing, websocket=websocket)
        self.connections[remote.id] = remote
        remote.on_close.append(lambda: self._forget(remote))
        if self._reaper is None or self._reaper.done():
            self._reaper = asyncio.get_running_loop().create_task(self._reap())
        return remote

    def _forget(self, remote: RemoteConnection) -> None:
        self.connections.pop(remote.id, None)

    def start_agent(
        self,
        remote: RemoteConnection,
        transport: ServerTransport,
        host: Host | None = None,
    ) -> None:
        """Create the connection's agent (the factory runs here) and serve it; with
        ``resume``, the agent of a new host, or ``host``'s, is carried over
        ``transport``."""
        loop = asyncio.get_running_loop()
        if self.hosts is None:
            remote.agent = self._connect(transport)
            remote.task = loop.create_task(_run(remote))
            return
        host = host or self.hosts.new()
        remote.host = host
        serving = host.serve(transport, deliberate=lambda: remote.farewell)
        remote.task = loop.create_task(serving)

    def resumed_host(self, message: dict[str, Any]) -> Host | bool | None:
        """The host an ``initialize`` resumes; None: it resumes none; False: the one it
        names is gone (or this app does not resume)."""
        asked = resume_request(message)
        if asked is None or "token" not in asked:
            return None
        found = self.hosts.get(asked["token"]) if self.hosts is not None else None
        return found if found is not None else False

    async def _reap(self) -> None:
        """Close HTTP connections left without stream or request for the idle time."""
        idle = self.limits.idle_timeout
        while self.connections:
            await asyncio.sleep(min(max(idle / 4, 0.05), 30.0))
            now = time.monotonic()
            for remote in list(self.connections.values()):
                quiet = not remote.websocket and remote.busy == 0
                if quiet and now - remote.last_seen > idle:
                    _log.info("closing idle ACP connection %s", remote.id)
                    await remote.close()

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await self.close()
                await send({"type": "lifespan.shutdown.complete"})
                return


async def _run(remote: RemoteConnection) -> None:
    try:
        await remote.agent.run()
    except Exception:  # noqa: BLE001 - one connection never stops the server
        _log.exception("ACP connection %s failed", remote.id)
    finally:
        await remote.close()


def _malformed(message: Any) -> tuple[str, str] | None:
    """Why a POST body is refused (body text, and its content type), or None."""
    text = "text/plain; charset=utf-8"
    if type(message) is Unreadable:
        return (message.error.message, text)
    if type(message) is list:
        return (json.dumps(_BATCH), "application/json")
    if type(message) is not dict:
        return ("Invalid JSON-RPC message", text)
    return None


async def _pump(
    stream: OutboundStream,
    receiver: int,
    receive: Receive,
    send: Send,
    keepalive: float,
) -> None:
    """Serve one SSE stream until it closes or its client goes away."""
    headers = [
        (b"content-type", b"text/event-stream"),
        (b"cache-control", b"no-cache"),
        (b"x-accel-buffering", b"no"),
    ]
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    # a comment at once: some servers (hypercorn over HTTP/2) send the headers only with
    # the first body bytes, and a client waits for them before it posts to the session
    await send({"type": "http.response.body", "body": b":\n\n", "more_body": True})

    async def events() -> None:
        while (item := await stream.take(keepalive, receiver)) is not None:
            data, event = item
            chunk = b"data: " + data + b"\n\n" if data else b":\n\n"
            if event is not None:
                chunk = b"id: %d\n" % event + chunk
            await send({"type": "http.response.body", "body": chunk, "more_body": True})
        await send({"type": "http.response.body", "body": b""})

    with contextlib.suppress(Disconnected, OSError):
        await until_disconnect(receive, events())


async def _deny_socket(scope: Scope, send: Send, status: int) -> None:
    """Refuse a WebSocket upgrade with ``status`` (or 403 where the server cannot)."""
    if "websocket.http.response" in scope.get("extensions", {}):
        reason = _REASONS.get(status, "").encode()
        start = {"type": "websocket.http.response.start", "status": status}
        await send({**start, "headers": [(b"content-type", b"text/plain")]})
        await send({"type": "websocket.http.response.body", "body": reason})
    else:
        await send({"type": "websocket.close", "code": 1008})


_ALLOW = {"Allow": "GET, POST, DELETE"}
_REASONS = {
    401: "Unauthorized",
    403: "Forbidden",
    404: "Not Found",
    500: "Internal Server Error",
    503: "Too many connections",
}
