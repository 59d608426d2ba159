"""Interop against a real peer: the official ACP TypeScript SDK, in both directions (issue 3, item 6).

- Node client on the SDK (tests/interop/client.mjs) -> Python agent written only with the generated
  interfaces, dispatcher, connection and senders (tests/interop/py_agent.py);
- Python client written only with the generated senders, interface, dispatcher and connection
  (tests/interop/py_client.py) -> Node agent on the SDK (tests/interop/node_agent.mjs).

Both play the same flow and print the wire transcript as JSON; the transcript must match EXPECTED
exactly. The SDK is pinned in tests/interop/package.json and package-lock.json and installed with
``make interop-deps`` (``make test`` runs it first); the tests themselves are offline. A missing SDK
is a failure, never a skip.
"""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest

from tests.support.sdk import INTEROP, ROOT, SDK_NAME, SDK_VERSION
from tests.support.sdk import node as _node

pytestmark = pytest.mark.interop

TIMEOUT = 60

_UPDATES_OF_AN_ALLOWED_TURN = [
    ("agent", "notification", "session/update", "agent_message_chunk"),
    ("agent", "notification", "session/update", "plan"),
    ("agent", "notification", "session/update", "tool_call:pending"),
    ("agent", "request", "session/request_permission", None),
]

EXPECTED: list[tuple[str, str, str, str | None]] = [
    ("client", "request", "initialize", "protocolVersion=1"),
    ("agent", "result", "initialize", "protocolVersion=1"),
    ("client", "request", "session/new", None),
    ("agent", "result", "session/new", None),
    # a prompt turn with updates, a permission that the client grants and a file read
    ("client", "request", "session/prompt", None),
    *_UPDATES_OF_AN_ALLOWED_TURN,
    ("client", "result", "session/request_permission", "selected:allow"),
    ("agent", "notification", "session/update", "tool_call_update:in_progress"),
    ("agent", "request", "fs/read_text_file", None),
    ("client", "result", "fs/read_text_file", None),
    ("agent", "notification", "session/update", "tool_call_update:completed"),
    ("agent", "notification", "session/update", "agent_message_chunk"),
    ("agent", "result", "session/prompt", "stopReason=end_turn"),
    # a prompt turn that the client cancels while the agent waits for permission
    ("client", "request", "session/prompt", None),
    *_UPDATES_OF_AN_ALLOWED_TURN,
    ("client", "notification", "session/cancel", None),
    ("client", "result", "session/request_permission", "cancelled"),
    ("agent", "result", "session/prompt", "stopReason=cancelled"),
    # a method that no side knows
    ("client", "request", "session/frobnicate", None),
    ("agent", "error", "session/frobnicate", "code=-32601"),
]


def _text(value: str | bytes | None) -> str:
    return value.decode(errors="replace") if isinstance(value, bytes) else value or ""


def _table(entries: list[dict[str, Any]]) -> str:
    return "\n".join(
        f"  {e['from']:>6} {e['kind']:<12} {e['method'] or '?':<28} id={e['id']!s:<5} {e['detail'] or ''}"
        for e in entries
    )


def _run(label: str, args: list[str]) -> dict[str, Any]:
    """Run one direction; its JSON report, or a failure with everything needed to debug it."""
    try:
        proc = subprocess.run(
            args, cwd=ROOT, capture_output=True, text=True, timeout=TIMEOUT, stdin=subprocess.DEVNULL, check=False
        )
    except subprocess.TimeoutExpired as expired:
        pytest.fail(
            f"{label}: no result within {TIMEOUT}s\n"
            f"--- stdout\n{_text(expired.stdout)}\n--- stderr\n{_text(expired.stderr)}"
        )
    try:
        report = json.loads(proc.stdout)
    except ValueError:
        pytest.fail(
            f"{label}: exit {proc.returncode}, no JSON report\n--- stdout\n{proc.stdout}\n--- stderr\n{proc.stderr}"
        )
    if proc.returncode != 0 or not report.get("ok"):
        pytest.fail(
            f"{label}: exit {proc.returncode}\nerror: {report.get('error')}\nproblems: {report.get('problems')}\n"
            f"agent exit: {report.get('agentExit')}\n--- transcript\n{_table(report.get('transcript', []))}\n"
            f"--- stderr\n{proc.stderr}"
        )
    return report


def _check_transcript(label: str, entries: list[dict[str, Any]]) -> None:
    table = _table(entries)
    unmatched = [e for e in entries if e["method"] is None]
    assert not unmatched, f"{label}: responses to no request, or unparsable messages:\n{_table(unmatched)}"
    requests = {(e["from"], e["id"]) for e in entries if e["kind"] == "request"}
    answered = [
        ("agent" if e["from"] == "client" else "client", e["id"]) for e in entries if e["kind"] in ("result", "error")
    ]
    assert sorted(answered, key=str) == sorted(requests, key=str), (
        f"{label}: a request not answered exactly once\n{table}"
    )

    stops = [e["detail"] for e in entries if e["method"] == "session/prompt" and e["kind"] == "result"]
    assert stops == ["stopReason=end_turn", "stopReason=cancelled"], f"{label}: stop reasons {stops}\n{table}"
    unknown = [(e["kind"], e["detail"]) for e in entries if e["method"] == "session/frobnicate"]
    assert unknown == [("request", None), ("error", "code=-32601")], f"{label}: unknown method {unknown}\n{table}"

    seen = [(e["from"], e["kind"], e["method"], e["detail"]) for e in entries]
    expected = "\n".join(f"  {f:>6} {k:<12} {m:<28} {d or ''}" for f, k, m, d in EXPECTED)
    assert seen == EXPECTED, (
        f"{label}: the exchange differs from the expected one\n--- got\n{table}\n--- expected\n{expected}"
    )


def test_sdk_pin_matches_the_schema_the_bindings_were_built_from() -> None:
    """The interop tests run the SDK of the pinned schema against bindings built from it (every pin:
    tests/system/test_pins.py)."""
    from acp_bindings import SCHEMA_PACKAGE, SCHEMA_VERSION

    pinned = json.loads((INTEROP / "package.json").read_text(encoding="utf-8"))["dependencies"][SDK_NAME]
    assert pinned == SDK_VERSION, (
        f"tests/interop/package.json pins {SDK_NAME} {pinned}, the schema lock {SDK_VERSION}: "
        f"run `make bump VERSION={SDK_VERSION}`"
    )
    assert (SCHEMA_PACKAGE, SCHEMA_VERSION) == (SDK_NAME, SDK_VERSION), (
        f"generated/ is built from {SCHEMA_PACKAGE}@{SCHEMA_VERSION}, the schema lock pins {SDK_NAME}@{SDK_VERSION}: "
        "run `make generate`"
    )


def test_sdk_client_drives_generated_python_agent() -> None:
    node = _node()
    label = "Node client (SDK) -> Python agent (generated bindings)"
    report = _run(label, [node, str(INTEROP / "client.mjs"), sys.executable, str(INTEROP / "py_agent.py")])
    _check_transcript(label, report["transcript"])


def test_generated_python_client_drives_sdk_agent() -> None:
    node = _node()
    label = "Python client (generated bindings) -> Node agent (SDK)"
    report = _run(
        label,
        [sys.executable, str(INTEROP / "py_client.py"), "--node", node, "--agent", str(INTEROP / "node_agent.mjs")],
    )
    _check_transcript(label, report["transcript"])
