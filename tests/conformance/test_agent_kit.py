"""``acpgen conformance agent``, run as a user runs it against real agent processes on real pipes
(issues 31, 43, 48): our examples conform (the README's agent and client: test_readme_kit.py); a small raw agent
(tests/support/peers/conformance_agent.py) conforms as it is and in every conforming variant, and
with one deliberate defect is reported as a FAIL of the requirement it breaks, and of nothing the
spec allows."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.support.kit import LONG_PROMPT, PEER, failed, kit, messages, report, status
from tests.support.peers.conformance_agent import AUTH_METHOD
from tests.support.peers.conformance_agent import DEFECTS as PEER_DEFECTS

pytestmark = pytest.mark.slow

AUTH = ("--auth-method", AUTH_METHOD)
MCP_ADVISORY = "ACP-AGENT-SESSION-005"
"""Agents SHOULD connect to the MCP servers a client names: our echo examples do not (ADVISORY)."""


def test_the_echo_example_conforms_and_its_cancel_lands(tmp_path: Path) -> None:
    done = kit(
        "agent", "--timeout", "5", "--cancel-prompt", LONG_PROMPT,
        "--report-json", str(tmp_path / "report.json"), "--junit", str(tmp_path / "junit.xml"),
        "--", sys.executable, str(ROOT / "examples" / "echo_agent.py"),
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.rstrip().splitlines()[-1] == "VERDICT: CONFORMANT"
    found = report(tmp_path / "report.json")
    got = status(found)
    assert got["ACP-AGENT-CANCEL-001"] == "PASS" and got["ACP-AGENT-CANCEL-002"] == "PASS"
    assert got["ACP-AGENT-SESSION-002"] == "PASS" and got["ACP-AGENT-INIT-004"] == "PASS"
    assert got["ACP-PEER-CANCELREQ-001"] == "PASS"  # the runtime answers a request cancelled early
    assert got["ACP-AGENT-INVALID-001"] == got["ACP-AGENT-INVALID-002"] == "PASS"
    assert failed(found) == {MCP_ADVISORY}  # it connects to no MCP server: reported, never counted
    assert found["verdict"]["conformant"] is True and found["disagreements"] == []
    assert found["advertised"]["agent"]["agentInfo"] == {"name": "echo-agent", "version": "1.0.0"}
    assert found["protocol_version"] == 1 and "@agentclientprotocol/sdk@" in found["schema"]


@pytest.mark.parametrize(
    ("flags", "options"),
    [
        (("--load",), ()),
        (("--load", "--auth", "--modes", "--sessions"), AUTH),
        (("--quiet-malformed", "--load", "--commands-after-load"), ()),
        (("--turn", "0.4"), ("--cancel-prompt", "busy")),
        (("--mcp-http",), ()),
    ],
    ids=["load", "everything", "allowed-silence-and-late-state", "short-turns", "mcp-over-http"],
)
def test_the_conforming_twin_passes_with_no_fail(
    flags: tuple[str, ...], options: tuple[str, ...], tmp_path: Path
) -> None:
    """Issue 43 items 1 and 3: an agent that leaves malformed lines unanswered (JSON-RPC's SHOULD)
    and one that sends session state after answering ``session/load`` conform, with no FAIL at all;
    issue 48 item 2: a turn of 0.4 s is still cancelled mid-turn."""
    cancel = ("--cancel-prompt", LONG_PROMPT) if "--cancel-prompt" not in options else ()
    done = kit(
        "agent", "--timeout", "5", *options, *cancel, "--report-json", str(tmp_path / "report.json"),
        "--", sys.executable, str(PEER), *flags,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout
    assert done.stdout.rstrip().splitlines()[-1] == "VERDICT: CONFORMANT"
    found = report(tmp_path / "report.json")
    got = status(found)
    allowed = {"ACP-PEER-RPC-007", "ACP-PEER-RPC-008"} if "--quiet-malformed" in flags else set()
    assert failed(found) == allowed, done.stdout  # (JSON-RPC's SHOULDs: ADVISORY findings)
    assert got["ACP-AGENT-SESSION-005"] == "PASS"  # it connected to the kit's MCP probe
    assert got["ACP-AGENT-SESSION-006"] == ("PASS" if "--mcp-http" in flags else "SKIPPED")  # and over HTTP
    assert got["ACP-AGENT-CANCEL-001"] == "PASS", messages(found, "ACP-AGENT-CANCEL-001")
    if "--load" in flags:
        assert got["ACP-AGENT-LOAD-002"] == got["ACP-CAP-SESSION-LOAD-HONOR"] == "PASS"
    if "--quiet-malformed" in flags:
        assert got["ACP-PEER-RPC-009"] == "SKIPPED", messages(found, "ACP-PEER-RPC-009")
    else:
        assert got["ACP-PEER-RPC-009"] == "PASS"
    assert got["ACP-AGENT-AUTH-003"] == ("SKIPPED" if "--auth" in flags else "PASS")
    if "--auth" in flags:  # advertised authMethods: exercised
        for rid in ("ACP-AGENT-AUTH-001", "ACP-AGENT-AUTH-002", "ACP-AGENT-AUTH-005", "ACP-HANDLER-AGENT-AUTHENTICATE"):
            assert got[rid] == "PASS", rid
    if "--modes" in flags:
        for rid in ("ACP-AGENT-MODES-001", "ACP-AGENT-MODES-002", "ACP-AGENT-CONFIG-001", "ACP-AGENT-CONFIG-002"):
            assert got[rid] == "PASS", rid
    if "--sessions" in flags:
        families = [f"ACP-AGENT-{f}-00{n}" for f in ("LIST", "RESUME", "CLOSE", "DELETE") for n in (1, 2)]
        families += ["ACP-AGENT-LIST-003", "ACP-AGENT-DELETE-003"]
        content = [f"ACP-CAP-CONTENT-BLOCK-{tag}-HONOR" for tag in ("IMAGE", "AUDIO", "RESOURCE")]
        assert {got[rid] for rid in families + content} == {"PASS"}
    assert got["ACP-AGENT-PROMPT-005"] == got["ACP-AGENT-PROMPT-006"] == "PASS"  # its turns make a tool call


def test_malformed_lines_left_unanswered_are_advisory_and_block_nothing(tmp_path: Path) -> None:
    """Issue 43 item 1, the finding itself: RPC-007 and -008 are ADVISORY FAILs, RPC-009 is SKIPPED."""
    done = kit(
        "agent", "-k", "malformed", "--timeout", "3", "--report-json", str(tmp_path / "r.json"),
        "--", sys.executable, str(PEER), "--quiet-malformed",
    )  # fmt: skip
    got = status(report(tmp_path / "r.json"))
    assert got["ACP-PEER-RPC-007"] == got["ACP-PEER-RPC-008"] == "FAIL"
    assert got["ACP-PEER-RPC-009"] == "SKIPPED" and got["ACP-PEER-RPC-010"] == "PASS"
    assert "FAIL       ACP-PEER-RPC-009" not in done.stdout


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
    ("mcp-refused", "mcp-servers", "ACP-AGENT-SESSION-004", ()),
    ("unoffered-current-mode", "modes", "ACP-AGENT-MODES-001", ()),
    ("mode-update-unoffered", "modes", "ACP-AGENT-MODES-002", ()),
    ("unoffered-config-value", "config-options", "ACP-AGENT-CONFIG-001", ()),
    ("partial-config-answer", "config-options", "ACP-AGENT-CONFIG-002", ()),
    ("list-ignores-cwd", "session-list", "ACP-AGENT-LIST-002", ()),
    ("unknown-cursor-accepted", "session-list", "ACP-AGENT-LIST-003", ()),
    ("resume-replays", "session-resume", "ACP-AGENT-RESUME-002", ()),
    ("close-keeps-turn", "session-close", "ACP-AGENT-CLOSE-002", ()),
    ("delete-keeps-listing", "session-delete-listed", "ACP-AGENT-DELETE-003", ()),
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
    ("load-session-yes", "initialize", "ACP-MSG-AGENT-INITIALIZE-RESULT-OPTIONAL", ()),
    ("status-done", "prompt-text", "ACP-MSG-CLIENT-SESSION-UPDATE-PARAMS-OPTIONAL", ()),
    ("kind-bogus", "prompt-text", "ACP-MSG-CLIENT-SESSION-UPDATE-PARAMS-OPTIONAL", ()),
    ("session-id-number", "session-new", "ACP-MSG-AGENT-SESSION-NEW-RESULT", ()),
    ("end-turn-after-cancel", "cancel", "ACP-AGENT-CANCEL-001", ("--cancel-prompt", "busy")),
    ("end-turn-on-cancel", "cancel", "ACP-AGENT-CANCEL-001", ("--cancel-prompt", "busy")),
    ("silent-after-cancel", "cancel", "ACP-AGENT-CANCEL-001", ("--cancel-prompt", "busy")),
    ("crash-on-invalid-params", "invalid-params", "ACP-AGENT-INVALID-001", ()),
    ("invalid-params-as-result", "invalid-params", "ACP-AGENT-INVALID-002", ()),
    ("no-jsonrpc", "session-new", "ACP-PEER-TRANSPORT-001", ()),
    ("string-ids", "session-new", "ACP-PEER-RPC-001", ()),
    ("negative-id-no-id", "ids", "ACP-PEER-RPC-001", ()),
]
ALONG = {
    # what a defect brings along that the spec also breaks (nothing else may FAIL)
    "bad-stop-reason": {"ACP-AGENT-PROMPT-001", "ACP-MSG-AGENT-SESSION-PROMPT-RESULT"},
    "string-version": {"ACP-AGENT-INIT-002", "ACP-MSG-AGENT-INITIALIZE-RESULT"},
    "no-protocol-version": {"ACP-MSG-AGENT-INITIALIZE-RESULT", "ACP-AGENT-INIT-002"},
    "auth-refused": {"ACP-HANDLER-AGENT-AUTHENTICATE"},
    "close-keeps-turn": {"ACP-PEER-RPC-005"},  # the turn ran past --timeout
    "ignore-cancel": {"ACP-PEER-RPC-005"},
    "no-replay": {"ACP-AGENT-LOAD-003"},  # no user message replayed either
    "answer-notification": {"ACP-HANDLER-AGENT-SESSION-CANCEL"},  # "accepted, with no answer"
    "answer-unknown-notification": {"ACP-PEER-EXT-002"},
    "no-session-id": {"ACP-MSG-AGENT-SESSION-NEW-RESULT"},
    "session-id-number": {"ACP-AGENT-SESSION-001"},
    "invalid-update": {"ACP-MSG-CLIENT-SESSION-UPDATE-PARAMS", "ACP-UNION-SESSION-UPDATE"},
    "kind-bogus": {"ACP-PEER-EXT-004"},
    "status-done": {"ACP-PEER-EXT-004"},
    "string-error-code": {"ACP-PEER-RPC-006"},
    "ext-unanswered": {"ACP-PEER-RPC-005", "ACP-PEER-RPC-006"},
    "cancel-request-unanswered": {"ACP-PEER-RPC-005"},
    "crash-on-prompt": {"ACP-HANDLER-AGENT-SESSION-PROMPT", "ACP-AGENT-PROMPT-002"},
    "silent-after-cancel": {"ACP-PEER-RPC-005", "ACP-PEER-CANCELREQ-001"},
    "answer-twice": {"ACP-PEER-RPC-001"},
    "no-jsonrpc": set(),
    "string-ids": set(),
    "negative-id-no-id": {"ACP-PEER-RPC-003"},
    "unspoken-version": set(),
    "duplicate-auth-ids": set(),
}


def test_every_defect_of_the_peer_is_tested() -> None:
    tested = {d: r for d, _, r, _ in DEFECTS}
    assert len(tested) == len(DEFECTS) >= 60
    assert set(tested) | {"no-agent-info", "linger"} == set(PEER_DEFECTS)
    assert all(PEER_DEFECTS[d] == r for d, r in tested.items() if d != "bad-stop-reason")


@pytest.mark.parametrize(("defect", "scenario", "requirement", "options"), DEFECTS, ids=[d[0] for d in DEFECTS])
def test_an_agent_with_one_defect_fails_the_requirement_it_breaks(
    defect: str, scenario: str, requirement: str, options: tuple[str, ...], tmp_path: Path
) -> None:
    cancel = () if "--cancel-prompt" in options else ("--cancel-prompt", LONG_PROMPT)
    done = kit(
        "agent", "-k", scenario, "--timeout", "3", "--startup-timeout", "3", *options, *cancel,
        "--report-json", str(tmp_path / "report.json"), "--", sys.executable, str(PEER), "--defect", defect,
    )  # fmt: skip
    assert done.returncode == 1, done.stdout + done.stderr
    assert done.stdout.rstrip().splitlines()[-1].startswith("VERDICT: NOT CONFORMANT (")
    found = report(tmp_path / "report.json")
    entry = next(r for r in found["requirements"] if r["id"] == requirement)
    assert entry["status"] == "FAIL", (defect, entry)
    assert failed(found) <= {requirement, PEER_DEFECTS[defect], *ALONG.get(defect, ())}, failed(found)
    finding = next(f for f in entry["findings"] if f["status"] == "FAIL")
    assert finding["transcript"] and {line["dir"] for line in finding["transcript"]} >= {"sent"}
    assert "stderr" in finding and len(finding["message"]) <= 400
    assert re.search(rf"FAIL\s+{requirement}", done.stdout)
    assert max(len(line) for line in done.stdout.splitlines()) <= 240


def test_an_agent_without_agent_info_fails_the_advisory_requirement_and_still_conforms(tmp_path: Path) -> None:
    done = kit(
        "agent", "--timeout", "3", "--cancel-prompt", LONG_PROMPT, "--report-json", str(tmp_path / "r.json"),
        "--", sys.executable, str(PEER), "--defect", "no-agent-info",
    )  # fmt: skip
    assert done.returncode == 0, done.stdout
    assert done.stdout.rstrip().splitlines()[-1] == "VERDICT: CONFORMANT"
    found = report(tmp_path / "r.json")
    assert failed(found) == {"ACP-AGENT-INIT-004"}
    assert found["verdict"]["tier_counts"]["ADVISORY"]["FAIL"] == 1


def test_an_agent_that_stays_after_its_stdin_closes_is_recorded_not_faulted(tmp_path: Path) -> None:
    """ACP-AGENT-PROC-001 is INFORMATIONAL: the stdio transport states no rule (codex-acp stays)."""
    done = kit(
        "agent", "-k", "session-new", "--close-grace", "0.3", "--report-json", str(tmp_path / "r.json"),
        "--", sys.executable, str(PEER), "--defect", "linger",
    )  # fmt: skip
    found = report(tmp_path / "r.json")
    assert status(found)["ACP-AGENT-PROC-001"] == "PASS" and "PROC-001" not in " ".join(failed(found))
    assert "still running 0.3 s after its stdin closed" in messages(found, "ACP-AGENT-PROC-001")
    assert done.returncode == 1  # -k: mandatory requirements left NOT_TESTED, not the lingering


def test_unknown_notifications_answered_fail_rpc_004_not_the_cancel_handler(tmp_path: Path) -> None:
    """Issue 43 item 4: an agent answering unknown notifications (as codex-acp does) FAILs
    ACP-PEER-RPC-004 and ACP-PEER-EXT-002, and its idle session/cancel handler still PASSes."""
    kit(
        "agent", "-k", "notifications", "--timeout", "3", "--report-json", str(tmp_path / "r.json"),
        "--", sys.executable, str(PEER), "--defect", "answer-unknown-notification",
    )  # fmt: skip
    found = report(tmp_path / "r.json")
    got = status(found)
    assert got["ACP-PEER-RPC-004"] == got["ACP-PEER-EXT-002"] == "FAIL"
    assert got["ACP-HANDLER-AGENT-SESSION-CANCEL"] == "PASS"
    assert "unknown notification" in messages(found, "ACP-PEER-EXT-002")[0]


def test_broken_answers_end_their_scenario_at_once(tmp_path: Path) -> None:
    """Issue 43 item 8: answers the kit cannot match (no "jsonrpc", an id of another JSON type, no
    id) end the scenario at once: no --timeout is waited out, the reason is in the report."""
    for defect in ("no-jsonrpc", "string-ids"):
        done = kit(
            "agent", "--timeout", "30", "--report-json", str(tmp_path / f"{defect}.json"),
            "--", sys.executable, str(PEER), "--defect", defect, timeout=120,
        )  # fmt: skip
        found = report(tmp_path / f"{defect}.json")
        assert done.returncode == 1 and found["verdict"]["blocked"], done.stdout
        scenarios = {s["name"]: s for s in found["scenarios"]}
        assert "no JSON-RPC 2.0 answer" in str(scenarios["initialize"]["error"]) or "same JSON type" in str(
            scenarios["initialize"]["error"]
        ), scenarios["initialize"]
        assert all(s["blocked"] for name, s in scenarios.items() if name != "initialize")
        assert scenarios["initialize"]["seconds"] < 30  # ended on the unmatched answer, not the timeout


def test_an_unanswered_method_blocks_the_scenarios_that_need_it(tmp_path: Path) -> None:
    """Issue 43 item 8: one timeout of `session/prompt`, not one per scenario."""
    done = kit(
        "agent", "--timeout", "2", "--jobs", "1", "--report-json", str(tmp_path / "r.json"),
        "--", sys.executable, str(PEER), "--defect", "silent-after-cancel", "--turn", "30",
    )  # fmt: skip
    found = report(tmp_path / "r.json")
    scenarios = {s["name"]: s for s in found["scenarios"]}
    assert done.returncode == 1
    assert "went unanswered" in str(scenarios["prompt-meta"]["blocked"]), scenarios
    entry = next(r for r in found["requirements"] if r["id"] == "ACP-AGENT-PROMPT-003")
    assert entry["status"] == "NOT_TESTED" and "blocked" in entry["why_not_tested"]


def test_an_agent_that_cannot_start_is_a_usage_error(tmp_path: Path) -> None:
    """Issue 43 item 9: one line and exit 2, no FAIL lines."""
    for command in (
        [str(tmp_path / "no-such-agent")],
        [sys.executable, "-c", "import sys; print('cannot start', file=sys.stderr); sys.exit(3)"],
    ):
        done = kit("agent", "--", *command)
        assert done.returncode == 2 and done.stdout == "", done.stdout
        assert len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert "cannot start" in done.stderr


def test_a_hanging_agent_ends_in_a_report(tmp_path: Path) -> None:
    done = kit(
        "agent", "--startup-timeout", "1", "--timeout", "1", "--close-grace", "0.2",
        "--report-json", str(tmp_path / "r.json"), "--", sys.executable, "-c",
        "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(600)",
        timeout=120,
    )  # fmt: skip
    assert done.returncode == 1, done.stdout
    found = report(tmp_path / "r.json")
    assert found["verdict"]["blocked"].startswith("initialize")
    assert {s["name"] for s in found["scenarios"] if not s["blocked"]} == {"initialize"}


@pytest.mark.parametrize(
    "args",
    [["agent"], ["agent", "--"], ["agent", "--agent-env", "NOEQUALS", "--", "true"], ["nonsense", "--", "true"]],
)
def test_usage_errors_exit_2(args: list[str]) -> None:
    done = kit(*args)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "usage:" in done.stderr


def test_a_forgotten_double_dash_says_so() -> None:
    done = kit("agent", "python", "my_agent.py")
    assert done.returncode == 2 and "goes after `--`" in done.stderr and "-- python my_agent.py" in done.stderr


@pytest.mark.parametrize("package", ["acp_bindings_unstable", "acp_bindings_v2"])
def test_every_build_has_the_kit_of_its_schema(package: str, tmp_path: Path) -> None:
    done = kit(
        "agent", "-k", "prompt-text", "--report-json", str(tmp_path / "r.json"), "--", sys.executable, str(PEER),
        package=package,
    )  # fmt: skip
    found = report(tmp_path / "r.json")
    sources = {r["source"] for r in found["requirements"]}
    if package.endswith("_v2"):
        assert all(s.startswith("derived:") for s in sources)  # the draft: derived only
        assert done.returncode == 1 and "protocol version" in found["verdict"]["blocked"]  # a v1 agent
    else:
        assert "curated" in sources and done.returncode == 1  # -k leaves mandatory requirements NOT_TESTED
        assert "ACP-MSG-AGENT-SESSION-FORK-RESULT" in {r["id"] for r in found["requirements"]}


def test_junit_mirrors_the_verdict(tmp_path: Path) -> None:
    """Issue 43 item 10: a case fails exactly where the verdict counts it; an ADVISORY FAIL passes
    with its finding in the output; a MANDATORY NOT_TESTED fails with its reason."""
    from xml.etree import ElementTree as ET

    conforming = tmp_path / "conforming.xml"
    done = kit(
        "agent", "--timeout", "3", "--junit", str(conforming), "--", sys.executable, str(PEER), "--quiet-malformed"
    )  # fmt: skip
    assert done.returncode == 0, done.stdout
    suite = ET.parse(conforming).getroot()
    assert suite.get("failures") == "0"
    advisory = next(c for c in suite.iter("testcase") if c.get("name") == "ACP-PEER-RPC-007")
    assert advisory.find("failure") is None
    assert "ADVISORY FAIL (does not change the verdict)" in (advisory.findtext("system-out") or "")
    deselected = tmp_path / "deselected.xml"
    done = kit("agent", "-k", "initialize", "--junit", str(deselected), "--", sys.executable, str(PEER))
    assert done.returncode == 1
    suite = ET.parse(deselected).getroot()
    cases = {c.get("name"): c for c in suite.iter("testcase")}
    failure = cases["ACP-AGENT-CANCEL-001"].find("failure")
    assert failure is not None and "NOT_TESTED: deselected by -k" in (failure.get("message") or "")
    assert cases["verdict"].find("failure") is not None
    assert int(suite.get("failures") or 0) == sum(c.find("failure") is not None for c in cases.values())
