"""Test hook: kill this Python process with SIGKILL at a numbered step of acpgen's atomic writer.

Python imports ``sitecustomize`` at start-up from its path, so a test puts this folder first on
a subprocess's ``PYTHONPATH`` (any command: ``acpgen generate`` itself, or tests/support/peers/writer.py)
and sets, in the subprocess's environment only:

- ``ACPGEN_TEST_KILL_AT``: kill at the N-th step (a number), or at the first step whose label
  is this text;
- ``ACPGEN_TEST_STEP_LOG``: append every step's label to this file (one line each, written
  before any kill, so a killed run's log ends with the step it died at);
- ``ACPGEN_TEST_PAUSE_AT``: at the first step with this label, print ``paused`` and wait for a
  line on standard input (to look at a live run from outside);
- ``ACPGEN_TEST_NO_EXCHANGE=1``: make the writer take its fallback (two renames) instead of
  ``renameat2(RENAME_EXCHANGE)``.

Nothing outside the tests reads these variables; without them this module does nothing.
"""

from __future__ import annotations

import os
import signal
import sys


def _install() -> None:
    kill_at = os.environ.get("ACPGEN_TEST_KILL_AT", "")
    log = os.environ.get("ACPGEN_TEST_STEP_LOG", "")
    pause_at = os.environ.get("ACPGEN_TEST_PAUSE_AT", "")
    no_exchange = os.environ.get("ACPGEN_TEST_NO_EXCHANGE") == "1"
    if not (kill_at or log or pause_at or no_exchange):
        return
    from acpgen.output import atomic_write

    count = 0

    def hook(label: str) -> None:
        nonlocal count
        count += 1
        if log:
            with open(log, "a", encoding="utf-8") as stream:
                stream.write(label + "\n")
        if kill_at in (str(count), label):
            os.kill(os.getpid(), signal.SIGKILL)
        if label == pause_at:
            print("paused", flush=True)
            sys.stdin.readline()

    atomic_write.step_hook = hook
    if no_exchange:
        atomic_write.exchange = lambda first, second: False  # type: ignore[assignment]


_install()
