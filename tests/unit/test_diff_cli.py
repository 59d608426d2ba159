"""``acpgen diff`` from the command line: sides, formats, exit codes, errors."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from acpgen.commands import main
from acpgen.load.lock import read_lock
from acpgen.source.fetch import DEFAULT_PACKAGE
from acpgen.source.schema_lock import LOCK_NAME, lock_to_json

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def config(tmp_path: Path) -> str:
    """A pyproject whose cache folder is private to the test."""
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    path = tmp_path / "pyproject.toml"
    assert "[tool.acpgen]\n" in text and "cache-dir" not in text
    text = text.replace("[tool.acpgen]\n", f'[tool.acpgen]\ncache-dir = "{tmp_path / "cache"}"\n')
    path.write_text(text, "utf-8")
    for name in ("schema",):
        shutil.copytree(ROOT / name, tmp_path / name)
    return str(path)


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_fail_on_sets_the_exit_code(acp_schemas: Path, config: str, capsys: pytest.CaptureFixture[str]) -> None:
    old, new = str(acp_schemas / "v0.8.0"), str(acp_schemas / "v0.9.0")
    code, out, _ = _run(capsys, "--config", config, "diff", old, new, "--fail-on", "breaking")
    assert code == 1 and "field-narrowed [wire, stable] x" in out and "any value -> object or null" in out
    code, out, _ = _run(capsys, "--config", config, "diff", old, new)
    assert code == 0
    calm_old, calm_new = str(acp_schemas / "v0.13.4"), str(acp_schemas / "v0.13.5")
    assert _run(capsys, "--config", config, "diff", calm_old, calm_new, "--fail-on", "breaking")[0] == 0
    assert _run(capsys, "--config", config, "diff", calm_old, calm_new, "--fail-on", "warning")[0] == 1


def test_formats(acp_schemas: Path, config: str, capsys: pytest.CaptureFixture[str]) -> None:
    old, new = str(acp_schemas / "v0.13.4"), str(acp_schemas / "v0.13.5")
    code, out, _ = _run(capsys, "--config", config, "diff", old, new, "--format", "json")
    document = json.loads(out)
    assert code == 0 and document["counts"]["breaking"] == 0 and document["findings"]
    code, out, _ = _run(capsys, "--config", config, "diff", old, new, "--format", "markdown")
    assert out.startswith("### ACP spec diff") and "| `stabilised` |" in out


def test_same_schema_has_no_change(config: str, capsys: pytest.CaptureFixture[str]) -> None:
    schema = str(Path(config).parent / "schema")
    code, out, _ = _run(capsys, "--config", config, "diff", schema, schema, "--fail-on", "info")
    assert code == 0 and "no API change" in out


def _committed_schema(config: str) -> tuple[Path, str]:
    """A git repository of its own in the test's folder, holding the config's schema folder in one
    commit (the project's history and uncommitted changes play no part); its folder and short commit."""
    folder = Path(config).parent
    env = {"GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_SYSTEM": "/dev/null"}
    who = ["-c", "user.name=acpgen tests", "-c", "user.email=tests@acpgen.invalid", "-c", "commit.gpgsign=false"]
    for args in (["init", "-q"], ["add", "schema"], [*who, "commit", "-q", "-m", "the pinned schema"]):
        subprocess.run(["git", *args], cwd=folder, check=True, capture_output=True, env={**os.environ, **env})
    head = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=folder, capture_output=True, text=True, check=True
    )
    return folder, head.stdout.strip()


def test_git_ref_side(config: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    folder, _ = _committed_schema(config)
    monkeypatch.chdir(folder)
    code, out, err = _run(capsys, "--config", config, "diff", "HEAD:schema", str(ROOT / "schema"))
    assert code == 0, err
    assert "no API change" in out


def test_npm_side_is_read_from_the_cache(config: str, capsys: pytest.CaptureFixture[str]) -> None:
    cache = Path(config).parent / "cache" / "npm" / f"{DEFAULT_PACKAGE.replace('/', '+')}@9.9.9"
    shutil.copytree(ROOT / "schema", cache)
    lock = read_lock(cache)
    relabelled = type(lock)(DEFAULT_PACKAGE, "9.9.9", lock.integrity, lock.files)
    (cache / LOCK_NAME).write_text(lock_to_json(relabelled), encoding="utf-8")
    code, out, err = _run(capsys, "--config", config, "diff", "npm:9.9.9", str(ROOT / "schema"))
    assert code == 0, err
    assert "no API change" in out


@pytest.mark.parametrize(
    ("side", "message"),
    [
        ("no/such/folder", "no/such/folder does not exist"),
        ("no-such-ref-xyz:schema", "git could not read"),
        ("tests", "holds no ACP schema"),
    ],
)
def test_bad_side_is_a_clear_error(side: str, message: str, config: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _run(capsys, "--config", config, "diff", side, str(ROOT / "schema"))
    assert code == 2 and out == ""
    assert message in err and "acpgen: error:" in err


def test_invalid_json_side(tmp_path: Path, config: str, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "schema.json"
    bad.write_text("{not json", encoding="utf-8")
    code, _, err = _run(capsys, "--config", config, "diff", str(bad), str(ROOT / "schema"))
    assert code == 2 and "not valid JSON" in err and "make schema" not in err  # the user's file: fix it


def test_list_rules(config: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(capsys, "--config", config, "diff", "--list-rules")
    assert code == 0 and "field-narrowed" in out and "stabilised" in out


def test_reports_made_for_review(acp_schemas: Path, config: str, capsys: pytest.CaptureFixture[str]) -> None:
    """Stability per finding, a stable-only view, CI annotations (issue 15)."""
    old, new = str(acp_schemas / "v0.13.4"), str(acp_schemas / "v0.13.5")
    _, everything, _ = _run(capsys, "--config", config, "diff", old, new, "--format", "json")
    stabilities = {f["stability"] for f in json.loads(everything)["findings"]}
    assert stabilities == {"stable", "unstable"}
    _, stable, _ = _run(capsys, "--config", config, "diff", old, new, "--format", "json", "--stable-only")
    kept = json.loads(stable)["findings"]
    assert kept and {f["stability"] for f in kept} == {"stable"}
    assert len(kept) == sum(f["stability"] == "stable" for f in json.loads(everything)["findings"])
    _, markdown, _ = _run(capsys, "--config", config, "diff", old, new, "--format", "markdown")
    assert "| rule | category | stability | change | breaks |" in markdown and "| unstable |" in markdown
    code, github, _ = _run(capsys, "--config", config, "diff", old, new, "--format", "github", "--fail-on", "warning")
    annotations = github.splitlines()
    assert code == 1 and len(annotations) == len(json.loads(everything)["findings"]) + 1
    assert annotations[0].startswith("::warning title=acpgen diff field-removed (source%2C unstable)::")
    assert annotations[-1] == f"::notice title=acpgen diff::{old} -> {new}: 0 breaking, 10 warning, 120 info"


def test_sides_are_labelled_with_their_version_and_commit(
    config: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    folder, commit = _committed_schema(config)
    monkeypatch.chdir(folder)
    version = read_lock(folder / "schema").version
    _, out, _ = _run(capsys, "--config", config, "diff", "HEAD:schema", "schema", "--format", "markdown")
    title = out.splitlines()[0]
    old, new = f"{DEFAULT_PACKAGE}@{version} (HEAD:schema, {commit})", f"{DEFAULT_PACKAGE}@{version} (schema)"
    assert title == f"### ACP spec diff: `{old}` -> `{new}`"
