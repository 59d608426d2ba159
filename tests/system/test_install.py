"""acpgen works wherever it is installed (issue 23, item 1): built as a wheel and installed into a
fresh environment, or installed editable from this checkout, and run from a folder that has
nothing to do with the repository, each command does what it does in the checkout.

The wheel is built, and both environments are made, once per session, offline: the locked
dependencies come from uv's cache (``make install`` put them there, with the build backend, the
``build`` dependency group), the wheel is built with this environment's hatchling (no build
isolation, so nothing is resolved), and acpgen itself is installed without its dependencies.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from contextlib import redirect_stdout
from dataclasses import dataclass
from importlib.metadata import version
from io import StringIO
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
LIMIT = 300
"""Seconds: only stops a hang."""
REGENERATE_LINE = re.compile(r"^# Do not edit: regenerate with `[^`]*`\.$", re.MULTILINE)


def _uv() -> str:
    found = os.environ.get("UV") or shutil.which("uv")
    if found is None:
        pytest.fail("uv is needed to build and install acpgen (`make install` installs it)")
    return found


def _clean_env() -> dict[str, str]:
    """This environment without what points at the checkout's virtual environment."""
    dropped = {"VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME", "UV_PROJECT_ENVIRONMENT", "ACP_TRACE"}
    return {k: v for k, v in os.environ.items() if k not in dropped}


def _run(argv: list[str], cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        argv, cwd=cwd, env=env or _clean_env(), capture_output=True, text=True, timeout=LIMIT, check=False
    )


def _must(argv: list[str], cwd: Path, env: dict[str, str] | None = None) -> None:
    done = _run(argv, cwd, env)
    assert done.returncode == 0, f"{' '.join(argv)}\n{done.stdout}\n{done.stderr}"


@dataclass(frozen=True)
class Installed:
    """An acpgen installed into a fresh environment, and an unrelated folder to run it in."""

    kind: str
    bin: Path
    home: Path

    def run(self, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
        return _run([str(self.bin / "acpgen"), *args], cwd or self.home)


def _fresh_environment(where: Path, *groups: str) -> Path:
    """A virtual environment holding the locked dependencies of acpgen (not acpgen itself)."""
    env = _clean_env() | {"UV_PROJECT_ENVIRONMENT": str(where)}
    extra = [w for group in groups for w in ("--group", group)]
    command = [_uv(), "sync", "--frozen", "--offline", "--no-dev", *extra, "--no-install-project", "--quiet"]
    _must([*command, "--project", str(ROOT), "--python", sys.executable], ROOT, env)
    return where / "bin"


@pytest.fixture(scope="session")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    build = [_uv(), "build", "--wheel", "--offline", "--no-build-isolation", "--quiet"]
    _must([*build, "--python", sys.executable, "--out-dir", str(out), str(ROOT)], ROOT)
    (found,) = out.glob("acpgen-*.whl")
    return found


@pytest.fixture(scope="session", params=["wheel", "editable"])
def installed(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Installed]:
    kind = request.param
    root = tmp_path_factory.mktemp(f"{kind}-install")
    install = [_uv(), "pip", "install", "--offline", "--no-deps", "--quiet"]
    if kind == "wheel":
        bin_dir = _fresh_environment(root / "venv")
        target: list[str] = [str(request.getfixturevalue("wheel"))]
    else:  # the build backend runs in the new environment itself
        bin_dir = _fresh_environment(root / "venv", "build")
        target = ["--no-build-isolation", "-e", str(ROOT)]
    _must([*install, "--python", str(bin_dir / "python"), *target], root)
    home = root / "somewhere" / "else"
    home.mkdir(parents=True)
    yield Installed(kind, bin_dir, home)


def _in_checkout(*args: str) -> str:
    """What ``acpgen ARGS`` prints in this checkout (run in process)."""
    from acpgen.commands import main

    buffer = StringIO()
    with redirect_stdout(buffer):
        assert main(["--config", str(ROOT / "pyproject.toml"), *args]) == 0
    return buffer.getvalue()


def _tree(root: Path) -> dict[str, str]:
    return {
        p.relative_to(root).as_posix(): p.read_text(encoding="utf-8")
        for p in sorted(root.rglob("*"))
        if p.is_file() and "__pycache__" not in p.parts
    }


def test_version(installed: Installed) -> None:
    done = installed.run("--version")
    assert (done.returncode, done.stdout) == (0, f"acpgen {version('acpgen')}\n"), done.stderr


def test_generate_writes_what_the_checkout_generates(installed: Installed) -> None:
    done = installed.run("generate", "--out", "out")
    expected = _tree(ROOT / "generated" / "acp_bindings")
    assert done.returncode == 0, done.stderr
    said = f"acpgen: wrote {len(expected)} files under out ({len(expected)} changed, added or removed)\n"
    assert done.stderr.endswith(said), done.stderr
    written = _tree(installed.home / "out" / "acp_bindings")
    assert written.keys() == expected.keys()
    for name, text in written.items():
        assert "# Do not edit: regenerate with `acpgen generate`." in text or not name.endswith(".py"), name
        assert REGENERATE_LINE.sub("", text) == REGENERATE_LINE.sub("", expected[name]), name
    again = installed.run("generate", "--out", "out")
    assert again.returncode == 0 and "is up to date" in again.stderr, again.stderr


def test_vendor_then_check(installed: Installed) -> None:
    """(``vendor --check`` by other spellings, from elsewhere and after a move, and of an edited
    copy: ``tests/system/test_vendor.py``, in process.)"""
    project = installed.home / "project"
    (project / "src" / "myapp").mkdir(parents=True)
    done = installed.run("vendor", "--package", "myapp._acp", "--out", "src/myapp/_acp", cwd=project)
    assert done.returncode == 0, done.stderr
    assert done.stderr == "acpgen: wrote myapp._acp (stable build) to src/myapp/_acp\n"
    copy = project / "src" / "myapp" / "_acp"
    assert "# Do not edit: regenerate with `acpgen vendor --package myapp._acp --out <this folder>`." in (
        copy / "models.py"
    ).read_text(encoding="utf-8")
    checked = installed.run("vendor", "--check", "--out", str(copy))  # from an unrelated folder
    assert (checked.returncode, checked.stderr) == (0, f"acpgen: the copy in {copy} is up to date\n")


def test_features_lists_what_the_checkout_lists(installed: Installed) -> None:
    done = installed.run("features", "--format", "json")
    assert done.returncode == 0, done.stderr
    listed = json.loads(done.stdout)
    assert listed["manifest"].endswith("unstable-features.json")
    assert listed["features"] == json.loads(_in_checkout("features", "--format", "json"))["features"]


def test_diff_of_two_schema_folders(installed: Installed) -> None:
    sides = installed.home / "diff"
    for name in ("v1", "v2", "schema.lock.json"):
        source = ROOT / "schema" / name
        (shutil.copytree if source.is_dir() else shutil.copy)(source, sides / "schema" / name)
    done = installed.run("diff", "schema/v1", "schema/v2", "--format", "markdown", cwd=sides)
    assert done.returncode == 0, done.stderr
    golden = ROOT / "tests" / "golden" / "migration-v1-v2" / "report.md"
    assert done.stdout == golden.read_text(encoding="utf-8"), (
        f"the installed acpgen's v1 -> v2 report differs from {golden.relative_to(ROOT)} (after a schema bump: "
        "`make bump VERSION=...` refreshes it, or "
        "`uv run --frozen pytest tests/generated/test_protocol_v2.py --update-goldens`)"
    )
    missing = installed.run("diff", "schema/v0", "schema/v2", cwd=sides)
    assert missing.returncode == 2 and "schema/v0 does not exist" in missing.stderr
    assert "Traceback" not in missing.stderr


def _check_the_tools(acpgen: list[str], agent_python: str, cwd: Path, env: dict[str, str], tmp_path: Path) -> None:
    """``acpgen conformance`` judges the echo agent, ``acpgen trace show`` shows a trace and ``acpgen relay``
    answers ``--help``, each run as ``ACPGEN... ARGS`` from ``cwd``, rendering into ``env``'s ACPGEN_CACHE_DIR."""
    agent = [agent_python, str(ROOT / "examples" / "echo_agent.py")]
    report = tmp_path / "report.json"
    judge = [*acpgen, "conformance", "agent", "-k", "initialize", "--report-json", str(report), "--", *agent]
    done = _run(judge, cwd, env)
    assert done.returncode == 1 and "VERDICT: NOT CONFORMANT" in done.stdout, done.stdout + done.stderr  # -k
    found = json.loads(report.read_text(encoding="utf-8"))
    assert {r["id"]: r["status"] for r in found["requirements"]}["ACP-AGENT-INIT-001"] == "PASS"
    cache = Path(env["ACPGEN_CACHE_DIR"])
    assert [p.name for p in (cache / "tools").iterdir() if p.is_dir()], "nothing rendered into the cache"
    trace = tmp_path / "trace.jsonl"
    trace.write_text(
        json.dumps({"direction": "out", "message": {"jsonrpc": "2.0", "id": 1, "method": "initialize",
                                                    "params": {"protocolVersion": 1}}}) + "\n",
        encoding="utf-8",
    )  # fmt: skip
    shown = _run([*acpgen, "trace", "show", str(trace)], cwd, env)
    assert shown.returncode == 0 and "protocol 1" in shown.stdout, shown.stdout + shown.stderr  # read from initialize
    helped = _run([*acpgen, "relay", "--help"], cwd, env)
    assert helped.returncode == 0 and "--resume" in helped.stdout, helped.stderr


def test_the_tools_run_from_the_installed_acpgen(installed: Installed, tmp_path: Path) -> None:
    """Issue 44: ``acpgen conformance``, ``acpgen trace`` and ``acpgen relay`` run from an installed acpgen,
    from an unrelated folder, rendering the package they run from into the cache acpgen is told of."""
    env = _clean_env() | {"ACPGEN_CACHE_DIR": str(installed.home / "cache")}
    _check_the_tools([str(installed.bin / "acpgen")], str(installed.bin / "python"), installed.home, env, tmp_path)


@pytest.fixture(scope="session")
def wheelhouse() -> Path:
    """The wheels of acpgen's locked dependencies (``make test-wheelhouse``): missing or stale, the test fails."""
    from tests.support import wheelhouse

    problem = wheelhouse.stale()
    if problem is not None:
        pytest.fail(f"{problem}: {wheelhouse.FILL}")
    return wheelhouse.WHEELHOUSE


@pytest.fixture(scope="session")
def tools_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """acpgen's cache for the uvx runs: the second reuses the tools package the first rendered, as a user's would."""
    return tmp_path_factory.mktemp("acpgen-cache")


@pytest.mark.parametrize("source", ["wheel", "clone"])
def test_uvx_runs_the_tools_where_acpgen_is_not_installed(
    source: str, wheelhouse: Path, tools_cache: Path, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    """docs/vendoring.md: ``uvx --from ./acpgen acpgen conformance ...`` (a clone's folder or a wheel file) runs the
    tools where acpgen is not installed: offline, from the wheelhouse alone, with uv's tool folder and cache new and
    empty, from an unrelated folder; the agent runs on the user's own Python."""
    origin = request.getfixturevalue("wheel") if source == "wheel" else ROOT
    home = tmp_path / "somewhere" / "else"
    home.mkdir(parents=True)
    env = _clean_env() | {
        "UV_TOOL_DIR": str(tmp_path / "uv-tools"),
        "UV_CACHE_DIR": str(tmp_path / "uv-cache"),
        "ACPGEN_CACHE_DIR": str(tools_cache),
    }
    offline = ["--offline", "--no-index", "--find-links", str(wheelhouse), "--no-config", "--python", sys.executable]
    uvx = [_uv(), "tool", "run", *offline, "--from", str(origin), "acpgen"]
    done = _run([*uvx, "--version"], home, env)
    assert (done.returncode, done.stdout) == (0, f"acpgen {version('acpgen')}\n"), done.stderr
    assert "Installed" in done.stderr, f"uv installed nothing, so it ran an acpgen it had: {done.stderr}"
    _check_the_tools(uvx, sys.executable, home, env, tmp_path)
