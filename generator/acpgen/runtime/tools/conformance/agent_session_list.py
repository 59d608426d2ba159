"""Agent ``session/list`` (where advertised): it lists, filters by a ``cwd`` no
session uses to nothing, and refuses a cursor it never issued."""

from __future__ import annotations

from .registry import CheckSpec, ScenarioSpec
from .scenario import Scenario, describe, error_code, result_of

ORDER = 90
METHODS = ("session/list",)
CHECKS = (
    CheckSpec(
        "agent.list",
        ("agent",),
        judges=("ACP-AGENT-LIST-001", "ACP-AGENT-LIST-002", "ACP-AGENT-LIST-003"),
        honors=("session/list",),
    ),
)


def session_list(s: Scenario) -> None:
    if not s.applies(s.kit.derived("capability-honor", "session/list")):
        return
    s.session()
    s.step("ACP-AGENT-LIST-001", s.kit.derived("capability-honor", "session/list"))
    answer = s.driver.request("session/list", {})
    s.check(
        s.kit.derived("capability-honor", "session/list"),
        answer is not None and error_code(answer) not in (-32601, -32602),
        f"session/list: {describe(answer)}",
        "session/list answered",
    )
    result = result_of(answer)
    s.check(
        "ACP-AGENT-LIST-001",
        result is not None and isinstance(result.get("sessions"), list),
        f"session/list: {describe(answer)}",
        f"{len((result or {}).get('sessions') or [])} sessions listed",
    )
    empty = s.driver.request("session/list", {"cwd": "/nonexistent/acp-conformance"})
    s.check(
        "ACP-AGENT-LIST-002",
        (result_of(empty) or {}).get("sessions") == [],
        f"session/list for an unknown cwd: {describe(empty)}",
        "an unknown cwd lists no session",
    )
    stray = s.driver.request("session/list", {"cursor": "acp-conformance-never-issued"})
    s.check(
        "ACP-AGENT-LIST-003",
        stray is not None and "error" in stray,
        f"session/list with a cursor never issued: {describe(stray)}",
        f"a cursor never issued was refused: {describe(stray)}",
    )


SCENARIOS = (
    ScenarioSpec(
        "session-list",
        ("agent.list",),
        session_list,
        ("initialize", "session/new", "session/list"),
    ),
)
