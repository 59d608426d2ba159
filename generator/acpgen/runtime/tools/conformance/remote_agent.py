"""A remote agent under test (``--url``): one connection per scenario.

The runtime's own client transports (Streamable HTTP or a WebSocket: the ``remote``
extra) run on an event loop in a thread of their own, behind the surface of
:class:`.agent_process.AgentProcess`: every message is a line of the transcript, and
closing the connection is the shutdown."""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import queue
import threading
import time
from typing import Any

from ...connection.transport import Oversized
from .agent_process import LINE_LIMIT, Arrived, PeerExited, Transcript

OPEN_TIMEOUT = 30.0


class RemotePeer:
    """One connection to the agent at ``url`` over the profile ``transport``."""

    def __init__(self, url: str, transport: str, *, transcript: Transcript) -> None:
        self.transcript = transcript
        self.eof = False
        self.errors: list[str] = []
        self._lines: queue.Queue[Arrived | None] = queue.Queue()
        self._sending = asyncio.Lock()
        """One message sent at a time, in the order :meth:`send` was called: over
        Streamable HTTP each message is a POST of its own, and two in flight at once may
        reach the agent in either order (a ``$/cancel_request`` before its request)."""
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._thread.start()
        try:
            opened = asyncio.run_coroutine_threadsafe(
                self._open(url, transport), self._loop
            )
            self._transport: Any = opened.result(OPEN_TIMEOUT)
        except (OSError, ConnectionError, concurrent.futures.TimeoutError) as error:
            self._stop()
            raise OSError(f"cannot connect to {url} ({transport}): {error}") from None
        except BaseException:
            self._stop()
            raise
        asyncio.run_coroutine_threadsafe(self._receive(), self._loop)

    async def _open(self, url: str, transport: str) -> Any:
        if transport == "ws":
            from ...remote.websocket_client import WebSocketClientTransport

            return await WebSocketClientTransport.open(url, {}, LINE_LIMIT)
        from ...remote.http_client import HttpClientTransport

        return HttpClientTransport(
            url, {}, initialize="initialize", max_bytes=LINE_LIMIT
        )

    async def _receive(self) -> None:
        try:
            while True:
                item = await self._transport.receive(LINE_LIMIT)
                if item is None:
                    break
                raw = item.head if isinstance(item, Oversized) else item
                self._lines.put(Arrived(time.monotonic(), raw))
        except Exception as error:  # noqa: BLE001 - a broken connection ends the peer's output
            self.errors.append(f"receiving: {error!r}")
        finally:
            self._lines.put(None)

    async def _send(self, data: bytes) -> None:
        try:
            async with self._sending:
                await self._transport.send(data)
        except Exception as error:  # noqa: BLE001 - reported with the scenario, never raised
            self.errors.append(f"cannot send {data[:80]!r}: {error!r}")
            self._lines.put(
                None
            )  # what the agent would say is lost: its output has ended

    def send(self, data: bytes) -> float:
        data = data.rstrip(b"\n")
        at = self.transcript.add("sent", data)
        asyncio.run_coroutine_threadsafe(self._send(data), self._loop)
        return at

    def next_line(self, timeout: float) -> Arrived | None:
        if self.eof:
            raise PeerExited
        try:
            got = self._lines.get(timeout=max(timeout, 0))
        except queue.Empty:
            return None
        if got is None:
            self.eof = True
            raise PeerExited
        self.transcript.add("received", got.raw, got.t)
        return got

    @property
    def ordered(self) -> bool:
        """Whether what arrives comes in the agent's order: always over a WebSocket;
        over Streamable HTTP only when the server stated the order of its streams
        (issue 47)."""
        return bool(getattr(self._transport, "ordered", True))

    def stderr_tail(self) -> str:
        return "\n".join(self.errors)

    def close(self, grace: float) -> bool:
        """Close the connection; a remote agent has no process of ours to stop."""
        with contextlib.suppress(Exception):
            closing = asyncio.run_coroutine_threadsafe(
                self._transport.close(), self._loop
            )
            closing.result(grace + 5)
        self._stop()
        return True

    def _stop(self) -> None:
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(5)
