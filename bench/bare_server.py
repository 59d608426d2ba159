"""T5/T6's floor: the least an ACP server under uvicorn can do for the benchmark's client.

    python -m bench.bare_server   (prints {"port": N} once listening; stops when stdin closes)

A bare ASGI app, under uvicorn configured as ``bench.remote_server`` configures ours, that speaks
just enough of the RFD's two profiles for the generated ``connect_agent`` to run T5 and T6: it
reads each message's ``id`` and ``method`` (``json.loads``) and answers with fixed JSON, with no
validation, no agent, no limits, no resumption and no error answers. Over WebSocket: the upgrade
accepted with an ``Acp-Connection-Id``, a text frame answered by a text frame. Over Streamable
HTTP: ``initialize`` answered in its POST's body with an ``Acp-Connection-Id``, every other POST
``202`` with its answer as an SSE event on the connection's stream, or on the session's when its
params name one (each stream a GET, opened by the client; a DELETE ends them). What it costs is what uvicorn, its
HTTP and WebSocket protocols and one JSON read cost: a server of ours cannot spend less, so the TS
SDK's server against it is the most our server's ratio could reach with this client.
"""

from __future__ import annotations

import asyncio
import json
import socket
from collections.abc import Awaitable, Callable
from typing import Any

from bench.generated import bindings
from bench.remote_server import serve_uvicorn

Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]

RESULTS = {
    "initialize": b'{"protocolVersion":1,"agentCapabilities":{},"authMethods":[]}',
    "session/new": b'{"sessionId":"sess-bare-1"}',
}
"""The fixed results; any other method is answered ``{}`` (``session/set_mode``'s result)."""
CONNECTION = b"bare-1"


def answer(data: bytes) -> tuple[bytes, str | None]:
    """The answer line to one message, and the session its params name (if any)."""
    message = json.loads(data)
    params = message.get("params")
    session = params.get("sessionId") if isinstance(params, dict) else None
    result = RESULTS.get(message.get("method"), b"{}")
    return b'{"jsonrpc":"2.0","id":%s,"result":%s}' % (json.dumps(message["id"]).encode(), result), session


class Streams:
    """The open SSE streams' queues: the connection's (``None``) and each session's."""

    def __init__(self) -> None:
        self.queues: dict[str | None, asyncio.Queue[bytes]] = {}

    def of(self, session: str | None) -> asyncio.Queue[bytes]:
        return self.queues.setdefault(session, asyncio.Queue())


STREAMS = Streams()


async def app(scope: dict[str, Any], receive: Receive, send: Send) -> None:
    if scope["type"] == "websocket":
        await _websocket(receive, send)
    elif scope["type"] == "http":
        await _http(scope, receive, send)


async def _websocket(receive: Receive, send: Send) -> None:
    await receive()  # websocket.connect
    await send({"type": "websocket.accept", "headers": [(b"acp-connection-id", CONNECTION)]})
    while (event := await receive())["type"] == "websocket.receive":
        data = event.get("text")
        line, _ = answer(data.encode() if data is not None else event["bytes"])
        await send({"type": "websocket.send", "text": line.decode()})


async def _http(scope: dict[str, Any], receive: Receive, send: Send) -> None:
    headers = dict(scope["headers"])
    if scope["method"] == "GET":
        await _stream(STREAMS.of(headers[b"acp-session-id"].decode() if b"acp-session-id" in headers else None), send)
        return
    body = b""
    while True:
        event = await receive()
        body += event.get("body", b"")
        if not event.get("more_body"):
            break
    if scope["method"] != "POST":  # DELETE: the client leaves, its streams end
        for queue in STREAMS.queues.values():
            queue.put_nowait(b"")
        await _respond(send, 200, [], b"")
        return
    line, session = answer(body)
    if b"acp-connection-id" not in headers:  # initialize: answered in the body
        await _respond(send, 200, [(b"content-type", b"application/json"), (b"acp-connection-id", CONNECTION)], line)
        return
    await _respond(send, 202, [], b"")
    STREAMS.of(session).put_nowait(b"data: %s\n\n" % line)


async def _stream(queue: asyncio.Queue[bytes], send: Send) -> None:
    await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/event-stream")]})
    await send({"type": "http.response.body", "body": b"", "more_body": True})
    while event := await queue.get():
        await send({"type": "http.response.body", "body": event, "more_body": True})
    await send({"type": "http.response.body", "body": b""})


async def _respond(send: Send, status: int, headers: list[tuple[bytes, bytes]], body: bytes) -> None:
    headers = [*headers, (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


async def main() -> None:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(128)
    await serve_uvicorn(app, sock, force_exit=True)  # the SSE streams never end of themselves


if __name__ == "__main__":
    bindings("serve").run(main())  # uvloop when installed (ACP_LOOP=asyncio: not), as users' servers run
