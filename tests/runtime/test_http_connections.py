"""What one Streamable HTTP client costs the network and the process per request (issue 33, item 4),
against real servers: our app under uvicorn (HTTP/1.1) and under hypercorn (HTTP/2, h2c).

- Connections: however many requests a client makes, it holds a fixed number of TCP connections (the
  keep-alive pool): over HTTP/1.1 one per SSE stream (the connection's and the session's) and one for
  every POST; over HTTP/2 two, one for the streams and one for the POSTs (a POST's answer does not wait
  behind an idle stream's read, tests/runtime/test_http2_goaway.py). Counted at the server, by the
  client address and port of every request it was handed.
- No import per request: httpcore 1.0 imports ``sniffio`` for every lock it sets up, and Python does not
  remember a failed import, so without sniffio (which anyio stopped installing) each POST searched
  ``sys.path`` four times (a fifth of the client's CPU per request). The ``remote`` extra pins sniffio;
  a finder at the head of ``sys.meta_path`` sees every import the process attempts while the client
  sends requests: none.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.abc
import sys
from collections.abc import Iterator, Sequence
from typing import Any

import pytest
from acp_bindings import PROTOCOL_VERSION, builders
from acp_bindings.remote import RemoteLimits, connect_agent

from tests.support.remote import TIMEOUT, TurnClient, serving, turn_app

pytestmark = pytest.mark.slow

REQUESTS = 200


class Peers:
    """An ASGI middleware recording the client address of every HTTP request the server hands on."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.seen: set[tuple[str, int]] = set()
        self.requests = 0

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            self.seen.add(tuple(scope["client"]))  # type: ignore[arg-type]
            self.requests += 1
        await self.app(scope, receive, send)


class Lookups(importlib.abc.MetaPathFinder):
    """Every module name the import system looks for (a module found in ``sys.modules`` is not)."""

    def __init__(self) -> None:
        self.names: list[str] = []

    def find_spec(self, fullname: str, path: Sequence[str] | None, target: Any = None) -> None:
        self.names.append(fullname)
        return None


async def _prompts(url: str, count: int, *, http2: bool | None = None, during: Any = None) -> int:
    """``count`` prompts one after another on one session; ``during`` wraps all but the first ten."""
    client = TurnClient()
    async with connect_agent(url, client, transport="http", http2=http2) as agent:
        await agent.initialize(builders.initialize_request(PROTOCOL_VERSION))
        session = (await agent.new_session(builders.new_session_request("/tmp", []))).session_id
        prompt = builders.prompt_request(session, [builders.text_content_block("hello")])
        done = 0
        for _ in range(10):  # warm: every module the path needs is imported
            done += (await agent.prompt(prompt)).stop_reason == "end_turn"
        with during if during is not None else contextlib.nullcontext():
            for _ in range(count - 10):
                done += (await agent.prompt(prompt)).stop_reason == "end_turn"
    return done


def _run(work: Any) -> Any:
    async def bounded() -> Any:
        return await asyncio.wait_for(work, TIMEOUT)

    return asyncio.run(bounded())


def test_many_requests_over_http1_use_three_connections() -> None:
    peers = Peers(turn_app())
    with serving(peers) as url:
        assert _run(_prompts(url, REQUESTS)) == REQUESTS
    assert peers.requests >= REQUESTS + 4, "initialize, session/new, the prompts, two streams, the DELETE"
    assert len(peers.seen) == 3, f"{peers.requests} requests came on {len(peers.seen)} TCP connections"


def test_many_requests_over_http2_use_two_connections() -> None:
    peers = Peers(turn_app(remote_limits=RemoteLimits(keepalive=0.2)))
    with serving(peers, "hypercorn") as url:
        assert _run(_prompts(url, REQUESTS, http2=True)) == REQUESTS
    assert peers.requests >= REQUESTS + 4
    assert len(peers.seen) == 2, f"{peers.requests} requests came on {len(peers.seen)} TCP connections"


@contextlib.contextmanager
def _watching(finder: Lookups) -> Iterator[None]:
    sys.meta_path.insert(0, finder)
    try:
        yield
    finally:
        sys.meta_path.remove(finder)


def test_a_request_imports_nothing() -> None:
    lookups = Lookups()
    with serving(turn_app()) as url:
        assert _run(_prompts(url, 60, during=_watching(lookups))) == 60
    assert lookups.names == [], f"50 requests looked for modules: {sorted(set(lookups.names))} ({len(lookups.names)})"


def test_a_request_s_own_headers_replace_the_caller_s() -> None:
    """The caller's headers go with every request, but a header the request sets itself (the POST's
    ``Content-Type``, the stream's ``Accept``) replaces the caller's of that name, as
    ``httpx.AsyncClient`` merged them: not sent twice (the server would read ``text/plain,
    application/json`` and refuse with 415)."""
    seen: list[dict[str, str]] = []

    class Headers(Peers):
        async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
            if scope["type"] == "http":
                names = [name.decode() for name, _ in scope["headers"]]
                seen.append({n: str(names.count(n)) for n in ("content-type", "accept", "x-team")})
            await self.app(scope, receive, send)

    caller = {"Content-Type": "text/plain", "Accept": "*/*", "X-Team": "blue"}

    async def turn(url: str) -> str:
        client = TurnClient()
        async with connect_agent(url, client, transport="http", headers=caller) as agent:
            await agent.initialize(builders.initialize_request(PROTOCOL_VERSION))
            session = (await agent.new_session(builders.new_session_request("/tmp", []))).session_id
            prompt = builders.prompt_request(session, [builders.text_content_block("hello")])
            return (await agent.prompt(prompt)).stop_reason

    with serving(Headers(turn_app())) as url:
        assert _run(turn(url)) == "end_turn"
    assert seen and all(each == {"content-type": each["content-type"], "accept": "1", "x-team": "1"} for each in seen)
    assert {each["content-type"] for each in seen} <= {"0", "1"}, seen
