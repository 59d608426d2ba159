"""The package's testing helpers (issue 45, item 2): ``testing.pair`` connects an agent and a client
in process over the real connection and codec (every message encoded, written as a line on a
socket, read, decoded, dispatched: the trace shows the lines, the dispatcher answers -32601 and
the handler's errors as over stdio); ``RecordingClient`` keeps what it is sent and answers
permission requests by the rule it is given; ``run_turn`` and ``prompt_turn`` give a turn's
updates and stop reason in one call."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from acp_bindings import PROTOCOL_VERSION, Agent, RequestError, builders, models, negotiate_version
from acp_bindings.errors import METHOD_NOT_FOUND, RESOURCE_NOT_FOUND
from acp_bindings.testing import RecordingClient, pair, prompt_turn, run_turn

LIMIT = 30.0


def _run(work: Any) -> Any:
    async def bounded() -> Any:
        return await asyncio.wait_for(work, LIMIT)

    return asyncio.run(bounded())


class AskingAgent(Agent):
    """Streams its prompt's words back; a prompt starting with "edit" first asks permission to edit."""

    def __init__(self) -> None:
        self.sessions: set[str] = set()
        self.decisions: list[str] = []

    async def initialize(self, params: models.InitializeRequest) -> models.InitializeResponse:
        return models.InitializeResponse(protocol_version=negotiate_version(params.protocol_version))

    async def new_session(self, params: models.NewSessionRequest) -> models.NewSessionResponse:
        session = f"s{len(self.sessions) + 1}"
        self.sessions.add(session)
        return models.NewSessionResponse(session_id=session)

    async def prompt(self, params: models.PromptRequest) -> models.PromptResponse:
        if params.session_id not in self.sessions:
            raise RequestError(RESOURCE_NOT_FOUND, f"no session {params.session_id!r}")
        words = " ".join(b.text for b in params.prompt if isinstance(b, models.TextContentBlock)).split()
        if words[:1] == ["edit"]:
            options = [
                models.PermissionOption(option_id="yes", name="Allow", kind="allow_once"),
                models.PermissionOption(option_id="no", name="Reject", kind="reject_once"),
            ]
            tool = models.ToolCallUpdate(tool_call_id="t1", kind="edit", title="Edit notes.txt")
            request = builders.request_permission_request(params.session_id, tool, options)
            answer = await self.client.request_permission(request)
            outcome = answer.outcome
            self.decisions.append(getattr(outcome, "option_id", None) or "cancelled")
        for word in words:
            chunk = builders.agent_message_chunk_session_update(builders.text_content_block(word + " "))
            await self.client.session_update(builders.session_notification(params.session_id, chunk))
        return models.PromptResponse(stop_reason="end_turn")

    async def cancel(self, params: models.CancelNotification) -> None:
        return None


def test_run_turn_gives_the_updates_and_the_stop_reason_in_one_call() -> None:
    turn = _run(run_turn(AskingAgent(), "one two three"))
    assert turn.stop_reason == "end_turn" and turn.session_id == "s1"
    assert turn.text == "one two three "
    assert [type(u).__name__ for u in turn.updates] == ["AgentMessageChunkSessionUpdate"] * 3
    assert turn.permission_requests == ()


@pytest.mark.parametrize(
    ("permission", "chosen"),
    [
        ("allow_once", "yes"),
        ("reject_once", "no"),
        ({"edit": "allow_always", "*": "reject_once"}, "yes"),  # a rule per tool kind
        ({"read": "allow_once"}, "no"),  # no rule for edit: the policy's fallback rejects
    ],
    ids=["allow", "reject", "per-kind", "fallback"],
)
def test_the_recording_client_answers_permission_requests_by_its_rule(permission: Any, chosen: str) -> None:
    agent = AskingAgent()
    client = RecordingClient(permission=permission)
    turn = _run(run_turn(agent, "edit please", client=client))
    assert agent.decisions == [chosen]
    ((request, answer),) = turn.permission_requests
    assert request.tool_call.title == "Edit notes.txt"
    assert answer.outcome.outcome == "selected" and answer.outcome.option_id == chosen  # type: ignore[union-attr]
    assert client.permission_requests == [(request, answer)]


def test_a_rule_can_be_your_own_function() -> None:
    asked: list[str] = []

    async def decide(request: models.RequestPermissionRequest) -> models.RequestPermissionResponse:
        asked.append(str(request.tool_call.title))
        return builders.request_permission_response(builders.selected_request_permission_outcome("no"))

    agent = AskingAgent()
    _run(run_turn(agent, "edit it", client=RecordingClient(permission=decide)))
    assert asked == ["Edit notes.txt"] and agent.decisions == ["no"]


def test_a_pair_is_the_real_connection_and_codec(tmp_path: Path) -> None:
    """What goes between them is lines on a socket: the trace holds each message as JSON; a method the
    agent does not implement is answered -32601 by its dispatcher; a handler's error reaches the client
    with its code; two turns on one session are recorded apart."""
    trace = tmp_path / "trace.jsonl"
    client = RecordingClient()

    async def scenario() -> tuple[Any, Any, RequestError, RequestError]:
        # (check_capabilities=False: the client sends session/load, which the agent did not advertise)
        async with pair(AskingAgent(), client, trace=str(trace), check_capabilities=False) as (agent, _):
            await agent.initialize(builders.initialize_request(PROTOCOL_VERSION))
            session = (await agent.new_session(builders.new_session_request(str(tmp_path), []))).session_id
            first = await prompt_turn(agent, client, session, "a b")
            second = await prompt_turn(agent, client, session, [builders.text_content_block("c")])
            with pytest.raises(RequestError) as unknown:
                await agent.load_session(builders.load_session_request([], str(tmp_path), session))
            with pytest.raises(RequestError) as refused:
                await prompt_turn(agent, client, "never-handed-out", "x")
        return first, second, unknown.value, refused.value

    first, second, unknown, refused = _run(scenario())
    assert (first.text, second.text) == ("a b ", "c ")
    assert client.text("s1") == "a b c " and len(client.updates("s1")) == 3
    assert unknown.code == METHOD_NOT_FOUND and refused.code == RESOURCE_NOT_FOUND
    lines = [json.loads(line) for line in trace.read_text(encoding="utf-8").splitlines()]
    received = [entry["message"].get("method") for entry in lines if entry.get("direction") == "in"]
    assert received.count("session/update") == 3 and "session/load" in received  # each end traces what it read
