"""The relay with the official TypeScript SDK on both sides of it (issue 32, item 1): the SDK's remote
clients (``createHttpStream``, ``createWebSocketStream``) through ``relay.relay_app`` under uvicorn, to our
echo agent (``examples/echo_agent.py``) and to an agent on the SDK served on stdio
(``tests/interop/stdio_turn_agent.mjs``), over both profiles. The resumable relay serves the SDK's clients,
which do not negotiate the extension, plain ACP. Needs ``make interop-deps`` (a missing SDK fails, never
skips)."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest
from acp_bindings.relay import relay_app
from acp_bindings.remote import ResumeLimits

from tests.support.remote import PROFILES, expected, node_client, serving
from tests.support.sdk import INTEROP, ROOT, node

pytestmark = pytest.mark.interop

TIMEOUT = 60


def _echo_client(url: str, profile: str, text: str) -> dict[str, Any]:
    done = subprocess.run(
        [node(), str(INTEROP / "echo_remote_client.mjs"), url, profile, text],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
    )
    assert done.returncode == 0, f"exit {done.returncode}\n--- stdout\n{done.stdout}\n--- stderr\n{done.stderr}"
    report: dict[str, Any] = json.loads(done.stdout)
    return report


@pytest.mark.parametrize("resume", [None, ResumeLimits()], ids=["plain", "resumable"])
@pytest.mark.parametrize("profile", PROFILES)
def test_sdk_remote_client_through_the_relay_to_the_echo_agent(profile: str, resume: ResumeLimits | None) -> None:
    words = " ".join(f"word{n}" for n in range(40))
    app = relay_app([sys.executable, str(ROOT / "examples" / "echo_agent.py")], resume=resume)
    with serving(app) as url:
        report = _echo_client(url, profile, words)
    assert report == {"agent": "echo-agent", "chunks": [f"{word} " for word in words.split()], "stop": "end_turn"}


@pytest.mark.parametrize("resume", [None, ResumeLimits()], ids=["plain", "resumable"])
@pytest.mark.parametrize("profile", PROFILES)
def test_sdk_remote_client_through_the_relay_to_an_sdk_stdio_agent(profile: str, resume: ResumeLimits | None) -> None:
    """The turn flow of tests/support/remote.py: two sessions, ordered chunks, a permission allowed,
    a turn cancelled."""
    app = relay_app([node(), str(INTEROP / "stdio_turn_agent.mjs")], resume=resume)
    with serving(app) as url:
        report = node_client(url, profile, 120)
    assert report["sessions"] == ["node-1", "node-2"]
    assert report["chunks"] == expected(120)
    assert report["stops"] == ["end_turn", "cancelled"]
