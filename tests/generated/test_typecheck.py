"""The generated packages pass mypy --strict, as a user's strict project would check them."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]


def test_generated_packages_pass_mypy_strict(tmp_path: Path) -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--strict",
            "--cache-dir",
            str(tmp_path / "cache"),
            "-p",
            "acp_bindings",
            "-p",
            "acp_bindings_unstable",
        ],
        cwd=ROOT / "generated",
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Success: no issues found" in done.stdout
