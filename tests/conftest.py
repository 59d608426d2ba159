"""Shared fixtures: the generated packages, the schema history, golden updates."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
GENERATED = ROOT / "generated"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--acp-schemas",
        default=os.environ.get("ACP_SCHEMAS"),
        help="folder of ACP schema revisions (index.json + one folder per tag); env ACP_SCHEMAS",
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
def acp_schemas(request: pytest.FixtureRequest) -> Path:
    value = request.config.getoption("--acp-schemas")
    if not value:
        pytest.fail("the schema history is needed: pass --acp-schemas DIR or set ACP_SCHEMAS (make test sets it)")
    path = Path(value)
    if not (path / "index.json").is_file():
        pytest.fail(f"{path} holds no index.json; point --acp-schemas / ACP_SCHEMAS at shared/acp-schemas")
    return path


# The committed generated packages are importable, as for a user who vendors generated/
# (at import time: some tests are parametrized from what the packages contain).
if str(GENERATED) not in sys.path:
    sys.path.insert(0, str(GENERATED))
