"""Ordered notifications against the official TypeScript SDK as a real peer (issue 11).

- Python client (generated bindings) <- SDK agent streaming 500 chunks per turn: the client's
  ``session/update`` handler awaits random short sleeps, and when ``prompt()`` returns every
  chunk of the turn has been handled, in order (the runtime delivers a response only after the
  notifications that came before it).
- SDK client <- Python agent (generated bindings) streaming 500 chunks: on the wire, every
  update arrives in order before the prompt's result.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.runtime.test_interop import INTEROP, ROOT, TIMEOUT, _node
from tests.support.peers.raw import TARGET_AGENT

pytestmark = pytest.mark.interop

CHUNKS = 500


def _json_run(args: list[str]) -> dict[str, object]:
    done = subprocess.run(args, cwd=ROOT, capture_output=True, text=True, timeout=TIMEOUT, check=False)
    assert done.returncode == 0, f"exit {done.returncode}\n--- stdout\n{done.stdout}\n--- stderr\n{done.stderr}"
    result: dict[str, object] = json.loads(done.stdout)
    return result


def test_python_client_has_handled_every_chunk_in_order_when_prompt_returns() -> None:
    report = _json_run([sys.executable, str(INTEROP / "py_stream_client.py"), _node(), str(CHUNKS), "2"])
    expected = [str(n) for n in range(CHUNKS)]
    for turn, handled in enumerate(report["turns"]):  # type: ignore[arg-type]
        assert handled == expected, (
            f"turn {turn}: {len(handled)} of {CHUNKS} chunks handled when prompt() returned; "
            f"first out of place: {next((h for h, e in zip(handled, expected, strict=False) if h != e), None)}"
        )


def test_python_agent_sends_every_chunk_in_order_before_the_prompt_result() -> None:
    report = _json_run([_node(), str(INTEROP / "stream_client.mjs"), sys.executable, str(TARGET_AGENT), str(CHUNKS)])
    assert report["wire"] == [*(f"update:{n}" for n in range(CHUNKS)), "result:end_turn"]
    assert report["agentExit"] == 0
