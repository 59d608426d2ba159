"""One trace per file (issue 30): ``ACP_TRACE`` traces the process that reads it, never the agent
it spawns; an agent traces itself where asked (``ACP_AGENT_TRACE``, or ``{pid}`` / ``{role}``
in the path); two writers that share a file anyway never interleave their lines.

Real processes: ``examples/echo_client.py`` spawns ``examples/echo_agent.py`` over pipes, as a
user runs them, and ``python -m acp_bindings.trace show`` reads what they wrote.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.support.tools import acpgen

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
CLIENT = ROOT / "examples" / "echo_client.py"
TRACE_VARIABLES = ("ACP_TRACE", "ACP_AGENT_TRACE")
CLIENT_SIDE = ["out", "in", "out", "in", "out", "in", "in", "in"]
"""initialize, its answer, session/new, its answer, the prompt, two chunks, the prompt's answer."""
AGENT_SIDE = ["in" if d == "out" else "out" for d in CLIENT_SIDE]


def run_client(folder: Path, *words: str, **trace: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in TRACE_VARIABLES} | trace
    done = subprocess.run(
        [sys.executable, str(CLIENT), *words],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done


def entries(trace: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in trace.read_text(encoding="utf-8").splitlines()]


def directions(trace: Path) -> list[str]:
    return [e["direction"] for e in entries(trace)]


def show(trace: Path) -> str:
    done = subprocess.run(
        [*acpgen("trace"), "show", str(trace)],
        cwd=ROOT / "generated",
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_acp_trace_of_a_client_holds_the_clients_messages_once(tmp_path: Path) -> None:
    done = run_client(tmp_path, "hello", "world", ACP_TRACE="trace.jsonl")
    assert done.stdout == "hello world\n(end_turn)\n"
    trace = tmp_path / "trace.jsonl"
    assert directions(trace) == CLIENT_SIDE  # 8 messages, 8 lines: the agent wrote none
    assert sorted(p.name for p in tmp_path.iterdir()) == ["trace.jsonl"]
    text = show(trace)
    assert text.count("> user") == 1 and text.count("session/new") == 1, text
    assert text.count("hello world") == 2, text  # the prompt once, the reply once, in order
    assert text.index("> user") < text.index("agent message:\n  hello world") < text.index("(turn ended: end_turn")


def test_acp_agent_trace_traces_the_spawned_agent_to_its_own_file(tmp_path: Path) -> None:
    run_client(tmp_path, "hello", "world", ACP_TRACE="client.jsonl", ACP_AGENT_TRACE="agent.jsonl")
    assert directions(tmp_path / "client.jsonl") == CLIENT_SIDE
    assert directions(tmp_path / "agent.jsonl") == AGENT_SIDE
    client, agent = entries(tmp_path / "client.jsonl"), entries(tmp_path / "agent.jsonl")
    assert [e["message"] for e in client] == [e["message"] for e in agent]  # the same 8 messages, each side once


def test_placeholders_give_each_process_its_own_file(tmp_path: Path) -> None:
    run_client(tmp_path, "hello", "world", ACP_TRACE="trace-{role}-{pid}.jsonl")
    files = sorted(p.name for p in tmp_path.iterdir())
    assert len(files) == 2, files
    agent, client = files  # the agent's pid and the client's are different processes' ids
    assert agent.startswith("trace-agent-") and client.startswith("trace-client-")
    assert agent.removeprefix("trace-agent-") != client.removeprefix("trace-client-")
    assert directions(tmp_path / client) == CLIENT_SIDE
    assert directions(tmp_path / agent) == AGENT_SIDE
    assert show(tmp_path / client).count("> user") == 1


def test_an_agent_run_alone_still_reads_acp_trace(tmp_path: Path) -> None:
    """An agent that a non-acpgen client starts (an editor passing ``ACP_TRACE``) traces itself."""
    request = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}}
    env = {k: v for k, v in os.environ.items() if k not in TRACE_VARIABLES} | {"ACP_TRACE": "agent.jsonl"}
    agent = subprocess.Popen(
        [sys.executable, str(ROOT / "examples" / "echo_agent.py")],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        cwd=tmp_path,
        env=env,
        text=True,
    )
    assert agent.stdin is not None and agent.stdout is not None
    agent.stdin.write(json.dumps(request) + "\n")
    agent.stdin.flush()
    assert json.loads(agent.stdout.readline())["id"] == 1  # answered: then the client closes its end
    agent.stdin.close()
    assert agent.wait(timeout=60) == 0
    assert directions(tmp_path / "agent.jsonl") == ["in", "out"]


def test_two_writers_sharing_a_file_never_interleave_their_lines(tmp_path: Path) -> None:
    """Asked to share one file (``ACP_AGENT_TRACE`` naming the client's), both processes write
    every message whole: large lines (a 1 MiB prompt, read and written by both at once) and many
    small ones (a chunk per word) stay one JSON entry per line."""
    words = [f"w{i:05d}" + "x" * 200 for i in range(5000)]  # about 1 MiB, 5000 chunks
    run_client(tmp_path, *words, ACP_TRACE="shared.jsonl", ACP_AGENT_TRACE="shared.jsonl")
    lines = (tmp_path / "shared.jsonl").read_bytes().split(b"\n")
    assert lines[-1] == b""
    read = [json.loads(line) for line in lines[:-1]]  # every line whole: a torn line fails to parse
    assert len(read) == 2 * (6 + len(words))
    assert sorted(e["direction"] for e in read) == sorted(CLIENT_SIDE[:6] + AGENT_SIDE[:6] + ["in", "out"] * 5000)


def test_a_request_cancelled_while_its_transport_sends_it_is_still_traced(tmp_path: Path) -> None:
    """A transport's send may hand the bytes over and then wait (Streamable HTTP: the POST is out,
    its 202 not yet in). A request cancelled then may have reached the peer, and the client then sends
    ``$/cancel_request`` for it: the trace must hold the request before that cancel. Seen in a full
    run under load: the HTTP client's trace lacked a ``session/prompt`` the agent had received."""
    import asyncio
    import socket

    from acp_bindings.connection import Connection

    trace = tmp_path / "client.ndjson"

    class PostLike:
        """Writes each message to a real socket, then waits for the peer's acknowledgement
        of the first one (never given: the request is cancelled meanwhile)."""

        def __init__(self, sock: socket.socket) -> None:
            self.sock, self.sent = sock, 0
            self.acknowledged = asyncio.Event()

        async def receive(self, limit: int) -> bytes | None:
            await asyncio.Event().wait()  # the peer never speaks
            return None

        async def ready(self) -> None:
            return None

        async def send(self, data: bytes) -> None:
            self.sock.sendall(data + b"\n")  # out on the wire
            self.sent += 1
            if self.sent == 1:
                await self.acknowledged.wait()

        async def close(self) -> None:
            return None

    async def scenario() -> bytes:
        ours, peer = socket.socketpair()
        with ours, peer:
            transport = PostLike(ours)

            async def nothing(message: Any) -> None:
                return None

            connection = Connection(transport, nothing, trace=trace)
            connection.start()
            waiting = asyncio.ensure_future(connection.request("session/prompt", {"sessionId": "s", "prompt": []}))
            while transport.sent == 0:
                await asyncio.sleep(0.01)
            waiting.cancel()
            with pytest.raises(asyncio.CancelledError):
                await waiting
            transport.acknowledged.set()
            while transport.sent < 2:  # the $/cancel_request, sent in the background
                await asyncio.sleep(0.01)
            await connection.close()
            peer.setblocking(False)
            return peer.recv(65536)

    wire = asyncio.run(scenario())
    assert [json.loads(line)["method"] for line in wire.splitlines()] == ["session/prompt", "$/cancel_request"]
    assert [e["message"].get("method") for e in entries(trace) if e["direction"] == "out"] == [
        "session/prompt",
        "$/cancel_request",
    ]
