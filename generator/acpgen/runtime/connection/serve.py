"""Connecting a handler to its peer in one call: what the generated ``serve`` module's
helpers do, given the schema's tables.

Support code: it knows no method of the protocol. :func:`attach` builds the dispatcher
(with observers that record what the peer advertises in the params of a method, such as
``initialize``'s capabilities), the connection and the typed sender for the peer, and
hands the sender to the handler (``on_connect``); :func:`spawned` starts an agent
process, connects a client to it and stops the process's whole group at the end.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import AsyncGenerator, Callable, Iterable, Mapping, Sequence
from typing import IO, Any, Literal, Protocol, TypeVar

from ..wire.rpc import MethodSpec
from .connection import Connection
from .dispatch import Dispatcher
from .limits import Limits
from .process import spawn, stop
from .trace_writer import Trace, child_environment, traced
from .transport import Transport

__all__ = ["Advertised", "attach", "spawned"]

Advertised = Mapping[str, tuple[str, Callable[[], Any]]]
"""Wire method -> the attribute of its params that holds what the peer advertises, and
the model read as advertised when the peer sent none: ``{"initialize":
("client_capabilities", models.ClientCapabilities)}``."""


class _Sender(Protocol):
    def advertised(self, capabilities: Any) -> None: ...


S = TypeVar("S", bound=_Sender)


def attach(
    handler: Any,
    transport: Transport,
    methods: Iterable[MethodSpec],
    sender: Callable[..., S],
    advertised: Advertised,
    *,
    role: Literal["agent", "client"],
    check_capabilities: bool,
    limits: Limits | None,
    trace: Trace,
) -> tuple[Connection, S]:
    """Connect ``handler`` (of ``role``), which handles ``methods``, to its peer over
    ``transport``: the connection (not started) and the ``sender`` for calls to the
    peer, which ``handler.on_connect`` has received."""
    peer: S  # bound below; the observers run only once messages flow
    observers = {
        wire: _observer(lambda: peer, attribute, default)
        for wire, (attribute, default) in advertised.items()
    }
    dispatcher = Dispatcher(handler, methods, observers=observers)
    connection = Connection(
        transport, dispatcher, limits=limits, trace=traced(trace, role)
    )
    peer = sender(connection, check_capabilities=check_capabilities)
    handler.on_connect(peer)
    return connection, peer


def _observer(
    peer: Callable[[], _Sender], attribute: str, default: Callable[[], Any]
) -> Callable[[Any], None]:
    """Tells the peer's sender what the params' ``attribute`` advertises (``default()``
    when the peer sent none)."""

    def observe(params: Any) -> None:
        value = getattr(params, attribute)
        peer().advertised(value if value is not None else default())

    return observe


@contextlib.asynccontextmanager
async def spawned(
    command: Sequence[str],
    connect: Callable[
        [asyncio.StreamReader, asyncio.StreamWriter], tuple[Connection, S]
    ],
    *,
    cwd: str | os.PathLike[str] | None,
    env: Mapping[str, str] | None,
    stderr: int | IO[Any] | None,
    grace: float,
) -> AsyncGenerator[S, None]:
    """Start the agent ``command`` in a process group of its own, ``connect`` a client
    to its stdout and stdin, yield the client's sender for the agent; on leaving, close
    the agent's stdin and end its group (``process.stop``). The agent gets ``env`` (or
    this process's environment) without the ``ACP_TRACE`` that names this process's
    trace."""
    process, reader, writer = await spawn(
        command, cwd=cwd, env=child_environment(env), stderr=stderr
    )
    try:
        connection, agent = connect(reader, writer)
        async with connection:
            yield agent
    finally:
        await stop(process, grace)
