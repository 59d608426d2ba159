"""The one atomic writer (:mod:`acpgen.output.atomic_write`): what a write leaves, how a failure at any of
its steps is undone, what it refuses, and that a live run's staging folder is never touched.

Kills are tested in tests/system/test_crash_safety.py; here failures are exceptions raised at each step.
"""

from __future__ import annotations

import errno
import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from acpgen.commands import main
from acpgen.errors import EXIT_BAD_INPUT, AcpgenError
from acpgen.output import atomic_write
from acpgen.output.atomic_write import Folder, write
from tests.support.crash import Tree, hook_env, materialize, read_only, snapshot, stagings

FIXTURE = Path(__file__).parents[1] / "fixtures" / "unions" / "schema.json"
OLD: dict[str, atomic_write.Content] = {
    "pkg": Folder({"__init__.py": b"a = 1\n", "gone.py": b"g = 1\n", "sub/x.py": b"x = 1\n"}),
    "other": Folder({"__init__.py": b"b = 1\n"}),
    "v9/old.json": b"[]",
    "lock.json": b"{1}",
}
NEW: dict[str, atomic_write.Content] = {
    "pkg": Folder({"__init__.py": b"a = 2\n", "sub/x.py": b"x = 2\n", "sub/deeper/y.py": b"y = 2\n"}),
    "other": Folder({"__init__.py": b"b = 2\n"}),
    "v9/old.json": None,
    "v2/new.json": b"{}",
    "lock.json": b"{2}",
}


@pytest.fixture
def trees(tmp_path: Path) -> Iterator[tuple[Path, Tree, Tree]]:
    """An output folder holding OLD and a file the writes do not own; the OLD and NEW snapshots."""
    out = tmp_path / "out"
    out.mkdir()
    (out / "keep.txt").write_text("not ours\n", encoding="utf-8")
    write(out, OLD)
    old = snapshot(out)
    write(out, NEW)
    new = snapshot(out)
    materialize(out, old)
    yield out, old, new
    atomic_write.step_hook = None


def test_a_write_replaces_its_entries_and_nothing_else(trees: tuple[Path, Tree, Tree]) -> None:
    out, old, new = trees
    assert old["pkg/gone.py"] == b"g = 1\n" and old["v9/old.json"] == b"[]"
    write(out, NEW)
    assert snapshot(out) == new
    assert new["keep.txt"] == b"not ours\n"
    assert "pkg/gone.py" not in new, "a folder is replaced as a whole"
    assert "v9" not in new, "a removal takes the folders it empties with it"
    assert new["v2/new.json"] == b"{}" and new["pkg/sub/deeper/y.py"] == b"y = 2\n"
    umask = os.umask(0)
    os.umask(umask)
    assert (out / "pkg").stat().st_mode & 0o777 == 0o777 & ~umask, "a written folder has the usual mode"
    assert (out / "lock.json").stat().st_mode & 0o777 == 0o666 & ~umask
    assert not stagings(out)


def steps_of(out: Path, old: Tree) -> list[str]:
    """The steps of writing NEW over OLD."""
    seen: list[str] = []
    atomic_write.step_hook = seen.append
    write(out, NEW)
    atomic_write.step_hook = None
    materialize(out, old)
    return seen


def fail_at(number: int, code: int = errno.ENOSPC) -> None:
    """Make the writer's ``number``-th step raise OSError."""
    count = 0

    def hook(label: str) -> None:
        nonlocal count
        count += 1
        if count == number:
            raise OSError(code, os.strerror(code))

    atomic_write.step_hook = hook


@pytest.mark.parametrize("exchange", [True, False], ids=["exchange", "two-renames"])
def test_a_failure_at_any_step_changes_nothing_or_completes(
    exchange: bool, trees: tuple[Path, Tree, Tree], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Until the last entry is in place a failure is undone; after, only the clean-up failed."""
    if not exchange:
        monkeypatch.setattr(atomic_write, "exchange", lambda first, second: False)
    out, old, new = trees
    steps = steps_of(out, old)
    assert any(s.startswith("moved aside") for s in steps) != exchange
    applied = steps.index("applied")
    for number, label in enumerate(steps, start=1):
        fail_at(number)
        with pytest.raises(AcpgenError) as caught:
            write(out, NEW)
        atomic_write.step_hook = None
        problem = caught.value.problems[0]
        if number <= applied + 1:
            assert snapshot(out) == old, f"a failure at {label!r} changed the output"
            assert not stagings(out), f"a failure at {label!r} left its staging folder"
            assert problem.where == str(out) and "No space left on device" in problem.what
            assert "Free some disk space" in problem.hint and "nothing was changed" in problem.hint
        else:
            assert snapshot(out) == new and "the output was written" in problem.what
            atomic_write.recover(out)
            assert not stagings(out)
        materialize(out, old)


def test_a_failed_undo_is_finished_by_the_next_run(trees: tuple[Path, Tree, Tree]) -> None:
    out, old, new = trees
    steps = steps_of(out, old)
    placed = steps.index("placed other") + 1
    count = 0

    def hook(label: str) -> None:
        nonlocal count
        count += 1
        if count == placed or label.startswith("restored"):
            raise OSError(errno.EIO, "I/O error", label)

    atomic_write.step_hook = hook
    with pytest.raises(AcpgenError, match="failed half way") as caught:
        write(out, NEW)
    atomic_write.step_hook = None
    assert "run the command again" in caught.value.problems[0].hint
    assert len(stagings(out)) == 1
    atomic_write.recover(out)
    assert snapshot(out) == new and not stagings(out)


def test_leftovers_without_a_journal_are_removed_by_the_next_write(trees: tuple[Path, Tree, Tree]) -> None:
    """Including the staging folders of the writer before this one (no journal, random suffix)."""
    out, old, _ = trees
    legacy = out / ".acpgen-staging-k2j4x9q1" / "pkg"
    legacy.mkdir(parents=True)
    (legacy / "models.py").write_text("half written", encoding="utf-8")
    write(out, {"keep.txt": b"now ours\n"})
    assert not stagings(out)
    assert snapshot(out) == {**old, "keep.txt": b"now ours\n"}


@pytest.mark.parametrize(
    ("entries", "says"),
    [
        ({"../x": b""}, "not a plain relative POSIX path"),
        ({"/abs": b""}, "not a plain relative POSIX path"),
        ({"a//b": b""}, "not a plain relative POSIX path"),
        ({".": b""}, "not a plain relative POSIX path"),
        ({"a": b"", "a/b": b""}, "overlap"),
        ({".acpgen-staging-1": b""}, "names a staging folder"),
    ],
)
def test_entries_that_are_not_plain_paths_are_refused(
    entries: dict[str, atomic_write.Content], says: str, tmp_path: Path
) -> None:
    with pytest.raises(ValueError, match=says):
        write(tmp_path / "out", entries)
    with pytest.raises(ValueError, match="not a plain relative POSIX path"):
        Folder({"../escape.py": b""})
    assert not (tmp_path / "out").exists()


def test_a_live_runs_staging_is_never_touched(tmp_path: Path) -> None:
    """A run paused right after its commit holds the folder: recovery and a second write wait for it."""
    out, first, second = tmp_path / "out", tmp_path / "first.json", tmp_path / "second.json"
    first.write_text(json.dumps({"entries": {"pkg": {"a.py": "1"}, "lock.json": "1"}}), encoding="utf-8")
    second.write_text(json.dumps({"entries": {"pkg": {"b.py": "2"}, "lock.json": "2"}}), encoding="utf-8")
    writer = [sys.executable, "-m", "tests.support.peers.writer"]
    paused = subprocess.Popen(
        [*writer, str(first), str(out)],
        env=hook_env(pause_at="committed"),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert paused.stdin is not None and paused.stdout is not None
    try:
        assert paused.stdout.readline() == "paused\n"
        [staging] = stagings(out)
        before = snapshot(staging)
        assert "journal.json" in before
        other = subprocess.Popen([*writer, str(second), str(out)], env=hook_env())
        recovering = threading.Thread(target=atomic_write.recover, args=(out,))
        recovering.start()
        time.sleep(0.5)
        assert other.poll() is None and recovering.is_alive(), "they must wait for the live run"
        assert stagings(out) == [staging] and snapshot(staging) == before, "the live run's staging was touched"
    finally:
        paused.stdin.write("\n")
        paused.stdin.close()
    assert paused.wait(timeout=60) == 0
    assert other.wait(timeout=60) == 0
    recovering.join(timeout=60)
    assert snapshot(out) == {"pkg": None, "pkg/b.py": b"2", "lock.json": b"2"}
    assert not stagings(out)


@pytest.mark.parametrize("locked", ["output folder", "package folder"])
def test_a_read_only_output_is_a_clear_error(locked: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`acpgen generate` into a folder it may not change: exit 2, what/where/what to do, nothing changed."""
    (tmp_path / "pyproject.toml").write_text('[tool.acpgen]\ncache-dir = "cache"\n', encoding="utf-8")
    out = tmp_path / "out"
    (out / "acp_bindings").mkdir(parents=True)
    older = "# Generated by acpgen 0.0.1 from an older schema\n"  # an older acpgen's output, which it may replace
    (out / "acp_bindings" / "models.py").write_text(older, encoding="utf-8")
    before = snapshot(out)
    denied = out if locked == "output folder" else out / "acp_bindings"
    argv = ["--config", str(tmp_path / "pyproject.toml"), "generate", "--schema", str(FIXTURE), "--out", str(out)]
    with read_only(denied):
        code = main(argv)
    err = capsys.readouterr().err
    assert code == EXIT_BAD_INPUT, err
    assert "Traceback" not in err
    [line] = [line for line in err.splitlines() if line.startswith("acpgen: error: ")]
    assert f"cannot write into the folder {out}: " in line and f"(at {denied})" in line
    assert f"Make {denied} writable" in line and "nothing was changed" in line
    assert snapshot(out) == before and not stagings(out)
