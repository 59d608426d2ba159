"""``python -m <package>.relay``: serve a stdio ACP agent over the network, under
uvicorn.

Support code: it knows no method of the protocol (the app comes from the generated
``relay.relay_app``). The agent's command comes after ``--``; it is looked up before
anything is served, so that a typo fails at once. Logs (the agent's stderr among them,
tagged by connection) go to stderr. SIGINT or SIGTERM stop the server gracefully: every
connection is closed and every agent's process group ended before the process exits.
"""

from __future__ import annotations

import argparse
import asyncio
import hmac
import logging
import os
import shlex
import shutil
import socket
import sys
from collections.abc import Callable, Sequence
from typing import Any

from ..connection.event_loop import chosen_loop, run
from ..remote.asgi import Request
from ..resume.event_log import ResumeLimits

__all__ = ["main"]

_log = logging.getLogger(__name__)

WS_SLACK = 1024
"""Bytes a WebSocket frame may exceed the message limit by at uvicorn, so that the app
(not uvicorn) refuses an oversized message, with its id."""


def _parser(prog: str) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=prog,
        usage=f"{prog} [options] -- AGENT COMMAND...",
        description="Serve a stdio ACP agent over the network: Streamable HTTP and "
        "WebSocket on one endpoint, one agent process per connection (docs/relay.md).",
    )
    parser.add_argument("--host", default="127.0.0.1", help="default: %(default)s")
    parser.add_argument("--port", type=int, default=8000, help="0: any free port")
    parser.add_argument("--path", default="/acp", help="default: %(default)s")
    parser.add_argument(
        "--resume",
        action="store_true",
        help="agents outlive a lost connection; clients that negotiate it resume",
    )
    parser.add_argument(
        "--allow-origin",
        action="append",
        default=[],
        metavar="ORIGIN",
        help="a browser origin allowed (repeatable); requests naming another: 403",
    )
    parser.add_argument(
        "--token-env",
        metavar="VAR",
        help="require 'Authorization: Bearer <value of $VAR>' (else 401)",
    )
    parser.add_argument("--cwd", help="the agent's working directory")
    return parser


def _bearer(token: str) -> Callable[[Request], int | bool]:
    expected = f"Bearer {token}".encode()

    def authorize(request: Request) -> int | bool:
        given = request.headers.get("authorization", "").encode("latin-1", "replace")
        return True if hmac.compare_digest(given, expected) else 401

    return authorize


def _command(
    parser: argparse.ArgumentParser, command: list[str], cwd: str | None
) -> list[str]:
    if not command:
        parser.error("give the agent's command after --, e.g. -- my-agent --stdio")
    program = command[0]
    if cwd is not None and os.sep in program:  # a relative path runs from the cwd given
        program = os.path.join(cwd, program)
    if shutil.which(program) is None:
        where = "not on PATH" if os.sep not in program else "no executable file there"
        parser.error(f"cannot find the agent command {command[0]!r} ({where})")
    return command


def _authorize(
    parser: argparse.ArgumentParser, token_env: str | None
) -> Callable[[Request], int | bool] | None:
    """The bearer check of ``--token-env``'s token, if any."""
    if token_env is None:
        return None
    token = os.environ.get(token_env)
    if not token:
        parser.error(f"--token-env {token_env}: that variable is not set")
    return _bearer(token)


def _listen(
    parser: argparse.ArgumentParser, host: str, port: int
) -> tuple[socket.socket, str]:
    """A listening socket on ``host:port``, and the host as a URL writes it."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as error:
        sock.close()
        parser.error(f"cannot listen on {host}:{port}: {error}")
    sock.listen(2048)
    return sock, f"[{host}]" if family == socket.AF_INET6 else host


def main(argv: Sequence[str] | None, build: Callable[..., Any], *, prog: str) -> int:
    """Parse ``argv``, build the app with ``build`` (the generated ``relay_app``) and
    serve it until interrupted; the exit code."""
    args = list(sys.argv[1:] if argv is None else argv)
    parser = _parser(prog)
    split = args.index("--") if "--" in args else len(args)
    options = parser.parse_args(args[:split])
    command = _command(parser, args[split + 1 :], options.cwd)
    authorize = _authorize(parser, options.token_env)
    try:
        loop = chosen_loop()  # uvloop when installed, unless ACP_LOOP says asyncio
    except (ValueError, ImportError) as error:
        parser.error(str(error))
    try:
        import uvicorn
    except ImportError:
        parser.error("the relay needs an ASGI server: pip install uvicorn")
    logging.basicConfig(
        level=logging.INFO,
        stream=sys.stderr,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    app = build(
        command,
        path=options.path,
        authorize=authorize,
        allowed_origins=options.allow_origin,
        resume=ResumeLimits() if options.resume else None,
        cwd=options.cwd,
    )
    sock, where = _listen(parser, options.host, options.port)
    port = sock.getsockname()[1]
    config = uvicorn.Config(
        app,
        lifespan="on",
        log_level="info",
        access_log=False,
        ws_max_size=app.max_message_bytes + WS_SLACK,
        ws_per_message_deflate=False,  # a compressed message is a bomb: docs/remote.md
    )

    async def serve() -> None:
        running = type(asyncio.get_running_loop()).__module__.partition(".")[0]
        print(
            f"{prog}: relaying `{shlex.join(command)}` at http://{where}:{port}{options.path}"
            f"{' (resumable)' if options.resume else ''} on {running}",
            file=sys.stderr,
            flush=True,
        )
        await uvicorn.Server(config).serve(sockets=[sock])

    run(serve(), loop=loop)
    return 0
