"""A complete ACP client: it spawns an agent, sends it one prompt and prints what it streamed.

    python examples/echo_client.py "hello from the client"            (spawns echo_agent.py)
    python examples/echo_client.py "hello" -- my-agent --its-flags     (any ACP agent)

It uses only the generated bindings; in your project, import your vendored copy instead of
adding ``generated/`` to the path.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "generated"))

from acp_bindings import PROTOCOL_VERSION, Client, builders, models, run, spawn_agent

ECHO_AGENT = [sys.executable, str(Path(__file__).with_name("echo_agent.py"))]


INITIALIZE = builders.initialize_request(
    PROTOCOL_VERSION,
    client_capabilities=models.ClientCapabilities(),  # no file system, no terminal: nothing to offer
    client_info=models.Implementation(name="acpgen-echo-client", version="1.0.0"),
)
"""What this client says of itself when it opens a connection."""


class PrintingClient(Client):
    """Collects the agent's message chunks; refuses every permission request."""

    def __init__(self) -> None:
        self.chunks: list[str] = []

    async def session_update(self, params: models.SessionNotification) -> None:
        update = params.update
        if isinstance(update, models.AgentMessageChunkSessionUpdate) and isinstance(
            update.content, models.TextContentBlock
        ):
            self.chunks.append(update.content.text)

    async def request_permission(self, params: models.RequestPermissionRequest) -> models.RequestPermissionResponse:
        # refused with an option the agent offered for it ("cancelled" is for a turn this client cancelled)
        reject = next((o for o in params.options if o.kind.startswith("reject")), None)
        if reject is None:
            return builders.request_permission_response(builders.cancelled_request_permission_outcome())
        return builders.request_permission_response(builders.selected_request_permission_outcome(reject.option_id))


async def main(text: str, command: list[str]) -> str:
    client = PrintingClient()
    async with spawn_agent(command, client) as agent:
        await agent.initialize(INITIALIZE)
        session = await agent.new_session(builders.new_session_request(os.getcwd(), []))
        prompt = [builders.text_content_block(text)]
        result = await agent.prompt(builders.prompt_request(session.session_id, prompt))
    # prompt() returns once every update of the turn was handled: the chunks are all here
    return f"{''.join(client.chunks).strip()}\n({result.stop_reason})"


if __name__ == "__main__":
    arguments = sys.argv[1:]
    split = arguments.index("--") if "--" in arguments else len(arguments)
    message = " ".join(arguments[:split]) or "hello from the client"
    try:
        print(run(main(message, arguments[split + 1 :] or ECHO_AGENT)))
    except ConnectionError as error:  # the agent could not be started, or went away mid-turn
        sys.exit(f"echo_client: {error}")
