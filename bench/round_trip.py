"""T3: request round trips over a real pipe between two processes, ours against the official SDK.

This process is the client; the agent is a child process (``bench.pipe_agent``) that reads its
stdin and writes its stdout. Ours: the generated client (``AgentSender`` over ``Connection``)
talking to the generated agent; theirs: the SDK's ``ClientSideConnection`` talking to an agent
run by ``acp.run_agent``. After ``initialize`` and ``session/new``, each round sends
``session/set_mode`` requests (answered at once): ``SEQUENTIAL`` one after another (1 in
flight), and ``CONCURRENT`` from ``IN_FLIGHT`` callers that each wait for their answer before
the next request (64 in flight). Both agents stay up for the whole figure; the four contenders
run alternately on one event loop. For scale, the same rounds over the same pipes with neither
JSON nor models: a line written back by an asyncio echo process (``pipe_agent echo``), the
floor under both runtimes. After the timed rounds, ten more rounds of each contender measure the
CPU time each process spends per request (this one's from ``getrusage``, the agent's from
``/proc``): it shows which process bounds the figure.
"""

from __future__ import annotations

import asyncio
import collections
import os
import resource
import sys
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from bench.figures import Figure
from bench.generated import ROOT, bindings
from bench.timing import alternate

SEQUENTIAL = 300
CONCURRENT = 1536
IN_FLIGHT = 64

Call = Callable[[], Awaitable[object]]


@dataclass(frozen=True, slots=True)
class Peer:
    """A client connected to its agent process: one request, and how to hang up."""

    call: Call
    close: Callable[[], Awaitable[None]]
    pid: int
    """The agent process."""


async def _spawn(side: str, profile: str | None) -> asyncio.subprocess.Process:
    """The agent process; run under cProfile, writing its profile to ``profile``, when given."""
    profiled = ["-m", "cProfile", "-o", profile] if profile else []
    return await asyncio.create_subprocess_exec(
        sys.executable, *profiled, "-m", "bench.pipe_agent", side, cwd=ROOT,
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
    )  # fmt: skip


async def _hang_up(process: asyncio.subprocess.Process) -> None:
    assert process.stdin is not None
    process.stdin.close()
    await process.wait()


async def connect_ours(profile: str | None = None) -> Peer:
    connection, dispatch, methods, models = (bindings(m) for m in ("connection", "dispatch", "methods", "models"))
    interfaces, senders = bindings("interfaces"), bindings("senders")

    base: Any = interfaces.Client

    class QuietClient(base):  # type: ignore[misc]
        async def request_permission(self, params: Any) -> Any:
            raise NotImplementedError

        async def session_update(self, params: Any) -> None:
            return None

    process = await _spawn("ours", profile)
    handler = dispatch.Dispatcher(QuietClient(), methods.handled_by("client", "both")).dispatch
    opened = connection.Connection(connection.LineTransport(process.stdout, process.stdin), handler)
    opened.start()
    agent = senders.AgentSender(opened)
    await agent.initialize(models.InitializeRequest(protocol_version=1))
    session = await agent.new_session(models.NewSessionRequest(cwd=str(ROOT), mcp_servers=[]))
    request = models.SetSessionModeRequest(session_id=session.session_id, mode_id="code")

    async def close() -> None:
        await opened.close()
        await _hang_up(process)

    return Peer(lambda: agent.set_session_mode(request), close, process.pid)


async def connect_theirs(profile: str | None = None) -> Peer:
    import acp

    class QuietClient:
        async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
            return None

    process = await _spawn("theirs", profile)
    conn = acp.connect_to_agent(QuietClient(), process.stdin, process.stdout)  # type: ignore[arg-type]
    await conn.initialize(protocol_version=1)
    session = await conn.new_session(cwd=str(ROOT))

    async def close() -> None:
        await conn.close()
        await _hang_up(process)

    return Peer(lambda: conn.set_session_mode(session_id=session.session_id, mode_id="code"), close, process.pid)


async def connect_echo(profile: str | None = None) -> Peer:
    process = await _spawn("echo", profile)
    assert process.stdin is not None and process.stdout is not None
    stdin, stdout = process.stdin, process.stdout
    waiting: collections.deque[asyncio.Future[bytes]] = collections.deque()
    line = b'{"jsonrpc":"2.0","id":1,"method":"session/set_mode","params":{"sessionId":"s","modeId":"code"}}\n'

    async def read_answers() -> None:
        while answer := await stdout.readline():
            waiting.popleft().set_result(answer)

    reading = asyncio.ensure_future(read_answers())

    async def call() -> bytes:
        waiting.append(asyncio.get_running_loop().create_future())
        answer = waiting[-1]
        stdin.write(line)
        await stdin.drain()
        return await answer

    async def close() -> None:
        await _hang_up(process)
        await reading

    return Peer(call, close, process.pid)


async def one_at_a_time(call: Call) -> None:
    for _ in range(SEQUENTIAL):
        await call()


async def many_at_once(call: Call) -> None:
    async def caller() -> None:
        for _ in range(CONCURRENT // IN_FLIGHT):
            await call()

    await asyncio.gather(*(caller() for _ in range(IN_FLIGHT)))


Burst = Callable[[Call], Awaitable[None]]


def running(loop: asyncio.AbstractEventLoop, burst: Burst, call: Call) -> Callable[[], None]:
    """One round of ``burst`` of ``call``, run to its end on ``loop``."""

    def run() -> None:
        loop.run_until_complete(burst(call))

    return run


def _process_seconds(pid: int) -> float | None:
    """User plus system CPU seconds of a process so far (None where ``/proc`` is not)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _own_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


CPU_ROUNDS = 10
"""Rounds the CPU figures are measured over: ``/proc`` counts in ticks of 10 ms."""


def cpu_per_request(run: Callable[[], None], pid: int, count: int) -> tuple[float, float | None]:
    """Microseconds of CPU per request in this process and in the agent's, over ``CPU_ROUNDS``
    rounds of ``run`` (``count`` requests each)."""
    own, agent = _own_seconds(), _process_seconds(pid)
    for _ in range(CPU_ROUNDS):
        run()
    agent_after = _process_seconds(pid)
    count *= CPU_ROUNDS
    own_used = (_own_seconds() - own) / count * 1e6
    return own_used, (agent_after - agent) / count * 1e6 if agent is not None and agent_after is not None else None


def _cpu_note(cpu: dict[str, tuple[float, float | None]], width: str) -> str:
    def side(who: str) -> str:
        client, agent = cpu[f"{who}-{width}"]
        return f"{who} {client:.0f}/{agent:.0f}" if agent is not None else f"{who} {client:.0f}/?"

    return "CPU us per request, client/agent: " + ", ".join(side(who) for who in ("ours", "theirs", "echo"))


def t3(rounds: int) -> list[Figure]:
    """Requests per second over a pipe, 1 and 64 in flight."""
    loop = asyncio.new_event_loop()
    connect = {"ours": connect_ours, "theirs": connect_theirs, "echo": connect_echo}
    peers = {who: loop.run_until_complete(start()) for who, start in connect.items()}
    try:
        contenders = {
            f"{who}-{width}": running(loop, burst, peer.call)
            for width, burst in (("1", one_at_a_time), ("64", many_at_once))
            for who, peer in peers.items()
        }
        medians = alternate(contenders, rounds)
        counts = {"1": SEQUENTIAL, "64": CONCURRENT}
        cpu = {
            name: cpu_per_request(run, peers[name.split("-")[0]].pid, counts[name.split("-")[1]])
            for name, run in contenders.items()
        }
    finally:
        for peer in peers.values():
            loop.run_until_complete(peer.close())
        loop.close()
    figures = []
    for width, count in (("1", SEQUENTIAL), ("64", CONCURRENT)):
        ours, theirs = count / medians[f"ours-{width}"], count / medians[f"theirs-{width}"]
        floor = medians[f"echo-{width}"] / count * 1e6
        ceiling = medians[f"theirs-{width}"] / medians[f"echo-{width}"]
        note = (f"{1e6 / ours:.0f} vs {1e6 / theirs:.0f} us per request, {count} per round; "
                f"floor (asyncio line echo, no JSON): {floor:.0f} us, {ceiling:.2f}x the SDK's rate; "
                f"{_cpu_note(cpu, width)}")  # fmt: skip
        figures.append(Figure(f"T3 round trips over a pipe, 2 processes, {width} in flight", ours, theirs, "req/s",
                              ">= 2.0x", ours / theirs >= 2.0, note))  # fmt: skip
        echo = count / medians[f"echo-{width}"]
        note = f"the echo: {floor:.0f} us per round trip; the SDK: {theirs / echo:.2f}x of its rate"
        figures.append(Figure(f"T3 {width} in flight: ours against the echo floor", ours, echo, "req/s", "-", True,
                              note))  # fmt: skip
    return figures
