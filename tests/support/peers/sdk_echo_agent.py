"""A minimal echo agent on the official Python SDK's public API (``acp.run_agent`` and its ``Agent``
interface), written as the SDK's documentation shows, for the conformance kit to check
(tests/runtime/test_conformance_kit.py):

    python tests/support/peers/sdk_echo_agent.py

Each prompt's words come back as one agent message chunk each; ``session/cancel`` ends the running
turn with ``cancelled``. What the kit reports about it are findings about the SDK, recorded, not
test failures.
"""

from __future__ import annotations

import asyncio
import itertools
from typing import Any

import acp
import acp.schema as schema
from acp.helpers import update_agent_message_text


class EchoAgent:
    def __init__(self) -> None:
        self.numbers = itertools.count(1)
        self.cancelled: dict[str, asyncio.Event] = {}

    def on_connect(self, conn: Any) -> None:
        self.client = conn

    async def initialize(self, protocol_version: int, **kwargs: Any) -> schema.InitializeResponse:
        info = schema.Implementation(name="acpgen-conformance-python-sdk-agent", version="1.0.0")
        return schema.InitializeResponse(protocol_version=min(protocol_version, acp.PROTOCOL_VERSION), agent_info=info)

    async def new_session(self, cwd: str, **kwargs: Any) -> schema.NewSessionResponse:
        session = f"python-sdk-session-{next(self.numbers)}"
        self.cancelled[session] = asyncio.Event()
        return schema.NewSessionResponse(session_id=session)

    async def prompt(self, session_id: str, prompt: list[Any], **kwargs: Any) -> schema.PromptResponse:
        cancelled = self.cancelled.setdefault(session_id, asyncio.Event())
        cancelled.clear()
        text = " ".join(getattr(block, "text", "") for block in prompt)
        for word in text.split():
            if cancelled.is_set():
                return schema.PromptResponse(stop_reason="cancelled")
            await self.client.session_update(session_id, update_agent_message_text(word + " "))
        return schema.PromptResponse(stop_reason="cancelled" if cancelled.is_set() else "end_turn")

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        if session_id in self.cancelled:
            self.cancelled[session_id].set()


if __name__ == "__main__":
    asyncio.run(acp.run_agent(EchoAgent()))  # type: ignore[arg-type]
