"""The event loop (issue 33, item 2): ``serve.run`` runs a program on uvloop when it is installed,
on asyncio's own loop without it or when ``ACP_LOOP=asyncio`` says so; uvloop is never required.

Each case is the echo example's agent in a real process, reporting on stderr which loop it runs
on and what its stdin and stdout are, driven over them by the echo example's client (a process of
its own, on the same choice of loop, spawning the agent with ``spawn_agent``). The agent's stdin and
stdout are pipes on either loop (uvloop's own subprocess pipes are Unix sockets, which cost the
kernel about twice a pipe's time per message). "Without uvloop" is an interpreter in which
``import uvloop`` fails, as where it is not installed."""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from tests.support.sdk import ROOT

EXAMPLES = ROOT / "examples"
WITHOUT_UVLOOP = "import sys; sys.modules['uvloop'] = None\n"
"""Makes ``import uvloop`` raise ImportError, as where it is not installed."""
AGENT = """
import asyncio, os, stat, sys
sys.path.insert(0, {examples!r})
from echo_agent import EchoAgent
from acp_bindings import run, run_agent

async def main() -> None:
    loop = type(asyncio.get_running_loop())
    print(f"loop: {{loop.__module__}}.{{loop.__qualname__}}", file=sys.stderr, flush=True)
    kinds = ["pipe" if stat.S_ISFIFO(os.fstat(fd).st_mode) else "other" for fd in (0, 1)]
    print("stdin and stdout: " + " and ".join(kinds), file=sys.stderr, flush=True)
    await run_agent(EchoAgent())

run(main())
"""


def _agent(tmp_path: Path, *, uvloop: bool) -> list[str]:
    script = tmp_path / "agent.py"
    script.write_text(("" if uvloop else WITHOUT_UVLOOP) + AGENT.format(examples=str(EXAMPLES)), encoding="utf-8")
    return [sys.executable, str(script)]


def _run_turn(command: list[str], loop: str | None, stderr: Path) -> tuple[str, str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "generated")}
    env.pop("ACP_LOOP", None)
    if loop is not None:
        env["ACP_LOOP"] = loop
    client = [sys.executable, str(EXAMPLES / "echo_client.py"), "one", "two three", "--", *command]
    with stderr.open("w", encoding="utf-8") as errors:
        done = subprocess.run(client, stdout=subprocess.PIPE, stderr=errors, text=True, env=env, timeout=60,
                              check=False)  # fmt: skip
    return done.stdout, stderr.read_text(encoding="utf-8") + f"(client exit {done.returncode})"


uvloop_installed = pytest.mark.skipif(
    subprocess.run([sys.executable, "-c", "import uvloop"], capture_output=True, check=False).returncode != 0,
    reason="uvloop is not installed (acpgen's fast extra; the dev group installs it)",
)


@uvloop_installed
def test_an_agent_runs_on_uvloop_over_real_pipes_when_it_is_installed(tmp_path: Path) -> None:
    printed, stderr = _run_turn(_agent(tmp_path, uvloop=True), None, tmp_path / "err")
    assert printed == "one two three\n(end_turn)\n", stderr
    assert "loop: uvloop.Loop" in stderr
    assert "stdin and stdout: pipe and pipe" in stderr


@uvloop_installed
def test_acp_loop_asyncio_turns_uvloop_off(tmp_path: Path) -> None:
    printed, stderr = _run_turn(_agent(tmp_path, uvloop=True), "asyncio", tmp_path / "err")
    assert printed == "one two three\n(end_turn)\n", stderr
    assert "loop: asyncio.unix_events._UnixSelectorEventLoop" in stderr
    assert "stdin and stdout: pipe and pipe" in stderr


def test_without_uvloop_an_agent_runs_on_asyncio(tmp_path: Path) -> None:
    printed, stderr = _run_turn(_agent(tmp_path, uvloop=False), None, tmp_path / "err")
    assert printed == "one two three\n(end_turn)\n", stderr
    assert "loop: asyncio.unix_events._UnixSelectorEventLoop" in stderr
    assert "stdin and stdout: pipe and pipe" in stderr


@pytest.mark.parametrize(
    ("loop", "says"),
    [
        ("uvloop", "ImportError: ACP_LOOP='uvloop' needs uvloop, which is not installed: pip install 'uvloop=="),
        ("fastest", "ValueError: ACP_LOOP is 'auto', 'uvloop' or 'asyncio', not 'fastest'"),
    ],
)
def test_a_loop_that_cannot_be_had_is_refused_with_what_to_do(tmp_path: Path, loop: str, says: str) -> None:
    script = tmp_path / "agent.py"
    script.write_text(WITHOUT_UVLOOP + AGENT.format(examples=str(EXAMPLES)), encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(ROOT / "generated"), "ACP_LOOP": loop}
    done = subprocess.run([sys.executable, str(script)], input="", capture_output=True, text=True, env=env,
                          timeout=60, check=False)  # fmt: skip
    assert done.returncode == 1
    assert says in done.stderr
    assert "loop:" not in done.stderr and "never awaited" not in done.stderr


def test_the_pinned_uvloop_is_the_fast_extra() -> None:
    from acp_bindings._runtime.connection.event_loop import REQUIREMENT

    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert project["optional-dependencies"]["fast"] == [f"{REQUIREMENT}; sys_platform != 'win32'"]
