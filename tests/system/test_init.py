"""``acpgen init`` (issue 45, item 1), as a newcomer runs it: a project in a new folder whose own
tests pass (the agent in process, and the conformance kit on ``python -m NAME`` finding no finding
at all), whose vendored copy ``acpgen vendor --check`` accepts, whose wheel holds what the agent
imports and no kit; a folder that holds anything is refused with nothing changed.

The project's tests run with this environment's interpreter and ``src`` on the path (offline: the
project's dependencies, pydantic, pytest and jsonschema, are all here); ``uv run pytest`` in a
fresh project resolves them from the network (measured by hand: docs/init.md)."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

from acpgen.commands import main
from acpgen.errors import EXIT_BAD_INPUT, EXIT_OK
from acpgen.source.package_names import identifier_from
from tests.system.test_folder_safety import snapshot

pytestmark = pytest.mark.slow


def _init(cwd: Path, *args: str) -> int:
    with contextlib.chdir(cwd):
        return main(["init", *args])


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``acpgen init "My Agent" --client --ci`` in a folder of its own."""
    root = tmp_path_factory.mktemp("init")
    assert _init(root, "My Agent", "--client", "--ci") == EXIT_OK
    return root / "My Agent"


def test_the_project_has_what_the_issue_lists(project: Path) -> None:
    names = {p.relative_to(project).as_posix() for p in project.rglob("*") if "_acp" not in p.parts}
    assert {
        "pyproject.toml", "README.md", ".gitignore", ".github/workflows/ci.yml",
        "src/my_agent/__init__.py", "src/my_agent/__main__.py", "src/my_agent/agent.py", "src/my_agent/client.py",
        "tests/test_agent.py", "tests/test_conformance.py", "tests/test_client.py",
    } <= names  # fmt: skip
    assert (project / "src" / "my_agent" / "_acp" / "_vendor.json").is_file()
    config = tomllib.loads((project / "pyproject.toml").read_text(encoding="utf-8"))
    assert config["project"]["name"] == "my-agent"
    assert config["project"]["dependencies"] == ["pydantic>=2.12,!=2.13.0"]  # its only runtime dependency
    assert config["project"]["scripts"] == {"my-agent": "my_agent.__main__:main"}
    dev = " ".join(config["dependency-groups"]["dev"])
    assert all(tool in dev for tool in ("pytest", "mypy", "pyright", "jsonschema"))
    assert config["tool"]["hatch"]["build"]["targets"]["wheel"]["packages"] == ["src/my_agent"]


def test_the_projects_own_tests_pass_and_the_kit_finds_nothing(project: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "ACP_TRACE")}
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rA"],
        cwd=project,
        env=env | {"PYTHONPATH": str(project / "src")},
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-3000:]
    for test in ("test_the_agent_conforms", "test_the_client_conforms", "test_a_turn_greets_and_echoes"):
        assert "PASSED tests/" in done.stdout and test in done.stdout, done.stdout


def test_the_vendored_copy_passes_vendor_check_from_the_project(project: Path) -> None:
    with contextlib.chdir(project):
        assert main(["vendor", "--check", "--out", "src/my_agent/_acp"]) == EXIT_OK


def test_the_wheel_holds_the_agent_and_the_bindings_but_not_the_kit(project: Path, tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "hatchling", "build", "-t", "wheel", "-d", str(tmp_path)],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    (wheel,) = tmp_path.glob("*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert "my_agent/agent.py" in names and "my_agent/_acp/models.py" in names and "my_agent/_acp/remote.py" in names
    assert not [n for n in names if "conformance" in n or n.endswith("_schema.json")], names
    metadata = next(n for n in names if n.endswith("METADATA"))
    requires = [
        line for line in zipfile.ZipFile(wheel).read(metadata).decode().splitlines() if line.startswith("Requires-Dist")
    ]
    assert requires == ["Requires-Dist: pydantic!=2.13.0,>=2.12"], requires


def test_the_workflow_runs_the_tests_the_check_and_the_kit(project: Path) -> None:
    workflow = (project / ".github" / "workflows" / "ci.yml").read_text(encoding="utf-8")
    assert "run: uv run pytest" in workflow
    assert "acpgen vendor --check --out src/my_agent/_acp" in workflow
    assert "python -m my_agent._acp.conformance agent --report-json acp-report.json -- python -m my_agent" in workflow


def test_init_writes_the_same_project_for_the_same_command_in_a_new_or_an_empty_folder(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b" / "agent-x").mkdir(parents=True)  # an empty folder is used
    for folder in ("a", "b"):
        assert _init(tmp_path / folder, "agent-x", "--package", "demo") == EXIT_OK
    assert snapshot(tmp_path / "a") == snapshot(tmp_path / "b")  # and no staging folder is left beside it
    assert [p.name for p in (tmp_path / "b").iterdir()] == ["agent-x"]
    assert (tmp_path / "b" / "agent-x" / "src" / "demo" / "agent.py").is_file()
    assert not (tmp_path / "a" / "agent-x" / "src" / "demo" / "client.py").exists()  # no --client


@pytest.mark.parametrize(
    ("folder", "name"),
    [("My Agent-2", "my_agent_2"), ("2fast", "_2fast"), ("class", "class_"), ("Čapek", "capek"), ("---", "agent")],
)
def test_the_package_name_is_the_folders_made_an_identifier(folder: str, name: str) -> None:
    assert identifier_from(folder) == name


def test_an_occupied_folder_is_refused_and_left_as_it_was(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "notes.txt").write_text("keep\n", encoding="utf-8")
    (tmp_path / "file").write_text("a file\n", encoding="utf-8")
    before = snapshot(tmp_path)
    assert _init(tmp_path, "mine") == EXIT_BAD_INPUT
    assert "is not empty (it holds notes.txt)" in capsys.readouterr().err
    assert _init(tmp_path, "file") == EXIT_BAD_INPUT
    assert "is not a folder" in capsys.readouterr().err
    assert snapshot(tmp_path) == before  # nothing written, no staging left


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["x", "--package", "import"], "'import' is a Python keyword"),
        (["x", "--package", "my.agent"], "a project's package is one name"),
    ],
)
def test_a_bad_package_name_is_refused(
    args: list[str], says: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _init(tmp_path, *args) == EXIT_BAD_INPUT
    assert says in capsys.readouterr().err
    assert not any(tmp_path.iterdir())


def test_the_project_passes_its_own_mypy_strict(project: Path, tmp_path: Path) -> None:
    """``uv run mypy`` as the workflow runs it: the agent, the client and the tests, strict, against
    the vendored bindings' types (whose optional extras need not be installed)."""
    env = {k: v for k, v in os.environ.items() if k != "VIRTUAL_ENV"} | {"MYPYPATH": str(project / "src")}
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--cache-dir", str(tmp_path / "cache")],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
