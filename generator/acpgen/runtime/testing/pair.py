"""An agent and a client connected in one process, over the real connection and codec.

Support code: it knows no method of the protocol. The two ends of a socket pair are
each read and written by a :class:`~..connection.lines.LineTransport`, as stdio is:
every message is encoded, written as a line, read, split and decoded, so that what a
test sees is what a spawned agent's client sees, with no process to start.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
from collections.abc import AsyncGenerator, Callable
from typing import TypeVar

from ..connection.connection import Connection
from ..connection.limits import Limits
from ..connection.lines import LineTransport
from ..connection.transport import Transport

__all__ = ["connected_pair"]

A = TypeVar("A")
C = TypeVar("C")


@contextlib.asynccontextmanager
async def connected_pair(
    attach_agent: Callable[[Transport], tuple[Connection, C]],
    attach_client: Callable[[Transport], tuple[Connection, A]],
    *,
    limits: Limits | None = None,
) -> AsyncGenerator[tuple[A, C], None]:
    """Connect an agent (``attach_agent``: its connection and its sender for the client)
    to a client (``attach_client``: its connection and its sender for the agent) over a
    socket pair; yield (the sender for the agent, the sender for the client). On
    leaving, the client's end is closed first, as a client closes an agent's stdin."""
    limit = 2 * (limits or Limits()).max_message_bytes
    agent_end, client_end = socket.socketpair()
    with agent_end, client_end:
        agent_reader, agent_writer = await asyncio.open_connection(
            sock=agent_end, limit=limit
        )
        client_reader, client_writer = await asyncio.open_connection(
            sock=client_end, limit=limit
        )
        agent_connection, client_sender = attach_agent(
            LineTransport(agent_reader, agent_writer)
        )
        client_connection, agent_sender = attach_client(
            LineTransport(client_reader, client_writer)
        )
        async with agent_connection, client_connection:
            yield agent_sender, client_sender
