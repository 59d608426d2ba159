"""Agent ``session/close`` (where advertised): an idle session closes, and closing a
session in a turn ends the turn as ``session/cancel`` would (``cancelled``), judged
from arrival times as a cancel is (:mod:`.turn_interrupt`)."""

from __future__ import annotations

from .registry import CheckSpec, ScenarioSpec
from .scenario import Aborted, Scenario, describe, error_code, result_of
from .turn_interrupt import interrupted

ORDER = 92
METHODS = ("session/close",)
CHECKS = (
    CheckSpec(
        "agent.close",
        ("agent",),
        judges=("ACP-AGENT-CLOSE-001",),
        honors=("session/close",),
    ),
    CheckSpec("agent.close-during-turn", ("agent",), judges=("ACP-AGENT-CLOSE-002",)),
)


def _close(s: Scenario, session: str) -> None:
    s.driver.start("session/close", {"sessionId": session})


def session_close(s: Scenario) -> None:
    honor = s.kit.derived("capability-honor", "session/close")
    if not s.applies(honor):
        return
    session = s.session()
    s.step("ACP-AGENT-CLOSE-001", s.kit.derived("capability-honor", "session/close"))
    answer = s.driver.request("session/close", {"sessionId": session})
    s.check(
        honor,
        answer is not None and error_code(answer) not in (-32601, -32602),
        f"session/close: {describe(answer)}",
        "session/close answered",
    )
    s.check(
        "ACP-AGENT-CLOSE-001",
        result_of(answer) is not None,
        f"session/close: {describe(answer)}",
        "an idle session closed",
    )

    def fresh() -> str:
        answer = s.driver.need("session/new", s.new_session_params())
        busy = (result_of(answer) or {}).get("sessionId")
        if not isinstance(busy, str):
            raise Aborted(f"no session to close during a turn: {describe(answer)}")
        return busy

    s.step("ACP-AGENT-CLOSE-002")
    status, message, _, _ = interrupted(s, fresh, _close)
    s.report(
        "ACP-AGENT-CLOSE-002", status, message.replace("interruption", "session/close")
    )


SCENARIOS = (
    ScenarioSpec(
        "session-close",
        ("agent.close", "agent.close-during-turn"),
        session_close,
        ("initialize", "session/new", "session/prompt", "session/close"),
    ),
)
