"""Write rendered files atomically, or compare them with what is on disk."""

from __future__ import annotations

import difflib
import os
import shutil
import tempfile
from collections.abc import Mapping
from pathlib import Path


def write_tree(out_dir: Path, files: Mapping[str, str], packages: tuple[str, ...]) -> None:
    """Replace each package folder under ``out_dir`` by the rendered files, all or nothing.

    Everything is written into a temporary folder beside the target first; the swap happens
    only when every file is written, so a failure leaves the previous output untouched.
    """
    out_dir.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".acpgen-staging-", dir=out_dir))
    try:
        for rel, text in sorted(files.items()):
            target = staging / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8", newline="\n")
        for package in packages:
            _swap(staging / package, out_dir / package)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _swap(new: Path, target: Path) -> None:
    if not new.exists():
        new.mkdir(parents=True)
    old = target.with_name(f".{target.name}.old")
    shutil.rmtree(old, ignore_errors=True)
    if target.exists():
        os.replace(target, old)
    os.replace(new, target)
    shutil.rmtree(old, ignore_errors=True)


def stale_files(out_dir: Path, files: Mapping[str, str], packages: tuple[str, ...]) -> list[str]:
    """Unified diffs of every file that differs from the rendering, plus missing and extra files."""
    diffs = []
    on_disk = {
        p.relative_to(out_dir).as_posix()
        for package in packages
        if (out_dir / package).is_dir()
        for p in (out_dir / package).rglob("*")
        if p.is_file() and "__pycache__" not in p.parts
    }
    for rel in sorted(on_disk | files.keys()):
        path = out_dir / rel
        current = path.read_text(encoding="utf-8") if rel in on_disk else None
        wanted = files.get(rel)
        if current == wanted:
            continue
        diffs.append(
            "".join(
                difflib.unified_diff(
                    (current or "").splitlines(keepends=True),
                    (wanted or "").splitlines(keepends=True),
                    fromfile=f"{rel} (on disk)" if current is not None else "/dev/null",
                    tofile=f"{rel} (generated)" if wanted is not None else "/dev/null",
                )
            )
            or f"{rel}: differs\n"
        )
    return diffs
