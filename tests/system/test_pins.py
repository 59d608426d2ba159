"""Every place that repeats the pinned schema version agrees with the lock (issue 30, item 7), and
``acpgen schema bump`` in a project of its own: the pins it reads, what it refuses before changing
anything, what it moves. The round trip of this repository: tests/system/test_bump.py."""

from __future__ import annotations

import hashlib
import re
import shutil
import stat
from pathlib import Path

import pytest

from acpgen.commands import main
from acpgen.load.lock import read_lock
from acpgen.output.project_files import rewrite_files
from acpgen.source.pins import load_bump_config, moved, sightings
from tests.support.npm_cache import CACHE, FILL, ROUND_TRIP, offline_env

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
LOCK = read_lock(ROOT / "schema")
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_every_pin_of_this_repository_agrees_with_the_lock(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = _run(capsys, "--config", str(ROOT / "pyproject.toml"), "schema", "bump", "--check")
    assert code == 0, err
    assert f"8 pinned place(s) name {LOCK.package} {LOCK.version}, as the lock does" in err


def test_no_page_names_the_pinned_version_outside_a_pin() -> None:
    """A new mention of the pinned package's version in the README or docs/ must be a pin (so that
    the bump moves it) or not repeat the version."""
    config = load_bump_config(ROOT / "pyproject.toml")
    covered = {(s.pin.file, s.span) for s in sightings(config, LOCK.package) if not s.pin.json}
    mention = re.compile(rf"(?:{re.escape(LOCK.package)}`?[@ ]|SDK )(?P<version>{re.escape(LOCK.version)})\b")
    stray = []
    for page in PAGES:
        name = page.relative_to(ROOT).as_posix()
        text = page.read_bytes().decode("utf-8")
        for found in mention.finditer(text):
            if (name, found.span("version")) not in covered:
                stray.append(f"{name}:{text.count(chr(10), 0, found.start()) + 1}: {found.group(0)}")
    assert not stray, (
        "these name the pinned version but no pin of [tool.acpgen.bump] covers them (add a pin, so that "
        "`make bump` moves them, or do not repeat the version):\n" + "\n".join(stray)
    )


def _project(tmp_path: Path, bump: str, readme: str = "Built from schema 2.4.0.\n") -> Path:
    """A project of a user who pins the schema: a copy of this repository's schema folder, a README."""
    project = tmp_path / "project"
    shutil.copytree(ROOT / "schema", project / "schema")
    (project / "README.md").write_text(readme, encoding="utf-8")
    (project / "pyproject.toml").write_text(
        f'[tool.acpgen]\nschema-dir = "schema"\noutput-dir = "out"\n\n[tool.acpgen.bump]\n{bump}', encoding="utf-8"
    )
    return project


def _tree(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_check_names_each_pin_that_disagrees_and_what_to_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    project = _project(
        tmp_path,
        'command = "make bump VERSION={version}"\npins = [{file = "README.md", text = "schema {version}"}]\n',
        f"Built from schema\n1.0.0; schema {LOCK.version} too.\n",
    )
    monkeypatch.chdir(project)
    code, _, err = _run(capsys, "schema", "bump", "--check")
    assert code == 1
    assert err == (
        f"acpgen: README.md:2 names 1.0.0, but the schema lock pins {LOCK.package} {LOCK.version} (at README.md:2). "
        f"Run `make bump VERSION={LOCK.version}`: it moves every pin of [tool.acpgen.bump] to the locked version "
        "(fetching the schema, regenerating and running the bump's commands).\n"
    )


@pytest.mark.parametrize(
    ("bump", "message"),
    [
        ('pins = [{file = "README.md"}]', "needs exactly one of `text` and `json`"),
        ('pins = [{file = "README.md", text = "schema"}]', "must hold {version} exactly once"),
        ('pins = [{file = "../README.md", text = "{version}"}]', "contains a '..' component"),
        ('pins = [{file = "README.md", json = "dependencies"}]', "must be a JSON pointer"),
        ('pins = [{file = "README.md", text = "v{version}", line = 3}]', "/pins/0/line is not a key of a pin"),
        ('command = "make bump"', "must be a string naming {version}"),
        ("run = [1]", "must be a list of commands"),
        ("bogus = 1", "/bump/bogus is not a setting of [tool.acpgen.bump]"),
        ('pins = [{file = "NOTES.md", text = "v{version}"}]', "cannot read the pinned file"),
        ('pins = [{file = "README.md", text = "release {version}"}]', "README.md holds no 'release {version}'"),
        ('pins = [{file = "README.md", json = "/version"}]', "README.md is not JSON"),
    ],
)
def test_a_bad_pin_is_refused_before_anything_changes(
    bump: str, message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    project = _project(tmp_path, bump + "\n")
    before = _tree(project)
    monkeypatch.chdir(project)
    monkeypatch.setenv("npm_config_offline", "true")  # a bump that got as far as npm would fail differently
    for args in (["--check"], ["--version", ROUND_TRIP]):
        code, out, err = _run(capsys, "schema", "bump", *args)
        assert (code, out) == (2, ""), err
        assert message in err and "acpgen: error:" in err and "Traceback" not in err
    assert _tree(project) == before


def test_a_project_without_a_schema_of_its_own_has_nothing_to_bump(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A project that vendors builds from the schema inside acpgen's installation: the bump refuses
    to rewrite it (and never reaches npm)."""
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "myapp"\n', encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("npm_config_offline", "true")
    for args in (["--check"], ["--version", ROUND_TRIP]):
        code, out, err = _run(capsys, "schema", "bump", *args)
        assert (code, out) == (2, "")
        assert "builds from the schema shipped with acpgen, which a bump must not rewrite" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pyproject.toml"]


def test_text_pins_match_across_whitespace_and_keep_the_rest_of_the_file(tmp_path: Path) -> None:
    readme = (
        "The `@agentclientprotocol/sdk`\r\n2.3.0): one;\r\nthe `@agentclientprotocol/sdk` 2.4.0): two;\r\n"
        "the SDK @agentclientprotocol/sdk\r\n  v2.2.0. Not the SDK v2.1.0, nor @agentclientprotocol/sdk 2.0.0.\r\n"
    )
    pins = (
        'pins = [{file = "README.md", text = "`{package}` {version}):"},\n'
        '        {file = "README.md", text = "SDK {package} v{version}."}]'
    )
    project = _project(tmp_path, pins + "\n", readme)
    (project / "README.md").chmod(0o640)
    config = load_bump_config(project / "pyproject.toml")
    found = sightings(config, LOCK.package)
    assert [(s.where, s.version) for s in found] == [
        ("README.md:2", "2.3.0"),
        ("README.md:3", "2.4.0"),
        ("README.md:5", "2.2.0"),
    ]
    expected = readme
    for old in ("2.3.0", "2.4.0", "2.2.0"):
        expected = expected.replace(old, "10.0.0-rc.1")
    contents = moved(config, LOCK.package, "10.0.0-rc.1")
    assert contents == {"README.md": expected}
    assert (project / "README.md").read_bytes() == readme.encode("utf-8")  # said, not written
    rewrite_files(project, contents)
    assert (project / "README.md").read_bytes() == expected.encode("utf-8")
    assert stat.S_IMODE((project / "README.md").stat().st_mode) == 0o640
    assert moved(config, LOCK.package, "10.0.0-rc.1") == {}  # nothing left to move
    assert sorted(p.name for p in project.iterdir()) == ["README.md", "pyproject.toml", "schema"]


def _offline(monkeypatch: pytest.MonkeyPatch) -> None:
    for key, value in offline_env({}).items():
        monkeypatch.setenv(key, value)
    if not any(CACHE.glob("*")):
        pytest.fail(f"the npm cache of the tests is empty: {FILL}")


def test_a_version_the_curated_tables_do_not_fit_is_refused_and_nothing_changes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """2.2.0 lacks what the rule tables and the feature manifest of 2.4.0 name: the bump says so for
    every one of them, in the files the user edits, before it writes anything."""
    project = _project(tmp_path, 'pins = [{file = "README.md", text = "schema {version}"}]\n')
    before = _tree(project)
    monkeypatch.chdir(project)
    _offline(monkeypatch)
    code, out, err = _run(capsys, "schema", "bump", "--version", ROUND_TRIP)
    assert (code, out) == (2, ""), err
    for table, place in [
        ("capability-rules.json", "#/rules/"),
        ("capability-rules-v2.json", "#/rules/"),
        ("unstable-features.json", "#/features/session_status"),
    ]:
        assert f"(at {Path('schema') / table}{place}" in err, (table, err)
    assert "acpgen-bump-" not in err  # told about the schema folder, not the trial folder
    assert err.rstrip().endswith(
        f"the curated tables do not fit {LOCK.package}@{ROUND_TRIP}; nothing was changed (at schema). "
        "Update the tables named above for this version (docs/maintainers.md), then bump again."
    )
    assert _tree(project) == before


def test_a_bump_moves_the_pins_regenerates_runs_the_commands_and_prints_the_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A user's project (no `regenerate` setting: the bump runs `acpgen generate`), bumped to the
    locked version: the schema is fetched again (from the tests' npm cache), the stale pin moves, the
    bindings are generated, the commands run with the version filled in, the report is the only
    thing on standard output."""
    marker = "import sys, pathlib; pathlib.Path('ran.txt').write_text(sys.argv[1])"
    project = _project(
        tmp_path,
        'pins = [{file = "README.md", text = "schema {version}"}]\n'
        f'run = ["python3 -c \\"{marker}\\" {{package}}@{{version}}"]\n',
        "Built from schema 1.0.0.\n",
    )
    monkeypatch.chdir(project)
    _offline(monkeypatch)
    code, out, err = _run(capsys, "schema", "bump", "--version", LOCK.version)
    assert code == 0, err
    assert (project / "README.md").read_text(encoding="utf-8") == f"Built from schema {LOCK.version}.\n"
    assert (project / "ran.txt").read_text(encoding="utf-8") == f"{LOCK.package}@{LOCK.version}"
    assert (project / "out" / "acp_bindings" / "models.py").is_file()
    assert out.startswith(
        f"### ACP spec diff: `{LOCK.package}@{LOCK.version}` -> `{LOCK.package}@{LOCK.version} (schema)`"
    )
    assert "No API change." in out
    assert "acpgen: moved the version named in README.md" in err
    assert "running `acpgen --config pyproject.toml generate`" in err
    assert f"already at {LOCK.package} {LOCK.version}" in err and "->" not in err  # issue 45
    digests = {name: hashlib.sha256((project / "schema" / name).read_bytes()).hexdigest() for name, _ in LOCK.files}
    assert digests == dict(LOCK.files)
    assert _run(capsys, "schema", "bump", "--check")[0] == 0


def test_a_failing_command_says_what_is_done_and_what_to_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    project = _project(
        tmp_path,
        'pins = [{file = "README.md", text = "schema {version}"}]\nrun = ["python3 -c \\"raise SystemExit(3)\\""]\n',
    )
    (project / "pyproject.toml").write_text(
        (project / "pyproject.toml")
        .read_text(encoding="utf-8")
        .replace('output-dir = "out"\n', 'output-dir = "out"\nregenerate = "python3 -c pass"\n'),
        encoding="utf-8",
    )
    monkeypatch.chdir(project)
    _offline(monkeypatch)
    code, out, err = _run(capsys, "schema", "bump", "--version", LOCK.version)
    assert (code, out) == (2, "")
    assert (
        f"`python3 -c 'raise SystemExit(3)'` failed with exit code 3; the schema and the text pins are moved to "
        f"{LOCK.version} (at pyproject.toml#/tool/acpgen/bump/run/0). Fix what it printed, then run "
        f"`acpgen schema bump --version {LOCK.version}` again (it finishes what is left)."
    ) in err


def test_python_in_a_command_is_the_interpreter_running_acpgen(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 45: ``{python}`` runs a command with acpgen's own interpreter (its environment's
    pytest...), so that ``make bump`` needs no ``uv`` on PATH."""
    import sys

    marker = "import sys, pathlib; pathlib.Path('ran.txt').write_text(sys.executable)"
    project = _project(tmp_path, f'pins = []\nrun = ["{{python}} -c \\"{marker}\\""]\n')
    monkeypatch.chdir(project)
    path = tmp_path / "path"  # on PATH only npm and the node it runs on: no uv, no python
    path.mkdir()
    for program in ("npm", "node"):
        found = shutil.which(program)
        assert found, f"{program} is needed (README: Node/npm for make bump and the tests)"
        (path / program).symlink_to(found)
    monkeypatch.setenv("PATH", str(path))
    _offline(monkeypatch)
    code, _, err = _run(capsys, "schema", "bump", "--version", LOCK.version)
    assert code == 0, err
    assert (project / "ran.txt").read_text(encoding="utf-8") == sys.executable


def test_this_repositorys_bump_runs_nothing_but_python_and_npm() -> None:
    """``make bump`` needs make, npm and what the Makefile installs: no command of the bump names a
    program that only a user's PATH could hold (a bare ``uv`` failed where uv came from .tools/uv)."""
    import shlex

    config = load_bump_config(ROOT / "pyproject.toml")
    programs = {shlex.split(command)[0] for command in config.run}
    assert programs <= {"{python}", "npm"}, programs
