"""Agent ``session/load`` (where ``loadSession`` is advertised): a session prompted
on the connection is loaded, its conversation replayed as ``session/update`` before
the answer. Only that session's conversation entries count: state updates (available
commands, the current mode, config options, session info, usage) may follow the
answer, as the spec has it ("when all the conversation entries have been streamed")."""

from __future__ import annotations

from .registry import CheckSpec, ScenarioSpec
from .scenario import Scenario, describe, error_code, result_of, update_kind
from .session_updates import CONVERSATION

ORDER = 80
METHODS = ("session/load",)
CHECKS = (
    CheckSpec(
        "agent.load",
        ("agent",),
        judges=("ACP-AGENT-LOAD-001", "ACP-AGENT-LOAD-002", "ACP-AGENT-LOAD-003"),
        honors=("session/load",),
    ),
)


def load(s: Scenario) -> None:
    if not s.applies("ACP-AGENT-LOAD-001"):
        return
    session = s.session()
    s.prompt(session, [{"type": "text", "text": "Remember this turn."}])
    s.driver.pump(s.quiet)
    s.step("ACP-AGENT-LOAD-001", s.kit.derived("capability-honor", "session/load"))
    key = s.driver.start(
        "session/load", {"sessionId": session, "cwd": s.cwd, "mcpServers": []}
    )
    sent = s.driver.sent[key]
    answer = s.driver.wait(key)
    s.check(
        s.kit.derived("capability-honor", "session/load"),
        answer is not None and error_code(answer) not in (-32601, -32602),
        f"session/load: {describe(answer)}",
        "session/load answered",
    )
    if result_of(answer) is None:
        s.fail("ACP-AGENT-LOAD-001", f"session/load: {describe(answer)}")
        return
    s.passed("ACP-AGENT-LOAD-001", "session/load answered with a result")
    answered = s.driver.answered_at(key)
    s.driver.pump(s.quiet)
    replay = [
        r
        for r in s.driver.updates(session, since=sent)
        if update_kind(r.message) in CONVERSATION
    ]
    before = [r for r in replay if r.t <= answered]
    after = [r for r in replay if r.t > answered]
    if after and not s.order_known():
        s.skip("ACP-AGENT-LOAD-002", s.unordered())
    elif not before:
        s.fail(
            "ACP-AGENT-LOAD-002",
            "no conversation entry replayed before the session/load answer",
        )
    elif after:
        kinds = sorted({str(update_kind(r.message)) for r in after})
        s.fail(
            "ACP-AGENT-LOAD-002",
            f"{len(after)} conversation entries ({', '.join(kinds)}) after the "
            "session/load answer",
        )
    else:
        s.passed(
            "ACP-AGENT-LOAD-002",
            f"{len(before)} conversation entries replayed before the answer",
        )
    seen = {update_kind(r.message) for r in before}
    replayed = sorted(str(k) for k in seen if k)
    s.check(
        "ACP-AGENT-LOAD-003",
        "user_message_chunk" in seen,
        f"replayed kinds: {replayed} (no user_message_chunk)",
        f"replayed kinds: {replayed}",
    )


SCENARIOS = (
    ScenarioSpec(
        "load",
        ("agent.load",),
        load,
        ("initialize", "session/new", "session/prompt", "session/load"),
    ),
)
