"""Writing the trace: every message in and out of a connection, as JSON lines (the
file is the trace; ``trace show`` renders views of it).

Support code for ``connection.Connection``: it knows no method of the protocol. Each
entry is one line ``{"at": <UTC time>, "direction": "in"|"out", "message": ...}``
(``"raw"``, the text, for a message that is not JSON). A failing trace is logged, never
fatal.

One trace per process: ``ACP_TRACE`` names the file of the process that reads it (a
client, or an agent that a client of any kind started), and is not passed on to an agent
that :func:`child_environment` prepares the start of; an agent reads ``ACP_AGENT_TRACE``
first, so that a client can have the agents it starts traced to a file of their own. In
either variable, ``{pid}`` is replaced by the process id and ``{role}`` by ``agent`` or
``client``: a path holding one of them names a file per process (or per side), and
``ACP_TRACE`` is then passed on. A path is opened for appending and each entry written
with one ``write``, so that processes which share a file anyway never interleave their
lines.
"""

from __future__ import annotations

import datetime
import json
import os
from collections.abc import Mapping
from typing import Any, Literal, TextIO

from ..wire.codec import ID_WINDOW, refuse_constant
from .log_ids import logger

__all__ = [
    "AGENT_TRACE_VARIABLE",
    "TRACE_VARIABLE",
    "Trace",
    "TraceWriter",
    "child_environment",
    "traced",
]

_log = logger(__name__)

TRACE_VARIABLE = "ACP_TRACE"
"""The environment variable naming a file to trace this process's wire to (see
:func:`traced`)."""
AGENT_TRACE_VARIABLE = "ACP_AGENT_TRACE"
"""The environment variable naming a file to trace an agent's wire to, read by agents
before ``ACP_TRACE`` (and passed on to the agents a client starts)."""
PLACEHOLDERS = ("{pid}", "{role}")
"""What a traced path may hold to name a file per process (or per side)."""

Trace = str | os.PathLike[str] | TextIO | None
"""Where to trace the wire: a path (appended to), an open text file, or nowhere."""
Role = Literal["agent", "client"]


def traced(trace: Trace, role: Role | None = None) -> Trace:
    """``trace``, or else the file the environment names for ``role``: an agent's
    ``ACP_AGENT_TRACE``, else ``ACP_TRACE`` (a client reads only ``ACP_TRACE``), with
    ``{pid}`` and ``{role}`` replaced; ``None`` when neither is set."""
    if trace is not None:
        return trace
    names: tuple[str, ...] = (TRACE_VARIABLE,)
    if role == "agent":
        names = (AGENT_TRACE_VARIABLE, TRACE_VARIABLE)
    path = next((found for name in names if (found := os.environ.get(name))), None)
    if path is None:
        return None
    return path.replace("{pid}", str(os.getpid())).replace("{role}", role or "process")


def child_environment(env: Mapping[str, str] | None) -> dict[str, str] | None:
    """The environment for an agent process this one starts: ``env`` (or this process's
    environment, ``None`` meaning it unchanged) without ``ACP_TRACE`` when it names this
    process's own trace, so that the agent does not write to the client's file. A path
    with a placeholder (a file per process) is passed on, and so is a different path
    given in ``env`` (asked for)."""
    own = os.environ.get(TRACE_VARIABLE)
    source = env if env is not None else os.environ
    value = source.get(TRACE_VARIABLE)
    if not value or value != own or any(p in value for p in PLACEHOLDERS):
        return dict(env) if env is not None else None
    return {k: v for k, v in source.items() if k != TRACE_VARIABLE}


class TraceWriter:
    """Writes the trace entries to a text file (opened here when given a path: for
    appending, each entry in one ``write``)."""

    def __init__(self, trace: str | os.PathLike[str] | TextIO) -> None:
        self._fd: int | None = None
        self._file: TextIO | None = None
        if isinstance(trace, str | os.PathLike):
            flags = os.O_WRONLY | os.O_CREAT | os.O_APPEND | getattr(os, "O_BINARY", 0)
            self._fd = os.open(trace, flags, 0o644)
        else:
            self._file = trace

    def record(self, direction: str, data: bytes) -> None:
        """One entry: a message read (``"in"``) or written (``"out"``)."""
        if self._fd is None and self._file is None:
            return
        at = datetime.datetime.now(datetime.UTC).isoformat(timespec="microseconds")
        entry: dict[str, Any] = {"at": at, "direction": direction}
        try:
            entry["message"] = json.loads(data, parse_constant=refuse_constant)
        except (ValueError, RecursionError):
            entry["raw"] = data[:ID_WINDOW].decode("utf-8", "replace")
        try:
            line = json.dumps(entry, separators=(",", ":")) + "\n"
            if self._fd is not None:
                _write_all(self._fd, line.encode("ascii"))
            elif self._file is not None:
                self._file.write(line)
                self._file.flush()
        except (OSError, ValueError, RecursionError) as error:
            _log.warning("could not write the wire trace: %s", error)

    def close(self) -> None:
        """Stop tracing; close the file if it was opened here."""
        if self._fd is not None:
            os.close(self._fd)
        self._fd = self._file = None


def _write_all(fd: int, data: bytes) -> None:
    """``data`` in one ``write`` (with ``O_APPEND``, one entry never meets another's
    bytes); a short write (a full disk) is finished by more."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]
