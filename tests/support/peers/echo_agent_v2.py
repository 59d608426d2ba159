"""An agent of the experimental protocol v2, built only from ``generated/acp_bindings_v2``: it
advertises sessions (and nothing optional), streams each prompt's words back as agent message
chunks, and answers the prompt once they are sent. Run by ``tests/generated/test_protocol_v2.py``."""

from __future__ import annotations

import asyncio
import itertools
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "generated"))

from acp_bindings_v2 import builders, models
from acp_bindings_v2.errors import RequestError
from acp_bindings_v2.initialization import negotiate_version
from acp_bindings_v2.interfaces import Agent
from acp_bindings_v2.serve import run_agent


class EchoAgentV2(Agent):
    def __init__(self) -> None:
        self._ids = itertools.count(1)

    async def initialize(self, params: models.InitializeRequest) -> models.InitializeResponse:
        return builders.initialize_response(
            negotiate_version(params.protocol_version),
            models.Implementation(name="echo-agent-v2", version="1.0.0"),
            capabilities=models.AgentCapabilities(session=models.SessionCapabilities()),
        )

    async def new_session(self, params: models.NewSessionRequest) -> models.NewSessionResponse:
        return builders.new_session_response(f"s-{next(self._ids)}")

    async def prompt(self, params: models.PromptRequest) -> models.PromptResponse:
        message = f"m-{next(self._ids)}"
        texts = [block.text for block in params.prompt if isinstance(block, models.TextContentBlock)]
        for word in " ".join(texts).split():
            chunk = builders.agent_message_chunk_session_update(message, builders.text_content_block(word + " "))
            await self.client.update_session(builders.update_session_notification(params.session_id, chunk))
        return builders.prompt_response(message)

    async def login_auth(self, params: models.LoginAuthRequest) -> models.LoginAuthResponse:
        raise RequestError.method_not_found("auth/login")

    async def logout_auth(self, params: models.LogoutAuthRequest) -> models.LogoutAuthResponse:
        raise RequestError.method_not_found("auth/logout")

    async def set_session_config_option(
        self, params: models.SetSessionConfigOptionRequest
    ) -> models.SetSessionConfigOptionResponse:
        raise RequestError.method_not_found("session/set_config_option")

    async def cancel_terminal(self, params: models.CancelTerminalRequest) -> models.CancelTerminalResponse:
        raise RequestError.method_not_found("terminal/cancel")

    async def cancel_tool_call(self, params: models.CancelToolCallRequest) -> models.CancelToolCallResponse:
        raise RequestError.method_not_found("tool_call/cancel")


if __name__ == "__main__":
    asyncio.run(run_agent(EchoAgentV2()))
