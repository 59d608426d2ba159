"""An agent served on this process's stdin and stdout: plain ACP, or resumable.

Support code: it knows no method of the protocol (the routing and coalescing rules come
from the schema). Without ``resume``, the agent's connection reads stdin until the
client closes it. With it, a :class:`~.host.Host` carries the agent's connection over
the pipes, its only client side: what it adds there is numbered events and
``_acpgen/resume_session`` on the same connection (a relay, or a client that rebuilt
its view), ``docs/resume.md``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from ..connection.limits import Limits
from ..connection.lines import LineTransport, stdio_streams

if TYPE_CHECKING:  # a plain agent's start imports nothing of resuming
    from ..connection.connection import Connection
    from ..connection.transport import Transport
    from ..wire.messages import Routing
    from .event_log import Coalescing, ResumeLimits

__all__ = ["run_on_stdio"]


async def run_on_stdio(
    connect: Callable[[Transport], Connection],
    *,
    limits: Limits | None = None,
    resume: ResumeLimits | None = None,
    coalescing: Coalescing | None = None,
    routing: Routing | None = None,
) -> None:
    """Serve the connection ``connect`` makes over this process's stdin and stdout
    until the client closes stdin; resumable with ``resume`` (and the schema's
    ``routing``)."""
    reader, writer = await stdio_streams()
    transport = LineTransport(reader, writer)
    if resume is None or routing is None:
        await connect(transport).run()
        return
    from .host import Host  # a resumable agent's only: not imported by a plain one

    limit = (limits or Limits()).max_message_bytes
    host = Host(resume, coalescing, routing, max_message_bytes=limit)
    host.start(connect)
    await host.serve(transport, left_on_purpose=lambda: True)
    if host.task is not None:
        await host.task
