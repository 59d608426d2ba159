"""The probe agent's step for a client's terminals (where the build has
``terminal/*`` and the client advertised ``terminal``, and only there): two harmless
commands of the probe's own (this Python printing a short text under an output limit,
and one sleeping until killed) through ``terminal/create``, ``wait_for_exit``,
``output``, ``kill`` and ``release``."""

from __future__ import annotations

import os
import sys
from typing import Any

from .kit import ProbeStep
from .probe_agent import Probe, short
from .registry import CheckSpec

ORDER = 20
METHODS = (
    "terminal/create",
    "terminal/output",
    "terminal/wait_for_exit",
    "terminal/kill",
    "terminal/release",
)
CHECKS = (
    CheckSpec(
        "client.terminal",
        ("client",),
        judges=("ACP-CLIENT-TERM-001", "ACP-CLIENT-TERM-002", "ACP-CLIENT-TERM-003"),
        honors=METHODS,
    ),
)
TERMINAL_TEXT = "start:" + "é" * 60
"""What the probe's printing command writes (126 bytes of UTF-8)."""
TERMINAL_LIMIT = 41
"""The ``outputByteLimit`` of that terminal: odd, so that a cut in a character shows."""
PRINT = (
    "import sys; sys.stdout.buffer.write("
    f"{TERMINAL_TEXT!r}.encode('utf-8')); sys.stdout.flush()"
)
SLEEP = "import time; time.sleep(30)"


def terminals(probe: Probe, session: str) -> None:
    rids = ("ACP-CLIENT-TERM-001", "ACP-CLIENT-TERM-002", "ACP-CLIENT-TERM-003")
    if probe.client.get("terminal") is not True:
        for rid in rids:
            probe.check(
                rid,
                "SKIPPED",
                "the client did not advertise terminal: the probe called no "
                "terminal method",
            )
        return
    cwd = probe.cwds.get(session, os.getcwd())
    create = {
        "command": sys.executable,
        "args": ["-c", PRINT],
        "cwd": cwd,
        "outputByteLimit": TERMINAL_LIMIT,
    }
    terminal = _create(probe, session, create)
    if terminal is not None:
        _printing(probe, session, terminal)
    sleeper = _create(
        probe, session, {"command": sys.executable, "args": ["-c", SLEEP]}
    )
    if sleeper is not None:
        _killed(probe, session, sleeper)


def _create(probe: Probe, session: str, params: dict[str, Any]) -> str | None:
    result, why = probe.read(
        "terminal/create", probe.call(session, "terminal/create", params)
    )
    if why:
        probe.check("ACP-CLIENT-TERM-001", "FAIL", why)
        return None
    return str(result["terminalId"])


def _term(probe: Probe, session: str, method: str, terminal: str) -> Any:
    """A terminal method's result; None after a FAIL, or when the build lacks it."""
    result, why = probe.read(
        method, probe.call(session, method, {"terminalId": terminal})
    )
    if why:
        probe.check("ACP-CLIENT-TERM-001", "FAIL", why)
        return None
    probe.check("ACP-CLIENT-TERM-001", "PASS")
    return result


def _printing(probe: Probe, session: str, terminal: str) -> None:
    exited = _term(probe, session, "terminal/wait_for_exit", terminal)
    if isinstance(exited, dict) and exited.get("exitCode") != 0:
        probe.check(
            "ACP-CLIENT-TERM-001",
            "FAIL",
            f"the probe's printing command ended {short(exited)}, not exitCode 0",
        )
    output = _term(probe, session, "terminal/output", terminal)
    if isinstance(output, dict):
        _truncation(probe, output)
    _term(probe, session, "terminal/release", terminal)


def _truncation(probe: Probe, output: dict[str, Any]) -> None:
    kept = output.get("output")
    data = kept.encode("utf-8") if isinstance(kept, str) else b""
    problems = []
    if output.get("exitStatus") is None:
        problems.append("no exitStatus after the command exited")
    if not TERMINAL_TEXT.endswith(kept if isinstance(kept, str) else "\0"):
        problems.append(f"output {kept!r} is not the end of {TERMINAL_TEXT!r}")
    if not TERMINAL_LIMIT - 3 <= len(data) <= TERMINAL_LIMIT:
        problems.append(
            f"{len(data)} bytes kept with outputByteLimit {TERMINAL_LIMIT} "
            "(at most that, less only to end at a character boundary)"
        )
    if output.get("truncated") is not True:
        problems.append("truncated is not true")
    probe.check(
        "ACP-CLIENT-TERM-002",
        "FAIL" if problems else "PASS",
        "; ".join(problems),
    )


def _killed(probe: Probe, session: str, terminal: str) -> None:
    killed = _term(probe, session, "terminal/kill", terminal)
    if killed is not None:
        exited = _term(probe, session, "terminal/wait_for_exit", terminal)
        ok = exited is not None
        probe.check(
            "ACP-CLIENT-TERM-003",
            "PASS" if ok else "FAIL",
            "" if ok else "terminal/wait_for_exit did not answer after terminal/kill",
        )
    else:
        probe.check("ACP-CLIENT-TERM-003", "FAIL", "terminal/kill failed")
    _term(probe, session, "terminal/release", terminal)


STEPS = (ProbeStep("terminals", terminals),)
