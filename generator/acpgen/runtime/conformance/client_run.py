"""``conformance client``: run the client under test with the probe agent as its agent
(an argument ``{agent}`` of its command becomes the probe's command line, and
``ACP_CONFORMANCE_AGENT`` holds it shell-quoted), wait for the client to leave, and
judge what the probe recorded: the trace's checks for the client's side, and what
only the probe saw (absolute ``cwd``, ``mcpServers``, the permission answer, ``_``
requests answered, the unknown update kind survived, ids echoed, notifications
unanswered)."""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import signal
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import probe_agent
from .judge import Judge, Kit
from .peer import STDERR_TAIL
from .requirements import Check
from .trace_check import Entry, check_trace, judged_requirements, read_trace

CLIENT_CHECKS = (
    "ACP-PEER-TRANSPORT-001",
    "ACP-PEER-RPC-001",
    "ACP-PEER-RPC-003",
    "ACP-PEER-RPC-004",
    "ACP-PEER-RPC-005",
    "ACP-PEER-EXT-001",
    "ACP-CLIENT-INIT-001",
    "ACP-CLIENT-INIT-002",
    "ACP-CLIENT-INIT-003",
    "ACP-CLIENT-INIT-004",
    "ACP-CLIENT-SESSION-001",
    "ACP-CLIENT-SESSION-002",
    "ACP-CLIENT-PROMPT-001",
    "ACP-CLIENT-PROMPT-002",
    "ACP-CLIENT-PERM-001",
    "ACP-CLIENT-CANCEL-001",
    "ACP-CLIENT-EXT-001",
)
"""The curated requirements a client run judges; the derived ones are the trace's."""


@dataclass(slots=True)
class ClientRun:
    command: list[str]
    probe: list[str]
    entries: list[Entry] = field(default_factory=list)
    checks: list[Check] = field(default_factory=list)
    exit_code: int | None = None
    error: str = ""
    stdout: str = ""
    stderr: str = ""


def probe_command(kit: Kit, record: str, capabilities: str) -> list[str]:
    """The probe agent's command line: this interpreter, this package where it is."""
    package = sys.modules[kit.package]
    root = str(Path(package.__file__ or "").resolve().parent.parent)
    boot = (
        f"import sys; sys.path.insert(0, {root!r}); "
        f"from {kit.package}.conformance import main; sys.exit(main())"
    )
    return [
        sys.executable,
        "-c",
        boot,
        "probe-agent",
        "--record",
        record,
        "--agent-capabilities",
        capabilities,
    ]


def run_client(
    kit: Kit,
    command: list[str],
    *,
    env: dict[str, str],
    cwd: str | None,
    capabilities: str,
    timeout: float,
) -> ClientRun:
    with tempfile.TemporaryDirectory(prefix="acp-conformance-client-") as folder:
        record = os.path.join(folder, "probe.jsonl")
        Path(record).touch()
        probe = probe_command(kit, record, capabilities)
        argv: list[str] = []
        for word in command:
            argv += probe if word == "{agent}" else [word]
        run = ClientRun(argv, probe)
        environment = {**os.environ, **env, "ACP_CONFORMANCE_AGENT": shlex.join(probe)}
        try:
            process = subprocess.Popen(  # the user's own client
                argv,
                env=environment,
                cwd=cwd,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                start_new_session=True,
            )
        except OSError as error:
            run.error = f"the client could not be started: {error}"
            return run
        try:
            out, err = process.communicate(timeout=timeout)
            run.exit_code = process.returncode
        except subprocess.TimeoutExpired:
            run.error = f"the client was still running after {timeout} s: stopped"
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(process.pid, signal.SIGKILL)
            out, err = process.communicate()
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signal.SIGKILL)  # the probe too, if left behind
        run.stdout = out.decode("utf-8", "replace")[-STDERR_TAIL:]
        run.stderr = err.decode("utf-8", "replace")[-STDERR_TAIL:]
        with open(record, encoding="utf-8") as file:
            run.entries = read_trace(file)
    run.checks = _judge(kit, run)
    return run


def judged(kit: Kit) -> list[str]:
    return [
        rid
        for rid in [*judged_requirements(kit), *CLIENT_CHECKS]
        if any(r.id == rid and r.side in ("client", "both") for r in kit.requirements)
    ]


def _judge(kit: Kit, run: ClientRun) -> list[Check]:
    agents = kit.agent_capabilities or kit.client_capabilities
    checks = check_trace(kit, run.entries, agents, only="client")
    judge = Judge(kit, "client")
    judge.scenario = "client"
    if not any(isinstance(e.message, dict) for e in run.entries if not e.outgoing):
        judge.record(
            "ACP-CLIENT-INIT-001",
            "FAIL",
            "the client never spoke to the probe agent (did it start it? pass {agent} "
            "or read ACP_CONFORMANCE_AGENT)",
        )
        return checks + judge.checks
    _probe_checks(judge, run.entries)
    return checks + judge.checks


def _side(kit: Kit, rid: str) -> bool:
    return any(r.id == rid and r.side in ("client", "both") for r in kit.requirements)


def _probe_checks(judge: Judge, entries: list[Entry]) -> None:
    sent = [e.message for e in entries if e.outgoing and isinstance(e.message, dict)]
    got = [e.message for e in entries if not e.outgoing and isinstance(e.message, dict)]
    calls = [m for m in got if "method" in m]
    ours = {json.dumps(m.get("id")): m for m in sent if "method" in m and "id" in m}
    answers = {json.dumps(m.get("id")): m for m in got if "method" not in m}
    news = [m.get("params") or {} for m in calls if m["method"] == "session/new"]
    for params in news:
        cwd = params.get("cwd")
        ok = isinstance(cwd, str) and cwd.startswith("/")
        judge.record("ACP-CLIENT-SESSION-001", "PASS" if ok else "FAIL", f"cwd {cwd!r}")
        has = isinstance(params.get("mcpServers"), list)
        judge.record(
            "ACP-CLIENT-SESSION-002", "PASS" if has else "FAIL", "no mcpServers list"
        )
    handed = {
        (m.get("result") or {}).get("sessionId")
        for m in sent
        if isinstance(m.get("result"), dict)
    }
    prompts = [m for m in calls if m["method"] == "session/prompt"]
    for m in prompts:
        session = (m.get("params") or {}).get("sessionId")
        known = session in handed
        judge.record(
            "ACP-CLIENT-PROMPT-001",
            "PASS" if known else "FAIL",
            f"a prompt for {session!r}",
        )
    _one_at_a_time(judge, entries)
    for key, request in ours.items():
        answer = answers.get(key)
        if request["method"] == "session/request_permission":
            _permission(judge, request, answer, calls)
        if request["method"] == probe_agent.EXT_METHOD:
            ok = answer is not None
            judge.record(
                "ACP-PEER-EXT-001",
                "PASS" if ok else "FAIL",
                "a `_` request not answered",
            )
        if answer is not None:
            judge.record("ACP-PEER-RPC-001", "PASS")
    if any(m["method"] == "session/prompt" for m in calls) and ours:
        alive = any(k in answers for k in ours)
        why = "" if alive else "no answer after an update of an unknown kind"
        judge.record("ACP-CLIENT-EXT-001", "PASS" if alive else "FAIL", why)
    strays = [
        m for m in got if "method" not in m and json.dumps(m.get("id")) not in ours
    ]
    if strays:
        judge.record(
            "ACP-PEER-RPC-004", "FAIL", f"an answer to no request: {strays[0]}"
        )
    elif any("method" in m and "id" not in m for m in sent):
        judge.record("ACP-PEER-RPC-004", "PASS")
    init = next((m for m in calls if m["method"] == "initialize"), None)
    if init is not None:
        params = init.get("params") or {}
        info = params.get("clientInfo")
        has = (
            isinstance(info, dict)
            and bool(info.get("name"))
            and bool(info.get("version"))
        )
        why = "no clientInfo with name and version"
        judge.record("ACP-CLIENT-INIT-003", "PASS" if has else "FAIL", why)
        caps = params.get("clientCapabilities")
        ok = isinstance(caps, dict)
        judge.record(
            "ACP-CLIENT-INIT-004", "PASS" if ok else "FAIL", "no clientCapabilities"
        )


def _permission(
    judge: Judge, request: dict[str, Any], answer: Any, calls: list[Any]
) -> None:
    session = (request.get("params") or {}).get("sessionId")
    cancelled = any(
        m["method"] == "session/cancel"
        and (m.get("params") or {}).get("sessionId") == session
        for m in calls
    )
    if answer is None:
        judge.record(
            "ACP-CLIENT-PERM-001", "FAIL", "the permission request was never answered"
        )
        return
    outcome = (
        ((answer.get("result") or {}).get("outcome") or {})
        if isinstance(answer, dict)
        else {}
    )
    offered = {o["optionId"] for o in (request.get("params") or {}).get("options", [])}
    kind = outcome.get("outcome")
    ok = kind == "cancelled" or (
        kind == "selected" and outcome.get("optionId") in offered
    )
    judge.record("ACP-CLIENT-PERM-001", "PASS" if ok else "FAIL", f"answered {answer}")
    if cancelled:
        good = kind == "cancelled"
        judge.record(
            "ACP-CLIENT-CANCEL-001",
            "PASS" if good else "FAIL",
            f"after its cancel: {answer}",
        )
    else:
        judge.record(
            "ACP-CLIENT-CANCEL-001", "SKIPPED", "the client did not cancel the turn"
        )


def _one_at_a_time(judge: Judge, entries: list[Entry]) -> None:
    running: dict[Any, Any] = {}
    for e in entries:
        m = e.message
        if not isinstance(m, dict):
            continue
        if not e.outgoing and m.get("method") == "session/prompt":
            session = (m.get("params") or {}).get("sessionId")
            if session in running.values():
                judge.record(
                    "ACP-CLIENT-PROMPT-002",
                    "FAIL",
                    f"a second prompt in flight for {session!r}",
                )
            running[json.dumps(m.get("id"))] = session
            judge.record("ACP-CLIENT-PROMPT-002", "PASS")
        elif e.outgoing and "method" not in m:
            running.pop(json.dumps(m.get("id")), None)
