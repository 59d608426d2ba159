"""T7: the relay's overhead: request round trips through ``acpgen relay`` (over WebSocket and
over Streamable HTTP) against a direct stdio connection to the same agent.

The agent is ``bench.pipe_agent ours`` (the generated agent that answers every request at once), a process of
its own in every case: spawned by this process and spoken to over its pipes (direct), or spawned by the relay
(a process of its own on a loopback port, one agent per connection) and spoken to through it. This process is
the client for all, the generated one (``Connection`` over stdio; ``connect_agent`` over the network). For
scale, the same requests to our ASGI app serving the same agent in its own process (``bench.remote_server``, as
T5/T6 measure it): the relay costs what the network profile costs plus one more hop over pipes. After
``initialize`` and ``session/new``, each round sends ``session/set_mode`` requests (answered at once) one after
another; the contenders run alternately on one event loop. The note gives the CPU the relay process spends per
request (from ``/proc``).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.figures import Figure
from bench.generated import GENERATED, ROOT
from bench.remote_trip import _connect, _start
from bench.round_trip import _process_seconds, connect_ours, one_at_a_time, running
from bench.timing import alternate

SEQUENTIAL = 200
PROFILES = {"ws": "WebSocket", "http": "Streamable HTTP"}


def _relay(log: Path) -> tuple[subprocess.Popen[bytes], str]:
    """The relay process serving ``bench.pipe_agent ours``; its URL (read from the first line it logs)."""
    agent = [sys.executable, "-m", "bench.pipe_agent", "ours"]
    command = [sys.executable, "-m", "acpgen", "relay", "--port", "0", "--cwd", str(ROOT), "--", *agent]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(GENERATED), str(ROOT)])}
    with log.open("wb") as out:
        process = subprocess.Popen(command, cwd=ROOT, env=env, stdin=subprocess.DEVNULL, stderr=out)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        found = re.search(r"at (http://\S+)", log.read_text(errors="replace"))
        if found:
            return process, found.group(1)
        if process.poll() is not None:
            break
        time.sleep(0.05)
    process.kill()
    raise RuntimeError(f"the relay did not start:\n{log.read_text(errors='replace')}")


def t7(rounds: int) -> list[Figure]:
    """Requests per second through the relay and directly over stdio, 1 in flight."""
    loop = asyncio.new_event_loop()
    stack = contextlib.AsyncExitStack()
    with tempfile.TemporaryDirectory() as folder:
        relay, relay_url = _relay(Path(folder) / "relay.log")
        server, server_url = _start([sys.executable, "-m", "bench.remote_server"])
        direct = loop.run_until_complete(connect_ours())
        try:
            assert direct.set_mode is not None
            calls = {"direct": direct.set_mode}
            for profile in PROFILES:
                calls[f"relay-{profile}"] = loop.run_until_complete(_connect(stack, relay_url, profile))
                calls[f"app-{profile}"] = loop.run_until_complete(_connect(stack, server_url, profile))
            contenders = {name: running(loop, one_at_a_time, call) for name, call in calls.items()}
            medians = alternate(contenders, rounds)
            cpu = {}
            for profile in PROFILES:
                before = _process_seconds(relay.pid)
                contenders[f"relay-{profile}"]()
                after = _process_seconds(relay.pid)
                cpu[profile] = (after - before) / SEQUENTIAL * 1e6 if before is not None and after is not None else None
        finally:
            loop.run_until_complete(stack.aclose())
            loop.run_until_complete(direct.close())
            loop.close()
            relay.terminate()
            relay.wait(30)
            assert server.stdin is not None
            server.stdin.close()
            server.wait(30)
    us = {name: median / SEQUENTIAL * 1e6 for name, median in medians.items()}
    figures = []
    for profile, title in PROFILES.items():
        relayed, direct_us, app = us[f"relay-{profile}"], us["direct"], us[f"app-{profile}"]
        relay_cpu = f"{cpu[profile]:.0f}" if cpu[profile] is not None else "?"
        note = (f"{relayed:.0f} vs {direct_us:.0f} us per request: the relay adds {relayed - direct_us:.0f} us; "
                f"our ASGI app serving the agent in its process: {app:.0f} us; "
                f"relay CPU us per request: {relay_cpu}")  # fmt: skip
        figures.append(Figure(f"T7 relay over {title} vs direct stdio, same agent", 1e6 / relayed, 1e6 / direct_us,
                              "req/s", "-", True, note))  # fmt: skip
    return figures
