"""Agent authentication (where the agent lists ``authMethods``): an id it never
listed is refused; the one given with ``--auth-method`` is accepted and lets
``session/new`` in. :func:`authenticate` is also the step every handshake takes when
``--auth-method`` is given."""

from __future__ import annotations

from typing import Any

from .registry import CheckSpec, ScenarioSpec
from .scenario import Aborted, Scenario, describe, error_code, result_of

ORDER = 20
METHODS = ("authenticate",)
CHECKS = (
    CheckSpec(
        "agent.authenticate",
        ("agent",),
        judges=("ACP-AGENT-AUTH-002", "ACP-AGENT-AUTH-005"),
        handlers=("authenticate",),
    ),
)


def authenticate(s: Scenario, driver: Any) -> None:
    """``authenticate`` with ``--auth-method``, after every handshake: a scenario
    that cannot authenticate is blocked (the ``authenticate`` scenario judges it)."""
    answer = driver.request("authenticate", {"methodId": s.options.auth_method})
    if answer is None or "error" in answer:
        raise Aborted(
            f"authenticate with {s.options.auth_method!r}: {describe(answer)}"
        )


def _authenticate_judged(s: Scenario) -> None:
    answer = s.driver.request("authenticate", {"methodId": s.options.auth_method})
    error = (answer or {}).get("error")
    s.check(
        "ACP-AGENT-AUTH-002",
        answer is not None and error is None,
        f"authenticate with {s.options.auth_method!r}: {error or 'no answer'}",
        f"authenticate with {s.options.auth_method!r} succeeded",
    )
    s.handler("authenticate", answer)


def authentication(s: Scenario) -> None:
    if not s.run.auth_methods:
        return
    answer = s.driver.need(
        "initialize", s.init_params(), timeout=s.options.startup_timeout
    )
    if result_of(answer) is None:
        return
    listed = {m.get("id") for m in s.run.auth_methods if isinstance(m, dict)}
    unknown = "acp-conformance-unadvertised-method"
    while unknown in listed:
        unknown += "-x"
    s.step("ACP-AGENT-AUTH-005")
    stranger = s.driver.request("authenticate", {"methodId": unknown})
    s.check(
        "ACP-AGENT-AUTH-005",
        stranger is not None and "error" in stranger,
        f"authenticate with {unknown!r}, an id the agent never listed: "
        f"{describe(stranger)}",
        f"an id never listed was refused: {describe(stranger)}",
    )
    if not s.options.auth_method:
        s.skip("ACP-AGENT-AUTH-002", "give --auth-method to authenticate")
        return
    s.step("ACP-AGENT-AUTH-002", s.kit.derived("required-handler", "authenticate"))
    _authenticate_judged(s)
    after = s.driver.request("session/new", s.new_session_params())
    s.check(
        "ACP-AGENT-AUTH-002",
        error_code(after) != -32000,
        f"session/new after authenticate with {s.options.auth_method!r}: "
        f"{describe(after)}",
        "session/new accepted after authenticate",
    )


SCENARIOS = (
    ScenarioSpec(
        "authenticate",
        ("agent.authenticate",),
        authentication,
        ("initialize", "authenticate"),
    ),
)
