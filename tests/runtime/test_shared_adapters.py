"""Connections share the validators and serializers of the method table's models (issue 33, item 4:
memory per idle remote connection): the dispatcher of each connection and each typed sender use the
one built for the process, so a new connection builds no schema of its own (about 45 KiB each
before, ``bench.idle_remote``)."""

from __future__ import annotations

import asyncio
import importlib
from typing import Any

from acp_bindings import builders, dispatch, methods, models, senders
from acp_bindings.interfaces import Agent


class _Agent(Agent):
    async def initialize(self, params: models.InitializeRequest) -> models.InitializeResponse:
        return models.InitializeResponse(protocol_version=params.protocol_version)

    async def new_session(self, params: models.NewSessionRequest) -> models.NewSessionResponse:
        return models.NewSessionResponse(session_id="s")

    async def prompt(self, params: models.PromptRequest) -> models.PromptResponse:
        return models.PromptResponse(stop_reason="end_turn")

    async def cancel(self, params: models.CancelNotification) -> None:
        return None


def _answered(dispatcher: Any, message: dict[str, Any]) -> dict[str, Any]:
    answer = asyncio.run(dispatcher.dispatch(message))
    assert answer is not None and "result" in answer, answer
    return answer


def test_every_connection_s_dispatcher_reads_and_writes_with_the_same_validator_and_serializer() -> None:
    first, second = (dispatch.Dispatcher(_Agent(), methods.handled_by("agent", "both")) for _ in range(2))
    request = {"jsonrpc": "2.0", "id": 1, "method": "session/new", "params": {"cwd": "/", "mcpServers": []}}
    answers = [_answered(each, request) for each in (first, second)]
    routes = [each._requests["session/new"] for each in (first, second)]
    assert routes[0] is routes[1]  # one route table per process (R3: not one per connection)
    assert routes[0].validate.__self__ is routes[1].validate.__self__  # one SchemaValidator
    assert routes[0].serializer is routes[1].serializer  # one SchemaSerializer
    assert answers[0]["result"].encode() == answers[1]["result"].encode() == b'{"sessionId":"s"}'


def test_every_sender_uses_the_same_adapter() -> None:
    given: list[tuple[Any, Any]] = []

    class Peer:
        async def request(self, method: str, params: Any = None, *, serializer: Any = None, read: Any = None) -> Any:
            given.append((serializer, read))
            return read({"stopReason": "end_turn"})

        async def notify(self, method: str, params: Any = None, *, serializer: Any = None) -> None:
            return None

    first, second = senders.AgentSender(Peer()), senders.AgentSender(Peer())
    request = builders.prompt_request("s", [builders.text_content_block("hi")])
    for each in (first, second):
        assert asyncio.run(each.prompt(request)).stop_reason == "end_turn"
    (serializers, readers) = zip(*given, strict=True)
    built = importlib.import_module(f"{senders.__package__}._runtime.connection.adapters").built
    assert serializers[0] is serializers[1] is built(models.PromptRequest).serializer
    assert readers[0].__self__ is readers[1].__self__ is built(models.PromptResponse).validator
