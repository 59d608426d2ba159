"""Abandoned-connection floods (issue 32 item 0): what one peer opens and leaves cannot lock others out.

Real sockets to the app under uvicorn (``tests.remote.serving``). The flooder connects from another
loopback address (127.0.0.2) than the well-behaved client (127.0.0.1), so the app counts them apart,
as it counts two machines:

- ``initialize`` POSTs that never open a stream: beyond the address's share of the app's connections
  they are refused (429), and those admitted are closed after ``open_timeout``; a good client connects
  and plays its turn meanwhile (before: the flood took every slot, everyone got 503 for the 300 s idle
  time-out);
- WebSocket upgrades that never send ``initialize``: the same share, closed 1008 after ``open_timeout``;
- 500 WebSocket connections that negotiate resume and vanish: the agents waiting for their client stay
  within ``max_detached`` (the oldest closed first), newcomers too; a client of an evicted agent that
  comes back is told -32060 (recover with ``session/load``). Before: 501 agents stayed.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import Callable
from typing import Any

import httpx
import pytest
import websockets
from acp_bindings.remote import RemoteLimits, ResumeLimits, asgi_app, connect_agent
from websockets.asyncio.client import connect

from tests.support.remote import TurnAgent, TurnClient, expected, play, serving

pytestmark = pytest.mark.slow

FLOODER = "127.0.0.2"
INIT = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": 1}}
RESUMING_INIT = {**INIT, "params": {"protocolVersion": 1, "_meta": {"acpgen/resume": {"version": 1}}}}
LIMITS = RemoteLimits(max_connections=40, open_timeout=1.0)
"""A share of 0.5 (the default): 20 connections per address."""
WITHIN = 30.0
"""Seconds a bounded state may take to settle (the machine is shared: generous; nothing is timed)."""


def _settles(check: Callable[[], bool]) -> bool:
    deadline = time.monotonic() + WITHIN
    while not check():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def _from(app: Any, address: str) -> int:
    return sum(1 for remote in list(app.connections.values()) if remote.address == address)


async def good_turn(url: str, profile: str) -> dict[str, Any]:
    client = TurnClient()
    async with connect_agent(url, client, transport=profile) as agent:  # type: ignore[arg-type]
        return await asyncio.wait_for(play(agent, client, 5), WITHIN)


def test_initialize_posts_that_never_open_a_stream_cannot_lock_others_out() -> None:
    app = asgi_app(TurnAgent, remote_limits=LIMITS)

    async def flood(url: str) -> list[int]:
        transport = httpx.AsyncHTTPTransport(local_address=FLOODER, limits=httpx.Limits(max_connections=100))
        async with httpx.AsyncClient(transport=transport) as http:  # all at once (each expires in 1 s)
            answers = await asyncio.gather(*(http.post(url, json=INIT) for _ in range(LIMITS.max_connections)))
        return [answer.status_code for answer in answers]

    with serving(app) as url:
        statuses = asyncio.run(flood(url))
        assert statuses.count(200) == LIMITS.per_address == 20, statuses
        assert statuses.count(429) == 20, statuses
        assert _from(app, FLOODER) <= LIMITS.per_address
        for profile in ("http", "ws"):
            report = asyncio.run(good_turn(url, profile))
            assert report["chunks"] == expected(5) and report["stops"] == ["end_turn", "cancelled"], profile
        assert _settles(lambda: _from(app, FLOODER) == 0), f"{_from(app, FLOODER)} never-opened connections left"
        assert asyncio.run(flood(url)).count(200) == 20, "the address may connect again once its share is free"


def test_websockets_that_never_initialize_cannot_lock_others_out() -> None:
    app = asgi_app(TurnAgent, remote_limits=LIMITS)

    async def flood(url: str) -> tuple[list[Any], int]:
        async def one() -> Any:
            try:
                return await connect(url.replace("http", "ws"), local_addr=(FLOODER, 0))
            except websockets.InvalidStatus as error:
                assert error.response.status_code == 429
                return None

        opened = await asyncio.gather(*(one() for _ in range(LIMITS.max_connections)))  # all at once
        sockets = [ws for ws in opened if ws is not None]
        return sockets, len(opened) - len(sockets)

    async def closes(sockets: list[Any]) -> list[int | None]:
        codes = []
        for ws in sockets:
            with contextlib.suppress(websockets.ConnectionClosed):
                await asyncio.wait_for(ws.recv(), WITHIN)
            codes.append(ws.close_code)
        return codes

    async def scenario(url: str) -> None:
        sockets, refused = await flood(url)
        assert len(sockets) == LIMITS.per_address and refused == LIMITS.max_connections - LIMITS.per_address
        report = await good_turn(url, "ws")
        assert report["chunks"] == expected(5)
        assert await closes(sockets) == [1008] * len(sockets), "closed for want of initialize"

    with serving(app) as url:
        asyncio.run(scenario(url))
        assert _settles(lambda: _from(app, FLOODER) == 0)


FLOOD = 500
MAX_DETACHED = ResumeLimits().max_detached


def test_vanished_resumable_websockets_stay_within_the_detached_bound() -> None:
    app = asgi_app(TurnAgent, resume=ResumeLimits())

    async def vanish(url: str) -> str:
        """A WebSocket that negotiates resume, then drops its TCP connection: its token."""
        ws = await connect(url.replace("http", "ws"))
        await ws.send(json.dumps(RESUMING_INIT))
        answer = json.loads(await asyncio.wait_for(ws.recv(), WITHIN))
        ws.transport.abort()  # no close frame: the client vanished
        token: str = answer["result"]["_meta"]["acpgen/resume"]["token"]
        return token

    async def wave(url: str, count: int) -> list[str]:
        tokens: list[str] = []
        for start in range(0, count, 50):
            tokens += await asyncio.gather(*(vanish(url) for _ in range(start, min(count, start + 50))))
        return tokens

    async def comes_back(url: str, token: str) -> dict[str, Any]:
        meta = {"acpgen/resume": {"version": 1, "token": token, "lastEventId": 0, "handling": [], "sessions": []}}
        async with connect(url.replace("http", "ws")) as ws:
            await ws.send(json.dumps({**INIT, "id": 1, "params": {"protocolVersion": 1, "_meta": meta}}))
            return json.loads(await asyncio.wait_for(ws.recv(), WITHIN))  # type: ignore[no-any-return]

    def waiting() -> int:
        assert app.hosts is not None
        return sum(1 for host in list(app.hosts.live.values()) if host.client_side is None)

    with serving(app) as url:
        tokens = asyncio.run(wave(url, FLOOD))
        assert _settles(lambda: waiting() >= MAX_DETACHED), "the vanished connections are detached"
        assert _settles(lambda: len(app.hosts.live) <= MAX_DETACHED), f"{len(app.hosts.live)} agents left"
        newest = asyncio.run(wave(url, 20))
        assert _settles(lambda: len(app.hosts.live) <= MAX_DETACHED), f"{len(app.hosts.live)} agents left"
        assert newest[-1] in app.hosts.live, "the newest stays"
        oldest = asyncio.run(comes_back(url, tokens[0]))
        assert oldest["error"]["code"] == -32060, oldest
        assert oldest["error"]["data"] == {"recover": "session/load"}
