"""Compressed WebSocket messages under uvicorn's defaults (issue 46, item 3).

uvicorn accepts permessage-deflate by default and negotiates it before any ASGI app runs; it then
hands the app each message decompressed. The app cannot refuse the extension (docs/remote.md), so
what it reads after decompression is bounded as any message is: a compressed message whose
decompressed text is over the connection's ``max_message_bytes`` is answered -32600 with its id,
nothing of it reaches the agent, and the connection goes on. Served here with uvicorn's own
WebSocket settings (``ws_per_message_deflate`` on, ``ws_max_size`` 16 MiB), not ours; a client
that offers the extension, as browsers and the ``websockets`` library do. What the server itself
holds while it decompresses is measured, not tested: ``python -m bench.ws_compression_memory``.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
import websockets.asyncio.client
from acp_bindings import Agent, models
from acp_bindings.connection import Limits
from acp_bindings.remote import asgi_app

from tests.support.remote import serving

pytestmark = pytest.mark.slow

MAX_MESSAGE = 256 * 1024
BOMB = 8 * 1024 * 1024
"""Decompressed: 32 times the limit; compressed, about 8 KiB on the wire."""
UVICORN_WS_MAX_SIZE = 16 * 1024 * 1024
"""uvicorn's own default of ``ws_max_size``: its defaults, as a user who sets none serves with."""
TIMEOUT = 30.0
INIT = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": 1}}


class _Agent(Agent):
    """Counts the sessions asked for: a bomb must never reach it."""

    asked = 0

    async def initialize(self, params: models.InitializeRequest) -> models.InitializeResponse:
        return models.InitializeResponse(protocol_version=1)

    async def new_session(self, params: models.NewSessionRequest) -> models.NewSessionResponse:
        type(self).asked += 1
        return models.NewSessionResponse(session_id=f"s{type(self).asked}")

    async def prompt(self, params: models.PromptRequest) -> models.PromptResponse:
        return models.PromptResponse(stop_reason="end_turn")

    async def cancel(self, params: models.CancelNotification) -> None:
        return None


def _bomb(request_id: int) -> str:
    params = {"cwd": "/" + "a" * BOMB}
    return json.dumps({"jsonrpc": "2.0", "id": request_id, "method": "session/new", "params": params})


def test_a_compressed_message_over_the_limit_is_answered_32600_under_uvicorns_defaults() -> None:
    app = asgi_app(_Agent, limits=Limits(max_message_bytes=MAX_MESSAGE))

    async def scenario(url: str) -> tuple[str | None, list[Any], Any]:
        async with websockets.asyncio.client.connect(
            url.replace("http://", "ws://"), compression="deflate", max_size=None, open_timeout=TIMEOUT
        ) as ws:
            accepted = ws.response.headers.get("sec-websocket-extensions")
            await ws.send(json.dumps(INIT))
            await asyncio.wait_for(ws.recv(), TIMEOUT)
            answers = []
            for request_id in range(1, 6):
                await ws.send(_bomb(request_id))
                answers.append(json.loads(await asyncio.wait_for(ws.recv(), TIMEOUT)))
            good = {"jsonrpc": "2.0", "id": 9, "method": "session/new", "params": {"cwd": "/", "mcpServers": []}}
            await ws.send(json.dumps(good))
            after = json.loads(await asyncio.wait_for(ws.recv(), TIMEOUT))
        return accepted, answers, after

    _Agent.asked = 0
    with serving(app, ws_max_size=UVICORN_WS_MAX_SIZE, ws_per_message_deflate=True) as url:
        accepted, answers, after = asyncio.run(scenario(url))
    assert accepted is not None and "permessage-deflate" in accepted, accepted  # compression is on
    assert [(a.get("id"), a.get("error", {}).get("code")) for a in answers] == [(n, -32600) for n in range(1, 6)]
    assert after == {"jsonrpc": "2.0", "id": 9, "result": {"sessionId": "s1"}}  # the connection goes on
    assert _Agent.asked == 1  # no bomb reached the agent
