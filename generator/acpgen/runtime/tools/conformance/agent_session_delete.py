"""Agent ``session/delete`` (where advertised): a session is deleted, and deleting
one that never existed succeeds silently."""

from __future__ import annotations

from .registry import CheckSpec, ScenarioSpec
from .scenario import Scenario, describe, error_code, result_of

ORDER = 94
METHODS = ("session/delete",)
CHECKS = (
    CheckSpec(
        "agent.delete",
        ("agent",),
        judges=("ACP-AGENT-DELETE-001", "ACP-AGENT-DELETE-002"),
        honors=("session/delete",),
    ),
)


def session_delete(s: Scenario) -> None:
    honor = s.kit.derived("capability-honor", "session/delete")
    if not s.applies(honor):
        return
    session = s.session()
    s.step("ACP-AGENT-DELETE-001", s.kit.derived("capability-honor", "session/delete"))
    answer = s.driver.request("session/delete", {"sessionId": session})
    s.check(
        honor,
        answer is not None and error_code(answer) not in (-32601, -32602),
        f"session/delete: {describe(answer)}",
        "session/delete answered",
    )
    s.check(
        "ACP-AGENT-DELETE-001",
        result_of(answer) is not None,
        f"session/delete: {describe(answer)}",
        "the session was deleted",
    )
    never = s.driver.request(
        "session/delete", {"sessionId": "acp-conformance-no-such-session"}
    )
    s.check(
        "ACP-AGENT-DELETE-002",
        result_of(never) is not None,
        f"session/delete of a session that never existed: {describe(never)}",
        "deleting a session that never existed succeeded",
    )


SCENARIOS = (
    ScenarioSpec(
        "session-delete",
        ("agent.delete",),
        session_delete,
        ("initialize", "session/new", "session/delete"),
    ),
)
