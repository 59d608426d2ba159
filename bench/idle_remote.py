"""R3: the memory a remote server holds per idle connection, ours against the TypeScript SDK's.

Each sample starts a fresh server process (ours: ``bench.remote_server``, the generated ASGI app
under uvicorn; theirs: the TypeScript SDK's ``AcpServer`` on node, ``tests/interop/
remote_server.mjs``), opens ``CONNECTIONS`` clients on one profile (the generated
``connect_agent``), each with ``initialize`` and ``session/new`` done, and divides the growth of
the server's resident set (``VmRSS`` from ``/proc``) by their number: what an idle connection with
its agent and one session costs. The samples alternate between the servers; the figure is the
median. The target is absolute (issue 33: 64 KiB); the TypeScript SDK's server is the comparison.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
from statistics import median

from bench.figures import Figure
from bench.generated import ROOT
from bench.remote_trip import _connect, _start

CONNECTIONS = 100
TARGET_KIB = 64
PROFILES = {"ws": "WebSocket", "http": "Streamable HTTP"}
COMMANDS = {
    "ours": [sys.executable, "-m", "bench.remote_server"],
    "theirs": ["node", str(ROOT / "tests" / "interop" / "remote_server.mjs")],
}


def _rss_kib(pid: int) -> int:
    with open(f"/proc/{pid}/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise RuntimeError("no VmRSS")


async def _per_connection(url: str, pid: int, profile: str) -> float:
    async with contextlib.AsyncExitStack() as warm:  # the first connection's imports and caches
        await _connect(warm, url, profile)
    await asyncio.sleep(0.2)
    before = _rss_kib(pid)
    async with contextlib.AsyncExitStack() as stack:
        for _ in range(CONNECTIONS):
            await _connect(stack, url, profile)
        await asyncio.sleep(0.5)
        grown = _rss_kib(pid) - before
    return grown / CONNECTIONS


def _sample(who: str, profile: str) -> float:
    process, url = _start(COMMANDS[who])
    try:
        return asyncio.run(_per_connection(url, process.pid, profile))
    finally:
        assert process.stdin is not None
        process.stdin.close()
        process.wait(30)


def r3(rounds: int) -> list[Figure]:
    """KiB of server memory per idle connection, per profile."""
    samples: dict[str, list[float]] = {}
    for _ in range(rounds):
        for profile in PROFILES:
            for who in COMMANDS:
                samples.setdefault(f"{who}-{profile}", []).append(_sample(who, profile))
    figures = []
    for profile, title in PROFILES.items():
        ours, theirs = median(samples[f"ours-{profile}"]), median(samples[f"theirs-{profile}"])
        spread = ", ".join(f"{value:.0f}" for value in samples[f"ours-{profile}"])
        figures.append(
            Figure(
                f"R3 server memory per idle {title} connection, ours vs the TS SDK's",
                ours,
                theirs,
                "KiB",
                f"<= {TARGET_KIB} KiB",
                ours <= TARGET_KIB,
                f"{CONNECTIONS} connections, each initialized with one session; RSS growth / {CONNECTIONS}; "
                f"ours per sample: {spread}",
            )
        )
    return figures
