"""The kit as a client of the agent under test, for one scenario: it sends, reads every
line the agent writes (each judged), answers the agent's requests (a permission
request with its first option, or ``cancelled`` once the kit cancelled the turn;
anything else "method not found"), and keeps the session updates it was sent."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from typing import Any

from ..wire.rpc import MethodSpec
from .judge import Judge
from .peer import Peer, PeerExited

METHOD_NOT_FOUND = -32601


@dataclass(slots=True)
class Received:
    """What the agent wrote, in order, with the time it arrived."""

    t: float
    message: dict[str, Any]


@dataclass(slots=True)
class Driver:
    process: Peer
    judge: Judge
    timeout: float
    cancelled: set[str] = field(default_factory=set)
    received: list[Received] = field(default_factory=list)
    answers: dict[str, Received] = field(default_factory=dict)
    _pending: dict[str, MethodSpec | None] = field(default_factory=dict)
    _next: int = 0

    # --- sending

    def send(self, message: dict[str, Any]) -> None:
        self.process.send(
            json.dumps(message, ensure_ascii=False).encode("utf-8") + b"\n"
        )

    def raw(self, data: bytes) -> None:
        self.process.send(data)

    def start(self, method: str, params: Any, rid: Any = None) -> str:
        """Send a request; the key its answer is filed under."""
        if rid is None:
            self._next += 1
            rid = self._next
        key = _key(rid)
        self._pending[key] = self.judge.kit.method(
            method, (self.judge.under_test, "protocol", "both")
        )
        self.send({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
        return key

    def notify(self, method: str, params: Any) -> None:
        self.send({"jsonrpc": "2.0", "method": method, "params": params})

    def request(
        self, method: str, params: Any, rid: Any = None, timeout: float | None = None
    ) -> dict[str, Any] | None:
        """Send a request and wait for its answer (None when none came in time)."""
        return self.wait(self.start(method, params, rid), timeout)

    # --- reading

    def wait(self, key: str, timeout: float | None = None) -> dict[str, Any] | None:
        deadline = time.monotonic() + (self.timeout if timeout is None else timeout)
        while key not in self.answers:
            left = deadline - time.monotonic()
            if left <= 0:
                self.judge.record(
                    "ACP-PEER-RPC-005",
                    "FAIL",
                    f"no answer to request {key} within the timeout",
                )
                return None
            self.step(left)
        return self.answers[key].message

    def pump(self, seconds: float) -> None:
        """Read whatever comes for ``seconds`` (a quiet period); stops early when the "
        "agent exits."""
        deadline = time.monotonic() + seconds
        try:
            while (left := deadline - time.monotonic()) > 0:
                self.step(left)
        except PeerExited:
            return

    def step(self, timeout: float) -> Received | None:
        """Read and handle one line (None when none came within ``timeout``)."""
        raw = self.process.next_line(timeout)
        if raw is None:
            return None
        message = self.judge.line(raw)
        if message is None:
            return None
        got = Received(time.monotonic(), message)
        self.received.append(got)
        if "method" in message:
            spec = self.judge.call(message)
            if "id" in message:
                self._answer_call(message, spec)
        elif "id" in message:
            key = _key(message.get("id"))
            if key in self.answers and message.get("id") is not None:
                self.judge.record(
                    "ACP-PEER-RPC-005", "FAIL", f"request {key} answered twice"
                )
            elif key in self._pending:
                self.judge.record("ACP-PEER-RPC-005", "PASS")
            spec = self._pending.pop(key, None)
            self.judge.answer(spec, message)
            _error_message(self.judge, message.get("error"))
            self.answers[key] = got
        return got

    def _answer_call(self, message: dict[str, Any], spec: MethodSpec | None) -> None:
        rid = message["id"]
        raw = message.get("params")
        params: dict[str, Any] = raw if isinstance(raw, dict) else {}
        if message["method"] == "session/request_permission":
            options = (
                params.get("options") if isinstance(params.get("options"), list) else []
            )
            session = params.get("sessionId")
            if session in self.cancelled or not options:
                outcome: dict[str, Any] = {"outcome": "cancelled"}
            else:
                outcome = {
                    "outcome": "selected",
                    "optionId": options[0].get("optionId"),
                }
            self.send({"jsonrpc": "2.0", "id": rid, "result": {"outcome": outcome}})
            return
        self.send(
            {
                "jsonrpc": "2.0",
                "id": rid,
                "error": {
                    "code": METHOD_NOT_FOUND,
                    "message": "the conformance kit implements no such method",
                },
            }
        )

    def answers_time(self, answer: dict[str, Any] | None) -> float:
        """When ``answer`` arrived (now, for none)."""
        found = next((r.t for r in self.answers.values() if r.message is answer), None)
        return time.monotonic() if found is None else found

    def id_of(self, key: str) -> Any:
        return json.loads(key)

    def answer_for(self, rid: Any) -> dict[str, Any] | None:
        """The answer that carries exactly the id ``rid`` (same JSON type and value)."""
        got = self.answers.get(_key(rid))
        return got.message if got is not None else None

    def updates(
        self, session: str, since: float = 0.0, until: float = float("inf")
    ) -> list[Received]:
        return [
            r
            for r in self.received
            if r.message.get("method") == "session/update"
            and isinstance(r.message.get("params"), dict)
            and r.message["params"].get("sessionId") == session
            and since <= r.t <= until
        ]


def _error_message(judge: Judge, error: Any) -> None:
    """An error's message is concise: non-empty, one line (ACP-PEER-RPC-011)."""
    if not isinstance(error, dict) or not isinstance(error.get("message"), str):
        return  # no error, or one whose shape ACP-PEER-RPC-003 judges
    text = error["message"]
    if text.strip() and "\n" not in text and "\r" not in text:
        judge.record("ACP-PEER-RPC-011", "PASS")
    else:
        judge.record(
            "ACP-PEER-RPC-011",
            "FAIL",
            f"error {error.get('code')!r} has the message {text[:200]!r}: "
            "not one non-empty line",
        )


def _key(rid: Any) -> str:
    return json.dumps(rid, sort_keys=True)
