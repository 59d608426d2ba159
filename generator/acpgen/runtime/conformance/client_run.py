"""``conformance client``: run the client under test with the probe agent as its agent
(an argument ``{agent}`` of its command becomes the probe's command line, and
``ACP_CONFORMANCE_AGENT`` holds it shell-quoted; with ``--serve`` the probe is served by
the package's relay and ``{url}`` / ``ACP_CONFORMANCE_URL`` is its address, for a client
of remote agents), wait for the client to leave, and
judge what the probe recorded: the trace's checks for the client's side, and what
only the probe saw (absolute ``cwd``, ``mcpServers``, the permission answer, ``_``
requests answered, -32700 / -32600 for its malformed lines, the ``_meta`` update, the
unknown update kind and the malformed lines survived, ids echoed, notifications
unanswered, and its own checks of the client's file system and terminals where
advertised). Then (unless ``--no-version-mismatch``) it runs the client once more
against a probe that answers ``initialize`` with a version the client does not speak:
the client should send nothing more and close the connection."""

from __future__ import annotations

import contextlib
import json
import os
import re
import shlex
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import probe_agent
from .judge import Judge, Kit
from .peer import STDERR_TAIL
from .probe_agent import BAD_LINE, MISMATCH_VERSION, PROBE_METHODS, UNKNOWN_KIND
from .requirements import Check, Requirement
from .trace_check import Entry, check_trace, judged_requirements, read_trace

CLIENT_CHECKS = (
    "ACP-PEER-TRANSPORT-001",
    "ACP-PEER-RPC-001",
    "ACP-PEER-RPC-003",
    "ACP-PEER-RPC-004",
    "ACP-PEER-RPC-005",
    "ACP-PEER-RPC-007",
    "ACP-PEER-RPC-008",
    "ACP-PEER-RPC-009",
    "ACP-PEER-RPC-010",
    "ACP-PEER-EXT-001",
    "ACP-PEER-EXT-003",
    "ACP-CLIENT-INIT-001",
    "ACP-CLIENT-INIT-002",
    "ACP-CLIENT-INIT-003",
    "ACP-CLIENT-INIT-004",
    "ACP-CLIENT-INIT-005",
    "ACP-CLIENT-SESSION-001",
    "ACP-CLIENT-SESSION-002",
    "ACP-CLIENT-PROMPT-001",
    "ACP-CLIENT-PROMPT-002",
    "ACP-CLIENT-PERM-001",
    "ACP-CLIENT-CANCEL-001",
    "ACP-CLIENT-EXT-001",
    "ACP-CLIENT-FS-001",
    "ACP-CLIENT-FS-002",
    "ACP-CLIENT-TERM-001",
    "ACP-CLIENT-TERM-002",
    "ACP-CLIENT-TERM-003",
)
"""The curated requirements a client run judges; the derived ones are the trace's, and
the ``capability-honor`` ones of the client methods the probe calls."""
MISMATCH_WAIT = 15.0
"""Seconds the version-mismatch run waits for the client to close the connection."""
CLOSE_GRACE = 2.0
"""Seconds a client has to exit once it closed the probe's connection (mismatch run)."""
MALFORMED = {-32700: "ACP-PEER-RPC-007", -32600: "ACP-PEER-RPC-008"}


STARTUP = 30.0
"""Seconds the relay serving the probe agent (``--serve``) may take to listen."""


@dataclass(slots=True)
class Attempt:
    """One run of the client's command against a probe agent."""

    entries: list[Entry] = field(default_factory=list)
    probe_checks: list[dict[str, Any]] = field(default_factory=list)
    closed: bool = False
    """The probe saw its stdin close (the client closed the connection or left)."""
    exit_code: int | None = None
    error: str = ""
    stdout: str = ""
    stderr: str = ""


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
    mismatch: Attempt | None = None
    """The second run, where the probe answers a version the client does not speak."""
    remote: bool = False
    """The probe was served over the network (``--serve``): no malformed line sent."""


def probe_command(
    kit: Kit,
    record: str,
    capabilities: str,
    checks: str,
    version: int | None = None,
    wait: float | None = None,
    framed: bool = False,
) -> list[str]:
    """The probe agent's command line: this interpreter, this package where it is."""
    extra = [] if version is None else ["--protocol-version", str(version)]
    extra += [] if wait is None else ["--wait", str(wait)]
    extra += ["--framed"] if framed else []
    return [
        *_python(kit, "conformance"),
        "probe-agent",
        "--record",
        record,
        "--checks",
        checks,
        "--agent-capabilities",
        capabilities,
        *extra,
    ]


def _python(kit: Kit, module: str) -> list[str]:
    """This interpreter running ``main`` of this package's ``module``, where it is."""
    package = sys.modules[kit.package]
    root = str(Path(package.__file__ or "").resolve().parent.parent)
    boot = (
        f"import sys; sys.path.insert(0, {root!r}); "
        f"from {kit.package}.{module} import main; sys.exit(main())"
    )
    return [sys.executable, "-c", boot]


class _Served:
    """The probe agent served over the network for a remote client: the package's relay
    (``python -m <package>.relay --port 0 -- PROBE...``), one probe process per
    connection, at ``url`` over Streamable HTTP and WebSocket."""

    def __init__(self, kit: Kit, probe: list[str], startup: float) -> None:
        self.url = ""
        self.error = ""
        self.lines: list[str] = []
        self.process = subprocess.Popen(
            [*_python(kit, "relay"), "--port", "0", "--", *probe],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
        first = threading.Event()
        threading.Thread(target=self._drain, args=(first,), daemon=True).start()
        if not first.wait(startup):
            self.error = f"the relay did not listen within {startup} s"
        elif not self.url:
            said = self.lines[0] if self.lines else "(nothing)"
            self.error = f"the relay could not serve the probe agent: {said}"

    def _drain(self, first: threading.Event) -> None:
        assert self.process.stderr is not None
        for raw in self.process.stderr:  # read to its end: the pipe never fills
            line = raw.decode("utf-8", "replace").rstrip("\n")
            if len(self.lines) < 200:
                self.lines.append(line)
            found = re.search(r"at (http://\S+)", line)
            if found and not first.is_set():
                self.url = found.group(1)
                first.set()
        first.set()  # it ended without serving

    def stop(self) -> None:
        """SIGTERM (every connection closes, every probe ends), then SIGKILL."""
        with contextlib.suppress(ProcessLookupError):
            self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(10)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()


def run_client(
    kit: Kit,
    command: list[str],
    *,
    env: dict[str, str],
    cwd: str | None,
    capabilities: str,
    timeout: float,
    version_mismatch: bool = True,
    wait: float | None = None,
    remote: bool = False,
) -> ClientRun:
    """Run the client against the probe, then (``version_mismatch``) once more against
    a probe that answers a version it does not speak, and judge both. ``remote``: the
    probe is served over the network (``{url}`` in the command, ``ACP_CONFORMANCE_URL``)
    for a client of a remote agent."""
    first = _attempt(kit, command, env, cwd, capabilities, timeout, None, wait, remote)
    probe, argv, main = first
    run = ClientRun(argv, probe)
    run.remote = remote
    run.entries, run.exit_code, run.error = main.entries, main.exit_code, main.error
    run.stdout, run.stderr = main.stdout, main.stderr
    if version_mismatch and not main.error:
        limit = min(timeout, MISMATCH_WAIT)
        _, _, run.mismatch = _attempt(
            kit, command, env, cwd, capabilities, limit, MISMATCH_VERSION, wait, remote
        )
    run.checks = _judge(kit, run, main)
    return run


def _attempt(
    kit: Kit,
    command: list[str],
    env: dict[str, str],
    cwd: str | None,
    capabilities: str,
    timeout: float,
    version: int | None,
    wait: float | None,
    remote: bool = False,
) -> tuple[list[str], list[str], Attempt]:
    attempt = Attempt()
    with tempfile.TemporaryDirectory(prefix="acp-conformance-client-") as folder:
        record = os.path.join(folder, "probe.jsonl")
        checks = os.path.join(folder, "checks.jsonl")
        Path(record).touch()
        Path(checks).touch()
        probe = probe_command(kit, record, capabilities, checks, version, wait, remote)
        environment = {**os.environ, **env, "ACP_CONFORMANCE_AGENT": shlex.join(probe)}
        served = _Served(kit, probe, STARTUP) if remote else None
        url = served.url if served is not None else ""
        if url:
            environment["ACP_CONFORMANCE_URL"] = url
        argv: list[str] = []
        for word in command:
            if word == "{url}" and url:
                argv.append(url)
            else:
                argv += probe if word == "{agent}" else [word]
        if served is not None and served.error:
            attempt.error = served.error
        else:
            _run_client(attempt, argv, environment, cwd, timeout, version, checks)
        if (
            served is not None
        ):  # its probes end with it: then what they recorded is whole
            served.stop()
            attempt.stderr = (attempt.stderr + "\n".join(served.lines))[-STDERR_TAIL:]
        with open(record, encoding="utf-8") as file:
            attempt.entries = read_trace(file)
        with open(checks, encoding="utf-8") as file:
            for line in file:
                item = json.loads(line)
                if item.get("event") == "eof":
                    attempt.closed = True
                else:
                    attempt.probe_checks.append(item)
    return probe, argv, attempt


def _run_client(
    attempt: Attempt,
    argv: list[str],
    environment: dict[str, str],
    cwd: str | None,
    timeout: float,
    version: int | None,
    checks: str,
) -> None:
    """Run the user's client to its end (stopped after ``timeout``)."""
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
        attempt.error = f"the client could not be started: {error}"
        return
    out, err = _wait(process, timeout, checks if version is not None else None)
    if out is None:
        attempt.error = f"the client was still running after {timeout} s: stopped"
        out, err = _stop(process)
    else:
        attempt.exit_code = process.returncode
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)  # the probe too, if left behind
    attempt.stdout = out.decode("utf-8", "replace")[-STDERR_TAIL:]
    attempt.stderr = (err or b"").decode("utf-8", "replace")[-STDERR_TAIL:]


def _wait(
    process: subprocess.Popen[bytes], timeout: float, closing: str | None
) -> tuple[bytes | None, bytes | None]:
    """The client's output once it left; (None, None) when it did not within
    ``timeout``, or (with ``closing``, the probe's checks file) within
    :data:`CLOSE_GRACE` after it closed the probe's connection."""
    deadline = time.monotonic() + timeout
    closed_at: float | None = None
    while True:
        step = 0.1 if closing is not None else max(deadline - time.monotonic(), 0.01)
        try:
            return process.communicate(timeout=step)
        except subprocess.TimeoutExpired:
            pass
        now = time.monotonic()
        if closing is not None and closed_at is None and _eof(closing):
            closed_at = now
        if now >= deadline or (closed_at is not None and now - closed_at > CLOSE_GRACE):
            return None, None


def _eof(checks: str) -> bool:
    with open(checks, encoding="utf-8") as file:
        return '"eof"' in file.read()


def _stop(process: subprocess.Popen[bytes]) -> tuple[bytes, bytes]:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)
    out, err = process.communicate()
    return out, err


def judged(kit: Kit) -> list[str]:
    honors = [r.id for r in _honors(kit)]
    return [
        rid
        for rid in [*judged_requirements(kit), *CLIENT_CHECKS, *honors]
        if any(r.id == rid and r.side in ("client", "both") for r in kit.requirements)
    ]


def _honors(kit: Kit) -> list[Requirement]:
    """The client's ``capability-honor`` requirements of the methods the probe calls."""
    return [
        r
        for r in kit.requirements
        if r.family == "capability-honor"
        and r.side == "client"
        and r.subject in PROBE_METHODS
    ]


def _judge(kit: Kit, run: ClientRun, main: Attempt) -> list[Check]:
    agents = kit.agent_capabilities or kit.client_capabilities
    checks = check_trace(kit, run.entries, agents, only="client")
    judge = Judge(kit, "client")
    judge.scenario = "client"
    if not any(isinstance(e.message, dict) for e in run.entries if not e.outgoing):
        judge.record(
            "ACP-CLIENT-INIT-001",
            "FAIL",
            "the client never spoke to the probe agent (did it connect? pass {url} or "
            "read ACP_CONFORMANCE_URL)"
            if run.remote
            else "the client never spoke to the probe agent (did it start it? pass "
            "{agent} or read ACP_CONFORMANCE_AGENT)",
        )
        return checks + judge.checks
    _probe_checks(judge, run.entries)
    if run.remote:
        framed = "over a remote transport every message is framed: no malformed line"
        for rid in ("ACP-PEER-RPC-007", "ACP-PEER-RPC-008", "ACP-PEER-RPC-009"):
            judge.record(rid, "SKIPPED", framed)
        judge.record("ACP-PEER-RPC-010", "SKIPPED", framed)
    else:
        _malformed(judge, run.entries)
    _survived(judge, run.entries)
    _honored(kit, judge, run.entries)
    for item in main.probe_checks:
        judge.record(item["requirement"], item["status"], item.get("message", ""))
    if run.mismatch is not None:
        judge.scenario = "version-mismatch"
        _mismatch(judge, run.mismatch)
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
    strays = [
        m
        for m in got
        if "method" not in m
        and json.dumps(m.get("id")) not in ours
        and _code(m) not in MALFORMED  # judged by _malformed
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


def _code(message: dict[str, Any]) -> Any:
    error = message.get("error")
    return error.get("code") if isinstance(error, dict) else None


def _malformed(judge: Judge, entries: list[Entry]) -> None:
    """The client's answers to the probe's line that is no JSON and its JSON value that
    is no request: -32700 and -32600, each with id null."""
    sent = [
        e
        for e in entries
        if e.outgoing and not _rpc(e.message) and e.message is not None
    ]
    if not sent:
        return  # no turn reached the malformed lines: NOT_TESTED
    answers = [
        e.message
        for e in entries
        if not e.outgoing and _rpc(e.message) and "method" not in e.message
    ]
    ids_judged = False
    for code, rid in MALFORMED.items():
        found = [m for m in answers if _code(m) == code]
        what = (
            "a line that is no JSON"
            if code == -32700
            else "a JSON value that is no request"
        )
        judge.record(
            rid,
            "PASS" if found else "FAIL",
            "" if found else f"{what} was not answered with error {code}",
        )
        for m in found:
            ids_judged = True
            ok = m.get("id") is None
            judge.record(
                "ACP-PEER-RPC-009",
                "PASS" if ok else "FAIL",
                ""
                if ok
                else f"error {code} answered with id {m.get('id')!r}, not null",
            )
    if not ids_judged:
        judge.record(
            "ACP-PEER-RPC-009", "SKIPPED", "the client answered no malformed message"
        )


def _rpc(message: Any) -> bool:
    return isinstance(message, dict) and message.get("jsonrpc") == "2.0"


def _survived(judge: Judge, entries: list[Entry]) -> None:
    """Each of the probe's stress points in a turn (an update with ``_meta``, one of a
    kind the schema does not name, the malformed lines) is survived when a later
    request of the probe's is answered; once the client stopped answering, the later
    points are SKIPPED (the first one FAILs)."""
    answered = {
        json.dumps(e.message.get("id"))
        for e in entries
        if not e.outgoing and isinstance(e.message, dict) and "method" not in e.message
    }
    points = (
        ("ACP-PEER-EXT-003", "a session/update carrying _meta", _has_meta),
        ("ACP-CLIENT-EXT-001", f"an update of kind {UNKNOWN_KIND}", _unknown_kind),
        ("ACP-PEER-RPC-010", "the malformed lines", lambda m: m == BAD_LINE),
    )
    cancelled = any(
        not e.outgoing
        and isinstance(e.message, dict)
        and e.message.get("method") == "session/cancel"
        for e in entries
    )
    stopped = ""
    for rid, what, matches in points:
        at = next(
            (i for i, e in enumerate(entries) if e.outgoing and matches(e.message)),
            None,
        )
        if at is None:
            continue
        later = [
            json.dumps(e.message.get("id"))
            for e in entries[at + 1 :]
            if e.outgoing
            and isinstance(e.message, dict)
            and "method" in e.message
            and "id" in e.message
        ]
        if any(key in answered for key in later):
            judge.record(rid, "PASS")
        elif stopped:
            judge.record(
                rid, "SKIPPED", f"the client had stopped answering after {stopped}"
            )
        elif not later and cancelled:
            judge.record(rid, "SKIPPED", f"the client cancelled the turn before {what}")
        else:  # no later request either: the client left before the probe could ask
            stopped = what
            judge.record(
                rid,
                "FAIL",
                f"after {what}, the client answered none of the probe's "
                f"{len(later)} later requests"
                if later
                else f"the client closed the connection after {what}",
            )


def _has_meta(message: Any) -> bool:
    return (
        isinstance(message, dict)
        and message.get("method") == "session/update"
        and "_meta" in (message.get("params") or {})
    )


def _unknown_kind(message: Any) -> bool:
    if not isinstance(message, dict) or message.get("method") != "session/update":
        return False
    update = (message.get("params") or {}).get("update") or {}
    return isinstance(update, dict) and update.get("sessionUpdate") == UNKNOWN_KIND


def _honored(kit: Kit, judge: Judge, entries: list[Entry]) -> None:
    """A client method the probe called (only where advertised) is not answered
    "method not found" or "invalid params"."""
    asked: dict[str, str] = {}
    answers: dict[str, dict[str, Any]] = {}
    for e in entries:
        m = e.message
        if not isinstance(m, dict):
            continue
        if e.outgoing and m.get("method") in PROBE_METHODS and "id" in m:
            asked[json.dumps(m["id"])] = m["method"]
        elif not e.outgoing and "method" not in m:
            answers[json.dumps(m.get("id"))] = m
    for r in _honors(kit):
        keys = [k for k, method in asked.items() if method == r.subject]
        if not keys:
            judge.record(
                r.id,
                "SKIPPED",
                f"the probe did not call `{r.subject}` (not advertised, or no turn)",
            )
        for key in keys:
            code = _code(answers.get(key) or {})
            ok = code not in (-32601, -32602)
            judge.record(
                r.id,
                "PASS" if ok else "FAIL",
                ""
                if ok
                else f"`{r.subject}` answered error {code} although advertised",
            )


def _mismatch(judge: Judge, attempt: Attempt) -> None:
    """ACP-CLIENT-INIT-005: after the probe answered ``initialize`` with a version the
    client does not speak, the client sends nothing more and closes the connection."""
    rid = "ACP-CLIENT-INIT-005"
    entries = attempt.entries
    answer = next(
        (
            i
            for i, e in enumerate(entries)
            if e.outgoing
            and isinstance(e.message, dict)
            and isinstance(e.message.get("result"), dict)
            and e.message["result"].get("protocolVersion") == MISMATCH_VERSION
        ),
        None,
    )
    if answer is None:
        judge.record(rid, "SKIPPED", "the client sent no initialize in the second run")
        return
    went_on = [
        e.message["method"]
        for e in entries[answer + 1 :]
        if not e.outgoing and isinstance(e.message, dict) and "method" in e.message
    ]
    if went_on:
        judge.record(
            rid,
            "FAIL",
            f"the probe answered protocolVersion {MISMATCH_VERSION}; the client went "
            f"on with {', '.join(f'`{m}`' for m in went_on[:3])}",
        )
    elif attempt.closed or attempt.exit_code is not None:
        judge.record(rid, "PASS")
    else:
        judge.record(
            rid,
            "FAIL",
            f"the probe answered protocolVersion {MISMATCH_VERSION}; the client "
            "neither closed the connection nor left",
        )
