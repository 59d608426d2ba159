"""Running the conformance kit as a user runs it (``acpgen conformance ...``) and reading its
reports, for the kit's tests (tests/conformance/) and the panel of third-party peers."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from tests.conftest import GENERATED, ROOT
from tests.support.tools import acpgen

PEER = ROOT / "tests" / "support" / "peers" / "conformance_agent.py"
CLIENT = ROOT / "tests" / "support" / "peers" / "conformance_client.py"
LONG_PROMPT = " ".join(["w"] * 60_000)
"""Long enough that the echo agent (a chunk per word) still streams when the kit cancels, and under
the 128 KiB an argument may hold."""
LIMIT = 300
"""Seconds for one run of the kit: only stops a hang."""
BUILDS = {"acp_bindings": (), "acp_bindings_unstable": ("--unstable",), "acp_bindings_v2": ("--protocol", "2")}
"""The build options of ``acpgen conformance`` that judge with each generated package's build."""


def kit(
    *args: str,
    package: str = "acp_bindings",
    cwd: Path = GENERATED,
    env: dict[str, str] | None = None,
    timeout: float = LIMIT,
) -> subprocess.CompletedProcess[str]:
    """``acpgen conformance [BUILD] ARGS...``, judging with ``package``'s build."""
    return subprocess.run(
        acpgen("conformance", *BUILDS[package], *args),
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        env=env,
    )


def report(path: Path) -> dict[str, Any]:
    found: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return found


def status(found: dict[str, Any]) -> dict[str, str]:
    return {r["id"]: r["status"] for r in found["requirements"]}


def failed(found: dict[str, Any]) -> set[str]:
    return {r["id"] for r in found["requirements"] if r["status"] == "FAIL"}


def messages(found: dict[str, Any], rid: str) -> list[str]:
    entry = next(r for r in found["requirements"] if r["id"] == rid)
    return [f["message"] for f in entry["findings"]] or [entry.get("why_not_tested", "")]
