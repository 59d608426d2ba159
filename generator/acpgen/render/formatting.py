"""Format generated Python with the pinned ruff, independent of any user configuration.

All the files given (every package a command renders) are formatted by one run of each ruff
command, in a temporary folder, not one run per file or package: starting ruff costs more than
formatting a small file.
"""

from __future__ import annotations

import subprocess
import tempfile
from collections.abc import Mapping
from pathlib import Path

from ruff.__main__ import find_ruff_bin

from acpgen.errors import AcpgenError, Problem
from acpgen.render.templating import LINE_LENGTH

_COMMON = ("--isolated", "--line-length", str(LINE_LENGTH), "--target-version", "py311", "--no-cache")


def format_files(files: Mapping[str, str]) -> dict[str, str]:
    """Sort imports and drop unused ones (a template lays out what a generator imported), then
    format. ``files`` maps relative paths (``acp_bindings/models.py``) to their text; files that
    are not Python come back as they were."""
    python = [path for path in files if path.endswith(".py")]
    if not python:
        return dict(files)
    with tempfile.TemporaryDirectory(prefix="acpgen-format-") as folder:
        root = Path(folder)
        for path in python:
            (root / path).parent.mkdir(parents=True, exist_ok=True)
            (root / path).write_text(files[path], encoding="utf-8", newline="\n")
        ruff = find_ruff_bin()
        _run([ruff, "check", *_COMMON, "--select", "I,F401", "--fix", "--exit-zero", "--quiet", "."], root)
        _run([ruff, "format", *_COMMON, "--quiet", "."], root)
        formatted = {path: (root / path).read_text(encoding="utf-8") for path in python}
    return {path: formatted.get(path, text) for path, text in files.items()}


def _run(command: list[str], folder: Path) -> None:
    done = subprocess.run(command, cwd=folder, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise AcpgenError(
            Problem(
                what=f"ruff could not format the generated files: {done.stderr.strip()[:2000]}",
                where="generated files",
                hint="This is a bug in acpgen or its templates, not in your schema; "
                "please report it with the schema used.",
            )
        )
