"""A TCP proxy that breaks connections on purpose (issue 22, the fault test).

``Proxy`` listens on an ephemeral loopback port and forwards every TCP connection it accepts to a
target (the uvicorn server of the test), byte for byte, both ways, in the event loop it was started
in: WebSocket, HTTP/1.1 keep-alive and SSE streams pass through it unchanged because it never reads
what it forwards. It can break every live connection it carries, on demand or at a planned point:

- ``"client"``: close toward the client (FIN) at once; what the server still sends is dropped, and
  the server's side is closed only ``lag`` seconds later (the server learns late, as behind a real
  proxy or NAT that lost the connection);
- ``"server"``: close toward the server (FIN) at once; the client's side goes dead (what it sends is
  dropped) and is closed ``lag`` seconds later;
- ``"drop"``: reset both sides at once (``SO_LINGER`` 0, so an RST, not a FIN);
- ``"silent"`` (``silence()``, not drawn by ``draw_cuts``): stop forwarding both ways and close nothing,
  as a NAT that forgot the connection or a laptop asleep (a half-open connection): neither side hears
  anything more, and neither side's reads or writes fail; connections accepted afterwards pass.

``plan()`` arms cuts at byte offsets of the server-to-client stream (counted over every connection
of the proxy, from the arming or the previous cut): the cut happens in the middle of whatever was
crossing then (a WebSocket frame, an SSE event, an HTTP header), after exactly that many bytes were
delivered. ``refuse()`` holds an outage: connections accepted meanwhile are reset at once, so a
client that reconnects too early fails and backs off.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import random
import socket
import struct
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, Self

Kind = Literal["client", "server", "drop"]
KINDS: tuple[Kind, ...] = ("client", "server", "drop")
_READ = 64 * 1024


@dataclass(frozen=True)
class Cut:
    """A planned cut: after ``after`` more bytes from the server, break every connection by ``kind``;
    the side left open goes after ``lag`` seconds; new connections are refused for ``outage`` seconds."""

    after: int
    kind: Kind
    lag: float = 0.0
    outage: float = 0.0


def draw_cuts(rng: random.Random, count: int, span: int, *, max_lag: float = 0.2, max_outage: float = 0.2) -> list[Cut]:
    """``count`` cuts at sorted uniform points of ``span`` bytes (each offset relative to the previous
    cut, as ``Proxy.plan`` counts), each of a random kind, lag and outage."""
    points = sorted(rng.randrange(1, max(2, span)) for _ in range(count))
    cuts, previous = [], 0
    for point in points:
        kind = rng.choice(KINDS)
        lag = round(rng.uniform(0.0, max_lag), 3)
        outage = round(rng.uniform(0.0, max_outage), 3)
        cuts.append(Cut(max(1, point - previous), kind, lag, outage))
        previous = point
    return cuts


def _reset(writer: asyncio.StreamWriter) -> None:
    """Abort ``writer``'s connection with an RST."""
    sock = writer.get_extra_info("socket")
    if sock is not None:
        with contextlib.suppress(OSError):
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    writer.transport.abort()


def _close(writer: asyncio.StreamWriter) -> None:
    """Close ``writer``'s connection with a FIN, after what was written to it."""
    with contextlib.suppress(OSError, RuntimeError):
        writer.close()


class _Link:
    """One proxied TCP connection: the client's side, the server's side, a pump each way."""

    def __init__(
        self,
        proxy: Proxy,
        client: tuple[asyncio.StreamReader, asyncio.StreamWriter],
        server: tuple[asyncio.StreamReader, asyncio.StreamWriter],
    ) -> None:
        self.proxy = proxy
        self.client_reader, self.client_writer = client
        self.server_reader, self.server_writer = server
        self.broken = False
        self.silent = False
        """Forwarding stopped for good (``Proxy.silence``): the pumps are stopped, nothing closes."""
        self._released = asyncio.Event()
        """Set when a silent link is finally cut (the proxy closing)."""
        self.profile: str | None = None
        """``"ws"`` or ``"http"``, from the first request the client sent on this connection."""
        self.tasks = [
            asyncio.ensure_future(self._pump(self.client_reader, self.server_writer, down=False)),
            asyncio.ensure_future(self._pump(self.server_reader, self.client_writer, down=True)),
        ]

    async def _pump(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, *, down: bool) -> None:
        try:
            while True:
                data = await reader.read(_READ)
                if self.broken:
                    if not data:
                        return
                    continue  # the other side is gone: what this side still sends is lost
                if not data:
                    if writer.can_write_eof() and not writer.is_closing():
                        writer.write_eof()  # a half close passes through
                    return
                if writer.is_closing():
                    break  # the other side went away under us
                if not down and self.profile is None:
                    self.profile = "ws" if b"upgrade: websocket" in data.lower() else "http"
                    self.proxy.profiles[self.profile] += 1
                if down:
                    allowed = self.proxy._delivered(len(data))
                    if allowed < len(data):
                        writer.write(data[:allowed])
                        self.proxy._fire()
                        return
                writer.write(data)
                await writer.drain()
        except (OSError, RuntimeError):
            pass
        # a side reset or closed without a FIN passing through: so does the other, as a real proxy would
        if not self.broken:
            self.broken = True
            _reset(self.client_writer)
            _reset(self.server_writer)

    def hush(self) -> None:
        """Stop forwarding both ways, closing nothing: the pumps stop where they are (what they read
        and did not write is lost), and the sockets stay open until the link is cut."""
        self.silent = True
        for task in self.tasks:
            task.cancel()

    def cut(self, kind: Kind, lag: float) -> None:
        self._released.set()
        if self.broken:
            return
        self.broken = True
        if kind == "drop":
            _reset(self.client_writer)
            _reset(self.server_writer)
            return
        closed, dead = (
            (self.client_writer, self.server_writer) if kind == "client" else (self.server_writer, self.client_writer)
        )
        _close(closed)
        if lag > 0:
            asyncio.get_running_loop().call_later(lag, _close, dead)
        else:
            _close(dead)

    async def wait(self) -> None:
        await asyncio.gather(*self.tasks, return_exceptions=True)
        if self.silent:
            await self._released.wait()  # open, and silent, until cut (the proxy closing)
        _close(self.client_writer)
        _close(self.server_writer)


class Proxy:
    """A loopback TCP proxy to ``target`` (host, port) that can break what it carries (module doc)."""

    def __init__(self, target: tuple[str, int]) -> None:
        self.target = target
        self.port = 0
        self.links: set[_Link] = set()
        self.accepted = 0
        self.refused = 0
        self.silenced = 0
        """Connections made silent so far (``silence``)."""
        self.fired: list[Cut] = []
        """The cuts done so far, planned or on demand, in order."""
        self.profiles: collections.Counter[str] = collections.Counter()
        """Connections by the profile of their first request (``"ws"``: a WebSocket upgrade)."""
        self.down_bytes = 0
        """Bytes delivered from the server to the client, over every connection."""
        self.moved: asyncio.Event | None = None
        """Set (when given) at every connection accepted and every cut: a trial's progress."""
        self._plan: list[Cut] = []
        self._budget: int | None = None
        self._refusing_until = 0.0
        self._server: asyncio.Server | None = None
        self._closing: set[asyncio.Task[None]] = set()

    @staticmethod
    def address(url: str) -> tuple[str, int]:
        """The (host, port) of an ``http://host:port/...`` URL."""
        host, port = url.split("://", 1)[1].split("/", 1)[0].rsplit(":", 1)
        return host, int(port)

    async def start(self) -> Self:
        self._server = await asyncio.start_server(self._accept, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    def url(self, path: str = "/acp") -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
        for link in list(self.links):
            link.cut("drop", 0.0)
        await asyncio.gather(*(link.wait() for link in list(self.links)), *self._closing, return_exceptions=True)
        if self._server is not None:
            await self._server.wait_closed()

    async def __aenter__(self) -> Self:
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    # -- breaking

    def plan(self, cuts: Sequence[Cut]) -> None:
        """Arm ``cuts``: the first after ``cuts[0].after`` more bytes from the server, the next that
        many bytes after the previous cut, and so on."""
        self._plan = list(cuts)
        self._budget = self._plan[0].after if self._plan else None

    @property
    def planned(self) -> int:
        """The planned cuts not done yet."""
        return len(self._plan)

    def cut(self, kind: Kind, *, lag: float = 0.0, outage: float = 0.0) -> None:
        """Break every live connection now (and refuse new ones for ``outage`` seconds)."""
        self._break(Cut(0, kind, lag, outage))

    def silence(self) -> None:
        """Make every live connection silent (a half-open connection): nothing more is forwarded either
        way and nothing is closed; connections accepted later are forwarded as usual."""
        self.silenced += len(self.links)
        for link in list(self.links):
            link.hush()

    def refuse(self, seconds: float) -> None:
        """Reset the connections accepted in the next ``seconds`` (an outage); 0 ends one."""
        self._refusing_until = asyncio.get_running_loop().time() + seconds

    def _break(self, cut: Cut) -> None:
        self.fired.append(cut)
        if self.moved is not None:
            self.moved.set()
        if cut.outage > 0:
            self.refuse(cut.outage)
        for link in list(self.links):
            link.cut(cut.kind, cut.lag)

    def _delivered(self, size: int) -> int:
        """Count ``size`` bytes about to go to the client; how many of them may go before a cut."""
        if self._budget is None or size < self._budget:
            if self._budget is not None:
                self._budget -= size
            self.down_bytes += size
            return size
        allowed = self._budget
        self.down_bytes += allowed
        return allowed

    def _fire(self) -> None:
        """The planned cut whose byte offset was reached: do it, arm the next."""
        cut = self._plan.pop(0)
        self._budget = self._plan[0].after if self._plan else None
        self._break(cut)

    # -- forwarding

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.accepted += 1
        if self.moved is not None:
            self.moved.set()
        if asyncio.get_running_loop().time() < self._refusing_until:
            self.refused += 1
            _reset(writer)
            return
        try:
            upstream = await asyncio.open_connection(*self.target)
        except OSError:
            _reset(writer)
            return
        link = _Link(self, (reader, writer), upstream)
        self.links.add(link)
        try:
            await link.wait()
        finally:
            self.links.discard(link)
