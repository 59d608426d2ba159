"""The Makefile as a user runs it (issue 45): a target whose standard output is a report (its help
says ``stdout: ...``) prints the report alone there, make's own command lines and the installs going
to standard error, so that ``make diff FROM=2.2.0 FORMAT=markdown > report.md`` is the report; and
``make help`` says what ``test-fast`` takes.

Real make runs a copy of the Makefile in a folder of its own, with ``UV`` naming a stand-in for uv
that prints ``REPORT`` followed by its arguments when asked to ``run`` something, and nothing for
``sync`` (so the copy installs nothing and reads no repository but its own folder)."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
MAKEFILE = ROOT / "Makefile"
FAKE_UV = """#!/bin/sh
case "$1" in
  run) shift; echo "REPORT $*" ;;
  *) echo "uv $* (to stdout, as uv sync prints)" ;;
esac
"""
ARGUMENTS = {"diff": ["FROM=2.2.0", "FORMAT=markdown"], "bump": ["VERSION=2.2.0"]}
"""What each report target needs to run."""


def _help_lines() -> dict[str, str]:
    text = MAKEFILE.read_text(encoding="utf-8")
    return {m.group(1): m.group(2) for m in re.finditer(r"^([a-z-]+):.*?## (.*)$", text, re.MULTILINE)}


REPORTS = sorted(name for name, text in _help_lines().items() if "stdout:" in text)


def test_the_report_targets_are_marked_in_their_help() -> None:
    assert {"diff", "bump", "bench"} <= set(REPORTS), REPORTS


@pytest.mark.parametrize("target", REPORTS)
def test_a_report_target_prints_only_its_report_on_stdout(target: str, tmp_path: Path) -> None:
    shutil.copy(MAKEFILE, tmp_path / "Makefile")
    uv = tmp_path / "bin" / "uv"
    uv.parent.mkdir()
    uv.write_text(FAKE_UV, encoding="utf-8")
    uv.chmod(0o755)
    done = subprocess.run(
        # the npm installs are assumed done (-o): they are not what is tested, and would reach the network
        ["make", "--no-print-directory", "-o", "interop-deps", target, f"UV={uv}", *ARGUMENTS.get(target, [])],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert lines and all(line.startswith("REPORT ") for line in lines), f"stdout:\n{done.stdout}"
    assert f"{uv} run" in done.stderr  # make's command lines are still shown, on stderr


def test_make_help_says_what_test_fast_takes_quiet_and_under_load() -> None:
    text = _help_lines()["test-fast"]
    assert "under a minute" not in text
    assert re.search(r"\d+ s .*quiet", text) and re.search(r"\d+ min .*load", text), text
