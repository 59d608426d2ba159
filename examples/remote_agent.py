"""The echo agent of ``echo_agent.py``, served over the network at ``http://HOST:PORT/acp``.

    python examples/remote_agent.py [--host 127.0.0.1] [--port 8000]

Both profiles of ACP's remote transport on one endpoint: Streamable HTTP and WebSocket
(``remote_client.py`` speaks either). One ``EchoAgent`` per connection. It needs only an
ASGI server (uvicorn here; it serves WebSockets with the ``websockets`` package it finds),
not the bindings' ``remote`` extra, which is the client's. The ASGI application is ``app``:
``uvicorn examples.remote_agent:app`` serves it just as well.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "generated"))
sys.path.insert(0, str(Path(__file__).resolve().parent))  # the echo example beside this file

from acp_bindings import asgi_app
from acp_bindings.resume import ResumeLimits
from acp_bindings.serve import chosen_loop
from echo_agent import EchoAgent

app = asgi_app(EchoAgent, resume=ResumeLimits())


def main() -> None:
    import uvicorn

    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--host", default="127.0.0.1", help="the address to listen on (default: 127.0.0.1)")
    parser.add_argument("--port", type=int, default=8000, help="the port to listen on (default: 8000)")
    args = parser.parse_args()
    # WebSocket frames up to the message limit (32 MiB), as HTTP bodies, never compressed (docs/remote.md);
    # uvloop when installed (ACP_LOOP=asyncio: not)
    uvicorn.run(
        app,
        host=args.host,
        port=args.port,
        ws_max_size=32 * 1024 * 1024 + 1024,
        ws_per_message_deflate=False,
        loop=chosen_loop(),
    )


if __name__ == "__main__":
    main()
