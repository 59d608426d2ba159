"""The examples run as a user would run them: the echo client spawns the echo agent, sends a
prompt and prints every streamed chunk; the remote client prints the same from the echo agent
served over the network (both transports); all type-check under mypy --strict."""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"


def test_echo_client_spawns_the_echo_agent_and_prints_the_whole_turn() -> None:
    done = subprocess.run(
        [sys.executable, str(EXAMPLES / "echo_client.py"), "one", "two three", "four"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == "one two three four\n(end_turn)\n"


@pytest.mark.parametrize(
    ("agent", "says"),
    [
        (["/nonexistent/agent"], "cannot start the agent ['/nonexistent/agent']: No such file or directory"),
        ([sys.executable, "-c", "pass"], "the peer closed the connection before answering"),
    ],
)
def test_echo_client_of_an_agent_that_cannot_serve_says_so_in_one_line(agent: list[str], says: str) -> None:
    done = subprocess.run(
        [sys.executable, str(EXAMPLES / "echo_client.py"), "hi", "--", *agent],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 1
    assert done.stdout == ""
    assert done.stderr.startswith(f"echo_client: {says}") and done.stderr.count("\n") == 1, done.stderr


def test_examples_pass_mypy_strict(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--cache-dir", str(tmp_path / "cache"), str(EXAMPLES)],
        cwd=ROOT / "generated",
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_remote_client_prints_what_echo_client_prints_over_both_transports() -> None:
    """``remote_agent.py`` serves the echo agent on an ephemeral port; ``remote_client.py`` prints the turn."""
    import json
    import re

    server = subprocess.Popen(
        [sys.executable, str(EXAMPLES / "remote_agent.py"), "--port", "0"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert server.stderr is not None
        for line in server.stderr:  # uvicorn says where it listens
            if found := re.search(r"Uvicorn running on http://127\.0\.0\.1:(\d+)", line):
                break
        assert found, "uvicorn did not start"
        url = f"http://127.0.0.1:{found.group(1)}/acp"
        for transport, *flags in (("ws",), ("http",), ("ws", "--reconnect"), ("http", "--reconnect")):
            words = ["one", "two three", "four"]
            command = [sys.executable, str(EXAMPLES / "remote_client.py"), "--url", url, "--transport", transport]
            done = subprocess.run(
                [*command, *flags, *words],
                capture_output=True,
                text=True,
                timeout=60,
                check=False,
            )
            assert done.returncode == 0, done.stderr
            assert done.stdout == "one two three four\n(end_turn)\n", json.dumps(done.stdout)
    finally:
        server.terminate()
        server.wait(30)


@pytest.mark.parametrize("transport", ["ws", "http"])
def test_remote_client_of_an_unreachable_url_says_so_in_one_line(transport: str) -> None:
    with socket.socket() as probe:  # a port nothing listens on any more
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    url = f"http://127.0.0.1:{port}/acp"
    done = subprocess.run(
        [sys.executable, str(EXAMPLES / "remote_client.py"), "--url", url, "--transport", transport, "hi"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.startswith(f"remote_client: {url}: ") and done.stderr.count("\n") == 1, done.stderr


def test_the_echo_agent_in_process_with_the_testing_helpers() -> None:
    """The examples' agent tested as a user tests theirs (docs/testing-your-agent.md): one call,
    no process, over the real connection and codec."""
    import asyncio

    from acp_bindings.testing import run_turn

    sys.path.insert(0, str(EXAMPLES))
    try:
        from echo_agent import EchoAgent
    finally:
        sys.path.remove(str(EXAMPLES))
    turn = asyncio.run(asyncio.wait_for(run_turn(EchoAgent(), "hello in process"), 60))
    assert (turn.stop_reason, turn.text) == ("end_turn", "hello in process ")
