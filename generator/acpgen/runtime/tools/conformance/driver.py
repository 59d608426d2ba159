"""The kit as a client of the agent under test, for one scenario: it sends, reads
every line the agent writes (each judged, each with the time it arrived), answers the
agent's requests (a permission request with its first option, or ``cancelled`` once
the kit cancelled the turn; anything else "method not found"), and keeps what it was
sent.

An answer that cannot be matched to a request of the kit's (an id of another JSON
type, none at all, or a message that is no JSON-RPC answer but carries an id and a
result) ends the scenario at once (:class:`Unmatched`): waiting for the answer it
meant would only run into the timeout."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from typing import Any

from ...wire.rpc import MethodSpec
from .agent_process import Peer, PeerExited
from .judge import Judge

METHOD_NOT_FOUND = -32601


@dataclass(slots=True)
class Received:
    """What the agent wrote, in order, with the time it arrived."""

    t: float
    message: dict[str, Any]


class Unmatched(Exception):
    """An answer the kit cannot match to its request: the scenario ends."""


class NoAnswer(Exception):
    """A request the scenario needs went unanswered within the timeout."""

    def __init__(self, method: str, seconds: float) -> None:
        super().__init__(f"`{method}` was not answered within {seconds:g} s")
        self.method = method


@dataclass(slots=True)
class Driver:
    process: Peer
    judge: Judge
    timeout: float
    cancelled: set[str] = field(default_factory=set)
    received: list[Received] = field(default_factory=list)
    answers: dict[str, Received] = field(default_factory=dict)
    unanswerable: int = 0
    """Messages sent that a request's answer cannot be for (notifications, malformed
    lines, a request with id null): a peer's answer with id null may be for one of
    them."""
    sent: dict[str, float] = field(default_factory=dict)
    """Request key -> when it was sent."""
    consumed: float | None = None
    """When the line the last :meth:`step` read arrived (None: no line came)."""
    _pending: dict[str, tuple[str, MethodSpec | None]] = field(default_factory=dict)
    _next: int = 0

    # --- sending

    def send(self, message: dict[str, Any]) -> float:
        """Send a message; when it was sent."""
        return self.process.send(
            json.dumps(message, ensure_ascii=False).encode("utf-8") + b"\n"
        )

    def raw(self, data: bytes) -> float:
        self.unanswerable += 1
        return self.process.send(data)

    def start(self, method: str, params: Any, rid: Any = None) -> str:
        """Send a request; the key its answer is filed under."""
        if rid is None:
            self._next += 1
            rid = self._next
        key = _key(rid)
        spec = self.judge.kit.method(
            method, (self.judge.under_test, "protocol", "both")
        )
        self._pending[key] = (method, spec)
        self.sent[key] = self.send(
            {"jsonrpc": "2.0", "id": rid, "method": method, "params": params}
        )
        return key

    def notify(self, method: str, params: Any) -> float:
        self.unanswerable += 1
        return self.send({"jsonrpc": "2.0", "method": method, "params": params})

    def request(
        self, method: str, params: Any, rid: Any = None, timeout: float | None = None
    ) -> dict[str, Any] | None:
        """Send a request and wait for its answer (None when none came in time)."""
        return self.wait(self.start(method, params, rid), timeout)

    def need(
        self, method: str, params: Any, timeout: float | None = None
    ) -> dict[str, Any]:
        """A request the scenario cannot go on without: :class:`NoAnswer` when it
        went unanswered (later scenarios that need the method are blocked)."""
        answer = self.request(method, params, timeout=timeout)
        if answer is None:
            raise NoAnswer(method, self.timeout if timeout is None else timeout)
        return answer

    # --- reading

    def wait(self, key: str, timeout: float | None = None) -> dict[str, Any] | None:
        """The answer to ``key``, None when none *arrived* within the timeout: lines
        that came in time are read even when judging them takes the kit longer."""
        seconds = self.timeout if timeout is None else timeout
        deadline = time.monotonic() + seconds
        while key not in self.answers:
            left = deadline - time.monotonic()
            self.step(max(left, 0))
            if left <= 0 and (self.consumed is None or self.consumed > deadline):
                if key in self.answers:
                    break
                method = self._pending.get(key, ("?", None))[0]
                self.judge.record(
                    "ACP-PEER-RPC-005",
                    "FAIL",
                    f"no answer to request {key} (`{method}`) within {seconds:g} s",
                )
                return None
        return self.answers[key].message

    def pump(self, seconds: float) -> None:
        """Read whatever comes for ``seconds``; stops early when the agent exits."""
        deadline = time.monotonic() + seconds
        try:
            while (left := deadline - time.monotonic()) > 0:
                self.step(left)
        except PeerExited:
            return

    def step(self, timeout: float) -> Received | None:
        """Read and handle one line (None when none came within ``timeout``)."""
        got = self.process.next_line(timeout)
        self.consumed = got.t if got is not None else None
        if got is None:
            return None
        message = self.judge.line(got.raw)
        if message is None:
            self._unframed(got.raw)
            return None
        received = Received(got.t, message)
        self.received.append(received)
        if "method" in message:
            spec = self.judge.call(message)
            if "id" in message:
                self._answer_call(message, spec)
        else:
            self._answer(message, received)
        return received

    def _unframed(self, raw: bytes) -> None:
        """A line that is no JSON-RPC message but carries an id and a result or error
        meant an answer: no request of the kit's will get it."""
        try:
            value = json.loads(raw)
        except ValueError:
            return
        if (
            isinstance(value, dict)
            and "id" in value
            and ("result" in value or "error" in value)
        ):
            key = _key(value.get("id"))
            if key in self._pending:
                said = raw[:80].decode("utf-8", "replace")
                raise Unmatched(
                    f"request {key} was answered by a message that is no JSON-RPC 2.0 "
                    f"answer: {said}..."
                )

    def _answer(self, message: dict[str, Any], received: Received) -> None:
        rid = message.get("id")
        key = _key(rid)
        if key in self.answers and rid is not None:
            self.judge.record(
                "ACP-PEER-RPC-005", "FAIL", f"request {key} answered twice"
            )
            return
        pending = self._pending.pop(key, None)
        if pending is None:
            self._stray(message)
            return
        self.judge.record("ACP-PEER-RPC-005", "PASS")
        self.judge.record("ACP-PEER-RPC-001", "PASS")
        self.judge.answer(pending[1], message)
        self.answers[key] = received

    def _stray(self, message: dict[str, Any]) -> None:
        """An answer to no request in flight: with id null, maybe for a message that
        had none (a notification, a malformed line); else, while requests wait, one
        the kit cannot match (:class:`Unmatched`)."""
        rid = message.get("id")
        self.judge.answer(None, message)
        if rid is None and self.unanswerable > 0:
            self.unanswerable -= 1
            return
        if not self._pending:
            return
        near = [k for k in self._pending if _loose(k) == _loose(_key(rid))]
        got = "no id" if "id" not in message else f"id {_key(rid)}"
        what = (
            f"an answer with id {json.dumps(rid)}, where request {near[0]} waits "
            "(the id must come back with the same JSON type and value)"
            if near
            else f"an answer with {got} while request(s) {', '.join(self._pending)} "
            f"wait: {_short(message)}"
        )
        self.judge.record("ACP-PEER-RPC-001", "FAIL", what)
        raise Unmatched(what)

    def _answer_call(self, message: dict[str, Any], spec: MethodSpec | None) -> None:
        rid = message["id"]
        raw = message.get("params")
        params: dict[str, Any] = raw if isinstance(raw, dict) else {}
        if message["method"] == "session/request_permission":
            options = params.get("options")
            listed = options if isinstance(options, list) else []
            session = params.get("sessionId")
            if session in self.cancelled or not listed:
                outcome: dict[str, Any] = {"outcome": "cancelled"}
            else:
                first = listed[0] if isinstance(listed[0], dict) else {}
                outcome = {"outcome": "selected", "optionId": first.get("optionId")}
            self.send({"jsonrpc": "2.0", "id": rid, "result": {"outcome": outcome}})
            return
        error = {
            "code": METHOD_NOT_FOUND,
            "message": "the conformance kit implements no such method",
        }
        self.send({"jsonrpc": "2.0", "id": rid, "error": error})

    def answered_at(self, key: str) -> float:
        return self.answers[key].t

    def answer_for(self, rid: Any) -> dict[str, Any] | None:
        """The answer that carries exactly the id ``rid`` (same JSON type and value)."""
        got = self.answers.get(_key(rid))
        return got.message if got is not None else None

    def updates(
        self, session: str, since: float = 0.0, until: float = float("inf")
    ) -> list[Received]:
        """The session's ``session/update`` notifications that arrived in the window."""
        return [
            r
            for r in self.received
            if r.message.get("method") == "session/update"
            and isinstance(r.message.get("params"), dict)
            and r.message["params"].get("sessionId") == session
            and since <= r.t <= until
        ]

    def id_of(self, key: str) -> Any:
        return json.loads(key)


def _key(rid: Any) -> str:
    return json.dumps(rid, sort_keys=True)


def _loose(key: str) -> str:
    """An id key with its JSON type forgotten (``"2"`` and ``2`` alike)."""
    return key.strip('"')


def _short(message: Any) -> str:
    text = json.dumps(message, ensure_ascii=False)
    return text if len(text) <= 160 else text[:160] + "..."
