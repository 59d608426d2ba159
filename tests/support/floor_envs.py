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
