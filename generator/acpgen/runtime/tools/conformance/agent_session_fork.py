"""Agent ``session/fork`` (where advertised): the fork gets an id of its own."""

from __future__ import annotations

from .registry import CheckSpec, ScenarioSpec
from .scenario import Scenario, describe, error_code, result_of

ORDER = 93
METHODS = ("session/fork",)
CHECKS = (
    CheckSpec(
        "agent.fork",
        ("agent",),
        judges=("ACP-AGENT-FORK-001",),
        honors=("session/fork",),
    ),
)


def session_fork(s: Scenario) -> None:
    honor = s.kit.derived("capability-honor", "session/fork")
    if not s.applies(honor):
        return
    session = s.session()
    s.step("ACP-AGENT-FORK-001", s.kit.derived("capability-honor", "session/fork"))
    answer = s.driver.request(
        "session/fork", {"sessionId": session, "cwd": s.cwd, "mcpServers": []}
    )
    s.check(
        honor,
        answer is not None and error_code(answer) not in (-32601, -32602),
        f"session/fork: {describe(answer)}",
        "session/fork answered",
    )
    other = (result_of(answer) or {}).get("sessionId")
    s.check(
        "ACP-AGENT-FORK-001",
        isinstance(other, str) and other != session,
        f"session/fork: {describe(answer)}",
        f"forked as {other!r}",
    )


SCENARIOS = (
    ScenarioSpec(
        "session-fork",
        ("agent.fork",),
        session_fork,
        ("initialize", "session/new", "session/fork"),
    ),
)
