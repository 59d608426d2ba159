"""Running the scenarios: a fresh process for each, the scenario's own deadline, the
shutdown ladder after it, what a dead or hanging agent leaves (a FAIL of the
requirements the scenario was to judge, with the transcript and stderr tail), and the
applicability of requirements from what the agent advertised."""

from __future__ import annotations

import os
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from .driver import Driver
from .judge import Judge, Kit
from .peer import AgentProcess, Peer, PeerExited, Transcript
from .remote_peer import RemotePeer

DEFAULT_CANCEL_PROMPT = (
    "Write a very long essay, at least five thousand words, on the history of text "
    "editors, "
    "with a section for every decade; take your time and be thorough."
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
    seconds: float = 0.0


@dataclass(slots=True)
class Run:
    kit: Kit
    options: Options
    judge: Judge
    advertised: dict[str, Any] = field(default_factory=dict)
    auth_methods: list[Any] = field(default_factory=list)
    agent_info: Any = None
    protocol_version: Any = None
    handed_out: set[str] = field(default_factory=set)
    blocked_by_auth: bool = False
    blocked_by_version: bool = False
    scenarios: list[ScenarioRecord] = field(default_factory=list)
    started: float = field(default_factory=time.time)

    def why_not(self, rid: str) -> str:
        """Why requirement ``rid`` does not apply to this agent (empty: it applies)."""
        requirement = next((r for r in self.kit.requirements if r.id == rid), None)
        if requirement is None:
            return "not in this build"
        for condition in requirement.applies_when:
            if condition.startswith("inferred:"):
                if condition.removeprefix("inferred:") not in self.handed_out:
                    return (
                        f"the agent handed out no {condition.removeprefix('inferred:')}"
                    )
            elif condition.startswith("clientCapabilities."):
                return f"the kit did not advertise {condition}"
            elif not _advertised(
                self.advertised, condition.removeprefix("agentCapabilities.")
            ):
                return f"the agent did not advertise {condition}"
        return ""


class ScenarioTimeout(Exception):
    """The scenario ran past ``--scenario-timeout``."""


class Scenario:
    """What a scenario works with: its driver (a fresh agent process), its records."""

    def __init__(self, run: Run, record: ScenarioRecord, cwd: str) -> None:
        self.run = run
        self.kit = run.kit
        self.options = run.options
        self.record = record
        self.cwd = cwd
        self.quiet = min(max(run.options.timeout / 10, 0.5), 2.0)
        self.deadline = time.monotonic() + run.options.scenario_timeout
        self.processes: list[Peer] = []
        self._driver: Driver | None = None

    @property
    def driver(self) -> Driver:
        """The scenario's agent, started when the scenario first needs it (a scenario
        with nothing to exercise starts none)."""
        if self._driver is None:
            self._driver = self.fresh()
        return self._driver

    def fresh(self) -> Driver:
        transcript = Transcript()
        self.record.transcripts.append(transcript)
        process: Peer
        if self.options.url is not None:
            process = RemotePeer(
                self.options.url, self.options.transport, transcript=transcript
            )
        else:
            env = {**os.environ, **self.options.env}
            command = self.options.command
            process = AgentProcess(
                command, env=env, cwd=self.options.cwd, transcript=transcript
            )
        self.processes.append(process)
        driver = _DeadlineDriver(process, self.run.judge, self.options.timeout)
        driver.deadline = self.deadline
        return driver

    # --- checks

    def _record(self, rid: str | None, status: str, message: str) -> None:
        if rid is None or not self._in_build(rid):
            return
        if not self.applies(rid):
            self.run.judge.record(
                rid, "SKIPPED", "not applicable: " + self.why_not(rid)
            )
            return
        self.run.judge.record(rid, status, message)

    def _in_build(self, rid: str) -> bool:
        return any(r.id == rid for r in self.kit.requirements)

    def passed(self, rid: str | None, message: str = "") -> None:
        self._record(rid, "PASS", message)

    def fail(self, rid: str | None, message: str) -> None:
        self._record(rid, "FAIL", message)

    def skip(self, rid: str | None, message: str) -> None:
        self._record(rid, "SKIPPED", message)

    skipped = skip

    def check(self, rid: str | None, ok: bool, message: str) -> None:
        self._record(rid, "PASS" if ok else "FAIL", "" if ok else message)

    def handler(self, method: str, answer: dict[str, Any] | None) -> None:
        rid = self.kit.derived("required-handler", method)
        error = (answer or {}).get("error")
        code = error.get("code") if isinstance(error, dict) else None
        self.check(
            rid,
            answer is not None and code != -32601,
            f"`{method}`: " + ("no answer" if answer is None else f"error {error}"),
        )

    def judged_ok(self, family: str, method: str) -> bool:
        rid = self.kit.derived(family, method)
        return not any(
            c.requirement == rid and c.status == "FAIL" for c in self.run.judge.checks
        )

    # --- applicability

    def kit_capability_paths(self) -> set[str]:
        return {
            r.subject for r in self.kit.requirements if r.family == "capability-honor"
        } | {
            p.rsplit(".", 1)[-1] for r in self.kit.requirements for p in r.applies_when
        }

    def applies(self, rid: str) -> bool:
        return not self.run.why_not(rid)

    def why_not(self, rid: str) -> str:
        return self.run.why_not(rid)

    # --- steps

    def init_params(self) -> dict[str, Any]:
        return {
            "protocolVersion": self.kit.protocol_version,
            "clientCapabilities": {},
            "clientInfo": {"name": "acp-conformance-kit", "version": self.kit.schema},
        }

    def authenticate(self) -> None:
        if self.options.auth_method:
            answer = self.driver.request(
                "authenticate", {"methodId": self.options.auth_method}
            )
            error = (answer or {}).get("error")
            self.check(
                "ACP-AGENT-AUTH-002",
                answer is not None and error is None,
                f"authenticate: {error or 'no answer'}",
            )
            self.check(
                self.kit.derived("required-handler", "authenticate"),
                answer is not None
                and not (isinstance(error, dict) and error.get("code") == -32601),
                f"authenticate: {error}",
            )

    def handshake(self) -> dict[str, Any] | None:
        answer = self.driver.request(
            "initialize", self.init_params(), timeout=self.options.startup_timeout
        )
        result = (answer or {}).get("result")
        if not isinstance(result, dict):
            got = (
                answer if answer is not None else "no answer within the startup timeout"
            )
            raise Aborted(f"initialize: {got}")
        self.authenticate()
        return result

    def new_session_params(self) -> dict[str, Any]:
        return {"cwd": self.cwd, "mcpServers": []}

    def new_session_answer(self) -> dict[str, Any] | None:
        return self.driver.request("session/new", self.new_session_params())

    def session(self) -> str | None:
        self.handshake()
        answer = self.new_session_answer()
        result = (answer or {}).get("result")
        session = result.get("sessionId") if isinstance(result, dict) else None
        if not isinstance(session, str):
            error = (answer or {}).get("error")
            if (
                isinstance(error, dict)
                and error.get("code") == -32000
                and self.run.auth_methods
                and not self.options.auth_method
            ):
                self.run.blocked_by_auth = True
                raise Aborted(
                    "AUTH-GATED: session/new needs authentication; give --auth-method"
                )
            raise Aborted(
                f"session/new: {answer if answer is not None else 'no answer'}"
            )
        return session

    def prompt(
        self, session: str, blocks: list[dict[str, Any]]
    ) -> dict[str, Any] | None:
        return self.driver.request(
            "session/prompt", {"sessionId": session, "prompt": blocks}
        )


class Aborted(Exception):
    """A step the scenario needs failed: the requirements it was to judge are "
    "reported FAIL."""


class _DeadlineDriver(Driver):
    deadline: float = float("inf")

    def step(self, timeout: float) -> Any:
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise ScenarioTimeout
        return Driver.step(self, min(timeout, left))


def _advertised(capabilities: Any, path: str) -> bool:
    value = capabilities
    for part in path.split("."):
        if not isinstance(value, dict):
            return False
        value = value.get(part)
    return value is True or (value is not None and value is not False)


Covers = Callable[[str], tuple[str, ...]]


def run_agent_scenarios(
    kit: Kit,
    options: Options,
    scenarios: Sequence[tuple[str, Callable[[Scenario], None]]],
    covers: Callable[[str], tuple[str, ...]],
) -> Run:
    """Run every selected scenario, each in fresh processes; the run's checks are in "
    "``run.judge``."""
    run = Run(kit, options, Judge(kit, "agent"))
    with tempfile.TemporaryDirectory(prefix="acp-conformance-") as cwd:
        for name, body in scenarios:
            if (
                name != "initialize"
                and options.select
                and not any(
                    word.lower() in name
                    or any(word.upper() in rid for rid in covers(name))
                    for word in options.select
                )
            ):
                continue
            _one(run, name, body, covers(name), os.path.realpath(cwd))
    run.judge.scenario = "(whole run)"
    if run.scenarios:
        run.judge.finish_gates()
        seen = {c.requirement for c in run.judge.checks}
        for r in kit.requirements:
            if (
                r.id not in seen
                and r.side in ("agent", "both")
                and (why := run.why_not(r.id))
            ):
                run.judge.record(r.id, "SKIPPED", "not applicable: " + why)
        stdio = options.url is None
        basic = next(
            (r for r in run.scenarios if r.name == "session-new" and r.started), None
        )
        if basic is not None and stdio:
            run.judge.scenario = basic.name
            run.judge.record(
                "ACP-AGENT-PROC-002",
                "PASS",
                f"{len(basic.stderr.encode())} bytes of stderr over initialize and "
                "two session/new",
            )
        for record in [r for r in run.scenarios if r.started and stdio]:
            run.judge.scenario = record.name
            run.judge.record(
                "ACP-AGENT-PROC-001",
                "PASS" if record.exited_on_close else "FAIL",
                ""
                if record.exited_on_close
                else f"still running {options.close_grace} s after its stdin closed",
            )
    return run


def _one(
    run: Run,
    name: str,
    body: Callable[[Scenario], None],
    covered: tuple[str, ...],
    cwd: str,
) -> None:
    record = ScenarioRecord(name)
    run.scenarios.append(record)
    run.judge.scenario = name
    start = time.monotonic()
    before = len(run.judge.checks)
    scenario: Scenario | None = None
    try:
        scenario = Scenario(run, record, cwd)
        body(scenario)
        if name == "initialize" and scenario.processes:
            _remember(run, scenario)
    except PeerExited:
        record.error = "the agent exited (its stdout closed) during the scenario"
        if run.options.url is not None and scenario is not None:
            why = scenario.processes[-1].stderr_tail()[-300:] or "closed by the agent"
            record.error = f"the connection to the agent ended: {why}"
    except ScenarioTimeout:
        seconds = run.options.scenario_timeout
        record.error = f"the scenario ran past --scenario-timeout ({seconds} s)"
    except Aborted as error:
        record.error = str(error)
    except OSError as error:
        record.error = f"the agent could not be started: {error}"
    finally:
        if scenario is not None:
            exits = [p.close(run.options.close_grace) for p in scenario.processes]
            record.exited_on_close = all(exits)
            record.started = bool(exits)
            record.stderr = "".join(p.stderr_tail() for p in scenario.processes)[
                -20_000:
            ]
        record.seconds = round(time.monotonic() - start, 3)
    if record.error:
        judged = {c.requirement for c in run.judge.checks[before:]}
        for rid in covered:
            if (
                rid not in judged
                and scenario is not None
                and rid in {r.id for r in run.kit.requirements}
            ):
                if record.error.startswith("AUTH-GATED"):
                    run.judge.record(rid, "SKIPPED", record.error)
                elif scenario.applies(rid):
                    run.judge.record(rid, "FAIL", record.error)


def _remember(run: Run, scenario: Scenario) -> None:
    for got in scenario.driver.received:
        result = got.message.get("result")
        if isinstance(result, dict) and "protocolVersion" in result:
            run.advertised = result.get("agentCapabilities") or {}
            run.auth_methods = list(result.get("authMethods") or [])
            run.agent_info = result.get("agentInfo")
            run.protocol_version = result.get("protocolVersion")
            if run.auth_methods:
                run.handed_out.add("AuthMethodId")
            return
