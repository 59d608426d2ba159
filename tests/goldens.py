"""Render a build as the commands do; compare rendered files with a folder of golden files, or rewrite
the folder (--update-goldens)."""

from __future__ import annotations

import difflib
import shutil
from collections.abc import Mapping, Sequence
from pathlib import Path

from acpgen.ir import Variant
from acpgen.pipeline import Revision, render_builds
from acpgen.render.header import REGENERATE
from acpgen.source.config import Build


def files_in(folder: Path) -> set[str]:
    return {p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file() and "__pycache__" not in p.parts}


def check_goldens(files: Mapping[str, str], target: Path, *, update: bool, label: str, update_with: str) -> None:
    """Fail with the unified diff of every file that differs from ``target`` (or exists on one side
    only), and ``update_with``, the command that updates the goldens; with ``update``, rewrite ``target`` instead."""
    if update:
        shutil.rmtree(target, ignore_errors=True)
        for rel, text in files.items():
            (target / rel).parent.mkdir(parents=True, exist_ok=True)
            (target / rel).write_text(text, encoding="utf-8")
        return
    on_disk = files_in(target) if target.is_dir() else set()
    problems = []
    for rel in sorted(on_disk | files.keys()):
        current = (target / rel).read_text(encoding="utf-8") if rel in on_disk else ""
        wanted = files.get(rel, "")
        if current != wanted or (rel in on_disk) != (rel in files):
            diff = difflib.unified_diff(
                current.splitlines(True), wanted.splitlines(True), f"golden/{rel}", f"new/{rel}"
            )
            problems.append("".join(diff) or f"{rel}: present on one side only\n")
    assert not problems, "".join(problems) + f"\ngolden output of {label} is stale; update with: {update_with}"


def render_build(
    revision: Revision, variant: Variant, package: str, features: Sequence[str] | None = None
) -> dict[str, str]:
    """Every file of one build (``features``: a selection of unstable features), rendered the one way
    ``acpgen generate`` and ``acpgen vendor`` render (:func:`acpgen.pipeline.render_builds`)."""
    build = Build(variant, package, tuple(features) if features is not None else None)
    return render_builds(revision, [build], regenerate=REGENERATE)
