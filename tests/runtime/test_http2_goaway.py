"""hypercorn over HTTP/2 (h2c) with ``keep_alive_max_requests`` (issue 46, item 3): after that many
requests on one TCP connection it sends GOAWAY, and it ends every stream of that connection at once,
those it had accepted too (RFC 9113 lets them finish; hypercorn's h2 connection is closed). The POST
that made the server count past the limit is then answered by nothing: the server may or may not have
read its body, so it cannot be sent again blindly; httpcore sends a request the GOAWAY proves unread
(a stream above its last stream id) again by itself.

What holds: a client with ``reconnect`` resumes (the resumed connection resends what the agent did not
receive, and nothing twice), its turns complete, each handled once by the agent; the turns are not
held up by the connection's own SSE streams (a POST's answer is read on a TCP connection of its own).
A plain client's connection is lost (its calls fail with ``ConnectionError``), as for any connection a
server drops: docs/remote.md says to raise the limit or resume.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from acp_bindings import PROTOCOL_VERSION, builders, models
from acp_bindings.remote import Reconnect, RemoteLimits, ResumeLimits, asgi_app, connect_agent

from tests.support.remote import TurnAgent, TurnClient, serving

pytestmark = pytest.mark.slow

MAX_REQUESTS = 4
"""hypercorn's ``keep_alive_max_requests``: a GOAWAY every few requests."""
TURNS = 12
HANG = 20.0
"""Seconds after which a turn counts as hung: the server's heartbeats come every 60 s here, so a turn
held up until the next one would be caught (a turn takes milliseconds)."""
RECONNECT = Reconnect(initial_delay=0.01, max_delay=0.05, give_up_after=10.0, attempt_timeout=5.0)


def _app(prompts: list[str], peers: set[tuple[str, int]]) -> Any:
    """The turn agent, resumable, recording each prompt it handles; and the client address and port of
    every HTTP request (its TCP connection)."""

    class Counting(TurnAgent):
        async def prompt(self, params: models.PromptRequest) -> models.PromptResponse:
            block = params.prompt[0]
            prompts.append(block.text if isinstance(block, models.TextContentBlock) else "")
            return await super().prompt(params)

    app = asgi_app(Counting, resume=ResumeLimits(), remote_limits=RemoteLimits(keepalive=60.0))

    async def recorded(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            peers.add(tuple(scope["client"]))  # type: ignore[arg-type]
        await app(scope, receive, send)

    return recorded


def test_a_resuming_http2_client_rides_through_hypercorn_s_goaway() -> None:
    """Twelve turns of three chunks over HTTP/2, a GOAWAY every four requests: every turn ends with
    ``end_turn`` and its chunks, in order, and the agent handled each prompt once."""
    prompts: list[str] = []
    peers: set[tuple[str, int]] = set()

    async def scenario(url: str) -> tuple[list[str], dict[str, list[str]]]:
        client = TurnClient()
        stops: list[str] = []
        async with connect_agent(url, client, transport="http", http2=True, reconnect=RECONNECT) as agent:
            await agent.initialize(builders.initialize_request(PROTOCOL_VERSION))
            session = (await agent.new_session(builders.new_session_request("/tmp", []))).session_id
            for n in range(TURNS):
                prompt = builders.prompt_request(session, [builders.text_content_block(f"turn {n} stream 3")])
                stops.append((await asyncio.wait_for(agent.prompt(prompt), HANG)).stop_reason)
            return stops, client.chunks

    with serving(_app(prompts, peers), "hypercorn", keep_alive_max_requests=MAX_REQUESTS) as url:
        stops, chunks = asyncio.run(scenario(url))
    assert len(peers) > TURNS // 2, f"GOAWAYs: the requests came on {len(peers)} TCP connections"
    assert stops == ["end_turn"] * TURNS
    assert prompts == [f"turn {n} stream 3" for n in range(TURNS)], "each prompt handled once, in order"
    (got,) = chunks.values()
    assert got == ["0", "1", "2"] * TURNS


def test_a_plain_http2_client_loses_its_connection_at_the_goaway_and_says_so() -> None:
    """Without ``reconnect`` the turn the GOAWAY hits fails at once with ``ConnectionError`` (not a hang)
    that says what happened and what to do, the turns before it ended whole, and no prompt was handled
    twice."""
    prompts: list[str] = []
    peers: set[tuple[str, int]] = set()

    async def scenario(url: str) -> tuple[list[str], BaseException | None]:
        stops: list[str] = []
        failed: BaseException | None = None
        try:
            async with connect_agent(url, TurnClient(), transport="http", http2=True) as agent:
                await agent.initialize(builders.initialize_request(PROTOCOL_VERSION))
                session = (await agent.new_session(builders.new_session_request("/tmp", []))).session_id
                for n in range(TURNS):
                    prompt = builders.prompt_request(session, [builders.text_content_block(f"turn {n} stream 3")])
                    stops.append((await asyncio.wait_for(agent.prompt(prompt), HANG)).stop_reason)
        except ConnectionError as error:
            failed = error
        return stops, failed

    with serving(_app(prompts, peers), "hypercorn", keep_alive_max_requests=MAX_REQUESTS) as url:
        stops, failed = asyncio.run(scenario(url))
    assert isinstance(failed, ConnectionError), f"{len(stops)} turns, then {failed!r}"
    assert "GOAWAY" in str(failed) and "reconnect" in str(failed), str(failed)
    assert stops == ["end_turn"] * len(stops) and len(stops) < TURNS
    assert len(prompts) == len(set(prompts)) and prompts[: len(stops)] == [
        f"turn {n} stream 3" for n in range(len(stops))
    ]
