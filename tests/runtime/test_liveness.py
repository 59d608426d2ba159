"""Liveness (issue 32 item 0): a connection that goes silent without closing (a half-open connection: a
NAT that forgot it, a laptop asleep) is noticed by the client and resumed, on both profiles, and the turn
completes with nothing lost; a client that leaves while cut off ends its agent at once; a request the
agent asks again after a stream reset, while the client's handler still runs, is the same request.

Each test serves a real app under uvicorn (``tests.remote.serving``) behind the fault proxy
(``tests/support/faults.py``), whose ``silence()`` stops forwarding both ways and closes nothing. The bounds are
made short here (the client's ``Reconnect.silence``, the server's heartbeat ``RemoteLimits.keepalive``)
so that the tests take seconds; the defaults (25 s, 10 s) are played by the ``default`` test.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable
from typing import Any

import pytest
from acp_bindings import PROTOCOL_VERSION, builders, models
from acp_bindings.interfaces import Client
from acp_bindings.remote import Reconnect, RemoteLimits, ResumeLimits, asgi_app, connect_agent

from tests.support.faults import Proxy
from tests.support.remote import PROFILES, TurnAgent, serving

pytestmark = pytest.mark.slow

SILENCE = 2.0
"""The client's silence bound in these tests (seconds)."""
HEARTBEAT = 0.5
"""The server's heartbeat in these tests (seconds)."""
TIMEOUT = 90.0
"""A turn that needs longer hangs (the machine is shared: generous)."""
RECONNECT = {"initial_delay": 0.05, "max_delay": 0.2, "give_up_after": 30.0, "attempt_timeout": 5.0}

GATES: dict[str, threading.Event] = {}
"""Gates an agent's turn waits at (``gate:NAME``), opened by the test (the agent runs in the server's
thread)."""
ENDED: dict[str, threading.Event] = {}
"""Set when a connection's agent ends (``close``), by the name its first prompt gives (``name:NAME``)."""


def _gate(name: str) -> threading.Event:
    return GATES.setdefault(name, threading.Event())


class ScriptAgent(TurnAgent):
    """Plays the script of its prompt: ``chunks:A-B`` (message chunks ``"n;"``), ``gate:NAME`` (waits until
    the test opens it), ``permission`` (asks; then the chunk ``"allowed;"``), ``name:NAME`` (names this
    agent: ``ENDED[NAME]`` is set when its connection ends), ``hold`` (waits until cancelled)."""

    name: str | None = None

    async def prompt(self, params: models.PromptRequest) -> models.PromptResponse:
        session = params.session_id
        words = " ".join(b.text for b in params.prompt if isinstance(b, models.TextContentBlock)).split()
        for step in words:
            op, _, arg = step.partition(":")
            if op == "chunks":
                first, last = (int(x) for x in arg.split("-"))
                for n in range(first, last):
                    await self._chunk(session, f"{n};")
            elif op == "gate":
                gate = _gate(arg)
                while not gate.is_set():
                    await asyncio.sleep(0.01)
            elif op == "name":
                self.name = arg
                ENDED.setdefault(arg, threading.Event())
            elif op == "hold":
                try:
                    await asyncio.Event().wait()
                finally:
                    if self.name is not None:
                        ENDED[self.name].set()
            elif op == "permission":
                options = [models.PermissionOption(option_id="allow", name="Allow", kind="allow_once")]
                call = models.ToolCallUpdate(tool_call_id="call-1", title="Go on", kind="other")
                request = models.RequestPermissionRequest(session_id=session, tool_call=call, options=options)
                answer = await self.client.request_permission(request)
                if not isinstance(answer.outcome, models.SelectedRequestPermissionOutcome):
                    return models.PromptResponse(stop_reason="refusal")
                await self._chunk(session, "allowed;")
        return models.PromptResponse(stop_reason="end_turn")


class Recorder(Client):
    """Records the chunks its handler sees; allows every permission (after ``on_permission``)."""

    def __init__(self) -> None:
        self.texts: list[str] = []
        self.asks = 0
        self.on_text: Callable[[str], None] | None = None
        self.on_permission: Callable[[], Any] | None = None

    async def session_update(self, params: models.SessionNotification) -> None:
        update = params.update
        if isinstance(update, models.AgentMessageChunkSessionUpdate) and isinstance(
            update.content, models.TextContentBlock
        ):
            self.texts.append(update.content.text)
            if self.on_text is not None:
                self.on_text(update.content.text)

    async def request_permission(self, params: models.RequestPermissionRequest) -> models.RequestPermissionResponse:
        self.asks += 1
        if self.on_permission is not None:
            await self.on_permission()
        return builders.request_permission_response(builders.selected_request_permission_outcome("allow"))


def test_the_proxy_goes_silent_without_closing_anything() -> None:
    """``Proxy.silence()``: nothing passes either way any more, neither side sees an end or an error;
    a connection accepted afterwards is forwarded as usual."""

    async def scenario() -> None:
        heard: list[bytes] = []
        ended: list[str] = []

        async def echo(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            try:
                while data := await reader.read(65536):
                    heard.append(data)
                    writer.write(data)
                    await writer.drain()
                ended.append("eof")
            except ConnectionError:
                ended.append("reset")

        server = await asyncio.start_server(echo, "127.0.0.1", 0)
        async with server, Proxy(("127.0.0.1", server.sockets[0].getsockname()[1])) as proxy:
            reader, writer = await asyncio.open_connection("127.0.0.1", proxy.port)
            writer.write(b"before")
            assert await reader.readexactly(6) == b"before"
            proxy.silence()
            writer.write(b"after")
            await writer.drain()
            with pytest.raises(TimeoutError):  # nothing comes back, and nothing ends
                await asyncio.wait_for(reader.read(1), 1.0)
            assert heard == [b"before"] and ended == [], (heard, ended)
            assert proxy.silenced == 1 and not writer.is_closing()
            again, again_writer = await asyncio.open_connection("127.0.0.1", proxy.port)
            again_writer.write(b"next")
            assert await again.readexactly(4) == b"next", "a later connection passes"
            writer.transport.abort()
            again_writer.transport.abort()

    asyncio.run(scenario())


def chunks(first: int, last: int) -> list[str]:
    return [f"{n};" for n in range(first, last)]


def app(**limits: Any) -> Any:
    remote = RemoteLimits(keepalive=limits.pop("keepalive", HEARTBEAT), **limits)
    return asgi_app(ScriptAgent, remote_limits=remote, resume=ResumeLimits())


async def _start(agent: Any) -> str:
    await agent.initialize(builders.initialize_request(PROTOCOL_VERSION))
    return (await agent.new_session(builders.new_session_request("/tmp", []))).session_id


def _prompt(session: str, script: str) -> Any:
    return builders.prompt_request(session, [builders.text_content_block(script)])


async def silent_then_resumed(url: str, profile: str, name: str, reconnect: Reconnect) -> dict[str, Any]:
    """A turn whose connection goes silent in its middle (after chunk 9); what the client saw."""
    client = Recorder()
    gate = _gate(name)
    async with Proxy(Proxy.address(url)) as proxy:
        silenced_at: list[float] = []

        def on_text(text: str) -> None:
            if text == "9;" and not silenced_at:
                proxy.silence()
                silenced_at.append(time.monotonic())
                gate.set()  # the rest of the turn goes into the silent connection

        client.on_text = on_text
        async with connect_agent(proxy.url(), client, transport=profile, reconnect=reconnect) as agent:  # type: ignore[arg-type]
            session = await _start(agent)
            accepted = proxy.accepted
            script = f"chunks:0-10 gate:{name} chunks:10-60 permission chunks:60-80"
            answer = await asyncio.wait_for(agent.prompt(_prompt(session, script)), TIMEOUT)
            noticed = time.monotonic() - silenced_at[0]
        return {
            "stop": answer.stop_reason,
            "texts": client.texts,
            "asks": client.asks,
            "silenced": proxy.silenced,
            "new_connections": proxy.accepted - accepted,
            "seconds": noticed,
        }


@pytest.mark.parametrize("profile", PROFILES)
def test_a_silent_connection_is_noticed_and_the_turn_resumes_with_nothing_lost(profile: str) -> None:
    """Before: over Streamable HTTP no reconnection within 95 s and ``prompt()`` hung; over WebSocket the
    silence was noticed after about 50 s."""
    reconnect = Reconnect(**RECONNECT, silence=SILENCE)  # type: ignore[arg-type]
    with serving(app()) as url:
        seen = asyncio.run(silent_then_resumed(url, profile, f"resume-{profile}", reconnect))
    print(f"{profile}: the turn ended {seen['seconds']:.1f} s after the silence (bound {SILENCE} s)")
    assert seen["silenced"] > 0, "the proxy made the connection silent"
    assert seen["new_connections"] > 0, "the client reconnected"
    assert seen["stop"] == "end_turn"
    assert seen["texts"] == [*chunks(0, 60), "allowed;", *chunks(60, 80)], seen["texts"]
    assert seen["asks"] == 1


def test_the_default_bounds_notice_a_silent_connection_on_both_profiles() -> None:
    """The defaults: the server's heartbeat every 10 s, the client's silence bound 25 s (a half-open
    connection noticed within 30 s). Both profiles at once, each through a proxy of its own."""
    assert Reconnect().silence <= 30.0 and RemoteLimits().keepalive < Reconnect().silence
    reconnect = Reconnect(**RECONNECT)  # type: ignore[arg-type]

    async def both(url: str) -> list[dict[str, Any]]:
        return list(await asyncio.gather(*(silent_then_resumed(url, p, f"default-{p}", reconnect) for p in PROFILES)))

    with serving(asgi_app(ScriptAgent, resume=ResumeLimits())) as url:
        seen = asyncio.run(both(url))
    for profile, one in zip(PROFILES, seen, strict=True):
        print(f"{profile}: default bounds, the turn ended {one['seconds']:.1f} s after the silence")
        assert one["new_connections"] > 0, profile
        assert one["stop"] == "end_turn", profile
        assert one["texts"] == [*chunks(0, 60), "allowed;", *chunks(60, 80)], profile


RESET_TRIES = 6


@pytest.mark.parametrize("profile", PROFILES)
def test_a_reset_inside_the_permission_handler_leaves_the_same_request_pending(profile: str) -> None:
    """Before: over Streamable HTTP the reopened session stream (``Last-Event-ID``) brought the pending
    ``session/request_permission`` again, the client answered it -32600 "the id is in use", and that
    error became the agent's answer (``prompt()`` raised -32600), in 8 of 20 tries. Every connection is
    reset while the handler runs; the handler waits before answering, so that what comes back (a
    reopened stream, a resumed connection) arrives before its answer."""
    reconnect = Reconnect(**RECONNECT, silence=SILENCE)  # type: ignore[arg-type]

    async def one(url: str) -> dict[str, Any]:
        client = Recorder()
        async with Proxy(Proxy.address(url)) as proxy:

            async def cut() -> None:
                proxy.cut("drop")
                await asyncio.sleep(1.5)

            client.on_permission = cut
            async with connect_agent(proxy.url(), client, transport=profile, reconnect=reconnect) as agent:  # type: ignore[arg-type]
                session = await _start(agent)
                script = "chunks:0-20 permission chunks:20-30"
                try:
                    answer = await asyncio.wait_for(agent.prompt(_prompt(session, script)), TIMEOUT)
                    stop: Any = answer.stop_reason
                except Exception as error:  # noqa: BLE001 - what the user would see
                    stop = repr(error)
        return {"stop": stop, "texts": client.texts, "asks": client.asks}

    async def tries(url: str) -> list[dict[str, Any]]:
        return list(await asyncio.gather(*(one(url) for _ in range(RESET_TRIES))))

    with serving(app()) as url:
        seen = asyncio.run(tries(url))
    stops = [one["stop"] for one in seen]
    assert stops == ["end_turn"] * RESET_TRIES, stops
    for one in seen:
        assert one["texts"] == [*chunks(0, 20), "allowed;", *chunks(20, 30)], one
        assert one["asks"] == 1, "the same request, handled once"


def _wait_until(check: Callable[[], bool], within: float) -> bool:
    deadline = time.monotonic() + within
    while not check():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


@pytest.mark.parametrize("mode", ["silence", "cut"])
@pytest.mark.parametrize("profile", PROFILES)
def test_a_client_that_leaves_while_cut_off_ends_its_agent(profile: str, mode: str) -> None:
    """Before: a client that closed right after its connection was lost (or went silent) left its agent
    waiting for ``detached_for`` (600 s here), over WebSocket in 5 of 10 tries; over Streamable HTTP its
    goodbye DELETE met 404 once a reconnection had replaced the connection id. The client closes while
    a turn runs, at once after the proxy went silent or reset everything."""
    reconnect = Reconnect(**RECONNECT, silence=SILENCE)  # type: ignore[arg-type]
    served = app()

    async def leave(url: str) -> None:
        client = Recorder()
        async with (
            Proxy(Proxy.address(url)) as proxy,
            connect_agent(proxy.url(), client, transport=profile, reconnect=reconnect) as agent,  # type: ignore[arg-type]
        ):
            session = await _start(agent)
            turn = asyncio.ensure_future(agent.prompt(_prompt(session, "chunks:0-3 hold")))
            while len(client.texts) < 3:
                await asyncio.sleep(0.01)
            assert len(served.hosts.live) == 1
            if mode == "silence":
                proxy.silence()
            else:
                proxy.cut("drop")
                await asyncio.sleep(0.05)  # the client notices, and starts reconnecting
            turn.cancel()
        # the client left: its agent must end now, not after detached_for

    with serving(served) as url:
        asyncio.run(leave(url))
        ended = _wait_until(lambda: not served.hosts.live, 30.0)
        assert ended, f"{len(served.hosts.live)} agent(s) still waiting for a client that left"


def cookie_setting(inner: Any) -> tuple[Any, list[tuple[str, str]]]:
    """``inner`` behind a balancer's affinity cookie: every answer (a 101 too) sets ``worker=A``; what
    each request and upgrade carried in ``Cookie`` is recorded."""
    seen: list[tuple[str, str]] = []

    async def app(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] not in ("http", "websocket"):
            await inner(scope, receive, send)
            return
        cookie = dict(scope["headers"]).get(b"cookie", b"").decode()
        seen.append((scope["type"] if scope["type"] == "websocket" else scope["method"], cookie))

        async def sending(message: Any) -> None:
            if message["type"] in ("http.response.start", "websocket.accept"):
                headers = [*message.get("headers", []), (b"set-cookie", b"worker=A; Path=/")]
                message = {**message, "headers": headers}
            await send(message)

        await inner(scope, receive, sending)

    return app, seen


@pytest.mark.parametrize("profiles", [("ws",), ("http",), ("ws", "http"), ("http", "ws")])
def test_reconnections_carry_the_cookies_of_earlier_connections(profiles: tuple[str, ...]) -> None:
    """One cookie jar for all of a client's connections, both profiles (a WebSocket's 101 too): what a
    balancer sets for affinity comes back with every reconnection. Before: the cookies lived and died
    with one HTTP carrier, and a WebSocket kept none."""
    reconnect = Reconnect(**RECONNECT, silence=SILENCE, profiles=profiles[1:] or None)  # type: ignore[arg-type]
    served, seen = cookie_setting(app())

    async def one(url: str) -> str:
        client = Recorder()
        async with (
            Proxy(Proxy.address(url)) as proxy,
            connect_agent(proxy.url(), client, transport=profiles[0], reconnect=reconnect) as agent,  # type: ignore[arg-type]
        ):
            session = await _start(agent)
            first = len(seen)
            proxy.cut("drop", outage=0.3)  # a new carrier: a new upgrade, or a new initialize POST
            answer = await asyncio.wait_for(agent.prompt(_prompt(session, "chunks:0-5")), TIMEOUT)
            assert len(seen) > first, "the client reconnected"
        return answer.stop_reason

    with serving(served) as url:
        assert asyncio.run(one(url)) == "end_turn"
    later = seen[1:]
    bare = [request for request in later if "worker=A" not in request[1]]
    assert not bare, f"requests after the first without the cookie: {bare} (of {len(later)})"
