"""A complete ACP agent: it answers each prompt by streaming its words back, one chunk each.

An ACP client starts it and speaks to it on its stdin and stdout (``echo_client.py`` does)::

    python examples/echo_agent.py

It uses only the generated bindings; in your project, import your vendored copy instead of
adding ``generated/`` to the path.
"""

from __future__ import annotations

import asyncio
import itertools
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "generated"))

from acp_bindings import Agent, RequestError, builders, models, negotiate_version, run, run_agent
from acp_bindings.errors import RESOURCE_NOT_FOUND


class EchoAgent(Agent):
    def __init__(self) -> None:
        self._numbers = itertools.count(1)
        self._sessions: set[str] = set()  # the sessions handed out
        self._cancelled: dict[str, asyncio.Event] = {}  # the running turn of each session

    async def initialize(self, params: models.InitializeRequest) -> models.InitializeResponse:
        return models.InitializeResponse(
            protocol_version=negotiate_version(params.protocol_version),
            agent_info=models.Implementation(name="echo-agent", version="1.0.0"),
        )

    async def new_session(self, params: models.NewSessionRequest) -> models.NewSessionResponse:
        session = f"echo-{next(self._numbers)}"
        self._sessions.add(session)
        return models.NewSessionResponse(session_id=session)

    async def prompt(self, params: models.PromptRequest) -> models.PromptResponse:
        if params.session_id not in self._sessions:
            raise RequestError(RESOURCE_NOT_FOUND, f"no session {params.session_id!r}")
        cancelled = self._cancelled[params.session_id] = asyncio.Event()
        texts = [block.text for block in params.prompt if isinstance(block, models.TextContentBlock)]
        for word in " ".join(texts).split():
            if cancelled.is_set():  # session/cancel came: the turn ends, answered "cancelled"
                return models.PromptResponse(stop_reason="cancelled")
            chunk = builders.agent_message_chunk_session_update(builders.text_content_block(word + " "))
            await self.client.session_update(builders.session_notification(params.session_id, chunk))
            await asyncio.sleep(0)  # let the connection read what came meanwhile (a session/cancel)
        return models.PromptResponse(stop_reason="cancelled" if cancelled.is_set() else "end_turn")

    async def cancel(self, params: models.CancelNotification) -> None:
        turn = self._cancelled.get(params.session_id)
        if turn is not None:
            turn.set()  # a long prompt streams many words: the running turn stops at the next one


if __name__ == "__main__":
    run(run_agent(EchoAgent()))  # asyncio.run, on uvloop when installed (ACP_LOOP=asyncio: not)
