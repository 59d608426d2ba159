"""Every command and flag the README (and docs/) shows exists (issue 23, item 4): each
``acpgen COMMAND --flag`` written in a code block or inline code is checked against that
command's ``--help``, and each ``make TARGET`` against ``make help``. The README's ``acpgen diff
VERSION`` example shows a real change (issue 30, item 8): VERSION's schema differs from the pin's."""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import re
import subprocess
from functools import cache
from pathlib import Path

import pytest

from acpgen.commands import main
from acpgen.load.lock import read_lock
from acpgen.source.fetch import read_schema_files
from tests.support.npm_cache import FILL, SDK, offline_env, readme_diff_versions

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
_CODE = re.compile(r"```[a-z]*\n(.*?)```|``(.+?)``|`([^`]+)`", re.DOTALL)
_ACPGEN = re.compile(r"(?<![\w/.-])acpgen((?:\s+--config[ =]\S+)?)\s+([a-z][a-z-]*)(?:\s+(fetch|bump|show))?([^\n`]*)")
_MAKE = re.compile(r"(?<![\w/.-])make\s+([a-z][a-z-]*)")
_FLAG = re.compile(r"--(?:\[no-\])?[a-z][a-z0-9-]*")
_GLOBAL = {"--help"}


def _code(page: Path) -> list[str]:
    """The code of ``page``: each line of its code blocks, and each inline code span."""
    found = []
    for block, doubled, inline in _CODE.findall(page.read_text(encoding="utf-8")):
        found += block.splitlines() if block else [" ".join((doubled or inline).split())]  # a span may wrap
    return found


def _shown() -> dict[str, set[str]]:
    """``{command: flags}`` for every ``acpgen`` command the pages show (``schema fetch``, ``schema bump`` and
    ``trace show`` as one)."""
    shown: dict[str, set[str]] = {}
    for page in PAGES:
        for code in _code(page):
            for _, command, action, rest in _ACPGEN.findall(code.partition(" # ")[0]):
                name = f"{command} {action}".strip()
                rest = rest.partition(" -- ")[0]  # what follows `--` is the peer's command, not acpgen's
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
    assert {"generate", "vendor", "features", "diff", "schema fetch", "schema bump"} <= _shown().keys()


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


def _diffed_files(version: str, folder: Path) -> dict[str, str]:
    """The sha256 of the v1 schema files (what `acpgen diff` compares) of the SDK at ``version``, from
    the tests' npm cache (offline)."""
    done = subprocess.run(
        ["npm", "pack", f"{SDK}@{version}", "--json", "--pack-destination", str(folder)],
        cwd=folder,
        env=offline_env(),
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, f"{SDK}@{version} is not in the tests' npm cache: {FILL}\n{done.stderr}"
    files = read_schema_files(folder / json.loads(done.stdout)[0]["filename"])
    return {name: hashlib.sha256(data).hexdigest() for name, data in files.items() if name.startswith("v1/")}


def test_the_readme_diff_example_compares_with_a_version_that_differs(tmp_path: Path) -> None:
    lock = read_lock(ROOT / "schema")
    pinned = {name: digest for name, digest in lock.files if name.startswith("v1/")}
    assert _diffed_files(lock.version, tmp_path) == pinned  # the comparison below can tell them apart
    versions = readme_diff_versions()
    assert versions, "the README shows no `acpgen diff VERSION` example"
    for version in versions:
        assert _diffed_files(version, tmp_path) != pinned, (
            f"README.md shows `acpgen diff {version}`, but {version} ships the v1 schema files of the pin "
            f"({lock.version}): the example prints `no API change`. Show a version whose schema differs."
        )
