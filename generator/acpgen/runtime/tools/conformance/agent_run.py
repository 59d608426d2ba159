"""``conformance agent``: every scenario of the build, each with a fresh agent
process (or connection), a fresh working folder of its own, removed afterwards, and a
judge of its own; ``initialize`` first (what the agent advertises there decides what
applies), then the others side by side (``--jobs``); each with its deadline and the
shutdown ladder after it; and what a broken agent leaves, reported fast:

- an agent that cannot be started or reached is a usage error (:class:`CannotRun`),
  before anything is judged;
- once ``initialize`` is unreadable or refused, every later scenario is blocked, and
  its requirements are NOT_TESTED with that reason;
- once a method a scenario needs went unanswered, the later scenarios that need it
  are blocked the same way (one timeout, not one per scenario);
- an agent that does not exit when its stdin closes gets a short grace from then on.

What the agent advertised at ``initialize`` decides which requirements apply."""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from .agent_process import PeerExited
from .driver import NoAnswer, Unmatched
from .judge import Judge
from .kit import Kit
from .registry import CheckSpec, ScenarioSpec
from .scenario import Aborted, Options, Scenario, ScenarioRecord, ScenarioTimeout

CHECKS = (
    CheckSpec(
        "agent.shutdown",
        ("agent",),
        judges=("ACP-AGENT-PROC-001", "ACP-AGENT-PROC-002"),
    ),
)
HURRIED_GRACE = 0.2
"""Seconds an agent that already ignored its stdin closing gets in later scenarios."""


class CannotRun(Exception):
    """The agent could not be started or reached: a usage error, nothing judged."""


@dataclass(slots=True)
class Run:
    kit: Kit
    options: Options
    judge: Judge
    authenticate: Callable[[Any, Any], None] | None = None
    advertised: dict[str, Any] = field(default_factory=dict)
    auth_methods: list[Any] = field(default_factory=list)
    agent_info: Any = None
    protocol_version: Any = None
    handed_out: set[str] = field(default_factory=set)
    blocked: str = ""
    """What blocks the rest of the run (initialize unreadable, authentication
    needed)."""
    dead: dict[str, str] = field(default_factory=dict)
    """Method -> the scenario where it went unanswered."""
    scenarios: list[ScenarioRecord] = field(default_factory=list)
    why_not_tested: dict[str, str] = field(default_factory=dict)
    started: float = field(default_factory=time.time)
    grace: float = 0.0

    def why_not(self, rid: str) -> str:
        """Why requirement ``rid`` does not apply to this agent (empty: it applies)."""
        requirement = self.kit.requirement(rid)
        if requirement is None:
            return "not in this build"
        for condition in requirement.applies_when:
            if condition.startswith("inferred:"):
                name = condition.removeprefix("inferred:")
                if name not in self.handed_out:
                    return f"the agent handed out no {name}"
            elif condition.startswith("clientCapabilities."):
                return f"the kit did not advertise {condition}"
            elif not advertised(
                self.advertised, condition.removeprefix("agentCapabilities.")
            ):
                return f"the agent did not advertise {condition}"
        return ""


def advertised(capabilities: Any, path: str) -> bool:
    value = capabilities
    for part in path.split("."):
        if not isinstance(value, dict):
            return False
        value = value.get(part)
    return value is True or (value is not None and value is not False)


def run_agent(
    kit: Kit, options: Options, authenticate: Any = None, jobs: int = 4
) -> Run:
    """Run every selected scenario, ``initialize`` first, then up to ``jobs`` side by
    side; the findings are merged into ``run.judge`` in the build's order."""
    run = Run(
        kit, options, Judge(kit, "agent"), authenticate, grace=options.close_grace
    )
    first, *rest = kit.scenarios
    judges: dict[str, Judge | None] = {first.name: _one(run, first)}
    chosen = []
    for spec in rest:
        if not kit.registry.selects(spec, options.select):
            _not_run(run, spec, "deselected by -k")
        elif run.blocked:
            _not_run(run, spec, f"blocked: {run.blocked}")
        else:
            chosen.append(spec)
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        futures = {s.name: pool.submit(_when_unblocked, run, s) for s in chosen}
        judges |= {name: future.result() for name, future in futures.items()}
    order = [s.name for s in kit.scenarios]
    for name in order:  # the build's order, whatever finished first
        judge = judges.get(name)
        if judge is not None:
            run.judge.findings += judge.findings
            run.judge.disagreements += judge.disagreements
            run.judge.read += judge.read
    run.scenarios.sort(key=lambda r: order.index(r.name))
    _finish(run)
    return run


def _when_unblocked(run: Run, spec: ScenarioSpec) -> Judge | None:
    why = _blocked(run, spec)
    if why:
        _not_run(run, spec, f"blocked: {why}")
        return None
    return _one(run, spec)


def _blocked(run: Run, spec: ScenarioSpec) -> str:
    if run.blocked and spec.name != "initialize":
        return run.blocked
    for method in spec.needs:
        if method in run.dead:
            return f"`{method}` went unanswered in scenario {run.dead[method]}"
    return ""


def _not_run(run: Run, spec: ScenarioSpec, why: str) -> None:
    record = ScenarioRecord(spec.name, blocked=why)
    run.scenarios.append(record)
    for rid in run.kit.registry.ids_of(spec.checks):
        run.why_not_tested.setdefault(rid, f"{why} (scenario {spec.name})")


def _one(run: Run, spec: ScenarioSpec) -> Judge:
    record = ScenarioRecord(spec.name)
    run.scenarios.append(record)
    judge = Judge(run.kit, "agent")
    judge.begin(spec.name, spec.checks)
    folder = os.path.realpath(tempfile.mkdtemp(prefix="acp-conformance-"))
    scenario = Scenario(run, record, folder, judge)
    start = time.monotonic()
    failed = True  # what it was to judge FAILs (the agent failed it), or is blocked
    try:
        spec.run(scenario)
        if spec.name == "initialize":
            _remember(run, scenario)
    except CannotRun:
        raise
    except PeerExited:
        record.error = _exited(run, scenario)
        if len(run.scenarios) == 1 and not _heard(record):
            _close(run, scenario, record)
            _cannot_run(run, record)
    except ScenarioTimeout:
        limit = run.options.scenario_timeout
        record.error = f"the scenario ran past --scenario-timeout ({limit:g} s)"
    except NoAnswer as error:
        record.error = str(error)
        run.dead.setdefault(error.method, spec.name)
        if error.method == "initialize":
            run.blocked = f"initialize: {error}"
    except (Aborted, Unmatched) as error:
        record.error, failed = str(error), False
    except OSError as error:
        if len(run.scenarios) == 1:
            where = run.options.url or " ".join(run.options.command)
            raise CannotRun(
                f"cannot start or reach the agent {where}: {error}"
            ) from None
        record.error = f"the agent could not be started: {error}"
    finally:
        _close(run, scenario, record)
        shutil.rmtree(folder, ignore_errors=True)
        record.seconds = round(time.monotonic() - start, 3)
    if record.error:
        _left(run, spec, record, judge, failed, scenario.at)
    return judge


def _exited(run: Run, scenario: Scenario) -> str:
    if run.options.url is not None and scenario.processes:
        why = scenario.processes[-1].stderr_tail()[-300:] or "closed by the agent"
        return f"the connection to the agent ended: {why}"
    return "the agent exited (its stdout closed) during the scenario"


def _close(run: Run, scenario: Scenario, record: ScenarioRecord) -> None:
    if record.started:
        return  # closed already
    record.grace = run.grace
    exits = [p.close(run.grace) for p in scenario.processes]
    record.exited_on_close = all(exits)
    record.started = bool(exits)
    record.stderr = "".join(p.stderr_tail() for p in scenario.processes)[-20_000:]
    if exits and not all(exits) and run.options.url is None:
        run.grace = min(run.grace, HURRIED_GRACE)


def _left(
    run: Run,
    spec: ScenarioSpec,
    record: ScenarioRecord,
    judge: Judge,
    failed: bool,
    at: tuple[str, ...],
) -> None:
    """What the scenario was to judge and did not reach: FAIL for the step in
    progress when the agent failed it (exited, hung), NOT_TESTED (blocked) for the
    rest."""
    judged = {f.requirement for f in judge.findings}
    for rid in sorted(run.kit.registry.ids_of(spec.checks) - judged):
        if rid in at and failed and not run.why_not(rid):
            judge.record(rid, "FAIL", record.error)
        else:
            why = f"blocked: {record.error} (scenario {spec.name})"
            run.why_not_tested.setdefault(rid, why)
    if spec.name == "initialize" and not run.blocked and run.protocol_version is None:
        run.blocked = f"initialize: {record.error}"


def _heard(record: ScenarioRecord) -> bool:
    return any(
        line.direction == "received" for t in record.transcripts for line in t.lines
    )


def _cannot_run(run: Run, record: ScenarioRecord) -> None:
    """The first scenario's agent ended without writing a line: it could not run."""
    if run.options.url is not None:
        raise CannotRun(
            f"the connection to {run.options.url} ended at once: {record.error}"
        )
    tail = [line for line in record.stderr.splitlines() if line.strip()]
    said = f"; its stderr ends: {tail[-1][:300]}" if tail else " (no stderr)"
    command = " ".join(run.options.command)
    raise CannotRun(f"the agent {command!r} exited before writing a line{said}")


def _remember(run: Run, scenario: Scenario) -> None:
    """What the agent advertised at ``initialize``."""
    wire = run.kit.wire
    for got in scenario.driver.received:
        result = got.message.get("result")
        if isinstance(result, dict) and "protocolVersion" in result:
            caps = result.get(wire.agent_capabilities)
            run.advertised = caps if isinstance(caps, dict) else {}
            methods = result.get("authMethods")
            run.auth_methods = list(methods) if isinstance(methods, list) else []
            run.agent_info = result.get(wire.agent_info)
            run.protocol_version = result.get("protocolVersion")
            if run.auth_methods:
                run.handed_out.add("AuthMethodId")
            return


def _finish(run: Run) -> None:
    judge = run.judge
    judge.begin("(whole run)", [c.name for c in run.kit.checks if "agent" in c.modes])
    if not any(r.started for r in run.scenarios):
        return
    judge.finish()
    seen = {f.requirement for f in judge.findings}
    for r in run.kit.registry.judged("agent", ("agent", "both")):
        if r.id not in seen and (why := run.why_not(r.id)):
            judge.record(r.id, "SKIPPED", "not applicable: " + why)
    if run.options.url is not None:
        return
    for record in [r for r in run.scenarios if r.started]:
        judge.begin(record.name, ("agent.shutdown",))
        judge.record(  # INFORMATIONAL: what was seen, recorded
            "ACP-AGENT-PROC-001",
            "PASS",
            f"exited within {record.grace:g} s of its stdin closing"
            if record.exited_on_close
            else f"still running {record.grace:g} s after its stdin closed",
        )
        if record.name == "session-new":
            size = len(record.stderr.encode())
            judge.record(
                "ACP-AGENT-PROC-002",
                "PASS",
                f"{size} bytes of stderr over initialize and two session/new",
            )
