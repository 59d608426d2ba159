"""A complete ACP agent: it answers each prompt by streaming its words back, one chunk each.

An ACP client starts it and speaks to it on its stdin and stdout (``echo_client.py`` does)::

    python examples/echo_agent.py

It uses only the generated bindings; in your project, import your vendored copy instead of
adding ``generated/`` to the path.
"""

from __future__ import annotations

import itertools
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "generated"))

from acp_bindings import Agent, builders, models, negotiate_version, run, run_agent


class EchoAgent(Agent):
    def __init__(self) -> None:
        self._sessions = itertools.count(1)

    async def initialize(self, params: models.InitializeRequest) -> models.InitializeResponse:
        return models.InitializeResponse(
            protocol_version=negotiate_version(params.protocol_version),
            agent_info=models.Implementation(name="echo-agent", version="1.0.0"),
        )

    async def new_session(self, params: models.NewSessionRequest) -> models.NewSessionResponse:
        return models.NewSessionResponse(session_id=f"echo-{next(self._sessions)}")

    async def prompt(self, params: models.PromptRequest) -> models.PromptResponse:
        texts = [block.text for block in params.prompt if isinstance(block, models.TextContentBlock)]
        for word in " ".join(texts).split():
            chunk = builders.agent_message_chunk_session_update(builders.text_content_block(word + " "))
            await self.client.session_update(builders.session_notification(params.session_id, chunk))
        return models.PromptResponse(stop_reason="end_turn")

    async def cancel(self, params: models.CancelNotification) -> None:
        return None  # each turn ends at once: nothing to cancel


if __name__ == "__main__":
    run(run_agent(EchoAgent()))  # asyncio.run, on uvloop when installed (ACP_LOOP=asyncio: not)
