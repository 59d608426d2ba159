"""The generated packages import nothing but pydantic unless the remote module is imported; that
module needs the ``remote`` extra (httpx with h2, websockets) and, without it, raises an ImportError
that names the extra and the exact command installing it (issue 21, item 3)."""

from __future__ import annotations

import subprocess
import sys
import tomllib

from acpgen.runtime._remote_deps import REQUIREMENTS
from tests.conftest import GENERATED, ROOT

EVERY_MODULE_BUT_REMOTE = """
import importlib, pkgutil, sys
import acp_bindings
for info in pkgutil.iter_modules(acp_bindings.__path__):
    if info.name not in ("remote", "_remote_client"):
        importlib.import_module("acp_bindings." + info.name)
third_party = sorted({m.split(".")[0] for m in sys.modules} & {"httpx", "h2", "websockets", "uvicorn", "anyio"})
print(",".join(third_party))
"""

WITHOUT_THE_EXTRA = """
import sys
sys.modules["httpx"] = None  # as if not installed
try:
    import acp_bindings.remote
except ImportError as error:
    print(error)
else:
    raise SystemExit("imported without httpx")
"""


def _python(code: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=GENERATED, capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_every_module_but_remote_imports_no_network_package() -> None:
    assert _python(EVERY_MODULE_BUT_REMOTE) == ""


def test_the_remote_module_without_its_extra_names_the_exact_install_command() -> None:
    message = _python(WITHOUT_THE_EXTRA)
    assert "acp_bindings.remote needs httpx (with h2) and websockets, the 'remote' extra" in message
    assert "pip install 'httpx[http2]==0.28.1' 'websockets==17.4'" in message


def test_the_error_names_the_pins_of_the_remote_extra() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert tuple(project["project"]["optional-dependencies"]["remote"]) == REQUIREMENTS
    dev = project["dependency-groups"]["dev"]
    assert all(pin in dev for pin in REQUIREMENTS), "the dev group installs the remote extra for the tests"
