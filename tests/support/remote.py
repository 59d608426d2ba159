"""Helpers of the remote tests (issue 21): real ASGI servers on ephemeral loopback ports, the "turn"
agent and client written only with the generated stable bindings, and the TypeScript SDK's server.

The turn flow, played the same way by every pairing: ``initialize``, two sessions on one connection,
a turn of ``stream N permission`` on the first (N ordered chunks, a permission request the client
allows, the chunk "allowed", ``end_turn``), and a turn of ``permission`` on the second that the
client cancels (``session/cancel`` while the agent waits for the permission, answered "cancelled",
stop reason ``cancelled``).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
import subprocess
import threading
from collections.abc import Iterator
from typing import Any

import hypercorn.asyncio
import hypercorn.config
import uvicorn
from acp_bindings import PROTOCOL_VERSION, builders, models
from acp_bindings._runtime.remote.transports import TRANSPORTS
from acp_bindings.interfaces import Agent, Client
from acp_bindings.remote import asgi_app
from acp_bindings.senders import AgentSender

from tests.support.sdk import INTEROP, ROOT, node

PROFILES = tuple(TRANSPORTS)
"""Every profile of the registry of transports: a new one is tested wherever these are."""
TIMEOUT = 60.0
WS_MAX_SIZE = 32 * 1024 * 1024 + 1024


class TurnAgent(Agent):
    """The turn agent (one per connection)."""

    def __init__(self) -> None:
        self.sessions: dict[str, asyncio.Event] = {}

    async def initialize(self, params: models.InitializeRequest) -> models.InitializeResponse:
        return models.InitializeResponse(protocol_version=PROTOCOL_VERSION)

    async def new_session(self, params: models.NewSessionRequest) -> models.NewSessionResponse:
        session_id = f"py-{len(self.sessions) + 1}"
        self.sessions[session_id] = asyncio.Event()
        return models.NewSessionResponse(session_id=session_id)

    async def prompt(self, params: models.PromptRequest) -> models.PromptResponse:
        cancelled = self.sessions[params.session_id] = asyncio.Event()
        words = " ".join(b.text for b in params.prompt if isinstance(b, models.TextContentBlock)).split()
        count = int(words[words.index("stream") + 1]) if "stream" in words else 0
        for n in range(count):
            await self._chunk(params.session_id, str(n))
        if "permission" in words:
            options = [
                models.PermissionOption(option_id="allow", name="Allow", kind="allow_once"),
                models.PermissionOption(option_id="reject", name="Reject", kind="reject_once"),
            ]
            call = models.ToolCallUpdate(tool_call_id="call-1", title="Go on", kind="other")
            request = models.RequestPermissionRequest(session_id=params.session_id, tool_call=call, options=options)
            answer = await self.client.request_permission(request)
            if isinstance(answer.outcome, models.CancelledRequestPermissionOutcome):
                await cancelled.wait()
                return models.PromptResponse(stop_reason="cancelled")
            await self._chunk(params.session_id, "allowed")
        return models.PromptResponse(stop_reason="end_turn")

    async def _chunk(self, session_id: str, text: str) -> None:
        update = builders.agent_message_chunk_session_update(builders.text_content_block(text))
        await self.client.session_update(builders.session_notification(session_id, update))

    async def cancel(self, params: models.CancelNotification) -> None:
        if params.session_id in self.sessions:
            self.sessions[params.session_id].set()

    async def authenticate(self, params: models.AuthenticateRequest) -> models.AuthenticateResponse:
        raise NotImplementedError

    async def set_session_mode(self, params: models.SetSessionModeRequest) -> models.SetSessionModeResponse:
        raise NotImplementedError

    async def set_session_config_option(
        self, params: models.SetSessionConfigOptionRequest
    ) -> models.SetSessionConfigOptionResponse:
        raise NotImplementedError


class TurnClient(Client):
    """The turn client: records the chunks it handles; allows, or cancels the turn of ``cancel_in``."""

    def __init__(self) -> None:
        self.chunks: dict[str, list[str]] = {}
        self.cancel_in: str | None = None

    async def session_update(self, params: models.SessionNotification) -> None:
        update = params.update
        if isinstance(update, models.AgentMessageChunkSessionUpdate) and isinstance(
            update.content, models.TextContentBlock
        ):
            await asyncio.sleep(0)  # a handler that awaits: order must hold all the same
            self.chunks.setdefault(params.session_id, []).append(update.content.text)

    async def request_permission(self, params: models.RequestPermissionRequest) -> models.RequestPermissionResponse:
        if params.session_id == self.cancel_in:
            await self.agent.cancel(models.CancelNotification(session_id=params.session_id))
            return builders.request_permission_response(builders.cancelled_request_permission_outcome())
        outcome = builders.selected_request_permission_outcome("allow")
        return builders.request_permission_response(outcome)


async def play(agent: AgentSender, client: TurnClient, chunks: int) -> dict[str, Any]:
    """The turn flow from the client side; the report the node client prints too."""
    await agent.initialize(builders.initialize_request(PROTOCOL_VERSION))
    one = (await agent.new_session(builders.new_session_request("/tmp", []))).session_id
    two = (await agent.new_session(builders.new_session_request("/tmp", []))).session_id
    first = await agent.prompt(
        builders.prompt_request(one, [builders.text_content_block(f"stream {chunks} permission")])
    )
    at_first = list(client.chunks.get(one, []))  # prompt() returned: every update of its turn was handled
    client.cancel_in = two
    second = await agent.prompt(builders.prompt_request(two, [builders.text_content_block("permission")]))
    return {"sessions": [one, two], "chunks": at_first, "stops": [first.stop_reason, second.stop_reason]}


def expected(chunks: int) -> list[str]:
    return [*(str(n) for n in range(chunks)), "allowed"]


def turn_app(**options: Any) -> Any:
    return asgi_app(TurnAgent, **options)


def _listening() -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(1024)
    sock.setblocking(False)
    return sock


@contextlib.contextmanager
def serving(app: Any, server: str = "uvicorn", *, ws_max_size: int = WS_MAX_SIZE, **options: Any) -> Iterator[str]:
    """Serve ``app`` on an ephemeral loopback port in a thread of its own; yield its ``/acp`` URL.
    ``options``: the server's own settings (``uvicorn.Config`` arguments, ``hypercorn.config.Config``
    attributes), over ours."""
    sock = _listening()
    loop = asyncio.new_event_loop()
    stop = asyncio.Event()
    if server == "uvicorn":
        # served as docs/remote.md says to serve: WebSocket compression off (a compressed message is a bomb)
        settings: dict[str, Any] = {"ws_max_size": ws_max_size, "ws_per_message_deflate": False, **options}
        config = uvicorn.Config(app, lifespan="on", log_level="warning", **settings)
        instance = uvicorn.Server(config)

        async def main() -> None:
            await instance.serve(sockets=[sock])

        def shutdown() -> None:
            instance.should_exit = True
    else:
        hyper = hypercorn.config.Config()
        hyper.bind = [f"fd://{sock.fileno()}"]
        hyper.loglevel = "WARNING"
        hyper.websocket_max_message_size = ws_max_size
        for name, value in options.items():
            setattr(hyper, name, value)

        async def main() -> None:
            await hypercorn.asyncio.serve(app, hyper, shutdown_trigger=stop.wait)  # type: ignore[arg-type]

        def shutdown() -> None:
            stop.set()

    thread = threading.Thread(target=loop.run_until_complete, args=(main(),), daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}/acp"
    finally:
        loop.call_soon_threadsafe(shutdown)
        thread.join(TIMEOUT)
        with contextlib.suppress(OSError):  # hypercorn closes the socket it was handed
            sock.close()


@contextlib.contextmanager
def node_server() -> Iterator[str]:
    """The TypeScript SDK's AcpServer (tests/interop/remote_server.mjs); yield its ``/acp`` URL."""
    process = subprocess.Popen(
        [node(), str(INTEROP / "remote_server.mjs")], cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert process.stdout is not None
        port = json.loads(process.stdout.readline())["port"]
        yield f"http://127.0.0.1:{port}/acp"
    finally:
        assert process.stdin is not None
        process.stdin.close()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def node_client(url: str, profile: str, chunks: int) -> dict[str, Any]:
    """Run the TypeScript SDK's remote client (tests/interop/remote_client.mjs) against ``url``."""
    done = subprocess.run(
        [node(), str(INTEROP / "remote_client.mjs"), url, profile, str(chunks)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
    )
    assert done.returncode == 0, f"exit {done.returncode}\n--- stdout\n{done.stdout}\n--- stderr\n{done.stderr}"
    report: dict[str, Any] = json.loads(done.stdout)
    return report
