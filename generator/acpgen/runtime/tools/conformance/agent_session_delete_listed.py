"""Agent ``session/delete`` with ``session/list`` (where both are advertised): a
deleted session is no longer listed."""

from __future__ import annotations

from .registry import CheckSpec, ScenarioSpec
from .scenario import Scenario, result_of

ORDER = 95
METHODS = ("session/delete", "session/list")
CHECKS = (
    CheckSpec("agent.delete-listed", ("agent",), judges=("ACP-AGENT-DELETE-003",)),
)


def deleted_unlisted(s: Scenario) -> None:
    if not s.applies("ACP-AGENT-DELETE-003"):
        return
    session = s.session()
    if result_of(s.driver.request("session/delete", {"sessionId": session})) is None:
        s.skip(
            "ACP-AGENT-DELETE-003", "session/delete failed (see ACP-AGENT-DELETE-001)"
        )
        return
    listed = result_of(s.driver.request("session/list", {})) or {}
    sessions = listed.get("sessions")
    ids = [i.get("sessionId") for i in sessions or [] if isinstance(i, dict)]
    s.check(
        "ACP-AGENT-DELETE-003",
        isinstance(sessions, list) and session not in ids,
        f"after session/delete of {session!r}, session/list answered {sessions!r}",
        "the deleted session is no longer listed",
    )


SCENARIOS = (
    ScenarioSpec(
        "session-delete-listed",
        ("agent.delete-listed",),
        deleted_unlisted,
        ("initialize", "session/new", "session/delete", "session/list"),
    ),
)
