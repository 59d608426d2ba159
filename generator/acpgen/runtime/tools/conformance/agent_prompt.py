"""Agent scenarios of prompt turns: a text prompt (its updates, its answer, nothing
of the turn after it, tool calls announced before they are updated), one carrying
``_meta``, one with a resource link, one for a session never handed out, and one with
each content type the agent advertised beyond the baseline."""

from __future__ import annotations

from typing import Any

from .driver import NoAnswer
from .registry import CheckSpec, ScenarioSpec
from .scenario import Scenario, describe, error_code, result_of, update_kind
from .session_updates import TURN_CONTENT

ORDER = 50
CHECKS = (
    CheckSpec(
        "agent.prompt-text",
        ("agent",),
        judges=("ACP-AGENT-PROMPT-001", "ACP-AGENT-PROMPT-002"),
        handlers=("session/prompt",),
    ),
    CheckSpec("agent.prompt-meta", ("agent",), judges=("ACP-PEER-EXT-003",)),
    CheckSpec(
        "agent.prompt-resource-link", ("agent",), judges=("ACP-AGENT-PROMPT-003",)
    ),
    CheckSpec("agent.unknown-session", ("agent",), judges=("ACP-AGENT-SESSION-003",)),
    CheckSpec(
        "agent.capability-honor",
        ("agent",),
        honors=("ContentBlock[image]", "ContentBlock[audio]", "ContentBlock[resource]"),
    ),
)
NEEDS = ("initialize", "session/new", "session/prompt")
TRACEPARENT = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"


def prompt_text(s: Scenario) -> None:
    session = s.session()
    s.step("ACP-AGENT-PROMPT-001", s.kit.derived("required-handler", "session/prompt"))
    key = s.text_prompt(session, "Hello, conformance kit: héllo ✓")
    sent = s.driver.sent[key]
    answer = s.driver.wait(key)
    if answer is None:
        raise NoAnswer("session/prompt", s.options.timeout)
    s.handler("session/prompt", answer)
    reason = (result_of(answer) or {}).get("stopReason")
    if reason is None:
        s.fail("ACP-AGENT-PROMPT-001", f"session/prompt: {describe(answer)}")
        return
    s.check(
        "ACP-AGENT-PROMPT-001",
        s.judged_ok("message-result", "session/prompt"),
        f"stopReason {reason!r} is not one the schema lists",
        f"stopReason {reason!r}",
    )
    answered = s.driver.answered_at(key)
    s.driver.pump(s.quiet)
    _updates_named(s, session, sent, answered)
    late = [
        u
        for u in s.driver.updates(session, since=answered + 1e-9)
        if update_kind(u.message) in TURN_CONTENT
    ]
    if late and not s.order_known():
        s.skip("ACP-AGENT-PROMPT-004", s.unordered())
    else:
        s.check(
            "ACP-AGENT-PROMPT-004",
            not late,
            f"{len(late)} session/update of the turn after its answer",
            f"none within {s.quiet:.1f} s after the answer",
        )
    before = s.driver.updates(session, since=sent, until=answered)
    tool_calls(s, [u.message for u in before])


def _updates_named(s: Scenario, session: str, sent: float, answered: float) -> None:
    during = [
        r
        for r in s.driver.received
        if r.message.get("method") == "session/update" and sent <= r.t <= answered
    ]
    elsewhere = [
        (r.message.get("params") or {}).get("sessionId")
        for r in during
        if (r.message.get("params") or {}).get("sessionId") != session
    ]
    if elsewhere:
        s.fail(
            "ACP-AGENT-PROMPT-002",
            f"during the turn of session {session!r}, a session/update names "
            f"{elsewhere[0]!r}, a session the agent did not hand out here",
        )
    elif not during:
        s.skip("ACP-AGENT-PROMPT-002", "the turn sent no session/update")
    else:
        s.check(
            "ACP-AGENT-PROMPT-002",
            s.judged_ok("message-params", "session/update"),
            "an update the schema refuses (see the session/update -PARAMS requirement)",
            f"{len(during)} updates, each naming the session",
        )


def tool_calls(s: Scenario, updates: list[dict[str, Any]]) -> None:
    """A tool call is announced (``tool_call``) before it is updated."""
    announced: set[Any] = set()
    seen = False
    for message in updates:
        update = message["params"].get("update") or {}
        kind, call = update.get("sessionUpdate"), update.get("toolCallId")
        if kind == "tool_call":
            seen = True
            announced.add(call)
        elif kind == "tool_call_update":
            seen = True
            if call not in announced:
                s.fail(
                    "ACP-AGENT-PROMPT-005",
                    f"tool call {call!r} updated before it was announced",
                )
                return
    if seen:
        s.passed(
            "ACP-AGENT-PROMPT-005", f"{len(announced)} tool calls, each announced first"
        )
    else:
        s.skip("ACP-AGENT-PROMPT-005", "the turn made no tool call")


def prompt_meta(s: Scenario) -> None:
    """A prompt whose params and content block carry ``_meta`` (a W3C trace key,
    nested objects): processed like the same prompt without them."""
    session = s.session()
    meta = {
        "traceparent": TRACEPARENT,
        "acp-conformance": {"nested": [1, {"deep": None}], "flag": True},
    }
    block = {"type": "text", "text": "A prompt carrying _meta.", "_meta": meta}
    answer = s.driver.need(
        "session/prompt", {"sessionId": session, "prompt": [block], "_meta": meta}
    )
    s.check(
        "ACP-PEER-EXT-003",
        (result_of(answer) or {}).get("stopReason") is not None,
        f"a prompt carrying _meta: {describe(answer)}",
        "a prompt carrying _meta was answered with a stop reason",
    )


def unknown_session(s: Scenario) -> None:
    """What a prompt for a session the agent never handed out gets (recorded)."""
    s.handshake()
    s.step("ACP-AGENT-SESSION-003")
    answer = s.prompt(
        "acp-conformance-no-such-session", [{"type": "text", "text": "Anyone there?"}]
    )
    if answer is not None:
        s.passed("ACP-AGENT-SESSION-003", f"answered {describe(answer)}")


def prompt_resource_link(s: Scenario) -> None:
    session = s.session()
    link = {
        "type": "resource_link",
        "uri": "file:///tmp/acp-conformance.txt",
        "name": "acp-conformance.txt",
    }
    answer = s.prompt(session, [{"type": "text", "text": "Look at this file."}, link])
    s.check(
        "ACP-AGENT-PROMPT-003",
        (result_of(answer) or {}).get("stopReason") is not None,
        f"a prompt with a resource_link: {describe(answer)}",
        "answered with a stop reason",
    )


_PNG = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQ"
    "AAAABJRU5ErkJggg=="
)
_WAV = "UklGRiQAAABXQVZFZm10IBAAAAABAAEAQB8AAIA+AAACABAAZGF0YQAAAAA="
BLOCKS: dict[str, dict[str, Any]] = {
    "image": {"type": "image", "mimeType": "image/png", "data": _PNG},
    "audio": {"type": "audio", "mimeType": "audio/wav", "data": _WAV},
    "resource": {
        "type": "resource",
        "resource": {
            "uri": "file:///tmp/acp-conformance.txt",
            "text": "hello",
            "mimeType": "text/plain",
        },
    },
}


def prompt_content(s: Scenario) -> None:
    """Every content type the agent advertised beyond the baseline, in a prompt."""
    wanted = [
        (tag, s.kit.derived("capability-honor", f"ContentBlock[{tag}]"))
        for tag in BLOCKS
    ]
    wanted = [(tag, rid) for tag, rid in wanted if rid and s.applies(rid)]
    if not wanted:
        return
    session = s.session()
    for tag, rid in wanted:
        answer = s.prompt(
            session, [{"type": "text", "text": f"A {tag} block follows."}, BLOCKS[tag]]
        )
        s.check(
            rid,
            (result_of(answer) or {}).get("stopReason") is not None
            and error_code(answer) not in (-32601, -32602),
            f"a prompt with a {tag} block: {describe(answer)}",
            f"a prompt with a {tag} block was answered",
        )


SCENARIOS = (
    ScenarioSpec(
        "prompt-text",
        ("agent.prompt-text", "trace.turn-order", "trace.tool-call-announced"),
        prompt_text,
        NEEDS,
    ),
    ScenarioSpec("prompt-meta", ("agent.prompt-meta",), prompt_meta, NEEDS),
    ScenarioSpec(
        "prompt-resource-link",
        ("agent.prompt-resource-link",),
        prompt_resource_link,
        NEEDS,
    ),
    ScenarioSpec("unknown-session", ("agent.unknown-session",), unknown_session, NEEDS),
    ScenarioSpec("prompt-content", ("agent.capability-honor",), prompt_content, NEEDS),
)
