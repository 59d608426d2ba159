"""OpenTelemetry, optional (issue 46, items 1 and 2): without it nothing changes and nothing of it
is imported; with providers set up by the application (``tests/support/otel_run.py``, the SDK with
exporters to files, in each process), a turn between a client and an agent, each its own process
over real pipes, is one trace: every request a CLIENT span in the client and a SERVER span in the
agent whose parent it is (the context travelled in ``params._meta``), with the RPC and JSON-RPC
attributes, the session's update stream counted, not spanned; and the metrics count what happened.
"""

from __future__ import annotations

import json
import os
import select
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from tests.support.otel_files import ECHO_AGENT, ENV, LIMIT, PYTHON, ROOT, counts, points, run, spans, traced

REPORTING_AGENT = """
import atexit, json, runpy, sys
path, report = sys.argv[1:]
def write():
    with open(report, "w") as file:
        json.dump(sorted(m for m in sys.modules if m.startswith("opentelemetry") and sys.modules[m]), file)
atexit.register(write)
sys.argv = [path]
runpy.run_path(path, run_name="__main__")
"""
"""The echo agent, writing at its exit which modules of OpenTelemetry it holds."""

CLIENT = """
import json, runpy, sys
case, path, *agent = sys.argv[1:]
if case == "absent":
    sys.modules["opentelemetry"] = None  # as if the otel extra were not installed
else:
    import opentelemetry.trace, opentelemetry.metrics  # imported by the application, no provider set
sys.argv = ["echo_client.py", "hi", *agent]
runpy.run_path(path, run_name="__main__")
from acp_bindings._runtime.connection import telemetry
print(json.dumps([sorted(m for m in sys.modules if m.startswith("opentelemetry") and sys.modules[m]),
                  telemetry.find() is None, "acp_bindings._runtime.connection.otel_library" in sys.modules]))
"""
"""The echo client, with OpenTelemetry absent or imported without a provider; then what it holds."""


@pytest.mark.slow
def test_without_opentelemetry_set_up_nothing_of_it_is_imported(tmp_path: Path) -> None:
    """A turn over real pipes imports nothing of OpenTelemetry where the application did not, installed
    (the agent) or not (the client, first run); where the application imported the API but set no
    provider (the client, second run), the runtime looks, finds the API's own no-op providers and records
    nothing."""
    for case in ("absent", "no-provider"):
        report = tmp_path / f"{case}.json"
        agent = ["--", PYTHON, "-c", REPORTING_AGENT, ECHO_AGENT, str(report)]
        lines = run([PYTHON, "-c", CLIENT, case, str(ROOT / "examples" / "echo_client.py"), *agent]).stdout.splitlines()
        assert lines[0] == "hi", lines
        modules, found_none, shim = json.loads(lines[-1])
        assert found_none, case
        if case == "no-provider":
            assert "opentelemetry.trace" in modules and shim  # looked, found the API's own proxies
        else:
            assert (modules, shim) == ([], False), case
        assert json.loads(report.read_text(encoding="utf-8")) == [], "the agent imported OpenTelemetry"


def test_a_turn_over_stdio_is_one_trace_across_the_client_and_the_agent_and_is_measured(tmp_path: Path) -> None:
    """The client and the agent, each its own process under ``otel_run``, over real pipes: one trace whose
    every request is a CLIENT span in the client and a SERVER span, its child, in the agent, with the RPC
    and JSON-RPC attributes; then the durations and message sizes each side recorded."""
    client, agent = tmp_path / "client", tmp_path / "agent"
    done = run([*traced(client), "-m", "tests.support.telemetry_client", "--spawn", "--", *traced(agent), ECHO_AGENT])
    assert done.stdout.splitlines() == ["_nope: -32601", "chunks: 5"], done.stdout
    check_spans(spans(client.with_suffix(".spans.jsonl")), spans(agent.with_suffix(".spans.jsonl")))
    check_metrics(points(client.with_suffix(".metrics.json")), points(agent.with_suffix(".metrics.json")))


def check_spans(sent: list[dict[str, Any]], handled: list[dict[str, Any]]) -> None:
    (turn,) = [s for s in sent if s["name"] == "turn"]
    calls = [s for s in sent if s["kind"] == "SpanKind.CLIENT"]
    assert [s["name"] for s in calls] == [
        "initialize",
        "session/new",
        "session/prompt",
        "session/prompt",
        "_nope",
        "session/cancel",
    ]
    trace_id = turn["context"]["trace_id"]
    assert {s["context"]["trace_id"] for s in sent + handled} == {trace_id}, "one trace"
    assert {s["parent_id"] for s in calls} == {turn["context"]["span_id"]}
    assert all(s["kind"] == "SpanKind.SERVER" for s in handled)
    by_id = {s["context"]["span_id"]: s for s in calls}
    assert sorted(by_id[s["parent_id"]]["name"] for s in handled) == sorted(s["name"] for s in calls)
    for each in handled:
        parent = by_id[each["parent_id"]]
        for key in ("rpc.system", "rpc.method", "rpc.jsonrpc.request_id", "rpc.jsonrpc.version", "acp.transport"):
            assert each["attributes"].get(key) == parent["attributes"].get(key), (key, each, parent)
        assert each["attributes"]["rpc.system"] == "jsonrpc"
        assert each["attributes"]["rpc.jsonrpc.version"] == "2.0"
        assert each["attributes"]["acp.transport"] == "stdio"
    assert [by_id[s["parent_id"]]["attributes"]["rpc.jsonrpc.request_id"] for s in handled[:3]] == ["1", "2", "3"]
    prompts = [s for s in sent + handled if s["name"] == "session/prompt"]
    assert [s["attributes"]["acp.session.updates"] for s in prompts] == [3, 2, 3, 2]
    assert {s["attributes"]["acp.session.id"] for s in prompts} == {"echo-1"}
    created = [s for s in sent + handled if s["name"] == "session/new"]
    assert [s["attributes"]["acp.session.id"] for s in created] == ["echo-1", "echo-1"]  # from the answer
    failed = [s for s in sent + handled if s["name"] == "_nope"]
    assert [s["attributes"]["rpc.jsonrpc.error_code"] for s in failed] == [-32601, -32601]
    assert [s["status"]["status_code"] for s in failed] == ["ERROR", "ERROR"]
    assert all(s["status"]["status_code"] == "UNSET" for s in sent + handled if s["name"] != "_nope")
    cancel = next(s for s in handled if s["name"] == "session/cancel")
    assert "rpc.jsonrpc.request_id" not in cancel["attributes"]
    assert by_id[cancel["parent_id"]]["name"] == "session/cancel"


def check_metrics(mine: dict[str, list[dict[str, Any]]], its: dict[str, list[dict[str, Any]]]) -> None:
    calls = {
        ("initialize", None, "stdio"): 1,
        ("session/new", None, "stdio"): 1,
        ("session/prompt", None, "stdio"): 2,
    }
    keys = ("rpc.method", "rpc.jsonrpc.error_code", "acp.transport")
    assert counts(mine["rpc.client.duration"], *keys) == {**calls, ("_nope", -32601, "stdio"): 1}
    # a method nobody handles is _OTHER on the side that answers: a peer cannot add series
    assert counts(its["rpc.server.duration"], *keys) == {**calls, ("_OTHER", -32601, "stdio"): 1}
    assert all(p["attributes"]["rpc.system"] == "jsonrpc" for p in mine["rpc.client.duration"])
    assert "rpc.server.duration" not in mine and "rpc.client.duration" not in its
    sizes = counts(mine["acp.message.size"], "acp.direction")
    # out: 5 requests and a notification; in: 5 answers and 5 updates
    assert sizes == {("out",): 6, ("in",): 10}
    assert counts(its["acp.message.size"], "acp.direction") == {("in",): 6, ("out",): 10}
    written = sum(p["sum"] for p in its["acp.message.size"] if p["attributes"]["acp.direction"] == "out")
    read = sum(p["sum"] for p in mine["acp.message.size"] if p["attributes"]["acp.direction"] == "in")
    assert written == read > 0


AGENT = """
import sys, json
for line in sys.stdin:
    m = json.loads(line)
    print(json.dumps({"jsonrpc": "2.0", "id": m["id"], "result": m["params"]}), flush=True)
"""
"""An agent that answers each request with its params."""

CODE = """
import asyncio, json, sys
from acp_bindings import Client, spawn_agent

class Quiet(Client):
    async def session_update(self, params): pass
    async def request_permission(self, params): raise NotImplementedError

async def main():
    async with spawn_agent([sys.executable, "-c", sys.argv[1]], Quiet()) as agent:
        got = await agent.ext_method("_echo", {"_meta": {"mine": [1], "traceparent": 5}, "x": 1})
    print(json.dumps(got))

asyncio.run(main())
"""
"""A client that sends its own ``_meta`` keys (a ``traceparent`` among them) and prints what came back."""


@pytest.mark.slow
def test_the_trace_context_joins_the_keys_a_client_put_in_meta(tmp_path: Path) -> None:
    """Traced, the client's own ``_meta`` keys travel as they were, its context beside them (its
    ``traceparent`` replaces the one the client put there); with nothing to add (metrics only),
    ``_meta`` travels untouched."""
    done = run([*traced(tmp_path / "spans"), "-c", CODE, AGENT], OTEL_RUN_METRICS="0")
    echoed = json.loads(done.stdout.splitlines()[-1])
    assert echoed["x"] == 1 and echoed["_meta"]["mine"] == [1]
    assert set(echoed["_meta"]) == {"mine", "traceparent"}
    (span,) = spans(tmp_path / "spans.spans.jsonl")
    trace_id, span_id = span["context"]["trace_id"][2:], span["context"]["span_id"][2:]
    assert echoed["_meta"]["traceparent"].startswith(f"00-{trace_id}-{span_id}-")
    done = run([*traced(tmp_path / "metrics"), "-c", CODE, AGENT], OTEL_RUN_SPANS="0")
    assert json.loads(done.stdout.splitlines()[-1]) == {"_meta": {"mine": [1], "traceparent": 5}, "x": 1}


def test_a_malformed_trace_context_from_the_peer_is_ignored(tmp_path: Path) -> None:
    """The agent reads only string values of the W3C keys, bounded: a number, an object, a string
    of 9,000 characters or a malformed one start a trace of its own; every request is answered. (The
    agent traces and measures nothing else: a tracer provider without a meter provider.)"""
    hostile = [5, {"a": 1}, "0" * 9000, "00-zz-yy-01", None]
    lines = "".join(
        json.dumps({"jsonrpc": "2.0", "id": n, "method": "_x", "params": {"_meta": {"traceparent": value}}}) + "\n"
        for n, value in enumerate(hostile, 1)
    )
    agent = subprocess.Popen(
        [*traced(tmp_path / "agent"), ECHO_AGENT],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        cwd=ROOT,
        env={**ENV, "OTEL_RUN_METRICS": "0"},
    )
    assert agent.stdin is not None and agent.stdout is not None
    try:
        agent.stdin.write(lines.encode())
        agent.stdin.flush()
        answers = _lines(agent.stdout.fileno(), len(hostile))  # then its input ends
    finally:
        agent.stdin.close()
        assert agent.wait(LIMIT) == 0
    assert sorted((a["id"], a["error"]["code"]) for a in answers) == [(n, -32601) for n in range(1, 6)]
    handled = spans(tmp_path / "agent.spans.jsonl")
    assert len(handled) == 5 and {s["parent_id"] for s in handled} == {None}
    assert len({s["context"]["trace_id"] for s in handled}) == 5


def _lines(fd: int, count: int) -> list[dict[str, Any]]:
    """``count`` JSON lines read from ``fd``, or what came within ``LIMIT`` seconds."""
    data, deadline = b"", time.monotonic() + LIMIT
    while data.count(b"\n") < count:
        ready, _, _ = select.select([fd], [], [], max(0.0, deadline - time.monotonic()))
        chunk = os.read(fd, 1 << 16) if ready else b""
        if not chunk:
            break
        data += chunk
    return [json.loads(line) for line in data.splitlines()]


def test_a_resumed_session_counts_the_events_caught_up(tmp_path: Path) -> None:
    """The resumable agent on stdio (issue 22's extension), under ``otel_run``: a turn of 10 chunks,
    then ``resume_session`` after event 4 sends 7 events again; ``acp.resume.events`` counts them
    (once: the host looks at the log before it answers, then sends)."""
    from acp_bindings.resume import EXTENSION, RESUME_SESSION

    from tests.support.peers.raw import RawPeer

    agent = ROOT / "tests" / "support" / "peers" / "resumable_agent.py"
    peer = RawPeer(ROOT / "tests" / "support" / "otel_run.py", str(tmp_path / "agent"), str(agent))
    try:
        params = {"protocolVersion": 1, "_meta": {EXTENSION: {"version": 1}}}
        peer.send_message({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": params})
        assert peer.read()["result"]["_meta"][EXTENSION]["token"]
        peer.send_message(
            {"jsonrpc": "2.0", "id": 1, "method": "session/new", "params": {"cwd": "/", "mcpServers": []}}
        )
        session = peer.read()["result"]["sessionId"]
        prompt = {"sessionId": session, "prompt": [{"type": "text", "text": "stream 10"}]}
        peer.send_message({"jsonrpc": "2.0", "id": 2, "method": "session/prompt", "params": prompt})
        assert len(peer.read_until(lambda m: m.get("id") == 2)) == 11
        resume = {"sessionId": session, "lastEventId": 4}
        peer.send_message({"jsonrpc": "2.0", "id": "r", "method": RESUME_SESSION, "params": resume})
        assert peer.read()["result"]["latestEventId"] == 11
        assert len([peer.read() for _ in range(7)]) == 7
    finally:
        assert peer.close() == 0
    found = points(tmp_path / "agent.metrics.json")
    assert [p["value"] for p in found["acp.resume.events"]] == [7]
    transports = {p["attributes"]["acp.transport"] for p in found["rpc.server.duration"]}
    assert transports == {"resumable"}
