"""The conformance kit of every generated package (issue 31): ``python -m <pkg>.conformance agent
-- AGENT COMMAND...`` run as a user runs it, against real agent processes on real pipes: our
examples and the README's agent conform; a small agent with one deliberate defect is reported as a
FAIL of the requirement it breaks (its conforming twin passes with no FAIL); a dead or hanging
agent ends in a report; the reports (terminal, JSON, JUnit) and exit codes are those documented.
The echo agent on the official TypeScript SDK is checked too: what the kit finds there is
recorded (printed), not a failure of ours."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any
from xml.etree import ElementTree as ET

import pytest

from tests.conftest import GENERATED, ROOT
from tests.support.peers.conformance_agent import AUTH_METHOD
from tests.support.peers.conformance_agent import DEFECTS as PEER_DEFECTS

pytestmark = pytest.mark.slow

PEER = ROOT / "tests" / "support" / "peers" / "conformance_agent.py"
LONG_PROMPT = " ".join(["w"] * 60_000)
"""Long enough that the echo agent (a chunk per word) still streams when the kit cancels, on a
quiet machine too (5,000 words ended first there: the cancel is then SKIPPED), and under the
128 KiB an argument may hold."""
LIMIT = 300
"""Seconds for one run of the kit: only stops a hang."""


def kit(
    *args: str, package: str = "acp_bindings", cwd: Path = GENERATED, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", f"{package}.conformance", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=LIMIT,
        check=False,
        env=env,
    )


def _report(path: Path) -> dict[str, Any]:
    report: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return report


def _status(report: dict[str, Any]) -> dict[str, str]:
    return {r["id"]: r["status"] for r in report["requirements"]}


def test_the_echo_example_conforms_and_its_cancel_lands(tmp_path: Path) -> None:
    done = kit(
        "agent",
        "--timeout",
        "5",
        "--cancel-prompt",
        LONG_PROMPT,
        "--report-json",
        str(tmp_path / "report.json"),
        "--junit",
        str(tmp_path / "junit.xml"),
        "--",
        sys.executable,
        str(ROOT / "examples" / "echo_agent.py"),
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.rstrip().splitlines()[-1] == "VERDICT: CONFORMANT"
    report = _report(tmp_path / "report.json")
    status = _status(report)
    assert status["ACP-AGENT-CANCEL-001"] == "PASS" and status["ACP-AGENT-CANCEL-002"] == "PASS"
    assert status["ACP-AGENT-SESSION-002"] == "PASS" and status["ACP-AGENT-INIT-004"] == "PASS"
    assert status["ACP-PEER-CANCELREQ-001"] == "PASS"  # the runtime answers a request cancelled early
    assert "FAIL" not in status.values()
    assert report["verdict"]["conformant"] is True
    assert report["advertised"]["agent"]["agentInfo"] == {"name": "echo-agent", "version": "1.0.0"}
    assert report["protocol_version"] == 1 and "@agentclientprotocol/sdk@" in report["schema"]
    assert report["agent_command"][-1].endswith("echo_agent.py")
    every = {r["id"] for r in report["requirements"]}
    from acp_bindings.conformance import REQUIREMENTS

    assert every == {r.id for r in REQUIREMENTS if r.side in ("agent", "both")}
    for r in report["requirements"]:
        assert r["tier"] in ("MANDATORY", "CAPABILITY", "ADVISORY", "INFORMATIONAL")
        assert r["status"] in ("PASS", "FAIL", "SKIPPED", "NOT_TESTED")
        assert r["citation"]["url"] and r["source"]
    suite = ET.parse(tmp_path / "junit.xml").getroot()
    assert suite.get("failures") == "0" and int(suite.get("tests", "0")) == len(report["requirements"])


AUTH = ("--auth-method", AUTH_METHOD)


@pytest.mark.parametrize(
    ("flags", "options"),
    [(("--load",), ()), (("--load", "--auth", "--modes", "--sessions"), AUTH)],
    ids=["load", "everything"],
)
def test_the_conforming_twin_passes_with_no_fail(
    flags: tuple[str, ...], options: tuple[str, ...], tmp_path: Path
) -> None:
    done = kit(
        "agent",
        "--timeout",
        "5",
        *options,
        "--cancel-prompt",
        LONG_PROMPT,
        "--report-json",
        str(tmp_path / "report.json"),
        "--",
        sys.executable,
        str(PEER),
        *flags,
    )
    assert done.returncode == 0, done.stdout
    assert done.stdout.rstrip().splitlines()[-1] == "VERDICT: CONFORMANT"
    status = _status(_report(tmp_path / "report.json"))
    assert "FAIL" not in status.values()
    assert status["ACP-AGENT-LOAD-002"] == "PASS"  # it advertised loadSession: exercised
    assert status["ACP-CAP-SESSION-LOAD-HONOR"] == "PASS"
    assert status["ACP-CAP-FS-READ-TEXT-FILE-GATE"] == "PASS"
    assert status["ACP-AGENT-PROMPT-005"] == status["ACP-AGENT-PROMPT-006"] == "PASS"  # its turns make a tool call
    assert status["ACP-AGENT-PROMPT-007"] == "PASS"  # at line 1
    assert status["ACP-PEER-RPC-002"] == status["ACP-PEER-EXT-003"] == "PASS"  # id null; a prompt carrying _meta
    assert status["ACP-AGENT-SESSION-003"] == status["ACP-AGENT-PROC-002"] == "PASS"  # recorded (INFORMATIONAL)
    assert status["ACP-PEER-RPC-011"] == "PASS"  # its error messages are one line
    authenticated = ("ACP-AGENT-AUTH-001", "ACP-AGENT-AUTH-002", "ACP-AGENT-AUTH-005", "ACP-HANDLER-AGENT-AUTHENTICATE")
    wanted = "PASS" if "--auth" in flags else "SKIPPED"  # advertised authMethods: exercised
    assert {status[rid] for rid in authenticated} == {wanted}
    modes = ("ACP-AGENT-MODES-001", "ACP-AGENT-MODES-002", "ACP-AGENT-CONFIG-001", "ACP-AGENT-CONFIG-002")
    handlers = ("ACP-HANDLER-AGENT-SESSION-SET-MODE", "ACP-HANDLER-AGENT-SESSION-SET-CONFIG-OPTION")
    wanted = "PASS" if "--modes" in flags else "SKIPPED"  # modes and config options handed out: exercised
    assert {status[rid] for rid in modes + handlers} == {wanted}
    families = [f"ACP-AGENT-{f}-00{n}" for f in ("LIST", "RESUME", "CLOSE", "DELETE") for n in (1, 2)]
    families += ["ACP-AGENT-LIST-003", "ACP-AGENT-DELETE-003"]
    content = [f"ACP-CAP-CONTENT-BLOCK-{tag}-HONOR" for tag in ("IMAGE", "AUDIO", "RESOURCE")]
    wanted = "PASS" if "--sessions" in flags else "SKIPPED"  # the session families and content advertised
    assert {status[rid] for rid in families + content} == {wanted}


DEFECTS = [
    # (defect, the -k scenario that shows it, the requirement it breaks, kit options it needs)
    ("echo-version", "initialize-unsupported", "ACP-AGENT-INIT-003", ()),
    ("unspoken-version", "initialize-unsupported", "ACP-AGENT-INIT-003", ()),
    ("no-protocol-version", "initialize", "ACP-AGENT-INIT-001", ()),
    ("string-version", "initialize", "ACP-AGENT-INIT-001", ()),
    ("minimal-init-refused", "initialize-minimal", "ACP-AGENT-INIT-005", ()),
    ("auth-refused", "authenticate", "ACP-AGENT-AUTH-002", AUTH),
    ("auth-ignored", "authenticate", "ACP-AGENT-AUTH-002", AUTH),
    ("auth-any-id", "authenticate", "ACP-AGENT-AUTH-005", AUTH),
    ("duplicate-auth-ids", "initialize", "ACP-AGENT-AUTH-001", AUTH),
    ("same-session-id", "session-new", "ACP-AGENT-SESSION-002", ()),
    ("no-session-id", "session-new", "ACP-AGENT-SESSION-001", ()),
    ("mcp-refused", "mcp-stdio", "ACP-AGENT-SESSION-004", ()),
    ("unoffered-current-mode", "session-new", "ACP-AGENT-MODES-001", ()),
    ("mode-update-unoffered", "session-new", "ACP-AGENT-MODES-002", ()),
    ("unoffered-config-value", "session-new", "ACP-AGENT-CONFIG-001", ()),
    ("partial-config-answer", "session-new", "ACP-AGENT-CONFIG-002", ()),
    ("list-ignores-cwd", "session-families", "ACP-AGENT-LIST-002", ()),
    ("unknown-cursor-accepted", "session-families", "ACP-AGENT-LIST-003", ()),
    ("resume-replays", "session-families", "ACP-AGENT-RESUME-002", ()),
    ("close-keeps-turn", "session-families", "ACP-AGENT-CLOSE-002", ()),
    ("delete-keeps-listing", "session-families", "ACP-AGENT-DELETE-003", ()),
    ("image-refused", "prompt-content", "ACP-CAP-CONTENT-BLOCK-IMAGE-HONOR", ()),
    ("bad-stop-reason", "prompt-text", "ACP-ENUM-STOP-REASON", ()),
    ("crash-on-prompt", "prompt-text", "ACP-AGENT-PROMPT-001", ()),
    ("update-after-answer", "prompt-text", "ACP-AGENT-PROMPT-004", ()),
    ("unannounced-tool-update", "prompt-text", "ACP-AGENT-PROMPT-005", ()),
    ("other-session-update", "prompt-text", "ACP-AGENT-PROMPT-002", ()),
    ("invalid-update", "prompt-text", "ACP-AGENT-PROMPT-002", ()),
    ("relative-path", "prompt-text", "ACP-AGENT-PROMPT-006", ()),
    ("zero-line", "prompt-text", "ACP-AGENT-PROMPT-007", ()),
    ("meta-refused", "prompt-meta", "ACP-PEER-EXT-003", ()),
    ("resource-link-refused", "prompt-resource-link", "ACP-AGENT-PROMPT-003", ()),
    ("fs-unadvertised", "prompt-text", "ACP-CAP-FS-READ-TEXT-FILE-GATE", ()),
    ("ignore-cancel", "cancel", "ACP-AGENT-CANCEL-001", ()),
    ("update-after-cancel", "cancel", "ACP-AGENT-CANCEL-002", ()),
    ("cancel-request-unanswered", "cancel-request", "ACP-PEER-CANCELREQ-001", ()),
    ("no-replay", "load", "ACP-AGENT-LOAD-002", ()),
    ("ext-unanswered", "unknown-methods", "ACP-PEER-EXT-001", ()),
    ("unknown-not-32601", "unknown-methods", "ACP-PEER-RPC-006", ()),
    ("answer-notification", "notifications", "ACP-PEER-RPC-004", ()),
    ("answer-unknown-notification", "notifications", "ACP-PEER-RPC-004", ()),
    ("wrong-id", "ids", "ACP-PEER-RPC-001", ()),
    ("zero-id-null", "ids", "ACP-PEER-RPC-001", ()),
    ("large-id-as-float", "ids", "ACP-PEER-RPC-001", ()),
    ("null-id-as-notification", "ids", "ACP-PEER-RPC-002", ()),
    ("parse-error-id", "malformed", "ACP-PEER-RPC-009", ()),
    ("silent-parse-error", "malformed", "ACP-PEER-RPC-007", ()),
    ("invalid-request-as-parse-error", "malformed", "ACP-PEER-RPC-008", ()),
    ("string-error-code", "unknown-methods", "ACP-PEER-RPC-003", ()),
    ("traceback-error", "unknown-methods", "ACP-PEER-RPC-011", ()),
    ("answer-twice", "session-new", "ACP-PEER-RPC-005", ()),
    ("banner", "prompt-text", "ACP-PEER-TRANSPORT-001", ()),
    ("blank-line", "session-new", "ACP-PEER-TRANSPORT-001", ()),
    ("pretty-updates", "prompt-text", "ACP-PEER-TRANSPORT-001", ()),
    ("latin1-output", "prompt-text", "ACP-PEER-TRANSPORT-002", ()),
    ("linger", "session-new", "ACP-AGENT-PROC-001", ("--close-grace", "0.3")),
]


def test_every_defect_of_the_peer_is_tested() -> None:
    tested = {d: r for d, _, r, _ in DEFECTS}
    assert len(tested) == len(DEFECTS) >= 20
    assert set(tested) | {"no-agent-info"} == set(PEER_DEFECTS)
    # the peer's table names the requirement (a stop reason the schema lacks also fails the derived enum one)
    assert all(PEER_DEFECTS[d] == r for d, r in tested.items() if d != "bad-stop-reason")


@pytest.mark.parametrize(("defect", "scenario", "requirement", "options"), DEFECTS, ids=[d[0] for d in DEFECTS])
def test_an_agent_with_one_defect_fails_the_requirement_it_breaks(
    defect: str, scenario: str, requirement: str, options: tuple[str, ...], tmp_path: Path
) -> None:
    done = kit(
        "agent",
        "-k",
        scenario,
        "--timeout",
        "3",
        "--startup-timeout",
        "3",
        *options,
        "--cancel-prompt",
        LONG_PROMPT,
        "--report-json",
        str(tmp_path / "report.json"),
        "--",
        sys.executable,
        str(PEER),
        "--defect",
        defect,
    )
    assert done.returncode == 1, done.stdout
    assert done.stdout.rstrip().splitlines()[-1].startswith("VERDICT: NOT CONFORMANT (")
    report = _report(tmp_path / "report.json")
    entry = next(r for r in report["requirements"] if r["id"] == requirement)
    failures = [r["id"] for r in report["requirements"] if r["status"] == "FAIL"]
    assert entry["status"] == "FAIL" and PEER_DEFECTS[defect] in failures, failures  # the peer's table agrees
    failed = next(c for c in entry["checks"] if c["status"] == "FAIL")
    assert failed["transcript"] and {line["dir"] for line in failed["transcript"]} >= {"sent"}
    assert "stderr" in failed
    assert re.search(rf"FAIL\s+{requirement}", done.stdout)
    counts = report["verdict"]["tier_counts"]
    counted = counts["MANDATORY"]["FAIL"] + counts["CAPABILITY"]["FAIL"]
    if entry["tier"] in ("MANDATORY", "CAPABILITY"):  # it alone makes the agent not conformant
        assert counted >= 1 and f"({counts['MANDATORY']['FAIL']} mandatory failures" in done.stdout
    else:  # ADVISORY: reported, never counted (here -k alone leaves the run not conformant)
        assert counted == 0, failures


def test_an_agent_without_agent_info_fails_the_advisory_requirement_and_still_conforms(tmp_path: Path) -> None:
    done = kit(
        "agent",
        "--timeout",
        "3",
        "--cancel-prompt",
        LONG_PROMPT,
        "--report-json",
        str(tmp_path / "report.json"),
        "--",
        sys.executable,
        str(PEER),
        "--defect",
        "no-agent-info",
    )
    assert done.returncode == 0, done.stdout
    assert done.stdout.rstrip().splitlines()[-1] == "VERDICT: CONFORMANT"
    assert re.search(r"FAIL\s+ACP-AGENT-INIT-004", done.stdout)
    report = _report(tmp_path / "report.json")
    assert [r["id"] for r in report["requirements"] if r["status"] == "FAIL"] == ["ACP-AGENT-INIT-004"]
    assert report["verdict"]["conformant"] is True and report["verdict"]["tier_counts"]["ADVISORY"]["FAIL"] == 1


def test_a_dead_agent_ends_in_a_report(tmp_path: Path) -> None:
    start = time.monotonic()
    done = kit(
        "agent",
        "-k",
        "session-new",
        "--report-json",
        str(tmp_path / "report.json"),
        "--",
        sys.executable,
        "-c",
        "import sys; print('cannot start', file=sys.stderr); sys.exit(3)",
    )
    assert done.returncode == 1 and time.monotonic() - start < 60
    assert "VERDICT: NOT CONFORMANT" in done.stdout and "did it start?" in done.stdout
    report = _report(tmp_path / "report.json")
    init = next(r for r in report["requirements"] if r["id"] == "ACP-AGENT-INIT-001")
    assert init["status"] == "FAIL" and "cannot start" in init["checks"][0]["stderr"]


def test_a_hanging_agent_ends_in_a_report(tmp_path: Path) -> None:
    start = time.monotonic()
    done = kit(
        "agent",
        "-k",
        "session-new",
        "--startup-timeout",
        "1",
        "--timeout",
        "1",
        "--close-grace",
        "0.2",
        "--",
        sys.executable,
        "-c",
        "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(600)",
    )
    assert done.returncode == 1 and time.monotonic() - start < 60, done.stdout
    assert "FAIL       ACP-AGENT-INIT-001" in done.stdout
    assert "ACP-AGENT-PROC-001" in done.stdout or "NOT CONFORMANT" in done.stdout


@pytest.mark.parametrize(
    "args",
    [["agent"], ["agent", "--"], ["agent", "--agent-env", "NOEQUALS", "--", "true"], ["nonsense", "--", "true"]],
)
def test_usage_errors_exit_2(args: list[str]) -> None:
    done = kit(*args)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "usage:" in done.stderr


def test_the_readme_agent_conforms(tmp_path: Path) -> None:
    from tests.system.test_readme import README_BLOCKS

    block = next(b for b in README_BLOCKS if b.mode == "save" and b.argument == "my_agent.py")
    agent = tmp_path / "my_agent.py"
    agent.write_text(block.code.replace("myapp._acp", "acp_bindings"), encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(GENERATED)}
    done = kit("agent", "--timeout", "5", "--", sys.executable, str(agent), env=env)
    assert done.returncode == 0, done.stdout
    assert done.stdout.rstrip().endswith("VERDICT: CONFORMANT")


@pytest.mark.parametrize("package", ["acp_bindings_unstable", "acp_bindings_v2"])
def test_every_build_carries_the_kit_of_its_schema(package: str, tmp_path: Path) -> None:
    done = kit(
        "agent",
        "-k",
        "prompt-text",
        "--report-json",
        str(tmp_path / "report.json"),
        "--",
        sys.executable,
        str(PEER),
        package=package,
    )
    report = _report(tmp_path / "report.json")
    sources = {r["source"] for r in report["requirements"]}
    if package.endswith("_v2"):
        assert sources <= {s for s in sources if s.startswith("derived:")}  # the draft: derived only
        assert done.returncode == 1 and report["verdict"]["blocked_by_version_mismatch"]  # a v1 agent
    else:
        assert "curated" in sources and done.returncode == 1  # -k leaves mandatory requirements NOT_TESTED
        ids = {r["id"] for r in report["requirements"]}
        assert "ACP-MSG-AGENT-SESSION-FORK-RESULT" in ids  # an unstable method's requirements


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


@pytest.mark.interop
def test_the_kit_checks_a_client_on_the_python_sdk(tmp_path: Path) -> None:
    done = kit(
        "client",
        "--scenario-timeout",
        "60",
        "--report-json",
        str(tmp_path / "r.json"),
        "--",
        sys.executable,
        str(PYTHON_SDK_CLIENT),
        "{agent}",
    )
    report = _report(tmp_path / "r.json")
    findings = [(r["id"], r["citation"]["url"]) for r in report["requirements"] if r["status"] == "FAIL"]
    print(f"Python SDK client: {report['verdict']['line']}; findings: {findings}")
    assert done.returncode in (0, 1) and report["client_exit_code"] == 0, report["client_stderr"][-500:]
    assert _status(report)["ACP-CLIENT-SESSION-001"] == "PASS"  # it reached session/new: the kit drove it


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
            assert status["ACP-AGENT-CANCEL-001"] == "PASS" and "FAIL" not in status.values()
            assert _report(report)["transport"] == transport
    finally:
        server.terminate()
        server.wait(30)


def test_an_unreachable_remote_agent_ends_in_a_report() -> None:
    done = kit("agent", "-k", "session-new", "--url", f"http://127.0.0.1:{_free_port()}/acp", "--timeout", "2")
    assert done.returncode == 1 and "connection attempts failed" in done.stdout, done.stdout


def test_url_and_command_together_are_a_usage_error() -> None:
    done = kit("agent", "--url", "http://127.0.0.1:9/acp", "--", "true")
    assert done.returncode == 2 and "not both" in done.stderr


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


CLIENT = ROOT / "tests" / "support" / "peers" / "conformance_client.py"


def test_the_echo_client_example_conforms(tmp_path: Path) -> None:
    done = kit(
        "client",
        "--scenario-timeout",
        "60",
        "--report-json",
        str(tmp_path / "report.json"),
        "--",
        sys.executable,
        str(ROOT / "examples" / "echo_client.py"),
        "hello",
        "--",
        "{agent}",
    )
    assert done.returncode == 0, done.stdout
    report = _report(tmp_path / "report.json")
    status = _status(report)
    assert status["ACP-CLIENT-SESSION-001"] == "PASS" and status["ACP-CLIENT-EXT-001"] == "PASS"
    assert status["ACP-CAP-SESSION-LOAD-GATE"] == "PASS" and report["client_exit_code"] == 0
    assert "FAIL" not in status.values(), [k for k, v in status.items() if v == "FAIL"]  # advisory ones too


@pytest.mark.parametrize("transport", ["http", "ws"])
def test_the_remote_client_example_conforms_against_the_served_probe(transport: str, tmp_path: Path) -> None:
    """``client --serve``: the probe agent served by the package's relay at ``{url}``, the client being
    ``connect_agent`` (examples/remote_client.py) over either profile; what needs malformed lines is
    SKIPPED (each message is framed by the transport), the rest is judged as over stdio."""
    done = kit(
        "client",
        "--serve",
        "--scenario-timeout",
        "60",
        "--report-json",
        str(tmp_path / "report.json"),
        "--",
        sys.executable,
        str(ROOT / "examples" / "remote_client.py"),
        "--url",
        "{url}",
        "--transport",
        transport,
        "one",
        "two",
    )
    assert done.returncode == 0, done.stdout
    report = _report(tmp_path / "report.json")
    status = _status(report)
    assert status["ACP-CLIENT-SESSION-001"] == "PASS" and status["ACP-CLIENT-PERM-001"] == "PASS", done.stdout
    assert status["ACP-CLIENT-EXT-001"] == "PASS" and status["ACP-CLIENT-INIT-005"] == "PASS"
    assert status["ACP-PEER-RPC-009"] == "SKIPPED" and report["client_exit_code"] == 0
    assert "FAIL" not in status.values(), [k for k, v in status.items() if v == "FAIL"]  # advisory ones too


def test_serve_without_the_url_in_the_command_reaches_no_probe(tmp_path: Path) -> None:
    """A remote client given no address never speaks to the probe: the report says so."""
    done = kit(
        "client", "--serve", "--scenario-timeout", "20", "--report-json", str(tmp_path / "r.json"), "--",
        sys.executable, "-c", "pass",
    )  # fmt: skip
    assert done.returncode == 1 and "VERDICT: NOT CONFORMANT" in done.stdout
    messages = [r["checks"] for r in _report(tmp_path / "r.json")["requirements"] if r["id"] == "ACP-CLIENT-INIT-001"]
    assert "pass {url} or read ACP_CONFORMANCE_URL" in str(messages), messages


CLIENT_DEFECTS = [
    # (defect, the requirement it FAILs, the verdict, the other FAILs it may bring along)
    ("relative-cwd", "ACP-CLIENT-SESSION-001", 1, ()),
    ("unoffered-option", "ACP-CLIENT-PERM-001", 1, ()),
    ("unknown-session", "ACP-CLIENT-PROMPT-001", 1, ()),
    ("load-unadvertised", "ACP-CAP-SESSION-LOAD-GATE", 1, ()),
    ("prompt-first", "ACP-CLIENT-INIT-001", 1, ("ACP-CLIENT-PROMPT-001",)),  # its prompt names no session
    ("ext-unanswered", "ACP-PEER-EXT-001", 1, ("ACP-PEER-RPC-005",)),  # a request unanswered
    ("fs-read-error", "ACP-CLIENT-FS-001", 1, ()),
    ("fs-write-ignored", "ACP-CLIENT-FS-002", 1, ()),
    ("terminal-output-shape", "ACP-CLIENT-TERM-001", 1, ("ACP-MSG-CLIENT-TERMINAL-OUTPUT-RESULT",)),
    # a crash leaves the request in flight (a `_` one) unanswered
    ("crash-unknown-update", "ACP-CLIENT-EXT-001", 1, ("ACP-PEER-RPC-005", "ACP-PEER-EXT-001")),
    ("crash-meta", "ACP-PEER-EXT-003", 1, ("ACP-PEER-RPC-005", "ACP-PEER-EXT-001")),
    ("parse-error-unanswered", "ACP-PEER-RPC-007", 0, ()),  # ADVISORY: still conformant
    ("invalid-request-id", "ACP-PEER-RPC-009", 1, ()),
    ("cancel-as-request", "ACP-MSG-AGENT-SESSION-CANCEL-FORM", 1, ()),
    ("two-prompts", "ACP-CLIENT-PROMPT-002", 0, ()),  # ADVISORY
    ("version-string", "ACP-CLIENT-INIT-002", 1, ("ACP-MSG-AGENT-INITIALIZE-PARAMS",)),
    ("no-mcp-servers", "ACP-CLIENT-SESSION-002", 1, ("ACP-MSG-AGENT-SESSION-NEW-PARAMS",)),
    ("version-mismatch-ignored", "ACP-CLIENT-INIT-005", 0, ()),  # ADVISORY (a SHOULD)
    ("selected-after-cancel", "ACP-CLIENT-CANCEL-001", 1, ()),
]
FS_TERMINAL = [
    "ACP-CLIENT-FS-001",
    "ACP-CLIENT-FS-002",
    "ACP-CLIENT-TERM-001",
    "ACP-CLIENT-TERM-002",
    "ACP-CLIENT-TERM-003",
    "ACP-CAP-FS-READ-TEXT-FILE-HONOR",
    "ACP-CAP-TERMINAL-KILL-HONOR",
    "ACP-MSG-CLIENT-TERMINAL-OUTPUT-RESULT",
]


def test_the_client_corpus_maps_each_defect_to_its_requirement() -> None:
    from tests.support.peers.conformance_client import DEFECTS

    assert {d: r for d, r, _, _ in CLIENT_DEFECTS} == DEFECTS and len(DEFECTS) >= 12


def _client_kit(
    tmp_path: Path, *flags: str, options: tuple[str, ...] = ()
) -> tuple[subprocess.CompletedProcess[str], dict[str, Any]]:
    done = kit(
        "client",
        *options,
        "--timeout",
        "3",  # the probe's wait for an answer: only the defect that leaves one unanswered waits
        "--scenario-timeout",
        "60",
        "--report-json",
        str(tmp_path / "report.json"),
        "--",
        sys.executable,
        str(CLIENT),
        *flags,
        "--",
        "{agent}",
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(GENERATED)},
    )
    return done, _report(tmp_path / "report.json")


@pytest.mark.parametrize("flags", [[], ["--fs-terminal"], ["--cancel"]], ids=["plain", "fs-terminal", "cancel"])
def test_the_conforming_client_twins_pass_with_no_fail(flags: list[str], tmp_path: Path) -> None:
    (tmp_path / "users-file.txt").write_text("mine", encoding="utf-8")  # the client's cwd holds a user's file
    done, report = _client_kit(tmp_path, *flags)
    status = _status(report)
    assert done.returncode == 0 and "FAIL" not in status.values(), done.stdout
    assert status["ACP-CLIENT-INIT-005"] == "PASS" and report["version_mismatch"]["closed_connection"]
    for rid in ("ACP-PEER-RPC-007", "ACP-PEER-RPC-008", "ACP-PEER-RPC-009", "ACP-PEER-RPC-010", "ACP-PEER-EXT-003"):
        assert status[rid] == "PASS", rid
    assert status["ACP-CLIENT-CANCEL-001"] == ("PASS" if flags == ["--cancel"] else "SKIPPED")
    if flags == ["--fs-terminal"]:  # advertised: every file and terminal method called, and its answer judged
        assert {status[rid] for rid in FS_TERMINAL} == {"PASS"}, {rid: status[rid] for rid in FS_TERMINAL}
        sent = [m["message"] for m in report["transcript"] if m["dir"] == "sent" and isinstance(m["message"], dict)]
        called = {m.get("method") for m in sent}
        assert {"fs/read_text_file", "fs/write_text_file", "terminal/kill", "terminal/release"} <= called
    else:  # not advertised: never called, SKIPPED (applicable to no client that did not advertise it)
        assert {status[rid] for rid in FS_TERMINAL[:-1]} == {"SKIPPED"}
        assert status["ACP-MSG-CLIENT-TERMINAL-OUTPUT-RESULT"] == "SKIPPED"
        sent = [m["message"] for m in report["transcript"] if m["dir"] == "sent" and isinstance(m["message"], dict)]
        assert not [m for m in sent if str(m.get("method", "")).startswith(("fs/", "terminal/"))]
    # the probe's folder is gone, and nothing else was touched
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.json", "users-file.txt"]
    assert (tmp_path / "users-file.txt").read_text(encoding="utf-8") == "mine"


@pytest.mark.parametrize(("defect", "requirement", "code", "also"), CLIENT_DEFECTS, ids=[d[0] for d in CLIENT_DEFECTS])
def test_a_client_with_one_defect_fails_the_requirement_it_breaks(
    defect: str, requirement: str, code: int, also: tuple[str, ...], tmp_path: Path
) -> None:
    # the version-mismatch run only where it is the defect (the twins run it, and pass it)
    skip = () if requirement == "ACP-CLIENT-INIT-005" else ("--no-version-mismatch",)
    done, report = _client_kit(tmp_path, "--defect", defect, options=skip)
    assert _status(report)["ACP-CLIENT-INIT-005"] == ("FAIL" if not skip else "NOT_TESTED")
    failed = {rid for rid, status in _status(report).items() if status == "FAIL"}
    assert requirement in failed and failed <= {requirement, *also}, (failed, done.stdout)
    assert done.returncode == code, done.stdout
    verdict = "VERDICT: CONFORMANT" if code == 0 else "VERDICT: NOT CONFORMANT ("
    assert done.stdout.rstrip().splitlines()[-1].startswith(verdict)
    assert re.search(rf"FAIL\s+{requirement}", done.stdout)
    assert [p.name for p in tmp_path.iterdir()] == ["report.json"]


def test_a_client_that_never_starts_the_probe_ends_in_a_report(tmp_path: Path) -> None:
    done = kit("client", "--scenario-timeout", "5", "--", sys.executable, "-c", "import time; time.sleep(60)")
    assert done.returncode == 1 and "still running after 5.0 s" in done.stdout
    assert "the client did not finish" in done.stdout


@pytest.mark.interop
def test_the_kit_checks_a_client_on_the_typescript_sdk(tmp_path: Path) -> None:
    if not SDK.is_dir():
        pytest.fail("the pinned TypeScript SDK is missing: run `make interop-deps` (make test does)")
    client = ROOT / "tests" / "interop" / "conformance_echo_client.mjs"
    done = kit(
        "client",
        "--scenario-timeout",
        "60",
        "--report-json",
        str(tmp_path / "r.json"),
        "--",
        "node",
        str(client),
        "{agent}",
    )
    report = _report(tmp_path / "r.json")
    findings = [(r["id"], r["citation"]["url"]) for r in report["requirements"] if r["status"] == "FAIL"]
    stderr = report["client_stderr"][-300:]
    print(f"TypeScript SDK client: {report['verdict']['line']}; findings: {findings}; stderr: {stderr}")
    assert done.returncode in (0, 1) and report["client_exit_code"] is not None
