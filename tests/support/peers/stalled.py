"""Concurrent senders to a peer that stopped reading (issue 25, item 4), written only with the
generated stable bindings.

    python tests/support/peers/stalled.py client stdio           spawns the agent below over a pipe
    python tests/support/peers/stalled.py client ws|http URL     connects to the served agent
    python tests/support/peers/stalled.py agent                  the agent over stdio (spawned by the client)
    python tests/support/peers/stalled.py serve                  the agent served by uvicorn; prints {"port": N}

The client sends one ``session/prompt`` whose ``_meta`` names its pid, then stops reading: its
``session/update`` handler waits until the process gets SIGUSR1, so its connection soon stops
reading the transport (notifications pile up to their limit), and the agent's writes wait. The
agent's ``prompt`` starts ``SENDERS`` concurrent ``session_update`` calls of a 64 KiB chunk (one
shared text; each notification's ``sessionId``-scoped message id gives its call order), waits
until they stall, measures how much its resident set grew, sends the client SIGUSR1, waits for
every send and answers with the growth in the result's ``_meta``. The client prints one JSON line:
the growth (MiB), the number of chunks received and whether they arrived in call order.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "generated"))

from acp_bindings import PROTOCOL_VERSION, builders, models
from acp_bindings.interfaces import Agent, Client
from acp_bindings.remote import asgi_app, connect_agent
from acp_bindings.serve import run_agent, spawn_agent

SENDERS = 3000
CHUNK = "x" * (64 * 1024)
STALL_POLLS = 10
"""Polls 50 ms apart without a send finishing: the senders have stalled."""


def rss_mib() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS in /proc/self/status")


class StalledAgent(Agent):
    async def initialize(self, params: models.InitializeRequest) -> models.InitializeResponse:
        return models.InitializeResponse(protocol_version=PROTOCOL_VERSION)

    async def new_session(self, params: models.NewSessionRequest) -> models.NewSessionResponse:
        return models.NewSessionResponse(session_id="stalled")

    async def prompt(self, params: models.PromptRequest) -> models.PromptResponse:
        client_pid = int((params.meta or {})["pid"])
        await self._chunk(params.session_id, -1, "warm-up")  # builds the serializer before measuring
        before = rss_mib()
        senders = [asyncio.ensure_future(self._chunk(params.session_id, n, CHUNK)) for n in range(SENDERS)]
        done, quiet = 0, 0
        while quiet < STALL_POLLS:
            await asyncio.sleep(0.05)
            now = sum(sender.done() for sender in senders)
            quiet, done = (quiet + 1 if now == done else 0), now
        grown = rss_mib() - before
        stalled = done < SENDERS
        os.kill(client_pid, signal.SIGUSR1)
        await asyncio.gather(*senders)
        return models.PromptResponse(stop_reason="end_turn", meta={"grown_mib": grown, "stalled": stalled})

    async def _chunk(self, session_id: str, number: int, text: str) -> None:
        update = builders.agent_message_chunk_session_update(builders.text_content_block(text), message_id=str(number))
        await self.client.session_update(builders.session_notification(session_id, update))

    async def cancel(self, params: models.CancelNotification) -> None:
        return None

    async def authenticate(self, params: models.AuthenticateRequest) -> models.AuthenticateResponse:
        raise NotImplementedError


class GatedClient(Client):
    """Reads nothing more once its first chunk is being handled, until SIGUSR1."""

    def __init__(self) -> None:
        self.gate = asyncio.Event()
        self.numbers: list[int] = []
        self.sizes: set[int] = set()
        asyncio.get_running_loop().add_signal_handler(signal.SIGUSR1, self.gate.set)

    async def session_update(self, params: models.SessionNotification) -> None:
        await self.gate.wait()
        update = params.update
        if isinstance(update, models.AgentMessageChunkSessionUpdate) and update.message_id != "-1":
            self.numbers.append(int(update.message_id or "-2"))
            assert isinstance(update.content, models.TextContentBlock)
            self.sizes.add(len(update.content.text))

    async def request_permission(self, params: models.RequestPermissionRequest) -> Any:
        raise NotImplementedError


async def client(how: str, url: str | None) -> dict[str, Any]:
    gated = GatedClient()
    if how == "stdio":
        command = [sys.executable, __file__, "agent"]
        async with spawn_agent(command, gated) as agent:
            return await _turn(agent, gated)
    assert url is not None
    async with connect_agent(url, gated, transport=how) as agent:  # type: ignore[arg-type]
        return await _turn(agent, gated)


async def _turn(agent: Any, gated: GatedClient) -> dict[str, Any]:
    await agent.initialize(models.InitializeRequest(protocol_version=PROTOCOL_VERSION))
    session = await agent.new_session(models.NewSessionRequest(cwd="/", mcp_servers=[]))
    prompt = models.PromptRequest(
        session_id=session.session_id, prompt=[builders.text_content_block("go")], meta={"pid": os.getpid()}
    )
    answer = await agent.prompt(prompt)
    meta = answer.meta or {}
    return {
        "grown_mib": meta.get("grown_mib"),
        "stalled": meta.get("stalled"),
        "received": len(gated.numbers),
        "in_order": gated.numbers == list(range(SENDERS)),
        "sizes": sorted(gated.sizes),
    }


async def serve() -> None:
    import uvicorn

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(16)
    # the default limits: over HTTP the server holds up to RemoteLimits.max_stream_bytes (32 MiB)
    # of one session's output for its client before the agent's writes wait
    app = asgi_app(StalledAgent)
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", ws_max_size=33 * 1024 * 1024))
    serving = asyncio.ensure_future(server.serve(sockets=[sock]))
    while not server.started:
        await asyncio.sleep(0.01)
    print(json.dumps({"port": sock.getsockname()[1]}), flush=True)
    await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)
    server.should_exit = True
    await serving


if __name__ == "__main__":
    role = sys.argv[1]
    if role == "client":
        print(json.dumps(asyncio.run(client(sys.argv[2], sys.argv[3] if len(sys.argv) > 3 else None))), flush=True)
    elif role == "agent":
        asyncio.run(run_agent(StalledAgent()))
    else:
        asyncio.run(serve())
