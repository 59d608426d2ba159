"""The generator's layers are a checked contract (issue 34, item 5): import-linter's contracts in
``[tool.importlinter]`` of pyproject.toml hold for the code, state the order docs/architecture.md
writes, and fail on an import that runs back up."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "generator" / "acpgen"
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")


def _lint_imports(pythonpath: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    if pythonpath is not None:
        env["PYTHONPATH"] = str(pythonpath)
    command = [str(LINT_IMPORTS), "--config", str(ROOT / "pyproject.toml"), "--no-cache", "--no-logo"]
    return subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, check=False)


def _contracts() -> dict[str, dict[str, object]]:
    table = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["importlinter"]
    return {c["id"]: c for c in table["contracts"]}


def test_the_code_keeps_every_contract() -> None:
    done = _lint_imports()
    assert done.returncode == 0, done.stdout + done.stderr
    assert "0 broken" in done.stdout


def test_the_architecture_document_states_the_contracts_order() -> None:
    """The table of docs/architecture.md lists the layers of the contract, top first, row by row."""
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    table = text.split("```text\n", 1)[1].split("```", 1)[0]
    rows = [re.split(r"\s{2,}", line.strip())[0] for line in table.splitlines() if line.strip()]
    documented = [" | ".join(part.strip().rstrip("/") for part in row.split("|")) for row in rows]
    assert documented == _contracts()["generator-layers"]["layers"]


def _copy_with(tmp_path: Path, module: str, line: str) -> Path:
    """A copy of the generator's package with ``line`` added to ``module`` (its path below ``acpgen``)."""
    copy = tmp_path / "acpgen"
    shutil.copytree(PACKAGE, copy, symlinks=True, ignore=shutil.ignore_patterns("__pycache__"))
    path = copy / module
    path.write_text(path.read_text(encoding="utf-8") + f"\n{line}\n", encoding="utf-8")
    return tmp_path


NOT_ALLOWED = "{} is not allowed to import {}"


@pytest.mark.slow
@pytest.mark.parametrize(
    ("module", "line", "broken"),
    [
        (
            "source/fetch.py",
            "from acpgen.output import atomic_write",
            NOT_ALLOWED.format("acpgen.source", "acpgen.output"),
        ),
        (
            "features/check.py",
            "from acpgen.ir import capabilities",
            NOT_ALLOWED.format("acpgen.features", "acpgen.ir"),
        ),
        ("ir/naming.py", "from acpgen.render import header", NOT_ALLOWED.format("acpgen.ir", "acpgen.render")),
        ("runtime/wire/codec.py", "from acpgen import errors", NOT_ALLOWED.format("acpgen.runtime", "acpgen.errors")),
        (
            "runtime/wire/codec.py",
            "from acpgen.runtime.connection import lines",
            NOT_ALLOWED.format("acpgen.runtime.wire", "acpgen.runtime.connection"),
        ),
        (
            "render/prepare.py",
            "from acpgen.load import inventory",
            NOT_ALLOWED.format("acpgen.render", "acpgen.load"),
        ),
        (
            "commands/generate.py",
            "from acpgen.output import freshness",
            "Illegal imports of protected package acpgen.output.freshness",
        ),
    ],
)
def test_an_import_against_the_contracts_fails_the_check(tmp_path: Path, module: str, line: str, broken: str) -> None:
    done = _lint_imports(_copy_with(tmp_path, module, line))
    assert done.returncode == 1, done.stdout + done.stderr
    assert broken in done.stdout, done.stdout
