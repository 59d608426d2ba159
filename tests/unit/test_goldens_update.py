"""``make goldens`` (``tests/support/goldens_update.py``): one command rewrites every golden file,
refuses a goldens tree with uncommitted changes, and reports what it changed; the golden tests are
exactly those that take the ``update_goldens`` fixture."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support import goldens_update

ROOT = Path(__file__).resolve().parents[2]


def _git(root: Path, *argv: str) -> None:
    subprocess.run(["git", "-C", str(root), *argv], check=True, capture_output=True)


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    """A git checkout holding one committed golden file."""
    (tmp_path / "tests" / "golden").mkdir(parents=True)
    (tmp_path / "tests" / "golden" / "a.txt").write_text("old\n", encoding="utf-8")
    _git(tmp_path, "init", "-q")
    _git(tmp_path, "add", ".")
    _git(tmp_path, "-c", "user.name=t", "-c", "user.email=t@example.invalid", "commit", "-q", "-m", "goldens")
    return tmp_path


def _writer(text: str, ran: Path) -> list[str]:
    """A stand-in for the golden tests: records that it ran and rewrites ``tests/golden/a.txt``."""
    code = (
        f"import pathlib; pathlib.Path({str(ran)!r}).touch(); pathlib.Path('tests/golden/a.txt').write_text({text!r})"
    )
    return [sys.executable, "-c", code]


def test_a_dirty_goldens_tree_is_refused_before_anything_runs(
    checkout: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (checkout / "tests" / "golden" / "a.txt").write_text("edited by hand\n", encoding="utf-8")
    (checkout / "tests" / "golden" / "new.txt").write_text("untracked\n", encoding="utf-8")
    ran = tmp_path / "ran"
    assert goldens_update.main([], root=checkout, pytest=_writer("new\n", ran)) == 2
    err = capsys.readouterr().err
    assert "uncommitted changes" in err and "tests/golden/a.txt" in err and "tests/golden/new.txt" in err
    assert not ran.exists()
    assert (checkout / "tests" / "golden" / "a.txt").read_text(encoding="utf-8") == "edited by hand\n"


def test_a_rewrite_reports_the_files_it_changed(
    checkout: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert goldens_update.main([], root=checkout, pytest=_writer("new\n", tmp_path / "ran")) == 0
    out = capsys.readouterr().out
    assert "1 file(s) of tests/golden rewritten" in out and "M tests/golden/a.txt" in out


def test_an_unchanged_rewrite_says_so(checkout: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert goldens_update.main([], root=checkout, pytest=_writer("old\n", tmp_path / "ran")) == 0
    assert "up to date" in capsys.readouterr().out


def test_failing_golden_tests_fail_the_command(checkout: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert goldens_update.main([], root=checkout, pytest=[sys.executable, "-c", "raise SystemExit(1)"]) == 1
    assert "the golden tests failed" in capsys.readouterr().err


def test_outside_a_git_checkout_it_says_why_it_cannot_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "tests" / "golden").mkdir(parents=True)
    assert goldens_update.main([], root=tmp_path, pytest=[sys.executable, "-c", "pass"]) == 2
    assert "git status" in capsys.readouterr().err


def test_every_golden_folder_is_written_by_a_test_that_make_goldens_runs() -> None:
    """Each test module that compares with tests/golden reads the flag only through the ``update_goldens``
    fixture (so that it is marked ``golden`` and ``make goldens`` runs it), and every folder of
    tests/golden is named by one of them."""
    modules = sorted(m for m in (ROOT / "tests").rglob("test_*.py") if m != Path(__file__).resolve())
    direct = [m.relative_to(ROOT).as_posix() for m in modules if '--update-goldens")' in m.read_text(encoding="utf-8")]
    assert direct == [], "read --update-goldens through the update_goldens fixture instead"
    writers = "\n".join(t for m in modules if "update_goldens" in (t := m.read_text(encoding="utf-8")))
    named = set(re.findall(r'"golden" / "([\w-]+)"|golden/([\w-]+)', writers))
    folders = {p.name for p in (ROOT / "tests" / "golden").iterdir() if p.is_dir()}
    unwritten = folders - {a or b for a, b in named} - _fixture_named(writers)
    assert not unwritten, f"golden folders that no golden test writes: {sorted(unwritten)}"


def _fixture_named(text: str) -> set[str]:
    """Golden folders named after the fixture schemas (tests/fixtures/<name> -> tests/golden/<name>)."""
    return {p.name for p in (ROOT / "tests" / "fixtures").iterdir() if p.is_dir()} if "FIXTURES" in text else set()
