"""A client for tests that records what the agent sends it, and the turns it records.

Schema-independent apart from the wire names of a session update (``sessionId``,
``update``, ``sessionUpdate``: ``agent_message_chunk`` with text ``content``) and of a
prompt's answer (``stopReason``); the generated ``testing`` module binds it to the
package's models (``RecordingClient``) and is rendered with it only when the schema has
those methods.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Generic, Protocol, TypeVar, cast

from pydantic import BaseModel

__all__ = ["Mark", "Permission", "Recorder", "Turn", "agent_text", "prompt_params"]

N = TypeVar("N", bound=BaseModel)
Req = TypeVar("Req", bound=BaseModel)
Resp = TypeVar("Resp", bound=BaseModel)
R = TypeVar("R", bound=BaseModel)
CHUNK = "agent_message_chunk"

Permission = str | Mapping[str, str] | Callable[[Req], Awaitable[Resp]]
"""How a recording client answers permission requests: a decision for every tool kind
(``"allow_once"``, ``"allow_always"``, ``"reject_once"``, ``"reject_always"``), a
decision per tool kind (``{"edit": "allow_once", "*": "reject_once"}``), or your own
``async`` function of the request. A decision picks an option the agent offered."""


Q_contra = TypeVar("Q_contra", contravariant=True)
A_co = TypeVar("A_co", covariant=True)


class _Policy(Protocol[Q_contra, A_co]):
    async def decide(self, request: Q_contra) -> A_co: ...


@dataclass(frozen=True, slots=True)
class Turn(Generic[N, Req, Resp, R]):
    """One prompt turn as a client saw it: its answer and everything the agent sent
    for its session while it ran, in order."""

    session_id: str
    response: R
    """The answer to ``session/prompt``."""
    notifications: tuple[N, ...]
    """The session's ``session/update`` notifications of the turn."""
    permission_requests: tuple[tuple[Req, Resp], ...]
    """The permission requests of the turn, each with the answer the client gave."""

    @property
    def stop_reason(self) -> str:
        """Why the turn ended (``end_turn``, ``cancelled``...)."""
        return str(self.response.model_dump(mode="json").get("stopReason"))

    @property
    def updates(self) -> tuple[Any, ...]:
        """The updates of the turn (each notification's ``update``)."""
        return tuple(getattr(n, "update", None) for n in self.notifications)

    @property
    def text(self) -> str:
        """The agent's message of the turn: its text chunks joined."""
        return agent_text(self.notifications)


@dataclass(frozen=True, slots=True)
class Mark:
    """Where a recording stood (how many notifications and permission requests)."""

    notifications: int
    permission_requests: int


class Recorder(Generic[N, Req, Resp]):
    """The client half of a test: keeps every ``session/update`` notification and every
    permission request with the answer it gave by ``permission`` (a
    :data:`Permission`)."""

    POLICY: ClassVar[Callable[..., Any]]
    """The package's ``permissions.PermissionPolicy``."""

    def __init__(self, permission: Permission[Req, Resp] = "reject_once") -> None:
        if isinstance(permission, str):
            policy = self.POLICY(rules={"*": permission})
        elif callable(permission):
            policy = self.POLICY(permission, rules={"*": "ask"})
        else:
            policy = self.POLICY(rules=dict(permission))
        self._policy: _Policy[Req, Resp] = policy
        self.notifications: list[N] = []
        """Every ``session/update`` notification, in the order handled."""
        self.permission_requests: list[tuple[Req, Resp]] = []
        """Every permission request, with the answer given."""

    async def session_update(self, params: N) -> None:
        self.notifications.append(params)

    async def request_permission(self, params: Req) -> Resp:
        answer = await self._policy.decide(params)
        self.permission_requests.append((params, answer))
        return answer

    def updates(self, session_id: str | None = None) -> list[Any]:
        """The updates recorded (of one session, or of all), in order."""
        return [
            getattr(n, "update", None) for n in self._of(self.notifications, session_id)
        ]

    def text(self, session_id: str | None = None) -> str:
        """The agent's message chunks recorded (of one session, or of all), joined."""
        return agent_text(self._of(self.notifications, session_id))

    def mark(self) -> Mark:
        """Where the recording stands now (for :meth:`turn_since`)."""
        return Mark(len(self.notifications), len(self.permission_requests))

    def turn_since(
        self, mark: Mark, session_id: str, response: R
    ) -> Turn[N, Req, Resp, R]:
        """The turn of ``session_id`` recorded since ``mark``, answered ``response``."""
        notes = self._of(self.notifications[mark.notifications :], session_id)
        asked = [
            (q, a)
            for q, a in self.permission_requests[mark.permission_requests :]
            if _session(q) == session_id
        ]
        return Turn(session_id, response, tuple(notes), tuple(asked))

    @staticmethod
    def _of(notes: Sequence[N], session_id: str | None) -> list[N]:
        return [n for n in notes if session_id is None or _session(n) == session_id]


def _session(message: BaseModel) -> str | None:
    found = message.model_dump(mode="json").get("sessionId")
    return found if isinstance(found, str) else None


def agent_text(notifications: Sequence[BaseModel]) -> str:
    """The text of the agent's message chunks among ``notifications``, joined."""
    pieces: list[str] = []
    for note in notifications:
        update = _members(note.model_dump(mode="json").get("update"))
        if update.get("sessionUpdate") != CHUNK:
            continue
        content = _members(update.get("content"))
        if content.get("type") == "text":
            pieces.append(str(content.get("text", "")))
    return "".join(pieces)


def _members(value: object) -> dict[str, Any]:
    """``value`` when it is a JSON object, else an empty one."""
    return cast("dict[str, Any]", value) if isinstance(value, dict) else {}


def prompt_params(
    model: type[R], session_id: str, prompt: str | Sequence[BaseModel]
) -> R:
    """The params of a prompt (``model``) to ``session_id``: a text, or blocks."""
    if isinstance(prompt, str):
        blocks: list[Any] = [{"type": "text", "text": prompt}]
    else:
        blocks = [b.model_dump(mode="json") for b in prompt]
    return model.model_validate({"sessionId": session_id, "prompt": blocks})
