"""Agent scenarios of JSON-RPC hygiene: notifications get no answer (an idle
``session/cancel``, unknown ones), unknown requests get "method not found" and a
``_`` one an answer, malformed lines (JSON-RPC's SHOULDs: -32700 and -32600 with id
null), ids of every JSON type echoed exactly."""

from __future__ import annotations

import time
from typing import Any

from .registry import CheckSpec, ScenarioSpec
from .scenario import Scenario, describe, error_code, result_of

ORDER = 70
CHECKS = (
    CheckSpec(
        "agent.notifications",
        ("agent",),
        judges=("ACP-PEER-RPC-004", "ACP-PEER-EXT-002"),
        handlers=("session/cancel",),
    ),
    CheckSpec(
        "agent.unknown-methods",
        ("agent",),
        judges=("ACP-PEER-EXT-001", "ACP-PEER-RPC-006", "ACP-PEER-RPC-010"),
    ),
    CheckSpec(
        "agent.malformed",
        ("agent",),
        judges=(
            "ACP-PEER-RPC-007",
            "ACP-PEER-RPC-008",
            "ACP-PEER-RPC-009",
            "ACP-PEER-RPC-010",
        ),
    ),
    CheckSpec("agent.ids", ("agent",), judges=("ACP-PEER-RPC-001", "ACP-PEER-RPC-002")),
)
NEEDS = ("initialize", "session/new")
UNKNOWN = (
    "acp_conformance/unknown_notification",
    "_acp_conformance/unknown_notification",
)
IDS: tuple[Any, ...] = ("ïd-1 ✓", 0, 9007199254740991, -7, "")


def _answers_after(s: Scenario, count: int) -> list[dict[str, Any]]:
    return [r.message for r in s.driver.received[count:] if "method" not in r.message]


def notifications(s: Scenario) -> None:
    session = s.session()
    count = len(s.driver.received)
    s.step(s.kit.derived("required-handler", "session/cancel"), "ACP-PEER-EXT-002")
    s.driver.notify("session/cancel", {"sessionId": session})
    s.driver.pump(s.quiet)
    cancel_answered = _answers_after(s, count)
    count = len(s.driver.received)
    for method in UNKNOWN:
        s.driver.notify(method, {"x": 1})
    s.driver.pump(s.quiet)
    unknown_answered = _answers_after(s, count)
    after = s.driver.request("session/new", s.new_session_params())
    alive = isinstance((result_of(after) or {}).get("sessionId"), str)
    answered = cancel_answered + unknown_answered
    s.check(
        "ACP-PEER-RPC-004",
        not answered,
        f"a notification was answered: {answered[0] if answered else None}",
        f"no answer within {s.quiet:.1f} s of each",
    )
    s.check(
        s.kit.derived("required-handler", "session/cancel"),
        alive and not cancel_answered,
        f"an idle session/cancel was answered: {cancel_answered[0]}"
        if cancel_answered
        else f"after an idle session/cancel: {describe(after)}",
        "an idle session/cancel was accepted, with no answer",
    )
    s.check(
        "ACP-PEER-EXT-002",
        alive and not unknown_answered,
        f"an unknown notification was answered: {unknown_answered[0]}"
        if unknown_answered
        else f"after unknown notifications: {describe(after)}",
        "unknown notifications ignored; the connection stayed usable",
    )


def unknown_methods(s: Scenario) -> None:
    s.handshake()
    s.step("ACP-PEER-EXT-001", "ACP-PEER-RPC-006")
    plain = s.driver.request("acp_conformance/no_such_method", {})
    ext = s.driver.request("_acp_conformance/no_such_method", {})
    s.check(
        "ACP-PEER-EXT-001",
        ext is not None and ("result" in ext or "error" in ext),
        f"a `_` request: {describe(ext)}",
        describe(ext),
    )
    codes = (error_code(plain), error_code(ext))
    s.check(
        "ACP-PEER-RPC-006",
        codes == (-32601, -32601),
        f"unknown request answered {describe(plain)}; `_` request answered "
        f"{describe(ext)}",
        "both answered -32601",
    )
    after = s.driver.request("session/new", s.new_session_params())
    s.check(
        "ACP-PEER-RPC-010",
        isinstance((result_of(after) or {}).get("sessionId"), str),
        f"after unknown requests: {describe(after)}",
        "session/new answered after unknown requests",
    )


MALFORMED = (
    (b"this is not json {\n", -32700, "ACP-PEER-RPC-007"),
    (b'{"hello": "world"}\n', -32600, "ACP-PEER-RPC-008"),
)


def malformed(s: Scenario) -> None:
    if s.options.url is not None:
        why = "over --url the transport frames every message: no malformed line is sent"
        for rid in ("ACP-PEER-RPC-007", "ACP-PEER-RPC-008", "ACP-PEER-RPC-009"):
            s.skip(rid, why)
        return
    s.handshake()
    s.step("ACP-PEER-RPC-010")
    ids_judged = False
    for data, code, rid in MALFORMED:
        count = len(s.driver.received)
        s.driver.raw(data)
        s.driver.pump(s.quiet)
        line = data.strip().decode()
        answers = _answers_after(s, count)
        if not answers:
            s.fail(
                rid,
                f"no answer to {line!r} within {s.quiet:.1f} s (JSON-RPC: error "
                f"{code})",
            )
            continue
        got = answers[0]
        s.check(
            rid, error_code(got) == code, f"{line!r} answered {got}", f"answered {code}"
        )
        ids_judged = True
        s.check(
            "ACP-PEER-RPC-009",
            got.get("id", "absent") is None,
            f"the answer to {line!r} has id {got.get('id', 'absent')!r}, not null",
            "answered with id null",
        )
    if not ids_judged:
        s.skip(
            "ACP-PEER-RPC-009", "the agent answered neither malformed line (allowed)"
        )
    after = s.driver.request("session/new", s.new_session_params())
    s.check(
        "ACP-PEER-RPC-010",
        isinstance((result_of(after) or {}).get("sessionId"), str),
        f"after malformed lines: {describe(after)}",
        "session/new answered after malformed lines",
    )


def ids(s: Scenario) -> None:
    s.step("ACP-PEER-RPC-001")
    answer = s.driver.request(
        "initialize", s.init_params(), rid=IDS[0], timeout=s.options.startup_timeout
    )
    if answer is None:
        s.fail("ACP-PEER-RPC-001", f"no answer to initialize with id {IDS[0]!r}")
        return
    _null_id(s)  # first: an answer the kit cannot match ends the scenario
    for rid in IDS[1:]:
        s.driver.request("session/new", s.new_session_params(), rid=rid)
    missing = [rid for rid in IDS if s.driver.answer_for(rid) is None]
    s.check(
        "ACP-PEER-RPC-001",
        not missing,
        f"no answer carrying exactly the id {missing[0] if missing else None!r}",
        f"ids {list(IDS)!r} echoed exactly",
    )


def _null_id(s: Scenario) -> None:
    """id null: the schema allows it, JSON-RPC discourages it (ADVISORY)."""
    count = len(s.driver.received)
    s.driver.unanswerable += 1
    params = s.new_session_params()
    s.driver.send(
        {"jsonrpc": "2.0", "id": None, "method": "session/new", "params": params}
    )
    deadline = time.monotonic() + s.options.timeout
    null = None
    while null is None and (left := deadline - time.monotonic()) > 0:
        s.driver.step(left)
        null = next(
            (m for m in _answers_after(s, count) if m.get("id", 0) is None), None
        )
    s.check(
        "ACP-PEER-RPC-002",
        null is not None,
        "a session/new with id null got no answer with id null within "
        f"{s.options.timeout:g} s",
        "answered with id null",
    )


SCENARIOS = (
    ScenarioSpec("notifications", ("agent.notifications",), notifications, NEEDS),
    ScenarioSpec("unknown-methods", ("agent.unknown-methods",), unknown_methods, NEEDS),
    ScenarioSpec("malformed", ("agent.malformed",), malformed, NEEDS),
    ScenarioSpec("ids", ("agent.ids",), ids, NEEDS),
)
