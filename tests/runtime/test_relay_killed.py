"""A relay's agent killed in the middle of a turn (issue 46, item 3): ``connect_agent``'s running
``prompt()`` raises the relay's -32603 naming the exit code, on both profiles, with and without resume,
every time.

Over Streamable HTTP the client reads each SSE stream apart. When the agent dies, the relay puts the
-32603 on the session's stream, then the connection ends: every stream ends. The client used to end its
connection as soon as the connection's stream ended, dropping what the session's stream still held; a
resumable client then reattached, was told the connection is gone and raised -32060 instead (seen once
in a full run before this module; here, before the fix, 14 of the 25 resumable trials over Streamable
HTTP at a load of about 11 on 2 cores). Now a stream the server ended ends the connection only after
the other streams ended too. Trials, some at once, beside a process that keeps a core busy: 6 per profile
in ``make test`` (without the fix, 2 of the 3 resumable ones over Streamable HTTP failed, in each of two
runs), 50 in ``make soak`` (14 of 25 failed without the fix; none with it), which show the race gone
rather than rare.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from acp_bindings import PROTOCOL_VERSION, builders
from acp_bindings.connection import Limits
from acp_bindings.errors import RequestError
from acp_bindings.relay import relay_app
from acp_bindings.remote import Reconnect, RemoteLimits, ResumeLimits, connect_agent

from tests.support.remote import PROFILES, TurnClient, serving

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
AGENT = [sys.executable, str(ROOT / "tests" / "support" / "peers" / "order_stdio_agent.py")]
"""A stdio agent of the standard library alone (it starts fast): its ``session/prompt`` streams until killed."""
RECONNECT = {"initial_delay": 0.02, "max_delay": 0.1, "give_up_after": 15.0, "attempt_timeout": 5.0}
TIMEOUT = 30.0
LIMIT = 64 * 1024
TRIALS = int(os.environ.get("ACP_RELAY_KILLED_TRIALS") or 6)
"""Trials per profile, half of them resumable: a few in ``make test``; the soak run (``make soak``,
docs/testing.md) sets ``ACP_RELAY_KILLED_TRIALS=50``."""
KILL_AFTER = 50
"""Chunks the client handles before the kill: the agent, faster, is far ahead of it by then."""
AT_ONCE = 5
"""Trials running at once (one relay, one agent process each)."""


@contextlib.contextmanager
def busy_process() -> Iterator[None]:
    """A process that keeps a core busy for as long as the block runs."""
    busy = subprocess.Popen([sys.executable, "-c", "while 1: pass"])
    try:
        yield
    finally:
        busy.kill()
        busy.wait()


async def _killed_turn(
    app: Any, url: str, profile: str, resumable: bool, starting: asyncio.Lock
) -> BaseException | None:
    """One turn whose agent gets SIGKILL after its first chunks: what ``prompt()`` raised (``starting``: held
    while the agent starts, so that the one new pipe of ``app`` is this turn's)."""
    client = TurnClient()
    reconnect = Reconnect(**RECONNECT) if resumable else None  # type: ignore[arg-type]
    failed: BaseException | None = None
    with contextlib.suppress(ConnectionError):  # leaving a connection whose agent is gone (only that)
        small = Limits(max_message_bytes=LIMIT)  # a small inbox: a slow client holds the agent's backlog
        async with connect_agent(url, client, transport=profile, reconnect=reconnect, limits=small) as agent:
            async with starting:
                known = set(app.pipes)
                await agent.initialize(builders.initialize_request(PROTOCOL_VERSION))
                (pipe,) = app.pipes - known
            session = (await agent.new_session(builders.new_session_request("/tmp", []))).session_id
            prompt = builders.prompt_request(session, [builders.text_content_block("go")])
            turn = asyncio.ensure_future(agent.prompt(prompt))
            while len(client.chunks.get(session, [])) < KILL_AFTER:
                await asyncio.sleep(0.01)
            assert pipe.process is not None
            os.kill(pipe.process.pid, signal.SIGKILL)
            try:
                await asyncio.wait_for(turn, TIMEOUT)
            except Exception as error:  # noqa: BLE001 - checked by the caller, outside the suppress
                failed = error
    return failed


def _app(**options: Any) -> Any:
    """A relay of ``AGENT`` that holds little for a slow client (the agent then waits): a backlog of a
    few hundred KiB at the kill, which the client takes before the error, in well under a second."""
    held = RemoteLimits(max_stream_bytes=256 * 1024, max_buffered_bytes=512 * 1024)
    return relay_app(AGENT, limits=Limits(max_message_bytes=LIMIT), remote_limits=held, grace=0.5, **options)


def _outcome(failed: BaseException | None) -> str:
    if isinstance(failed, RequestError):
        return f"{failed.code} {failed.data}"
    return repr(failed)


@pytest.mark.parametrize("profile", PROFILES)
def test_a_killed_agent_fails_the_running_prompt_with_its_exit_code_every_time(profile: str) -> None:
    """``connect_agent`` through the relay, its agent killed (SIGKILL) in the middle of a turn: ``prompt()``
    raises -32603 ``{"reason": "the agent ended", "exitCode": -9}``, at once, in every one of ``TRIALS``
    trials (half of them resumable, with ``reconnect``), ``AT_ONCE`` at a time, beside a busy process."""
    plain, resuming = _app(), _app(resume=ResumeLimits())
    expected = f"-32603 {{'reason': 'the agent ended', 'exitCode': {-signal.SIGKILL}}}"

    async def scenario(plain_url: str, resuming_url: str) -> list[str]:
        gate, starting = asyncio.Semaphore(AT_ONCE), asyncio.Lock()

        async def trial(n: int) -> str:
            async with gate:
                app, url = (resuming, resuming_url) if n % 2 else (plain, plain_url)
                return f"{'resumable' if n % 2 else 'plain'}: " + _outcome(
                    await _killed_turn(app, url, profile, n % 2 == 1, starting)
                )

        return await asyncio.gather(*(trial(n) for n in range(TRIALS)))

    with busy_process(), serving(plain) as plain_url, serving(resuming) as resuming_url:
        outcomes = asyncio.run(scenario(plain_url, resuming_url))
    wrong = [outcome for outcome in outcomes if not outcome.endswith(expected)]
    print(f"{profile}: {TRIALS - len(wrong)} of {TRIALS} trials ended in {expected}")
    assert not wrong, f"{len(wrong)} of {TRIALS} trials over {profile} ended otherwise: {Counter(wrong)}"
