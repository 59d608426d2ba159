"""The examples run as a user would run them: the echo client spawns the echo agent, sends a
prompt and prints every streamed chunk; the remote client prints the same from the echo agent
served over the network (both transports); all type-check under mypy --strict."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

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
        for transport in ("ws", "http"):
            words = ["one", "two three", "four"]
            done = subprocess.run(
                [sys.executable, str(EXAMPLES / "remote_client.py"), "--url", url, "--transport", transport, *words],
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
