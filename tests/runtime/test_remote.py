"""Remote ACP (issue 21): both RFD profiles served by a real ASGI server, interoperating with the
official SDKs in both directions.

- our client (``connect_agent``) against our ASGI app, under uvicorn (HTTP/1.1 and WebSocket) and
  hypercorn over HTTP/2 (h2c, prior knowledge): the turn flow with ordered updates, a permission, a
  cancel, two sessions on one connection; capability checks, ``$/cancel_request`` and the wire trace;
- our client against the TypeScript SDK's ``AcpServer`` (node http server, its node adapter, ``ws``);
- the TypeScript SDK's ``createHttpStream`` / ``createWebSocketStream`` against our app under uvicorn;
- the official Python SDK 0.12.1's remote clients (``acp.http``, ``acp.ws``) against our app.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from acp_bindings import PROTOCOL_VERSION, builders, capabilities, errors, models
from acp_bindings.remote import RemoteLimits, connect_agent

from tests.support.remote import (
    PROFILES,
    TIMEOUT,
    TurnClient,
    expected,
    node_client,
    node_server,
    play,
    serving,
    turn_app,
)

pytestmark = pytest.mark.slow

CHUNKS = 60


def _run(work: Any) -> Any:
    async def bounded() -> Any:
        return await asyncio.wait_for(work, TIMEOUT)

    return asyncio.run(bounded())


async def _turn(url: str, profile: str, **options: Any) -> dict[str, Any]:
    client = TurnClient()
    async with connect_agent(url, client, transport=profile, **options) as agent:  # type: ignore[arg-type]
        return await play(agent, client, CHUNKS)


def _check(report: dict[str, Any]) -> None:
    assert report["stops"] == ["end_turn", "cancelled"]
    assert len(set(report["sessions"])) == 2, "two sessions on one connection"
    assert report["chunks"] == expected(CHUNKS), "every update of the turn, in order, when prompt() returned"


@pytest.mark.parametrize("profile", PROFILES)
def test_our_client_and_our_server_under_uvicorn(profile: str) -> None:
    with serving(turn_app()) as url:
        _check(_run(_turn(url, profile)))


def test_streamable_http_over_http2_under_hypercorn() -> None:
    """hypercorn 0.18 over HTTP/2 can hold an SSE event until the next write on its stream (seen here:
    bursts every keep-alive); a short keep-alive bounds that wait, as a deployment on it would set."""
    with serving(turn_app(remote_limits=RemoteLimits(keepalive=0.2)), "hypercorn") as url:
        _check(_run(_turn(url, "http", http2=True)))


def test_websocket_under_hypercorn() -> None:
    with serving(turn_app(), "hypercorn") as url:
        _check(_run(_turn(url, "ws")))


@pytest.mark.interop
@pytest.mark.parametrize("profile", PROFILES)
def test_our_client_against_the_typescript_sdk_server(profile: str) -> None:
    with node_server() as url:
        _check(_run(_turn(url, profile)))


@pytest.mark.interop
@pytest.mark.parametrize("profile", PROFILES)
def test_the_typescript_sdk_client_against_our_server(profile: str) -> None:
    with serving(turn_app()) as url:
        report = node_client(url, profile, CHUNKS)
    assert report["stops"] == ["end_turn", "cancelled"]
    assert len(set(report["sessions"])) == 2
    assert report["chunks"] == expected(CHUNKS)


async def _sdk_turn(url: str, profile: str, *, permission: bool) -> dict[str, Any]:
    """The turn flow from the official Python SDK's remote client (without the permission request and
    the cancel when ``permission`` is off)."""
    import acp
    from acp.http import create_http_stream
    from acp.ws import create_websocket_stream

    handled: list[str] = []
    state: dict[str, Any] = {}

    class SdkClient:
        async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
            handled.append(f"{session_id}:{update.content.text}")

        async def request_permission(self, options: Any, session_id: str, tool_call: Any, **kwargs: Any) -> Any:
            if session_id == state.get("cancel"):
                await state["conn"].cancel(session_id=session_id)
                return acp.RequestPermissionResponse(outcome=acp.schema.DeniedOutcome(outcome="cancelled"))
            outcome = acp.schema.AllowedOutcome(outcome="selected", option_id="allow")
            return acp.RequestPermissionResponse(outcome=outcome)

    moved = create_http_stream(url) if profile == "http" else await create_websocket_stream(url.replace("http", "ws"))
    conn = state["conn"] = acp.connect_to_agent(SdkClient(), moved)  # type: ignore[arg-type]
    try:
        await conn.initialize(protocol_version=PROTOCOL_VERSION)
        one = (await conn.new_session(cwd="/tmp")).session_id
        two = (await conn.new_session(cwd="/tmp")).session_id
        asked = " permission" if permission else ""
        text = acp.schema.TextContentBlock(type="text", text=f"stream {CHUNKS}{asked}")
        first = await conn.prompt(session_id=one, prompt=[text])
        state["cancel"] = two
        second = await conn.prompt(session_id=two, prompt=[acp.schema.TextContentBlock(type="text", text=asked)])
    finally:
        await conn.close()
    chunks = [h.split(":", 1)[1] for h in handled if h.startswith(f"{one}:")]
    return {"sessions": [one, two], "chunks": chunks, "stops": [first.stop_reason, second.stop_reason]}


def test_the_official_python_sdk_websocket_client_against_our_server() -> None:
    with serving(turn_app()) as url:
        _check(_run(_sdk_turn(url, "ws", permission=True)))


def test_the_official_python_sdk_http_client_against_our_server() -> None:
    """Without the permission request: the SDK 0.12.1's HTTP client POSTs its answer to an agent's
    request without ``Acp-Session-Id``, which the RFD requires and the TypeScript SDK's server refuses
    (400 "Missing Acp-Session-Id"), as ours does: that flow cannot pass with that client."""
    with serving(turn_app()) as url:
        report = _run(_sdk_turn(url, "http", permission=False))
    assert report["stops"] == ["end_turn", "end_turn"]
    assert len(set(report["sessions"])) == 2
    assert report["chunks"] == [str(n) for n in range(CHUNKS)]


class _Quiet(TurnClient):
    """Never answers a permission request: the agent's turn waits until it is cancelled."""

    async def request_permission(self, params: models.RequestPermissionRequest) -> models.RequestPermissionResponse:
        await asyncio.Event().wait()
        raise AssertionError("unreachable")


@pytest.mark.parametrize("profile", PROFILES)
def test_capability_checks_cancel_request_and_the_wire_trace_hold_remotely(profile: str, tmp_path: Path) -> None:
    trace = tmp_path / "client.ndjson"

    async def scenario() -> None:
        with serving(turn_app()) as url:
            async with connect_agent(url, _Quiet(), transport=profile, trace=trace) as agent:  # type: ignore[arg-type]
                await agent.initialize(builders.initialize_request(PROTOCOL_VERSION))
                load = models.LoadSessionRequest(session_id="s", cwd="/w", mcp_servers=[])
                with pytest.raises(capabilities.CapabilityError, match="loadSession"):
                    await agent.load_session(load)  # refused here: the agent did not advertise it
                session = (await agent.new_session(builders.new_session_request("/tmp", []))).session_id
                prompt = builders.prompt_request(session, [builders.text_content_block("permission")])
                waiting = asyncio.ensure_future(agent.prompt(prompt))
                await asyncio.sleep(0.2)
                waiting.cancel()  # sends $/cancel_request: the agent's handler is cancelled
                with pytest.raises(asyncio.CancelledError):
                    await waiting
                with pytest.raises(errors.RequestError) as refused:
                    await agent.set_session_mode(models.SetSessionModeRequest(session_id=session, mode_id="x"))
                assert refused.value.code == -32603  # the agent raised NotImplementedError: still serving

    _run(scenario())
    entries = [json.loads(line) for line in trace.read_text(encoding="utf-8").splitlines()]
    sent = [e["message"].get("method") for e in entries if e["direction"] == "out"]
    assert sent[:3] == ["initialize", "session/new", "session/prompt"]
    assert "$/cancel_request" in sent


class _Echo(TurnClient):
    """Records every text chunk of every session (the turn client keeps only its own words)."""


def _echo_app(**options: Any) -> Any:
    from acp_bindings.remote import asgi_app

    from tests.support.remote import TurnAgent

    class Echoing(TurnAgent):
        """Streams the prompt's text back as its one chunk."""

        async def prompt(self, params: models.PromptRequest) -> models.PromptResponse:
            text = "".join(b.text for b in params.prompt if isinstance(b, models.TextContentBlock))
            await self._chunk(params.session_id, text)
            return models.PromptResponse(stop_reason="end_turn")

    return asgi_app(Echoing, **options)


async def _lone_surrogate_turn(url: str, profile: str, **options: Any) -> tuple[list[str], str]:
    client = _Echo()
    async with connect_agent(url, client, transport=profile, **options) as agent:  # type: ignore[arg-type]
        await agent.initialize(builders.initialize_request(PROTOCOL_VERSION))
        session = (await agent.new_session(builders.new_session_request("/tmp", []))).session_id
        answer = await agent.prompt(
            builders.prompt_request(session, [builders.text_content_block("half \ud800 a pair")])
        )
        return list(client.chunks.get(session, [])), answer.stop_reason


@pytest.mark.parametrize("resumable", [False, True], ids=["plain", "resumable"])
@pytest.mark.parametrize("profile", PROFILES)
def test_a_lone_surrogate_escape_in_a_session_message_is_routed_as_the_connection_reads_it(
    profile: str, resumable: bool
) -> None:
    """A lone surrogate is read and written escaped (``\\ud800``), which pydantic-core's JSON reader
    refuses: the transports that route messages by session read them as the connection does (over
    Streamable HTTP the prompt was sent without its ``Acp-Session-Id`` and refused, and the agent's
    chunk went on the connection's stream)."""
    from acp_bindings.remote import Reconnect, ResumeLimits

    server = {"resume": ResumeLimits()} if resumable else {}
    client = {"reconnect": Reconnect()} if resumable else {}
    with serving(_echo_app(**server)) as url:
        chunks, stop = _run(_lone_surrogate_turn(url, profile, **client))
    assert (chunks, stop) == (["half \ud800 a pair"], "end_turn")
