"""``acpgen conformance client``, run as a user runs it (issues 31, 43): the probe agent handed to
real client processes (our examples, a small raw client that conforms as it is and in every
conforming variant, and with one deliberate defect; the official SDKs' clients), over stdio and
served over the network (``--serve``)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import GENERATED, ROOT
from tests.support.kit import CLIENT, kit, report, status

pytestmark = pytest.mark.slow

_report = report
_status = status
SDK = ROOT / "tests" / "interop" / "node_modules" / "@agentclientprotocol" / "sdk"
PYTHON_SDK_CLIENT = ROOT / "tests" / "support" / "peers" / "sdk_echo_client.py"


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
    """A remote client given no address never speaks to the probe: a usage error that says so
    (issue 45), not a FAIL of the client."""
    done = kit("client", "--serve", "--scenario-timeout", "20", "--", sys.executable, "-c", "pass")
    assert done.returncode == 2 and done.stdout == "", done.stdout
    assert "pass {url} or read ACP_CONFORMANCE_URL" in done.stderr, done.stderr


def test_a_client_given_no_agent_placeholder_is_told_to_pass_it(tmp_path: Path) -> None:
    done = kit("client", "--scenario-timeout", "20", "--", sys.executable, "-c", "pass")
    assert done.returncode == 2 and "pass {agent} or read ACP_CONFORMANCE_AGENT" in done.stderr


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
    ("cancel-as-request", "ACP-MSG-AGENT-SESSION-CANCEL-FORM", 1, ("ACP-PEER-EXT-004",)),  # its params too
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


@pytest.mark.parametrize(
    "flags",
    [[], ["--fs-terminal"], ["--cancel"], ["--cancel-later"], ["--late-cancel"]],
    ids=["plain", "fs-terminal", "cancel", "cancel-a-later-turn", "cancel-after-the-turn"],
)
def test_the_conforming_client_twins_pass_with_no_fail(flags: list[str], tmp_path: Path) -> None:
    (tmp_path / "users-file.txt").write_text("mine", encoding="utf-8")  # the client's cwd holds a user's file
    done, report = _client_kit(tmp_path, *flags)
    status = _status(report)
    assert done.returncode == 0 and "FAIL" not in status.values(), done.stdout
    assert status["ACP-CLIENT-INIT-005"] == "PASS" and report["version_mismatch"]["closed_connection"]
    for rid in ("ACP-PEER-RPC-007", "ACP-PEER-RPC-008", "ACP-PEER-RPC-009", "ACP-PEER-RPC-010", "ACP-PEER-EXT-003"):
        assert status[rid] == "PASS", rid
    # a cancel's scope is its turn (issue 43 item 2): a permission allowed in an earlier turn, or a
    # cancel sent after the turn ended, is out of scope
    assert status["ACP-CLIENT-CANCEL-001"] == ("PASS" if flags in (["--cancel"], ["--cancel-later"]) else "SKIPPED")
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


def test_a_client_that_never_leaves_ends_in_a_usage_error(tmp_path: Path) -> None:
    """A client that never uses the probe and never leaves: stopped after --scenario-timeout."""
    done = kit(
        "client", "--scenario-timeout", "5", "--", sys.executable, "-c", "import time; time.sleep(60)", "{agent}"
    )
    assert done.returncode == 1 and "still running after 5.0 s" in done.stdout, done.stdout + done.stderr
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
