"""A refused remote connection raises one exception, ``remote.Refused``, over both profiles
(issue 30, item 6): the HTTP status or the WebSocket close code, and what the server said (the
JSON-RPC error when its body is one). Against real servers (uvicorn, and hypercorn for one
case) that refuse through the app's own hooks and limits."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest
from acp_bindings import PROTOCOL_VERSION, builders, remote
from acp_bindings.remote import Refused, RemoteLimits, asgi_app, connect_agent

from tests.support.remote import TIMEOUT, TurnAgent, TurnClient, serving, turn_app

PROFILES = ["ws", "http"]


async def _initialize(url: str, profile: str, headers: dict[str, str] | None = None) -> None:
    async with connect_agent(url, TurnClient(), transport=profile, headers=headers) as agent:  # type: ignore[arg-type]
        await agent.initialize(builders.initialize_request(PROTOCOL_VERSION))


def _refusal(app: Any, profile: str, *, headers: dict[str, str] | None = None, server: str = "uvicorn") -> Refused:
    with serving(app, server) as url, pytest.raises(Refused) as caught:
        asyncio.run(asyncio.wait_for(_initialize(url, profile, headers), TIMEOUT))
    refused = caught.value
    assert refused.url == url and refused.profile == profile
    assert isinstance(refused, ConnectionError), "code that catches ConnectionError keeps working"
    return refused


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize(
    ("verdict", "status", "message"), [(401, 401, "Unauthorized"), (False, 403, "Forbidden"), (403, 403, "Forbidden")]
)
def test_authorize_refusing_is_refused_with_its_status(profile: str, verdict: Any, status: int, message: str) -> None:
    refused = _refusal(turn_app(authorize=lambda request: verdict), profile)
    assert (refused.status, refused.close_code, refused.message, refused.error) == (status, None, message, None)
    assert f"({profile}, HTTP {status}): {message}" in str(refused)


@pytest.mark.parametrize("profile", PROFILES)
def test_a_foreign_origin_is_refused_with_403(profile: str) -> None:
    app = turn_app(allowed_origins=["https://editor.example"])
    refused = _refusal(app, profile, headers={"Origin": "https://evil.example"})
    assert (refused.status, refused.message) == (403, "Forbidden")


@pytest.mark.parametrize("profile", PROFILES)
def test_a_full_server_is_refused_with_503(profile: str) -> None:
    app = turn_app(remote_limits=RemoteLimits(max_connections=1))

    async def second(url: str) -> None:
        async with connect_agent(url, TurnClient(), transport="ws") as first:
            await first.initialize(builders.initialize_request(PROTOCOL_VERSION))
            await _initialize(url, profile)

    with serving(app) as url, pytest.raises(Refused) as caught:
        asyncio.run(asyncio.wait_for(second(url), TIMEOUT))
    assert (caught.value.status, caught.value.message) == (503, "Too many connections")


def _failing_factory() -> TurnAgent:
    raise RuntimeError("no agent today")


def test_an_agent_that_cannot_start_is_refused_with_the_servers_json_rpc_error_over_http() -> None:
    refused = _refusal(asgi_app(_failing_factory), "http")
    assert (refused.status, refused.message) == (500, "Initialize failed")
    assert refused.error == {"code": -32603, "message": "Initialize failed"}


@pytest.mark.parametrize("server", ["uvicorn", "hypercorn"])
def test_an_agent_that_cannot_start_is_refused_with_close_code_1011_over_websocket(server: str) -> None:
    refused = _refusal(asgi_app(_failing_factory), "ws", server=server)
    assert (refused.status, refused.close_code, refused.message) == (None, 1011, "Initialize failed")
    assert "(ws, close code 1011): Initialize failed" in str(refused)


def test_a_websocket_closed_before_the_servers_first_message_is_refused_with_its_close_code() -> None:
    """The server closes a WebSocket whose first message is not ``initialize`` (1002): the
    request waiting fails with the refusal, not with a bare "peer closed"."""

    async def out_of_order(url: str) -> None:
        async with connect_agent(url, TurnClient(), transport="ws", check_capabilities=False) as agent:
            await agent.new_session(builders.new_session_request("/w", []))

    with serving(turn_app()) as url, pytest.raises(Refused) as caught:
        asyncio.run(asyncio.wait_for(out_of_order(url), TIMEOUT))
    refused = caught.value
    assert (refused.status, refused.close_code, refused.message) == (None, 1002, "First message must be initialize")


def test_a_connection_the_server_answered_ends_as_before_not_as_a_refusal() -> None:
    """A connection lost after the server spoke is no refusal: plain ConnectionError."""
    closed: list[Callable[[], Any]] = []

    class Leaving(TurnAgent):
        async def new_session(self, params: Any) -> Any:
            closed[0]()
            await asyncio.sleep(TIMEOUT)

    async def play(url: str) -> None:
        async with connect_agent(url, TurnClient(), transport="ws") as agent:
            await agent.initialize(builders.initialize_request(PROTOCOL_VERSION))
            await agent.new_session(builders.new_session_request("/w", []))

    app = asgi_app(Leaving)
    closed.append(lambda: asyncio.ensure_future(app.close()))
    with serving(app) as url, pytest.raises(ConnectionError) as caught:
        asyncio.run(asyncio.wait_for(play(url), TIMEOUT))
    assert type(caught.value) is ConnectionError, caught.value


def test_refused_is_public_in_remote_and_importable_without_the_extra() -> None:
    assert remote.Refused is Refused and "Refused" in remote.__all__
    assert Refused.__module__ == "acp_bindings.remote"  # presented there: help() and tracebacks name it there


# -- issue 45: an agent that cannot be reached ----------------------------------------------------


def _closed_port() -> int:
    import socket

    with socket.socket() as probe:  # a port nothing listens on any more
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize(
    ("url", "reason"),
    [
        (f"http://127.0.0.1:{_closed_port()}/acp", "refused"),  # nothing listens there
        ("http://no-such-host.invalid/acp", "resolve"),  # a name that resolves to nothing
        ("", "not an http(s) or ws(s) URL"),
        ("ftp://127.0.0.1/acp", "not an http(s) or ws(s) URL"),
    ],
    ids=["closed-port", "unknown-host", "empty", "other-scheme"],
)
def test_an_agent_that_cannot_be_reached_raises_unreachable_on_entering_the_block(
    profile: str, url: str, reason: str
) -> None:
    """One exception over both profiles, a ``ConnectionError`` naming the URL and the reason, raised
    where the WebSocket profile raised it (entering the block), before anything is sent."""
    entered = False

    async def connect() -> None:
        nonlocal entered
        async with connect_agent(url, TurnClient(), transport=profile):  # type: ignore[arg-type]
            entered = True

    with pytest.raises(remote.Unreachable) as caught:
        asyncio.run(asyncio.wait_for(connect(), TIMEOUT))
    error = caught.value
    assert not entered and isinstance(error, ConnectionError)
    assert (error.url, error.profile) == (url, profile)
    assert reason in error.reason.lower() or reason in error.reason, error.reason
    assert str(error).startswith(f"cannot reach {url!r} ({profile}): "), str(error)
