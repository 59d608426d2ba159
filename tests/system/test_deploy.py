"""The deployment past one process (issue 32, items 2 and 3): ``deploy/launch.py run`` starts
HAProxy (Debian's package, ``make deploy-deps`` installs it as root) in front of 2 uvicorn
processes, one per port on loopback, each serving the resumable echo agent of
``examples/remote_agent.py`` (``tests/support/peers/deploy_worker.py``); the clients are
``connect_agent`` as users call it. Without HAProxy those tests are skipped with the line
that says how to enable it (``tests/support/find_haproxy.py``). The last test, which found a hang under
load, plays the balancer's refusal itself and needs no HAProxy.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import random
import signal
import subprocess
import time
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from acp_bindings.errors import RequestError
from acp_bindings.remote import Reconnect, asgi_app, connect_agent

from deploy.launch import server_name
from tests.support.deploy import (
    EchoRecorder,
    Stack,
    echo_agent,
    echoed,
    initialize_request,
    is_recover_error,
    new_session_request,
    percentile,
    prompt_request,
    raise_file_limit,
    rss,
    stack,
    words,
)
from tests.support.faults import KINDS, Cut, Proxy
from tests.support.remote import serving
from tests.support.sdk import ROOT

pytestmark = pytest.mark.slow

PROFILES = ("ws", "http")
LOAD_CONNECTIONS = int(os.environ.get("DEPLOY_CONNECTIONS", "1000"))
"""ACP connections open at once in the load test, split evenly between the profiles."""
LOAD_WORDS = 20
"""Words of each load prompt: the echo agent streams one chunk per word."""
LOAD_ACTIVE = int(os.environ.get("DEPLOY_ACTIVE", "100"))
"""Connections setting up (connect, ``initialize``, ``session/new``) or playing their turn at
once; the others stay open, idle. See the load test's docstring."""
STEP_TIMEOUT = 120.0
"""Seconds one call may take before the test says it hung."""


# -- load


@dataclass
class Turn:
    profile: str
    tag: str
    chunks: list[str] = field(default_factory=list)
    stop: str | None = None
    seconds: float = 0.0
    error: BaseException | None = None


async def _load(url: str, count: int, workers: list[tuple[int, int]], stack_: Stack) -> dict[str, Any]:
    """``count`` connections open at once (alternating profiles), each a full turn; RSS of each
    worker before the connections and once they are all open with a session."""
    before = {port: rss(pid) for port, pid in workers}
    active = asyncio.Semaphore(LOAD_ACTIVE)
    opened = 0
    all_open = asyncio.Event()
    measured = asyncio.Event()
    turned = 0
    all_turned = asyncio.Event()
    turns: list[Turn] = []

    async def one(n: int) -> None:
        nonlocal opened, turned
        turn = Turn(PROFILES[n % 2], f"c{n}-")
        turns.append(turn)
        client = EchoRecorder()
        try:
            await active.acquire()
            async with connect_agent(url, client, transport=turn.profile) as agent:  # type: ignore[arg-type]
                await asyncio.wait_for(agent.initialize(initialize_request()), STEP_TIMEOUT)
                session = (await asyncio.wait_for(agent.new_session(new_session_request()), STEP_TIMEOUT)).session_id
                active.release()
                opened += 1
                if opened == count:
                    all_open.set()
                await measured.wait()
                async with active:
                    start = time.monotonic()
                    prompt = agent.prompt(prompt_request(session, words(LOAD_WORDS, turn.tag)))
                    result = await asyncio.wait_for(prompt, STEP_TIMEOUT)
                    turn.seconds = time.monotonic() - start
                turn.stop = result.stop_reason
                turn.chunks = list(client.chunks)
                turned += 1
                if turned == count:
                    all_turned.set()
                await all_turned.wait()  # every connection stays open until every turn is done
        except Exception as error:  # noqa: BLE001 - reported below, per connection
            turn.error = error
            all_open.set()
            all_turned.set()

    started = time.monotonic()
    tasks = [asyncio.ensure_future(one(n)) for n in range(count)]
    await all_open.wait()
    open_seconds = time.monotonic() - started
    held = {port: stack_.worker(port)["connections"] for port, _ in workers}
    after = {port: rss(pid) for port, pid in workers}
    measured.set()
    await asyncio.gather(*tasks)
    return {
        "turns": turns,
        "held": held,
        "before": before,
        "after": after,
        "open_seconds": open_seconds,
        "total_seconds": time.monotonic() - started,
    }


def test_a_thousand_connections_over_both_profiles_lose_and_reorder_nothing(
    haproxy: str, tmp_path: Path, record_property: Callable[[str, Any], None]
) -> None:
    """``DEPLOY_CONNECTIONS`` (default 1000) ACP connections open at once through HAProxy, half
    over WebSocket, half over Streamable HTTP, spread over 2 workers; each plays a full turn
    of 20 chunks, all at once: every chunk arrives once and in order, every turn ends
    ``end_turn``, and both workers served connections. Prints the figures.

    All the connections are open at the same time and stay open until every turn is done, but at
    most ``DEPLOY_ACTIVE`` (default 100) set up or play their turn at a time: this one process
    plays every client, and with all 1,000 turns at once on 2 shared cores it fell more than 10 s
    behind its own sockets, so HAProxy answered 408 (``timeout http-request``, the slow-loris
    bound) to requests it had begun to send. That is the client's machine, not the deployment;
    ``DEPLOY_ACTIVE=1000`` shows it. 1,000 connections over both profiles is the issue's number;
    2,000 take twice as long (``DEPLOY_CONNECTIONS=2000``): about 40 s alone, 100 s on a loaded
    machine, for 1,000."""
    count = LOAD_CONNECTIONS
    # this process holds about 4 descriptors per connection (HTTP: POSTs and two streams),
    # HAProxy 2 per TCP connection; the workers inherit the limit through the launcher
    raise_file_limit(16 * count + 1024)
    with stack(tmp_path, haproxy, maxconn=4 * count + 1024) as running:
        workers = [(w.port, w.pid) for w in running.workers()]
        figures = asyncio.run(_load(running.url, count, workers, running))
        served = {port: running.served(port) for port, _ in workers}
    turns: list[Turn] = figures["turns"]
    failed = [t for t in turns if t.error is not None]
    assert not failed, (
        f"{len(failed)} of {count} connections failed ({sum(t.profile == 'http' for t in failed)} over HTTP), "
        f"first: {failed[0].error!r} from {failed[0].error.__context__!r}"
    )
    wrong = [t for t in turns if t.stop != "end_turn" or t.chunks != echoed(LOAD_WORDS, t.tag)]
    assert not wrong, f"{len(wrong)} turns lost, reordered or doubled chunks, first: {wrong[0]}"
    held = figures["held"]
    assert sum(held.values()) == count, f"the workers hold {held}, not {count} connections"
    assert all(held.values()), f"a worker got no connection: {held}"
    lines = [
        f"{count} ACP connections at once through HAProxy ({count - count // 2} WebSocket, "
        f"{count // 2} Streamable HTTP), "
        f"opened in {figures['open_seconds']:.1f} s, all turns done {figures['total_seconds']:.1f} s after the start",
    ]
    for profile in PROFILES:
        seconds = [t.seconds for t in turns if t.profile == profile]
        lines.append(
            f"  {profile:4} turn time ({LOAD_WORDS} chunks): p50 {percentile(seconds, 0.5) * 1000:.0f} ms, "
            f"p99 {percentile(seconds, 0.99) * 1000:.0f} ms"
        )
    for port, _ in workers:
        grown = figures["after"][port] - figures["before"][port]
        per = grown / held[port]
        lines.append(
            f"  {server_name(port)}: {held[port]} connections, RSS {figures['before'][port] / 2**20:.1f} -> "
            f"{figures['after'][port] / 2**20:.1f} MiB, {per / 1024:.1f} KiB per connection; "
            f"HAProxy sent it {served[port]} TCP connections"
        )
        record_property(f"{server_name(port)}_bytes_per_connection", round(per))
    print("\n" + "\n".join(lines))


# -- the workers' life: everything on one worker first


FAST = Reconnect(initial_delay=0.02, max_delay=0.2, give_up_after=10.0, attempt_timeout=3.0)
"""Reconnection on loopback: attempts take milliseconds."""


@dataclass
class Resumable:
    """One client connected through the stack (and maybe a fault proxy of its own), its session."""

    profile: str
    client: EchoRecorder
    agent: Any
    session: str
    exit: contextlib.AsyncExitStack
    proxy: Proxy | None = None
    stop: str | None = None
    error: BaseException | None = None
    seconds: float = 0.0
    started: float = 0.0


async def _connect(
    url: str,
    profile: str,
    *,
    reconnect: Reconnect | None = FAST,
    through_proxy: bool = False,
    path: str = "",
    hold: asyncio.Event | None = None,
) -> Resumable:
    exit = contextlib.AsyncExitStack()
    proxy = None
    if through_proxy:
        proxy = await exit.enter_async_context(Proxy(Proxy.address(url)))
        url = proxy.url()
    url += path
    client = EchoRecorder(hold)
    agent = await exit.enter_async_context(connect_agent(url, client, transport=profile, reconnect=reconnect))  # type: ignore[arg-type]
    await asyncio.wait_for(agent.initialize(initialize_request()), STEP_TIMEOUT)
    session = (await asyncio.wait_for(agent.new_session(new_session_request()), STEP_TIMEOUT)).session_id
    return Resumable(profile, client, agent, session, exit, proxy)


async def _on_one_worker(
    running: Stack, target: int, other: int, profiles: list[str], **options: Any
) -> list[Resumable]:
    """Connections all on the worker ``target``: ``other`` is drained while they open (HAProxy sends
    it no new connection), then put back into service."""
    running.set_state(other, "drain")
    try:
        return list(await asyncio.gather(*(_connect(running.url, p, **options) for p in profiles)))
    finally:
        running.set_state(other, "ready")


async def _turn(conn: Resumable, text: str, timeout: float = STEP_TIMEOUT) -> None:
    start = conn.started = time.monotonic()
    try:
        result = await asyncio.wait_for(conn.agent.prompt(prompt_request(conn.session, text)), timeout)
        conn.stop = result.stop_reason
    except (RequestError, ConnectionError, TimeoutError) as error:
        conn.error = error
    conn.seconds = time.monotonic() - start


async def _close_all(conns: list[Resumable]) -> None:
    for conn in conns:
        with contextlib.suppress(Exception):
            await asyncio.wait_for(conn.exit.aclose(), 15)


# -- cut connections resumed through the balancer

CUT_TRIALS = 10
"""Connections per case, each through a fault proxy of its own, cut once in its turn."""
CUT_WORDS = 300


@pytest.mark.parametrize(
    ("profile", "outage"),
    [
        pytest.param("http", 0.0, id="http-stream-reopened"),
        pytest.param("http", 1.0, id="http-reattached"),
        pytest.param("ws", 0.0, id="ws-reattached"),
    ],
)
def test_a_cut_connection_resumes_on_its_worker_through_the_balancer(
    haproxy: str, tmp_path: Path, profile: str, outage: float
) -> None:
    """Each client reaches HAProxy through a TCP proxy of its own (tests/support/faults.py), which cuts its
    connections once in the middle of a 300-chunk turn (a random kind, after a random number of
    bytes); ``Reconnect`` reconnects through the balancer and resumes: every chunk arrives once, in
    order, and the turn ends ``end_turn``.

    The reconnection must reach the worker that holds the resumable agent, the only one that knows
    its token. To make that decisive rather than a coin toss, every connection is opened on worker
    A, then A is put in DRAIN and B back into service, as in a rolling restart: HAProxy sends every
    *new* connection to B, and only affinity (the cookie, or the stick table's
    ``Acp-Connection-Id``) brings a request back to A. B must receive no TCP connection at all.

    - ``http-stream-reopened``: the SSE streams are reopened at once with ``Last-Event-ID`` and the
      connection's id, on the same HTTP client (it kept the cookie): passes today.
    - ``http-reattached``: the proxy refuses connections for 1 s, so the reopening fails and the
      client reattaches with a new ``initialize`` (a new HTTP client): no connection id, only the
      cookie the client keeps across its connections brings it back to A (before that jar: B, -32060).
    - ``ws-reattached``: every WebSocket reconnection is a new upgrade, carrying the cookie HAProxy
      set on the first upgrade's 101: the same.
    """
    rng = random.Random(32_000 + len(profile) + int(outage * 10))
    with stack(tmp_path, haproxy) as running:
        (a, b) = running.ports

        async def main() -> tuple[list[Resumable], int]:
            conns = await _on_one_worker(running, a, b, [profile] * CUT_TRIALS, through_proxy=True)
            running.set_state(a, "drain")
            served_b = running.served(b)
            for conn in conns:
                assert conn.proxy is not None
                kind = rng.choice(KINDS)
                conn.proxy.plan([Cut(rng.randrange(2_000, 30_000), kind, round(rng.uniform(0, 0.2), 3), outage)])
            await asyncio.gather(*(_turn(c, words(CUT_WORDS, f"t{n}-")) for n, c in enumerate(conns)))
            served = running.served(b) - served_b
            await _close_all(conns)
            return conns, served

        conns, served_b = asyncio.run(main())
    not_cut = [n for n, c in enumerate(conns) if c.proxy is None or not c.proxy.fired]
    assert not not_cut, f"the proxy did not cut connections {not_cut}: the cut points must fall inside the turn"
    failed = [(n, c.error) for n, c in enumerate(conns) if c.error is not None or c.stop != "end_turn"]
    assert not failed, (
        f"{len(failed)} of {len(conns)} cut {profile} connections did not resume; B received {served_b} TCP "
        f"connections (the token is known only on A); first: {failed[0]}"
    )
    wrong = [n for n, c in enumerate(conns) if c.client.chunks != echoed(CUT_WORDS, f"t{n}-")]
    assert not wrong, f"chunks lost, doubled or reordered in connections {wrong}"
    assert served_b == 0, f"{served_b} TCP connections reached B, not the worker holding the agent"


# -- a worker that dies, a worker that drains

LONG_WORDS = 30_000
"""A turn that runs for seconds: the echo agent streams 30,000 chunks."""
DEAD_TRIALS = 4
"""Connections per profile on the worker that is killed, or drained."""


def test_a_killed_worker_s_clients_get_the_documented_error_and_a_new_connection_works_at_once(
    haproxy: str, tmp_path: Path
) -> None:
    """Resumable connections of both profiles on worker A, each in a long turn (30,000 chunks, for
    seconds: A gets SIGKILL once every WebSocket client has its first chunk; the echo agent over
    Streamable HTTP writes its turn's first few thousand chunks before the first reaches the wire,
    so those turns are running too). Every interrupted ``prompt()`` raises -32060
    (``recover: session/load``: the agent died with its worker and no other worker knows the token)
    within a bounded time, having delivered a prefix of the turn's chunks, in order. A new
    connection opened right after the kill plays a whole turn (on B). Prints how long each took,
    and when HAProxy marked A down."""
    # the launcher starts a worker that died again after 1 s by default: here only after HAProxy saw it down
    with stack(tmp_path, haproxy, restart_delay=15) as running:
        (a, b) = running.ports
        victim = next(w.pid for w in running.workers() if w.port == a)

        async def main() -> dict[str, Any]:
            conns = await _on_one_worker(running, a, b, [*PROFILES] * DEAD_TRIALS)
            turns = [asyncio.ensure_future(_turn(c, words(LONG_WORDS, f"k{n}-"), 60)) for n, c in enumerate(conns)]
            firsts = [asyncio.ensure_future(c.client.first.wait()) for c in conns]
            await asyncio.wait(firsts, timeout=STEP_TIMEOUT, return_when=asyncio.FIRST_COMPLETED)
            killed = time.monotonic()
            os.kill(victim, signal.SIGKILL)
            fresh = await _connect(running.url, "http", reconnect=None)
            await _turn(fresh, words(20, "fresh-"))
            fresh_seconds = time.monotonic() - killed
            fresh_ws = await _connect(running.url, "ws", reconnect=None)
            await _turn(fresh_ws, words(20, "fresh-"))
            down = await asyncio.to_thread(running.wait_status, a, "DOWN")
            await asyncio.gather(*turns)
            for conn in conns:
                conn.seconds = conn.seconds - (killed - conn.started)
            await _close_all([*conns, fresh, fresh_ws])
            return {"conns": conns, "fresh": [fresh, fresh_ws], "fresh_seconds": fresh_seconds, "down": down}

        figures = asyncio.run(main())
    conns: list[Resumable] = figures["conns"]
    lines = [
        f"SIGKILL of a worker holding {len(conns)} connections in a turn: a new connection played a whole turn "
        f"{figures['fresh_seconds'] * 1000:.0f} ms after the kill; HAProxy marked it DOWN after {figures['down']:.1f} s"
    ]
    for profile in PROFILES:
        mine = [c for c in conns if c.profile == profile]
        lines.append(
            f"  {profile:4}: -32060 reached {sum(is_recover_error(c.error) for c in mine)} of {len(mine)} clients "
            f"whose turn was interrupted, p50 {percentile([c.seconds for c in mine], 0.5):.2f} s, "
            f"max {max(c.seconds for c in mine):.2f} s after the kill; outcomes: "
            f"{sorted({(c.stop or repr(c.error)[:90]) for c in mine})}"
        )
    print("\n" + "\n".join(lines))
    for fresh in figures["fresh"]:
        assert fresh.stop == "end_turn", f"a new {fresh.profile} connection after the kill: {fresh.error!r}"
        assert fresh.client.chunks == echoed(20, "fresh-")
    for n, conn in enumerate(conns):
        assert is_recover_error(conn.error), (
            f"{conn.profile} connection {n}: {conn.stop!r} / {conn.error!r}, not -32060"
        )
        chunks = conn.client.chunks
        assert chunks == echoed(LONG_WORDS, f"k{n}-")[: len(chunks)], f"{conn.profile} connection {n}: not a prefix"


def test_a_killed_worker_s_idle_clients_get_the_documented_error_at_their_next_call(
    haproxy: str, tmp_path: Path
) -> None:
    """Resumable clients of both profiles idle on worker A (a session, no turn) when A gets SIGKILL:
    their next ``prompt()``, 2 s later, must raise -32060 with ``recover: session/load`` (the agent
    and its sessions are gone), as a call waiting at the kill does. (Before: the reconnection failed
    in the background and the next call got ``ConnectionError('the connection is closed')``,
    which does not tell the user to load the session again.)"""
    with stack(tmp_path, haproxy, restart_delay=15) as running:
        (a, b) = running.ports
        victim = next(w.pid for w in running.workers() if w.port == a)

        async def main() -> list[Resumable]:
            conns = await _on_one_worker(running, a, b, [*PROFILES] * 2)
            os.kill(victim, signal.SIGKILL)
            await asyncio.sleep(2)
            await asyncio.gather(*(_turn(c, "again", 30) for c in conns))
            await _close_all(conns)
            return conns

        conns = asyncio.run(main())
    outcomes = [(c.profile, c.stop or repr(c.error)) for c in conns]
    assert all(is_recover_error(c.error) for c in conns), f"the next call after the worker died: {outcomes}"


DRAIN_WORDS = 1_000
"""Chunks per turn on the draining worker; each turn is held after its first (``ASK``) until the test
has seen the drain begin and the newcomers served."""


def test_a_drained_worker_finishes_its_turns_while_new_connections_go_to_the_others(
    haproxy: str, tmp_path: Path
) -> None:
    """``deploy/launch.py restart-worker A`` (what a rolling restart does for each worker, and
    systemd's ExecStop before its SIGTERM): resumable connections of both profiles on A are in a
    turn when it starts, each held by the agent's permission request, which their clients answer
    only once the test has seen HAProxy put A in DRAIN and the new connections opened meanwhile all
    go to B (A gets none) and play their turn; then every turn on A finishes whole; once their
    clients left, A holds no connection, gets SIGTERM and exits, within the drain's bound (30 s); the
    launcher starts it again and HAProxy takes it back. What the test waits for is explicit (the
    turns asked, the drain is seen, the newcomers are done), not a turn long enough to outlast the
    steps before it (10,000 chunks before issue 46, which under load could outlast the bound too)."""
    with stack(tmp_path, haproxy) as running:
        (a, b) = running.ports
        old_pid = next(w.pid for w in running.workers() if w.port == a)

        async def main() -> dict[str, Any]:
            hold = asyncio.Event()
            conns = await _on_one_worker(running, a, b, [*PROFILES] * DEAD_TRIALS, path="/paced", hold=hold)
            turns = [
                asyncio.ensure_future(_turn(c, "ASK " + words(DRAIN_WORDS, f"d{n}-"))) for n, c in enumerate(conns)
            ]
            asked = [asyncio.ensure_future(c.client.asked.wait()) for c in conns]
            await asyncio.wait_for(asyncio.gather(*asked), STEP_TIMEOUT)  # every turn is running, held
            started = time.monotonic()
            restart = asyncio.ensure_future(asyncio.to_thread(running.launch, "restart-worker", str(a), "--wait", "30"))
            await asyncio.to_thread(running.wait_status, a, "DRAIN")
            newcomers = await asyncio.gather(*(_connect(running.url, p, reconnect=None) for p in PROFILES * 2))
            held = {port: running.worker(port)["connections"] for port in (a, b)}
            await asyncio.gather(*(_turn(c, words(20, f"n{n}-")) for n, c in enumerate(newcomers)))
            running_then = sum(t.done() for t in turns)
            hold.set()
            await asyncio.gather(*turns)
            turned = time.monotonic() - started
            await _close_all([*conns, *newcomers])
            done = await restart
            stopped = time.monotonic() - started
            back = await asyncio.to_thread(running.wait_status, a, "UP")
            return {"conns": conns, "newcomers": newcomers, "held": held, "done": done, "turned": turned,
                    "stopped": stopped, "back": back, "ended_early": running_then}  # fmt: skip

        figures = asyncio.run(main())
        new_pid = next(w.pid for w in running.workers() if w.port == a)
    done: subprocess.CompletedProcess[str] = figures["done"]
    print(
        f"\ndrain of a worker with {len(figures['conns'])} turns running: they ended {figures['turned']:.1f} s after "
        f"the drain began, the worker exited {figures['stopped']:.1f} s after; launch.py said:\n  "
        + done.stdout.strip().replace("\n", "\n  ")
    )
    assert figures["ended_early"] == 0, "a held turn ended before its client answered"
    assert done.returncode == 0, f"restart-worker failed: {done.stdout}{done.stderr}"
    assert "0 connections left" in done.stdout, done.stdout
    for n, conn in enumerate(figures["conns"]):
        assert conn.stop == "end_turn", f"{conn.profile} turn {n} on the draining worker: {conn.error!r}"
        assert conn.client.chunks == echoed(DRAIN_WORDS, f"d{n}-"), f"{conn.profile} turn {n}: chunks lost"
    for n, conn in enumerate(figures["newcomers"]):
        assert conn.stop == "end_turn" and conn.client.chunks == echoed(20, f"n{n}-"), f"newcomer {n}: {conn.error!r}"
    held = figures["held"]
    assert held[b] == len(figures["newcomers"]), f"new connections during the drain: {held} (A: {a}, B: {b})"
    assert held[a] <= len(figures["conns"]), f"the draining worker took new connections: {held}"
    assert new_pid != old_pid, "the launcher did not start the drained worker again"


SIGTERM_WORDS = 2_000
"""Chunks per turn on the paced agent (``/acp/paced``: 1 ms after each): about 2.5 s a turn."""


@pytest.mark.parametrize("profile", PROFILES)
def test_a_worker_sent_sigterm_directly_lets_its_running_turns_finish(
    haproxy: str, tmp_path: Path, profile: str
) -> None:
    """SIGTERM straight to worker A (an orchestrator stopping a container, without the balancer's
    drain first): its running turns (4 of 2,000 chunks, paced so that each lasts about 2.5 s on any
    machine) must finish whole within uvicorn's graceful bound (15 s here, several times what they
    take even on a loaded machine),
    and new connections go to B. The app takes SIGTERM over from uvicorn (``AcpApp``, at its lifespan
    startup): it answers the health probe 404 (HAProxy's ``disable-on-404`` sends it no new client)
    and hands SIGTERM to uvicorn once its connections ended (or after ``drain_timeout``). Before,
    neither profile did: over WebSocket uvicorn closed every socket at once (1012), over Streamable
    HTTP the turn's stream ended; the client reconnected to B, which did not know the token: -32060.
    (Unpaced turns of 5,000 chunks finished over HTTP, and sometimes over WebSocket, before the
    worker stopped, which proved nothing.)"""
    with stack(tmp_path, haproxy, restart_delay=15, grace_seconds=15) as running:
        (a, b) = running.ports
        victim = next(w.pid for w in running.workers() if w.port == a)

        async def main() -> tuple[list[Resumable], list[Resumable]]:
            conns = await _on_one_worker(running, a, b, [profile] * DEAD_TRIALS, path="/paced")
            turns = [asyncio.ensure_future(_turn(c, words(SIGTERM_WORDS, f"s{n}-"), 60)) for n, c in enumerate(conns)]
            firsts = [asyncio.ensure_future(c.client.first.wait()) for c in conns]
            await asyncio.wait(firsts, timeout=STEP_TIMEOUT, return_when=asyncio.FIRST_COMPLETED)
            os.kill(victim, signal.SIGTERM)
            running_then.extend(len(c.client.chunks) < SIGTERM_WORDS for c in conns)
            newcomers = await asyncio.gather(*(_connect(running.url, profile, reconnect=None) for _ in range(2)))
            await asyncio.gather(*(_turn(c, words(20, f"n{n}-")) for n, c in enumerate(newcomers)))
            await asyncio.gather(*turns)
            await _close_all([*conns, *newcomers])
            return conns, newcomers

        running_then: list[bool] = []
        conns, newcomers = asyncio.run(main())
    assert all(running_then), f"a turn had ended before SIGTERM was sent: {running_then}: the test proves nothing"
    for n, conn in enumerate(newcomers):
        assert conn.stop == "end_turn" and conn.client.chunks == echoed(20, f"n{n}-"), f"newcomer {n}: {conn.error!r}"
    outcomes = sorted({conn.stop or repr(conn.error)[:120] for conn in conns})
    for n, conn in enumerate(conns):
        assert conn.stop == "end_turn", f"{profile} turn {n} on the stopping worker: {outcomes}"
        assert conn.client.chunks == echoed(SIGTERM_WORDS, f"s{n}-"), f"{profile} turn {n}: chunks lost"


def test_a_session_stream_the_balancer_refuses_fails_the_prompt_instead_of_hanging() -> None:
    """Found by the load test: under load HAProxy answers 408 to a request that arrives too slowly
    (``timeout http-request``) and closes idle kept-alive connections, so a session's stream GET can
    fail. Here the app answers that GET with 408 (after 0.3 s, as a balancer would) while the
    client is sending ``session/prompt``: the prompt must fail (or succeed on a reopened stream)
    within 5 s (it takes milliseconds). (Before: ``prompt()`` waited forever: the client POSTed it although the
    stream was refused, and its answer waited on the server for a stream that never came.) The client opens
    the refused stream once more."""
    inner = asgi_app(echo_agent())
    refused: list[bool] = []

    async def balancer(scope: dict[str, Any], receive: Any, send: Any) -> None:
        headers = dict(scope.get("headers") or [])
        if scope["type"] == "http" and scope["method"] == "GET" and b"acp-session-id" in headers and not refused:
            refused.append(True)
            await asyncio.sleep(0.3)
            await send({"type": "http.response.start", "status": 408, "headers": []})
            await send({"type": "http.response.body", "body": b""})
            return
        await inner(scope, receive, send)

    async def main(url: str) -> tuple[str | None, BaseException | None]:
        async with connect_agent(url, EchoRecorder(), transport="http") as agent:
            await agent.initialize(initialize_request())
            session = (await agent.new_session(new_session_request())).session_id
            try:
                result = await asyncio.wait_for(agent.prompt(prompt_request(session, "a b")), 5)
            except (RequestError, ConnectionError, TimeoutError) as error:
                return None, error
            return result.stop_reason, None

    with serving(balancer) as url:
        stop, error = asyncio.run(main(url))
    assert refused, "the session's stream was not refused"
    assert not isinstance(error, TimeoutError), f"prompt() hung after its session's stream was refused ({stop})"


@pytest.mark.parametrize("workers_allow", [False, True], ids=["launcher", "balancer"])
def test_websocket_compression_is_refused(haproxy: str, tmp_path: Path, workers_allow: bool) -> None:
    """uvicorn offers permessage-deflate unless told not to, and a compressed message of the 32 MiB
    limit is about 32 KiB on the wire (docs/remote.md): through the balancer, a client that offers it
    gets a socket without it, as the launcher starts the workers (``--ws-per-message-deflate false``)
    and when a user's workers allow it (HAProxy drops the client's offer)."""
    import websockets.asyncio.client

    async def extensions(url: str) -> str | None:
        async with websockets.asyncio.client.connect(url.replace("http://", "ws://"), compression="deflate") as ws:
            assert "permessage-deflate" in ws.request.headers.get("sec-websocket-extensions", "")
            found: str | None = ws.response.headers.get("sec-websocket-extensions")
            return found

    allow = ["--ws-per-message-deflate", "true"] if workers_allow else []
    with stack(tmp_path, haproxy, uvicorn_args=allow) as running:
        assert asyncio.run(extensions(running.url)) is None


# -- make deploy-demo METRICS=1


def _scraped(port: int) -> dict[str, float]:
    """The samples a worker's Prometheus endpoint serves, by name and labels as written."""
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as answer:
        text = answer.read().decode("utf-8")
    samples = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            name, _, value = line.rpartition(" ")
            samples[name] = float(value)
    return samples


def _total(scrapes: list[dict[str, float]], name: str, *labels: str) -> float:
    """The sum over the workers of the samples of ``name`` whose labels hold each of ``labels``."""
    return sum(
        value
        for samples in scrapes
        for sample, value in samples.items()
        if sample.split("{")[0] == name and all(label in sample for label in labels)
    )


def test_the_demo_with_metrics_shows_each_workers_connections_for_prometheus(haproxy: str, tmp_path: Path) -> None:
    """``make deploy-demo METRICS=1`` serves ``examples/observed_agent.py``: each worker sets OpenTelemetry
    up and serves its metrics for Prometheus at its port + 1000 (the launcher names the port in
    ``ACP_WORKER_PORT``). With a WebSocket and a Streamable HTTP connection open through HAProxy, the
    workers' ``acp_connections_open`` add up to one per profile and their ``rpc.server.duration`` counts
    both ``initialize`` requests; once both closed, no connection is open."""
    with stack(tmp_path, haproxy, app="observed_agent:app", app_dir=ROOT / "examples") as running:

        async def scenario() -> list[dict[str, float]]:
            async with (
                connect_agent(running.url, EchoRecorder(), transport="ws") as ws,
                connect_agent(running.url, EchoRecorder(), transport="http") as http,
            ):
                await asyncio.wait_for(ws.initialize(initialize_request()), STEP_TIMEOUT)
                await asyncio.wait_for(http.initialize(initialize_request()), STEP_TIMEOUT)
                return [_scraped(port + 1000) for port in running.ports]

        during = asyncio.run(scenario())
        deadline = time.monotonic() + 30
        after = [_scraped(port + 1000) for port in running.ports]
        while _total(after, "acp_connections_open") and time.monotonic() < deadline:  # the ends reach the workers
            time.sleep(0.1)
            after = [_scraped(port + 1000) for port in running.ports]
    assert _total(during, "acp_connections_open", 'acp_profile="websocket"') == 1, during
    assert _total(during, "acp_connections_open", 'acp_profile="http"') == 1, during
    assert _total(during, "rpc_server_duration_milliseconds_count", 'rpc_method="initialize"') == 2, during
    assert _total(after, "acp_connections_open") == 0, after
