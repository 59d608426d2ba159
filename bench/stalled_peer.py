"""R1: the memory a process holds while its peer stops reading.

One fresh process per side: it connects a JSON-RPC connection to a pipe that nobody reads,
starts 3000 concurrent senders of a 64 KiB notification (one shared payload string), lets the
event loop run until the senders have stalled, and prints how much its resident set grew (MiB).
Ours: the generated runtime (``acp_bindings.connection``); the reference: the official Python
SDK's ``acp.connection.Connection``.

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


async def measure(side: str) -> float:
    writer = await _stalled_writer()
    if side == "ours":
        sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "generated"))
        from acp_bindings.connection import Connection, LineTransport

        notify = Connection(LineTransport(asyncio.StreamReader(), writer), _ignore).notify
    else:
        from acp.connection import Connection as SdkConnection

        notify = SdkConnection(_ignore, writer, asyncio.StreamReader()).send_notification
    await asyncio.sleep(0.05)
    before = rss_mib()
    senders = [asyncio.ensure_future(notify("session/update", {"text": PAYLOAD})) for _ in range(SENDERS)]
    for _ in range(50):
        await asyncio.sleep(0.01)
    grown = rss_mib() - before
    assert not all(s.done() for s in senders), "the senders did not stall: is the pipe being read?"
    return grown


if __name__ == "__main__":
    print(f"{asyncio.run(measure(sys.argv[1])):.1f}")
    os._exit(0)  # the stalled senders never finish: leave without waiting for them
