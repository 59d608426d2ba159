"""The one place where the panel runs the conformance kit (issue 43, Deliver item 4): ``acpgen
conformance agent|client|trace [options] -- COMMAND``, as a user runs it (the tests' acpgen cache:
``tests.conftest.TOOL_CACHE``)."""

from __future__ import annotations

import json
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from tests.conftest import GENERATED
from tests.support.tools import acpgen

KIT = acpgen("conformance")
"""The kit's command line, before its mode (``agent``, ``client`` or ``trace``)."""
KIT_CWD = GENERATED
"""Where the kit runs (the folder that holds the package)."""
LIMIT = 240.0
"""Seconds one run may take in all: only stops a hang (a whole run of the panel's slowest peer takes
about 25 s)."""


def run_kit(mode: str, argv: list[str], *, env: dict[str, str] | None = None) -> dict[str, Any]:
    """Run the kit in ``mode`` with ``argv`` (its options, then ``--`` and the peer's command) and
    return its JSON report (``--report-json``), with what the run itself showed under ``"panel"``:
    the exit code and the last lines of its output."""
    with tempfile.TemporaryDirectory(prefix="acpgen-panel-report-") as folder:
        path = Path(folder) / "report.json"
        done = subprocess.run(
            [*KIT, mode, "--report-json", str(path), *argv],
            cwd=KIT_CWD,
            env=env,
            capture_output=True,
            text=True,
            timeout=LIMIT,
            check=False,
        )
        if not path.is_file():
            raise AssertionError(
                f"the kit wrote no report (exit {done.returncode}):\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
            )
        report: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    report["panel"] = {"exit_code": done.returncode, "stdout_tail": done.stdout[-4000:]}
    return report
