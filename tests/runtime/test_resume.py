"""Sessions outlive their connection (issue 22): the event log, the extension on the wire (stdio,
WebSocket, Streamable HTTP with ``Last-Event-ID``), plain ACP for a peer that does not negotiate it,
and the client's reconnection, against real uvicorn servers and a real agent process on pipes.

The fault trials (connections cut at random points of streamed turns, many seeded trials per
profile) are in ``test_resume_faults.py``.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
import websockets
from acp_bindings import PROTOCOL_VERSION, RequestError, builders
from acp_bindings._runtime.resume.event_log import Coalescing, EventLog
from acp_bindings._runtime.resume.vocabulary import Lost
from acp_bindings.remote import Reconnect, ResumeLimits, asgi_app, connect_agent
from acp_bindings.resume import COALESCING, EXTENSION, LOST, RESUME_SESSION

from tests.support.peers.raw import ROOT, RawPeer
from tests.support.remote import TIMEOUT, TurnAgent, TurnClient, expected, serving

pytestmark = pytest.mark.slow

RESUMABLE_AGENT = ROOT / "tests" / "support" / "peers" / "resumable_agent.py"
ASK = {EXTENSION: {"version": 1}}


def _chunk(text: str, session: str = "s") -> bytes:
    update = {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": text}}
    message = {"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": session, "update": update}}
    return json.dumps(message).encode()


def _texts(events: list[tuple[int, bytes]]) -> list[tuple[int, str, Any]]:
    out = []
    for number, data in events:
        params = json.loads(data)["params"]
        out.append((number, params["update"]["content"]["text"], params.get("_meta", {}).get(EXTENSION)))
    return out


# -- the event log


def test_events_are_numbered_per_stream_and_given_after_an_id() -> None:
    log = EventLog(ResumeLimits(), COALESCING)
    ids = [log.append(_chunk(str(n))) for n in range(5)]
    assert ids == [1, 2, 3, 4, 5]
    assert _texts(log.since(2)) == [(3, "2", None), (4, "3", None), (5, "4", None)]  # type: ignore[arg-type]
    assert log.since(5) == []
    assert log.since(6) == Lost(1, 5), "an id never sent is refused, not answered with nothing"


def test_a_log_past_its_bound_forgets_the_oldest_and_says_so() -> None:
    log = EventLog(ResumeLimits(max_events=3), COALESCING)
    for n in range(6):
        log.append(json.dumps({"jsonrpc": "2.0", "method": "x", "params": {"n": n}}).encode())
    assert log.count == 3
    assert log.since(2) == Lost(4, 6), "event 3 is gone: a resume after 2 would have a gap"
    assert [n for n, _ in log.since(3)] == [4, 5, 6]  # type: ignore[union-attr]


def test_a_log_forgets_events_older_than_its_age_bound() -> None:
    log = EventLog(ResumeLimits(max_age=10.0), COALESCING)
    log.append(_chunk("old"), now=0.0)
    log.append(_chunk("new"), now=5.0)
    assert log.since(0, now=12.0) == Lost(2, 2)
    assert _texts(log.since(1, now=12.0)) == [(2, "new", None)]  # type: ignore[arg-type]


def test_chunks_are_joined_only_past_the_bound_and_the_join_is_marked() -> None:
    log = EventLog(ResumeLimits(max_events=4), COALESCING)
    for n in range(3):
        log.append(_chunk(str(n)))
    assert log.joined == 0, "within the bound every chunk is kept as sent"
    for n in range(3, 10):
        log.append(_chunk(str(n)))
    assert log.count <= 4 and log.since(0) != Lost(1, 10)
    events = log.since(0)
    assert "".join(text for _, text, _ in _texts(events)) == "0123456789"  # type: ignore[arg-type]
    marks = [mark for _, _, mark in _texts(events) if mark]  # type: ignore[arg-type]
    assert marks and marks[0]["coalesced"][0] == 1, "a joined event says which ids it stands for"
    cut = _texts(log.since(3))  # type: ignore[arg-type]
    assert "".join(text for _, text, _ in cut) == "3456789", "a run cut at the id gives its rest"
    assert cut[0][2]["coalesced"][0] == 4


def test_chunks_of_different_shapes_or_kinds_are_not_joined() -> None:
    log = EventLog(ResumeLimits(max_events=2), COALESCING)
    log.append(_chunk("a", "s1"))
    log.append(_chunk("b", "s2"))  # another session id: another shape
    thought = json.loads(_chunk("c", "s2"))
    thought["params"]["update"]["sessionUpdate"] = "agent_thought_chunk"
    log.append(json.dumps(thought).encode())
    assert log.joined == 0 and log.since(0) == Lost(2, 3)


def test_coalescing_comes_from_the_schema() -> None:
    assert isinstance(COALESCING, Coalescing)
    assert {"agent_message_chunk", "agent_thought_chunk"} <= {kind for kind, _ in COALESCING.kinds}
    assert ("tool_call_update", "content") not in COALESCING.kinds


# -- the extension over stdio, raw bytes on real pipes


def _initialize(peer: RawPeer, meta: Any = ASK) -> dict[str, Any]:
    params = {"protocolVersion": PROTOCOL_VERSION, "_meta": meta} if meta else {"protocolVersion": PROTOCOL_VERSION}
    peer.send_message({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": params})
    answer: dict[str, Any] = peer.read()
    return answer


def _turn(peer: RawPeer, chunks: int) -> tuple[str, list[Any]]:
    peer.send_message({"jsonrpc": "2.0", "id": 1, "method": "session/new", "params": {"cwd": "/tmp", "mcpServers": []}})
    session = peer.read()["result"]["sessionId"]
    prompt = {"sessionId": session, "prompt": [{"type": "text", "text": f"stream {chunks}"}]}
    peer.send_message({"jsonrpc": "2.0", "id": 2, "method": "session/prompt", "params": prompt})
    return session, peer.read_until(lambda m: m.get("id") == 2)


def test_stdio_grants_the_extension_and_resumes_a_session_after_an_event_id() -> None:
    peer = RawPeer(RESUMABLE_AGENT)
    try:
        granted = _initialize(peer)["result"]["_meta"][EXTENSION]
        assert granted["version"] == 1 and len(granted["token"]) >= 32
        session, turn = _turn(peer, 10)
        assert len(turn) == 11, "ten chunks then the prompt's answer: events 1..11 of the session"
        resume = {"sessionId": session, "lastEventId": 4}
        peer.send_message({"jsonrpc": "2.0", "id": "r", "method": RESUME_SESSION, "params": resume})
        answer = peer.read()
        assert answer == {
            "jsonrpc": "2.0",
            "id": "r",
            "result": {"sessionId": session, "latestEventId": 11, "reasked": []},
        }
        again = [peer.read() for _ in range(7)]
        assert again == turn[4:], "exactly the events after 4, in order, as first sent"
    finally:
        assert peer.close() == 0


def test_stdio_joins_chunks_past_the_bound_and_the_client_can_tell() -> None:
    peer = RawPeer(RESUMABLE_AGENT, "4")
    try:
        _initialize(peer)
        session, turn = _turn(peer, 10)
        assert [m["params"]["update"]["content"]["text"] for m in turn[:10]] == [str(n) for n in range(10)]
        peer.send_message(
            {"jsonrpc": "2.0", "id": "r", "method": RESUME_SESSION, "params": {"sessionId": session, "lastEventId": 2}}
        )
        assert peer.read()["result"]["latestEventId"] == 11
        again = peer.read_until(lambda m: m.get("id") == 2)
        assert again[-1] == turn[-1], "the prompt's answer, as sent"
        texts = [m["params"]["update"]["content"]["text"] for m in again[:-1]]
        assert "".join(texts) == "23456789", "the chunks after event 2, joined, nothing lost or repeated"
        marks = [m["params"].get("_meta", {}).get(EXTENSION) for m in again[:-1]]
        assert marks[0] == {"coalesced": [3, 9]} and len(again) < 9, "joined: the client can tell"
    finally:
        assert peer.close() == 0


def test_stdio_says_when_the_events_asked_for_are_gone() -> None:
    peer = RawPeer(RESUMABLE_AGENT, "1")
    try:
        _initialize(peer)
        session, _ = _turn(peer, 10)
        peer.send_message(
            {"jsonrpc": "2.0", "id": "r", "method": RESUME_SESSION, "params": {"sessionId": session, "lastEventId": 2}}
        )
        error = peer.read()["error"]
        assert error["code"] == LOST == -32060
        assert "session/load" in error["message"]
        assert error["data"]["recover"] == "session/load" and error["data"]["lastEventId"] == 2
        assert error["data"]["latestEventId"] == 11 and error["data"]["firstEventId"] == 11
        peer.send_message({"jsonrpc": "2.0", "id": "b", "method": RESUME_SESSION, "params": {"sessionId": 5}})
        assert peer.read()["error"]["code"] == -32602, "a hostile resume gets the error the spec names"
    finally:
        assert peer.close() == 0


def test_stdio_without_the_extension_is_plain_acp() -> None:
    peer = RawPeer(RESUMABLE_AGENT)
    try:
        answer = _initialize(peer, meta=None)
        assert answer == {"jsonrpc": "2.0", "id": 0, "result": {"protocolVersion": PROTOCOL_VERSION}}
        _, turn = _turn(peer, 3)
        assert all(EXTENSION not in json.dumps(m) for m in turn)
        peer.send_message({"jsonrpc": "2.0", "id": "r", "method": RESUME_SESSION, "params": {"sessionId": "x"}})
        assert peer.read()["error"]["code"] == -32601, "not negotiated: the agent's own answer to an unknown method"
    finally:
        assert peer.close() == 0


# -- over the network


@pytest.fixture(scope="module")
def urls() -> Iterator[tuple[str, str, Any]]:
    """A resumable app and a plain one under uvicorn."""
    app = asgi_app(TurnAgent, resume=ResumeLimits(max_events=64))
    with serving(app) as resumable, serving(asgi_app(TurnAgent)) as plain:
        yield resumable, plain, app


async def _raw_ws_turn(url: str, meta: Any) -> list[str]:
    frames: list[str] = []
    async with websockets.connect(url.replace("http", "ws")) as socket:
        params = {"protocolVersion": PROTOCOL_VERSION, **({"_meta": meta} if meta else {})}
        await socket.send(json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": params}))
        frames.append(str(await socket.recv()))
        await socket.send(
            json.dumps({"jsonrpc": "2.0", "id": 1, "method": "session/new", "params": {"cwd": "/", "mcpServers": []}})
        )
        frames.append(str(await socket.recv()))
        session = json.loads(frames[-1])["result"]["sessionId"]
        prompt = {"sessionId": session, "prompt": [{"type": "text", "text": "stream 5"}]}
        await socket.send(json.dumps({"jsonrpc": "2.0", "id": 2, "method": "session/prompt", "params": prompt}))
        while '"id":2' not in frames[-1]:
            frames.append(str(await socket.recv()))
    return frames


def test_a_websocket_peer_that_does_not_negotiate_sees_plain_acp_byte_for_byte(urls: Any) -> None:
    resumable, plain, _ = urls
    got = asyncio.run(asyncio.wait_for(_raw_ws_turn(resumable, None), TIMEOUT))
    want = asyncio.run(asyncio.wait_for(_raw_ws_turn(plain, None), TIMEOUT))
    assert got == want and len(got) == 8


def test_an_unknown_token_is_refused_with_the_error_that_says_what_to_do(urls: Any) -> None:
    resumable, _, _ = urls
    meta = {EXTENSION: {"version": 1, "token": "not-a-token", "lastEventId": 0}}
    frames = asyncio.run(asyncio.wait_for(_raw_ws_turn_first(resumable, meta), TIMEOUT))
    error = json.loads(frames)["error"]
    assert error["code"] == LOST and error["data"] == {"recover": "session/load"}
    body = {"jsonrpc": "2.0", "id": 7, "method": "initialize", "params": {"protocolVersion": 1, "_meta": meta}}
    response = httpx.post(resumable, json=body, timeout=TIMEOUT)
    assert response.status_code == 200 and "acp-connection-id" not in response.headers
    assert response.json()["error"]["code"] == LOST and response.json()["id"] == 7


async def _raw_ws_turn_first(url: str, meta: Any) -> str:
    async with websockets.connect(url.replace("http", "ws")) as socket:
        params = {"protocolVersion": PROTOCOL_VERSION, "_meta": meta}
        await socket.send(json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": params}))
        return str(await socket.recv())


def _sse(lines: Iterator[str], count: int) -> list[tuple[int | None, Any]]:
    """``count`` events of an SSE stream: (id, message)."""
    events: list[tuple[int | None, Any]] = []
    event: int | None = None
    for line in lines:
        if line.startswith("id:"):
            event = int(line[3:])
        elif line.startswith("data:"):
            events.append((event, json.loads(line[5:])))
            event = None
            if len(events) == count:
                return events
    raise AssertionError(f"the stream ended after {len(events)} events")


def test_streamable_http_numbers_events_and_replays_after_last_event_id(urls: Any) -> None:
    resumable, _, _ = urls
    with httpx.Client(timeout=TIMEOUT) as http:
        body = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": 1, "_meta": ASK}}
        first = http.post(resumable, json=body)
        connection = {"Acp-Connection-Id": first.headers["acp-connection-id"]}
        assert first.json()["result"]["_meta"][EXTENSION]["token"]
        new = {"jsonrpc": "2.0", "id": 1, "method": "session/new", "params": {"cwd": "/", "mcpServers": []}}
        with http.stream("GET", resumable, headers={**connection, "Accept": "text/event-stream"}) as stream:
            assert http.post(resumable, json=new, headers=connection).status_code == 202
            ((number, answer),) = _sse(stream.iter_lines(), 1)
            assert number == 2, "the connection stream's second event (initialize's answer is the first)"
        session = {**connection, "Acp-Session-Id": answer["result"]["sessionId"], "Accept": "text/event-stream"}
        prompt = {"sessionId": answer["result"]["sessionId"], "prompt": [{"type": "text", "text": "stream 30"}]}
        with http.stream("GET", resumable, headers=session) as stream:
            request = {"jsonrpc": "2.0", "id": 2, "method": "session/prompt", "params": prompt}
            assert http.post(resumable, json=request, headers=session).status_code == 202
            turn = _sse(stream.iter_lines(), 31)
            assert [n for n, _ in turn] == list(range(1, 32))
        with http.stream("GET", resumable, headers={**session, "Last-Event-ID": "20"}) as stream:
            assert _sse(stream.iter_lines(), 11) == turn[20:], "the events after 20, with their ids, once"
        stale = http.get(resumable, headers={**session, "Last-Event-ID": "99"})
        assert stale.status_code == 410 and stale.json()["error"]["code"] == LOST
        assert http.get(resumable, headers={**session, "Last-Event-ID": "x"}).status_code == 400
        http.delete(resumable, headers=connection)


async def _turn_then_leave(url: str, profile: str) -> dict[str, Any]:
    client = TurnClient()
    async with connect_agent(url, client, transport=profile, reconnect=Reconnect()) as agent:  # type: ignore[arg-type]
        await agent.initialize(builders.initialize_request(PROTOCOL_VERSION))
        one = (await agent.new_session(builders.new_session_request("/tmp", []))).session_id
        done = await agent.prompt(builders.prompt_request(one, [builders.text_content_block("stream 40 permission")]))
        return {"stop": done.stop_reason, "chunks": client.chunks[one]}


@pytest.mark.parametrize("profile", ["ws", "http"])
def test_a_client_that_leaves_on_purpose_ends_its_agent(urls: Any, profile: str) -> None:
    resumable, _, app = urls
    report = asyncio.run(asyncio.wait_for(_turn_then_leave(resumable, profile), TIMEOUT))
    assert report == {"stop": "end_turn", "chunks": expected(40)}

    async def settled() -> None:
        while app.hosts.live:
            await asyncio.sleep(0.02)

    asyncio.run(asyncio.wait_for(settled(), 10.0))  # the server's loop closes it: no resumable agent is left


class _Waiting(TurnClient):
    """Never answers a permission request: the turn stays open."""

    async def request_permission(self, params: Any) -> Any:
        await asyncio.Event().wait()


def test_a_client_that_cannot_reconnect_fails_its_requests_with_what_to_do() -> None:
    server = serving(asgi_app(TurnAgent, resume=ResumeLimits()))
    url = server.__enter__()
    policy = Reconnect(initial_delay=0.01, max_delay=0.05, give_up_after=0.5, attempt_timeout=0.5)

    async def main() -> BaseException:
        async with connect_agent(url, _Waiting(), transport="ws", reconnect=policy) as agent:
            await agent.initialize(builders.initialize_request(PROTOCOL_VERSION))
            one = (await agent.new_session(builders.new_session_request("/tmp", []))).session_id
            text = [builders.text_content_block("permission")]
            prompt = asyncio.ensure_future(agent.prompt(builders.prompt_request(one, text)))
            await asyncio.sleep(0.3)  # the agent waits for the permission
            await asyncio.to_thread(server.__exit__, None, None, None)  # and its server goes away
            with pytest.raises(RequestError) as caught:
                await prompt
            return caught.value

    error = asyncio.run(asyncio.wait_for(main(), TIMEOUT))
    assert isinstance(error, RequestError) and error.code == LOST
    assert "could not be resumed" in str(error) and error.data["recover"] == "session/load"


async def _reattach_with(url: str, extra: dict[str, Any]) -> Any:
    """Open a resumable connection over WebSocket, drop it, and reattach naming its token with
    ``extra`` in the extension's ``_meta``; the answer to that ``initialize``."""
    async with websockets.connect(url.replace("http", "ws")) as socket:
        params = {"protocolVersion": PROTOCOL_VERSION, "_meta": ASK}
        await socket.send(json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": params}))
        token = json.loads(await socket.recv())["result"]["_meta"][EXTENSION]["token"]
        socket.transport.abort()  # lost, not closed: the agent waits for its client
    async with websockets.connect(url.replace("http", "ws")) as socket:
        meta = {EXTENSION: {"version": 1, "token": token, **extra}}
        params = {"protocolVersion": PROTOCOL_VERSION, "_meta": meta}
        await socket.send(json.dumps({"jsonrpc": "2.0", "id": 9, "method": "initialize", "params": params}))
        return json.loads(await socket.recv())


@pytest.mark.parametrize(
    ("extra", "code"),
    [
        ({"lastEventId": 1}, None),  # the initialize answer was handled: nothing to catch up
        ({"lastEventId": "1"}, LOST),  # not an id: nothing can follow it
        ({"lastEventId": 7}, LOST),  # never sent
        ({"lastEventId": 1, "handling": "x"}, None),  # not a list: ignored
    ],
)
def test_a_reattach_with_odd_values_gets_an_answer_and_the_server_goes_on(urls: Any, extra: Any, code: Any) -> None:
    resumable, _, _ = urls
    answer = asyncio.run(asyncio.wait_for(_reattach_with(resumable, extra), TIMEOUT))
    if code is None:
        assert answer["result"]["_meta"][EXTENSION]["received"] == 1 and answer["id"] == 9
    else:
        assert answer["error"]["code"] == code and answer["error"]["data"]["recover"] == "session/load"
    assert asyncio.run(asyncio.wait_for(_turn_then_leave(resumable, "ws"), TIMEOUT))["stop"] == "end_turn"
