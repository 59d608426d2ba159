"""Interrupting a turn (``session/cancel``, ``session/close``) and telling, from what
arrived when, whether the agent had the interruption before it answered.

The kit interrupts as soon as the turn has visibly started (its first update, or
:data:`START_WAIT` after the prompt when none comes), then at once sends a ``_``
request of its own (a *marker*: every agent must answer one). Each line is stamped
when it arrives, so:

- an answer that arrived before the interruption was sent ended the turn first: the
  interruption proves nothing (SKIPPED);
- ``cancelled`` passes;
- an error, no answer, or another stop reason fails when the agent surely had the
  interruption: it answered the marker first (it had read past the interruption), or
  its answer came more than :data:`LATE` seconds after it;
- otherwise the answer may have crossed the interruption on the wire: the kit tries
  again, interrupting later in the turn. When every try ends within ``LATE`` of its
  interruption, the answers either track the interruptions (the agent ends the turn
  on it, with the wrong stop reason) or keep the turn's own length (it ignores it):
  both fail. Anything else is SKIPPED, with the timings."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .scenario import Scenario, describe, result_of

START_WAIT = 0.1
"""Seconds the kit waits for a turn's first update before it interrupts anyway."""
OFFSETS = (0.0, 0.15, 0.3)
"""When each try interrupts, in seconds after the turn's first update."""
LATE = {"stdio": 1.0, "remote": 2.0}
"""Seconds after an interruption past which an answer cannot have crossed it."""
MARKER = "_acp_conformance/after_interrupt"
SPREAD = 0.1
"""Seconds within which timings count as the same."""


@dataclass(frozen=True, slots=True)
class Try:
    """One interrupted turn."""

    outcome: str
    """``first`` (the turn ended before the interruption), ``cancelled``, ``wrong`` (a
    decided failure), ``unclear`` (it may have crossed), ``none`` (no answer)."""
    reason: Any
    answer: dict[str, Any] | None
    interrupted: float
    """When the interruption was sent, in seconds after the prompt."""
    answered: float
    """When the answer arrived, in seconds after the prompt."""
    why: str = ""
    arrived: float = float("inf")
    """When the answer arrived (``time.monotonic``)."""


Interrupt = Callable[[Scenario, str], None]


def interrupt_turn(
    s: Scenario, session: str, interrupt: Interrupt, offset: float
) -> Try:
    """One turn of ``--cancel-prompt``, interrupted ``offset`` s after its first
    update."""
    d = s.driver
    d.cancelled.discard(session)
    key = s.text_prompt(session, s.options.cancel_prompt)
    start = d.sent[key]
    _until_started(s, session, key, start)
    if offset and key not in d.answers:
        _listen(s, key, offset)
    if key in d.answers:
        return _ended_first(d, key, start)
    d.cancelled.add(session)
    at = time.monotonic()
    interrupt(s, session)
    marker = d.start(MARKER, {"sessionId": session})
    answer = d.wait(key)
    if answer is None:
        return Try("none", None, None, at - start, float("inf"), "no answer")
    answered = d.answered_at(key)
    reason = (result_of(answer) or {}).get("stopReason")
    late = LATE["remote" if s.options.url else "stdio"]
    times = (at - start, answered - start)
    if answered < at:
        return Try("first", reason, answer, *times, arrived=answered)
    if reason == "cancelled":
        return Try("cancelled", reason, answer, *times, arrived=answered)
    marked = d.answers.get(marker)
    if marked is not None and marked.t < answered:
        why = "it answered a request sent after the interruption first"
        return Try("wrong", reason, answer, *times, why, answered)
    if answered - at > late:
        why = f"it answered {answered - at:.2f} s after the interruption"
        return Try("wrong", reason, answer, *times, why, answered)
    return Try("unclear", reason, answer, *times, arrived=answered)


def _until_started(s: Scenario, session: str, key: str, start: float) -> None:
    """Read until the turn's first update (or its answer), at most :data:`START_WAIT`
    when nothing comes."""
    d = s.driver
    deadline = start + START_WAIT
    while key not in d.answers and (left := deadline - time.monotonic()) > 0:
        got = d.step(left)
        if got is not None and got.message.get("method") == "session/update":
            params = got.message.get("params")
            if isinstance(params, dict) and params.get("sessionId") == session:
                return


def _listen(s: Scenario, key: str, seconds: float) -> None:
    deadline = time.monotonic() + seconds
    d = s.driver
    while key not in d.answers and (left := deadline - time.monotonic()) > 0:
        d.step(left)


def _ended_first(d: Any, key: str, start: float) -> Try:
    answer = d.answers[key].message
    reason = (result_of(answer) or {}).get("stopReason")
    t = d.answers[key].t
    return Try("first", reason, answer, t - start, t - start, arrived=t)


def decide(tries: list[Try]) -> tuple[str, str, Try]:
    """The status and message of a series of tries (the last try decides, unless all
    were unclear: then their timings do)."""
    last = tries[-1]
    if last.outcome == "cancelled":
        return (
            "PASS",
            f"answered cancelled {last.answered - last.interrupted:.2f} s after the "
            "interruption",
            last,
        )
    if last.outcome == "none":
        return (
            "FAIL",
            "no answer to the prompt within --timeout of the interruption",
            last,
        )
    if last.outcome == "first":
        return (
            "SKIPPED",
            f"the turn ended ({last.reason!r}) before the interruption could be sent: "
            "give a longer --cancel-prompt",
            last,
        )
    if last.outcome == "wrong":
        return (
            "FAIL",
            f"after the interruption the prompt answered {_said(last)}: {last.why}",
            last,
        )
    return _from_timings(tries)


def _from_timings(tries: list[Try]) -> tuple[str, str, Try]:
    delays = [t.answered - t.interrupted for t in tries]
    points = [t.interrupted for t in tries]
    ends = [t.answered for t in tries]
    timings = ", ".join(
        f"interrupted at {p:.2f} s, answered at {e:.2f} s"
        for p, e in zip(points, ends, strict=True)
    )
    last = tries[-1]
    if len(tries) > 1 and _spread(points) >= 2 * SPREAD:
        if _spread(delays) <= SPREAD:
            return (
                "FAIL",
                f"the turn ended {_said(last)} right after each interruption "
                f"({timings}): "
                "it ends the turn on it, with the wrong stop reason",
                last,
            )
        if _spread(ends) <= SPREAD and min(delays) > SPREAD / 2:
            return (
                "FAIL",
                f"the turn ended {_said(last)} at the same time whenever it was "
                f"interrupted ({timings}): it ignores the interruption",
                last,
            )
    return (
        "SKIPPED",
        f"answered {_said(last)} close to each interruption ({timings}): the answers "
        "may have crossed it; give a longer --cancel-prompt",
        last,
    )


def _spread(values: list[float]) -> float:
    return max(values) - min(values)


def _said(t: Try) -> str:
    return f"{t.reason!r}" if t.reason is not None else describe(t.answer)


def interrupted(
    s: Scenario, sessions: Callable[[], str], interrupt: Interrupt
) -> tuple[str, str, Try, str]:
    """Try up to :data:`OFFSETS` times, until a try decides (``sessions`` gives the
    session of each try); the status, message, last try and its session. A turn that
    ended before the interruption is tried again at once (a busy machine may have
    been slow to send it), one that may have crossed it later in the turn."""
    tries: list[Try] = []
    session = ""
    later = iter(OFFSETS)
    offset = next(later)
    for _ in OFFSETS:
        session = sessions()
        tries.append(interrupt_turn(s, session, interrupt, offset))
        if tries[-1].outcome not in ("unclear", "first"):
            break
        if tries[-1].outcome == "unclear":
            offset = next(later, offset)
    unclear = [t for t in tries if t.outcome == "unclear"]
    decided = tries if tries[-1].outcome != "first" or not unclear else unclear
    return (*decide(decided), session)
