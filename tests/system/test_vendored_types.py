"""A vendored copy is type-clean where a user stands (issue 44, item 1): in an environment holding
only pydantic (each release tests/floor locks: the stated floor and the first good release of each
later minor) and the checkers, with none of the optional packages (uvloop, the remote extra,
uvicorn), ``acpgen vendor``'s default output passes mypy and pyright, with their default settings
and strict.

Strict runs on each release; the default settings run on the floor only. Strict's checks include the
default's (mypy's ``--strict`` only turns more checks on; pyright's strict mode sets every rule at
least as high as its standard mode), so a strict pass implies a default one, and the default run is
kept as a control that the checkers read the project as a user's default configuration would. Three
more default runs would add about 100 s of a worker's time to the suite and prove nothing more.

The environments are built here (``floor_envs.checkers_environment``: offline, from the locks'
pinned wheels), never the development environment, where every optional package is installed and
an import of a missing one cannot be seen. mypy is the ``checkers`` group's of ``uv.lock``, pyright
the one pinned in tests/interop/package.json (``make interop-deps``).
"""

from __future__ import annotations

import ast
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from acpgen.render.runtime_files import RUNTIME as RUNTIME_FILES
from tests.support.floor_envs import checkers_environment, clean_env, installed, locks, pydantic_closure, vendored

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
PYRIGHT = ROOT / "tests" / "interop" / "node_modules" / ".bin" / "pyright"
PACKAGE = "myapp._acp"
LIMIT = 300
"""Seconds: only stops a hang."""
OPTIONAL = {"uvloop", "httpx", "h2", "httpcore", "websockets", "uvicorn", "anyio", "sniffio", "opentelemetry-api"}
"""What a user who vendors may lack: the program runs without them (and names them when asked for)."""

RUNTIME = Path(str(RUNTIME_FILES))
_MYPY_SUMMARY = re.compile(
    r"^(Success: no issues found in \d+ source files|Found \d+ errors? in \d+ files? \(checked \d+ source files\))$",
    re.MULTILINE,
)
_MYPY_ERROR = re.compile(r"^(?P<path>[^:\n]+):\d+(?::\d+)?: error: ", re.MULTILINE)


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A user's project (``src/myapp``) with the default vendored copy as ``myapp._acp``."""
    return vendored(tmp_path_factory.mktemp("typed")).parent


def _modes() -> list[object]:
    """(lock, strict) of each run: strict on every lock, the default settings on the floor."""
    runs = [(lock, True) for lock in locks()] + [(locks()[0], False)]
    return [pytest.param(lock, strict, id=f"{lock.stem}-{'strict' if strict else 'default'}") for lock, strict in runs]


@pytest.fixture(scope="module")
def python(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The Python of an environment with one supported pydantic, mypy and nothing else."""
    lock: Path = request.param
    interpreter = checkers_environment(lock, tmp_path_factory.mktemp("env") / lock.stem)
    there = {name for name in installed(interpreter)}
    assert not there & OPTIONAL, f"not a pydantic-only environment: {sorted(there & OPTIONAL)}"
    assert pydantic_closure() <= there and "mypy" in there, sorted(there)
    return interpreter


@pytest.mark.parametrize(("python", "strict"), _modes(), indirect=["python"])
def test_mypy_passes_with_pydantic_alone(project: Path, python: Path, strict: bool, tmp_path: Path) -> None:
    argv = [str(python), "-m", "mypy", "--cache-dir", str(tmp_path / "cache"), *(["--strict"] if strict else [])]
    done = subprocess.run(
        [*argv, "-p", PACKAGE],
        cwd=project / "src",
        env=clean_env(),
        capture_output=True,
        text=True,
        timeout=LIMIT,
        check=False,
    )
    report = done.stdout + done.stderr
    assert _MYPY_SUMMARY.search(report), report  # mypy ran over the package
    errors = [m.group(0) for m in _MYPY_ERROR.finditer(done.stdout)]
    assert not errors, report


@pytest.mark.parametrize(("python", "strict"), _modes(), indirect=["python"])
def test_pyright_passes_with_pydantic_alone(project: Path, python: Path, strict: bool) -> None:
    assert PYRIGHT.is_file(), "pyright is pinned in tests/interop (run `make interop-deps`)"
    config: list[str] = []
    if strict:
        (project / "pyright-strict.json").write_text(json.dumps({"typeCheckingMode": "strict"}), encoding="utf-8")
        config = ["--project", "pyright-strict.json"]
    done = subprocess.run(
        [str(PYRIGHT), *config, "--outputjson", "--pythonpath", str(python), "src/myapp"],
        cwd=project,
        env=clean_env(),
        capture_output=True,
        text=True,
        timeout=LIMIT,
        check=False,
    )
    report = json.loads(done.stdout)
    assert report["summary"]["filesAnalyzed"] > 50, done.stdout[-2000:]
    errors = [
        f"{d['file']}:{d['range']['start']['line'] + 1}: {d['message']} ({d.get('rule', '')})"
        for d in report["generalDiagnostics"]
        if d["severity"] == "error"
    ]
    assert not errors, "\n".join(errors)


def _with_the_libraries(module: str) -> str:
    """A ``*_library.py`` of the runtime written as the plain imports it stands for: each
    ``NAME = alias.NAME`` of a module ``alias = importlib.import_module("package")`` as
    ``from package import NAME``."""
    assignments = [
        (node.targets[0].id, node.value)
        for node in ast.walk(ast.parse(module))
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
    ]
    modules = {
        name: ast.literal_eval(value.args[0])
        for name, value in assignments
        if isinstance(value, ast.Call) and ast.unparse(value.func) == "importlib.import_module"
    }
    return "".join(
        f"from {modules[value.value.id]} import {name} as {name}\n"
        for name, value in assignments
        if isinstance(value, ast.Attribute) and isinstance(value.value, ast.Name) and value.attr == name
    )


def test_the_stubs_of_the_optional_libraries_agree_with_the_libraries(tmp_path: Path) -> None:
    """What the stubs (``*_library.pyi``) say of httpx, websockets and OpenTelemetry's API is what the
    libraries say: the runtime, with each stubbed module replaced by the plain imports it stands for,
    passes mypy --strict where the libraries are installed (this development environment)."""
    copy = tmp_path / "runtime"
    shutil.copytree(RUNTIME, copy, ignore=shutil.ignore_patterns("__pycache__"))
    stubs = sorted(copy.rglob("*_library.pyi"))
    assert {p.name for p in stubs} >= {"http_library.pyi", "websocket_library.pyi", "otel_library.pyi"}, stubs
    for stub in stubs:
        module = stub.with_suffix(".py")
        real = _with_the_libraries(module.read_text(encoding="utf-8"))
        declared = ast.literal_eval(next(n.value for n in ast.parse(stub.read_text()).body if _is_all(n)))
        assert sorted(line.split()[-1] for line in real.splitlines()) == sorted(declared), real
        module.write_text(real, encoding="utf-8")
        stub.unlink()
    packages = ["-p", "runtime.remote", "-p", "runtime.connection"]
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--cache-dir", str(tmp_path / "cache"), *packages],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=LIMIT,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def _is_all(node: ast.stmt) -> bool:
    return isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets)
