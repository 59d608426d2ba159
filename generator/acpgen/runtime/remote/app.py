"""The remote server: an ASGI application serving ACP on one endpoint with both profiles
of the RFD "Streamable HTTP & WebSocket Transport", one agent per connection.

Support code: it knows no method of the protocol (the method names its routing needs
come as a ``Routing`` from the package's schema) and needs no third-party package: any
ASGI server (uvicorn, hypercorn...) runs it. Where the RFD is silent, or where it and
the TypeScript SDK's ``AcpServer`` disagree, it does what the SDK does
(``docs/remote.md`` lists each case). Every request is checked, in this order,
before any agent code runs: the path (404), the ``Origin`` header when present (403
unless allowed: the DNS rebinding rule of MCP's Streamable HTTP), then the
``authorize`` hook (401 or 403). The app then hands the request to its profile
(``http_profile``, ``websocket_profile``); it keeps the connections served (the
registry), the resumable agents (``resume.host.Hosts``) and closes the connections a
client left without a word (the reaper).
"""

from __future__ import annotations

import asyncio
import collections
import inspect
import signal
import threading
import time
from collections.abc import Awaitable, Callable, Collection
from typing import Any

from ..connection import telemetry
from ..connection.limits import Limits
from ..connection.log_ids import CONNECTION, logger
from ..connection.transport import Transport
from ..resume.event_log import Coalescing, ResumeLimits
from ..resume.host import Host, Hosts
from ..resume.vocabulary import resume_request
from ..wire.messages import Routing
from .asgi import Receive, Request, Scope, Send, request_of, respond
from .http_profile import serve_http
from .server_connection import RemoteConnection, RemoteLimits, ServerTransport
from .websocket_profile import serve_socket

__all__ = ["AcpApp", "Authorize", "Connect", "agent_app"]

_log = logger(__name__)

Connect = Callable[[Transport], Any]
"""Builds one agent's connection over a transport (``serve.attach_agent`` does)."""
Authorize = Callable[[Request], "bool | int | Awaitable[bool | int]"]
"""True to allow a request; False (403), 401 or 403 to refuse it."""


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
        self._addresses: collections.Counter[str] = collections.Counter()
        """Connections served now, by client address."""
        self.draining = False
        """A SIGTERM came: the health probe answers 404 until the connections end."""
        self._stop: Any = None
        """The SIGTERM handler the app took over (the ASGI server's), called to stop."""
        self._drain: asyncio.Task[None] | None = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        kind = scope["type"]
        if kind == "lifespan":
            await self._lifespan(receive, send)
        elif kind == "websocket":
            if (await receive())["type"] != "websocket.connect":
                return
            request = request_of(scope)
            status = await self._refusal(request) or self.admission(request)
            if status is not None:
                await _deny_socket(scope, send, status)
                return
            remote = self.register(websocket=True, address=_address(request))
            await serve_socket(self, remote, receive, send)
        elif kind == "http":
            request = request_of(scope)
            status = await self._refusal(request)
            if status is None and self.draining and _health_probe(request):
                status = 404  # HAProxy's http-check disable-on-404: no new clients
            if status is not None:
                await respond(send, status, _REASONS.get(status, ""))
                return
            await serve_http(self, request, receive, send)

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
            telemetry.add("refused", 1, {"acp.refusal": "origin"})
            return 403
        if self._authorize is None:
            return None
        try:
            verdict = self._authorize(request)
            if inspect.isawaitable(verdict):
                verdict = await verdict
        except Exception:  # noqa: BLE001 - a failing hook refuses, logged here
            _log.exception("the authorize hook failed")
            telemetry.add("refused", 1, {"acp.refusal": "authorization"})
            return 500
        if verdict is True:
            return None
        telemetry.add("refused", 1, {"acp.refusal": "authorization"})
        return verdict if verdict in (401, 403) else 403

    # -- connections

    def admission(self, request: Request) -> int | None:
        """The status refusing a new connection (503: the app is full; 429: the client's
        address holds its share already), or None."""
        status = None
        address = _address(request)
        if len(self.connections) >= self.limits.max_connections:
            status = 503
        elif (
            address is not None and self._addresses[address] >= self.limits.per_address
        ):
            _log.warning("refused a connection: %s holds its share", address)
            status = 429
        if status is not None:
            telemetry.add("refused", 1, {"acp.refusal": "limit"})
        return status

    def register(
        self, *, websocket: bool, address: str | None = None
    ) -> RemoteConnection:
        """A new connection, served from now on (and reaped when left idle or never
        opened), counted for its client's ``address``."""
        remote = RemoteConnection(self.limits, self.routing, websocket=websocket)
        self.connections[remote.id] = remote
        remote.address = address
        if address is not None:
            self._addresses[address] += 1
        remote.on_close.append(lambda: self._forget(remote))
        CONNECTION.set(remote.id)  # the log records of this request, and its tasks
        telemetry.count(self, *self.GAUGES)
        if self._reaper is None or self._reaper.done():
            self._reaper = asyncio.get_running_loop().create_task(self._reap())
        return remote

    GAUGES = ("acp.connections.open", "acp.agents.detached")
    """What the app reports (:meth:`gauge`) where the application measures."""

    def gauge(self, name: str) -> list[tuple[int, dict[str, str]]]:
        """The connections open, or the resumable agents waiting for their client, by
        profile (``telemetry``)."""
        profiles: collections.Counter[str] = collections.Counter()
        if name == "acp.connections.open":
            for remote in list(self.connections.values()):
                profiles[_profile(remote)] += 1
        elif self.hosts is not None:
            for host in list(self.hosts.live.values()):
                if host.detached_at is not None and host.client_side is None:
                    profiles[host.profile] += 1
        return telemetry.gauge(dict(profiles), "acp.profile")

    def _forget(self, remote: RemoteConnection) -> None:
        if self.connections.pop(remote.id, None) is None:
            return
        if remote.address is not None:
            self._addresses[remote.address] -= 1
            if self._addresses[remote.address] <= 0:
                del self._addresses[remote.address]

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
        host.profile = _profile(remote)
        serving = host.serve(transport, left_on_purpose=lambda: remote.farewell)
        remote.task = loop.create_task(serving)

    def resumed_host(self, message: dict[str, Any]) -> Host | bool | None:
        """The host an ``initialize`` resumes; None: it resumes none; False: the one it
        names is gone (or this app does not resume)."""
        asked = resume_request(message)
        if asked is None or "token" not in asked:
            return None
        found = self.hosts.get(asked["token"]) if self.hosts is not None else None
        if found is None:  # a token no agent holds: an unknown one, as the host counts
            telemetry.add("resumes", 1, {"acp.resume.outcome": "unknown"})
            return False
        return found

    async def _reap(self) -> None:
        """Close HTTP connections left without stream or request for the idle time, and
        those that never opened a stream for the open time."""
        idle, opening = self.limits.idle_timeout, self.limits.open_timeout
        while self.connections:
            await asyncio.sleep(min(max(min(idle, opening) / 4, 0.05), 30.0))
            now = time.monotonic()
            for remote in list(self.connections.values()):
                if remote.websocket or remote.busy > 0:
                    continue
                quiet = now - remote.last_seen
                if quiet > idle or (not remote.streamed and quiet > opening):
                    why = "idle" if remote.streamed else "never opened"
                    _log.info("closing ACP connection %s: %s", remote.id, why)
                    await remote.close()

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                self._take_sigterm()
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                self._give_back_sigterm()
                await self.close()
                await send({"type": "lifespan.shutdown.complete"})
                return

    # -- draining on SIGTERM

    def _take_sigterm(self) -> None:
        """Drain on SIGTERM before the ASGI server stops (its handler is called once the
        connections ended, or after ``drain_timeout``): running turns end, and the
        health probe answers 404 so that a balancer sends no new client. Only where the
        server runs in the main thread (where signals are handled)."""
        if threading.current_thread() is not threading.main_thread():
            return
        previous = signal.getsignal(signal.SIGTERM)
        if not callable(previous):
            return  # the server handles no SIGTERM: the process just ends
        loop = asyncio.get_running_loop()
        self._stop = previous

        def on_sigterm(number: int, frame: Any) -> None:
            loop.call_soon_threadsafe(self._sigterm, number, frame)

        signal.signal(signal.SIGTERM, on_sigterm)

    def _give_back_sigterm(self) -> None:
        main = threading.current_thread() is threading.main_thread()
        if self._stop is not None and main:
            signal.signal(signal.SIGTERM, self._stop)

    def _sigterm(self, number: int, frame: Any) -> None:
        stop = self._stop
        if self.draining or stop is None:  # a second SIGTERM: stop now
            if stop is not None:
                stop(number, frame)
            return
        self.draining = True
        _log.info("SIGTERM: draining %d ACP connections", len(self.connections))
        self._drain = asyncio.get_running_loop().create_task(
            self._drained(lambda: stop(number, frame))
        )

    async def _drained(self, stop: Callable[[], Any]) -> None:
        deadline = time.monotonic() + self.limits.drain_timeout
        while self.connections and time.monotonic() < deadline:
            await asyncio.sleep(0.1)
        _log.info("drained: %d ACP connections left, stopping", len(self.connections))
        stop()


def agent_app(
    connect: Connect,
    routing: Routing,
    coalescing: Coalescing | None,
    *,
    path: str,
    authorize: Authorize | None,
    allowed_origins: Collection[str],
    remote_limits: RemoteLimits | None,
    limits: Limits | None,
    resume: ResumeLimits | None,
) -> AcpApp:
    """The app of the generated ``remote.asgi_app``: ``connect`` builds each agent's
    connection (with ``limits``), whose message size and depth bound the app's reading
    too."""
    message = limits or Limits()
    return AcpApp(
        connect,
        routing,
        path=path,
        authorize=authorize,
        allowed_origins=allowed_origins,
        limits=remote_limits,
        max_message_bytes=message.max_message_bytes,
        max_depth=message.max_depth,
        resume=resume,
        coalescing=coalescing,
    )


async def _run(remote: RemoteConnection) -> None:
    try:
        await remote.agent.run()
    except Exception:  # noqa: BLE001 - one connection never stops the server
        _log.exception("ACP connection %s failed", remote.id)
    finally:
        await remote.close()


def _profile(remote: RemoteConnection) -> str:
    return "websocket" if remote.websocket else "http"


def _health_probe(request: Request) -> bool:
    """A GET of the app's path that opens no stream (answered 406 while serving): what
    a balancer's health check sends."""
    accept = request.headers.get("accept", "").lower()
    return (
        request.method == "GET"
        and "text/event-stream" not in accept
        and request.headers.get("upgrade", "").lower() != "websocket"
    )


def _address(request: Request) -> str | None:
    """The client address a connection counts for (None: the server did not say)."""
    return request.client[0] if request.client is not None else None


async def _deny_socket(scope: Scope, send: Send, status: int) -> None:
    """Refuse a WebSocket upgrade with ``status`` (or 403 where the server cannot)."""
    if "websocket.http.response" in scope.get("extensions", {}):
        reason = _REASONS.get(status, "").encode()
        start = {"type": "websocket.http.response.start", "status": status}
        await send({**start, "headers": [(b"content-type", b"text/plain")]})
        await send({"type": "websocket.http.response.body", "body": reason})
    else:
        await send({"type": "websocket.close", "code": 1008})


_REASONS = {
    401: "Unauthorized",
    403: "Forbidden",
    404: "Not Found",
    429: "Too many connections from this address",
    500: "Internal Server Error",
    503: "Too many connections",
}
