"""The smoke test of a vendored package (``myapp._acp``), run by tests/system/test_pydantic_floor.py with
the Python of an environment that holds only the lowest dependency versions the package states.

    python smoke.py          the client: reads and dumps models, folds session state, then spawns
                             this script as the agent and plays a turn over its stdin and stdout;
                             prints a JSON report of what it saw
    python smoke.py agent    the agent

It imports nothing but the standard library and the vendored package (and so pydantic).
"""

from __future__ import annotations

import asyncio
import json
import sys
from importlib.metadata import version
from typing import Any

from myapp._acp import PROTOCOL_VERSION, Agent, Client, builders, models, run_agent, spawn_agent
from myapp._acp.session_state import SessionState, SessionStates
from pydantic import ValidationError

SESSION = "s-1"
TOOL_CALL = {
    "sessionId": SESSION,
    "update": {
        "sessionUpdate": "tool_call",
        "toolCallId": "call-1",
        "title": "Edit main.py",
        "kind": "edit",
        "status": "pending",
        "locations": [{"path": "/w/main.py", "line": 3}],
        "content": [
            {"type": "diff", "path": "/w/main.py", "oldText": "a = 1\n", "newText": "a = 2\n"},
            {"type": "content", "content": {"type": "text", "text": "one line changed"}},
        ],
        "rawInput": {"path": "/w/main.py", "edits": [{"old": "a = 1", "new": "a = 2"}]},
        "_meta": {"vendor": {"elapsed": 0.25}},
    },
}
TOOL_CALL_DONE = {
    "sessionId": SESSION,
    "update": {"sessionUpdate": "tool_call_update", "toolCallId": "call-1", "status": "completed"},
}
PLAN = {
    "sessionId": SESSION,
    "update": {
        "sessionUpdate": "plan",
        "entries": [
            {"content": "Read the file", "priority": "high", "status": "completed"},
            {"content": "Change it", "priority": "medium", "status": "in_progress"},
        ],
    },
}
INITIALIZE = {
    "protocolVersion": 1,
    "clientCapabilities": {"fs": {"readTextFile": True, "writeTextFile": False}, "terminal": True},
    "clientInfo": {"name": "smoke", "version": "1.0.0"},
}


def models_read_and_dumped() -> dict[str, Any]:
    """Each message read, then dumped three ways: what was read is what is written."""
    checked = 0
    for wire, model in (
        (TOOL_CALL, models.SessionNotification),
        (TOOL_CALL_DONE, models.SessionNotification),
        (PLAN, models.SessionNotification),
        (INITIALIZE, models.InitializeRequest),
    ):
        read = model.model_validate(wire)
        assert read.model_dump(mode="json") == wire, read.model_dump(mode="json")
        assert json.loads(read.model_dump_json()) == wire
        assert model.model_validate_json(json.dumps(wire)) == read
        # the keyword arguments pydantic gives model_dump still work
        assert "sessionId" not in read.model_dump(by_alias=False, exclude_unset=False)
        assert "_meta" not in json.loads(read.model_dump_json(exclude={"update": {"field_meta"}}))
        checked += 1
    built = builders.prompt_request(SESSION, [builders.text_content_block("hi")])
    assert built.model_dump() == {"sessionId": SESSION, "prompt": [{"type": "text", "text": "hi"}]}
    # a property that may be absent but not null, set to None, is not written (Field(exclude_if))
    unset = models.ToolCall(tool_call_id="call-1", title="T", status=None, kind="edit")
    assert unset.model_dump() == {"toolCallId": "call-1", "title": "T", "kind": "edit"}, unset.model_dump()
    # a closed union is read by its tag: an unknown tag is one error, naming the tags
    try:
        models.PromptRequest.model_validate({"sessionId": SESSION, "prompt": [{"type": "nope"}]})
    except ValidationError as error:
        kinds = [e["type"] for e in error.errors()]
        assert kinds == ["union_tag_invalid"], kinds
    else:
        raise AssertionError("an unknown content block was read")
    # an envelope read from JSON reads its params as its method's (several take the same JSON)
    for method, model in (("session/close", "CloseSessionRequest"), ("session/delete", "DeleteSessionRequest")):
        line = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": {"sessionId": SESSION}})
        read = models.ClientRequest.model_validate_json(line)
        assert type(read.params).__name__ == model, (method, type(read.params).__name__)
    # lenient properties read a malformed value as their default; unknown members are kept
    lenient = models.TextContentBlock.model_validate({"type": "text", "text": "x", "annotations": 5, "extra": [1]})
    assert lenient.annotations is None
    assert lenient.model_dump() == {"type": "text", "text": "x", "annotations": None, "extra": [1]}
    # the keyword newer than pydantic 2.12 works where pydantic has it, and is refused by name elsewhere
    try:
        polymorphic = "accepted" if built.model_dump(polymorphic_serialization=True) else "?"
    except TypeError as error:
        assert "polymorphic_serialization needs pydantic >= 2.13" in str(error), error
        polymorphic = "refused"
    return {"models": checked, "polymorphic_serialization": polymorphic}


def state_folded() -> dict[str, Any]:
    states = SessionStates()
    for notification in (TOOL_CALL, PLAN, TOOL_CALL_DONE):
        states.update(models.SessionNotification.model_validate(notification))
    state = states.states[SESSION]
    call = state.tool_calls["call-1"]
    fields = call.fields
    assert fields["status"] == "completed" and fields["title"] == "Edit main.py", dict(fields)
    assert state.plan is not None and len(state.plan.entries) == 2
    wire = state.to_json()
    json.dumps(wire)  # the snapshot is JSON
    again = SessionState.new(SESSION).update(TOOL_CALL).update(TOOL_CALL_DONE)  # wire params fold too
    assert again.tool_calls["call-1"].fields["status"] == "completed"
    return {"tool_call": {"status": fields["status"], "kind": fields["kind"]}, "plan": len(state.plan.entries)}


class SmokeAgent(Agent):
    async def initialize(self, params: models.InitializeRequest) -> models.InitializeResponse:
        return models.InitializeResponse(
            protocol_version=PROTOCOL_VERSION, agent_info=models.Implementation(name="smoke-agent", version="1")
        )

    async def new_session(self, params: models.NewSessionRequest) -> models.NewSessionResponse:
        return models.NewSessionResponse(session_id=SESSION)

    async def prompt(self, params: models.PromptRequest) -> models.PromptResponse:
        await self.client.session_update(models.SessionNotification.model_validate(TOOL_CALL))
        options = [models.PermissionOption(option_id="yes", name="Yes", kind="allow_once")]
        call = models.ToolCallUpdate(tool_call_id="call-1")
        asked = models.RequestPermissionRequest(session_id=params.session_id, tool_call=call, options=options)
        answer = await self.client.request_permission(asked)
        assert isinstance(answer.outcome, models.SelectedRequestPermissionOutcome)
        await self.client.session_update(models.SessionNotification.model_validate(TOOL_CALL_DONE))
        for block in params.prompt:
            if isinstance(block, models.TextContentBlock):
                for word in block.text.split():
                    chunk = builders.agent_message_chunk_session_update(
                        builders.text_content_block(word + " "), message_id="m-1"
                    )
                    await self.client.session_update(builders.session_notification(params.session_id, chunk))
        return models.PromptResponse(stop_reason="end_turn")

    async def cancel(self, params: models.CancelNotification) -> None:
        return None


class SmokeClient(Client):
    def __init__(self) -> None:
        self.states = SessionStates()
        self.asked = 0

    async def session_update(self, params: models.SessionNotification) -> None:
        self.states.update(params)

    async def request_permission(self, params: models.RequestPermissionRequest) -> models.RequestPermissionResponse:
        self.asked += 1
        return builders.request_permission_response(builders.selected_request_permission_outcome("yes"))


async def stdio_turn() -> dict[str, Any]:
    client = SmokeClient()
    async with spawn_agent([sys.executable, __file__, "agent"], client) as agent:
        init = await agent.initialize(builders.initialize_request(PROTOCOL_VERSION))
        session = await agent.new_session(builders.new_session_request("/w", []))
        prompt = [builders.text_content_block("hello over pipes")]
        result = await agent.prompt(builders.prompt_request(session.session_id, prompt))
    state = client.states.states[session.session_id]
    texts = [piece.text for piece in state.messages["m-1"].content if isinstance(piece, models.TextContentBlock)]
    return {
        "agent": init.agent_info.name if init.agent_info else None,
        "stop": result.stop_reason,
        "asked": client.asked,
        "text": "".join(texts),
        "tool_call": state.tool_calls["call-1"].fields["status"],
    }


def main() -> None:
    if sys.argv[1:] == ["agent"]:
        asyncio.run(run_agent(SmokeAgent()))
        return
    report = {"pydantic": version("pydantic"), "pydantic-core": version("pydantic-core")}
    report |= models_read_and_dumped()
    report["state"] = state_folded()
    report["turn"] = asyncio.run(stdio_turn())
    print(json.dumps(report, sort_keys=True))


if __name__ == "__main__":
    main()
