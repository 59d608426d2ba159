"""``make goldens``: rewrite every golden file of ``tests/golden`` in one step, and say what changed.

The golden tests are the ones that take the ``update_goldens`` fixture (``tests/conftest.py`` marks
them ``golden``); this runs exactly those with ``--update-goldens``. It refuses to start while
``tests/golden`` holds changes that are not committed (a rewrite would mix them with its own, and
the report below could not tell them apart), and afterwards lists the files it changed, added or
deleted (``git status`` of ``tests/golden``): review them with ``git diff tests/golden``.

    uv run --frozen python -m tests.support.goldens_update [PYTEST ARGS...]
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = "tests/golden"
PYTEST = [sys.executable, "-m", "pytest", "-q", "-n", "2", "-p", "no:cacheprovider", "-m", "golden", "--update-goldens"]


class NotClean(Exception):
    """The goldens tree cannot be rewritten now: why, and what to do."""


def changes(root: Path) -> list[str]:
    """``git status --porcelain`` lines of ``tests/golden`` below ``root`` (untracked files listed one by one)."""
    done = subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=all", "--", GOLDEN],
        cwd=root,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise NotClean(
            f"cannot tell what the rewrite changes: `git status` failed in {root} ({done.stderr.strip()}); "
            "run it in a git checkout, or run the golden tests with --update-goldens yourself"
        )
    return [line for line in done.stdout.splitlines() if line.strip()]


def main(argv: Sequence[str] | None = None, root: Path = ROOT, pytest: Sequence[str] = PYTEST) -> int:
    extra = list(sys.argv[1:] if argv is None else argv)
    try:
        before = changes(root)
    except NotClean as error:
        print(f"make goldens: {error}", file=sys.stderr)
        return 2
    if before:
        print(
            f"make goldens: {GOLDEN} has uncommitted changes; commit, stash or discard them first "
            f"(`git stash -- {GOLDEN}` or `git checkout -- {GOLDEN}`),",
            "so that what the rewrite changes can be told apart:",
            *(f"  {line}" for line in before),
            sep="\n",
            file=sys.stderr,
        )
        return 2
    done = subprocess.run([*pytest, *extra], cwd=root, check=False)
    after = changes(root)
    if done.returncode != 0:
        print(
            f"make goldens: the golden tests failed (exit {done.returncode}); files rewritten so far:", file=sys.stderr
        )
        print(*(f"  {line}" for line in after), sep="\n", file=sys.stderr)
        return 1
    if not after:
        print(f"make goldens: every golden file is up to date ({GOLDEN} unchanged)")
        return 0
    print(f"make goldens: {len(after)} file(s) of {GOLDEN} rewritten (review with `git diff {GOLDEN}`):")
    print(*(f"  {line}" for line in after), sep="\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
