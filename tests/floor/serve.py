"""A server that only serves: the vendored package's ``asgi_app`` under uvicorn, run by
tests/system/test_remote_deps.py in an environment that holds pydantic and uvicorn but neither httpx nor
websockets (``.venv-floor``).

    python serve.py     prints one JSON line (the port it listens on, the network packages
                        imported, the ImportError of each way to import connect_agent), then
                        serves the echo agent at /acp until its stdin closes

It imports nothing but the standard library, uvicorn and the vendored package.
"""

from __future__ import annotations

import asyncio
import json
import socket
import sys
import threading

from myapp._acp import Agent, builders, models, negotiate_version
from myapp._acp.remote import AcpApp, Refused, RemoteLimits, Request, ResumeLimits, asgi_app

NETWORK = {"httpx", "h2", "websockets", "wsproto", "anyio"}


class EchoAgent(Agent):
    async def initialize(self, params: models.InitializeRequest) -> models.InitializeResponse:
        return models.InitializeResponse(protocol_version=negotiate_version(params.protocol_version))

    async def new_session(self, params: models.NewSessionRequest) -> models.NewSessionResponse:
        return models.NewSessionResponse(session_id="echo-1")

    async def prompt(self, params: models.PromptRequest) -> models.PromptResponse:
        for block in params.prompt:
            if isinstance(block, models.TextContentBlock):
                for word in block.text.split():
                    chunk = builders.agent_message_chunk_session_update(builders.text_content_block(word + " "))
                    await self.client.session_update(builders.session_notification(params.session_id, chunk))
        return models.PromptResponse(stop_reason="end_turn")

    async def cancel(self, params: models.CancelNotification) -> None:
        return None


def authorize(request: Request) -> bool | int:
    return request.headers.get("authorization") == "Bearer floor" or 401


def client_half() -> list[str]:
    """What each way of importing the client half raises (the extra is not installed)."""
    said = []
    for attempt in ("from myapp._acp.remote import connect_agent", "from myapp._acp import connect_agent"):
        try:
            exec(attempt, {})
        except ImportError as error:
            said.append(str(error))
        else:
            said.append("imported")
    return said


def main() -> None:
    import uvicorn

    app = asgi_app(EchoAgent, authorize=authorize, remote_limits=RemoteLimits(), resume=ResumeLimits())
    assert isinstance(app, AcpApp) and issubclass(Refused, ConnectionError)
    network = sorted({name.split(".")[0] for name in sys.modules} & NETWORK)
    listening = socket.socket()
    listening.bind(("127.0.0.1", 0))
    listening.listen(64)
    report = {"port": listening.getsockname()[1], "network": network, "client_half": client_half()}
    print(json.dumps(report), flush=True)
    server = uvicorn.Server(uvicorn.Config(app, lifespan="on", log_level="warning"))

    def until_stdin_closes() -> None:
        sys.stdin.read()
        server.should_exit = True

    threading.Thread(target=until_stdin_closes, daemon=True).start()
    asyncio.run(server.serve(sockets=[listening]))


if __name__ == "__main__":
    main()
