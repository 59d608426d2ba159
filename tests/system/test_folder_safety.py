"""A command replaces only a folder acpgen wrote (issue 30, item 3): ``acpgen vendor`` and
``acpgen generate`` write over a folder only when it is missing, empty or holds nothing but
acpgen's files; anything else is exit 2 naming the folder and what it would lose, with nothing
changed on disk, and ``--force`` for the rare case (never over a repository, a project, the home
folder or the folder the command runs in). Real folders, the commands run in process."""

from __future__ import annotations

import compileall
import json
import os
import shutil
from contextlib import chdir
from pathlib import Path

import pytest

from acpgen.commands import main
from acpgen.errors import EXIT_BAD_INPUT, EXIT_OK
from acpgen.output import ownership
from acpgen.output.ownership import HEADER

pytestmark = pytest.mark.slow

Tree = dict[str, bytes | str]


def snapshot(root: Path) -> Tree:
    """Every entry under ``root``: a file's bytes, ``"dir"`` or ``"link -> target"``."""
    found: Tree = {}
    for folder, folders, files in os.walk(root):
        for name in [*folders, *files]:
            path = Path(folder, name)
            rel = path.relative_to(root).as_posix()
            if path.is_symlink():
                found[rel] = f"link -> {os.readlink(path)}"
            elif path.is_dir():
                found[rel] = "dir"
            else:
                found[rel] = path.read_bytes()
    return found


def vendor(cwd: Path, package: str, out: str, *extra: str) -> int:
    with chdir(cwd):
        return main(["vendor", "--package", package, "--out", out, *extra])


def refused(capsys: pytest.CaptureFixture[str]) -> str:
    """The one error message of a refused command, with its lines joined."""
    err = capsys.readouterr().err
    assert "Traceback" not in err and err.count("acpgen: error: ") == 1, err
    return " ".join(err[err.index("acpgen: error: ") :].split())


@pytest.fixture(scope="module")
def copy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy vendored as ``myapp._acp`` by this acpgen (tests copy it into their project)."""
    root = tmp_path_factory.mktemp("vendored")
    assert vendor(root, "myapp._acp", "src/myapp/_acp") == EXIT_OK
    return root / "src" / "myapp" / "_acp"


@pytest.fixture
def project(tmp_path: Path, copy: Path) -> Path:
    """A user's project: its own package ``myapp`` (with a module) and the copy inside it."""
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "myapp"\n', encoding="utf-8")
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "HEAD").write_text("ref: refs/heads/main\n", encoding="utf-8")
    shutil.copytree(copy, tmp_path / "src" / "myapp" / "_acp")
    (tmp_path / "src" / "myapp" / "__init__.py").write_text("", encoding="utf-8")
    (tmp_path / "src" / "myapp" / "app.py").write_text("print('my app')\n", encoding="utf-8")
    return tmp_path


# --- what the user saw ------------------------------------------------------------------------


def test_vendoring_over_the_users_package_is_refused_and_names_its_files(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = snapshot(project)
    assert vendor(project, "myapp", "src/myapp") == EXIT_BAD_INPUT
    said = refused(capsys)
    assert snapshot(project) == before, "a refused vendor changed the project"
    assert str(project / "src" / "myapp") in said
    assert "__init__.py" in said and "app.py" in said and "--force" in said
    assert "_acp/models.py" not in said, "acpgen's own files are not the user's"


def test_vendoring_into_the_project_folder_is_refused_even_with_force(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "myapp"
    root.mkdir()
    (root / "pyproject.toml").write_text('[project]\nname = "myapp"\n', encoding="utf-8")
    (root / ".git").mkdir()
    (root / ".git" / "config").write_text("[core]\n", encoding="utf-8")
    before = snapshot(tmp_path)
    assert vendor(root, "myapp", ".") == EXIT_BAD_INPUT
    said = refused(capsys)
    assert f"{root} holds 2 files acpgen did not write" in said, said
    assert ".git/ (1 file)" in said and "pyproject.toml" in said
    assert "--force does not replace" in said and "the folder you are in" in said, said
    assert vendor(root, "myapp", ".", "--force") == EXIT_BAD_INPUT
    assert " ".join(capsys.readouterr().err.split()) == said
    assert snapshot(tmp_path) == before


def test_a_module_beside_the_copy_is_left_alone(project: Path) -> None:
    before = snapshot(project)
    assert vendor(project, "myapp._acp", "src/myapp/_acp", "--unstable") == EXIT_OK
    after = snapshot(project)
    outside = {rel: data for rel, data in before.items() if not rel.startswith("src/myapp/_acp")}
    assert {rel: after[rel] for rel in outside} == outside
    manifest = json.loads((project / "src" / "myapp" / "_acp" / "_vendor.json").read_text(encoding="utf-8"))
    assert manifest["build"] == "unstable"


# --- the copy acpgen wrote ----------------------------------------------------------------------


def test_the_manifest_lists_every_file_of_the_copy(copy: Path) -> None:
    manifest = json.loads((copy / "_vendor.json").read_text(encoding="utf-8"))
    on_disk = sorted(p.relative_to(copy).as_posix() for p in copy.rglob("*") if p.is_file())
    assert manifest["files"] == on_disk


def test_an_untouched_copy_with_bytecode_is_replaced(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = project / "src" / "myapp" / "_acp"
    assert compileall.compile_dir(target, quiet=1, optimize=[0, 1])
    assert any(target.glob("__pycache__/*.opt-1.pyc"))
    assert vendor(project, "myapp._acp", "src/myapp/_acp") == EXIT_OK
    assert "acpgen: src/myapp/_acp is up to date (myapp._acp, stable build)" in capsys.readouterr().err
    assert any(target.glob("__pycache__/*.opt-1.pyc")), "an unchanged copy is not written again"
    assert vendor(project, "myapp._acp", "src/myapp/_acp", "--unstable") == EXIT_OK
    assert "acpgen: wrote myapp._acp (unstable build) to src/myapp/_acp" in capsys.readouterr().err
    assert not (target / "__pycache__").exists()


def test_an_added_user_file_is_named_and_force_replaces_it(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = project / "src" / "myapp" / "_acp"
    (target / "my_helpers.py").write_text("HELP = 1\n", encoding="utf-8")
    compileall.compile_dir(target, quiet=1)
    before = snapshot(project)
    assert vendor(project, "myapp._acp", "src/myapp/_acp", "--unstable") == EXIT_BAD_INPUT
    said = refused(capsys)
    assert snapshot(project) == before
    assert f"{target} holds 2 files acpgen did not write" in said, said
    assert "my_helpers.py" in said and "__pycache__/my_helpers." in said and "models.py" not in said
    assert vendor(project, "myapp._acp", "src/myapp/_acp", "--unstable", "--force") == EXIT_OK
    err = capsys.readouterr().err
    warned, wrote = err.index("--force: replacing"), err.index("acpgen: wrote")
    assert warned < wrote and "my_helpers.py" in err[warned:wrote], err
    assert not (target / "my_helpers.py").exists() and (target / "models.py").is_file()


def test_a_copy_from_before_the_file_list_is_recognised_by_its_headers(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An older acpgen's copy: ``_vendor.json`` without ``files``; its modules carry the header."""
    target = project / "src" / "myapp" / "_acp"
    manifest = json.loads((target / "_vendor.json").read_text(encoding="utf-8"))
    del manifest["files"]
    (target / "_vendor.json").write_text(json.dumps(manifest), encoding="utf-8")
    (target / "old_module.py").write_text(HEADER.decode() + "0.0.1 from somewhere\nOLD = 1\n", encoding="utf-8")
    (target / "notes.txt").write_text("mine\n", encoding="utf-8")
    before = snapshot(project)
    assert vendor(project, "myapp._acp", "src/myapp/_acp") == EXIT_BAD_INPUT
    said = refused(capsys)
    assert snapshot(project) == before
    assert f"{target} holds 1 file acpgen did not write" in said and "notes.txt" in said, said
    (target / "notes.txt").unlink()
    assert vendor(project, "myapp._acp", "src/myapp/_acp", "--unstable") == EXIT_OK
    assert not (target / "old_module.py").exists()


def test_many_user_files_are_counted(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = project / "src" / "myapp" / "_acp"
    for n in range(25):
        (target / f"mine_{n:02}.py").write_text("", encoding="utf-8")
    assert vendor(project, "myapp._acp", "src/myapp/_acp") == EXIT_BAD_INPUT
    said = refused(capsys)
    assert "holds 25 files acpgen did not write" in said and "mine_09.py and 15 more" in said, said
    assert "mine_10.py" not in said


# --- other folders ----------------------------------------------------------------------------


def test_a_missing_or_empty_folder_is_written(tmp_path: Path) -> None:
    assert vendor(tmp_path, "a._acp", "missing/a/_acp") == EXIT_OK
    (tmp_path / "b" / "_acp").mkdir(parents=True)
    assert vendor(tmp_path, "b._acp", "b/_acp") == EXIT_OK
    assert (tmp_path / "missing" / "a" / "_acp" / "models.py").is_file()
    assert (tmp_path / "b" / "_acp" / "models.py").is_file()


def test_a_file_in_place_of_the_folder_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "_acp").write_text("not a folder\n", encoding="utf-8")
    before = snapshot(tmp_path)
    assert vendor(tmp_path, "a._acp", "a/_acp") == EXIT_BAD_INPUT
    said = refused(capsys)
    assert f"{tmp_path / 'a' / '_acp'} is a file, not a folder acpgen wrote" in said and "--force" in said, said
    assert snapshot(tmp_path) == before


def test_a_symlink_is_followed_to_the_folder_it_names(
    project: Path, tmp_path_factory: pytest.TempPathFactory, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--out`` names the folder the link points to: acpgen's copy there is replaced (the link
    stays), a user's folder there is refused under its real name."""
    shared = tmp_path_factory.mktemp("shared")
    shutil.move(project / "src" / "myapp" / "_acp", shared / "_acp")
    (project / "src" / "myapp" / "_acp").symlink_to(shared / "_acp")
    assert vendor(project, "myapp._acp", "src/myapp/_acp", "--unstable") == EXIT_OK
    assert (project / "src" / "myapp" / "_acp").is_symlink()
    assert json.loads((shared / "_acp" / "_vendor.json").read_text(encoding="utf-8"))["build"] == "unstable"
    (shared / "_acp" / "mine.py").write_text("", encoding="utf-8")
    before = snapshot(shared)
    assert vendor(project, "myapp._acp", "src/myapp/_acp") == EXIT_BAD_INPUT
    said = refused(capsys)
    assert f"{shared / '_acp'} holds 1 file acpgen did not write" in said and "mine.py" in said, said
    assert snapshot(shared) == before


def test_force_never_replaces_the_home_folder_or_a_folder_holding_a_repository(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    home = tmp_path / "home"
    repo = home / "code" / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / ".git" / "HEAD").write_text("ref: refs/heads/main\n", encoding="utf-8")
    (home / ".bashrc").write_text("\n", encoding="utf-8")
    monkeypatch.setenv("HOME", str(home))
    before = snapshot(tmp_path)
    assert vendor(repo, "home", str(home), "--force") == EXIT_BAD_INPUT
    said = refused(capsys)
    assert f"{home} holds" in said and "--force does not replace" in said and "your home folder" in said, said
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    assert vendor(elsewhere, "code", str(home / "code"), "--force") == EXIT_BAD_INPUT  # a parent of the repository
    said = refused(capsys)
    assert "--force does not replace" in said and "version control (repo/.git)" in said, said
    assert snapshot(tmp_path) == {**before, "elsewhere": "dir"}


# --- acpgen generate --out ----------------------------------------------------------------------


@pytest.mark.parametrize("out", ["out", None], ids=["--out", "output-dir"])
def test_generate_refuses_a_users_package_and_force_replaces_it(
    out: str | None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``generate --out DIR`` and the default output folder (``generated``): ``DIR/acp_bindings``."""
    where = ["--out", out] if out else []
    package = Path(out or "generated", "acp_bindings")
    (tmp_path / package).mkdir(parents=True)
    (tmp_path / package / "__init__.py").write_text("MINE = 1\n", encoding="utf-8")
    before = snapshot(tmp_path)
    with chdir(tmp_path):
        assert main(["generate", *where]) == EXIT_BAD_INPUT
        said = refused(capsys)
        assert snapshot(tmp_path) == before
        assert f"{package} holds 1 file acpgen did not write" in said, said
        assert "__init__.py" in said and "--force" in said
        if out is None:
            return  # the rest is the same step
        assert main(["generate", *where, "--force"]) == EXIT_OK
        assert f"--force: replacing {package}, deleting 1 file" in capsys.readouterr().err
        (package / "__pycache__").mkdir()
        (package / "__pycache__" / "models.cpython-311.pyc").write_bytes(b"\0")
        (package / "models.py").write_text("# edited by hand\n", encoding="utf-8")
        assert main(["generate", *where]) == EXIT_BAD_INPUT, "a hand-edited module without its header"
        said = refused(capsys)
        assert "models.py" in said and "__pycache__" not in said, said


def test_every_generated_file_is_recognisable_as_acpgens(copy: Path) -> None:
    """What lets acpgen recognise its output without a file list (``generate``'s, and a copy from
    before the list): every file carries the header but ``py.typed`` (empty) and the manifest."""
    for path in sorted(copy.rglob("*")):
        if path.is_file() and path.name not in ("py.typed", "_vendor.json"):
            assert path.read_bytes().startswith(HEADER), path.name
    assert (copy / "py.typed").read_bytes() == b""


# --- the survey itself --------------------------------------------------------------------------


def test_the_survey_names_links_empty_folders_and_a_foreign_record(tmp_path: Path) -> None:
    folder = tmp_path / "_acp"
    (folder / "empty").mkdir(parents=True)
    (folder / "models.py").write_bytes(HEADER + b"0 from x\n")
    (folder / "link.py").symlink_to(folder / "models.py")
    (folder / "_vendor.json").write_text("{}\n", encoding="utf-8")  # not a record acpgen wrote
    (folder / "py.typed").write_bytes(b"")
    found = ownership.foreign(folder, ownership.Claim({"py.typed": b""}, record="_vendor.json"))
    assert found is not None
    assert found.entries == ("_vendor.json", "empty/ (0 files)", "link.py") and found.files == 2
    assert ownership.foreign(tmp_path / "missing", ownership.Claim({})) is None
    (folder / "_vendor.json").write_text('{"acpgen": "0.1.0"}\n', encoding="utf-8")
    (folder / "link.py").unlink()
    (folder / "empty").rmdir()
    assert ownership.foreign(folder, ownership.Claim({"py.typed": b""}, record="_vendor.json")) is None


def test_the_survey_of_a_huge_folder_stops_counting(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ownership, "SURVEYED", 30)
    for n in range(40):
        (tmp_path / f"f{n:02}").write_text("", encoding="utf-8")
    found = ownership.foreign(tmp_path, ownership.Claim({}))
    assert found is not None and not found.complete
    problem = ownership.refusal(found)
    assert "holds more than 30 files acpgen did not write" in problem.what and "f09 and 21 more" in problem.what
    for n in range(40):
        (tmp_path / f"f{n:02}").write_bytes(HEADER)
    found = ownership.foreign(tmp_path, ownership.Claim({}))
    assert found is not None, "what the survey did not look at is not known to be acpgen's"
    assert found.entries == ("what lies past the first 30 entries",)


def test_generate_replaces_a_linked_package_folder_only_with_force(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A package folder that is a symbolic link is refused; ``--force`` replaces the link, never
    what it points to."""
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "keep.py").write_text("KEEP = 1\n", encoding="utf-8")
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "acp_bindings").symlink_to(mine)
    with chdir(tmp_path):
        assert main(["generate", "--out", "out"]) == EXIT_BAD_INPUT
        said = refused(capsys)
        assert "out/acp_bindings is a symbolic link, not a folder acpgen wrote" in said, said
        assert (tmp_path / "out" / "acp_bindings").is_symlink()
        assert main(["generate", "--out", "out", "--force"]) == EXIT_OK
    assert "--force: replacing the symbolic link out/acp_bindings with a folder" in capsys.readouterr().err
    assert not (tmp_path / "out" / "acp_bindings").is_symlink()
    assert (tmp_path / "out" / "acp_bindings" / "models.py").is_file()
    assert snapshot(mine) == {"keep.py": b"KEEP = 1\n"}


# --- issue 45: what --check suggests works as printed; an edit that is replaced is named ---------


def _suggested(err: str) -> list[str]:
    """The command ``vendor --check`` tells the user to run, as words (it is printed between backticks)."""
    import shlex

    start = err.index("run `") + len("run `")
    return shlex.split(err[start : err.index("`", start)])


def test_the_command_check_suggests_runs_as_printed_even_over_a_file_acpgen_did_not_write(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = project / "src" / "myapp" / "_acp"
    (target / "notes.txt").write_text("mine\n", encoding="utf-8")
    with chdir(project):
        assert main(["vendor", "--check", "--out", "src/myapp/_acp"]) == 1
    err = capsys.readouterr().err
    words = _suggested(err)
    assert words[:2] == ["acpgen", "vendor"] and "--force" in words, err
    assert "notes.txt" in err  # what --force would delete is named before it is suggested
    with chdir(project):
        assert main(words[1:]) == EXIT_OK
    capsys.readouterr()
    with chdir(project):
        assert main(["vendor", "--check", "--out", "src/myapp/_acp"]) == EXIT_OK


def test_the_command_check_suggests_for_an_edited_copy_needs_no_force_and_runs(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = project / "src" / "myapp" / "_acp"
    (target / "errors.py").write_text("# edited\n", encoding="utf-8")
    with chdir(project):
        assert main(["vendor", "--check", "--out", "src/myapp/_acp"]) == 1
    err = capsys.readouterr().err
    words = _suggested(err)
    assert "--force" not in words and "edited since acpgen wrote it: errors.py" in err, err
    with chdir(project):
        assert main(words[1:]) == EXIT_OK
    assert "replaced 1 file edited since acpgen wrote it: errors.py" in capsys.readouterr().err


def test_vendor_names_every_edited_file_it_replaces_and_nothing_else(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = project / "src" / "myapp" / "_acp"
    for name in ("models.py", "_runtime/wire/codec.py"):
        (target / name).write_text((target / name).read_text(encoding="utf-8") + "# mine\n", encoding="utf-8")
    assert vendor(project, "myapp._acp", "src/myapp/_acp") == EXIT_OK
    err = capsys.readouterr().err
    assert "replaced 2 files edited since acpgen wrote them: _runtime/wire/codec.py, models.py" in err, err
    assert "# mine" not in (target / "models.py").read_text(encoding="utf-8")
    assert vendor(project, "myapp._acp", "src/myapp/_acp", "--unstable") == EXIT_OK  # a new build: no edit
    assert "edited" not in capsys.readouterr().err
