"""The "turn" agent of the remote tests (``tests.remote.TurnAgent``) served on stdio, for the relay tests:
``python tests/peers/turn_stdio_agent.py`` (the bindings are found in ``generated/``)."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
sys.path[:0] = [str(ROOT / "generated"), str(ROOT)]

from acp_bindings.serve import run_agent  # noqa: E402

from tests.support.remote import TurnAgent  # noqa: E402

if __name__ == "__main__":
    asyncio.run(run_agent(TurnAgent()))
