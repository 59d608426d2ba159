"""What an agent scenario works with: its driver (a fresh agent process, or
connection, started when first needed), a fresh working folder of its own, the run's
options and what the agent advertised, and the findings it records (each only where
it applies)."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .agent_process import AgentProcess, Peer, Transcript
from .driver import Driver

if TYPE_CHECKING:
    from .agent_run import Run
    from .judge import Judge

DEFAULT_CANCEL_PROMPT = (
    "Write a very long essay, at least five thousand words, on the history of text "
    "editors, with a section for every decade; take your time and be thorough."
)


@dataclass(frozen=True, slots=True)
class Options:
    command: tuple[str, ...]
    env: dict[str, str]
    cwd: str | None
    url: str | None = None
    """A remote agent's address (``--url``): a connection per scenario."""
    transport: str = "http"
    timeout: float = 30.0
    startup_timeout: float = 30.0
    scenario_timeout: float = 120.0
    close_grace: float = 2.0
    cancel_prompt: str = DEFAULT_CANCEL_PROMPT
    auth_method: str | None = None
    select: tuple[str, ...] = ()


@dataclass(slots=True)
class ScenarioRecord:
    name: str
    transcripts: list[Transcript] = field(default_factory=list)
    stderr: str = ""
    exited_on_close: bool = True
    started: bool = False
    """It started the agent (a scenario with nothing to exercise does not)."""
    error: str = ""
    blocked: str = ""
    """Why it did not run (a method it needs went unanswered, -k)."""
    seconds: float = 0.0
    grace: float = 0.0
    """Seconds its agent had to exit once its stdin closed."""


class ScenarioTimeout(Exception):
    """The scenario ran past ``--scenario-timeout``."""


class Aborted(Exception):
    """A step the scenario needs failed; what it was to judge is reported blocked."""


class Scenario:
    """One scenario's context."""

    def __init__(
        self, run: Run, record: ScenarioRecord, cwd: str, judge: Judge
    ) -> None:
        self.run = run
        self.judge = judge
        """The scenario's own judge (scenarios run side by side); the run merges
        them."""
        self.kit = run.kit
        self.options = run.options
        self.record = record
        self.cwd = cwd
        self.quiet = min(max(run.options.timeout / 10, 0.5), 2.0)
        """Seconds the kit listens when it waits for what should not come."""
        self.deadline = time.monotonic() + run.options.scenario_timeout
        self.processes: list[Peer] = []
        self._driver: Driver | None = None
        self.at: tuple[str, ...] = ()
        """The requirements of the step in progress: the ones a dead or hung agent FAILs
        (:meth:`step`); the rest of the scenario's are then NOT_TESTED."""

    def step(self, *rids: str | None) -> None:
        """The scenario starts the step that judges ``rids``."""
        self.at = tuple(r for r in rids if r)

    @property
    def driver(self) -> Driver:
        """The scenario's agent, started when first needed."""
        if self._driver is None:
            self._driver = self.fresh()
        return self._driver

    def fresh(self) -> Driver:
        """Another agent process (or connection) for this scenario."""
        transcript = Transcript()
        self.record.transcripts.append(transcript)
        process: Peer
        if self.options.url is not None:
            from .remote_agent import RemotePeer  # the remote extra, only for --url

            process = RemotePeer(
                self.options.url, self.options.transport, transcript=transcript
            )
        else:
            env = {**os.environ, **self.options.env}
            process = (
                AgentProcess(  # where the kit runs (--agent-cwd): relative paths hold
                    self.options.command,
                    env=env,
                    cwd=self.options.cwd,
                    transcript=transcript,
                )
            )
        self.processes.append(process)
        return _DeadlineDriver(process, self.judge, self.options.timeout, self.deadline)

    # --- findings

    def report(self, rid: str | None, status: str, message: str) -> None:
        """A finding of ``status`` (SKIPPED, with why, where ``rid`` does not apply)."""
        if rid is None:
            return
        why = self.run.why_not(rid)
        if why:
            self.judge.record(rid, "SKIPPED", "not applicable: " + why)
        else:
            self.judge.record(rid, status, message)

    def passed(self, rid: str | None, message: str = "") -> None:
        self.report(rid, "PASS", message)

    def fail(self, rid: str | None, message: str) -> None:
        self.report(rid, "FAIL", message)

    def skip(self, rid: str | None, message: str) -> None:
        self.report(rid, "SKIPPED", message)

    def check(self, rid: str | None, ok: bool, fail: str, passed: str = "") -> None:
        """PASS with ``passed`` (evidence, never failure wording), or FAIL with
        ``fail``."""
        self.report(rid, "PASS" if ok else "FAIL", passed if ok else fail)

    def order_known(self) -> bool:
        """Whether the order messages arrived in is the agent's: over stdio and a
        WebSocket one channel keeps it; over Streamable HTTP only a server that states
        the order of its streams does (arrival across streams proves nothing)."""
        return all(getattr(p, "ordered", True) for p in self.processes)

    def unordered(self) -> str:
        return (
            "over Streamable HTTP the server stated no order of its streams: what "
            "arrived first is not what the agent sent first"
        )

    def applies(self, rid: str | None) -> bool:
        return rid is not None and rid in self.kit.ids and not self.run.why_not(rid)

    def handler(self, method: str, answer: dict[str, Any] | None) -> None:
        """The method's required-handler requirement: answered, not "method not
        found"."""
        rid = self.kit.derived("required-handler", method)
        code = error_code(answer)
        self.check(
            rid,
            answer is not None and code != -32601,
            f"`{method}`: {describe(answer)}",
            f"`{method}` answered",
        )

    def judged_ok(self, family: str, method: str) -> bool:
        """Whether the messages of ``method`` read so far passed ``family``."""
        rid = self.kit.derived(family, method)
        return not any(
            f.requirement == rid and f.status == "FAIL" for f in self.judge.findings
        )

    # --- steps

    def init_params(self) -> dict[str, Any]:
        wire = self.kit.wire
        return {
            "protocolVersion": self.kit.protocol_version,
            wire.client_capabilities: {},
            wire.client_info: {"name": "acp-conformance-kit", "version": "1"},
        }

    def handshake(self, driver: Driver | None = None) -> dict[str, Any]:
        """``initialize`` (then ``--auth-method``'s authentication): the result."""
        driver = driver or self.driver
        answer = driver.need(
            "initialize", self.init_params(), timeout=self.options.startup_timeout
        )
        result = answer.get("result")
        if not isinstance(result, dict):
            raise Aborted(f"initialize: {describe(answer)}")
        authenticate = self.run.authenticate
        if authenticate is not None and self.options.auth_method:
            authenticate(self, driver)
        return result

    def new_session_params(self) -> dict[str, Any]:
        return {"cwd": self.cwd, "mcpServers": []}

    def session(self) -> str:
        """A handshake and a new session: its id."""
        self.handshake()
        answer = self.driver.need("session/new", self.new_session_params())
        session = (result_of(answer) or {}).get("sessionId")
        if isinstance(session, str):
            return session
        if (
            error_code(answer) == -32000
            and self.run.auth_methods
            and not self.options.auth_method
        ):
            self.run.blocked = "session/new needs authentication; give --auth-method"
            raise Aborted(self.run.blocked)
        raise Aborted(f"session/new: {describe(answer)}")

    def prompt(self, session: str, blocks: list[dict[str, Any]]) -> dict[str, Any]:
        """A prompt turn: its answer (:class:`.driver.NoAnswer` when none came)."""
        return self.driver.need(
            "session/prompt", {"sessionId": session, "prompt": blocks}
        )

    def text_prompt(self, session: str, text: str) -> str:
        """Start a one-block prompt; the key of its answer."""
        blocks = [{"type": "text", "text": text}]
        return self.driver.start(
            "session/prompt", {"sessionId": session, "prompt": blocks}
        )


class _DeadlineDriver(Driver):
    """A driver that stops its scenario at ``--scenario-timeout``."""

    def __init__(
        self, process: Peer, judge: Any, timeout: float, deadline: float
    ) -> None:
        super().__init__(process, judge, timeout)
        self.deadline = deadline

    def step(self, timeout: float) -> Any:
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise ScenarioTimeout
        return Driver.step(self, min(timeout, left))


def error_code(answer: dict[str, Any] | None) -> int | None:
    error = answer.get("error") if answer else None
    code = error.get("code") if isinstance(error, dict) else None
    return code if type(code) is int else None


def result_of(answer: dict[str, Any] | None) -> dict[str, Any] | None:
    result = answer.get("result") if answer else None
    return result if isinstance(result, dict) else None


def describe(answer: dict[str, Any] | None) -> str:
    if answer is None:
        return "no answer within the timeout"
    if "error" in answer:
        return f"error {_short(answer['error'])}"
    return f"result {_short(answer.get('result'))}"


def update_kind(message: dict[str, Any]) -> Any:
    params = message.get("params")
    update = params.get("update") if isinstance(params, dict) else None
    return update.get("sessionUpdate") if isinstance(update, dict) else None


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 200 else text[:200] + "..."


Step = Callable[[Scenario], None]
