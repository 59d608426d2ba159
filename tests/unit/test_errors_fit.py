"""Errors that fit the situation (issue 23, item 4): a user's own input is never answered with a
maintainer's remedy, and every `make help` target does something real."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from acpgen.commands import main
from acpgen.errors import EXIT_BAD_INPUT

ROOT = Path(__file__).resolve().parents[2]


def _fails(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    assert main(argv) == EXIT_BAD_INPUT
    captured = capsys.readouterr()
    assert captured.out == "" and "Traceback" not in captured.err
    return captured.err


@pytest.mark.parametrize(
    ("content", "says"),
    [
        (b'{"$defs": ', "the schema file is not valid JSON"),
        (b"\xff\xfe{}", "the schema file is not UTF-8 text"),
        (b"[]", "the schema must be a JSON object"),
        (None, "cannot read the schema file"),
    ],
)
def test_a_users_own_schema_is_not_told_to_run_make_schema(
    content: bytes | None, says: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    schema = tmp_path / "mine.json"
    if content is not None:
        schema.write_bytes(content)
    err = _fails(["generate", "--schema", str(schema), "--stable", "--out", str(tmp_path / "out")], capsys)
    assert says in err and "make schema" not in err, err
    assert not (tmp_path / "out").exists()


def test_a_pinned_schema_file_is_still_restored_with_make_schema(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from acpgen.errors import AcpgenError
    from acpgen.load.schema import load_schema

    broken = tmp_path / "schema.json"
    broken.write_text("{", encoding="utf-8")
    with pytest.raises(AcpgenError) as caught:
        load_schema(broken, pinned=True)
    assert "make schema" in caught.value.problems[0].message()


@pytest.mark.parametrize("command", ["generate", "vendor"])
def test_protocol_2_with_an_unstable_feature_says_v2_has_none_yet(
    command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = [command, "--protocol", "2", "--unstable-feature", "session_fork"]
    if command == "generate":
        argv += ["--out", str(tmp_path / "out")]
    else:
        argv += ["--package", "a._acp", "--out", str(tmp_path / "_acp")]
    err = _fails(argv, capsys)
    assert "protocol v2 has no unstable features yet" in err and "feature manifest" not in err, err
    assert not any(tmp_path.iterdir())


def test_a_missing_diff_side_says_it_does_not_exist(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    err = _fails(["diff", str(tmp_path / "old"), str(ROOT / "schema")], capsys)
    assert f"{tmp_path / 'old'} does not exist" in err


def _help_targets() -> dict[str, str]:
    argv = ["make", "--no-print-directory", "help"]
    done = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, check=True)
    return dict(re.findall(r"^  (\S+)\s+(.+)$", done.stdout, re.MULTILINE))


def test_every_make_help_target_has_a_recipe() -> None:
    """A dry run (`make -n`) of each target lists commands; none is "Nothing to be done"."""
    targets = _help_targets()
    assert {"generate", "test", "check", "lint", "typecheck", "install", "diff", "bench", "schema"} <= targets.keys()
    for target in targets:
        done = subprocess.run(
            ["make", "--no-print-directory", "-n", target, "FROM=2.3.0"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=False,
        )
        assert done.returncode == 0, (target, done.stderr)
        assert "Nothing to be done" not in done.stdout + done.stderr, target
        assert done.stdout.strip(), f"make {target} runs nothing"


def test_every_phony_target_is_in_make_help() -> None:
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    phony = {name for line in re.findall(r"^\.PHONY:(.*)$", makefile, re.MULTILINE) for name in line.split()}
    assert phony <= _help_targets().keys(), phony - _help_targets().keys()
