"""``acpgen conformance trace`` on recorded traces, ``agent --url`` against remote agents, and the
kit against the official SDKs' echo agents (issues 31, 43, 47)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import ROOT
from tests.support.kit import LONG_PROMPT, kit, report, status

pytestmark = pytest.mark.slow

_report = report
_status = status


def _trace(tmp_path: Path, *lines: tuple[str, dict[str, Any]]) -> Path:
    path = tmp_path / "trace.jsonl"
    path.write_text(
        "".join(json.dumps({"direction": way, "message": message}) + "\n" for way, message in lines), encoding="utf-8"
    )
    return path


def test_a_recorded_trace_of_the_echo_example_conforms(tmp_path: Path) -> None:
    trace = tmp_path / "agent.jsonl"
    env = {**os.environ, "ACP_AGENT_TRACE": str(trace)}
    subprocess.run(
        [sys.executable, str(ROOT / "examples" / "echo_client.py")],
        env=env,
        check=True,
        capture_output=True,
        timeout=60,
    )
    done = kit("trace", str(trace), "--report-json", str(tmp_path / "report.json"))
    assert done.returncode == 0, done.stdout
    status = _status(_report(tmp_path / "report.json"))
    assert status["ACP-MSG-AGENT-SESSION-PROMPT-RESULT"] == "PASS"
    assert status["ACP-CLIENT-INIT-001"] == "PASS" and status["ACP-PEER-RPC-005"] == "PASS"
    assert status["ACP-CAP-FS-READ-TEXT-FILE-GATE"] == "PASS"


def test_a_trace_shows_gating_enum_and_pairing_failures(tmp_path: Path) -> None:
    session = {"sessionId": "s-1"}
    trace = _trace(
        tmp_path,
        ("out", {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}}),
        ("in", {"jsonrpc": "2.0", "id": 1, "result": {"protocolVersion": 1}}),
        ("out", {"jsonrpc": "2.0", "id": 2, "method": "session/new", "params": {"cwd": "/tmp", "mcpServers": []}}),
        ("in", {"jsonrpc": "2.0", "id": 2, "result": session}),
        ("out", {"jsonrpc": "2.0", "id": 3, "method": "session/prompt", "params": {**session, "prompt": []}}),
        ("in", {"jsonrpc": "2.0", "id": "f", "method": "fs/read_text_file", "params": {**session, "path": "/x"}}),
        ("in", {"jsonrpc": "2.0", "id": 3, "result": {"stopReason": "finished"}}),
        ("out", {"jsonrpc": "2.0", "id": 4, "method": "session/prompt", "params": {**session, "prompt": []}}),
    )
    done = kit("trace", str(trace), "--report-json", str(tmp_path / "report.json"))
    assert done.returncode == 1, done.stdout
    status = _status(_report(tmp_path / "report.json"))
    assert status["ACP-CAP-FS-READ-TEXT-FILE-GATE"] == "FAIL"  # the client advertised no fs
    assert status["ACP-ENUM-STOP-REASON"] == "FAIL"
    assert status["ACP-PEER-RPC-005"] == "FAIL"  # prompt 4 and the fs request never answered


def test_an_unreadable_trace_is_a_usage_error(tmp_path: Path) -> None:
    (tmp_path / "t.jsonl").write_text('{"no": "direction"}\n', encoding="utf-8")
    done = kit("trace", str(tmp_path / "t.jsonl"))
    assert done.returncode == 2 and "line 1 has no direction" in done.stderr


def _free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def test_the_remote_echo_example_conforms_over_both_profiles(tmp_path: Path) -> None:
    port = _free_port()
    server = subprocess.Popen(
        [sys.executable, str(ROOT / "examples" / "remote_agent.py"), "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        import socket

        deadline = time.monotonic() + 30
        while True:
            with socket.socket() as probe:
                if probe.connect_ex(("127.0.0.1", port)) == 0:
                    break
            assert time.monotonic() < deadline and server.poll() is None, "the remote example did not start"
            time.sleep(0.1)
        url = f"http://127.0.0.1:{port}/acp"
        for transport in ("http", "ws"):
            report = tmp_path / f"{transport}.json"
            done = kit(
                "agent",
                "--url",
                url,
                "--transport",
                transport,
                "--timeout",
                "5",
                "--cancel-prompt",
                LONG_PROMPT,
                "--report-json",
                str(report),
            )
            assert done.returncode == 0, done.stdout
            status = _status(_report(report))
            assert status["ACP-AGENT-CANCEL-001"] == "PASS"
            assert [k for k, v in status.items() if v == "FAIL"] == ["ACP-AGENT-SESSION-005"]  # no MCP: ADVISORY
            assert _report(report)["transport"] == transport
    finally:
        server.terminate()
        server.wait(30)


def test_an_unreachable_remote_agent_is_a_usage_error() -> None:
    """Issue 43 item 9: one line, exit 2, no FAIL lines."""
    url = f"http://127.0.0.1:{_free_port()}/acp"
    for transport in ("http", "ws"):
        done = kit("agent", "--url", url, "--transport", transport, "--timeout", "2")
        assert done.returncode == 2 and done.stdout == "", done.stdout
        assert len(done.stderr.strip().splitlines()) == 1 and url in done.stderr, done.stderr


def test_url_and_command_together_are_a_usage_error() -> None:
    done = kit("agent", "--url", "http://127.0.0.1:9/acp", "--", "true")
    assert done.returncode == 2 and "not both" in done.stderr


NODE_AGENT = ROOT / "tests" / "interop" / "conformance_echo_agent.mjs"
SDK = ROOT / "tests" / "interop" / "node_modules" / "@agentclientprotocol" / "sdk"


@pytest.mark.interop
def test_the_kit_checks_an_echo_agent_on_the_typescript_sdk(tmp_path: Path) -> None:
    if not SDK.is_dir():
        pytest.fail("the pinned TypeScript SDK is missing: run `make interop-deps` (make test does)")
    done = kit(
        "agent",
        "--timeout",
        "5",
        "--cancel-prompt",
        LONG_PROMPT,
        "--report-json",
        str(tmp_path / "report.json"),
        "--",
        "node",
        str(NODE_AGENT),
    )
    report = _report(tmp_path / "report.json")
    findings = [(r["id"], r["citation"]["url"]) for r in report["requirements"] if r["status"] == "FAIL"]
    print(f"TypeScript SDK echo agent: {report['verdict']['line']}; findings: {findings}")
    assert done.returncode in (0, 1) and report["verdict"]["line"].startswith("VERDICT: ")
    assert report["advertised"]["agent"]["agentInfo"]["name"] == "acpgen-conformance-echo-agent"


PYTHON_SDK_AGENT = ROOT / "tests" / "support" / "peers" / "sdk_echo_agent.py"
PYTHON_SDK_CLIENT = ROOT / "tests" / "support" / "peers" / "sdk_echo_client.py"


@pytest.mark.interop
def test_the_kit_checks_an_echo_agent_on_the_python_sdk(tmp_path: Path) -> None:
    """An echo agent on the official Python SDK (a dev dependency): what the kit finds is recorded
    (printed with its citations), not a failure of ours; the report must be whole and name the agent."""
    done = kit(
        "agent",
        "--timeout",
        "5",
        "--cancel-prompt",
        LONG_PROMPT,
        "--report-json",
        str(tmp_path / "report.json"),
        "--",
        sys.executable,
        str(PYTHON_SDK_AGENT),
    )
    report = _report(tmp_path / "report.json")
    findings = [(r["id"], r["citation"]["url"]) for r in report["requirements"] if r["status"] == "FAIL"]
    print(f"Python SDK echo agent: {report['verdict']['line']}; findings: {findings}")
    assert done.returncode in (0, 1) and report["verdict"]["line"].startswith("VERDICT: ")
    assert report["advertised"]["agent"]["agentInfo"]["name"] == "acpgen-conformance-python-sdk-agent"
    assert _status(report)["ACP-AGENT-CANCEL-001"] == "PASS"  # the turn was cancelled: the kit drove it
