"""The remote app's metrics after a scripted run (issue 46, item 2): the resumable echo agent under
uvicorn, in a process of its own under ``tests/support/otel_run.py`` (the SDK set up as an
application does, its metrics served for Prometheus and written at exit). Raw WebSocket clients
script what each metric counts: a refused authorization, a refused connection over the limit, a
connection that drops and leaves its agent detached, a reconnection that resumes it, an unknown
token. The detached gauge is scraped while the agent waits; the counters are read at exit.
"""

from __future__ import annotations

import asyncio
import json
import re
import signal
import subprocess
from pathlib import Path
from typing import Any

import httpx
import pytest
import websockets.asyncio.client
from acp_bindings.resume import EXTENSION

from tests.support.otel_files import ENV, LIMIT, ROOT, points, traced, values

pytestmark = pytest.mark.slow

TOKEN = "let-me-in"
SERVER = f"""
import socket, sys
import uvicorn
sys.path.insert(0, "examples")
from echo_agent import EchoAgent
from acp_bindings.remote import RemoteLimits, ResumeLimits, asgi_app

def authorize(request):
    return request.headers.get("authorization") == "Bearer {TOKEN}" or 403

app = asgi_app(
    EchoAgent,
    authorize=authorize,
    resume=ResumeLimits(detached_for=60.0),
    remote_limits=RemoteLimits(max_connections=2, max_address_share=1.0),
)
sock = socket.socket(); sock.bind(("127.0.0.1", 0)); sock.listen(64)
print(sock.getsockname()[1], flush=True)
uvicorn.Server(uvicorn.Config(app, log_level="warning", ws_per_message_deflate=False)).run(sockets=[sock])
"""
HEADERS = {"authorization": f"Bearer {TOKEN}"}


def _initialize(meta: dict[str, Any] | None = None) -> str:
    params: dict[str, Any] = {"protocolVersion": 1}
    if meta is not None:
        params["_meta"] = {EXTENSION: meta}
    return json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": params})


def _gauges(url: str) -> dict[str, float]:
    """The ``acp_`` samples of a Prometheus page, by name and labels but the scope's."""
    found = {}
    for line in httpx.get(url, timeout=LIMIT).text.splitlines():
        if line.startswith("acp_"):
            name, value = line.rsplit(" ", 1)
            found[re.sub(r',?otel_scope_[a-z_]+="[^"]*"', "", name).replace("{}", "")] = float(value)
    return found


async def _script(url: str, metrics: str) -> dict[str, float]:
    """What each metric counts, in turn; the gauges as scraped while the agent is detached."""
    ws_url = url.replace("http://", "ws://")
    connect = websockets.asyncio.client.connect
    assert httpx.post(url, content=_initialize(), headers={"content-type": "application/json"}).status_code == 403
    first = await connect(ws_url, additional_headers=HEADERS)
    await first.send(_initialize({"version": 1}))
    token = json.loads(await first.recv())["result"]["_meta"][EXTENSION]["token"]
    async with connect(ws_url, additional_headers=HEADERS) as second:
        await second.send(_initialize())
        await second.recv()
        with pytest.raises(websockets.exceptions.InvalidStatus) as refused:  # the third of two
            async with connect(ws_url, additional_headers=HEADERS):
                pass
        assert refused.value.response.status_code == 503
    first.transport.abort()  # lost, not left (a close frame would end its agent): the agent waits for it
    deadline = asyncio.get_running_loop().time() + LIMIT
    while (gauges := _gauges(metrics)).get('acp_agents_detached{acp_profile="websocket"}') != 1.0:
        assert asyncio.get_running_loop().time() < deadline, gauges
        await asyncio.sleep(0.05)
    async with connect(ws_url, additional_headers=HEADERS) as back:
        await back.send(_initialize({"version": 1, "token": token, "lastEventId": 0, "handling": [], "sessions": []}))
        assert json.loads(await back.recv())["result"]["_meta"][EXTENSION]["received"] == 1
    async with connect(ws_url, additional_headers=HEADERS) as stranger:
        await stranger.send(_initialize({"version": 1, "token": "0" * 64, "lastEventId": 0, "handling": []}))
        assert json.loads(await stranger.recv())["error"]["code"] == -32060
    return gauges


def test_the_remote_apps_metrics_count_refusals_detached_agents_and_resumes(tmp_path: Path) -> None:
    prefix, port_file = tmp_path / "server", tmp_path / "metrics-port"
    server = subprocess.Popen(
        [*traced(prefix), "-c", SERVER],
        cwd=ROOT,
        env={**ENV, "OTEL_RUN_SPANS": "0", "OTEL_RUN_PROMETHEUS": str(port_file)},
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert server.stdout is not None
        url = f"http://127.0.0.1:{int(server.stdout.readline())}/acp"
        metrics = f"http://127.0.0.1:{port_file.read_text(encoding='utf-8')}/metrics"
        detached = asyncio.run(_script(url, metrics))
        server.send_signal(signal.SIGTERM)  # a graceful stop: otel_run writes the metrics at exit
        assert server.wait(LIMIT) in (0, 143, -signal.SIGTERM)
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()
    assert detached.get('acp_connections_open{acp_profile="websocket"}', 0.0) == 0.0, detached  # none open
    at_exit = points(prefix.with_suffix(".metrics.json"))
    assert values(at_exit["acp.connections.refused"], "acp.refusal") == {("authorization",): 1, ("limit",): 1}
    assert values(at_exit["acp.resumes"], "acp.resume.outcome") == {("resumed",): 1, ("unknown",): 1}
