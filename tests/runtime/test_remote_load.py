"""Load (issue 21, item 7): 200 concurrent WebSocket connections to the app under uvicorn (a process of
its own), each playing 10 prompts of 20 updates: nothing lost or reordered. Reports the server's memory
per idle connection (resident set growth of the server process over 200 initialized connections with
a session each, divided by 200), printed with ``-s`` and recorded as a test property."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from collections.abc import Callable
from typing import Any

import pytest
from acp_bindings import PROTOCOL_VERSION, builders
from acp_bindings.remote import connect_agent

from tests.support.remote import TurnClient
from tests.support.sdk import ROOT

pytestmark = pytest.mark.slow

CONNECTIONS, PROMPTS, UPDATES = 200, 10, 20


def _rss(pid: int) -> int:
    with open(f"/proc/{pid}/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS")


async def _load(url: str, pid: int) -> tuple[float, list[list[str]]]:
    base = _rss(pid)
    ready = asyncio.Event()
    opened = 0
    results: list[list[str]] = []

    async def one() -> None:
        nonlocal opened
        client = TurnClient()
        async with connect_agent(url, client, transport="ws") as agent:
            await agent.initialize(builders.initialize_request(PROTOCOL_VERSION))
            session = (await agent.new_session(builders.new_session_request("/tmp", []))).session_id
            opened += 1
            if opened == CONNECTIONS:
                ready.set()
            await ready.wait()
            await idle_measured.wait()
            for _ in range(PROMPTS):
                client.chunks.clear()
                text = builders.text_content_block(f"stream {UPDATES}")
                await agent.prompt(builders.prompt_request(session, [text]))
                results.append(client.chunks.get(session, []))

    idle_measured = asyncio.Event()
    clients = [asyncio.ensure_future(one()) for _ in range(CONNECTIONS)]
    await asyncio.wait_for(ready.wait(), 120)
    await asyncio.sleep(0.5)
    per_connection = (_rss(pid) - base) / CONNECTIONS
    idle_measured.set()
    await asyncio.wait_for(asyncio.gather(*clients), 300)
    return per_connection, results


def test_two_hundred_websockets_lose_and_reorder_nothing(record_property: Callable[[str, Any], None]) -> None:
    process = subprocess.Popen(
        [sys.executable, str(ROOT / "tests" / "support" / "peers" / "remote_turn_server.py")],
        cwd=ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        port = json.loads(process.stdout.readline())["port"]
        per_connection, results = asyncio.run(_load(f"http://127.0.0.1:{port}/acp", process.pid))
    finally:
        assert process.stdin is not None
        process.stdin.close()
        process.wait(30)
    assert len(results) == CONNECTIONS * PROMPTS
    expected = [str(n) for n in range(UPDATES)]
    assert all(chunks == expected for chunks in results), "an update was lost or reordered"
    record_property("server_bytes_per_idle_websocket_connection", round(per_connection))
    print(f"\nserver memory per idle WebSocket connection: {per_connection / 1024:.1f} KiB")
