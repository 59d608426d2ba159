"""A raw peer: a real subprocess on real pipes, spoken to in bytes, answers read as JSON lines."""

from __future__ import annotations

import json
import queue
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[3]
TARGET_AGENT = ROOT / "tests" / "support" / "peers" / "target_agent.py"
WAIT = 30.0
"""Seconds to wait for an expected answer before the test fails (a hang, never a pass)."""


def _not_json(name: str) -> Any:
    raise AssertionError(f"the agent wrote {name}, which is not JSON")


class RawPeer:
    """The agent process and the lines it writes, read by a thread into a queue."""

    def __init__(self, script: Path = TARGET_AGENT, *args: str) -> None:
        self.process = subprocess.Popen(
            [sys.executable, str(script), *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        self.lines: queue.Queue[bytes | None] = queue.Queue()
        self._stderr: list[bytes] = []
        threading.Thread(target=self._pump, daemon=True).start()
        threading.Thread(target=self._drain_stderr, daemon=True).start()

    def _pump(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.put(line)
        self.lines.put(None)

    def _drain_stderr(self) -> None:
        assert self.process.stderr is not None
        for line in self.process.stderr:
            self._stderr.append(line)

    @property
    def stderr(self) -> str:
        return b"".join(self._stderr).decode(errors="replace")

    def send(self, data: bytes) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(data)
        self.process.stdin.flush()

    def send_message(self, message: Any) -> None:
        self.send(json.dumps(message).encode() + b"\n")

    def read(self) -> Any:
        """The next message the agent writes (a parsed JSON line); fails on silence or exit."""
        try:
            line = self.lines.get(timeout=WAIT)
        except queue.Empty:
            raise AssertionError(f"no message from the agent within {WAIT}s\n{self.stderr}") from None
        if line is None:
            raise AssertionError(f"the agent exited ({self.process.wait()})\n{self.stderr}")
        assert line.endswith(b"\n"), line[:200]
        return json.loads(line, parse_constant=_not_json)  # NaN and Infinity are not JSON

    def read_until(self, done: Callable[[Any], bool]) -> list[Any]:
        """Messages up to and including the first for which ``done`` holds."""
        seen = []
        while True:
            message = self.read()
            seen.append(message)
            if done(message):
                return seen

    def close(self) -> int:
        """Close the agent's stdin and wait for it to exit; its exit code."""
        assert self.process.stdin is not None
        self.process.stdin.close()
        try:
            return self.process.wait(timeout=WAIT)
        finally:
            if self.process.poll() is None:
                self.process.kill()
