"""T3: request round trips over a real pipe between two processes, ours against the official SDK,
on stock asyncio and on uvloop.

This process is the client; the agent is a child process (``bench.pipe_agent``) that reads its
stdin and writes its stdout. Ours: the generated client (``AgentSender`` over ``Connection``)
talking to the generated agent (``serve.run_agent``); theirs: the SDK's ``ClientSideConnection``
talking to an agent run by ``acp.run_agent``. After ``initialize`` and ``session/new``, each
round sends ``session/prompt`` requests, answered at once (*prompts*) or after five
``session/update`` notifications to the client (*prompts + 5 updates*): ``SEQUENTIAL`` one
after another (1 in flight), and ``CONCURRENT`` from ``IN_FLIGHT`` callers that each wait for
their answer before the next request (64 in flight). Every contender runs on stock asyncio
(this process's loop and the agent's), and, when uvloop is installed (the ``bench`` group), on
uvloop in both processes: one event loop of each kind in this process, run in turn. All agents
stay up for the whole figure and the contenders run alternately. For scale, the same prompt
rounds over the same pipes with neither JSON nor models: a line written back by an asyncio echo
process (``pipe_agent echo``), the floor under both runtimes; and the typed floor (``pipe_agent
floor`` and ``connect_floor``: pydantic-core, a task per request and a future per call, nothing
else), on both loops, whose ratio each prompts figure reports as its floor. The CPU time each
process spends per request is summed over the same timed rounds (this one's from ``getrusage``,
the agent's from ``/proc``, read before and after each round): it shows which process bounds
the figure.
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
from bench.pipe_agent import quiet_client
from bench.timing import alternate

SEQUENTIAL = 300
CONCURRENT = 1536
IN_FLIGHT = 64
WORKLOADS = {"prompt": "prompts", "prompt+5": "prompts + 5 updates"}
"""The request each round sends: its name, and how the figure calls it."""
UPDATES = {"prompt": "0", "prompt+5": "5"}
"""The text of the prompt: how many ``session/update`` notifications come before its answer."""
TARGETS = {"1": 1.5, "64": 1.8}
"""Issue 33: ours on stock asyncio against the SDK's, in requests per second."""
UVLOOP_TARGET = 2.5
"""Issue 33: ours on uvloop against the SDK on stock asyncio, 64 in flight."""

Call = Callable[[], Awaitable[object]]


@dataclass(frozen=True, slots=True)
class Peer:
    """A client connected to its agent process: one request per workload, and how to hang up."""

    calls: dict[str, Call]
    close: Callable[[], Awaitable[None]]
    pid: int
    """The agent process."""
    set_mode: Call | None = None
    """Ours only: a ``session/set_mode`` request (T7's, as T5 and T6 send)."""


def uvloop_installed() -> bool:
    try:
        import uvloop  # noqa: F401
    except ImportError:
        return False
    return True


@dataclass(frozen=True, slots=True)
class Child:
    """An agent process, with the streams of its stdout and stdin."""

    process: asyncio.subprocess.Process
    stdout: asyncio.StreamReader
    stdin: asyncio.StreamWriter


async def _spawn(side: str, profile: str | None, loop: str = "asyncio") -> Child:
    """The agent process; run under cProfile, writing its profile to ``profile``, when given.

    The SDK's agent is started as the SDK's ``spawn_agent_process`` starts one (asyncio's
    subprocess pipes: Unix sockets on uvloop); the others as our ``spawn_agent`` does (pipes on
    either loop)."""
    profiled = ["-m", "cProfile", "-o", profile] if profile else []
    command = [sys.executable, *profiled, "-m", "bench.pipe_agent", side, loop]
    if side == "theirs":
        process = await asyncio.create_subprocess_exec(
            *command, cwd=ROOT, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE
        )
        assert process.stdout is not None and process.stdin is not None
        return Child(process, process.stdout, process.stdin)
    process, stdout, stdin = await bindings("_runtime.connection.process").spawn(command, cwd=ROOT)
    return Child(process, stdout, stdin)


async def _hang_up(child: Child) -> None:
    child.stdin.close()
    await child.process.wait()


async def connect_ours(profile: str | None = None, loop: str = "asyncio", **options: Any) -> Peer:
    """Our client and agent; ``options`` go to the client's ``Connection`` (``telemetry``), and
    ``side="ours-otel"`` starts the agent with OpenTelemetry set up (``bench.otel_cost``)."""
    connection, dispatch, methods, models = (bindings(m) for m in ("connection", "dispatch", "methods", "models"))
    senders, builders = bindings("senders"), bindings("builders")

    child = await _spawn(options.pop("side", "ours"), profile, loop)
    handler = dispatch.Dispatcher(quiet_client(), methods.handled_by("client", "both")).dispatch
    opened = connection.Connection(connection.LineTransport(child.stdout, child.stdin), handler, **options)
    opened.start()
    agent = senders.AgentSender(opened)
    await agent.initialize(models.InitializeRequest(protocol_version=1))
    session = await agent.new_session(models.NewSessionRequest(cwd=str(ROOT), mcp_servers=[]))

    def prompt(updates: str) -> Call:
        request = builders.prompt_request(session.session_id, [builders.text_content_block(updates)])
        return lambda: agent.prompt(request)

    async def close() -> None:
        await opened.close()
        await _hang_up(child)

    mode = models.SetSessionModeRequest(session_id=session.session_id, mode_id="code")
    calls = {name: prompt(text) for name, text in UPDATES.items()}
    return Peer(calls, close, child.process.pid, lambda: agent.set_session_mode(mode))


async def connect_theirs(profile: str | None = None, loop: str = "asyncio") -> Peer:
    import acp
    from acp.helpers import text_block

    class QuietClient:
        async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
            return None

    child = await _spawn("theirs", profile, loop)
    conn = acp.connect_to_agent(QuietClient(), child.stdin, child.stdout)
    await conn.initialize(protocol_version=1)
    session = await conn.new_session(cwd=str(ROOT))

    def prompt(updates: str) -> Call:
        blocks = [text_block(updates)]
        return lambda: conn.prompt(session_id=session.session_id, prompt=blocks)  # type: ignore[arg-type]

    async def close() -> None:
        await conn.close()
        await _hang_up(child)

    return Peer({name: prompt(text) for name, text in UPDATES.items()}, close, child.process.pid)


async def connect_echo(profile: str | None = None, loop: str = "asyncio") -> Peer:
    child = await _spawn("echo", profile, loop)
    stdin, stdout = child.stdin, child.stdout
    waiting: collections.deque[asyncio.Future[bytes]] = collections.deque()
    line = (b'{"jsonrpc":"2.0","id":1,"method":"session/prompt","params":{"sessionId":"s","prompt":'
            b'[{"type":"text","text":"0"}]}}\n')  # fmt: skip

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
        await _hang_up(child)
        await reading

    return Peer({"prompt": call}, close, child.process.pid)


async def connect_floor(profile: str | None = None, loop: str = "asyncio") -> Peer:
    """The client half of the typed floor (``pipe_agent floor``): each call serialises its
    params with our model, writes the line, waits on a future of its own, and validates the
    result with our model; one task reads the answers with pydantic-core."""
    from pydantic_core import from_json

    models, built, builders = bindings("models"), bindings("_runtime.connection.adapters").built, bindings("builders")
    child = await _spawn("floor", profile, loop)
    stdin, stdout = child.stdin, child.stdout
    serializer, validator = built(models.PromptRequest).serializer, built(models.PromptResponse).validator
    request = builders.prompt_request("s", [builders.text_content_block("0")])
    pending: dict[int, asyncio.Future[Any]] = {}
    ids = iter(range(1, 1 << 62))

    async def read_answers() -> None:
        while line := await stdout.readline():
            message = from_json(line, allow_inf_nan=False)
            pending.pop(message["id"]).set_result(message["result"])

    reading = asyncio.ensure_future(read_answers())

    async def call() -> Any:
        number = next(ids)
        answer = pending[number] = asyncio.get_running_loop().create_future()
        params = serializer.to_json(request, by_alias=True, exclude_unset=True)
        stdin.write(b'{"jsonrpc":"2.0","id":%d,"method":"session/prompt","params":%s}\n' % (number, params))
        await stdin.drain()
        return validator.validate_python(await answer)

    async def close() -> None:
        await _hang_up(child)
        await reading

    return Peer({"prompt": call}, close, child.process.pid)


async def one_at_a_time(call: Call) -> None:
    for _ in range(SEQUENTIAL):
        await call()


async def many_at_once(call: Call) -> None:
    async def caller() -> None:
        for _ in range(CONCURRENT // IN_FLIGHT):
            await call()

    await asyncio.gather(*(caller() for _ in range(IN_FLIGHT)))


Burst = Callable[[Call], Awaitable[None]]
BURSTS: dict[str, tuple[Burst, int]] = {"1": (one_at_a_time, SEQUENTIAL), "64": (many_at_once, CONCURRENT)}


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


class Metered:
    """A contender's round that also sums the CPU time this process and the agent's spend in it,
    over every round but the first (``alternate``'s warm-up): the CPU of the timed rounds
    themselves (``/proc`` counts in ticks of 10 ms, so the sum over all of them is what tells)."""

    def __init__(self, run: Callable[[], None], pid: int) -> None:
        self.run, self.pid = run, pid
        self.rounds = -1
        """Rounds counted (the warm-up is not)."""
        self.own = 0.0
        self.agent: float | None = 0.0

    def __call__(self) -> None:
        self.rounds += 1
        if not self.rounds:
            self.run()
            return
        own, agent = _own_seconds(), _process_seconds(self.pid)
        self.run()
        agent_after = _process_seconds(self.pid)
        self.own += _own_seconds() - own
        if agent is None or agent_after is None or self.agent is None:
            self.agent = None
        else:
            self.agent += agent_after - agent

    def per_request(self, count: int) -> tuple[float, float | None]:
        """Microseconds of CPU per request, this process's and the agent's (``count`` requests
        a round)."""
        requests = max(self.rounds, 1) * count
        agent = self.agent / requests * 1e6 if self.agent is not None else None
        return self.own / requests * 1e6, agent


def _cpu(cpu: dict[str, tuple[float, float | None]], name: str) -> str:
    client, agent = cpu[name]
    return f"{client:.0f}/{agent:.0f}" if agent is not None else f"{client:.0f}/?"


def t3(rounds: int) -> list[Figure]:
    """Requests per second over a pipe, 1 and 64 in flight, prompts with and without updates, on
    stock asyncio and (when installed) on uvloop."""
    loops = {"asyncio": asyncio.new_event_loop()}
    if uvloop_installed():
        import uvloop

        loops["uvloop"] = uvloop.new_event_loop()
    connect = {"ours": connect_ours, "theirs": connect_theirs, "echo": connect_echo, "floor": connect_floor}
    peers = {
        f"{who}@{name}": loop.run_until_complete(start(None, name))
        for name, loop in loops.items()
        for who, start in connect.items()
        if who != "echo" or name == "asyncio"
    }
    contenders: dict[str, Metered] = {}
    for key, peer in peers.items():
        for work, call in peer.calls.items():
            for width, (burst, _) in BURSTS.items():
                contenders[f"{key}/{work}/{width}"] = Metered(running(loops[key.split("@")[1]], burst, call), peer.pid)
    try:
        medians = alternate(contenders, rounds)
        cpu = {name: run.per_request(BURSTS[name.rsplit("/", 1)[1]][1]) for name, run in contenders.items()}
    finally:
        for key, peer in peers.items():
            loops[key.split("@")[1]].run_until_complete(peer.close())
        for loop in loops.values():
            loop.close()
    return _figures(medians, cpu, "uvloop" in loops)


def _figures(medians: dict[str, float], cpu: dict[str, tuple[float, float | None]], uvloop: bool) -> list[Figure]:
    figures = []
    for work, label in WORKLOADS.items():
        for width, (_, count) in BURSTS.items():
            rate = {
                key.split("/")[0]: count / value for key, value in medians.items() if key.endswith(f"/{work}/{width}")
            }
            used = {key.split("/")[0]: _cpu(cpu, key) for key in medians if key.endswith(f"/{work}/{width}")}
            figures += _pair(f"T3 pipe, {label}, {width} in flight", rate, used, width, count, uvloop)
    if not uvloop:
        note = "not measured: uvloop is not installed (the bench group installs it)"
        figures.append(Figure("T3 pipe on uvloop", 0.0, 1.0, "req/s", f">= {UVLOOP_TARGET}x", False, note))
    return figures


def _pair(
    title: str, rate: dict[str, float], used: dict[str, str], width: str, count: int, uvloop: bool
) -> list[Figure]:
    """The figures of one workload and width: ours against the SDK on stock asyncio, and ours on
    uvloop against the SDK on stock asyncio (with the SDK on uvloop in the note)."""
    ours, theirs = rate["ours@asyncio"], rate["theirs@asyncio"]
    note = (
        f"{1e6 / ours:.0f} vs {1e6 / theirs:.0f} us per request, {count} per round; CPU us per request, "
        f"client/agent: ours {used['ours@asyncio']}, theirs {used['theirs@asyncio']}"
    )
    if "echo@asyncio" in rate:
        echo = rate["echo@asyncio"]
        note += (
            f"; floor (asyncio line echo, no JSON): {1e6 / echo:.0f} us, {echo / theirs:.2f}x the SDK's rate, "
            f"ours {ours / echo:.2f}x of it, echo CPU {used['echo@asyncio']}"
        )
    if "floor@asyncio" in rate:
        note += _typed_floor(rate, used, "asyncio", theirs)
    target = TARGETS[width]
    floor = rate["floor@asyncio"] / theirs if "floor@asyncio" in rate else None
    figures = [
        Figure(f"{title}, stock asyncio", ours, theirs, "req/s", f">= {target}x", ours / theirs >= target, note, floor)
    ]
    if uvloop:
        fast, theirs_fast = rate["ours@uvloop"], rate["theirs@uvloop"]
        note = (
            f"{1e6 / fast:.0f} vs {1e6 / theirs:.0f} us per request; against the SDK on uvloop too: "
            f"{fast / theirs_fast:.2f}x ({1e6 / theirs_fast:.0f} us); ours on uvloop {fast / ours:.2f}x of ours "
            f"on asyncio; CPU us per request, client/agent: ours {used['ours@uvloop']}, theirs {used['theirs@uvloop']}"
        )
        if "floor@uvloop" in rate:
            note += _typed_floor(rate, used, "uvloop", theirs)
        needed = width == "64"
        target_text = f">= {UVLOOP_TARGET}x" if needed else "-"
        met = fast / theirs >= UVLOOP_TARGET if needed else True
        floor = rate["floor@uvloop"] / theirs if "floor@uvloop" in rate else None
        figures.append(
            Figure(f"{title}, ours on uvloop vs SDK on asyncio", fast, theirs, "req/s", target_text, met, note, floor)
        )
    return figures


def _typed_floor(rate: dict[str, float], used: dict[str, str], loop: str, theirs: float) -> str:
    """The note of the typed floor (``pipe_agent floor``) on ``loop``: its time per request, and
    its rate against the SDK's on stock asyncio, the most any runtime of its kind could reach."""
    floor = rate[f"floor@{loop}"]
    return (
        f"; typed floor on {loop} (pydantic-core, a task per request, a future per call, nothing else): "
        f"{1e6 / floor:.0f} us, {floor / theirs:.2f}x the SDK's rate on asyncio, CPU {used[f'floor@{loop}']}"
    )
