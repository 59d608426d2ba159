"""Our runtime's own work per round trip, without pipes: client and agent in one process.

    uv run --group bench python -m bench.in_memory [--in-flight N] [--updates N] [--no-eager]

T3's client (``AgentSender`` over ``Connection``) and agent (``bench.pipe_agent``'s, connected as
``serve.run_agent`` connects it) joined by an in-memory transport that hands each message's bytes
to the other side (no system call, no ``epoll``): ``session/set_mode`` requests (``--updates N``:
T3's ``session/prompt`` requests, each answered after N ``session/update`` notifications to the
client), one at a time or from N concurrent callers. Prints the median microseconds per request
over rounds, of wall time and of this process's CPU time (``time.process_time``, which the
machine's other load moves least). What is left is the connections, dispatcher, senders, codec
and models of both sides and the event loop's turns between them. ``--no-eager`` turns off eager
handler start where the running Python has it (3.12+: ``_runtime.connection.in_flight.EAGER``),
to measure what eager start saves.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import statistics
import time
from typing import Any

from bench.generated import ROOT, bindings
from bench.pipe_agent import quick_agent, quiet_client

ROUNDS = 9
REQUESTS = 3072


class MemoryTransport:
    """One end of an in-memory pipe of whole messages (a ``transport.Transport``)."""

    def __init__(self) -> None:
        self.peer: MemoryTransport | None = None
        self._inbox: collections.deque[bytes] = collections.deque()
        self._waiter: asyncio.Future[None] | None = None
        self._closed = False

    async def receive(self, limit: int) -> bytes | None:
        while not self._inbox:
            if self._closed:
                return None
            self._waiter = asyncio.get_running_loop().create_future()
            await self._waiter
        return self._inbox.popleft()

    def received(self) -> bytes | None:  # as ``LineTransport``'s: a message already read
        return self._inbox.popleft() if self._inbox else None

    async def ready(self) -> None:
        return None

    async def send(self, data: bytes) -> None:
        assert self.peer is not None
        self.peer.deliver(data)

    def can_send_now(self) -> bool:  # as ``LineTransport``'s: a pipe with an empty buffer
        return True

    def send_now(self, data: bytes) -> None:
        assert self.peer is not None
        self.peer.deliver(data)

    def deliver(self, data: bytes) -> None:
        self._inbox.append(data)
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_result(None)

    async def close(self) -> None:
        self._closed = True
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_result(None)


async def measure(in_flight: int, updates: int | None = None) -> tuple[float, float]:
    """The median wall and CPU microseconds per request over ``ROUNDS`` rounds."""
    connection, dispatch, methods, models = (bindings(m) for m in ("connection", "dispatch", "methods", "models"))
    senders = bindings("senders")
    agent_end, client_end = MemoryTransport(), MemoryTransport()
    agent_end.peer, client_end.peer = client_end, agent_end
    # the agent as ``serve.run_agent`` connects it (its ``ClientSender`` checks what it sends against
    # the client's capabilities), the client as T3's
    client_side = dispatch.Dispatcher(quiet_client(), methods.handled_by("client", "both"))
    opened = [
        bindings("serve").attach_agent(quick_agent(), agent_end)[0],
        connection.Connection(client_end, client_side.dispatch),
    ]
    for each in opened:
        each.start()
    agent = senders.AgentSender(opened[1])
    await agent.initialize(models.InitializeRequest(protocol_version=1))
    session = await agent.new_session(models.NewSessionRequest(cwd=str(ROOT), mcp_servers=[]))
    builders = bindings("builders")
    call: Any
    if updates is None:
        call, request = (
            agent.set_session_mode,
            models.SetSessionModeRequest(session_id=session.session_id, mode_id="code"),
        )
    else:
        call, request = (
            agent.prompt,
            builders.prompt_request(session.session_id, [builders.text_content_block(str(updates))]),
        )

    async def caller(count: int) -> None:
        for _ in range(count):
            await call(request)

    per_caller = REQUESTS // in_flight
    samples, cpu = [], []
    for _ in range(ROUNDS + 1):  # the first round warms up
        started, used = time.perf_counter(), time.process_time()
        await asyncio.gather(*(caller(per_caller) for _ in range(in_flight)))
        samples.append((time.perf_counter() - started) / (per_caller * in_flight) * 1e6)
        cpu.append((time.process_time() - used) / (per_caller * in_flight) * 1e6)
    for each in opened:
        await each.close()
    return statistics.median(samples[1:]), statistics.median(cpu[1:])


def main() -> None:
    parser = argparse.ArgumentParser(prog="bench.in_memory", description=__doc__.splitlines()[0])
    parser.add_argument("--in-flight", type=int, default=1, help="concurrent callers (default 1)")
    parser.add_argument(
        "--updates", type=int, help="send session/prompt, answered after N session/update notifications"
    )
    parser.add_argument("--no-eager", action="store_true", help="start handlers as plain tasks on 3.12+ too")
    args = parser.parse_args()
    work = bindings("_runtime.connection.in_flight")
    eager = work.EAGER is not None and not args.no_eager
    if args.no_eager:
        work.EAGER = None
    micros, cpu = asyncio.run(measure(args.in_flight, args.updates))
    print(
        f"{micros:.1f} us per request ({cpu:.1f} us of CPU), {args.in_flight} in flight, "
        f"{'set_mode' if args.updates is None else f'prompts + {args.updates} updates'}, "
        f"eager handler start: {'yes' if eager else 'no'}"
    )


if __name__ == "__main__":
    main()
