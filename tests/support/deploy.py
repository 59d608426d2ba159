"""Helpers of the deployment test (issue 32, items 2 and 3): the process tree of
``deploy/launch.py run`` (HAProxy and N uvicorn processes serving ``tests/support/peers/deploy_worker.py``,
the resumable echo agent of ``examples/remote_agent.py``) on free loopback ports, and a client
that records what the echo agent streams.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import resource
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from acp_bindings import PROTOCOL_VERSION, builders, models
from acp_bindings.errors import RequestError
from acp_bindings.interfaces import Client

from deploy.launch import RuntimeApi, server_name
from tests.support.sdk import ROOT

LAUNCH = ROOT / "deploy" / "launch.py"
APP = "tests.support.peers.deploy_worker:app"
RECOVER_ERROR = -32060


def free_ports(count: int) -> list[int]:
    """``count`` ports free on loopback now (bound together, then released)."""
    sockets = []
    try:
        for _ in range(count):
            sock = socket.socket()
            sock.bind(("127.0.0.1", 0))
            sockets.append(sock)
        return [s.getsockname()[1] for s in sockets]
    finally:
        for sock in sockets:
            sock.close()


def raise_file_limit(wanted: int) -> int:
    """This process's soft limit of open files raised towards ``wanted`` (at most the hard
    limit; the launcher and its children inherit it): the limit in force."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
    if soft < target:
        resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
        return target
    return soft


def rss(pid: int) -> int:
    """The resident set of process ``pid``, in bytes."""
    with open(f"/proc/{pid}/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise AssertionError(f"no VmRSS for pid {pid}")


@dataclass
class WorkerInfo:
    name: str
    port: int
    pid: int


class Stack:
    """``deploy/launch.py run`` as a user starts it: a real process tree on free loopback ports."""

    def __init__(
        self,
        folder: Path,
        haproxy: str,
        *,
        workers: int = 2,
        maxconn: int = 4096,
        drain_seconds: float = 10.0,
        grace_seconds: int = 5,
        restart_delay: float = 1.0,
        uvicorn_args: Sequence[str] = (),
        app: str = APP,
        app_dir: Path = ROOT,
    ) -> None:
        self.folder = folder
        self.run_dir = folder / "run"
        ports = free_ports(workers + 1)
        self.bind = f"127.0.0.1:{ports[0]}"
        self.ports = ports[1:]
        self.url = f"http://{self.bind}/acp"
        self.command = [
            sys.executable, str(LAUNCH), "run",
            "--app", app, "--app-dir", str(app_dir), "--run-dir", str(self.run_dir),
            "--bind", self.bind, "--worker-ports", ",".join(map(str, self.ports)),
            "--maxconn", str(maxconn),
            # one loopback address plays every client: the per-address bounds would refuse it
            "--per-address-connections", "1000000", "--per-address-rate", "1000000",
            "--log-level", "info", "--drain-seconds", str(drain_seconds), "--grace-seconds", str(grace_seconds),
            "--restart-delay", str(restart_delay),
            "--haproxy", haproxy,
            *(["--", *uvicorn_args] if uvicorn_args else []),
        ]  # fmt: skip
        self.process: subprocess.Popen[str] | None = None
        self.api = RuntimeApi(str(self.run_dir / "haproxy.sock"))
        self.output: list[str] = []

    def start(self) -> Stack:
        self.process = subprocess.Popen(
            self.command, cwd=self.folder, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
        )
        assert self.process.stdout is not None
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            line = self.process.stdout.readline()
            if not line:
                break
            self.output.append(line)
            if line.startswith("launch: serving"):
                return self
        self.stop()
        raise AssertionError(f"the launcher did not start: {''.join(self.output)}{self.logs()}")

    def state(self) -> dict[str, Any]:
        return json.loads((self.run_dir / "launch.json").read_text(encoding="utf-8"))  # type: ignore[no-any-return]

    def workers(self) -> list[WorkerInfo]:
        return [WorkerInfo(w["name"], w["port"], w["pid"]) for w in self.state()["workers"]]

    def worker(self, port: int) -> dict[str, int]:
        """What the worker on ``port`` says of itself: pid, connections, agents (directly, not via HAProxy)."""
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/_worker", timeout=10) as answer:
            return json.loads(answer.read())  # type: ignore[no-any-return]

    def status(self, port: int) -> str:
        return self.api.server(server_name(port))["status"]

    def served(self, port: int) -> int:
        """Connections HAProxy has sent to the worker on ``port`` since it started (``stot``)."""
        return int(self.api.server(server_name(port))["stot"])

    def set_state(self, port: int, state: str) -> None:
        self.api.set_state(server_name(port), state)

    def launch(self, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
        """``deploy/launch.py ARGS --run-dir <this stack's>`` as an operator runs it."""
        return subprocess.run(
            [sys.executable, str(LAUNCH), *args, "--run-dir", str(self.run_dir)],
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )

    def wait_status(self, port: int, wanted: str, timeout: float = 30.0) -> float:
        """Seconds until HAProxy reports ``wanted`` for the worker on ``port``."""
        start = time.monotonic()
        while self.status(port) != wanted:
            if time.monotonic() - start > timeout:
                raise AssertionError(f"{server_name(port)} is {self.status(port)}, not {wanted}, after {timeout} s")
            time.sleep(0.05)
        return time.monotonic() - start

    def logs(self) -> str:
        parts = []
        for path in sorted(self.run_dir.glob("*.log")):
            text = path.read_text(encoding="utf-8", errors="replace")
            parts.append(f"\n--- {path.name} (last 2000 characters)\n{text[-2000:]}")
        return "".join(parts)

    def stop(self) -> str:
        """SIGTERM the launcher (a graceful stop); whatever is left after 60 s is killed."""
        if self.process is None:
            return ""
        pids: list[int] = []
        with contextlib.suppress(OSError, ValueError, KeyError):
            state = self.state()
            pids = [w["pid"] for w in state["workers"]] + [state["haproxy_pid"]]
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        try:
            rest, _ = self.process.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            self.process.kill()
            rest, _ = self.process.communicate()
        for pid in pids:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        self.output.append(rest or "")
        return "".join(self.output)


@contextlib.contextmanager
def stack(folder: Path, haproxy: str, **options: Any) -> Iterator[Stack]:
    running = Stack(folder, haproxy, **options).start()
    try:
        yield running
    finally:
        running.stop()


# -- the echo agent and its client


def echo_agent() -> type[Any]:
    """``EchoAgent`` of ``examples/echo_agent.py``."""
    if str(ROOT / "examples") not in sys.path:
        sys.path.insert(0, str(ROOT / "examples"))
    from echo_agent import EchoAgent

    return EchoAgent  # type: ignore[no-any-return]


def words(count: int, tag: str = "w") -> str:
    return " ".join(f"{tag}{n}" for n in range(count))


def echoed(count: int, tag: str = "w") -> list[str]:
    """The chunks the echo agent streams for ``words(count, tag)``: each word and a space."""
    return [f"{tag}{n} " for n in range(count)]


class EchoRecorder(Client):
    """Records the echo agent's chunks in the order its handler sees them."""

    def __init__(self, hold: asyncio.Event | None = None) -> None:
        self.chunks: list[str] = []
        self.first = asyncio.Event()
        """Set at the first chunk: the turn is running."""
        self.hold = hold
        """The paced agent's permission request (a prompt that starts with ``ASK``) is answered once
        this is set: its turn runs until then."""
        self.asked = asyncio.Event()
        """Set when the agent asked: its turn waits for the answer."""

    async def session_update(self, params: models.SessionNotification) -> None:
        update = params.update
        if isinstance(update, models.AgentMessageChunkSessionUpdate) and isinstance(
            update.content, models.TextContentBlock
        ):
            await asyncio.sleep(0)  # a handler that awaits: the order must hold all the same
            self.chunks.append(update.content.text)
            self.first.set()

    async def request_permission(self, params: models.RequestPermissionRequest) -> models.RequestPermissionResponse:
        if self.hold is None:
            raise RequestError(-32601, "the echo agent asks no permission")
        self.asked.set()
        await self.hold.wait()
        return builders.request_permission_response(builders.selected_request_permission_outcome("allow"))


def initialize_request() -> models.InitializeRequest:
    return builders.initialize_request(PROTOCOL_VERSION)


def new_session_request() -> models.NewSessionRequest:
    return builders.new_session_request("/tmp", [])


def prompt_request(session: str, text: str) -> models.PromptRequest:
    return builders.prompt_request(session, [builders.text_content_block(text)])


def is_recover_error(error: BaseException | None) -> bool:
    """``error`` is the documented -32060 that says to load the session again."""
    return (
        isinstance(error, RequestError)
        and error.code == RECOVER_ERROR
        and isinstance(error.data, dict)
        and error.data.get("recover") == "session/load"
    )


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))] if ordered else float("nan")
