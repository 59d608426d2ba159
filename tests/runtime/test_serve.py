"""One-call connections (issue 15): ``serve.run_agent``, ``serve.spawn_agent``, ``serve_agent``/
``serve_client``: the peer's sender is handed over by ``on_connect``, what the peer advertises at
``initialize`` is recorded and checked by default (and not when switched off), and the wire
trace records every message in and out."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.generated.test_stubs import module
from tests.support.peers.raw import TARGET_AGENT

LIMIT = 30.0


def _run(scenario: Any) -> None:
    async def bounded() -> None:
        await asyncio.wait_for(scenario(), LIMIT)

    asyncio.run(bounded())


class QuietClient:
    """A client that serves nothing but session updates (the target agent asks for nothing else)."""

    def __init__(self) -> None:
        interfaces = module("stable", "interfaces")
        base = interfaces.Client
        self.instance = type(
            "Quiet", (base,), {name: _refuse for name in base.__abstractmethods__} | {"session_update": _ignore}
        )()


async def _refuse(self: Any, params: Any) -> Any:
    raise AssertionError("not expected in this test")


async def _ignore(self: Any, params: Any) -> None:
    return None


def test_spawn_agent_hands_over_the_sender_and_checks_what_the_agent_advertised() -> None:
    models, serve = module("stable", "models"), module("stable", "serve")
    capabilities = module("stable", "capabilities")
    client = QuietClient().instance

    async def scenario() -> None:
        async with serve.spawn_agent([sys.executable, str(TARGET_AGENT)], client) as agent:
            assert client.agent is agent
            assert agent.peer_capabilities is None  # nothing advertised yet: nothing refused yet
            answer = await agent.initialize(models.InitializeRequest(protocol_version=1))
            assert agent.peer_capabilities == answer.agent_capabilities
            load = models.LoadSessionRequest(session_id="s-1", cwd="/w", mcp_servers=[])
            with pytest.raises(capabilities.CapabilityError, match="loadSession"):
                await agent.load_session(load)  # refused here, never sent: the agent did not advertise it
            session = await agent.new_session(models.NewSessionRequest(cwd="/w", mcp_servers=[]))
            assert session.session_id == "s-1"

    _run(scenario)


def test_capability_checks_can_be_switched_off() -> None:
    models, serve, errors = module("stable", "models"), module("stable", "serve"), module("stable", "errors")

    async def scenario() -> None:
        command = [sys.executable, str(TARGET_AGENT)]
        async with serve.spawn_agent(command, QuietClient().instance, check_capabilities=False) as agent:
            await agent.initialize(models.InitializeRequest(protocol_version=1))
            assert agent.peer_capabilities is None
            with pytest.raises(errors.RequestError) as sent:  # sent, and refused by the agent itself
                await agent.load_session(models.LoadSessionRequest(session_id="s-1", cwd="/w", mcp_servers=[]))
            assert sent.value.code == -32601

    _run(scenario)


def test_a_served_agent_records_the_client_capabilities_from_initialize() -> None:
    models, serve = module("stable", "models"), module("stable", "serve")
    interfaces, capabilities = module("stable", "interfaces"), module("stable", "capabilities")
    outcome: list[str] = []

    class Agent(interfaces.Agent):  # type: ignore[misc, name-defined]
        async def initialize(self, params: Any) -> Any:
            return models.InitializeResponse(protocol_version=1)

        async def new_session(self, params: Any) -> Any:
            try:
                await self.client.read_text_file(models.ReadTextFileRequest(session_id="s", path="/etc/hostname"))
            except capabilities.CapabilityError as error:
                outcome.append(str(error))
            return models.NewSessionResponse(session_id="s")

        authenticate = prompt = cancel = set_session_mode = set_session_config_option = _refuse

    async def scenario() -> None:
        left, right = socket.socketpair()
        agent_streams = await asyncio.open_connection(sock=left)
        client_streams = await asyncio.open_connection(sock=right)
        agent_connection, _ = serve.serve_agent(Agent(), *agent_streams)
        client_connection, to_agent = serve.serve_client(QuietClient().instance, *client_streams)
        async with agent_connection, client_connection:
            caps = models.ClientCapabilities(fs=models.FileSystemCapabilities(read_text_file=False))
            await to_agent.initialize(models.InitializeRequest(protocol_version=1, client_capabilities=caps))
            await to_agent.new_session(models.NewSessionRequest(cwd="/w", mcp_servers=[]))
        assert outcome and "fs.readTextFile" in outcome[0]

    _run(scenario)


def test_the_wire_trace_records_every_message_in_and_out(tmp_path: Path) -> None:
    """Our side traces to ``trace=``; the agent process, to the file its ``ACP_TRACE`` names."""
    models, serve = module("stable", "models"), module("stable", "serve")
    ours, theirs = tmp_path / "client.ndjson", tmp_path / "agent.ndjson"
    env = {**os.environ, "ACP_TRACE": str(theirs)}

    async def scenario() -> None:
        command = [sys.executable, str(TARGET_AGENT)]
        async with serve.spawn_agent(command, QuietClient().instance, env=env, trace=ours) as agent:
            await agent.initialize(models.InitializeRequest(protocol_version=1))
            session = await agent.new_session(models.NewSessionRequest(cwd="/w", mcp_servers=[]))
            prompt = [models.TextContentBlock(type_="text", text="hi")]
            await agent.prompt(models.PromptRequest(session_id=session.session_id, prompt=prompt))

    _run(scenario)
    exchange = [
        ("out", "initialize"),
        ("in", "result"),
        ("out", "session/new"),
        ("in", "result"),
        ("out", "session/prompt"),
        *[("in", "session/update")] * 3,
        ("in", "result"),
    ]
    mirrored = [("in" if d == "out" else "out", what) for d, what in exchange]
    for path, expected in ((ours, exchange), (theirs, mirrored)):
        entries = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
        assert [(e["direction"], e["message"].get("method") or "result") for e in entries] == expected, path.name
        assert all(e["at"].endswith("+00:00") for e in entries)
