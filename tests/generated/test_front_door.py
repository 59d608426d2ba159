"""The package's front door (issue 26, item 6): ``from acp_bindings import Agent, Client, run_agent,
spawn_agent, models, builders, RequestError`` (and the remote helpers and the session state), each
name imported when first used, so that importing the package costs what it did; run in fresh
interpreters, as a user's program imports it."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.conftest import GENERATED

pytestmark = pytest.mark.slow

FRONT_DOOR = ["Agent", "Client", "RequestError", "builders", "models", "run_agent", "spawn_agent"]
EVERY_PACKAGE = ["acp_bindings", "acp_bindings_unstable", "acp_bindings_v2", "acp_bindings_v2_unstable"]


def _python(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", code], cwd=GENERATED, capture_output=True, text=True, timeout=60, check=False
    )


def _json(code: str) -> object:
    done = _python(code)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.mark.parametrize("package", EVERY_PACKAGE)
def test_the_names_of_the_front_door_are_the_modules_own(package: str) -> None:
    code = f"""
import importlib, json
import {package} as p
from {package} import {", ".join(FRONT_DOOR)}, asgi_app, connect_agent, SessionState, negotiate_version
own = {{
    "Agent": importlib.import_module("{package}.interfaces").Agent,
    "Client": importlib.import_module("{package}.interfaces").Client,
    "RequestError": importlib.import_module("{package}.errors").RequestError,
    "builders": importlib.import_module("{package}.builders"),
    "models": importlib.import_module("{package}.models"),
    "run_agent": importlib.import_module("{package}.serve").run_agent,
    "spawn_agent": importlib.import_module("{package}.serve").spawn_agent,
    "connect_agent": importlib.import_module("{package}.remote").connect_agent,
    "asgi_app": importlib.import_module("{package}.remote").asgi_app,
    "SessionState": importlib.import_module("{package}.session_state").SessionState,
    "negotiate_version": importlib.import_module("{package}.initialization").negotiate_version,
}}
print(json.dumps({{name: getattr(p, name) is value for name, value in own.items()}}))
"""
    assert _json(code) == dict.fromkeys(
        [*FRONT_DOOR, "connect_agent", "asgi_app", "SessionState", "negotiate_version"], True
    )


def test_importing_the_package_imports_only_its_version_and_front_door() -> None:
    code = """
import json, sys
import acp_bindings
print(json.dumps(sorted(m for m in sys.modules if m.startswith("acp_bindings"))))
"""
    assert _json(code) == [
        "acp_bindings",
        "acp_bindings._runtime",
        "acp_bindings._runtime.front_door",
        "acp_bindings._version",
    ]


def test_a_name_is_imported_when_first_used_and_dir_lists_the_front_door() -> None:
    code = """
import json, sys
import acp_bindings
before = "acp_bindings.interfaces" in sys.modules
acp_bindings.Agent
print(json.dumps([before, "acp_bindings.interfaces" in sys.modules, "acp_bindings.remote" in sys.modules,
                  sorted(set(dir(acp_bindings)) & {"Agent", "spawn_agent", "connect_agent", "BUILD"})]))
"""
    assert _json(code) == [False, True, False, ["Agent", "BUILD", "connect_agent", "spawn_agent"]]


def test_a_name_the_package_does_not_offer_is_an_attribute_error() -> None:
    done = _python("import acp_bindings; acp_bindings.Agnet")
    assert done.returncode == 1
    assert "AttributeError: module 'acp_bindings' has no attribute 'Agnet'" in done.stderr


def test_the_remote_helpers_without_their_extra_name_the_install_command() -> None:
    code = """
import sys
sys.modules["httpx"] = None  # as if not installed
from acp_bindings import Agent, spawn_agent  # the rest of the front door works without it
try:
    from acp_bindings import connect_agent
except ImportError as error:
    print(error)
"""
    done = _python(code)
    assert done.returncode == 0, done.stderr
    assert "pip install 'httpx[http2]==0.28.1' 'websockets==17.4' 'sniffio==1.3.1'" in done.stdout
