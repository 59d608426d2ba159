"""T5/T6's server process: our ASGI app (``remote.asgi_app``) under uvicorn, serving the agent of
``bench.pipe_agent`` that answers every request at once, one per connection.

    python -m bench.remote_server [hypercorn]   (prints {"port": N} once listening; stops when stdin closes)

``hypercorn``: under hypercorn instead, which speaks HTTP/2 without TLS to a client that starts with
it (h2c, prior knowledge: ``connect_agent(..., http2=True)``), for ``bench.http_breakdown``.
"""

from __future__ import annotations

import asyncio
import json
import socket
import sys
from typing import Any

import uvicorn

from bench.generated import bindings
from bench.pipe_agent import quick_agent


async def main() -> None:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(128)
    remote = bindings("remote")
    if sys.argv[1:] == ["hypercorn"]:
        await _hypercorn(remote, sock)
        return
    await serve_uvicorn(remote.asgi_app(quick_agent), sock)


async def serve_uvicorn(app: Any, sock: socket.socket, *, force_exit: bool = False) -> None:
    """Serve ``app`` under uvicorn on ``sock``: print ``{"port": N}`` once listening, stop when
    stdin closes (``force_exit``: without waiting for open responses, such as endless streams)."""
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", ws_max_size=32 * 1024 * 1024 + 1024))
    serving = asyncio.ensure_future(server.serve(sockets=[sock]))
    while not server.started:
        await asyncio.sleep(0.01)
    print(json.dumps({"port": sock.getsockname()[1]}), flush=True)
    await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)
    server.should_exit = True
    server.force_exit = force_exit
    await serving


async def _hypercorn(remote: object, sock: socket.socket) -> None:
    import hypercorn.asyncio
    import hypercorn.config

    # hypercorn 0.18 over HTTP/2 can hold an SSE event until the stream's next write (docs/remote.md):
    # a short keep-alive bounds the wait, as the tests and a deployment on it set
    app = remote.asgi_app(quick_agent, remote_limits=remote.RemoteLimits(keepalive=0.2))  # type: ignore[attr-defined]
    config = hypercorn.config.Config()
    config.bind = [f"fd://{sock.fileno()}"]
    config.loglevel = "WARNING"
    # over HTTP/2 every request of a client shares one connection, which hypercorn ends (GOAWAY) after
    # keep_alive_max_requests (1,000 by default): that would end the client's ACP connection mid-run
    config.keep_alive_max_requests = 10**9
    stop = asyncio.Event()
    serving = asyncio.ensure_future(hypercorn.asyncio.serve(app, config, shutdown_trigger=stop.wait))
    await asyncio.sleep(0.3)
    print(json.dumps({"port": sock.getsockname()[1]}), flush=True)
    await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)
    stop.set()
    await serving


if __name__ == "__main__":
    bindings("serve").run(main())  # uvloop when installed (ACP_LOOP=asyncio: not), as users' servers run
