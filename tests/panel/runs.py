"""One run of the kit per peer and test session, shared by the pytest-xdist workers, and the
recorded expectations it is compared with (``expected/<peer>.json``).

An expectation file records what the spec says each requirement's outcome is for that peer, and
the verdict that follows; ``kit_wrong`` lists where today's kit says otherwise (a false finding,
or a status the kit's own rules do not give), each with the spec's words and the status the kit
reports today: those are tested apart, as strict expected failures, so that they turn green when
the kit is fixed. ``judgements`` says, for every FAIL and NOT_TESTED, why it is right.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

from tests.panel.kit import run_kit
from tests.panel.peers import PANEL, PEERS, Peer, prepared

EXPECTED = PANEL / "expected"
VERDICT = "verdict"
"""The key of ``kit_wrong`` that says today's verdict is wrong."""


def expected(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((EXPECTED / f"{name}.json").read_text(encoding="utf-8"))
    return data


def statuses(report: dict[str, Any]) -> dict[str, str]:
    return {r["id"]: r["status"] for r in report["requirements"]}


def run_peer(peer: Peer) -> dict[str, Any]:
    """Run the kit against ``peer`` in a folder of its own (removed afterwards): its report, what
    the peer's helpers collected (the mock model's calls) and the seconds it took."""
    work = Path(tempfile.mkdtemp(prefix=f"acpgen-panel-{peer.name}-"))
    try:
        with prepared(peer, work) as ready:
            start = time.monotonic()
            report = run_kit(peer.mode, ready.argv, env=ready.env)
            seconds = time.monotonic() - start
            return {"report": report, "seconds": round(seconds, 2), **ready.collect()}
    finally:
        shutil.rmtree(work, ignore_errors=True)


def shared_run(peer: Peer, folder: Path) -> dict[str, Any]:
    """``run_peer`` once per test session: the first worker that asks runs it (the others wait on
    a lock) and leaves the result in ``folder`` for the rest."""
    folder.mkdir(parents=True, exist_ok=True)
    result = folder / f"{peer.name}.json"
    with (folder / f"{peer.name}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if result.is_file():
            data: dict[str, Any] = json.loads(result.read_text(encoding="utf-8"))
            return data
        data = run_peer(peer)
        staged = result.with_suffix(f".{os.getpid()}.tmp")
        staged.write_text(json.dumps(data), encoding="utf-8")
        staged.replace(result)
        return data


def known_false_findings() -> list[tuple[str, str]]:
    """(peer, requirement id or ``verdict``) for every entry of every ``kit_wrong``."""
    return [(name, key) for name in PEERS for key in expected(name).get("kit_wrong", {})]
