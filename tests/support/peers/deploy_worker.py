"""The app one worker of the deployment test serves: the resumable echo agent of
``examples/remote_agent.py`` (its ``app``, unchanged, at ``/acp``), and beside it
``GET /_worker``, answered by this process alone with what the test reads of it::

    {"pid": P, "connections": N, "agents": A}

``connections``: the ACP connections the app serves now (``AcpApp.connections``);
``agents``: the resumable agents it holds (``AcpApp.hosts.live``), attached or waiting for
their client. The deployment's launcher runs it: ``uvicorn tests.support.peers.deploy_worker:app``.

``/acp/paced`` serves the same agent pacing its turns (``PACE`` seconds after each chunk), so
that a turn is still running, whatever the machine's speed, when a test stops its worker.
"""

from __future__ import annotations

import asyncio
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
        for word in " ".join(texts).split():
            chunk = builders.agent_message_chunk_session_update(builders.text_content_block(word + " "))
            await self.client.session_update(builders.session_notification(params.session_id, chunk))
            await asyncio.sleep(PACE)
        return models.PromptResponse(stop_reason="end_turn")


paced = asgi_app(PacedEchoAgent, resume=ResumeLimits(), path="/acp/paced")


async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
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
