"""The turn agent (tests/support/remote.py) served over the network by uvicorn, in a process of its own.

    python tests/support/peers/remote_turn_server.py       (prints {"port": N, "pid": P} once listening)

Used where the server's own memory is measured (the load test). It stops when its stdin closes.
"""

from __future__ import annotations

import asyncio
import json
import socket
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "generated"))
sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

import uvicorn

from tests.support.remote import WS_MAX_SIZE, turn_app


async def main() -> None:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(1024)
    server = uvicorn.Server(uvicorn.Config(turn_app(), log_level="warning", ws_max_size=WS_MAX_SIZE))
    serving = asyncio.ensure_future(server.serve(sockets=[sock]))
    while not server.started:
        await asyncio.sleep(0.01)
    print(json.dumps({"port": sock.getsockname()[1]}), flush=True)
    await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)
    server.should_exit = True
    await serving


if __name__ == "__main__":
    asyncio.run(main())
