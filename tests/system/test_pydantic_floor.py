"""The lowest pydantic a generated package states is one it fully works on (issue 30, item 4).

The floor is stated once (``acpgen.render.pydantic_floor``); the import guard is rendered from it,
and README and docs/vendoring.md are checked against it here. A vendored copy runs its smoke test
(``tests/floor/smoke.py``: models read and dumped, session state folded, a stdio turn between a
spawned agent and a client over real pipes) in fresh environments holding exactly the floor
release, with the lowest versions of its own dependencies, and the first good release of each later
minor (``tests/floor/pydantic-*.txt``; ``make floor-deps`` installs them, offline here).
"""

from __future__ import annotations

import importlib
import json
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from acpgen.render.pydantic_floor import PYDANTIC_MINIMUM, PYDANTIC_REFUSED, requirement, stated
from tests.support.floor_envs import ROOT, clean_env, locks, pins, python, vendored, version_key

pytestmark = pytest.mark.slow

LIMIT = 120
"""Seconds: only stops a hang."""
FLOOR = ".".join(map(str, PYDANTIC_MINIMUM))


def supported(version: str) -> bool:
    return version_key(version)[:2] >= PYDANTIC_MINIMUM and version not in PYDANTIC_REFUSED


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A user's project with the stable bindings vendored and the smoke test beside them."""
    return vendored(tmp_path_factory.mktemp("floor"), "smoke.py")


@pytest.mark.parametrize("lock", locks(), ids=lambda lock: lock.stem)
def test_a_vendored_copy_works_on_each_stated_pydantic(lock: Path, project: Path) -> None:
    done = subprocess.run(
        [str(python(lock)), "smoke.py"],
        cwd=project,
        env=clean_env(),
        capture_output=True,
        text=True,
        timeout=LIMIT,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    pinned = pins(lock)
    assert (report["pydantic"], report["pydantic-core"]) == (pinned["pydantic"], pinned["pydantic-core"])
    assert report["models"] == 4
    assert report["state"] == {"plan": 2, "tool_call": {"kind": "edit", "status": "completed"}}
    turn = {"agent": "smoke-agent", "asked": 1, "stop": "end_turn", "text": "hello over pipes "}
    assert report["turn"] == turn | {"tool_call": "completed"}
    newer = version_key(pinned["pydantic"]) >= (2, 13)
    assert report["polymorphic_serialization"] == ("accepted" if newer else "refused")


def test_the_floor_itself_is_among_the_environments_with_its_lowest_dependencies() -> None:
    tested = [pins(lock)["pydantic"] for lock in locks()]
    assert tested[0] == f"{FLOOR}.0", f"tests/floor has no lock of pydantic {FLOOR}.0, the stated floor"
    assert all(supported(v) for v in tested), tested
    floor = pins(locks()[0])
    # pydantic's own floors of its dependencies (uv pip compile --resolution lowest)
    assert floor["typing-extensions"] == "4.14.1" and floor["annotated-types"] == "0.6.0", floor
    for lock in locks():
        assert not {"httpx", "websockets", "h2", "wsproto"} & pins(lock).keys(), f"{lock.name}: a server-only user's"


def test_readme_and_docs_state_the_floor_the_package_checks() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    vendoring = (ROOT / "docs" / "vendoring.md").read_text(encoding="utf-8")
    assert stated() in " ".join(readme.split()), "README states the floor"
    assert stated() in " ".join(vendoring.split()), "docs/vendoring.md states the floor"
    assert f'"{requirement()}"' in vendoring, "docs/vendoring.md gives the requirement to declare"
    for path in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        for found in re.findall(r"pydantic\s*>=\s*([0-9.]+[0-9])", path.read_text(encoding="utf-8")):
            assert found == FLOOR, f"{path.relative_to(ROOT)} says pydantic >= {found}; the floor is {FLOOR}"
    guard = importlib.import_module("acp_bindings")
    assert (PYDANTIC_MINIMUM, tuple(sorted(PYDANTIC_REFUSED))) == (guard._PYDANTIC_MINIMUM, guard._PYDANTIC_REFUSED)


def test_the_pydantic_acpgen_pins_is_a_supported_one() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    pinned = next(d for d in project["project"]["dependencies"] if d.startswith("pydantic=="))
    assert supported(pinned.removeprefix("pydantic==")), pinned


@pytest.mark.parametrize("version", ["2.11.10", "2.13.0"])
def test_an_unsupported_pydantic_is_a_clear_import_error(version: str) -> None:
    script = f"import pydantic; pydantic.VERSION = {version!r}; import acp_bindings"
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT / "generated", capture_output=True, text=True, check=False
    )
    assert done.returncode != 0
    expected = f"ImportError: acp_bindings needs {stated()}, and pydantic {version} is installed: upgrade it"
    assert expected in done.stderr, done.stderr
