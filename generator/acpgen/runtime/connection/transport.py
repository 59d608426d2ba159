"""What a connection needs from a transport: whole messages in, whole messages out.

Support code: it knows no method of the protocol. The connection
(``connection.Connection``) decodes, orders, bounds and answers messages; a transport
only moves each message's bytes. stdio frames them as lines (``lines``); the remote
modules' transports carry them as WebSocket text frames, HTTP request bodies and
server-sent events. Whatever the transport, the connection's guarantees (order,
cancellation, limits, capability checks, the wire trace) are the same, because they live
in the connection.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

__all__ = ["Oversized", "Transport"]


@dataclass(frozen=True, slots=True)
class Oversized:
    """A message longer than the limit the connection asked for, not kept: its head."""

    head: bytes
    """The start of the message, searched for its id."""


class Transport(Protocol):
    """Moves one JSON-RPC message's bytes at a time between this process and its peer.

    The connection calls :meth:`receive` from one task only, and :meth:`ready` then
    :meth:`send` under its write lock (so a transport sees one send at a time, in
    order).

    Optional, for a transport that can often take a message without waiting (stdio's
    ``LineTransport``): ``can_send_now() -> bool`` (whether :meth:`ready` would return
    at once) with ``send_now(data: bytes) -> None`` (:meth:`send`, without awaiting),
    which the connection calls instead of :meth:`ready` and :meth:`send` when no other
    writer holds or awaits its write lock; and ``received() -> bytes | Oversized |
    None``, the next message when it is already read (None: await :meth:`receive`).
    """

    async def receive(self, limit: int) -> bytes | Oversized | None:
        """The next message from the peer; :class:`Oversized` for one longer than
        ``limit`` bytes (never held whole); None once the peer's input has ended."""
        ...

    async def ready(self) -> None:
        """Wait until the peer has taken enough of what was sent to take one more
        message (the connection encodes a message only then)."""
        ...

    async def send(self, data: bytes) -> None:
        """Write one message (JSON text without a line break); raises
        :class:`ConnectionError` (or :class:`OSError`) once the peer is gone."""
        ...

    async def close(self) -> None:
        """Stop reading and writing (idempotent); :meth:`receive` then returns None."""
        ...
