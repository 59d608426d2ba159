"""The examples run as a user would run them: the echo client spawns the echo agent, sends a
prompt and prints every streamed chunk, and both type-check under mypy --strict."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
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
