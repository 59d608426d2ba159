"""For clients: decide ``session/request_permission`` by policy, remembering "always"
decisions per session and tool kind.

Schema-independent apart from the names of the permission request (``sessionId``,
``toolCall.kind``, ``options[].optionId`` / ``kind``) and of its answer (``outcome``:
``selected`` with an ``optionId``, or ``cancelled``); the generated ``permissions``
module binds it to the package's models and is rendered only when the schema has that
request.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any, ClassVar, Generic, TypeVar

from pydantic import BaseModel

from .fold import as_mapping

Req = TypeVar("Req", bound=BaseModel)
Resp = TypeVar("Resp", bound=BaseModel)

ALLOW_ONCE, ALLOW_ALWAYS = "allow_once", "allow_always"
REJECT_ONCE, REJECT_ALWAYS = "reject_once", "reject_always"
DECISIONS = (ALLOW_ONCE, ALLOW_ALWAYS, REJECT_ONCE, REJECT_ALWAYS)
ANY_KIND = "*"
"""The tool kind of a rule that applies to every kind without a rule of its own."""


class PermissionPolicy(Generic[Req, Resp]):
    """Answers permission requests: a decision remembered for the session and the tool's
    kind first, then a rule for the kind (``rules={"read": "allow_always", "*":
    "ask"}``), else ``ask`` (your user interface; an "always" option chosen there is
    remembered), else the first option of kind ``reject_once``, or ``cancelled`` when
    there is none.

    A decision picks the request's option of that kind, or else of the same verdict
    (``allow_always`` takes an ``allow_once`` option when the agent offers no other)."""

    RESPONSE: ClassVar[type[BaseModel]]

    def __init__(
        self,
        ask: Callable[[Req], Awaitable[Resp]] | None = None,
        *,
        rules: Mapping[str, str] | None = None,
    ) -> None:
        unknown = [d for d in (rules or {}).values() if d not in (*DECISIONS, "ask")]
        if unknown:
            raise ValueError(
                f"unknown decisions {unknown}: use one of {DECISIONS} or 'ask'"
            )
        self._ask, self._rules = ask, dict(rules or {})
        self._memory: dict[str, dict[str, str]] = {}

    async def decide(self, request: Req) -> Resp:
        """The answer to ``request`` (use it as the client's ``request_permission``)."""
        wire = request.model_dump(mode="json")
        session, kind = str(wire.get("sessionId")), _tool_kind(wire)
        options = [
            m for o in wire.get("options") or () if (m := as_mapping(o)) is not None
        ]
        for decision in (self._memory.get(session, {}).get(kind), self._rule(kind)):
            chosen = _option(options, decision)
            if chosen is not None:
                self._remember(session, kind, decision)
                return self._selected(chosen)
        if self._ask is not None and self._rule(kind) in (None, "ask"):
            answer = await self._ask(request)
            picked = _picked(options, answer.model_dump(mode="json"))
            if picked is not None:
                self._remember(session, kind, str(picked.get("kind")))
            return answer
        chosen = _option(options, REJECT_ONCE)
        return self._selected(chosen) if chosen is not None else self._cancelled()

    def remembered(self, session_id: str) -> Mapping[str, str]:
        """Tool kind -> the "always" decision remembered for the session."""
        return dict(self._memory.get(session_id, {}))

    def forget(self, session_id: str | None = None) -> None:
        """Forget what was remembered for one session (or for every session)."""
        if session_id is None:
            self._memory.clear()
        else:
            self._memory.pop(session_id, None)

    def _rule(self, kind: str) -> str | None:
        return self._rules.get(kind, self._rules.get(ANY_KIND))

    def _remember(self, session: str, kind: str, decision: str | None) -> None:
        if decision in (ALLOW_ALWAYS, REJECT_ALWAYS):
            self._memory.setdefault(session, {})[kind] = decision

    def _selected(self, option: Mapping[str, Any]) -> Resp:
        outcome = {"outcome": "selected", "optionId": option.get("optionId")}
        return self._response({"outcome": outcome})

    def _cancelled(self) -> Resp:
        return self._response({"outcome": {"outcome": "cancelled"}})

    def _response(self, wire: dict[str, Any]) -> Resp:
        answer: Resp = self.RESPONSE.model_validate(wire)  # type: ignore[assignment]
        return answer


def _tool_kind(wire: Mapping[str, Any]) -> str:
    tool = as_mapping(wire.get("toolCall"))
    kind = tool.get("kind") if tool is not None else None
    return kind if isinstance(kind, str) else "other"


def _option(
    options: list[Mapping[str, Any]], decision: str | None
) -> Mapping[str, Any] | None:
    if decision is None or decision == "ask":
        return None
    verdict = decision.split("_")[0]
    exact = [o for o in options if o.get("kind") == decision]
    same = [o for o in options if str(o.get("kind", "")).startswith(verdict + "_")]
    found = exact or same
    return found[0] if found else None


def _picked(
    options: list[Mapping[str, Any]], answer: Mapping[str, Any]
) -> Mapping[str, Any] | None:
    outcome = as_mapping(answer.get("outcome"))
    if outcome is None or outcome.get("outcome") != "selected":
        return None
    return next(
        (o for o in options if o.get("optionId") == outcome.get("optionId")), None
    )
