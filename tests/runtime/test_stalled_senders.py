"""Concurrent senders to a peer that stopped reading hold no encoded message (issue 25, item 4).

An agent process starts 3000 concurrent ``session_update`` calls of a 64 KiB chunk while its client
reads nothing (``tests/support/peers/stalled.py``): its resident set may grow by at most 64 MiB (a send
waits for its turn before its params are serialised), and once the client reads again, every chunk
arrives, whole and in call order. Over stdio (a pipe to the spawned agent), a WebSocket and
Streamable HTTP (the agent served by uvicorn in a process of its own; over HTTP the server holds up
to ``RemoteLimits.max_stream_bytes`` of a session's output before the agent waits).
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest

from tests.support.remote import PROFILES
from tests.support.sdk import ROOT

pytestmark = pytest.mark.slow

PEER = ROOT / "tests" / "support" / "peers" / "stalled.py"
TIMEOUT = 120
SENDERS = 3000
MAX_GROWTH_MIB = 64


@pytest.fixture(scope="module")
def served() -> Iterator[str]:
    """The agent served by uvicorn on an ephemeral port, in a process of its own."""
    process = subprocess.Popen(
        [sys.executable, str(PEER), "serve"], cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert process.stdout is not None
        port = json.loads(process.stdout.readline())["port"]
        yield f"http://127.0.0.1:{port}/acp"
    finally:
        assert process.stdin is not None
        process.stdin.close()
        try:
            process.wait(TIMEOUT)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _client(*arguments: str) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, str(PEER), "client", *arguments],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    result: dict[str, Any] = json.loads(done.stdout.splitlines()[-1])
    return result


def _check(result: dict[str, Any]) -> None:
    assert result["stalled"], "the senders never waited: the client did not stop reading"
    assert result["grown_mib"] <= MAX_GROWTH_MIB, f"the agent grew by {result['grown_mib']:.1f} MiB"
    assert result["received"] == SENDERS and result["in_order"], result
    assert result["sizes"] == [64 * 1024]


def test_senders_to_a_stalled_peer_over_a_pipe_hold_no_encoded_message() -> None:
    _check(_client("stdio"))


@pytest.mark.parametrize("transport", PROFILES)
def test_senders_to_a_stalled_remote_client_hold_no_encoded_message(served: str, transport: str) -> None:
    _check(_client(transport, served))
