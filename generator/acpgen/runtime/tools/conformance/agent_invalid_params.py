"""Agent scenario of invalid params: requests whose params the schema refuses (a
prompt without ``sessionId`` or with one of the wrong type, ``session/new`` without
``cwd``) and a prompt for a session never handed out. Each must be answered, never
with silence or a crash, and the agent must still answer the next valid request
(MANDATORY); the refused ones with -32602, the unknown session with an error
(ADVISORY)."""

from __future__ import annotations

from typing import Any

from .registry import CheckSpec, ScenarioSpec
from .scenario import Scenario, describe, error_code, result_of

ORDER = 55
CHECKS = (
    CheckSpec(
        "agent.invalid-params",
        ("agent",),
        judges=("ACP-AGENT-INVALID-001", "ACP-AGENT-INVALID-002"),
    ),
)
INVALID_PARAMS = -32602


def _cases(session: str, cwd: str) -> list[tuple[str, str, dict[str, Any], bool]]:
    """(what, method, params, the schema refuses the params)."""
    text = [{"type": "text", "text": "Invalid params ahead."}]
    return [
        ("session/prompt without sessionId", "session/prompt", {"prompt": text}, True),
        (
            "session/prompt with a sessionId of the wrong type",
            "session/prompt",
            {"sessionId": 42, "prompt": text},
            True,
        ),
        (
            "session/prompt for a session never handed out",
            "session/prompt",
            {"sessionId": "acp-conformance-no-such-session", "prompt": text},
            False,
        ),
        ("session/new without cwd", "session/new", {"mcpServers": []}, True),
    ]


def invalid_params(s: Scenario) -> None:
    session = s.session()
    s.step("ACP-AGENT-INVALID-001")
    routed = s.options.url is None or s.options.transport != "http"
    for what, method, params, refused in _cases(session, s.cwd):
        if (
            not routed
            and method == "session/prompt"
            and not isinstance(params.get("sessionId"), str)
        ):
            # Streamable HTTP routes a prompt by its string sessionId: none reaches it
            continue
        answer = s.driver.request(method, params)
        after = s.driver.request("session/new", s.new_session_params())
        alive = isinstance((result_of(after) or {}).get("sessionId"), str)
        s.check(
            "ACP-AGENT-INVALID-001",
            answer is not None and alive,
            f"{what}: {describe(answer)}"
            + ("" if alive else f"; then session/new: {describe(after)}"),
            f"{what}: answered, and the next request too",
        )
        if answer is None:
            continue
        code = error_code(answer)
        good = code == INVALID_PARAMS if refused else code is not None
        wanted = f"error {INVALID_PARAMS} (invalid params)" if refused else "an error"
        s.check(
            "ACP-AGENT-INVALID-002",
            good,
            f"{what}: {describe(answer)}, not {wanted}",
            f"{what}: {describe(answer)}",
        )


SCENARIOS = (
    ScenarioSpec(
        "invalid-params",
        ("agent.invalid-params",),
        invalid_params,
        ("initialize", "session/new", "session/prompt"),
    ),
)
