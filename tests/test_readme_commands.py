"""Every command and flag the README (and docs/) shows exists (issue 23, item 4): each
``acpgen COMMAND --flag`` written in a code block or inline code is checked against that
command's ``--help``, and each ``make TARGET`` against ``make help``."""

from __future__ import annotations

import contextlib
import io
import re
import subprocess
from functools import cache
from pathlib import Path

import pytest

from acpgen.cli import main

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
_CODE = re.compile(r"```[a-z]*\n(.*?)```|`([^`]+)`", re.DOTALL)
_ACPGEN = re.compile(r"(?<![\w/.-])acpgen((?:\s+--config[ =]\S+)?)\s+([a-z][a-z-]*)(?:\s+(fetch))?([^\n`]*)")
_MAKE = re.compile(r"(?<![\w/.-])make\s+([a-z][a-z-]*)")
_FLAG = re.compile(r"--(?:\[no-\])?[a-z][a-z0-9-]*")
_GLOBAL = {"--help"}


def _code(page: Path) -> list[str]:
    """The code of ``page``: each line of its code blocks, and each inline code span."""
    found = []
    for block, inline in _CODE.findall(page.read_text(encoding="utf-8")):
        found += block.splitlines() if block else [" ".join(inline.split())]  # a span may wrap
    return found


def _shown() -> dict[str, set[str]]:
    """``{command: flags}`` for every ``acpgen`` command the pages show (``schema fetch`` as one)."""
    shown: dict[str, set[str]] = {}
    for page in PAGES:
        for code in _code(page):
            for _, command, action, rest in _ACPGEN.findall(code.partition(" # ")[0]):
                name = f"{command} {action}".strip()
                flags = {flag.replace("[no-]", "") for flag in _FLAG.findall(rest)}
                shown.setdefault(name, set()).update(flags - _GLOBAL)
    return shown


@cache
def _help(command: str) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), pytest.raises(SystemExit) as done:
        main([*command.split(), "--help"])
    assert done.value.code == 0
    return out.getvalue()


def test_the_pages_show_the_commands() -> None:
    assert {"generate", "vendor", "features", "diff", "schema fetch"} <= _shown().keys()


@pytest.mark.parametrize("command", sorted(_shown()))
def test_every_flag_shown_is_in_the_commands_help(command: str) -> None:
    text = _help(command)
    missing = sorted(flag for flag in _shown()[command] if not re.search(rf"{re.escape(flag)}\b", text))
    assert not missing, f"`acpgen {command}` has no {missing} (shown in README.md or docs/)"


def test_the_global_options_shown_exist() -> None:
    text = _help("")
    assert "--config" in text and "--version" in text


def test_every_make_target_shown_is_in_make_help() -> None:
    listed = subprocess.run(["make", "--no-print-directory", "help"], cwd=ROOT, capture_output=True, text=True)
    targets = set(re.findall(r"^  (\S+)", listed.stdout, re.MULTILINE))
    shown = {target for page in PAGES for code in _code(page) for target in _MAKE.findall(code)}
    assert {"generate", "test"} <= shown
    assert shown <= targets, f"not make targets: {sorted(shown - targets)}"
