"""Rendered packages as folders to write, and their comparison with what is on disk."""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from pathlib import Path

from acpgen.output.atomic_write import Folder


def package_folders(files: Mapping[str, str], packages: tuple[str, ...]) -> dict[str, Folder]:
    """The rendered files (keyed ``package/path``) as one folder per package, for :func:`atomic_write.write`.

    A package is replaced as a whole: files it held that the rendering no longer has disappear.
    """
    folders: dict[str, dict[str, bytes]] = {package: {} for package in packages}
    for rel, text in files.items():
        package, _, inside = rel.partition("/")
        if package not in folders or not inside:
            raise ValueError(f"rendered file {rel!r} lies outside the packages {packages}")
        folders[package][inside] = text.encode("utf-8")
    return {package: Folder(content) for package, content in folders.items()}


def stale_files(out_dir: Path, files: Mapping[str, str], packages: tuple[str, ...]) -> list[str]:
    """Unified diffs of every file that differs from the rendering, plus missing and extra files."""
    diffs = []
    for rel, current in _differing(out_dir, files, packages):
        wanted = files.get(rel)
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


def changed_files(out_dir: Path, files: Mapping[str, str], packages: tuple[str, ...]) -> list[str]:
    """The paths (relative to ``out_dir``) a write of the rendering would change: changed,
    missing and extra files."""
    return [rel for rel, _ in _differing(out_dir, files, packages)]


def _differing(out_dir: Path, files: Mapping[str, str], packages: tuple[str, ...]) -> list[tuple[str, str | None]]:
    """``(path, its text on disk or None)`` of every file that differs from the rendering."""
    on_disk = {
        p.relative_to(out_dir).as_posix()
        for package in packages
        if (out_dir / package).is_dir()
        for p in (out_dir / package).rglob("*")
        if p.is_file() and "__pycache__" not in p.parts
    }
    found = []
    for rel in sorted(on_disk | files.keys()):
        current = _text(out_dir / rel) if rel in on_disk else None
        if current != files.get(rel):
            found.append((rel, current))
    return found


def _text(path: Path) -> str | None:
    """The file's text; ``None`` for one that is not UTF-8 (it differs from any rendering)."""
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        return "\ufffd"
