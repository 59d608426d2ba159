"""T3's agent process: answers every request at once, on stdio, built from one side's bindings.

    python -m bench.pipe_agent ours|theirs|echo

Ours: the generated stable bindings (``Connection`` and ``Dispatcher`` over an ``Agent``);
theirs: the official Python SDK (``acp.run_agent``). Both answer ``initialize``,
``session/new`` and ``session/set_mode`` (the method the round trips call) with a fixed result.
``echo`` is the floor under both: asyncio streams that write back each line as it comes, with
neither JSON nor models.
"""

from __future__ import annotations

import asyncio
import logging
import sys
from typing import Any

from bench.generated import bindings

SESSION = "sess-pipe-1"


def quick_agent() -> Any:
    """Our agent that answers at once (a new one per call)."""
    models, interfaces, errors = bindings("models"), bindings("interfaces"), bindings("errors")

    base: Any = interfaces.Agent

    class QuickAgent(base):  # type: ignore[misc]
        async def initialize(self, params: Any) -> Any:
            return models.InitializeResponse(protocol_version=params.protocol_version)

        async def new_session(self, params: Any) -> Any:
            return models.NewSessionResponse(session_id=SESSION)

        async def set_session_mode(self, params: Any) -> Any:
            return models.SetSessionModeResponse()

        async def prompt(self, params: Any) -> Any:
            return models.PromptResponse(stop_reason="end_turn")

        async def cancel(self, params: Any) -> None:
            return None

        async def authenticate(self, params: Any) -> Any:
            raise errors.RequestError.method_not_found("authenticate")

        async def set_session_config_option(self, params: Any) -> Any:
            raise errors.RequestError.method_not_found("session/set_config_option")

    return QuickAgent()


async def serve_ours() -> None:
    connection, dispatch, methods = (bindings(m) for m in ("connection", "dispatch", "methods"))
    reader, writer = await connection.stdio_streams()
    handler = dispatch.Dispatcher(quick_agent(), methods.handled_by("agent", "both")).dispatch
    await connection.Connection(connection.LineTransport(reader, writer), handler).run()


async def serve_theirs() -> None:
    import acp
    import acp.schema as sdk

    class QuickAgent:
        async def initialize(self, protocol_version: int, **kwargs: Any) -> sdk.InitializeResponse:
            return sdk.InitializeResponse(protocol_version=protocol_version)

        async def new_session(self, cwd: str, **kwargs: Any) -> sdk.NewSessionResponse:
            return sdk.NewSessionResponse(session_id=SESSION)

        async def set_session_mode(self, session_id: str, mode_id: str, **kwargs: Any) -> sdk.SetSessionModeResponse:
            return sdk.SetSessionModeResponse()

        async def prompt(self, session_id: str, prompt: Any, **kwargs: Any) -> sdk.PromptResponse:
            return sdk.PromptResponse(stop_reason="end_turn")

        async def cancel(self, session_id: str, **kwargs: Any) -> None:
            return None

    await acp.run_agent(QuickAgent())  # type: ignore[arg-type]


async def serve_echo() -> None:
    reader, writer = await bindings("connection").stdio_streams()
    while line := await reader.readline():
        writer.write(line)
        await writer.drain()


if __name__ == "__main__":
    logging.basicConfig(level=logging.CRITICAL, stream=sys.stderr)
    serve = {"ours": serve_ours, "theirs": serve_theirs, "echo": serve_echo}[sys.argv[1]]
    asyncio.run(serve())
