"""Interop, direction 1: an ACP agent written only with the generated bindings, served on stdio.

Run by tests/interop/client.mjs (a client on the official TypeScript SDK). It uses the generated
``interfaces.Agent``, ``dispatch.Dispatcher``, ``connection.Connection``, ``senders.ClientSender``
(gated by the client's capabilities), ``initialization.negotiate_version`` and ``capabilities``,
and nothing else outside the standard library and the generated package (which needs only
pydantic).

Each prompt turn: an agent_message_chunk, a plan, a tool_call that reads ``notes.txt`` in the
session's cwd, then session/request_permission for it. If the client allows it: a
tool_call_update (in_progress), fs/read_text_file, a tool_call_update (completed, with the text),
a closing agent_message_chunk that summarises the file, and ``end_turn``. If the client answers
``cancelled`` (it cancels the turn with session/cancel first), the turn waits for that
session/cancel and stops with ``cancelled``.
"""

from __future__ import annotations

import asyncio
import logging
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "generated"))

from acp_bindings import capabilities, methods, models
from acp_bindings.connection import Connection, LineTransport, stdio_streams
from acp_bindings.dispatch import Dispatcher
from acp_bindings.errors import RequestError
from acp_bindings.initialization import negotiate_version
from acp_bindings.interfaces import Agent
from acp_bindings.senders import ClientSender

NOTES_NAME = "notes.txt"
RESOURCE_NOT_FOUND = -32002


@dataclass
class Session:
    cwd: str
    cancelled: asyncio.Event = field(default_factory=asyncio.Event)
    turns: int = 0


def text(value: str) -> models.TextContentBlock:
    return models.TextContentBlock(type_="text", text=value)


class InteropAgent(Agent):
    """The agent side of the interop flow."""

    def __init__(self) -> None:
        self.client: ClientSender | None = None
        self.client_capabilities = models.ClientCapabilities()
        self.sessions: dict[str, Session] = {}

    # -- the methods the flow uses -------------------------------------------------------------

    async def initialize(self, params: models.InitializeRequest) -> models.InitializeResponse:
        self.client_capabilities = params.client_capabilities
        assert self.client is not None
        self.client.peer_capabilities = params.client_capabilities  # the sender now refuses ungranted calls
        return models.InitializeResponse(
            protocol_version=negotiate_version(params.protocol_version),
            agent_capabilities=models.AgentCapabilities(load_session=False),
            agent_info=models.Implementation(name="acpgen-interop-python-agent", version="0.1.0"),
            auth_methods=[],
        )

    async def new_session(self, params: models.NewSessionRequest) -> models.NewSessionResponse:
        session_id = f"py-session-{len(self.sessions) + 1}"
        self.sessions[session_id] = Session(cwd=params.cwd)
        return models.NewSessionResponse(session_id=session_id)

    async def cancel(self, params: models.CancelNotification) -> None:
        session = self.sessions.get(params.session_id)
        if session is not None:
            session.cancelled.set()

    async def prompt(self, params: models.PromptRequest) -> models.PromptResponse:
        session = self.sessions.get(params.session_id)
        if session is None:
            raise RequestError(RESOURCE_NOT_FOUND, "Resource not found", {"sessionId": params.session_id})
        assert self.client is not None
        client = self.client
        session.turns += 1
        session.cancelled.clear()
        sid = params.session_id
        path = os.path.join(session.cwd, NOTES_NAME)
        call_id = f"read-notes-{session.turns}"

        async def update(value: models.SessionUpdate) -> None:
            await client.session_update(models.SessionNotification(session_id=sid, update=value))

        await update(
            models.AgentMessageChunkSessionUpdate(
                session_update="agent_message_chunk", content=text(f"Let me look at {NOTES_NAME}.")
            )
        )
        await update(
            models.PlanSessionUpdate(
                session_update="plan",
                entries=[
                    models.PlanEntry(content=f"Read {NOTES_NAME}", priority="high", status="in_progress"),
                    models.PlanEntry(content="Summarise it", priority="medium", status="pending"),
                ],
            )
        )
        await update(
            models.ToolCallSessionUpdate(
                session_update="tool_call",
                tool_call_id=call_id,
                title=f"Read {NOTES_NAME}",
                kind="read",
                status="pending",
                locations=[models.ToolCallLocation(path=path)],
            )
        )
        answer = await client.request_permission(
            models.RequestPermissionRequest(
                session_id=sid,
                tool_call=models.ToolCallUpdate(tool_call_id=call_id, title=f"Read {NOTES_NAME}", kind="read"),
                options=[
                    models.PermissionOption(option_id="allow", name="Allow once", kind="allow_once"),
                    models.PermissionOption(option_id="reject", name="Reject", kind="reject_once"),
                ],
            )
        )
        outcome = answer.outcome
        if isinstance(outcome, models.CancelledRequestPermissionOutcome):
            # The client sends session/cancel before it answers pending permission requests with
            # "cancelled": wait for that notification rather than assume it has been handled.
            await session.cancelled.wait()
            return models.PromptResponse(stop_reason="cancelled")
        if outcome.option_id != "allow":
            await update(
                models.ToolCallUpdateSessionUpdate(
                    session_update="tool_call_update", tool_call_id=call_id, status="failed"
                )
            )
            return models.PromptResponse(stop_reason="end_turn")
        if not capabilities.supports_client_fs_read_text_file(self.client_capabilities):
            raise RequestError(-32603, "the client cannot read files", {"capability": "fs.readTextFile"})

        await update(
            models.ToolCallUpdateSessionUpdate(
                session_update="tool_call_update", tool_call_id=call_id, status="in_progress"
            )
        )
        file = await client.read_text_file(models.ReadTextFileRequest(session_id=sid, path=path))
        await update(
            models.ToolCallUpdateSessionUpdate(
                session_update="tool_call_update",
                tool_call_id=call_id,
                status="completed",
                content=[models.ContentToolCallContent(type_="content", content=text(file.content))],
            )
        )
        lines = file.content.splitlines()
        first = lines[0] if lines else ""
        await update(
            models.AgentMessageChunkSessionUpdate(
                session_update="agent_message_chunk",
                content=text(f"{NOTES_NAME} has {len(lines)} lines; the first is {first!r}."),
            )
        )
        return models.PromptResponse(stop_reason="end_turn")

    # -- methods without a default: this agent offers no auth method, mode or config option ------

    async def authenticate(self, params: models.AuthenticateRequest) -> models.AuthenticateResponse:
        raise RequestError.method_not_found(methods.AUTHENTICATE)

    async def set_session_config_option(
        self, params: models.SetSessionConfigOptionRequest
    ) -> models.SetSessionConfigOptionResponse:
        raise RequestError.method_not_found(methods.SESSION_SET_CONFIG_OPTION)

    async def set_session_mode(self, params: models.SetSessionModeRequest) -> models.SetSessionModeResponse:
        raise RequestError.method_not_found(methods.SESSION_SET_MODE)


async def main() -> None:
    reader, writer = await stdio_streams()
    agent = InteropAgent()
    connection = Connection(
        LineTransport(reader, writer), Dispatcher(agent, methods.handled_by("agent", "both")).dispatch
    )
    agent.client = ClientSender(connection)
    await connection.run()  # until the client closes our stdin


if __name__ == "__main__":
    logging.basicConfig(
        level=logging.WARNING, stream=sys.stderr, format="py_agent: %(levelname)s %(name)s: %(message)s"
    )
    asyncio.run(main())
