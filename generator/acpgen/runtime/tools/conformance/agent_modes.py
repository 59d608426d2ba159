"""Agent session modes (where a session answer offers them): the current mode is one
of those offered, and ``session/set_mode`` to another one succeeds, any
``current_mode_update`` it causes naming an offered mode."""

from __future__ import annotations

from typing import Any

from .registry import CheckSpec, ScenarioSpec
from .scenario import Scenario, describe, error_code, result_of, update_kind

ORDER = 40
METHODS = ("session/set_mode",)
CHECKS = (
    CheckSpec(
        "agent.modes",
        ("agent",),
        judges=("ACP-AGENT-MODES-001", "ACP-AGENT-MODES-002"),
        handlers=("session/set_mode",),
    ),
)


def modes(s: Scenario) -> None:
    s.handshake()
    answer = s.driver.need("session/new", s.new_session_params())
    result = result_of(answer) or {}
    session, offered = result.get("sessionId"), result.get("modes")
    if not isinstance(session, str) or not isinstance(offered, dict):
        return  # no modes offered: their requirements do not apply
    if not offered.get("currentModeId"):
        return
    s.run.handed_out.add("SessionModeId")
    available = offered.get("availableModes")
    ids = [m.get("id") for m in available or [] if isinstance(m, dict)]
    current = offered.get("currentModeId")
    s.check(
        "ACP-AGENT-MODES-001",
        current in ids,
        f"currentModeId {current!r} is not one of availableModes {ids!r}",
        f"currentModeId {current!r} is offered",
    )
    _switch(s, session, ids, current)


def _switch(s: Scenario, session: str, ids: list[Any], current: Any) -> None:
    other = next((m for m in ids if m != current), current)
    count = len(s.driver.received)
    s.step("ACP-AGENT-MODES-002", s.kit.derived("required-handler", "session/set_mode"))
    answer = s.driver.request(
        "session/set_mode", {"sessionId": session, "modeId": other}
    )
    s.check(
        s.kit.derived("required-handler", "session/set_mode"),
        answer is not None and error_code(answer) != -32601,
        f"session/set_mode: {describe(answer)}",
        "session/set_mode answered",
    )
    if result_of(answer) is None:
        s.fail(
            "ACP-AGENT-MODES-002", f"session/set_mode to {other!r}: {describe(answer)}"
        )
        return
    s.driver.pump(s.quiet)
    named = [
        r.message["params"]["update"].get("currentModeId")
        for r in s.driver.received[count:]
        if update_kind(r.message) == "current_mode_update"
    ]
    stray = [m for m in named if m not in ids]
    s.check(
        "ACP-AGENT-MODES-002",
        not stray,
        f"after session/set_mode to {other!r}, a current_mode_update names "
        f"{stray[0] if stray else None!r}, not one of {ids!r}",
        f"switched to {other!r}",
    )


SCENARIOS = (
    ScenarioSpec(
        "modes",
        ("agent.modes",),
        modes,
        ("initialize", "session/new", "session/set_mode"),
    ),
)
