"""An ACP agent that plays one rich prompt turn, built only from the generated stable bindings:
the peer of the session-state and trace-viewer tests (tests/runtime/test_trace_viewer.py).

``session/new`` answers two modes. Each prompt turn sends: a thought, a message in two chunks,
the available commands, a plan, a tool call (reported with ``ToolCallTracker``, so only what
changed is sent) that edits ``notes.txt`` after ``session/request_permission`` (a diff when
allowed, ``failed`` when not), a second tool call that runs a command in a client terminal
(``terminal/create``, ``terminal/output``, ``terminal/release``), the plan again, the usage,
the session's title, a mode change, and a closing message.

Run: ``python tests/support/peers/showcase_agent.py`` (the bindings are found in ``generated/``).
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "generated"))

from acp_bindings import builders, methods, models
from acp_bindings.errors import RequestError
from acp_bindings.initialization import negotiate_version
from acp_bindings.interfaces import Agent
from acp_bindings.serve import run_agent
from acp_bindings.session_state import ToolCallTracker

OLD = "one\ntwo\nthree\n"
NEW = "one\n2\nthree\nfour\n"


def text(value: str) -> models.TextContentBlock:
    return builders.text_content_block(value)


class ShowcaseAgent(Agent):
    def __init__(self) -> None:
        self._sessions = 0
        self._turns = 0
        self._tools = ToolCallTracker()

    async def initialize(self, params: models.InitializeRequest) -> models.InitializeResponse:
        return models.InitializeResponse(protocol_version=negotiate_version(params.protocol_version))

    async def new_session(self, params: models.NewSessionRequest) -> models.NewSessionResponse:
        self._sessions += 1
        modes = models.SessionModeState(
            current_mode_id="ask",
            available_modes=[models.SessionMode(id_="ask", name="Ask"), models.SessionMode(id_="code", name="Code")],
        )
        return builders.new_session_response(f"show-{self._sessions}", modes=modes)

    async def prompt(self, params: models.PromptRequest) -> models.PromptResponse:
        sid = params.session_id
        self._turns += 1

        async def send(update: models.SessionUpdate | None) -> None:
            if update is not None:
                await self.client.session_update(builders.session_notification(sid, update))

        await send(builders.agent_thought_chunk_session_update(text("The notes need an edit.")))
        await send(builders.agent_message_chunk_session_update(text("I will edit ")))
        await send(builders.agent_message_chunk_session_update(text("notes.txt, then run the tests.")))
        command = models.AvailableCommand(name="test", description="run the tests")
        await send(builders.available_commands_update_session_update([command]))
        await send(self._plan("in_progress", "pending"))
        allowed = await self._edit(sid, send)
        await self._run(sid, send)
        await send(self._plan("completed" if allowed else "failed", "completed"))
        await send(builders.usage_update_session_update(1200, 200000, cost=models.Cost(amount=0.01, currency="USD")))
        await send(builders.session_info_update_session_update(title="Edit the notes"))
        await send(builders.current_mode_update_session_update("code"))
        await send(builders.agent_message_chunk_session_update(text("Done.")))
        return models.PromptResponse(stop_reason="end_turn")

    def _plan(self, edit: str, run: str) -> models.PlanSessionUpdate:
        return builders.plan_session_update(
            [
                models.PlanEntry(content="Edit notes.txt", priority="high", status=edit),  # type: ignore[arg-type]
                models.PlanEntry(content="Run the tests", priority="medium", status=run),  # type: ignore[arg-type]
            ]
        )

    async def _edit(self, sid: str, send: object) -> bool:
        assert callable(send)
        where = [models.ToolCallLocation(path="/work/notes.txt", line=2)]
        call = builders.tool_call_session_update(
            f"edit-{self._turns}", "Edit notes.txt", kind="edit", status="pending", locations=where
        )
        await send(self._tools.report(call))
        options = [
            models.PermissionOption(option_id="once", name="Allow once", kind="allow_once"),
            models.PermissionOption(option_id="always", name="Always allow edits", kind="allow_always"),
            models.PermissionOption(option_id="no", name="Reject", kind="reject_once"),
        ]
        asked = models.ToolCallUpdate(tool_call_id=f"edit-{self._turns}", title="Edit notes.txt", kind="edit")
        answer = await self.client.request_permission(builders.request_permission_request(sid, asked, options))
        allowed = (
            isinstance(answer.outcome, models.SelectedRequestPermissionOutcome) and answer.outcome.option_id != "no"
        )
        if not allowed:
            await send(self._tools.report(call.model_copy(update={"status": "failed"})))
            return False
        await send(self._tools.report(call.model_copy(update={"status": "in_progress"})))
        diff = builders.diff_tool_call_content("/work/notes.txt", NEW, old_text=OLD)
        await send(self._tools.report(call.model_copy(update={"status": "completed", "content": [diff]})))
        return True

    async def _run(self, sid: str, send: object) -> None:
        assert callable(send)
        created = await self.client.create_terminal(builders.create_terminal_request(sid, "pytest", args=["-q"]))
        terminal = created.terminal_id
        content = [builders.terminal_tool_call_content(terminal)]
        call = builders.tool_call_session_update(
            f"run-{self._turns}", "Run the tests", kind="execute", status="in_progress", content=content
        )
        await send(self._tools.report(call))
        await self.client.terminal_output(builders.terminal_output_request(sid, terminal))
        await self.client.release_terminal(models.ReleaseTerminalRequest(session_id=sid, terminal_id=terminal))
        await send(self._tools.report(call.model_copy(update={"status": "completed"})))

    async def cancel(self, params: models.CancelNotification) -> None:
        return None

    async def authenticate(self, params: models.AuthenticateRequest) -> models.AuthenticateResponse:
        raise RequestError.method_not_found(methods.AUTHENTICATE)

    async def set_session_mode(self, params: models.SetSessionModeRequest) -> models.SetSessionModeResponse:
        return models.SetSessionModeResponse()

    async def set_session_config_option(
        self, params: models.SetSessionConfigOptionRequest
    ) -> models.SetSessionConfigOptionResponse:
        raise RequestError.method_not_found(methods.SESSION_SET_CONFIG_OPTION)


if __name__ == "__main__":
    asyncio.run(run_agent(ShowcaseAgent()))
