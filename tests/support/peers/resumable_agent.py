"""The turn agent (tests/support/remote.py) on stdio with the resume extension (issue 22).

    python tests/support/peers/resumable_agent.py [MAX_EVENTS]

Each session keeps at most MAX_EVENTS events (default: ResumeLimits' default).
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "generated"))
sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from acp_bindings.resume import ResumeLimits
from acp_bindings.serve import run_agent

from tests.support.remote import TurnAgent

if __name__ == "__main__":
    limits = ResumeLimits(max_events=int(sys.argv[1])) if len(sys.argv) > 1 else ResumeLimits()
    asyncio.run(run_agent(TurnAgent(), resume=limits))
