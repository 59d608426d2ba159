"""What WebSocket compression costs a server's memory under uvicorn's defaults (issue 46, item 3).

    uv run --frozen python -m bench.ws_compression_memory [--messages N] [--mib M] [--sockets S]

A uvicorn process serves the turn agent (``tests.support.remote.turn_app``) with uvicorn's own
defaults: ``ws_per_message_deflate`` on, ``ws_max_size`` 16 MiB; then with compression off. A client
(the ``websockets`` library, offering permessage-deflate) opens ``--sockets`` WebSockets, sends
``initialize``, then ``--messages`` notifications of ``--mib`` MiB each (one repeated letter: about
a thousandth of that on the wire when compressed). Printed: the server's resident set before, after,
and its peak (``VmHWM``), in MiB, and the extension the server accepted. Neither our app nor any ASGI
app can turn the extension down or bound what the server decompresses: uvicorn negotiates it before
the app runs and decompresses a whole socket read (up to 256 KiB) before it hands the app a message.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import subprocess
import sys

from websockets.asyncio.client import connect

from bench.generated import ROOT

SERVER = """
import socket, sys
sys.path[:0] = ["generated", "."]
import uvicorn
from tests.support.remote import turn_app
sock = socket.socket(); sock.bind(("127.0.0.1", 0)); sock.listen(64)
print(sock.getsockname()[1], flush=True)
options = {} if sys.argv[1] == "on" else {"ws_per_message_deflate": False}
uvicorn.Server(uvicorn.Config(turn_app(), log_level="warning", **options)).run(sockets=[sock])
"""


def _memory(pid: int) -> tuple[int, int]:
    """The resident set and its peak, in MiB."""
    with open(f"/proc/{pid}/status", encoding="ascii") as status:
        fields = dict(line.split(":", 1) for line in status)
    return int(fields["VmRSS"].split()[0]) // 1024, int(fields["VmHWM"].split()[0]) // 1024


async def _socket(port: int, messages: int, size: int) -> str | None:
    initialize = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": 1}}
    note = json.dumps({"jsonrpc": "2.0", "method": "_bench/note", "params": {"text": "a" * (size - 64)}})
    async with connect(f"ws://127.0.0.1:{port}/acp", compression="deflate", max_size=None) as socket:
        await socket.send(json.dumps(initialize))
        await socket.recv()
        for _ in range(messages):
            await socket.send(note)
        await asyncio.sleep(3.0)  # the server reads what was sent (a figure, not a test: no event to wait on)
        return socket.response.headers.get("sec-websocket-extensions")


def measure(compression: str, messages: int, size: int, sockets: int) -> str:
    server = subprocess.Popen([sys.executable, "-c", SERVER, compression], cwd=ROOT, stdout=subprocess.PIPE, text=True)
    try:
        assert server.stdout is not None
        port = int(server.stdout.readline())
        before, _ = _memory(server.pid)

        async def run() -> list[str | None]:
            return await asyncio.gather(*(_socket(port, messages, size) for _ in range(sockets)))

        accepted = asyncio.run(run())[0]
        after, peak = _memory(server.pid)
    finally:
        server.kill()
        server.wait()
    return f"compression {compression:3}: RSS {before} -> {after} MiB, peak {peak} MiB; accepted: {accepted}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--messages", type=int, default=20)
    parser.add_argument("--mib", type=int, default=15)
    parser.add_argument("--sockets", type=int, default=1)
    options = parser.parse_args()
    print(f"{options.sockets} socket(s), {options.messages} messages of {options.mib} MiB each:")
    for compression in ("on", "off"):
        print("  " + measure(compression, options.messages, options.mib * 1024 * 1024, options.sockets))


if __name__ == "__main__":
    main()
