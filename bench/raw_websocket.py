"""T5's ceiling with the lightest client: WebSocket round trips from a client that does no ACP work.

    uv run --group bench python -m bench.raw_websocket [--requests N] [--rounds N]

T5 drives both servers with the generated ``connect_agent``, whose work per request is in both sides
of the ratio. Here the client is the ``websockets`` library alone: after ``initialize`` and
``session/new``, it sends the same ``session/set_mode`` text frame (a fresh id each) and waits for
the answer frame, one after another, to our server (``bench.remote_server``), the TypeScript SDK's
(``tests/interop/remote_server.mjs``) and the floor (``bench.bare_server``: uvicorn answering with
fixed JSON). Rounds alternate; the median microseconds per request of each, and the TS SDK's time
against ours and against the floor: the most a server under uvicorn could reach.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import time
from typing import Any

from websockets.asyncio.client import ClientConnection, connect

from bench.generated import ROOT
from bench.remote_trip import _start
from bench.round_trip import _process_seconds

SERVERS = {
    "ours": [sys.executable, "-m", "bench.remote_server"],
    "theirs": ["node", str(ROOT / "tests" / "interop" / "remote_server.mjs")],
    "floor": [sys.executable, "-m", "bench.bare_server"],
}


async def _session(url: str) -> tuple[ClientConnection, str]:
    socket = await connect("ws" + url.removeprefix("http"), compression=None, max_size=None)
    await socket.send(json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": 1}}))
    await socket.recv()
    new = {"jsonrpc": "2.0", "id": 1, "method": "session/new", "params": {"cwd": str(ROOT), "mcpServers": []}}
    await socket.send(json.dumps(new))
    return socket, json.loads(await socket.recv())["result"]["sessionId"]


async def _round(socket: ClientConnection, session: str, first: int, requests: int) -> float:
    params = json.dumps({"sessionId": session, "modeId": "code"})
    started = time.perf_counter()
    for number in range(first, first + requests):
        await socket.send(f'{{"jsonrpc":"2.0","id":{number},"method":"session/set_mode","params":{params}}}')
        await socket.recv()
    return (time.perf_counter() - started) / requests * 1e6


async def measure(requests: int, rounds: int) -> dict[str, Any]:
    servers = {name: _start(command) for name, command in SERVERS.items()}
    try:
        sockets = {name: await _session(url) for name, (_, url) in servers.items()}
        times: dict[str, list[float]] = {name: [] for name in servers}
        cpu: dict[str, float] = {}
        for number in range(rounds + 1):  # the first round warms up
            for name, (socket, session) in sockets.items():
                before = _process_seconds(servers[name][0].pid)
                times[name].append(await _round(socket, session, 10 + number * requests, requests))
                after = _process_seconds(servers[name][0].pid)
                if number and before is not None and after is not None:
                    cpu[name] = cpu.get(name, 0.0) + (after - before) / (rounds * requests) * 1e6
        for socket, _ in sockets.values():
            await socket.close()
    finally:
        for process, _ in servers.values():
            assert process.stdin is not None
            process.stdin.close()
            process.wait(30)
    return {
        "us": {name: statistics.median(values[1:]) for name, values in times.items()},
        "server_cpu_us": cpu,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=9)
    args = parser.parse_args()
    found = asyncio.run(measure(args.requests, args.rounds))
    us, cpu = found["us"], found["server_cpu_us"]
    for name in SERVERS:
        print(f"{name:7} {us[name]:7.0f} us per request, server CPU {cpu.get(name, float('nan')):5.0f} us")
    print(f"the TS SDK's server against ours: {us['theirs'] / us['ours']:.2f}x; against the floor: "
          f"{us['theirs'] / us['floor']:.2f}x")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
