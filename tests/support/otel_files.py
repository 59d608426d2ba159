"""What the telemetry tests share: the command lines that run a program under ``otel_run``, and readers
of the files it writes (spans, one JSON object a line; the metrics, the SDK's JSON)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
PYTHON = sys.executable
ENV = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "generated")])}
ECHO_AGENT = str(ROOT / "examples" / "echo_agent.py")
LIMIT = 60
"""Seconds: only stops a hang."""


def traced(prefix: Path) -> list[str]:
    """The command line that runs a Python program under ``otel_run`` with files at ``prefix``."""
    return [PYTHON, "-m", "tests.support.otel_run", str(prefix)]


def run(argv: list[str], **env: str) -> subprocess.CompletedProcess[str]:
    """Run ``argv`` from the repository (``generated/`` importable); it must succeed."""
    done = subprocess.run(
        argv, cwd=ROOT, env={**ENV, **env}, capture_output=True, text=True, timeout=LIMIT, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done


def spans(path: Path) -> list[dict[str, Any]]:
    """The spans ``otel_run`` wrote, in the order they ended."""
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def points(path: Path) -> dict[str, list[dict[str, Any]]]:
    """Each metric's data points, by name, from ``otel_run``'s metrics file."""
    found: dict[str, list[dict[str, Any]]] = {}
    for resource in json.loads(path.read_text(encoding="utf-8"))["resource_metrics"]:
        for scope in resource["scope_metrics"]:
            for metric in scope["metrics"]:
                found.setdefault(metric["name"], []).extend(metric["data"]["data_points"])
    return found


def counts(points: list[dict[str, Any]], *keys: str) -> dict[tuple[Any, ...], int]:
    """A histogram's counts by the values of attributes ``keys``."""
    return {tuple(p["attributes"].get(k) for k in keys): p["count"] for p in points}


def values(points: list[dict[str, Any]], *keys: str) -> dict[tuple[Any, ...], float]:
    """A counter's or a gauge's values by the values of attributes ``keys``."""
    return {tuple(p["attributes"].get(k) for k in keys): p["value"] for p in points}
