"""A minimal client on the official Python SDK's public API (``acp.spawn_agent_process`` and its
``Client`` interface), written as the SDK's documentation shows, for the conformance kit to check
(tests/runtime/test_conformance_kit.py):

    python tests/support/peers/sdk_echo_client.py AGENT [ARGS...]

It spawns the agent, initializes, opens a session in the current folder, sends one prompt, allows
the first permission option offered, prints the agent's text and exits. What the kit reports about
it are findings about the SDK, recorded, not test failures.
"""

from __future__ import annotations

import asyncio
import os
import sys
from typing import Any

import acp
import acp.schema as schema


class EchoClient:
    async def request_permission(self, session_id: str, tool_call: Any, options: list[Any], **kwargs: Any) -> Any:
        chosen = schema.AllowedOutcome(outcome="selected", option_id=options[0].option_id)
        return schema.RequestPermissionResponse(outcome=chosen)

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        content = getattr(update, "content", None)
        if getattr(update, "session_update", "") == "agent_message_chunk" and getattr(content, "type", "") == "text":
            sys.stdout.write(content.text)


async def main(command: list[str]) -> None:
    async with acp.spawn_agent_process(EchoClient(), command[0], *command[1:]) as (agent, _):  # type: ignore[arg-type]
        await agent.initialize(
            protocol_version=acp.PROTOCOL_VERSION,
            client_capabilities=schema.ClientCapabilities(),
            client_info=schema.Implementation(name="acpgen-conformance-python-sdk-client", version="1.0.0"),
        )
        session = await agent.new_session(cwd=os.getcwd(), mcp_servers=[])
        answer = await agent.prompt(session_id=session.session_id, prompt=[acp.text_block("hello from the Python SDK")])
        sys.stdout.write(f"\n({answer.stop_reason})\n")


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1:]))
