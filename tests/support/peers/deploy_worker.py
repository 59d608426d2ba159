"""The app one worker of the deployment test serves: the resumable echo agent of
``examples/remote_agent.py`` (its ``app``, unchanged, at ``/acp``), and beside it
``GET /_worker``, answered by this process alone with what the test reads of it::

    {"pid": P, "connections": N, "agents": A}

``connections``: the ACP connections the app serves now (``AcpApp.connections``);
``agents``: the resumable agents it holds (``AcpApp.hosts.live``), attached or waiting for
their client. The deployment's launcher runs it: ``uvicorn tests.support.peers.deploy_worker:app``.

``/acp/paced`` serves the same agent pacing its turns (``PACE`` seconds after each chunk), so
that a turn is still running, whatever the machine's speed, when a test stops its worker. A prompt
whose first word is ``ASK`` holds its turn after the first chunk on a ``session/request_permission``
until the client answers it: the turn runs for as long as the test wants, whatever the machine's load.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import os
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "examples"))
sys.path.insert(0, str(ROOT / "generated"))

from acp_bindings import asgi_app, builders, models  # noqa: E402
from acp_bindings.resume import ResumeLimits  # noqa: E402
from echo_agent import EchoAgent  # noqa: E402
from remote_agent import app as acp  # noqa: E402

PACE = 0.001


class PacedEchoAgent(EchoAgent):
    async def prompt(self, params: models.PromptRequest) -> models.PromptResponse:
        texts = [block.text for block in params.prompt if isinstance(block, models.TextContentBlock)]
        words = " ".join(texts).split()
        ask = words[:1] == [ASK]
        for n, word in enumerate(words[1:] if ask else words):
            chunk = builders.agent_message_chunk_session_update(builders.text_content_block(word + " "))
            await self.client.session_update(builders.session_notification(params.session_id, chunk))
            if ask and n == 0:
                await self.client.request_permission(_permission(params.session_id))
            await asyncio.sleep(PACE)
        return models.PromptResponse(stop_reason="end_turn")


ASK = "ASK"


def _permission(session_id: str) -> models.RequestPermissionRequest:
    allow = models.PermissionOption(option_id="allow", name="Allow", kind="allow_once")
    call = models.ToolCallUpdate(tool_call_id="hold", title="Go on", kind="other")
    return models.RequestPermissionRequest(session_id=session_id, tool_call=call, options=[allow])


paced = asgi_app(PacedEchoAgent, resume=ResumeLimits(), path="/acp/paced")
# one loopback address plays every client of the test (as the launcher's per-address bounds are
# raised): the app's share per address would refuse it past half of max_connections
for served in (acp, paced):
    served.limits = dataclasses.replace(served.limits, max_address_share=1.0)


async def _lifespans(receive: Any, send: Any) -> None:
    """Both apps' lifespans: each drains on SIGTERM (``AcpApp``) by taking over the handler before
    it, so ``paced`` starts first and ``acp`` (whose path the health check probes) last: a SIGTERM
    makes ``acp`` drain (the probe answers 404), then ``paced`` (its turns end), then uvicorn stop."""
    inboxes: list[asyncio.Queue[dict[str, Any]]] = [asyncio.Queue(), asyncio.Queue()]
    outboxes: list[asyncio.Queue[dict[str, Any]]] = [asyncio.Queue(), asyncio.Queue()]
    tasks = [
        asyncio.ensure_future(served(scope_of_lifespan, inbox.get, outbox.put))
        for served, inbox, outbox in zip((paced, acp), inboxes, outboxes, strict=True)
    ]
    while True:
        message = await receive()
        for inbox, outbox in zip(inboxes, outboxes, strict=True):  # in turn: paced, then acp
            await inbox.put(message)
            answer = await outbox.get()
        await send(answer)
        if message["type"] == "lifespan.shutdown":
            await asyncio.gather(*tasks)
            return


scope_of_lifespan: dict[str, Any] = {"type": "lifespan", "asgi": {"version": "3.0"}}


async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
    if scope["type"] == "lifespan":
        await _lifespans(receive, send)
        return
    if scope["type"] == "http" and scope["path"] == "/_worker":
        hosts = acp.hosts.live if acp.hosts is not None else {}
        body = json.dumps({"pid": os.getpid(), "connections": len(acp.connections), "agents": len(hosts)}).encode()
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"application/json")]})
        await send({"type": "http.response.body", "body": body})
        return
    if scope["type"] in ("http", "websocket") and scope["path"] == "/acp/paced":
        await paced(scope, receive, send)
        return
    await acp(scope, receive, send)
