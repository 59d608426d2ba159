"""The same inputs give byte-identical output, whatever the hash seed; --check catches staleness."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]


def _acpgen(*args: str, seed: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONHASHSEED": seed}
    return subprocess.run(
        [sys.executable, "-m", "acpgen", "--config", str(ROOT / "pyproject.toml"), *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        check=False,
    )


@pytest.mark.parametrize("seed", ["0", "1", "4242"])
def test_generation_is_byte_identical_under_every_hash_seed(seed: str, tmp_path: Path) -> None:
    out = tmp_path / "out"
    done = _acpgen("generate", "--both", "--out", str(out), seed=seed)
    assert done.returncode == 0, done.stderr
    committed = [
        p for package in ("acp_bindings", "acp_bindings_unstable") for p in (ROOT / "generated" / package).rglob("*")
    ]
    assert len(committed) >= 12
    for path in sorted(committed):
        if path.is_file() and "__pycache__" not in path.parts:
            rel = path.relative_to(ROOT / "generated")
            assert (out / rel).read_bytes() == path.read_bytes(), f"{rel} differs under PYTHONHASHSEED={seed}"


def test_check_reports_a_stale_file_with_a_diff_and_the_fix(tmp_path: Path) -> None:
    out = tmp_path / "generated"
    shutil.copytree(ROOT / "generated", out, ignore=shutil.ignore_patterns("__pycache__"))
    assert _acpgen("generate", "--both", "--check", "--out", str(out), seed="0").returncode == 0
    models = out / "acp_bindings" / "models.py"
    models.write_text(models.read_text().replace("class NewSessionRequest(", "class NewSessionRequestX(", 1))
    (out / "acp_bindings_unstable" / "extra.py").write_text("x = 1\n")
    done = _acpgen("generate", "--both", "--check", "--out", str(out), seed="0")
    assert done.returncode == 1
    assert "-class NewSessionRequestX(" in done.stdout and "+class NewSessionRequest(" in done.stdout
    assert "acp_bindings_unstable/extra.py" in done.stdout
    assert "make generate" in done.stderr
