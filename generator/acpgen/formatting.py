"""Format generated Python in memory with the pinned ruff, independent of any user configuration."""

from __future__ import annotations

import subprocess

from ruff.__main__ import find_ruff_bin

from acpgen.errors import AcpgenError, Problem

_COMMON = ("--isolated", "--line-length", "88", "--target-version", "py311")


def format_python(text: str, name: str) -> str:
    """Sort imports and drop unused ones (a template lays out what a generator imported), then format;
    ``name`` is used in messages only."""
    ruff = find_ruff_bin()
    sorted_text = _run([ruff, "check", *_COMMON, "--select", "I,F401", "--fix", "--exit-zero", "--quiet"], text, name)
    return _run([ruff, "format", *_COMMON, "--quiet"], sorted_text, name)


def _run(command: list[str], text: str, name: str) -> str:
    done = subprocess.run(
        [*command, "--stdin-filename", name, "-"], input=text, capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        raise AcpgenError(
            Problem(
                f"ruff could not format the generated file {name}: {done.stderr.strip()[:2000]}",
                name,
                "This is a bug in acpgen or its templates, not in your schema; please report it with the schema used.",
            )
        )
    return done.stdout
