"""The Streamable HTTP profile of the remote server: POSTs in, server-sent event streams
out, DELETE to end a connection.

Support code: it knows no method of the protocol (the routing rules come with the app,
as a ``Routing``). ``initialize`` is answered ``200`` with the JSON answer and the
``Acp-Connection-Id`` header; every other POST ``202``; the agent's messages go on
long-lived SSE streams opened with GET, one for the connection and one per session
(``Acp-Session-Id``), each event with its ``id:`` on a resumable connection (a GET with
``Last-Event-ID`` replays the events after it) and where it stands in the order the
agent sent (``server_connection.Outbox.head``). Where the RFD is silent, or where it and
the TypeScript SDK's ``AcpServer`` disagree, it does what the SDK does
(``docs/remote.md`` lists each case).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from typing import Any

from ..connection.log_ids import logger
from ..resume.host import Host
from ..resume.vocabulary import lost_answer, unknown_token
from ..wire.codec import Unreadable, decode
from ..wire.messages import id_key
from ..wire.rpc import Json
from .asgi import (
    Disconnected,
    Receive,
    Request,
    Send,
    TooLarge,
    read_body,
    respond,
    until_disconnect,
)
from .server_connection import (
    LimitExceeded,
    OutboundStream,
    RemoteConnection,
    Server,
    ServerTransport,
)

__all__ = ["serve_http"]

_log = logger(__name__)

_BATCH = {
    "jsonrpc": "2.0",
    "id": None,
    "error": {"code": -32600, "message": "JSON-RPC batches are not supported"},
}
_ALLOW = {"Allow": "GET, POST, DELETE"}


async def serve_http(
    app: Server, request: Request, receive: Receive, send: Send
) -> None:
    """Answer one HTTP request that passed the app's checks."""
    if request.method == "POST":
        await _post(app, request, receive, send)
    elif request.method == "GET":
        await _get(app, request, receive, send)
    elif request.method == "DELETE":
        await _delete(app, request, send)
    else:
        await respond(send, 405, "Method Not Allowed", headers=_ALLOW)


def _connection(app: Server, request: Request) -> RemoteConnection | int:
    """The HTTP connection a request names, or its refusal (400, 404)."""
    if request.connection_id is None:
        return 400
    remote = app.connections.get(request.connection_id)
    if remote is None or remote.closed or remote.websocket:
        return 404
    return remote


async def _post(app: Server, request: Request, receive: Receive, send: Send) -> None:
    body = await _body(app, request, receive, send)
    if body is None:
        return
    message = decode(body, app.max_depth)
    if type(message) is not dict:
        refusal = _malformed(message)
        await respond(send, 400, refusal[0], content_type=refusal[1])
        return
    if message.get("method") == app.routing.initialize and "id" in message:
        await _initialize(app, request, message, body, receive, send)
        return
    remote = _connection(app, request)
    if isinstance(remote, int):
        text = "Missing" if remote == 400 else "Unknown"
        await respond(send, remote, f"{text} Acp-Connection-Id")
        return
    remote.busy += 1
    try:
        await _forward(app, remote, request, message, body, receive, send)
    finally:
        remote.busy -= 1
        remote.touch()


async def _body(
    app: Server, request: Request, receive: Receive, send: Send
) -> bytes | None:
    kind = request.headers.get("content-type", "").split(";", 1)[0].strip()
    if kind.lower() != "application/json":
        await respond(send, 415, "Unsupported Media Type")
        return None
    length = request.headers.get("content-length", "")
    if length.isdigit() and int(length) > app.max_message_bytes:
        await respond(send, 413, "Payload Too Large")
        return None
    try:
        return await read_body(receive, app.max_message_bytes)
    except TooLarge:
        await respond(send, 413, "Payload Too Large")
    except Disconnected:
        pass
    return None


async def _forward(
    app: Server,
    remote: RemoteConnection,
    request: Request,
    message: dict[str, Any],
    body: bytes,
    receive: Receive,
    send: Send,
) -> None:
    try:
        route = _route(app, remote, request, message)
    except LimitExceeded as error:
        await respond(send, 400, str(error))
        return
    if isinstance(route, str):
        await respond(send, 400, route)
        return
    try:
        if "method" in message and "id" in message:  # the agent will answer
            if remote.closed or remote.outbox.full:  # (else there is room: no wait)
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
    app: Server, remote: RemoteConnection, request: Request, message: dict[str, Any]
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
    params: Json = message.get("params")
    named = params.get("sessionId") if type(params) is dict else None
    named = named if type(named) is str else None
    method = message.get("method")
    scoped = method in app.routing.session_scoped or named is not None
    if scoped and header is None:
        return "Missing Acp-Session-Id"
    if header is not None and named is not None and header != named:
        return "Mismatched Acp-Session-Id"
    remote.validate_id("the request id", message.get("id"))
    if method in app.routing.answered_on_connection:
        return (None,)
    return (header or named,)


async def _initialize(
    app: Server,
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
    refused = app.admission(request)
    if refused is not None:
        text = "Too many connections"
        await respond(send, refused, text + (" from this address" * (refused == 429)))
        return
    host = app.resumed_host(message)
    if isinstance(host, bool):
        text = unknown_token(message["id"])
        await respond(send, 200, text, content_type="application/json")
        return
    client = request.client[0] if request.client is not None else None
    remote = app.register(websocket=False, address=client)
    future: asyncio.Future[bytes] = asyncio.get_running_loop().create_future()
    remote.initialize = (id_key(message["id"]) or ("", None), future)
    remote.busy += 1
    try:
        answer = await _first_answer(app, remote, future, body, receive, host)
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
    await respond(send, 200, answer, content_type="application/json", headers=headers)


async def _first_answer(
    app: Server,
    remote: RemoteConnection,
    future: asyncio.Future[bytes],
    body: bytes,
    receive: Receive,
    host: Host | None,
) -> bytes:
    app.start_agent(remote, ServerTransport(remote), host)
    await remote.deliver(body)
    wait = asyncio.wait_for(future, app.limits.initialize_timeout)
    answer: bytes = await until_disconnect(receive, wait)
    return answer


async def _get(app: Server, request: Request, receive: Receive, send: Send) -> None:
    if request.headers.get("upgrade", "").lower() == "websocket":
        await respond(send, 426, "WebSocket upgrade is not available here")
        return
    if "text/event-stream" not in request.headers.get("accept", "").lower():
        await respond(send, 406, "Not Acceptable")
        return
    remote = _connection(app, request)
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
    host = remote.host if remote.host is not None and remote.host.negotiated else None
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
    remote.streamed = True
    remote.busy += 1
    try:
        await _pump(stream, receiver, receive, send, app.limits.keepalive)
    finally:
        remote.outbox.detach(stream, receiver)
        remote.busy -= 1
        remote.touch()


async def _delete(app: Server, request: Request, send: Send) -> None:
    if request.connection_id is None:
        await respond(send, 400, "Missing Acp-Connection-Id")
        return
    remote = app.connections.get(request.connection_id)
    if remote is None:
        await respond(send, 404, "Unknown Acp-Connection-Id")
        return
    remote.farewell = True
    await remote.close()
    await respond(send, 202)


def _malformed(message: Json | Unreadable) -> tuple[str, str]:
    """Why a POST body that is no JSON object is refused (body text, and its content
    type)."""
    text = "text/plain; charset=utf-8"
    if type(message) is Unreadable:
        return (message.error.message, text)
    if type(message) is list:
        return (json.dumps(_BATCH), "application/json")
    return ("Invalid JSON-RPC message", text)


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
            data, head = item
            chunk = head + b"data: " + data + b"\n\n" if data else b":\n\n"
            await send({"type": "http.response.body", "body": chunk, "more_body": True})
        await send({"type": "http.response.body", "body": b""})

    with contextlib.suppress(Disconnected, OSError):
        await until_disconnect(receive, events())
