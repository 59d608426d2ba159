"""``conformance client``: run the client under test with the probe agent as its
agent (an argument ``{agent}`` of its command becomes the probe's command line, and
``ACP_CONFORMANCE_AGENT`` holds it shell-quoted; with ``--serve`` the probe is served
by the package's relay and ``{url}`` / ``ACP_CONFORMANCE_URL`` is its address, for a
client of remote agents), wait for the client to leave, and judge what the probe
recorded: the trace's checks for the client's side, and what only the probe saw
(absolute ``cwd``, ``mcpServers``, the permission answer, ``_`` requests answered,
-32700 / -32600 for its malformed lines, the ``_meta`` update, the unknown update
kind and the malformed lines survived, ids echoed, notifications unanswered, and its
own checks of the client's file system and terminals where advertised). Then (unless
``--no-version-mismatch``) it runs the client once more against a probe that answers
``initialize`` with a version the client does not speak: the client should send
nothing more and close the connection."""

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

from .agent_process import STDERR_TAIL
from .client_checks import judge_client, mismatch
from .judge import Judge
from .kit import Kit
from .probe_agent import MISMATCH_VERSION
from .requirements import Finding
from .trace_check import Entry, read_trace

MISMATCH_WAIT = 15.0
"""Seconds the version-mismatch run waits for the client to close the connection."""
CLOSE_GRACE = 2.0
"""Seconds a client has to exit once it closed the probe's connection (mismatch run)."""


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
    probe_checks: list[dict[str, Any]] = field(default_factory=list)
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
    """The probe agent served over the network for a remote client: the package's
    relay (``python -m <package>.relay --port 0 -- PROBE...``), one probe process per
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
    """Run the client against the probe, then (``version_mismatch``) once more
    against a probe that answers a version it does not speak, and judge both.
    ``remote``: the probe is served over the network (``{url}`` in the command,
    ``ACP_CONFORMANCE_URL``) for a client of a remote agent."""
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
    run.probe_checks = main.probe_checks
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


def judge_run(
    kit: Kit, run: ClientRun, disagreements: list[dict[str, Any]] | None = None
) -> list[Finding]:
    """The findings of both runs."""
    findings = judge_client(
        kit,
        run.entries,
        run.probe_checks,
        remote=run.remote,
        disagreements=disagreements,
    )
    if run.mismatch is not None:
        judge = Judge(kit, "client")
        judge.begin("version-mismatch", ("client.version-mismatch",))
        mismatch(
            judge, run.mismatch.entries, run.mismatch.closed, run.mismatch.exit_code
        )
        findings += judge.findings
    return findings


def spoke(run: ClientRun) -> bool:
    """Whether the client said anything to the probe agent."""
    return any(isinstance(e.message, dict) for e in run.entries if not e.outgoing)
