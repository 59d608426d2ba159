"""OpenTelemetry through the relay (issue 46, item 2): a client, ``acpgen relay`` and the echo agent, each
its own process under ``tests/support/otel_run.py`` (the SDK set up as an application does, spans and
metrics written to files), the client over WebSocket, the agent over the relay's pipes. The turn is one
trace: the relay passes each message byte for byte, so its span of a request and the agent's are both
children of the client's (the context travels in ``params._meta``); the relay's gauges are scraped
with Prometheus's text format while the connection is open, its counters read at its exit.
"""

from __future__ import annotations

import re
import signal
import subprocess
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.support.otel_files import ECHO_AGENT, ENV, LIMIT, ROOT, counts, points, run, spans, traced, values

pytestmark = pytest.mark.slow


def _relay(prefix: Path, agent: Path, port_file: Path) -> subprocess.Popen[str]:
    """``acpgen relay`` of the echo agent, both under ``otel_run``; the relay also serves Prometheus."""
    command = [*traced(prefix), "-m", "acpgen", "relay", "--port", "0", "--", *traced(agent), ECHO_AGENT]
    return subprocess.Popen(
        command,
        cwd=ROOT,
        env={**ENV, "OTEL_RUN_PROMETHEUS": str(port_file)},
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )


def _scraped(page: str) -> dict[str, float]:
    """The samples of a Prometheus text page named ``acp_...``, by name and labels but the scope's."""
    found = {}
    for line in page.splitlines():
        if line.startswith("acp_"):
            name, value = line.rsplit(" ", 1)
            found[re.sub(r',?otel_scope_[a-z_]+="[^"]*"', "", name).replace("{}", "")] = float(value)
    return found


def test_a_turn_through_the_relay_is_one_trace_and_its_gauges_can_be_scraped(tmp_path: Path) -> None:
    client, relay, agent, port_file = (tmp_path / name for name in ("client", "relay", "agent", "port"))
    process = _relay(relay, agent, port_file)
    try:
        assert process.stderr is not None
        first = process.stderr.readline()
        found = re.search(r"at (http://\S+)", first)
        assert found, f"no URL on the relay's first line: {first!r}"
        url, metrics = found.group(1), f"http://127.0.0.1:{port_file.read_text(encoding='utf-8')}/metrics"
        # refused before any agent runs: counted by reason
        assert httpx.post(url, content=b"{}", headers={"origin": "http://elsewhere.invalid"}).status_code == 403
        scrape = ["--scrape", metrics, "--scraped", str(tmp_path / "scraped.txt")]
        command = [*traced(client), "-m", "tests.support.telemetry_client", "--url", url, "--transport", "ws"]
        done = run([*command, *scrape])
        assert done.stdout.splitlines() == ["_nope: -32601", "chunks: 5"], done.stdout
        process.send_signal(signal.SIGTERM)  # a graceful stop: the relay writes its metrics at exit
        assert process.wait(LIMIT) in (0, 143, -signal.SIGTERM)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    sent, carried, handled = (spans(p.with_suffix(".spans.jsonl")) for p in (client, relay, agent))
    _check_spans(sent, carried, handled)
    gauges = _scraped((tmp_path / "scraped.txt").read_text(encoding="utf-8"))
    assert gauges['acp_connections_open{acp_profile="websocket"}'] == 1.0, gauges
    assert gauges["acp_relay_agents"] == 1.0, gauges
    assert gauges['acp_relay_agent_starts_total{acp_outcome="started"}'] == 1.0, gauges
    at_exit = points(relay.with_suffix(".metrics.json"))
    assert values(at_exit["acp.connections.refused"], "acp.refusal") == {("origin",): 1}
    assert values(at_exit["acp.relay.agent.starts"], "acp.outcome") == {("started",): 1}
    keys = ("rpc.method", "acp.transport")
    assert (
        counts(points(client.with_suffix(".metrics.json"))["rpc.client.duration"], *keys)[
            ("session/prompt", "websocket")
        ]
        == 2
    )


def _check_spans(sent: list[dict[str, Any]], carried: list[dict[str, Any]], handled: list[dict[str, Any]]) -> None:
    """Every request and notification the client sent: its CLIENT span is the parent of the relay's span
    of it (SERVER, marked ``acp.relay``) and of the agent's; all in the client's trace."""
    (turn,) = [s for s in sent if s["name"] == "turn"]
    trace_id = turn["context"]["trace_id"]
    assert {s["context"]["trace_id"] for s in sent + carried + handled} == {trace_id}, "one trace"
    calls = {s["context"]["span_id"]: s for s in sent if s["kind"] == "SpanKind.CLIENT"}
    assert len(calls) == 6
    for side in (carried, handled):
        assert sorted(calls[s["parent_id"]]["name"] for s in side) == sorted(s["name"] for s in calls.values())
        assert all(s["kind"] == "SpanKind.SERVER" for s in side)
    for each in carried:
        attributes, parent = each["attributes"], calls[each["parent_id"]]["attributes"]
        assert attributes["acp.relay"] is True and attributes["acp.transport"] == "websocket"
        assert attributes.get("rpc.jsonrpc.request_id") == parent.get("rpc.jsonrpc.request_id")
        assert attributes["rpc.method"] == parent["rpc.method"]
    assert {s["attributes"]["acp.transport"] for s in handled} == {"stdio"}
    assert {s["attributes"]["acp.transport"] for s in calls.values()} == {"websocket"}
    relayed = {s["name"]: s for s in carried}
    assert relayed["_nope"]["attributes"]["rpc.jsonrpc.error_code"] == -32601
    assert relayed["_nope"]["status"]["status_code"] == "ERROR"
    assert relayed["session/new"]["attributes"]["acp.session.id"] == "echo-1"
    assert sorted(s["attributes"].get("acp.session.updates") for s in carried if s["name"] == "session/prompt") == [
        2,
        3,
    ]
