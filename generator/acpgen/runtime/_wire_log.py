"""The wire trace: every message in and out of a connection, as JSON lines.

Support code for ``connection``: it knows no method of the protocol. Each entry is one
line ``{"at": <UTC time>, "direction": "in"|"out", "message": ...}`` (``"raw"``, the
text, for a message that is not JSON). A failing trace is logged, never fatal.
"""

from __future__ import annotations

import datetime
import json
import logging
import os
from typing import Any, TextIO

from .codec import ID_WINDOW, refuse_constant

__all__ = ["TRACE_VARIABLE", "Trace", "WireLog", "traced"]

_log = logging.getLogger(__name__)

TRACE_VARIABLE = "ACP_TRACE"
"""The environment variable naming a file to trace the wire to (see :func:`traced`)."""

Trace = str | os.PathLike[str] | TextIO | None
"""Where to trace the wire: a path (appended to), an open text file, or nowhere."""


def traced(trace: Trace) -> Trace:
    """``trace``, or else the file named by the ``ACP_TRACE`` environment variable, if
    set."""
    return trace if trace is not None else os.environ.get(TRACE_VARIABLE) or None


class WireLog:
    """Writes the trace entries to a text file (opened here when given a path)."""

    def __init__(self, trace: str | os.PathLike[str] | TextIO) -> None:
        self._owned = isinstance(trace, str | os.PathLike)
        if isinstance(trace, str | os.PathLike):
            trace = open(trace, "a", encoding="utf-8")  # noqa: SIM115 - closed by close()
        self._file: TextIO | None = trace

    def record(self, direction: str, data: bytes) -> None:
        """One entry: a message read (``"in"``) or written (``"out"``)."""
        if self._file is None:
            return
        at = datetime.datetime.now(datetime.UTC).isoformat(timespec="microseconds")
        entry: dict[str, Any] = {"at": at, "direction": direction}
        try:
            entry["message"] = json.loads(data, parse_constant=refuse_constant)
        except (ValueError, RecursionError):
            entry["raw"] = data[:ID_WINDOW].decode("utf-8", "replace")
        try:
            self._file.write(json.dumps(entry, separators=(",", ":")) + "\n")
            self._file.flush()
        except (OSError, ValueError, RecursionError) as error:
            _log.warning("could not write the wire trace: %s", error)

    def close(self) -> None:
        """Stop tracing; close the file if it was opened here."""
        if self._owned and self._file is not None:
            self._file.close()
        self._file = None
