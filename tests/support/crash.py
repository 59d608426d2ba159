"""Helpers of the crash-safety tests: folder snapshots, staging folders, and subprocesses that the
test hook in tests/killpoints/ can kill at a numbered step of :mod:`acpgen.output.atomic_write`."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from acpgen.output.atomic_write import STAGING_PREFIX

ROOT = Path(__file__).resolve().parents[2]
HOOK = ROOT / "tests" / "killpoints"

Tree = dict[str, bytes | None]
"""Everything below a folder except staging folders: POSIX path -> file bytes, or None for a folder."""


def snapshot(folder: Path) -> Tree:
    return {
        path.relative_to(folder).as_posix(): None if path.is_dir() else path.read_bytes()
        for path in sorted(folder.rglob("*"))
        if not path.relative_to(folder).parts[0].startswith(STAGING_PREFIX)
    }


def materialize(folder: Path, tree: Tree) -> None:
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    for path, data in sorted(tree.items()):
        if data is None:
            (folder / path).mkdir(parents=True, exist_ok=True)
        else:
            (folder / path).parent.mkdir(parents=True, exist_ok=True)
            (folder / path).write_bytes(data)


def view(tree: Tree, name: str) -> Tree:
    """The part of a tree that one entry names."""
    return {path: data for path, data in tree.items() if path == name or path.startswith(name + "/")}


def stagings(folder: Path) -> list[Path]:
    return sorted(p for p in folder.iterdir() if p.name.startswith(STAGING_PREFIX)) if folder.is_dir() else []


def pending(folder: Path) -> bool:
    """Whether a killed run left a committed write (a journal) for the next run to finish."""
    return any((staging / "journal.json").is_file() for staging in stagings(folder))


def hook_env(
    *, kill_at: str = "", log: Path | None = None, exchange: bool = True, pause_at: str = ""
) -> dict[str, str]:
    """The environment of a subprocess that tests/killpoints/sitecustomize.py watches."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ACPGEN_TEST_")}
    env["PYTHONPATH"] = os.pathsep.join([str(HOOK), str(ROOT)])
    env["ACPGEN_TEST_KILL_AT"] = kill_at
    env["ACPGEN_TEST_STEP_LOG"] = str(log) if log else ""
    env["ACPGEN_TEST_NO_EXCHANGE"] = "" if exchange else "1"
    env["ACPGEN_TEST_PAUSE_AT"] = pause_at
    return env


def run(argv: list[str], env: dict[str, str], cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, env=env, cwd=cwd, capture_output=True, text=True, timeout=120, check=False)


@contextmanager
def read_only(folder: Path) -> Iterator[None]:
    """Make ``folder`` unwritable for this process: mode 0555, or for root (whom modes do not stop)
    the immutable flag (``chattr +i``); restored afterwards."""
    if os.geteuid() != 0:
        mode = folder.stat().st_mode
        folder.chmod(0o555)
        try:
            yield
        finally:
            folder.chmod(mode)
        return
    subprocess.run(["chattr", "+i", str(folder)], check=True, capture_output=True)
    try:
        yield
    finally:
        subprocess.run(["chattr", "-i", str(folder)], check=True, capture_output=True)
