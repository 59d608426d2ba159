"""The panel's fixture: one run of the kit per peer and test session (``runs.shared_run``)."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.panel.peers import PEERS
from tests.panel.runs import shared_run


@pytest.fixture(scope="session")
def panel_runs(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], dict[str, Any]]:
    """``panel_runs(peer)``: that peer's run, made by whichever worker of this session asked first.
    Under pytest-xdist the folder is the one all workers of this session share (the parent of each
    worker's base folder); alone, this process's own."""
    base = tmp_path_factory.getbasetemp()
    folder: Path = (base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base) / "panel-runs"

    def run(name: str) -> dict[str, Any]:
        return shared_run(PEERS[name], folder)

    return run
