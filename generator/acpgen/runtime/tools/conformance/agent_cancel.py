"""Agent scenarios of cancellation: ``session/cancel`` during a turn (the turn ends
with ``cancelled``, and nothing of it follows the answer), ``$/cancel_request``
naming the prompt (it is still answered), and a cancel with no turn running (the next
prompt ends normally)."""

from __future__ import annotations

from .registry import CheckSpec, ScenarioSpec
from .scenario import Scenario, describe, error_code, result_of, update_kind
from .session_updates import TURN_CONTENT
from .turn_interrupt import interrupted

ORDER = 60
CHECKS = (
    CheckSpec(
        "agent.cancel",
        ("agent",),
        judges=("ACP-AGENT-CANCEL-001", "ACP-AGENT-CANCEL-002"),
    ),
    CheckSpec(
        "agent.cancel-request",
        ("agent",),
        judges=("ACP-PEER-CANCELREQ-001",),
        handlers=("$/cancel_request",),
    ),
    CheckSpec("agent.cancel-idle", ("agent",), judges=("ACP-AGENT-CANCEL-003",)),
)
NEEDS = ("initialize", "session/new", "session/prompt")


def _cancel(s: Scenario, session: str) -> None:
    s.driver.notify("session/cancel", {"sessionId": session})


def cancel(s: Scenario) -> None:
    session = s.session()
    s.step("ACP-AGENT-CANCEL-001")
    status, message, last, _ = interrupted(s, lambda: session, _cancel)
    s.report("ACP-AGENT-CANCEL-001", status, message)
    if status == "SKIPPED" or last.answer is None:
        s.skip("ACP-AGENT-CANCEL-002", "no cancelled turn was answered to look after")
        return
    s.driver.pump(s.quiet)
    late = [  # the turn's own: state updates (commands, mode, usage) may follow
        u
        for u in s.driver.updates(session, since=last.arrived + 1e-9)
        if update_kind(u.message) in TURN_CONTENT
    ]
    if late and not s.order_known():
        s.skip("ACP-AGENT-CANCEL-002", s.unordered())
        return
    s.check(
        "ACP-AGENT-CANCEL-002",
        not late,
        f"{len(late)} session/update after the cancelled turn's answer",
        f"none within {s.quiet:.1f} s after the answer",
    )


def cancel_request(s: Scenario) -> None:
    session = s.session()
    s.step("ACP-PEER-CANCELREQ-001")
    # a prompt of an ordinary length: an agent that does not support $/cancel_request
    # answers it when the turn ends, which must come within --timeout
    key = s.text_prompt(session, "Please count from one to three.")
    s.driver.notify("$/cancel_request", {"requestId": s.driver.id_of(key)})
    answer = s.driver.wait(key)
    code = error_code(answer)
    s.check(
        "ACP-PEER-CANCELREQ-001",
        answer is not None and ("result" in answer or code is not None),
        "the request was not answered after $/cancel_request",
        "answered with "
        f"{'a result' if answer and 'result' in answer else f'error {code}'}",
    )
    s.driver.notify(
        "$/cancel_request", {"requestId": "acp-conformance-no-such-request"}
    )
    after = s.driver.request("session/new", s.new_session_params())
    s.check(
        s.kit.derived("required-handler", "$/cancel_request"),
        isinstance((result_of(after) or {}).get("sessionId"), str),
        f"after $/cancel_request: {describe(after)}",
        "the connection stayed usable",
    )


def cancel_idle(s: Scenario) -> None:
    """``session/cancel`` with no turn running: the next prompt ends with a stop
    reason other than ``cancelled``."""
    session = s.session()
    s.driver.notify("session/cancel", {"sessionId": session})
    s.step("ACP-AGENT-CANCEL-003")
    blocks = [{"type": "text", "text": "Are you still there?"}]
    answer = s.driver.request(
        "session/prompt", {"sessionId": session, "prompt": blocks}
    )
    reason = (result_of(answer) or {}).get("stopReason")
    s.check(
        "ACP-AGENT-CANCEL-003",
        reason is not None and reason != "cancelled",
        f"the prompt after an idle session/cancel answered {describe(answer)}",
        f"the next prompt ended {reason!r}",
    )


SCENARIOS = (
    ScenarioSpec("cancel", ("agent.cancel",), cancel, NEEDS),
    ScenarioSpec("cancel-request", ("agent.cancel-request",), cancel_request, NEEDS),
    ScenarioSpec("cancel-idle", ("agent.cancel-idle",), cancel_idle, NEEDS),
)
