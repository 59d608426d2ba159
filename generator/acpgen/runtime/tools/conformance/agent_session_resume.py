"""Agent ``session/resume`` (where advertised): a session with a turn behind it
resumes, and no conversation history comes before the answer (that is
``session/load``'s)."""

from __future__ import annotations

from .registry import CheckSpec, ScenarioSpec
from .scenario import Scenario, describe, error_code, result_of, update_kind
from .session_updates import CONVERSATION

ORDER = 91
METHODS = ("session/resume",)
CHECKS = (
    CheckSpec(
        "agent.resume",
        ("agent",),
        judges=("ACP-AGENT-RESUME-001", "ACP-AGENT-RESUME-002"),
        honors=("session/resume",),
    ),
)


def session_resume(s: Scenario) -> None:
    honor = s.kit.derived("capability-honor", "session/resume")
    if not s.applies(honor):
        return
    session = s.session()
    s.prompt(session, [{"type": "text", "text": "Remember this turn."}])
    s.driver.pump(s.quiet)
    s.step("ACP-AGENT-RESUME-001", honor)
    key = s.driver.start(
        "session/resume", {"sessionId": session, "cwd": s.cwd, "mcpServers": []}
    )
    sent = s.driver.sent[key]
    answer = s.driver.wait(key)
    s.check(
        honor,
        answer is not None and error_code(answer) not in (-32601, -32602),
        f"session/resume: {describe(answer)}",
        "session/resume answered",
    )
    s.check(
        "ACP-AGENT-RESUME-001",
        result_of(answer) is not None,
        f"session/resume: {describe(answer)}",
        "session/resume answered with a result",
    )
    if result_of(answer) is None:
        return
    answered = s.driver.answered_at(key)
    history = [
        r
        for r in s.driver.updates(session, since=sent, until=answered)
        if update_kind(r.message) in CONVERSATION
    ]
    if history and not s.order_known():
        s.skip("ACP-AGENT-RESUME-002", s.unordered())
        return
    s.check(
        "ACP-AGENT-RESUME-002",
        not history,
        f"{len(history)} conversation entries before the resume answer",
        "no history replayed",
    )


SCENARIOS = (
    ScenarioSpec(
        "session-resume",
        ("agent.resume",),
        session_resume,
        ("initialize", "session/new", "session/prompt", "session/resume"),
    ),
)
