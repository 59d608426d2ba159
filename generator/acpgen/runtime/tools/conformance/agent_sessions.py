"""Agent scenarios of ``session/new``: a session, and a second one with another id."""

from __future__ import annotations

from .registry import CheckSpec, ScenarioSpec
from .scenario import Scenario, describe, error_code, result_of

ORDER = 30
CHECKS = (
    CheckSpec(
        "agent.session-new",
        ("agent",),
        judges=("ACP-AGENT-SESSION-001", "ACP-AGENT-AUTH-003"),
        handlers=("session/new",),
    ),
    CheckSpec("agent.session-new-twice", ("agent",), judges=("ACP-AGENT-SESSION-002",)),
)


def session_new(s: Scenario) -> None:
    s.handshake()
    s.step("ACP-AGENT-SESSION-001", s.kit.derived("required-handler", "session/new"))
    first = s.driver.need("session/new", s.new_session_params())
    s.handler("session/new", first)
    refused = error_code(first) == -32000
    if s.run.auth_methods:
        s.skip("ACP-AGENT-AUTH-003", "the agent lists authMethods")
        if refused and not s.options.auth_method:
            s.run.blocked = "session/new needs authentication; give --auth-method"
            s.skip("ACP-AGENT-SESSION-001", s.run.blocked)
            return
    elif refused:
        s.fail(
            "ACP-AGENT-AUTH-003",
            "session/new refused with -32000 (auth_required) although no authMethods "
            "were listed",
        )
    else:
        s.passed("ACP-AGENT-AUTH-003", "session/new not refused as auth_required")
    one = (result_of(first) or {}).get("sessionId")
    if not isinstance(one, str) or not one:
        s.fail("ACP-AGENT-SESSION-001", f"session/new: {describe(first)}")
        return
    s.passed("ACP-AGENT-SESSION-001", f"session id {one!r}")
    s.step("ACP-AGENT-SESSION-002")
    two = (result_of(s.driver.need("session/new", s.new_session_params())) or {}).get(
        "sessionId"
    )
    s.check(
        "ACP-AGENT-SESSION-002",
        isinstance(two, str) and bool(two) and two != one,
        f"two session/new calls answered {one!r} and {two!r}",
        f"{one!r}, {two!r}",
    )


SCENARIOS = (
    ScenarioSpec(
        "session-new",
        ("agent.session-new", "agent.session-new-twice"),
        session_new,
        ("initialize", "session/new"),
    ),
)
