"""Shared fixtures: the generated packages, the schema history, golden updates."""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support import find_browser, find_haproxy
from tests.support.schema_history import HistoryError, unpack

ROOT = Path(__file__).resolve().parents[1]
GENERATED = ROOT / "generated"
TOOL_CACHE = ROOT / ".test-artefacts" / "acpgen-cache"
"""acpgen's cache for the tests (``ACPGEN_CACHE_DIR``): the tool packages ``acpgen conformance``,
``acpgen trace`` and ``acpgen relay`` run from, rendered once and shared by every test process,
never the user's own cache."""
os.environ["ACPGEN_CACHE_DIR"] = str(TOOL_CACHE)


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--acp-schemas",
        default=os.environ.get("ACP_SCHEMAS") or None,
        help="folder of ACP schema revisions (index.json + one folder per tag) to read instead of the "
        "history kept in tests/data/acp-schemas; env ACP_SCHEMAS",
    )
    parser.addoption("--update-goldens", action="store_true", help="rewrite the golden files of tests/golden/")
    parser.addoption(
        "--differential-size",
        type=int,
        default=10_000,
        help="instances of the differential test against the TypeScript SDK (default 10000; e.g. 100000)",
    )
    parser.addoption("--differential-seed", type=int, default=12, help="seed of the differential test's instances")


@pytest.fixture(scope="session")
def acp_schemas(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The schema history: ``--acp-schemas`` / ``ACP_SCHEMAS`` when given, else the archive of
    tests/data/acp-schemas unpacked (and checked) into a temporary folder of this process, removed at the end."""
    value = request.config.getoption("--acp-schemas")
    if value:
        path = Path(value)
        if not (path / "index.json").is_file():
            pytest.fail(
                f"{path} (--acp-schemas / ACP_SCHEMAS) holds no index.json; unset it to use tests/data/acp-schemas"
            )
        yield path
        return
    folder = tmp_path_factory.mktemp("acp-schemas")
    try:
        unpack(folder)
    except HistoryError as error:
        shutil.rmtree(folder, ignore_errors=True)
        pytest.fail(f"the schema history in tests/data/acp-schemas is damaged: {error}")
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(scope="session")
def browser_path() -> str:
    """The browser for tests that open a page (``tests/support/find_browser.py``, as ``make browser-deps``
    decides): without one the test is skipped with the line saying how to enable it; a ``CHROMIUM``
    naming no executable fails it."""
    found = find_browser.find()
    if isinstance(found, find_browser.Missing):
        pytest.skip(found.reason)
    if isinstance(found, find_browser.Wrong):
        pytest.fail(found.reason)
    return found.path


@pytest.fixture(scope="session")
def haproxy() -> str:
    """HAProxy for the deployment tests (``tests/support/find_haproxy.py``, as ``make deploy-deps`` decides):
    without one the test is skipped with the line saying how to enable it; a ``HAPROXY`` naming no
    executable fails it."""
    found = find_haproxy.find()
    if isinstance(found, find_haproxy.Missing):
        pytest.skip(found.reason)
    if isinstance(found, find_haproxy.Wrong):
        pytest.fail(found.reason)
    return found.path


# The committed generated packages are importable, as for a user who vendors generated/
# (at import time: some tests are parametrized from what the packages contain).
if str(GENERATED) not in sys.path:
    sys.path.insert(0, str(GENERATED))


@pytest.fixture
def update_goldens(request: pytest.FixtureRequest) -> bool:
    """Whether to rewrite the golden files this test compares with instead of comparing
    (``--update-goldens``; ``make goldens`` passes it to every test that takes this fixture, which
    marks them ``golden``)."""
    return bool(request.config.getoption("--update-goldens"))


MARKED_BY_FIXTURE = {"update_goldens": "golden", "browser_path": "browser", "haproxy": "deploy"}
"""Markers that follow from a fixture a test takes: a golden test, a browser, HAProxy."""

FIRST = (
    "tests/runtime/test_resume_faults.py::test_sessions_survive_random_cuts_of_their_connection",
    "tests/system/test_bump.py",
    "tests/system/test_vendored_types.py::test_pyright_passes_with_pydantic_alone",
    "tests/unit/test_schema_mutations.py",
    "tests/system/test_deploy.py::test_a_thousand_connections_over_both_profiles_lose_and_reorder_nothing",
    "tests/runtime/test_remote_load.py",
    "tests/generated/test_typecheck.py",
    # the conformance panel's longest runs (about 30 s and 15 s), which the other tests of the same
    # peer wait for (tests/panel/runs.py shares one run between the workers)
    "tests/panel/test_panel.py::test_the_kit_judges_the_peer_as_the_spec_does[codex-acp]",
    "tests/panel/test_panel.py::test_the_kit_judges_the_peer_as_the_spec_does[python-sdk-agent]",
)
"""The longest tests (half a minute to a minute each on two cores), longest first: they start before
the others so that the two workers of ``make test`` (``pytest -n 2 --maxschedchunk 2``, which hands
out tests two at a time) do not end with one of them alone. The other slow tests follow, the fast
ones last. Only the order changes: a stale entry costs time, never a test."""


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        for fixture, marker in MARKED_BY_FIXTURE.items():
            if fixture in getattr(item, "fixturenames", ()):
                item.add_marker(marker)

    def rank(item: pytest.Item) -> int:
        first = [i for i, prefix in enumerate(FIRST) if item.nodeid.startswith(prefix)]
        if first:
            return first[0]
        return len(FIRST) if item.get_closest_marker("slow") else len(FIRST) + 1

    items.sort(key=rank)  # stable: the order within each rank stays the collection order
