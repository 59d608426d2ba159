"""A worker drains on its own SIGTERM (issue 32 item 0), without a balancer: a real uvicorn process (its
command line, as a deployment runs it) serving ``tests/support/peers/deploy_worker.py``. SIGTERM while turns run
on both profiles: the health probe (a GET of ``/acp`` that opens no stream, 406 while serving) answers
404, the running turns end whole, and then the process exits by itself. Before: uvicorn closed every
WebSocket at once (1012) and the turns failed. ``tests/test_deploy.py`` plays the same behind HAProxy.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time

import httpx
import pytest
from acp_bindings.remote import connect_agent

from tests.support.deploy import ROOT, EchoRecorder, echoed, free_ports, initialize_request, new_session_request
from tests.support.deploy import prompt_request as prompt
from tests.support.deploy import words as text

pytestmark = pytest.mark.slow

WORDS = 2_000
"""Chunks per turn on the paced agent (``/acp/paced``: 1 ms after each): about 2.5 s a turn."""
STEP = 60.0
"""Seconds any one step may take (the machine is shared: generous; nothing is timed)."""


def _worker(port: int) -> subprocess.Popen[str]:
    command = [sys.executable, "-m", "uvicorn", "tests.support.peers.deploy_worker:app", "--port", str(port)]
    return subprocess.Popen(
        [*command, "--log-level", "warning", "--timeout-graceful-shutdown", "30"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


async def _probe(url: str) -> int:
    async with httpx.AsyncClient() as http:
        return (await http.get(url)).status_code


async def _ready(url: str) -> None:
    deadline = time.monotonic() + STEP
    while True:
        try:
            if await _probe(url) == 406:
                return
        except httpx.HTTPError:
            pass
        assert time.monotonic() < deadline, "the worker did not start"
        await asyncio.sleep(0.1)


async def _turn(url: str, profile: str, tag: str, started: asyncio.Event) -> tuple[str, list[str]]:
    client = EchoRecorder()
    async with connect_agent(url, client, transport=profile) as agent:  # type: ignore[arg-type]
        await agent.initialize(initialize_request())
        session = (await agent.new_session(new_session_request())).session_id
        turn = asyncio.ensure_future(agent.prompt(prompt(session, text(WORDS, tag))))
        await asyncio.wait_for(client.first.wait(), STEP)
        started.set()
        answer = await asyncio.wait_for(turn, STEP)
    return answer.stop_reason, client.chunks


def test_a_worker_sent_sigterm_drains_before_it_stops() -> None:
    (port,) = free_ports(1)
    base = f"http://127.0.0.1:{port}"
    worker = _worker(port)

    async def scenario() -> dict[str, object]:
        await _ready(f"{base}/acp")
        profiles = ("ws", "http")
        started = [asyncio.Event() for _ in profiles]
        turns = [
            asyncio.ensure_future(_turn(f"{base}/acp/paced", p, f"{p}-", s))
            for p, s in zip(profiles, started, strict=True)
        ]
        await asyncio.wait_for(asyncio.gather(*(s.wait() for s in started)), STEP)
        os.kill(worker.pid, signal.SIGTERM)
        await asyncio.sleep(0.5)
        draining = await _probe(f"{base}/acp")
        alive_then = worker.poll() is None
        ended = await asyncio.gather(*turns, return_exceptions=True)
        return {"draining": draining, "alive": alive_then, "turns": dict(zip(profiles, ended, strict=True))}

    try:
        seen = asyncio.run(scenario())
        code = worker.wait(STEP)
    finally:
        if worker.poll() is None:
            worker.kill()
            worker.wait()
    output = worker.stdout.read() if worker.stdout else ""
    assert seen["alive"], f"the worker stopped at once:\n{output}"
    assert seen["draining"] == 404, f"the health probe while draining: {seen['draining']}"
    for profile, ended in seen["turns"].items():  # type: ignore[attr-defined]
        assert not isinstance(ended, BaseException), f"{profile}: {ended!r}\n{output}"
        stop, chunks = ended
        assert stop == "end_turn" and chunks == echoed(WORDS, f"{profile}-"), profile
    # uvicorn ends by raising the SIGTERM it captured again, once it stopped: -15 is its normal end
    assert code in (0, -signal.SIGTERM), f"the worker exited {code}:\n{output}"
