"""T5, T6: request round trips over WebSocket and over Streamable HTTP, our server against the
TypeScript SDK's, with the same client.

Ours: the generated ASGI app (``remote.asgi_app``) under uvicorn (``bench.remote_server``), on uvloop
when installed as the relay, ``deploy/launch.py`` and ``examples/remote_agent.py`` run it (the bench
group installs it; the note gives the same server on stock asyncio too);
theirs: the TypeScript SDK's ``AcpServer`` on node's http server with its node adapter and ``ws``
(``tests/interop/remote_server.mjs``, needs ``make interop-deps``). Each is a process of its own on a
loopback port; this process is the client for both, the generated ``connect_agent`` (so the ratio
compares the servers). After ``initialize`` and ``session/new``, each round sends ``session/set_mode``
requests (answered at once) one after another; the contenders run alternately on one event loop. The
floor, with the same client: ``bench.bare_server``, uvicorn answering each message with fixed JSON
(no ACP server could spend less under uvicorn), so the TS SDK's server against it is the ratio's
ceiling. The note gives the CPU each server process spends per request (from ``/proc``).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import subprocess
import sys
from typing import Any

from bench.figures import Figure
from bench.generated import ROOT, bindings
from bench.pipe_agent import quiet_client
from bench.round_trip import _process_seconds, running
from bench.timing import alternate

SEQUENTIAL = 200
PROFILES = {"ws": "T5 round trips over WebSocket", "http": "T6 round trips over Streamable HTTP"}
TARGETS = {"ws": 2.0, "http": 1.5}
"""Issue 33: our server's rate against the TypeScript SDK's."""


def _start(command: list[str], loop: str | None = None) -> tuple[subprocess.Popen[str], str]:
    """A server process and its URL; ``loop``: its ``ACP_LOOP`` (``asyncio``: uvloop off)."""
    env = {**os.environ, "ACP_LOOP": loop} if loop else None
    process = subprocess.Popen(command, cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)
    assert process.stdout is not None
    port = json.loads(process.stdout.readline())["port"]
    return process, f"http://127.0.0.1:{port}/acp"


async def _connect(stack: contextlib.AsyncExitStack, url: str, profile: str) -> Any:
    models, remote = bindings("models"), bindings("remote")
    agent = await stack.enter_async_context(remote.connect_agent(url, quiet_client(), transport=profile))
    await agent.initialize(models.InitializeRequest(protocol_version=1))
    session = await agent.new_session(models.NewSessionRequest(cwd=str(ROOT), mcp_servers=[]))
    request = models.SetSessionModeRequest(session_id=session.session_id, mode_id="code")
    return lambda: agent.set_session_mode(request)


async def one_at_a_time(call: Any) -> None:
    for _ in range(SEQUENTIAL):
        await call()


def t5_t6(rounds: int) -> list[Figure]:
    """Requests per second over WebSocket and Streamable HTTP, 1 in flight."""
    servers = {
        "ours": _start([sys.executable, "-m", "bench.remote_server"]),
        "asyncio": _start([sys.executable, "-m", "bench.remote_server"], "asyncio"),
        "theirs": _start(["node", str(ROOT / "tests" / "interop" / "remote_server.mjs")]),
        "floor": _start([sys.executable, "-m", "bench.bare_server"]),
    }
    loop = asyncio.new_event_loop()
    stack = contextlib.AsyncExitStack()
    try:
        calls = {
            f"{who}-{profile}": loop.run_until_complete(_connect(stack, url, profile))
            for who, (_, url) in servers.items()
            for profile in PROFILES
        }
        contenders = {name: running(loop, one_at_a_time, call) for name, call in calls.items()}
        medians = alternate(contenders, rounds)
        cpu = {}
        for name, run in contenders.items():
            pid = servers[name.split("-")[0]][0].pid
            before = _process_seconds(pid)
            run()
            after = _process_seconds(pid)
            cpu[name] = (after - before) / SEQUENTIAL * 1e6 if before is not None and after is not None else None
    finally:
        loop.run_until_complete(stack.aclose())
        loop.close()
        for process, _ in servers.values():
            assert process.stdin is not None
            process.stdin.close()
            process.wait(30)
    figures = []
    for profile, title in PROFILES.items():
        ours, theirs = SEQUENTIAL / medians[f"ours-{profile}"], SEQUENTIAL / medians[f"theirs-{profile}"]
        floor, on_asyncio = SEQUENTIAL / medians[f"floor-{profile}"], SEQUENTIAL / medians[f"asyncio-{profile}"]
        server_cpu = ", ".join(
            f"{who} {cpu[f'{who}-{profile}']:.0f}"
            for who in ("ours", "theirs", "floor", "asyncio")
            if cpu[f"{who}-{profile}"] is not None
        )
        note = (f"{1e6 / ours:.0f} vs {1e6 / theirs:.0f} us per request, same client (ours); floor "
                f"(bench.bare_server: uvicorn and fixed answers, no ACP): {1e6 / floor:.0f} us, "
                f"{floor / theirs:.2f}x the TS server's rate; ours on stock asyncio {1e6 / on_asyncio:.0f} us, "
                f"{on_asyncio / theirs:.2f}x; server CPU us per request: {server_cpu}")  # fmt: skip
        target = TARGETS[profile]
        figures.append(Figure(f"{title}, our server vs the TS SDK's", ours, theirs, "req/s", f">= {target}x",
                              ours / theirs >= target, note, floor / theirs))  # fmt: skip
    return figures
