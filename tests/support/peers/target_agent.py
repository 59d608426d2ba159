"""An ACP agent built only from the generated stable bindings, served on stdio: the target of
the hostile-peer tests (tests/runtime/test_hostile_peer.py).

It implements the stable ``Agent`` interface plainly (a prompt turn streams ``chunks`` text
chunks, 3 by default, then ends) and answers a few extension requests that let a test reach the
failure paths of the runtime:

- ``_test/echo``: answers its params;
- ``_test/sleep``: waits until cancelled (``$/cancel_request``) or ``seconds`` pass;
- ``_test/boom``: raises an exception whose text must never reach the peer;
- ``_test/nan``: answers a result holding NaN (not JSON);
- ``_test/object``: answers an object that JSON cannot hold;
- ``_test/ask-client``: asks the client ``fs/read_text_file`` and answers the content it got;
- ``_test/wrong-result`` (through ``session/new``, cwd ``/wrong-result``): a result of the wrong type.

Run: ``python tests/support/peers/target_agent.py`` (the bindings are found in ``generated/``).
"""

from __future__ import annotations

import asyncio
import logging
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "generated"))

from acp_bindings import methods, models
from acp_bindings.errors import RequestError
from acp_bindings.initialization import negotiate_version
from acp_bindings.interfaces import Agent
from acp_bindings.serve import run_agent


class TargetAgent(Agent):
    async def initialize(self, params: models.InitializeRequest) -> models.InitializeResponse:
        return models.InitializeResponse(protocol_version=negotiate_version(params.protocol_version))

    async def new_session(self, params: models.NewSessionRequest) -> models.NewSessionResponse:
        if params.cwd == "/wrong-result":
            return models.PromptResponse(stop_reason="end_turn")  # type: ignore[return-value]
        return models.NewSessionResponse(session_id="s-1")

    async def prompt(self, params: models.PromptRequest) -> models.PromptResponse:
        chunks = int((params.meta or {}).get("chunks", 3))
        for index in range(chunks):
            chunk = models.AgentMessageChunkSessionUpdate(
                session_update="agent_message_chunk", content=models.TextContentBlock(type_="text", text=f"{index}")
            )
            await self.client.session_update(models.SessionNotification(session_id=params.session_id, update=chunk))
        return models.PromptResponse(stop_reason="end_turn")

    async def cancel(self, params: models.CancelNotification) -> None:
        return None

    async def authenticate(self, params: models.AuthenticateRequest) -> models.AuthenticateResponse:
        raise RequestError.method_not_found(methods.AUTHENTICATE)

    async def set_session_mode(self, params: models.SetSessionModeRequest) -> models.SetSessionModeResponse:
        raise RequestError.method_not_found(methods.SESSION_SET_MODE)

    async def set_session_config_option(
        self, params: models.SetSessionConfigOptionRequest
    ) -> models.SetSessionConfigOptionResponse:
        raise RequestError.method_not_found(methods.SESSION_SET_CONFIG_OPTION)

    async def ext_method(self, method: str, params: Any) -> Any:
        if method == "_test/echo":
            return params
        if method == "_test/sleep":
            await asyncio.sleep(float((params or {}).get("seconds", 3600)))
            return {"slept": True}
        if method == "_test/boom":
            raise RuntimeError("secret internal detail")
        if method == "_test/nan":
            return {"value": float("nan")}
        if method == "_test/object":
            return {"value": object()}
        if method == "_test/ask-client":  # a request to the client; answers what the client answered
            answer = await self.client.read_text_file(models.ReadTextFileRequest(session_id="s-1", path="/notes"))
            return {"content": answer.content}
        raise RequestError.method_not_found(method)


if __name__ == "__main__":
    logging.basicConfig(level=logging.CRITICAL, stream=sys.stderr)
    asyncio.run(run_agent(TargetAgent(), check_capabilities=False))
