"""T3's agent process: answers every request at once, on stdio, built from one side's bindings.

    python -m bench.pipe_agent ours|ours-otel|theirs|echo|floor [asyncio|uvloop]

Ours: the generated stable bindings (``serve.run_agent``, what an agent's ``main`` runs);
theirs: the official Python SDK (``acp.run_agent``). Both answer ``initialize``,
``session/new`` and ``session/set_mode`` with a fixed result, and ``session/prompt`` after
sending as many ``session/update`` notifications (an agent message chunk each) as its first
text block says (``"5"``: five). ``echo`` is the floor under both: asyncio streams that write
back each line as it comes, with neither JSON nor models. ``floor`` is the floor under any runtime
with typed models and concurrent, cancellable handlers: it parses each line with pydantic-core,
validates a ``session/prompt``'s params with our model, runs a task per request (what lets a
handler await and be cancelled alone) that serialises the answer with our model and writes it,
and nothing else (no envelope checks, limits, capability checks, ordering or error answers).
``ours-otel`` is ours in a process that set OpenTelemetry's SDK up as an application does
(``bench.otel_cost``): the runtime then traces and measures every message. The second argument
is the event loop (default: stock asyncio).
"""

from __future__ import annotations

import asyncio
import functools
import logging
import sys
from collections.abc import Callable
from typing import Any

from bench.generated import bindings

SESSION = "sess-pipe-1"


def new_loop(name: str) -> Callable[[], asyncio.AbstractEventLoop]:
    """What makes an event loop of ``name``: ``asyncio`` (stock) or ``uvloop``."""
    if name == "uvloop":
        import uvloop

        return uvloop.new_event_loop  # type: ignore[no-any-return]
    return asyncio.new_event_loop


def _updates(text: str) -> int:
    return int(text) if text.isdigit() else 0


@functools.cache
def _quick_agent_class() -> Any:
    """The class of our quick agent, defined once (as users define theirs), so that R3 counts
    what a connection holds, not a class per connection."""
    models, interfaces, errors = bindings("models"), bindings("interfaces"), bindings("errors")
    builders = bindings("builders")
    text = builders.text_content_block("chunk")

    def chunk(session_id: str) -> Any:
        return builders.session_notification(session_id, builders.agent_message_chunk_session_update(text))

    base: Any = interfaces.Agent

    class QuickAgent(base):  # type: ignore[misc]
        async def initialize(self, params: Any) -> Any:
            return models.InitializeResponse(protocol_version=params.protocol_version)

        async def new_session(self, params: Any) -> Any:
            return models.NewSessionResponse(session_id=SESSION)

        async def set_session_mode(self, params: Any) -> Any:
            return models.SetSessionModeResponse()

        async def prompt(self, params: Any) -> Any:
            for _ in range(_updates(params.prompt[0].text)):
                await self.client.session_update(chunk(params.session_id))
            return models.PromptResponse(stop_reason="end_turn")

        async def cancel(self, params: Any) -> None:
            return None

        async def authenticate(self, params: Any) -> Any:
            raise errors.RequestError.method_not_found("authenticate")

        async def set_session_config_option(self, params: Any) -> Any:
            raise errors.RequestError.method_not_found("session/set_config_option")

    return QuickAgent


@functools.cache
def _quiet_client_class() -> Any:
    base: Any = bindings("interfaces").Client

    class QuietClient(base):  # type: ignore[misc]
        """Takes every update and asks for no permission (the benchmarks' agents ask none)."""

        async def request_permission(self, params: Any) -> Any:
            raise NotImplementedError

        async def session_update(self, params: Any) -> None:
            return None

    return QuietClient


def quiet_client() -> Any:
    """Our client for the benchmarks' agents (a new one per call, of one class)."""
    return _quiet_client_class()()


def quick_agent() -> Any:
    """Our agent that answers at once (a new one per call)."""
    return _quick_agent_class()()


async def serve_ours() -> None:
    await bindings("serve").run_agent(quick_agent())


async def serve_ours_traced() -> None:
    from opentelemetry import metrics, trace

    from bench.otel_cost import providers

    tracer_provider, meter_provider = providers()
    trace.set_tracer_provider(tracer_provider)  # the application's choice, as a program of ours would
    metrics.set_meter_provider(meter_provider)
    await serve_ours()


async def serve_theirs() -> None:
    import acp
    import acp.schema as sdk
    from acp.helpers import update_agent_message_text

    class QuickAgent:
        def on_connect(self, conn: Any) -> None:
            self.client = conn

        async def initialize(self, protocol_version: int, **kwargs: Any) -> sdk.InitializeResponse:
            return sdk.InitializeResponse(protocol_version=protocol_version)

        async def new_session(self, cwd: str, **kwargs: Any) -> sdk.NewSessionResponse:
            return sdk.NewSessionResponse(session_id=SESSION)

        async def set_session_mode(self, session_id: str, mode_id: str, **kwargs: Any) -> sdk.SetSessionModeResponse:
            return sdk.SetSessionModeResponse()

        async def prompt(self, session_id: str, prompt: Any, **kwargs: Any) -> sdk.PromptResponse:
            for _ in range(_updates(prompt[0].text)):
                await self.client.session_update(session_id, update_agent_message_text("chunk"))
            return sdk.PromptResponse(stop_reason="end_turn")

        async def cancel(self, session_id: str, **kwargs: Any) -> None:
            return None

    await acp.run_agent(QuickAgent())  # type: ignore[arg-type]


async def serve_echo() -> None:
    reader, writer = await bindings("connection").stdio_streams()
    while line := await reader.readline():
        writer.write(line)
        await writer.drain()


async def serve_floor() -> None:
    from pydantic_core import from_json

    models, built = bindings("models"), bindings("_runtime.connection.adapters").built
    params, result = built(models.PromptRequest).validator, built(models.PromptResponse).serializer
    answer = models.PromptResponse(stop_reason="end_turn")
    reader, writer = await bindings("connection").stdio_streams()
    running: set[asyncio.Task[None]] = set()

    async def handle(message: dict[str, Any]) -> None:
        params.validate_python(message["params"])
        body = result.to_json(answer, by_alias=True, exclude_unset=True)
        writer.write(b'{"jsonrpc":"2.0","id":%d,"result":%s}\n' % (message["id"], body))

    loop = asyncio.get_running_loop()
    while line := await reader.readline():
        message = from_json(line, allow_inf_nan=False)
        if message.get("method") != "session/prompt":  # initialize, session/new: not timed
            writer.write(b'{"jsonrpc":"2.0","id":%d,"result":{}}\n' % message["id"])
            continue
        task = loop.create_task(handle(message))
        running.add(task)
        task.add_done_callback(running.discard)
        await writer.drain()


if __name__ == "__main__":
    logging.basicConfig(level=logging.CRITICAL, stream=sys.stderr)
    serve = {
        "ours": serve_ours,
        "ours-otel": serve_ours_traced,
        "theirs": serve_theirs,
        "echo": serve_echo,
        "floor": serve_floor,
    }[sys.argv[1]]
    with asyncio.Runner(loop_factory=new_loop(sys.argv[2] if len(sys.argv) > 2 else "asyncio")) as runner:
        runner.run(serve())
