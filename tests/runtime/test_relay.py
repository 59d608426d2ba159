"""The relay (issue 32, item 1): a stdio agent process served over both remote profiles by
``relay.relay_app`` under uvicorn, seen by raw clients (a ``websockets`` socket, ``httpx`` POSTs and
an SSE stream parsed by hand) so that every byte the client gets can be compared with what the agent
wrote. The agent is ``tests/support/peers/raw_stdio_agent.py``, a real process that writes exact bytes and
misbehaves on request: garbage, over-long lines, an endless line, exiting, hanging.

What must hold: messages pass byte for byte both ways, in order, unknown methods and members included;
what cannot be carried gets the JSON-RPC error the specification names (the agent's garbage -32700,
an over-long message -32600, an answer too large or an agent that died -32603 to the waiting
client request); the agent's process group ends whole when the connection ends; nothing is held
whole that the limits bound; the agent's stderr goes to the log, tagged by connection; the app's
checks (authorize, origin) come before any agent starts.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import random
import re
import signal
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import websockets.asyncio.client
from acp_bindings import PROTOCOL_VERSION, builders
from acp_bindings.connection import Limits
from acp_bindings.relay import relay_app
from acp_bindings.remote import Reconnect, RemoteLimits, ResumeLimits, connect_agent

from tests.support.faults import Proxy, draw_cuts
from tests.support.remote import PROFILES, TurnClient, expected, serving
from tests.support.tools import acpgen

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
AGENT = [sys.executable, str(ROOT / "tests" / "support" / "peers" / "raw_stdio_agent.py")]
LIMIT = 64 * 1024
TIMEOUT = 30.0
INITIALIZE = b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}'
INITIALIZED = (
    b'{"jsonrpc":"2.0", "id":1,"result":{"protocolVersion":1,  "agentCapabilities":{},"x-odd":[1.50,"\\u00e9",'
    b'{"z":1,"a":2}]}}'
)
"""The raw agent's answer to ``INITIALIZE``, byte for byte (a re-encoding would change it)."""


def request(request_id: int, method: str, params: Any = None) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params or {}}).encode()


def _app(**options: Any) -> Any:
    options.setdefault("limits", Limits(max_message_bytes=LIMIT))
    options.setdefault("grace", 0.5)
    return relay_app(options.pop("command", AGENT), **options)


class Raw:
    """A raw client of one profile: sends bytes, receives each message's bytes as they came."""

    def __init__(self, url: str, profile: str) -> None:
        self.url, self.profile = url, profile
        self.connection_id = ""
        self._ws: Any = None
        self._http: httpx.AsyncClient | None = None
        self._events: asyncio.Queue[bytes | None] = asyncio.Queue()
        self._stream: asyncio.Task[None] | None = None

    async def open(self, first: bytes = INITIALIZE) -> bytes:
        """Open the connection with ``first`` (an ``initialize``); the answer's bytes."""
        if self.profile == "ws":
            self._ws = await websockets.asyncio.client.connect(
                self.url.replace("http://", "ws://"), max_size=None, open_timeout=TIMEOUT, close_timeout=1.0
            )
            self.connection_id = self._ws.response.headers["acp-connection-id"]
            await self.send(first)
            return await self.receive()
        self._http = httpx.AsyncClient(timeout=TIMEOUT)
        answer = await self._http.post(self.url, content=first, headers={"content-type": "application/json"})
        assert answer.status_code == 200, answer.text
        self.connection_id = answer.headers.get("acp-connection-id", "")
        if self.connection_id:
            self._stream = asyncio.ensure_future(self._read_stream())
        return answer.content

    async def _read_stream(self) -> None:
        assert self._http is not None
        headers = {"accept": "text/event-stream", "acp-connection-id": self.connection_id}
        buffer = b""
        try:
            async with self._http.stream("GET", self.url, headers=headers, timeout=None) as response:
                assert response.status_code == 200
                async for chunk in response.aiter_raw():
                    buffer += chunk
                    while b"\n\n" in buffer:
                        event, buffer = buffer.split(b"\n\n", 1)
                        for line in event.split(b"\n"):
                            if line.startswith(b"data: "):
                                self._events.put_nowait(line[6:])
        except (httpx.HTTPError, OSError):
            pass
        finally:
            self._events.put_nowait(None)

    async def send(self, data: bytes) -> int:
        """Send one message; the HTTP status (202), or 0 over WebSocket."""
        if self._ws is not None:
            await self._ws.send(data.decode())
            return 0
        assert self._http is not None
        headers = {"content-type": "application/json", "acp-connection-id": self.connection_id}
        return (await self._http.post(self.url, content=data, headers=headers)).status_code

    async def receive(self, timeout: float = TIMEOUT) -> bytes | None:
        """The next message's bytes; None once the connection ended."""
        if self._ws is not None:
            try:
                frame = await asyncio.wait_for(self._ws.recv(), timeout)
            except websockets.ConnectionClosed:
                return None
            return frame.encode() if isinstance(frame, str) else frame
        return await asyncio.wait_for(self._events.get(), timeout)

    async def call(self, request_id: int, method: str, params: Any = None) -> dict[str, Any]:
        """Send a request; the answer to it (messages before it are skipped)."""
        assert await self.send(request(request_id, method, params)) in (0, 202)
        while True:
            data = await self.receive()
            assert data is not None, f"the connection ended before the answer to {method}"
            answer = json.loads(data)
            if answer.get("id") == request_id and "method" not in answer:
                return answer

    def stop_reading(self) -> None:
        """Read nothing more: the SSE stream goes (over WebSocket, frames are just never taken: the
        socket's own queue then stops reading)."""
        if self._stream is not None:
            self._stream.cancel()

    async def close(self) -> None:
        if self._ws is not None:
            await self._ws.close()
        if self._http is not None:
            if self.connection_id:
                with contextlib.suppress(httpx.HTTPError):
                    await self._http.delete(self.url, headers={"acp-connection-id": self.connection_id})
            if self._stream is not None:
                self._stream.cancel()
            await self._http.aclose()


@contextlib.asynccontextmanager
async def raw(url: str, profile: str) -> AsyncIterator[Raw]:
    client = Raw(url, profile)
    try:
        yield client
    finally:
        await client.close()


def _alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie does not)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rpartition(")")[2].split()[0] != "Z"


async def _gone(*pids: int, within: float = 20.0) -> bool:
    deadline = time.monotonic() + within
    while any(_alive(pid) for pid in pids):
        if time.monotonic() > deadline:
            return False
        await asyncio.sleep(0.05)
    return True


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    with serving(_app()) as served:
        yield served


# -- byte for byte ------------------------------------------------------------------------------


@pytest.mark.parametrize("profile", PROFILES)
def test_messages_pass_byte_for_byte_both_ways_in_order(url: str, profile: str) -> None:
    odd_request = b'{"id":2 , "jsonrpc":"2.0","method":"_vendor/unknown","params":{"b":1.50,"a":"\\u00e9","_meta":{}}}'
    lines = [f'{{"jsonrpc":"2.0","method":"_vendor/note","params":{{"n":{n}, "x":1.0e0}}}}' for n in range(200)]

    async def scenario() -> None:
        async with raw(url, profile) as client:
            assert await client.open() == INITIALIZED
            await client.send(odd_request)
            unknown = {"jsonrpc": "2.0", "id": 2, "result": {"method": "_vendor/unknown"}}
            assert json.loads(await client.receive() or b"") == unknown
            await client.send(request(3, "_raw/emit", {"lines": lines}))
            got = [await client.receive() for _ in range(len(lines) + 1)]
            assert got[:-1] == [line.encode() for line in lines]
            assert json.loads(got[-1] or b"")["result"] == {"emitted": 200}
            received = (await client.call(4, "_raw/received"))["result"]
            assert received[0].encode() == INITIALIZE and received[1].encode() == odd_request

    asyncio.run(scenario())


def test_a_line_break_in_a_client_frame_stays_one_line_for_the_agent(url: str) -> None:
    """JSON whitespace may be a line break (a WebSocket frame may hold one): the agent must read one line."""
    framed = b'{"jsonrpc":"2.0",\n"id":2,\r\n"method":"_vendor/multi-line"}'

    async def scenario() -> None:
        async with raw(url, "ws") as client:
            await client.open()
            await client.send(framed)
            assert json.loads(await client.receive() or b"") == {
                "jsonrpc": "2.0",
                "id": 2,
                "result": {"method": "_vendor/multi-line"},
            }
            received = (await client.call(3, "_raw/received"))["result"]
            assert received[1] == '{"jsonrpc":"2.0", "id":2,\r "method":"_vendor/multi-line"}'

    asyncio.run(scenario())


@pytest.mark.parametrize("profile", PROFILES)
def test_garbage_from_the_agent_is_answered_to_it_and_reaches_nobody(url: str, profile: str) -> None:
    lines = [
        "this is not JSON",
        '{"jsonrpc":"2.0","method":"_vendor/after","params":{}}',
        '{"jsonrpc":"2.0",\r"method":"_vendor/cr","params":{}}\r',  # JSON whitespace; a CRLF line end
        "[" * 600 + "]" * 600,  # deeper than the limit (512)
    ]

    async def scenario() -> None:
        async with raw(url, profile) as client:
            await client.open()
            answer = await client.call(2, "_raw/emit", {"lines": lines})
            assert answer["result"] == {"emitted": 4}
            received = [json.loads(line) for line in (await client.call(3, "_raw/received"))["result"][2:4]]
            assert [(r["id"], r["error"]["code"]) for r in received] == [(None, -32700), (None, -32600)]

        async with raw(url, profile) as client:  # and what the client saw, in order
            await client.open()
            await client.send(request(2, "_raw/emit", {"lines": lines}))
            assert await client.receive() == lines[1].encode()
            assert await client.receive() == b'{"jsonrpc":"2.0", "method":"_vendor/cr","params":{}}'
            assert json.loads(await client.receive() or b"")["id"] == 2

    asyncio.run(scenario())


# -- over-long messages ---------------------------------------------------------------------------


@pytest.mark.parametrize("profile", PROFILES)
def test_an_answer_too_large_fails_the_clients_request_and_a_large_notification_is_refused_to_the_agent(
    url: str, profile: str
) -> None:
    async def scenario() -> None:
        async with raw(url, profile) as client:
            await client.open()
            answer = await client.call(7, "_raw/huge", {"size": 3 * LIMIT})
            assert answer["error"]["code"] == -32603
            assert answer["error"]["data"] == {"reason": "the agent's answer is too large", "limit": LIMIT}
            assert (await client.call(8, "_raw/big-note", {"size": 2 * LIMIT}))["result"] == {}
            refusal = json.loads((await client.call(9, "_raw/received"))["result"][-2])
            assert refusal["error"]["code"] == -32600 and refusal["error"]["message"] == "Message too large"

    asyncio.run(scenario())


def test_a_client_message_too_large_is_refused_with_its_id(url: str) -> None:
    async def scenario() -> None:
        async with raw(url, "ws") as client:
            await client.open()
            await client.send(request(77, "_vendor/x", {"f": "q" * 2 * LIMIT}))
            refusal = json.loads(await client.receive() or b"")
            assert refusal["id"] == 77 and refusal["error"]["code"] == -32600
            assert (await client.call(78, "_vendor/still-there"))["result"] == {"method": "_vendor/still-there"}
        async with raw(url, "http") as client:  # the HTTP profile refuses the body itself
            await client.open()
            assert await client.send(request(77, "_vendor/x", {"f": "q" * 2 * LIMIT})) == 413

    asyncio.run(scenario())


def _rss() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    return 0


@pytest.mark.parametrize("profile", PROFILES)
def test_an_endless_line_is_never_held_and_the_agent_ends_with_the_connection(url: str, profile: str) -> None:
    size = 256 * 1024 * 1024

    async def scenario() -> None:
        async with raw(url, profile) as client:
            await client.open()
            pid = (await client.call(2, "_raw/child"))["result"]["self"]
            before = _rss()
            await client.send(request(3, "_raw/endless", {"size": size}))
            deadline = time.monotonic() + 60
            while _stdout_bytes_read(pid) < size and time.monotonic() < deadline:
                await asyncio.sleep(0.1)
            grown = _rss() - before
            assert _stdout_bytes_read(pid) >= size, "the relay stopped reading the agent"
            assert grown < 32 * 1024 * 1024, f"the relay's process grew by {grown} bytes"
            with pytest.raises(TimeoutError):  # nothing of it reached the client
                await client.receive(timeout=0.5)
        assert await _gone(pid), "the agent outlived its connection"

    asyncio.run(scenario())


def _stdout_bytes_read(pid: int) -> int:
    """Bytes the agent ``pid`` wrote (its ``wchar`` from /proc)."""
    try:
        for line in Path(f"/proc/{pid}/io").read_text().splitlines():
            if line.startswith("wchar:"):
                return int(line.split()[1])
    except OSError:
        return -1
    return 0


@pytest.mark.parametrize("profile", PROFILES)
def test_an_agent_flooding_a_client_that_reads_nothing_is_bounded_then_ended(profile: str) -> None:
    """The agent writes 128 MiB as fast as it can to a client that reads nothing: the relay holds what the
    remote limits allow (then the agent's writes wait), closes the stalled connection, ends the agent."""
    stalled = RemoteLimits(max_buffered_bytes=1 << 20, max_stream_bytes=1 << 19, stall_timeout=1.0)

    async def scenario(url: str) -> None:
        async with raw(url, profile) as client:
            await client.open()
            pid = (await client.call(2, "_raw/child"))["result"]["self"]
            client.stop_reading()
            before = _rss()
            await client.send(request(3, "_raw/flood", {"count": 4096, "size": 32 * 1024}))
            assert await _gone(pid, within=60.0), "the flooding agent outlived its stalled connection"
            grown = _rss() - before
            assert grown < 32 * 1024 * 1024, f"the relay's process grew by {grown} bytes"

    with serving(_app(remote_limits=stalled)) as url:
        asyncio.run(scenario(url))


def test_unanswered_requests_with_long_ids_are_not_held_by_the_relay() -> None:
    """A client may send many requests the agent never answers, with ids as long as a message: the relay
    carries them all, and keeps (for the error it owes them if the agent ends) at most
    ``Limits.max_running_requests`` of them, none with an id longer than ``RemoteLimits.max_id_length``.
    The connection's inbound buffer is 4 MiB here (the default, 64 MiB, may hold ~1,000 of these
    requests at once while the agent reads, which is not what this test measures: kept ids would be 94 MB)."""
    count, id_length = 1500, LIMIT - 1024

    async def scenario(url: str) -> None:
        async with raw(url, "ws") as client:
            await client.open()
            await client.send(request(2, "_raw/mute"))
            before = _rss()
            for n in range(count):
                long_id = f"{n}-".ljust(id_length, "i")
                await client.send(json.dumps({"jsonrpc": "2.0", "id": long_id, "method": "_vendor/x"}).encode())
            assert (await client.call(3, "_raw/received"))["result"] == count + 3  # every one reached the agent
            grown = _rss() - before
            assert grown < 32 * 1024 * 1024, f"the relay's process grew by {grown} bytes"

    with serving(_app(remote_limits=RemoteLimits(max_buffered_bytes=4 << 20))) as url:
        asyncio.run(scenario(url))


# -- the agent ends, hangs, cannot start ------------------------------------------------------------


@pytest.mark.parametrize("profile", PROFILES)
def test_an_agent_that_dies_fails_the_waiting_request_and_ends_the_connection(url: str, profile: str) -> None:
    async def scenario() -> None:
        async with raw(url, profile) as client:
            await client.open()
            answer = await client.call(5, "_raw/die", {"code": 3})
            assert answer["error"]["code"] == -32603
            assert answer["error"]["data"] == {"reason": "the agent ended", "exitCode": 3}
            assert await client.receive() is None  # the connection ended
            if profile == "http":
                assert await client.send(b'{"jsonrpc":"2.0","id":6,"method":"x"}') == 404

    asyncio.run(scenario())


@pytest.mark.parametrize("profile", PROFILES)
def test_the_agents_process_group_ends_whole_when_the_connection_ends(url: str, profile: str) -> None:
    async def scenario() -> None:
        async with raw(url, profile) as client:
            await client.open()
            result = (await client.call(2, "_raw/child"))["result"]
            assert _alive(result["pid"]) and _alive(result["self"])
        assert await _gone(result["pid"], result["self"])

    asyncio.run(scenario())


@pytest.mark.parametrize("profile", PROFILES)
def test_a_hung_agent_holds_only_its_connection_and_ends_with_it(url: str, profile: str) -> None:
    async def scenario() -> None:
        async with raw(url, profile) as client:
            await client.open()
            pid = (await client.call(2, "_raw/child"))["result"]["self"]
            await client.send(b'{"jsonrpc":"2.0","id":3,"method":"_raw/hang"}')
            for n in range(50):  # the agent reads none of these
                await client.send(request(10 + n, "x", {"p": "p" * 20000}))
            async with raw(url, profile) as other:  # the relay serves others at once
                assert await other.open() == INITIALIZED
        assert await _gone(pid), "the hung agent outlived its connection"

    asyncio.run(scenario())


@pytest.mark.parametrize("profile", PROFILES)
def test_an_unstartable_agent_has_its_initialize_answered(profile: str, caplog: pytest.LogCaptureFixture) -> None:
    async def scenario(url: str) -> None:
        async with raw(url, profile) as client:
            answer = json.loads(await client.open())
            assert answer["id"] == 1 and answer["error"]["code"] == -32603
            assert answer["error"]["data"] == {"reason": "the agent could not be started"}
            assert "no-such-agent" not in json.dumps(answer)  # the command is the server's business

    with serving(_app(command=["/no-such-agent/at-all"])) as url:
        asyncio.run(scenario(url))
    assert "cannot start the agent" in caplog.text


# -- the log, the checks ---------------------------------------------------------------------------


@pytest.mark.parametrize("profile", PROFILES)
def test_the_agents_stderr_goes_to_the_log_tagged_by_connection(
    url: str, profile: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)

    async def scenario() -> str:
        async with raw(url, profile) as client:
            await client.open()
            await client.call(2, "_raw/stderr", {"text": f"a line from the agent over {profile}"})
            return client.connection_id

    connection = asyncio.run(scenario())
    assert connection
    tagged = [r.getMessage() for r in caplog.records if f"a line from the agent over {profile}" in r.getMessage()]
    assert tagged == [f"connection {connection}: agent stderr: a line from the agent over {profile}"]


def test_authorize_and_origin_are_checked_before_any_agent_starts() -> None:
    app = _app(authorize=lambda request: 401 if request.headers.get("authorization") != "Bearer yes" else True)

    async def scenario(url: str) -> None:
        async with httpx.AsyncClient(timeout=TIMEOUT) as client:
            headers = {"content-type": "application/json"}
            assert (await client.post(url, content=INITIALIZE, headers=headers)).status_code == 401
            evil = {**headers, "authorization": "Bearer yes", "origin": "https://evil.example"}
            assert (await client.post(url, content=INITIALIZE, headers=evil)).status_code == 403
            with pytest.raises(websockets.InvalidStatus) as refused:
                await websockets.asyncio.client.connect(url.replace("http://", "ws://"))
            assert refused.value.response.status_code == 401
            assert app.pipes == set() and app.connections == {}
            good = {**headers, "authorization": "Bearer yes"}
            assert (await client.post(url, content=INITIALIZE, headers=good)).content == INITIALIZED

    with serving(app) as url:
        asyncio.run(scenario(url))


@pytest.mark.parametrize(("share", "status"), [(1.0, 503), (0.5, 429)])
def test_the_limits_of_the_app_hold_for_the_relay(share: float, status: int) -> None:
    """``max_connections`` (503 past it) and one address's share of them (429 past it: every
    connection here comes from 127.0.0.1)."""
    app = _app(remote_limits=RemoteLimits(max_connections=4 if share < 1 else 2, max_address_share=share))

    async def scenario(url: str) -> None:
        async with raw(url, "ws") as one, raw(url, "http") as two:
            await one.open()
            await two.open()
            async with httpx.AsyncClient(timeout=TIMEOUT) as client:
                headers = {"content-type": "application/json"}
                assert (await client.post(url, content=INITIALIZE, headers=headers)).status_code == status
            assert len(app.pipes) == 2

    with serving(app) as url:
        asyncio.run(scenario(url))


# -- resume through the relay, across cut connections ----------------------------------------------

TURN_AGENT = [sys.executable, str(ROOT / "tests" / "support" / "peers" / "turn_stdio_agent.py")]
RECONNECT = {"initial_delay": 0.02, "max_delay": 0.1, "give_up_after": 15.0, "attempt_timeout": 5.0}
SEEDS = 4


@pytest.mark.parametrize("profile", PROFILES)
def test_connect_agent_with_reconnect_resumes_through_the_relay_across_cut_connections(profile: str) -> None:
    """A resumable relay (``resume=``) numbers the stdio agent's events: a ``connect_agent`` client with
    ``reconnect`` sees every chunk of its turn once, in order, and its permission request answered, although
    the fault proxy cuts its connections 1 to 3 times inside the turn (seeded); then the agents end. Without
    ``resume`` the same trials fail (the client's turn is lost at the first cut)."""
    app = _app(command=TURN_AGENT, resume=ResumeLimits(detached_for=30.0))

    async def trial(url: str, seed: int) -> tuple[int, list[str], str]:
        rng = random.Random(32_100 + seed)
        chunks = rng.randrange(60, 200)
        async with Proxy(Proxy.address(url)) as proxy:
            client = TurnClient()
            reconnect = Reconnect(**RECONNECT)  # type: ignore[arg-type]
            async with connect_agent(proxy.url(), client, transport=profile, reconnect=reconnect) as agent:
                await agent.initialize(builders.initialize_request(PROTOCOL_VERSION))
                session = (await agent.new_session(builders.new_session_request("/tmp", []))).session_id
                proxy.plan(draw_cuts(rng, rng.randint(1, 3), chunks * 100))
                prompt = builders.prompt_request(session, [builders.text_content_block(f"stream {chunks} permission")])
                stop = (await asyncio.wait_for(agent.prompt(prompt), 60)).stop_reason
            assert proxy.planned == 0 and proxy.fired, f"seed {seed}: the cuts did not all happen"
            return chunks, client.chunks.get(session, []), stop

    async def scenario(url: str) -> None:
        for seed in range(SEEDS):
            chunks, seen, stop = await trial(url, seed)
            assert (seen, stop) == (expected(chunks), "end_turn"), f"seed {seed} over {profile}"
        deadline = time.monotonic() + 20
        while app.pipes and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        assert app.pipes == set(), "agents outlived the clients that left"

    with serving(app) as url:
        asyncio.run(scenario(url))


# -- python -m <package>.relay ---------------------------------------------------------------------


@contextlib.contextmanager
def relay_command(*args: str, env: dict[str, str] | None = None) -> Iterator[tuple[subprocess.Popen[str], str]]:
    """``python -m acp_bindings.relay --port 0 ARGS`` from the generated folder; its process and URL."""
    process = subprocess.Popen(
        [*acpgen("relay"), "--port", "0", *args],
        cwd=ROOT / "generated",
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, **(env or {})},
    )
    try:
        assert process.stderr is not None
        first = process.stderr.readline()
        found = re.search(r"at (http://\S+)", first)
        assert found, f"no URL on the first line: {first!r}"
        yield process, found.group(1)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def test_the_relay_command_serves_an_agent_and_stops_with_every_agent_on_sigterm() -> None:
    async def scenario(url: str) -> list[int]:
        pids = []
        for profile in PROFILES:
            async with raw(url, profile) as client:
                assert await client.open() == INITIALIZED
                await client.call(2, "_raw/stderr", {"text": f"hello from the agent over {profile}"})
                pids.append((await client.call(3, "_raw/child"))["result"]["pid"])
                pids.append(client.connection_id)  # type: ignore[arg-type]
        return pids

    with relay_command("--", *AGENT) as (process, url):

        async def held() -> list[Any]:
            found = await scenario(url)
            keep = Raw(url, "ws")  # a connection still open at SIGTERM: its agent ends too
            await keep.open()
            found.append((await keep.call(2, "_raw/child"))["result"]["pid"])
            process.send_signal(signal.SIGTERM)  # uvicorn shuts down gracefully, then raises the signal again
            assert await asyncio.to_thread(process.wait, 60) in (0, -signal.SIGTERM)
            return found

        ws_child, ws_id, http_child, http_id, kept_child = asyncio.run(held())
        log = process.stderr.read() if process.stderr else ""
    assert asyncio.run(_gone(ws_child, http_child, kept_child, within=5.0)), "an agent outlived the relay"
    assert f"connection {ws_id}: agent stderr: hello from the agent over ws" in log
    assert f"connection {http_id}: agent stderr: hello from the agent over http" in log


def test_the_relay_commands_first_line_shows_the_whole_agent_command() -> None:
    """Issue 45: the banner names the command it relays, every word of it, as a shell would take it."""
    import shlex

    command = [*AGENT, "--name", "my agent"]
    process = subprocess.Popen(
        [*acpgen("relay"), "--port", "0", "--", *command],
        cwd=ROOT / "generated", stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        text=True,
    )  # fmt: skip
    try:
        assert process.stderr is not None
        first = process.stderr.readline()
    finally:
        process.kill()
        process.wait()
    assert f"relaying `{shlex.join(command)}` at http://127.0.0.1:" in first, first


@pytest.mark.parametrize(("choice", "loop"), [("", "uvloop"), ("asyncio", "asyncio")])
def test_the_relay_command_runs_on_uvloop_when_installed_unless_acp_loop_says_asyncio(choice: str, loop: str) -> None:
    """Issue 33 item 2: the relay picks uvloop as ``run`` does; its first line names the loop it runs on."""
    pytest.importorskip("uvloop")  # the dev group installs it: a skip here is a broken environment
    process = subprocess.Popen(
        [*acpgen("relay"), "--port", "0", "--", *AGENT],
        cwd=ROOT / "generated", stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        text=True, env={**os.environ, "ACP_LOOP": choice},
    )  # fmt: skip
    try:
        assert process.stderr is not None
        first = process.stderr.readline()
        assert first.rstrip().endswith(f" on {loop}"), first
        found = re.search(r"at (http://\S+)", first)
        assert found, first

        async def served() -> None:
            async with raw(found.group(1), "ws") as client:
                assert await client.open() == INITIALIZED

        asyncio.run(served())
    finally:
        process.kill()
        process.wait()


def test_the_relay_command_refuses_an_unknown_acp_loop_with_a_clear_line() -> None:
    done = subprocess.run(
        [*acpgen("relay"), "--port", "0", "--", *AGENT],
        cwd=ROOT / "generated", capture_output=True, text=True, timeout=30,
        env={**os.environ, "ACP_LOOP": "trio"},
    )  # fmt: skip
    assert done.returncode == 2
    assert "ACP_LOOP is 'auto', 'uvloop' or 'asyncio', not 'trio'" in done.stderr
    assert "Traceback" not in done.stderr


def test_the_relay_command_is_resumable_and_authorizes_with_a_bearer_token() -> None:
    async def scenario(url: str) -> None:
        async with httpx.AsyncClient(timeout=TIMEOUT) as client:
            headers = {"content-type": "application/json"}
            assert (await client.post(url, content=INITIALIZE, headers=headers)).status_code == 401
            asking = request(1, "initialize", {"protocolVersion": 1, "_meta": {"acpgen/resume": {"version": 1}}})
            authorized = {**headers, "authorization": "Bearer s3cret"}
            answer = await client.post(url, content=asking, headers=authorized)
            assert len(answer.json()["result"]["_meta"]["acpgen/resume"]["token"]) >= 32  # resumable: granted
            await client.delete(url, headers={**authorized, "acp-connection-id": answer.headers["acp-connection-id"]})
        bearer = {"Authorization": "Bearer s3cret"}
        for profile in PROFILES:
            client = TurnClient()
            reconnect = Reconnect(**RECONNECT)  # type: ignore[arg-type]
            async with connect_agent(url, client, transport=profile, headers=bearer, reconnect=reconnect) as agent:
                await agent.initialize(builders.initialize_request(PROTOCOL_VERSION))
                session = (await agent.new_session(builders.new_session_request("/tmp", []))).session_id
                prompt = builders.prompt_request(session, [builders.text_content_block("stream 5")])
                assert (await agent.prompt(prompt)).stop_reason == "end_turn"
                assert client.chunks[session] == ["0", "1", "2", "3", "4"]

    token = {"RELAY_TOKEN": "s3cret"}
    with relay_command("--resume", "--token-env", "RELAY_TOKEN", "--", *TURN_AGENT, env=token) as (_, url):
        asyncio.run(scenario(url))


@pytest.mark.parametrize(
    ("args", "says"),
    [
        ([], "give the agent's command after --"),
        (["--", "/no/such/agent"], "cannot find the agent command '/no/such/agent' (no executable file there)"),
        (["--", "no-such-agent-here"], "cannot find the agent command 'no-such-agent-here' (not on PATH)"),
        (["--cwd", "/", "--", "./python"], "cannot find the agent command './python' (no executable file there)"),
        (["--token-env", "RELAY_TOKEN_UNSET", "--", sys.executable], "RELAY_TOKEN_UNSET: that variable is not set"),
    ],
)
def test_the_relay_command_refuses_bad_arguments_with_a_clear_line(args: list[str], says: str) -> None:
    done = subprocess.run(
        [*acpgen("relay"), *args],
        cwd=ROOT / "generated",
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
    )
    assert done.returncode == 2 and says in done.stderr, done.stderr


def test_a_detached_resumable_agent_ends_after_detached_for() -> None:
    """A client that negotiated resume and vanished (its TCP connection reset, no close frame): the agent
    waits for it ``detached_for`` seconds, then its process group ends."""
    app = _app(resume=ResumeLimits(detached_for=1.0))
    asking = request(1, "initialize", {"protocolVersion": 1, "_meta": {"acpgen/resume": {"version": 1}}})

    async def scenario(url: str) -> None:
        client = Raw(url, "ws")
        answer = json.loads(await client.open(asking))
        assert answer["result"]["_meta"]["acpgen/resume"]["token"]
        result = (await client.call(2, "_raw/child"))["result"]
        client._ws.transport.abort()  # vanished: no close frame
        assert await _gone(result["self"], result["pid"]), "the detached agent was never ended"
        deadline = time.monotonic() + 10
        while app.pipes and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        assert app.pipes == set()

    with serving(app) as url:
        asyncio.run(scenario(url))


def test_the_relay_command_refuses_websocket_compression() -> None:
    """A client that offers permessage-deflate gets a socket without it: compressed, a message of the
    32 MiB limit is about 32 KiB on the wire, and one read of a socket may then hold eight of them
    (measured with uvicorn's default: 20 such messages took the server from 49 to 682 MiB)."""

    async def scenario(url: str) -> str | None:
        async with websockets.asyncio.client.connect(
            url.replace("http://", "ws://"), compression="deflate", open_timeout=TIMEOUT
        ) as socket:
            await socket.send(INITIALIZE.decode())
            assert (await asyncio.wait_for(socket.recv(), TIMEOUT)).encode() == INITIALIZED
            offered = socket.request.headers.get("sec-websocket-extensions", "")
            assert "permessage-deflate" in offered, offered
            extensions: str | None = socket.response.headers.get("sec-websocket-extensions")
            return extensions

    with relay_command("--", *AGENT) as (_, url):
        assert asyncio.run(scenario(url)) is None
