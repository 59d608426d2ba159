"""The kit judges what was sent, not what a lenient reader made of it (issue 48): every message is
validated against the build's schema itself, strictly; a violation FAILs the MANDATORY requirement
of its message where the schema requires the value, the ADVISORY ``-OPTIONAL`` one otherwise; where
the schema and the models read a message differently, the report says so. Shown on recorded traces
(``acpgen conformance trace``: the same judge as ``agent`` and ``client``), one defect each, beside
the same trace without it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.support.kit import kit, messages, report, status

pytestmark = pytest.mark.slow

SESSION = "s-1"


def _turn(update: dict[str, Any], *, caps: dict[str, Any] | None = None, reason: str = "end_turn") -> list[Any]:
    """A whole recorded exchange, the client's side: initialize, a session, one turn with ``update``."""
    init_params: dict[str, Any] = {
        "protocolVersion": 1,
        "clientCapabilities": {},
        "clientInfo": {"name": "c", "version": "1"},
    }
    return [
        ("out", {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": init_params}),
        ("in", {"jsonrpc": "2.0", "id": 1, "result": {"protocolVersion": 1, "agentCapabilities": caps or {}}}),
        ("out", {"jsonrpc": "2.0", "id": 2, "method": "session/new", "params": {"cwd": "/w", "mcpServers": []}}),
        ("in", {"jsonrpc": "2.0", "id": 2, "result": {"sessionId": SESSION}}),
        (
            "out",
            {"jsonrpc": "2.0", "id": 3, "method": "session/prompt", "params": {"sessionId": SESSION, "prompt": []}},
        ),
        ("in", {"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": SESSION, "update": update}}),
        ("in", {"jsonrpc": "2.0", "id": 3, "result": {"stopReason": reason}}),
    ]


CALL = {"sessionUpdate": "tool_call", "toolCallId": "t-1", "title": "Read", "kind": "read", "status": "pending"}
CHUNK = {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "hi"}}


def _judge(tmp_path: Path, lines: list[Any]) -> dict[str, Any]:
    path = tmp_path / "trace.jsonl"
    path.write_text("".join(json.dumps({"direction": d, "message": m}) + "\n" for d, m in lines), encoding="utf-8")
    kit("trace", str(path), "--report-json", str(tmp_path / "r.json"))
    return report(tmp_path / "r.json")


def test_the_conforming_trace_has_no_finding(tmp_path: Path) -> None:
    found = _judge(tmp_path, _turn(CALL))
    assert [r["id"] for r in found["requirements"] if r["status"] == "FAIL"] == []
    assert found["disagreements"] == []


CASES = [
    # (what, the trace, the requirement that FAILs, its tier, the JSON pointer it names)
    (
        "a boolean capability sent as a string (the models read it as false)",
        _turn(CALL, caps={"loadSession": "yes"}),
        "ACP-MSG-AGENT-INITIALIZE-RESULT-OPTIONAL",
        "ADVISORY",
        "/agentCapabilities/loadSession",
    ),
    (
        "a closed enum's value outside it, where optional (the models read it as None)",
        _turn({**CALL, "sessionUpdate": "tool_call_update", "status": "done"}),
        "ACP-MSG-CLIENT-SESSION-UPDATE-PARAMS-OPTIONAL",
        "ADVISORY",
        "/update/status",
    ),
    (
        "a closed enum's value outside it, where required",
        _turn(CALL, reason="finished"),
        "ACP-ENUM-STOP-REASON",
        "MANDATORY",
        "/stopReason",
    ),
    (
        "a required member missing",
        _turn({"sessionUpdate": "agent_message_chunk"}),
        "ACP-MSG-CLIENT-SESSION-UPDATE-PARAMS",
        "MANDATORY",
        "/update",
    ),
    (
        "an integer past its format's range (uint32)",
        _turn({**CALL, "locations": [{"path": "/w/a", "line": 2**40}]}),
        "ACP-MSG-CLIENT-SESSION-UPDATE-PARAMS-OPTIONAL",
        "ADVISORY",
        "/update/locations/0/line",
    ),
]


@pytest.mark.parametrize(("what", "lines", "rid", "tier", "pointer"), CASES, ids=[c[0] for c in CASES])
def test_a_value_the_schema_refuses_fails_the_requirement_of_its_message(
    what: str, lines: list[Any], rid: str, tier: str, pointer: str, tmp_path: Path
) -> None:
    found = _judge(tmp_path, lines)
    entry = next(r for r in found["requirements"] if r["id"] == rid)
    assert (entry["status"], entry["tier"]) == ("FAIL", tier), entry
    said = " ".join(messages(found, rid))
    assert f"at {pointer} (schema #/$defs/" in said, said
    assert found["verdict"]["conformant"] is (tier == "ADVISORY"), found["verdict"]


def test_where_the_models_forgive_a_value_the_report_says_the_two_disagree(tmp_path: Path) -> None:
    found = _judge(tmp_path, _turn(CALL, caps={"loadSession": "yes"}))
    (disagreement,) = found["disagreements"]
    assert disagreement["method"] == "initialize" and disagreement["models"] == "read"
    assert "(the models read it leniently)" in " ".join(messages(found, "ACP-MSG-AGENT-INITIALIZE-RESULT-OPTIONAL"))


def test_what_the_client_sends_is_judged_strictly_too(tmp_path: Path) -> None:
    lines = _turn(CHUNK)
    lines[0][1]["params"]["clientCapabilities"] = {"fs": {"readTextFile": "yes"}}
    found = _judge(tmp_path, lines)
    assert status(found)["ACP-MSG-AGENT-INITIALIZE-PARAMS-OPTIONAL"] == "FAIL"
    assert "/clientCapabilities/fs/readTextFile" in " ".join(
        messages(found, "ACP-MSG-AGENT-INITIALIZE-PARAMS-OPTIONAL")
    )


def test_open_enums_and_extension_points_stay_allowed(tmp_path: Path) -> None:
    """``_meta`` anywhere, an unknown kind of an open union, members the schema leaves open: no finding."""
    update = {**CALL, "_meta": {"traceparent": "00-x", "vendor": {"deep": [1]}}}
    lines = _turn(update)
    lines.insert(-1, ("in", {"jsonrpc": "2.0", "method": "_vendor/notice", "params": {"anything": True}}))
    found = _judge(tmp_path, lines)
    assert [r["id"] for r in found["requirements"] if r["status"] == "FAIL"] == []
