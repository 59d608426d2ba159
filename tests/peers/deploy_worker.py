"""The app one worker of the deployment test serves: the resumable echo agent of
``examples/remote_agent.py`` (its ``app``, unchanged, at ``/acp``), and beside it
``GET /_worker``, answered by this process alone with what the test reads of it::

    {"pid": P, "connections": N, "agents": A}

``connections``: the ACP connections the app serves now (``AcpApp.connections``);
``agents``: the resumable agents it holds (``AcpApp.hosts.live``), attached or waiting for
their client. The deployment's launcher runs it: ``uvicorn tests.peers.deploy_worker:app``.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "examples"))

from remote_agent import app as acp  # noqa: E402 - the example puts generated/ on the path first


async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
    if scope["type"] == "http" and scope["path"] == "/_worker":
        hosts = acp.hosts.live if acp.hosts is not None else {}
        body = json.dumps({"pid": os.getpid(), "connections": len(acp.connections), "agents": len(hosts)}).encode()
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"application/json")]})
        await send({"type": "http.response.body", "body": body})
        return
    await acp(scope, receive, send)
