"""The environments of the floor tests: ``.venv-floor/<name>`` holds exactly what
``tests/floor/<name>.txt`` pins (hashed; ``make floor-deps`` makes them, ``make test`` first): a
pydantic release with the lowest versions of its dependencies it allows, and uvicorn, and nothing
else (no httpx, no websockets: what a user who only serves has). The tests use them offline and
fail, naming the command, when one is missing or differs from its lock file."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
from contextlib import chdir
from pathlib import Path

import pytest

from acpgen.commands import main
from acpgen.errors import EXIT_OK

ROOT = Path(__file__).resolve().parents[2]
LOCKS = ROOT / "tests" / "floor"
ENVIRONMENTS = ROOT / ".venv-floor"
MAKE = "make floor-deps"
_PIN = re.compile(r"^([A-Za-z0-9._-]+)==([^\s;\\]+)", re.MULTILINE)
_INSTALLED = (
    "import importlib.metadata as m, json;print(json.dumps({d.metadata['Name']: d.version for d in m.distributions()}))"
)


def locks() -> list[Path]:
    """The lock files, oldest pydantic first."""
    return sorted(LOCKS.glob("pydantic-*.txt"), key=lambda p: version_key(pins(p)["pydantic"]))


def version_key(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in version.split("."))


def normalized(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def pins(lock: Path) -> dict[str, str]:
    """Distribution (normalized name) -> the version ``lock`` pins."""
    return {normalized(name): version for name, version in _PIN.findall(lock.read_text(encoding="utf-8"))}


def clean_env() -> dict[str, str]:
    """This process's environment without what would point a child at another environment."""
    dropped = {"VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME", "UV_PROJECT_ENVIRONMENT", "ACP_TRACE", "PYTHONSTARTUP"}
    return {k: v for k, v in os.environ.items() if k not in dropped}


def python(lock: Path) -> Path:
    """The Python of the environment of ``lock``, checked to hold exactly what it pins."""
    env = ENVIRONMENTS / lock.stem
    interpreter = env / "bin" / "python"
    if not interpreter.exists():
        pytest.fail(f"{env.relative_to(ROOT)} is missing: run `{MAKE}` (it installs {lock.relative_to(ROOT)})")
    argv = [str(interpreter), "-I", "-c", _INSTALLED]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=60, check=False, env=clean_env())
    assert done.returncode == 0, done.stderr
    installed = {normalized(name): version for name, version in json.loads(done.stdout).items()}
    if installed != pins(lock):
        pytest.fail(
            f"{env.relative_to(ROOT)} differs from {lock.relative_to(ROOT)}: run `{MAKE}`"
            f" (installed {sorted(installed.items())}, pinned {sorted(pins(lock).items())})"
        )
    return interpreter


def vendored(folder: Path, *scripts: str) -> Path:
    """A user's project in ``folder`` with the stable bindings vendored as ``myapp._acp`` and the
    scripts of ``tests/floor`` named beside them; its ``src`` folder (run them from there)."""
    src = folder / "src"
    (src / "myapp").mkdir(parents=True)
    (src / "myapp" / "__init__.py").write_text("", encoding="utf-8")
    with chdir(folder):
        assert main(["vendor", "--package", "myapp._acp", "--out", "src/myapp/_acp"]) == EXIT_OK
    for script in scripts:
        shutil.copy(LOCKS / script, src / script)
    return src


def _uv() -> str:
    """uv: what ``uv run`` names (``UV``), else the one on PATH or ``make install``'s private copy."""
    found = os.environ.get("UV") or shutil.which("uv") or str(ROOT / ".tools" / "uv" / "bin" / "uv")
    if not Path(found).exists():
        pytest.fail("uv is needed to build the checkers' environments (`make install` installs it)")
    return found


def pydantic_closure() -> set[str]:
    """pydantic and what it depends on, transitively (normalized names, as ``uv.lock`` records them)."""
    packages = {p["name"]: p for p in tomllib.loads((ROOT / "uv.lock").read_text(encoding="utf-8"))["package"]}
    found: set[str] = set()
    todo = ["pydantic"]
    while todo:
        name = normalized(todo.pop())
        if name not in found:
            found.add(name)
            todo += [dependency["name"] for dependency in packages[name].get("dependencies", [])]
    return found


def _pydantic_alone(lock: Path) -> str:
    """The entries of ``lock`` (with their hashes) that pydantic needs: without uvicorn and its own."""
    keep = pydantic_closure()
    entries = re.split(r"\n(?=[A-Za-z0-9])", lock.read_text(encoding="utf-8"))
    kept = [e for e in entries if (m := _PIN.match(e)) is not None and normalized(m.group(1)) in keep]
    missing = keep - {normalized(m.group(1)) for e in kept if (m := _PIN.match(e))}
    assert not missing, f"{lock.name} pins none of {sorted(missing)}"
    return "\n".join(kept) + "\n"


def checkers_environment(lock: Path, where: Path) -> Path:
    """A fresh environment at ``where`` holding the pydantic of ``lock`` (with the versions of its own
    dependencies the lock pins) and the checkers of ``uv.lock`` (the ``checkers`` group: mypy), and
    nothing else: what a user who vendors the bindings has. Made offline, from uv's cache (``make
    install`` and ``make floor-deps`` filled it); its Python."""
    uv, env = _uv(), clean_env() | {"UV_PROJECT_ENVIRONMENT": str(where)}
    python = where / "bin" / "python"
    requirements = where.parent / f"{where.name}-pydantic.txt"
    requirements.write_text(_pydantic_alone(lock), encoding="utf-8")
    offline = ["--offline", "--quiet", "--python", str(python)]
    steps = [
        [uv, "venv", "--quiet", "--python", sys.executable, str(where)],
        [uv, "sync", *offline, "--frozen", "--only-group", "checkers", "--no-install-project", "--project", str(ROOT)],
        [uv, "pip", "install", *offline, "--no-deps", "--require-hashes", "-r", str(requirements)],
    ]
    for argv in steps:
        done = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300, check=False)
        if done.returncode != 0:
            pytest.fail(f"{' '.join(argv)} failed (run `make install` and `{MAKE}` first):\n{done.stderr}")
    return python


def installed(interpreter: Path) -> set[str]:
    """The distributions (normalized names) installed in the environment of ``interpreter``."""
    argv = [str(interpreter), "-I", "-c", _INSTALLED]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=60, check=False, env=clean_env())
    assert done.returncode == 0, done.stderr
    return {normalized(name) for name in json.loads(done.stdout)}
