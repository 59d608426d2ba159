"""No orphaned agents (issue 23, item 7): ``spawn_agent`` runs the agent in a process group of its
own and, on leaving the block, ends the whole group after the grace periods, so that the real
agent behind a launcher does not outlive the block.

The agent here is started the way a launcher (an npm bin shim, ``uvx``, a shell script) starts
one: a shell whose child is the real agent. That child ignores both the end of its stdin and
SIGTERM, the worst case: the block must still end within the grace periods (not hang on the pipe
the child holds), normally or by an exception, and no process of the tree may be left running.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
import time
from pathlib import Path

import pytest

from tests.generated.test_stubs import module

ROOT = Path(__file__).resolve().parents[2]
GRACE = 0.5
LIMIT = 60.0
"""Only stops a hang: the block is expected to end after about two grace periods."""

LAUNCHER = """#!/bin/sh
# a launcher as npm bin shims are: the real agent runs as its child, not in its place
"$@"
exit $?
"""

STUBBORN_AGENT = """
import asyncio, os, signal, sys, time
signal.signal(signal.SIGTERM, signal.SIG_IGN)  # ignores SIGTERM ...
sys.path.insert(0, {examples!r})
from echo_agent import EchoAgent, run_agent
with open({pids!r}, "w") as out:
    out.write(f"{{os.getppid()}} {{os.getpid()}}")
asyncio.run(run_agent(EchoAgent()))
time.sleep(600)  # ... and does not exit when its stdin closes
"""


class _Client:
    """The example client's behaviour, enough for a turn."""

    def __init__(self) -> None:
        interfaces = module("stable", "interfaces")
        builders = module("stable", "builders")

        class Client(interfaces.Client):  # type: ignore[name-defined,misc]
            async def session_update(self, params: object) -> None:
                return None

            async def request_permission(self, params: object) -> object:
                return builders.request_permission_response(builders.cancelled_request_permission_outcome())

        self.instance = Client()


def _running(pid: int) -> bool:
    """Whether ``pid`` is a process that still runs (a zombie no one reaps does not)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


@pytest.mark.skipif(sys.platform == "win32" or not Path("/proc").is_dir(), reason="reads /proc (Linux)")
@pytest.mark.parametrize("ending", ["normally", "by an exception"])
def test_leaving_spawn_agent_ends_the_agents_whole_tree(tmp_path: Path, ending: str) -> None:
    serve, builders, version = module("stable", "serve"), module("stable", "builders"), module("stable", "_version")
    launcher = tmp_path / "launch.sh"
    launcher.write_text(LAUNCHER)
    pids = tmp_path / "pids"
    agent_file = tmp_path / "stubborn_agent.py"
    agent_file.write_text(STUBBORN_AGENT.format(examples=str(ROOT / "examples"), pids=str(pids)))
    tree: list[int] = []

    async def scenario() -> None:
        command = ["/bin/sh", str(launcher), sys.executable, str(agent_file)]
        async with serve.spawn_agent(command, _Client().instance, grace=GRACE) as agent:
            await agent.initialize(builders.initialize_request(version.PROTOCOL_VERSION))
            session = await agent.new_session(builders.new_session_request(str(tmp_path), []))
            await agent.prompt(builders.prompt_request(session.session_id, [builders.text_content_block("hi")]))
            tree.extend(int(pid) for pid in pids.read_text().split())
            assert all(_running(pid) for pid in tree)
            if ending == "by an exception":
                raise LookupError("the block fails")

    started = time.monotonic()
    with pytest.raises(LookupError) if ending == "by an exception" else contextlib.nullcontext():
        asyncio.run(asyncio.wait_for(scenario(), LIMIT))
    elapsed = time.monotonic() - started
    assert len(tree) == 2  # the launcher and the real agent
    assert not [pid for pid in tree if _running(pid)], f"left running: {tree}"
    assert elapsed < LIMIT / 2, f"the block took {elapsed:.1f} s to end"


def test_a_command_that_cannot_be_started_is_one_clear_error(tmp_path: Path) -> None:
    serve = module("stable", "serve")

    async def scenario() -> None:
        async with serve.spawn_agent([str(tmp_path / "no-such-agent")], _Client().instance):
            raise AssertionError("the block must not run")

    before = _open_files()
    with pytest.raises(serve.AgentStartError, match=r"cannot start the agent .*no-such-agent.*No such file"):
        asyncio.run(scenario())
    assert issubclass(serve.AgentStartError, ConnectionError)
    assert _open_files() == before, "the pipes made for the agent were left open"


def _open_files() -> set[str]:
    """What this process's file descriptors are open on (``/proc``: Linux)."""
    fds = Path("/proc/self/fd")
    found = set()
    for fd in fds.iterdir():
        with contextlib.suppress(OSError):  # the listing's own descriptor is gone
            found.add(f"{fd.name} {os.readlink(fd)}")
    return found


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads /proc (Linux)")
@pytest.mark.parametrize("loop", ["asyncio", "uvloop"])
def test_each_spawn_agent_block_closes_the_pipes_it_opened(tmp_path: Path, loop: str) -> None:
    """Five turns, each in a ``spawn_agent`` block of its own, leave no more open files than one
    (a loop opens some files of its own on its first subprocess)."""
    serve, builders, version = module("stable", "serve"), module("stable", "builders"), module("stable", "_version")
    if loop == "uvloop":
        uvloop = pytest.importorskip("uvloop", reason="uvloop is not installed (acpgen's fast extra)")
    command = [sys.executable, str(ROOT / "examples" / "echo_agent.py")]

    async def turn() -> None:
        async with serve.spawn_agent(command, _Client().instance, grace=GRACE) as agent:
            await agent.initialize(builders.initialize_request(version.PROTOCOL_VERSION))
            session = await agent.new_session(builders.new_session_request(str(tmp_path), []))
            await agent.prompt(builders.prompt_request(session.session_id, [builders.text_content_block("hi")]))

    async def scenario() -> tuple[set[str], set[str]]:
        await turn()
        after_one = _open_files()
        for _ in range(4):
            await turn()
        return after_one, _open_files()

    runner = uvloop.run if loop == "uvloop" else asyncio.run
    after_one, after_five = runner(asyncio.wait_for(scenario(), LIMIT))
    assert after_five == after_one, f"left open: {sorted(after_five - after_one)}"


def test_an_agent_that_exits_by_itself_is_not_waited_for(tmp_path: Path) -> None:
    from acpgen.runtime.connection import process as _process

    async def scenario() -> int:
        process, _, writer = await _process.spawn([sys.executable, "-c", "import sys; sys.stdin.read()"])
        writer.close()
        return await _process.stop(process, grace=LIMIT)

    started = time.monotonic()
    assert asyncio.run(scenario()) == 0
    assert time.monotonic() - started < LIMIT / 2  # no grace period spent


def test_the_spawned_agent_leads_a_process_group_of_its_own() -> None:
    from acpgen.runtime.connection import process as _process

    async def scenario() -> tuple[int, int]:
        process, reader, writer = await _process.spawn([sys.executable, "-c", "import os; print(os.getpgid(0))"])
        line = await reader.readline()
        writer.close()
        await _process.stop(process, grace=LIMIT)
        return process.pid, int(line)

    pid, group = asyncio.run(scenario())
    assert group == pid != os.getpgid(0)
