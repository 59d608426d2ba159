"""R1: the memory a process holds while its peer stops reading.

One fresh process per side: it connects an agent's connection to a pipe that nobody reads,
starts 3000 concurrent ``session/update`` sends of a 64 KiB agent message chunk (one shared text
string; each send its own model, as an agent streaming output builds them), lets the event loop
run until the senders have stalled, and prints how much its resident set grew (MiB). Ours: the
generated typed sender (``ClientSender.session_update`` over ``acp_bindings.connection``); the
reference: the official Python SDK's ``AgentSideConnection.session_update``.

    python -m bench.stalled_peer ours|theirs
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path
from typing import Any

SENDERS = 3000
PAYLOAD = "x" * (64 * 1024)


def rss_mib() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS in /proc/self/status")


async def _stalled_writer() -> asyncio.StreamWriter:
    _, write_fd = os.pipe()  # the reading end stays open and unread
    loop = asyncio.get_running_loop()
    transport, protocol = await loop.connect_write_pipe(asyncio.streams.FlowControlMixin, os.fdopen(write_fd, "wb"))
    return asyncio.StreamWriter(transport, protocol, None, loop)


async def _ignore(*args: Any) -> None:
    return None


class _NoAgent:
    """An agent that is never called (nothing is read here)."""


async def measure(side: str) -> float:
    writer = await _stalled_writer()
    if side == "ours":
        sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "generated"))
        from acp_bindings import builders
        from acp_bindings.connection import Connection, LineTransport
        from acp_bindings.senders import ClientSender

        sender = ClientSender(Connection(LineTransport(asyncio.StreamReader(), writer), _ignore))

        def send(number: int) -> Any:
            chunk = builders.agent_message_chunk_session_update(builders.text_content_block(PAYLOAD))
            return sender.session_update(builders.session_notification(f"s{number}", chunk))
    else:
        import warnings

        import acp.schema as sdk

        warnings.simplefilter("ignore", DeprecationWarning)  # the SDK's own class, used as its run_agent does
        from acp import AgentSideConnection

        agent = AgentSideConnection(_NoAgent(), writer, asyncio.StreamReader())

        def send(number: int) -> Any:
            chunk = sdk.AgentMessageChunk(
                session_update="agent_message_chunk", content=sdk.TextContentBlock(type="text", text=PAYLOAD)
            )
            return agent.session_update(session_id=f"s{number}", update=chunk)

    await send(-1)  # builds what the first send builds, before measuring
    await asyncio.sleep(0.05)
    before = rss_mib()
    senders = [asyncio.ensure_future(send(number)) for number in range(SENDERS)]
    for _ in range(50):
        await asyncio.sleep(0.01)
    grown = rss_mib() - before
    assert not all(s.done() for s in senders), "the senders did not stall: is the pipe being read?"
    return grown


if __name__ == "__main__":
    print(f"{asyncio.run(measure(sys.argv[1])):.1f}")
    os._exit(0)  # the stalled senders never finish: leave without waiting for them
