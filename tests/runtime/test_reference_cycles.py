"""A conversation leaves no reference cycle behind (issue 33): what the runtime makes for each
message (a handler's task, its record, its context, a call's future) is freed by reference counts
as soon as the message is done, not left for Python's cyclic collector.

A cycle per request costs a server twice: the collector runs more often and walks more, and the
memory stays held until it does. Measured by the garbage the collector finds after a conversation,
with the collector off while it runs: the generated bindings' own runtime, an agent and a client
over a real socket, requests (answered at once, after awaiting, refused, cancelled), notifications
both ways. The garbage must not grow with the number of messages.
"""

from __future__ import annotations

import asyncio
import collections
import gc
import importlib
import socket
from collections.abc import Iterator
from typing import Any

import pytest

ROUNDS = (20, 120)


@pytest.fixture
def collector_off() -> Iterator[None]:
    """The cyclic collector off (and its garbage kept for inspection) while a test runs."""
    was_enabled = gc.isenabled()
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        if was_enabled:
            gc.enable()
        gc.collect()


def _garbage() -> collections.Counter[str]:
    """The objects only the cyclic collector could free, by type, since the last collection."""
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        gc.collect()
        found = collections.Counter(type(item).__qualname__ for item in gc.garbage)
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
    return found


def _bindings() -> tuple[Any, ...]:
    return tuple(
        importlib.import_module(f"acp_bindings.{name}")
        for name in ("models", "interfaces", "serve", "builders", "errors")
    )


models, interfaces, serve, builders, errors = _bindings()


class _Agent(interfaces.Agent):  # type: ignore[misc,name-defined]
    """Answers a prompt by its text: at once, after two updates, refused, or never (until
    cancelled)."""

    async def initialize(self, params: Any) -> Any:
        return models.InitializeResponse(protocol_version=params.protocol_version)

    async def new_session(self, params: Any) -> Any:
        return models.NewSessionResponse(session_id="s")

    async def prompt(self, params: Any) -> Any:
        text = params.prompt[0].text
        if text == "refuse":
            raise errors.RequestError.invalid_params({"reason": "refused"})
        if text == "wait":
            await asyncio.Event().wait()  # until cancelled
        if text == "updates":
            for _ in range(2):
                chunk = builders.agent_message_chunk_session_update(builders.text_content_block("x"))
                await self.client.session_update(builders.session_notification(params.session_id, chunk))
        return models.PromptResponse(stop_reason="end_turn")

    async def cancel(self, params: Any) -> None:
        return None


class _Client(interfaces.Client):  # type: ignore[misc,name-defined]
    """Counts the updates (keeps none: what it keeps is not the runtime's)."""

    updates = 0

    async def session_update(self, params: Any) -> None:
        self.updates += 1

    async def request_permission(self, params: Any) -> Any:
        raise errors.RequestError.method_not_found("session/request_permission")


async def _conversation(rounds: int) -> None:
    """An agent and a client of the generated bindings over a socket pair: ``rounds`` times a
    prompt answered after two updates, one answered at once, one refused with an error and one
    cancelled by the client."""
    left, right = socket.socketpair()
    agent_streams = await asyncio.open_connection(sock=left)
    client_streams = await asyncio.open_connection(sock=right)
    client = _Client()
    agent_connection, _ = serve.serve_agent(_Agent(), *agent_streams)
    client_connection, agent = serve.serve_client(client, *client_streams)
    async with agent_connection, client_connection:
        await agent.initialize(models.InitializeRequest(protocol_version=1))
        session = await agent.new_session(models.NewSessionRequest(cwd="/", mcp_servers=[]))

        def prompt(text: str) -> Any:
            blocks = [builders.text_content_block(text)]
            return agent.prompt(builders.prompt_request(session.session_id, blocks))

        outcomes: collections.Counter[str] = collections.Counter()
        for _ in range(rounds):
            answers = await asyncio.gather(prompt("updates"), prompt("at once"))
            outcomes.update(answer.stop_reason for answer in answers)
            try:
                await prompt("refuse")
            except errors.RequestError:
                outcomes["refused"] += 1
            waiting = asyncio.ensure_future(prompt("wait"))
            await asyncio.sleep(0.001)
            waiting.cancel()
            try:
                await waiting
            except asyncio.CancelledError:
                outcomes["cancelled"] += 1
        await asyncio.sleep(0.01)  # the cancelled handlers are answered
    assert outcomes == {"end_turn": 2 * rounds, "refused": rounds, "cancelled": rounds}
    assert client.updates == 2 * rounds


@pytest.mark.usefixtures("collector_off")
def test_a_conversation_leaves_no_cycle_per_message() -> None:
    found: list[collections.Counter[str]] = []
    for rounds in ROUNDS:
        _garbage()  # what came before
        asyncio.run(_conversation(rounds))
        found.append(_garbage())
    fewer, more = found
    extra_rounds = ROUNDS[1] - ROUNDS[0]
    # a cycle per request of one kind (or per message) holds at least one object more per round
    # of each type in it; what a conversation leaves once (its loop, its connections) does not grow
    grown = {kind: more[kind] - fewer[kind] for kind in more if more[kind] - fewer[kind] >= extra_rounds // 2}
    assert grown == {}, f"cyclic garbage grew with the messages: {grown} in {extra_rounds} more rounds"
