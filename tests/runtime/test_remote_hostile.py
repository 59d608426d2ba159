"""Hostile HTTP and WebSocket input never wins (issue 21, item 4): each case sends what a hostile or
broken client sends to the ASGI app under a real uvicorn on a loopback port, and asserts the exact
status or close code; after each case a well-behaved client (its own connection) still plays a turn,
and no connection's messages reach another. Limits are set small so that the bounds show on state
(open connections, bytes held), never on time.
"""

from __future__ import annotations

import asyncio
import json
import socket
import uuid
from collections.abc import Awaitable, Callable, Iterator
from typing import Any

import httpx
import pytest
import websockets
from acp_bindings.connection import Limits
from acp_bindings.remote import RemoteLimits, Request, ResumeLimits, asgi_app
from websockets.asyncio.client import connect

from tests.support.remote import TIMEOUT, TurnAgent, serving

pytestmark = pytest.mark.slow

MAX_MESSAGE = 64 * 1024
WS_MAX = 256 * 1024
GOOD = {"Authorization": "Bearer good"}
ALLOWED_ORIGIN = "https://allowed.example"
INIT = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": 1}}
JSON = {"Content-Type": "application/json"}
created: list[TurnAgent] = []


def authorize(request: Request) -> bool | int:
    token = request.headers.get("authorization")
    if token is None:
        return 401
    return token == "Bearer good" or 403


def factory() -> TurnAgent:
    agent = TurnAgent()
    created.append(agent)
    return agent


LIMITS = RemoteLimits(
    max_connections=400,
    max_buffered_bytes=1024 * 1024,
    max_stream_bytes=256 * 1024,
    stall_timeout=1.0,
    idle_timeout=1.0,
    initialize_timeout=1.0,
    open_timeout=1.0,
    max_address_share=1.0,  # every case comes from one loopback address (the share: test_floods.py)
)


@pytest.fixture(scope="module", params=["plain", "resumable"])
def server(request: pytest.FixtureRequest) -> Iterator[tuple[str, Any]]:
    """The app, and the same app with resumable connections (issue 22): a peer that does not
    negotiate the extension must meet exactly the same answers."""
    app = asgi_app(
        factory,
        authorize=authorize,
        allowed_origins=[ALLOWED_ORIGIN],
        remote_limits=LIMITS,
        limits=Limits(max_message_bytes=MAX_MESSAGE),
        resume=ResumeLimits() if request.param == "resumable" else None,
    )
    with serving(app, ws_max_size=WS_MAX) as url:
        yield url, app


# -- helpers ---------------------------------------------------------------------------------------


def message(method: str, request_id: Any = None, **params: Any) -> dict[str, Any]:
    found: dict[str, Any] = {"jsonrpc": "2.0", "method": method, "params": params}
    if request_id is not None:
        found["id"] = request_id
    return found


async def http_connection(http: httpx.AsyncClient, url: str) -> str:
    answer = await http.post(url, json=INIT, headers=GOOD)
    assert answer.status_code == 200, answer.text
    return answer.headers["Acp-Connection-Id"]


async def events(http: httpx.AsyncClient, url: str, connection: str, session: str | None, into: list[Any]) -> None:
    headers = {**GOOD, "Accept": "text/event-stream", "Acp-Connection-Id": connection}
    if session is not None:
        headers["Acp-Session-Id"] = session
    async with http.stream("GET", url, headers=headers) as response:
        assert response.status_code == 200
        async for line in response.aiter_lines():
            if line.startswith("data: "):
                into.append(json.loads(line[6:]))


async def raw(url: str, data: bytes) -> bytes:
    """Send raw bytes on a fresh TCP connection; what the server answers before it closes."""
    port = int(url.split(":")[2].split("/")[0])
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(data)
    await writer.drain()
    answer = await reader.read(65536)
    writer.close()
    return answer


async def good_turn(url: str) -> None:
    """A well-behaved client plays a short turn on a connection of its own."""
    from acp_bindings.remote import connect_agent

    from tests.support.remote import TurnClient, play

    for profile in ("ws", "http"):
        client = TurnClient()
        async with connect_agent(url, client, transport=profile, headers=GOOD) as agent:  # type: ignore[arg-type]
            report = await play(agent, client, 5)
        assert report["chunks"] == ["0", "1", "2", "3", "4", "allowed"] and report["stops"] == ["end_turn", "cancelled"]


# -- the cases -------------------------------------------------------------------------------------

Case = Callable[[str, Any], Awaitable[None]]
CASES: dict[str, Case] = {}


def case(function: Case) -> Case:
    CASES[function.__name__] = function
    return function


async def _status(method: str, url: str, expected: int, **options: Any) -> httpx.Response:
    async with httpx.AsyncClient() as http:
        response = await http.request(method, url, **options)
    assert response.status_code == expected, (response.status_code, response.text)
    return response


@case
async def put_is_not_allowed(url: str, app: Any) -> None:
    response = await _status("PUT", url, 405, headers=GOOD)
    assert response.headers["allow"] == "GET, POST, DELETE"


@case
async def patch_is_not_allowed(url: str, app: Any) -> None:
    await _status("PATCH", url, 405, headers=GOOD, json=INIT)


@case
async def another_path_is_not_found(url: str, app: Any) -> None:
    await _status("POST", url.replace("/acp", "/other"), 404, headers={**GOOD, **JSON}, json=INIT)


@case
async def text_plain_is_unsupported(url: str, app: Any) -> None:
    await _status("POST", url, 415, headers={**GOOD, "Content-Type": "text/plain"}, content=json.dumps(INIT))


@case
async def no_content_type_is_unsupported(url: str, app: Any) -> None:
    await _status("POST", url, 415, headers=GOOD, content=json.dumps(INIT))


@case
async def not_json_is_a_bad_request(url: str, app: Any) -> None:
    await _status("POST", url, 400, headers={**GOOD, **JSON}, content=b"this is not json")


@case
async def truncated_json_is_a_bad_request(url: str, app: Any) -> None:
    await _status("POST", url, 400, headers={**GOOD, **JSON}, content=json.dumps(INIT)[:-5])


@case
async def invalid_utf8_is_a_bad_request(url: str, app: Any) -> None:
    await _status("POST", url, 400, headers={**GOOD, **JSON}, content=b'{"jsonrpc": "2.0", "method": "\xff"}')


@case
async def a_batch_is_refused_with_one_json_rpc_error(url: str, app: Any) -> None:
    response = await _status("POST", url, 400, headers={**GOOD, **JSON}, json=[INIT])
    assert response.json() == {
        "jsonrpc": "2.0",
        "id": None,
        "error": {"code": -32600, "message": "JSON-RPC batches are not supported"},
    }


@case
async def a_json_string_is_a_bad_request(url: str, app: Any) -> None:
    await _status("POST", url, 400, headers={**GOOD, **JSON}, json="initialize")


@case
async def too_deep_json_is_a_bad_request(url: str, app: Any) -> None:
    deep = '{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": ' + "[" * 5000 + "]" * 5000 + "}"
    await _status("POST", url, 400, headers={**GOOD, **JSON}, content=deep)


@case
async def a_claimed_oversized_body_is_refused_unread(url: str, app: Any) -> None:
    head = (
        "POST /acp HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer good\r\nContent-Type: application/json\r\n"
        f"Content-Length: {40 * 2**20}\r\n\r\n"
    )
    answer = await raw(url, head.encode() + b"{")
    assert answer.startswith(b"HTTP/1.1 413"), answer[:100]


@case
async def a_streamed_oversized_body_is_refused(url: str, app: Any) -> None:
    async def chunks() -> Any:
        for _ in range(4):
            yield b" " * MAX_MESSAGE

    await _status("POST", url, 413, headers={**GOOD, **JSON}, content=chunks())


@case
async def initialize_with_a_null_id_is_refused(url: str, app: Any) -> None:
    await _status("POST", url, 400, headers={**GOOD, **JSON}, json={**INIT, "id": None})


@case
async def initialize_on_an_existing_connection_is_refused(url: str, app: Any) -> None:
    async with httpx.AsyncClient() as http:
        connection = await http_connection(http, url)
        again = await http.post(url, json=INIT, headers={**GOOD, "Acp-Connection-Id": connection})
    assert again.status_code == 400


@case
async def a_message_without_connection_id_is_refused(url: str, app: Any) -> None:
    await _status("POST", url, 400, headers={**GOOD, **JSON}, json=message("session/new", 1, cwd="/", mcpServers=[]))


@case
async def a_forged_connection_id_is_unknown(url: str, app: Any) -> None:
    headers = {**GOOD, **JSON, "Acp-Connection-Id": str(uuid.uuid4())}
    await _status("POST", url, 404, headers=headers, json=message("session/new", 1, cwd="/", mcpServers=[]))


@case
async def a_garbage_connection_id_is_unknown(url: str, app: Any) -> None:
    headers = {**GOOD, **JSON, "Acp-Connection-Id": "../../etc/passwd"}
    await _status("POST", url, 404, headers=headers, json=message("session/new", 1, cwd="/", mcpServers=[]))


@case
async def a_session_message_without_session_id_is_refused(url: str, app: Any) -> None:
    async with httpx.AsyncClient() as http:
        connection = await http_connection(http, url)
        headers = {**GOOD, "Acp-Connection-Id": connection}
        prompt = message("session/prompt", 1, sessionId="py-1", prompt=[])
        assert (await http.post(url, json=prompt, headers=headers)).status_code == 400
        cancel = message("session/cancel", sessionId="py-1")
        assert (await http.post(url, json=cancel, headers=headers)).status_code == 400


@case
async def a_mismatched_session_id_is_refused(url: str, app: Any) -> None:
    async with httpx.AsyncClient() as http:
        connection = await http_connection(http, url)
        headers = {**GOOD, "Acp-Connection-Id": connection, "Acp-Session-Id": "py-2"}
        prompt = message("session/prompt", 1, sessionId="py-1", prompt=[])
        assert (await http.post(url, json=prompt, headers=headers)).status_code == 400


@case
async def an_over_long_session_id_is_refused(url: str, app: Any) -> None:
    async with httpx.AsyncClient() as http:
        connection = await http_connection(http, url)
        headers = {**GOOD, "Accept": "text/event-stream", "Acp-Connection-Id": connection, "Acp-Session-Id": "s" * 2000}
        assert (await http.get(url, headers=headers)).status_code == 400


@case
async def an_over_long_request_id_is_refused(url: str, app: Any) -> None:
    async with httpx.AsyncClient() as http:
        connection = await http_connection(http, url)
        headers = {**GOOD, "Acp-Connection-Id": connection}
        body = message("session/new", "i" * 2000, cwd="/", mcpServers=[])
        assert (await http.post(url, json=body, headers=headers)).status_code == 400


@case
async def a_stream_without_event_stream_accept_is_not_acceptable(url: str, app: Any) -> None:
    async with httpx.AsyncClient() as http:
        connection = await http_connection(http, url)
        headers = {**GOOD, "Accept": "application/json", "Acp-Connection-Id": connection}
        assert (await http.get(url, headers=headers)).status_code == 406


@case
async def a_stream_without_connection_id_is_refused(url: str, app: Any) -> None:
    await _status("GET", url, 400, headers={**GOOD, "Accept": "text/event-stream"})


@case
async def a_stream_of_an_unknown_connection_is_not_found(url: str, app: Any) -> None:
    headers = {**GOOD, "Accept": "text/event-stream", "Acp-Connection-Id": str(uuid.uuid4())}
    await _status("GET", url, 404, headers=headers)


@case
async def a_second_receiver_of_a_stream_is_a_conflict(url: str, app: Any) -> None:
    async with httpx.AsyncClient() as http:
        connection = await http_connection(http, url)
        first = asyncio.ensure_future(events(http, url, connection, None, []))
        await asyncio.sleep(0.2)
        headers = {**GOOD, "Accept": "text/event-stream", "Acp-Connection-Id": connection}
        assert (await http.get(url, headers=headers)).status_code == 409
        first.cancel()


@case
async def delete_without_connection_id_is_refused(url: str, app: Any) -> None:
    await _status("DELETE", url, 400, headers=GOOD)


@case
async def delete_of_an_unknown_connection_is_not_found(url: str, app: Any) -> None:
    await _status("DELETE", url, 404, headers={**GOOD, "Acp-Connection-Id": str(uuid.uuid4())})


@case
async def a_deleted_connection_is_gone(url: str, app: Any) -> None:
    async with httpx.AsyncClient() as http:
        connection = await http_connection(http, url)
        headers = {**GOOD, "Acp-Connection-Id": connection}
        assert (await http.delete(url, headers=headers)).status_code == 202
        body = message("session/new", 1, cwd="/", mcpServers=[])
        assert (await http.post(url, json=body, headers=headers)).status_code == 404
        assert connection not in app.connections


@case
async def no_credentials_is_unauthorized_before_any_agent_code(url: str, app: Any) -> None:
    before = len(created)
    await _status("POST", url, 401, headers=JSON, json=INIT)
    assert len(created) == before, "the agent factory ran for a refused request"


@case
async def wrong_credentials_are_forbidden(url: str, app: Any) -> None:
    before = len(created)
    response = await _status("POST", url, 403, headers={**JSON, "Authorization": "Bearer stolen"}, json=INIT)
    assert len(created) == before and "Acp-Connection-Id" not in response.headers


@case
async def a_foreign_origin_is_forbidden_and_the_allowed_one_served(url: str, app: Any) -> None:
    await _status("POST", url, 403, headers={**GOOD, **JSON, "Origin": "http://evil.example"}, json=INIT)
    await _status("POST", url, 200, headers={**GOOD, **JSON, "Origin": ALLOWED_ORIGIN}, json=INIT)


@case
async def another_connections_session_is_out_of_reach(url: str, app: Any) -> None:
    async with httpx.AsyncClient() as http:
        ours, theirs = await http_connection(http, url), await http_connection(http, url)
        seen: list[Any] = []
        spy = asyncio.ensure_future(events(http, url, theirs, "py-1", seen))
        listen = asyncio.ensure_future(events(http, url, ours, None, []))
        ours_seen: list[Any] = []
        ours_session = asyncio.ensure_future(events(http, url, ours, "py-1", ours_seen))
        await asyncio.sleep(0.2)
        headers = {**GOOD, "Acp-Connection-Id": ours}
        new = message("session/new", 1, cwd="/", mcpServers=[])
        assert (await http.post(url, json=new, headers=headers)).status_code == 202
        prompt = message("session/prompt", 2, sessionId="py-1", prompt=[{"type": "text", "text": "stream 3"}])
        assert (await http.post(url, json=prompt, headers={**headers, "Acp-Session-Id": "py-1"})).status_code == 202
        for _ in range(100):
            if any(m.get("id") == 2 for m in ours_seen):
                break
            await asyncio.sleep(0.05)
        for task in (spy, listen, ours_session):
            task.cancel()
    assert [m["params"]["update"]["content"]["text"] for m in ours_seen if "method" in m] == ["0", "1", "2"]
    assert seen == [], "another connection's session stream saw this connection's session"


@case
async def a_reader_that_never_drains_its_stream_is_cut_off(url: str, app: Any) -> None:
    async with httpx.AsyncClient() as http:
        connection = await http_connection(http, url)
        headers = {**GOOD, "Acp-Connection-Id": connection}
        assert (
            await http.post(url, json=message("session/new", 1, cwd="/", mcpServers=[]), headers=headers)
        ).status_code == 202
        port = int(url.split(":")[2].split("/")[0])
        _, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.transport.get_extra_info("socket").setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        get = (
            "GET /acp HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer good\r\nAccept: text/event-stream\r\n"
            f"Acp-Connection-Id: {connection}\r\nAcp-Session-Id: py-1\r\n\r\n"
        )
        writer.write(get.encode())  # and never read
        prompt = message("session/prompt", 2, sessionId="py-1", prompt=[{"type": "text", "text": "stream 100000"}])
        await http.post(url, json=prompt, headers={**headers, "Acp-Session-Id": "py-1"})
        remote = app.connections.get(connection)
        held = 0
        for _ in range(200):  # the stall time-out (1 s) closes the connection
            if remote is None or remote.closed:
                break
            held = max(held, remote.outbox.size)
            await asyncio.sleep(0.05)
        writer.close()
    assert connection not in app.connections
    assert held <= LIMITS.max_buffered_bytes + MAX_MESSAGE, held


@case
async def hundreds_of_abandoned_http_connections_are_reaped(url: str, app: Any) -> None:
    async with httpx.AsyncClient() as http:
        abandoned = [await http_connection(http, url) for _ in range(200)]
    assert any(c in app.connections for c in abandoned)
    for _ in range(100):  # idle time-out: 1 s
        if not any(c in app.connections for c in abandoned):
            break
        await asyncio.sleep(0.05)
    assert not any(c in app.connections for c in abandoned)


async def _socket(url: str, **options: Any) -> Any:
    return await connect(url.replace("http", "ws"), additional_headers=options.pop("headers", GOOD), **options)


async def _closed_with(ws: Any) -> int | None:
    with pytest.raises(websockets.ConnectionClosed):
        while True:
            await asyncio.wait_for(ws.recv(), TIMEOUT)
    return ws.close_code  # type: ignore[no-any-return]


@case
async def a_websocket_without_credentials_is_unauthorized(url: str, app: Any) -> None:
    with pytest.raises(websockets.InvalidStatus) as refused:
        await _socket(url, headers={})
    assert refused.value.response.status_code == 401


@case
async def a_websocket_from_a_foreign_origin_is_forbidden(url: str, app: Any) -> None:
    with pytest.raises(websockets.InvalidStatus) as refused:
        await _socket(url, origin="http://evil.example")
    assert refused.value.response.status_code == 403


@case
async def a_websocket_whose_first_message_is_not_initialize_is_closed_1002(url: str, app: Any) -> None:
    ws = await _socket(url)
    await ws.send(json.dumps(message("session/new", 1, cwd="/", mcpServers=[])))
    assert await _closed_with(ws) == 1002


@case
async def a_websocket_binary_frame_is_ignored_and_bad_json_answered(url: str, app: Any) -> None:
    async with await _socket(url) as ws:
        await ws.send(b"\x00\x01binary")
        await ws.send("not json")
        assert json.loads(await ws.recv())["error"]["code"] == -32700
        await ws.send(json.dumps(INIT))
        assert json.loads(await ws.recv())["result"]["protocolVersion"] == 1


@case
async def a_websocket_frame_beyond_the_server_limit_is_closed_1009(url: str, app: Any) -> None:
    ws = await _socket(url, max_size=None)
    await ws.send(json.dumps(INIT))
    await ws.recv()
    await ws.send(" " * (WS_MAX + 1))
    assert await _closed_with(ws) == 1009


@case
async def a_websocket_message_beyond_the_message_limit_is_answered_32600(url: str, app: Any) -> None:
    async with await _socket(url) as ws:
        await ws.send(json.dumps(INIT))
        await ws.recv()
        big = json.dumps({"jsonrpc": "2.0", "id": 7, "method": "session/new", "params": {"x": "y" * MAX_MESSAGE}})
        await ws.send(big)
        answer = json.loads(await ws.recv())
        assert answer["id"] == 7 and answer["error"]["code"] == -32600


@case
async def a_websocket_text_frame_of_invalid_utf8_is_closed_1007(url: str, app: Any) -> None:
    ws = await _socket(url)
    await ws.send(json.dumps(INIT))
    await ws.recv()
    ws.protocol.send_frame(websockets.frames.Frame(websockets.frames.Opcode.TEXT, b"\xff\xfe"))
    ws.send_data()
    assert await _closed_with(ws) == 1007


@case
async def a_second_initialize_on_a_websocket_is_answered_32600(url: str, app: Any) -> None:
    async with await _socket(url) as ws:
        await ws.send(json.dumps(INIT))
        await ws.recv()
        await ws.send(json.dumps({**INIT, "id": 9}))
        answer = json.loads(await ws.recv())
        assert answer["id"] == 9 and answer["error"]["code"] == -32600


@case
async def a_websocket_that_never_initializes_is_closed_1008(url: str, app: Any) -> None:
    ws = await _socket(url)
    assert await _closed_with(ws) == 1008


@case
async def hundreds_of_abandoned_websockets_are_cleaned_up(url: str, app: Any) -> None:
    before = len(app.connections)
    sockets = []
    for n in range(200):  # half initialized, half not
        sockets.append(await _socket(url))
        if n % 2:
            await sockets[-1].send(json.dumps(INIT))
    for ws in sockets:
        ws.transport.abort()  # no close frame: the TCP connection just drops
    for _ in range(100):
        if len(app.connections) <= before:
            break
        await asyncio.sleep(0.05)
    assert len(app.connections) <= before


def test_the_matrix_has_at_least_thirty_cases() -> None:
    assert len(CASES) >= 30, len(CASES)


@pytest.mark.parametrize("name", sorted(CASES))
def test_hostile_case(name: str, server: tuple[str, Any]) -> None:
    url, app = server

    async def scenario() -> None:
        await asyncio.wait_for(CASES[name](url, app), TIMEOUT)
        await asyncio.wait_for(good_turn(url), TIMEOUT)

    asyncio.run(scenario())
