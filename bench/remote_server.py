"""T5/T6's server process: our ASGI app (``remote.asgi_app``) under uvicorn, serving the agent of
``bench.pipe_agent`` that answers every request at once, one per connection.

    python -m bench.remote_server      (prints {"port": N} once listening; stops when stdin closes)
"""

from __future__ import annotations

import asyncio
import json
import socket
import sys

import uvicorn

from bench.generated import bindings
from bench.pipe_agent import quick_agent


async def main() -> None:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(128)
    app = bindings("remote").asgi_app(quick_agent)
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", ws_max_size=32 * 1024 * 1024 + 1024))
    serving = asyncio.ensure_future(server.serve(sockets=[sock]))
    while not server.started:
        await asyncio.sleep(0.01)
    print(json.dumps({"port": sock.getsockname()[1]}), flush=True)
    await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)
    server.should_exit = True
    await serving


if __name__ == "__main__":
    asyncio.run(main())
