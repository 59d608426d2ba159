"""A peer under test in a process of its own: its stdout read line by line in the
background, each line stamped when it arrives (not when the kit gets to it) and kept
in the scenario's transcript, its stderr kept as a bounded tail, writes that cannot
hang the kit, and the shutdown ladder (stdin closed, then SIGTERM, then SIGKILL to
its process group), each rung stopping as soon as the process is gone."""

from __future__ import annotations

import contextlib
import os
import queue
import signal
import subprocess
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

STDERR_DRAIN = 2.0
"""Seconds the tail of a process that has exited waits for the rest of its stderr."""
STDERR_TAIL = 20_000
"""Bytes of the peer's stderr a report keeps."""
LINE_LIMIT = 64 * 1024 * 1024
"""A longer stdout line is cut there (and judged: it is no message)."""


@dataclass(frozen=True, slots=True)
class Line:
    """A line of the transcript: ``sent`` by the kit or ``received`` from the peer."""

    direction: str
    t: float
    raw: bytes


@dataclass(slots=True)
class Transcript:
    """Everything a scenario exchanged, in order."""

    start: float = field(default_factory=time.monotonic)
    lines: list[Line] = field(default_factory=list)

    def add(self, direction: str, raw: bytes, at: float | None = None) -> float:
        """Keep a line (``at``: when it arrived, else now); the time it is kept
        under."""
        at = time.monotonic() if at is None else at
        self.lines.append(Line(direction, round(at - self.start, 4), raw))
        return at

    def as_json(self) -> list[dict[str, Any]]:
        return [
            {
                "dir": line.direction,
                "t": line.t,
                "raw": line.raw.decode("utf-8", "replace"),
            }
            for line in self.lines
        ]


@dataclass(frozen=True, slots=True)
class Arrived:
    """A line from the peer and when it arrived (``time.monotonic``)."""

    t: float
    raw: bytes


class Peer(Protocol):
    """What a scenario drives: an agent process (:class:`AgentProcess`) or a
    connection to a remote agent (:class:`.remote_agent.RemotePeer`)."""

    transcript: Transcript

    def send(self, data: bytes) -> float:
        """Send one line; when it was handed to the transport."""
        ...

    def next_line(self, timeout: float) -> Arrived | None: ...

    def stderr_tail(self) -> str: ...

    def close(self, grace: float) -> bool: ...


class PeerExited(Exception):
    """The peer's stdout ended (it exited or closed it)."""


class AgentProcess:
    """One run of the peer's command."""

    def __init__(
        self,
        command: Sequence[str],
        *,
        env: Mapping[str, str],
        cwd: str | None,
        transcript: Transcript,
    ) -> None:
        self.transcript = transcript
        self._lines: queue.Queue[Arrived | None] = queue.Queue()
        self._stderr = bytearray()
        self._stderr_lock = threading.Lock()
        self._writes: queue.Queue[bytes | None] = queue.Queue()
        self.write_failed = False
        self.eof = False
        self.process = subprocess.Popen(
            list(command),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=dict(env),
            cwd=cwd,
            start_new_session=True,
        )
        threads = [
            threading.Thread(target=target, daemon=True)
            for target in (self._read_stdout, self._read_stderr, self._write)
        ]
        for thread in threads:
            thread.start()
        self._stderr_reader = threads[1]

    # --- background

    def _read_stdout(self) -> None:
        stream = self.process.stdout
        assert stream is not None
        with contextlib.suppress(OSError, ValueError):
            while True:
                line = stream.readline(LINE_LIMIT)
                if not line:
                    break
                self._lines.put(Arrived(time.monotonic(), line))
        self._lines.put(None)

    def _read_stderr(self) -> None:
        stream = self.process.stderr
        assert stream is not None
        with contextlib.suppress(OSError, ValueError):
            while chunk := os.read(stream.fileno(), 65536):
                with self._stderr_lock:
                    self._stderr += chunk
                    del self._stderr[:-STDERR_TAIL]

    def _write(self) -> None:
        stream = self.process.stdin
        assert stream is not None
        while (data := self._writes.get()) is not None:
            try:
                stream.write(data)
                stream.flush()
            except (OSError, ValueError):
                self.write_failed = True
                return
        with contextlib.suppress(OSError, ValueError):
            stream.close()

    # --- the kit's side

    def send(self, data: bytes) -> float:
        """Queue ``data`` (one line, newline included) for the peer's stdin; never
        blocks. When it was queued."""
        at = self.transcript.add("sent", data.rstrip(b"\n"))
        self._writes.put(data)
        return at

    def next_line(self, timeout: float) -> Arrived | None:
        """The next stdout line (newline stripped) with its arrival time, None when
        none came within ``timeout``; :class:`PeerExited` once stdout ended."""
        if self.eof:
            raise PeerExited
        try:
            got = self._lines.get(timeout=max(timeout, 0))
        except queue.Empty:
            return None
        if got is None:
            self.eof = True
            raise PeerExited
        line = got.raw.rstrip(b"\n").removesuffix(b"\r")
        self.transcript.add("received", line, got.t)
        return Arrived(got.t, line)

    def stderr_tail(self) -> str:
        # a dead process: its last words may still be in the pipe
        if self.process.poll() is not None:
            self._stderr_reader.join(STDERR_DRAIN)
        with self._stderr_lock:
            return bytes(self._stderr).decode("utf-8", "replace")

    def close(self, grace: float) -> bool:
        """Close stdin and stop the process: whether it left by itself within "
        "``grace`` seconds."""
        self._writes.put(None)
        left = _wait(self.process, grace)
        if not left:
            for signum, wait in ((signal.SIGTERM, 2.0), (signal.SIGKILL, 5.0)):
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(self.process.pid, signum)
                if _wait(self.process, wait):
                    break
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(
                self.process.pid, signal.SIGKILL
            )  # what it left behind in its group
        self._drain()
        for stream in (self.process.stdout, self.process.stderr):
            with contextlib.suppress(OSError, ValueError):
                if stream is not None:
                    stream.close()
        return left

    def _drain(self) -> None:
        """Late stdout lines into the transcript."""
        deadline = time.monotonic() + 0.5
        with contextlib.suppress(PeerExited):
            while time.monotonic() < deadline and self.next_line(0.05) is not None:
                pass


def _wait(process: subprocess.Popen[bytes], seconds: float) -> bool:
    try:
        process.wait(timeout=max(seconds, 0))
    except subprocess.TimeoutExpired:
        return False
    return True
