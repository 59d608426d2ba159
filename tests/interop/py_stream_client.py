"""Ordering, direction 2: a client written only with the generated bindings (``serve.spawn_agent``)
drives the SDK agent tests/interop/stream_agent.mjs through turns of 500 chunks. Its ``session/update`` handler awaits
a random short sleep for each chunk (seeded); when ``prompt()`` returns, every chunk of the turn
must have been handled, in order.

    python tests/interop/py_stream_client.py NODE [CHUNKS] [TURNS]

Prints one JSON object: {"turns": [[texts handled when prompt() returned], ...]}.
"""

from __future__ import annotations

import asyncio
import json
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "generated"))

from acp_bindings import models
from acp_bindings.interfaces import Client
from acp_bindings.serve import spawn_agent

HERE = Path(__file__).resolve().parent


class SlowClient(Client):
    """Applies each chunk after an await, as an editor rendering it would."""

    def __init__(self) -> None:
        self.texts: list[str] = []
        self.random = random.Random(20251123)

    async def session_update(self, params: models.SessionNotification) -> None:
        await asyncio.sleep(self.random.random() / 2000)  # up to 0.5 ms
        update = params.update
        assert isinstance(update, models.AgentMessageChunkSessionUpdate)
        assert isinstance(update.content, models.TextContentBlock)
        self.texts.append(update.content.text)

    async def request_permission(self, params: models.RequestPermissionRequest) -> models.RequestPermissionResponse:
        raise NotImplementedError


async def main(node: str, chunks: int, turns: int) -> dict[str, object]:
    client = SlowClient()
    handled: list[list[str]] = []
    async with spawn_agent([node, str(HERE / "stream_agent.mjs")], client) as agent:
        await agent.initialize(models.InitializeRequest(protocol_version=1))
        session = await agent.new_session(models.NewSessionRequest(cwd="/tmp", mcp_servers=[]))
        for _ in range(turns):
            client.texts.clear()
            prompt = models.PromptRequest(
                session_id=session.session_id,
                prompt=[models.TextContentBlock(type_="text", text="stream")],
                meta={"chunks": chunks},
            )
            result = await agent.prompt(prompt)
            assert result.stop_reason == "end_turn"
            handled.append(list(client.texts))  # a copy, taken the moment prompt() returned
    return {"turns": handled}


if __name__ == "__main__":
    node = sys.argv[1]
    chunks = int(sys.argv[2]) if len(sys.argv) > 2 else 500
    turns = int(sys.argv[3]) if len(sys.argv) > 3 else 2
    print(json.dumps(asyncio.run(main(node, chunks, turns))))
