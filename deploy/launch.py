"""Serve an acpgen remote app with N uvicorn processes behind HAProxy (docs/deploy.md).

One uvicorn process per port on loopback, behind one HAProxy with connection affinity for both
profiles.

    python3 deploy/launch.py run --app myapp:app [--workers 2] [--bind 127.0.0.1:8080]
    python3 deploy/launch.py config --workers 2 > /etc/haproxy/haproxy.cfg
    python3 deploy/launch.py drain 8001 --wait 60      (before SIGTERM: systemd's ExecStop)
    python3 deploy/launch.py ready 8001                (after a start: ExecStartPost)
    python3 deploy/launch.py restart-worker 8001       (drain, SIGTERM; `run` starts it again)
    python3 deploy/launch.py status

``run`` is a container's entry point, or ``make deploy-demo``: it renders ``haproxy.cfg.in``
(beside this file) for the workers, starts them and waits until each answers, starts HAProxy,
then supervises: a worker that exits is started again and put back into service. SIGTERM or
SIGINT stops the whole tree gracefully: every worker is drained at the balancer (no new
connections; persistent ones still reach it), the launcher waits until no connection is left
or ``--drain-seconds`` pass, then SIGTERMs the workers (uvicorn's
``--timeout-graceful-shutdown`` bounds what is left) and soft-stops HAProxy. SIGHUP restarts
the workers one at a time the same way (a rolling restart, e.g. after a deploy of new code).

Everything ``run`` writes goes into ``--run-dir`` (the rendered config, HAProxy's runtime-API
socket, ``launch.json`` with the processes' ids, one log per process); it refuses a folder
that holds anything else. Worker servers are named ``w<PORT>``. Standard library only,
Python 3.10+: it runs on the system's ``python3``; the workers run ``--python -m uvicorn``.
"""

from __future__ import annotations

import argparse
import contextlib
import http.client
import json
import os
import re
import resource
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
TEMPLATE = HERE / "haproxy.cfg.in"
BACKEND = "acp_workers"
STATE = "launch.json"
OURS = {STATE, "haproxy.cfg", "haproxy.sock", "haproxy.log"}
"""What ``run`` writes into its folder (besides ``w<PORT>.log``)."""
WORKER_LOG = re.compile(r"w\d+\.log")
WS_MAX_SIZE = 32 * 1024 * 1024 + 1024
"""uvicorn's WebSocket frame bound: the app's message bound (32 MiB) and a margin."""
APP_DRAIN_SECONDS = 10.0
"""How long the app waits on SIGTERM for its connections to end (``RemoteLimits.drain_timeout``)
before uvicorn stops: a worker may take that, then uvicorn's graceful bound, to exit."""


class LaunchError(Exception):
    """What went wrong, said for the user (exit 2)."""


def server_name(port: int) -> str:
    return f"w{port}"


# -- the HAProxy configuration


@dataclass
class Settings:
    """What the rendered HAProxy configuration depends on."""

    ports: list[int]
    bind: str = "127.0.0.1:8080"
    socket: str = "/run/haproxy/admin.sock"
    path: str = "/acp"
    maxconn: int = 4096
    per_address_connections: int = 100
    per_address_rate: int = 100
    server_maxconn: int = 5000
    log_level: str = "notice"


def render(settings: Settings, template: str | None = None) -> str:
    """The HAProxy configuration for ``settings`` (``haproxy.cfg.in`` filled in)."""
    text = TEMPLATE.read_text(encoding="utf-8") if template is None else template
    if not settings.ports or len(set(settings.ports)) != len(settings.ports):
        raise LaunchError(f"the worker ports must be distinct and at least one: {settings.ports}")
    servers = "\n".join(
        f"    server {server_name(port)} 127.0.0.1:{port} cookie {server_name(port)}" for port in settings.ports
    )
    values = {
        "BIND": settings.bind,
        "SOCKET": settings.socket,
        "PATH": settings.path,
        "MAXCONN": str(settings.maxconn),
        "PER_ADDRESS_CONNECTIONS": str(settings.per_address_connections),
        "PER_ADDRESS_RATE": str(settings.per_address_rate),
        "SERVER_MAXCONN": str(settings.server_maxconn),
        "LOG_LEVEL": settings.log_level,
        "SERVERS": servers,
    }
    for name, value in values.items():
        if name != "SERVERS" and (any(c in value for c in "\n#\"'") or not value or value.strip() != value):
            raise LaunchError(f"{name.lower()} {value!r} cannot go into an HAProxy configuration")
    rendered = re.sub(r"@([A-Z_]+)@", lambda m: values.get(m.group(1), m.group(0)), text)
    left = sorted(set(re.findall(r"@([A-Z_]+)@", rendered)))
    if left:
        raise LaunchError(f"the template names values the launcher does not know: {', '.join(left)}")
    return rendered


# -- HAProxy's runtime API (the stats socket)


class RuntimeApi:
    """One command per connection to HAProxy's stats socket (``level admin``)."""

    def __init__(self, path: str, timeout: float = 5.0) -> None:
        self.path = path
        self.timeout = timeout

    def command(self, line: str) -> str:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.settimeout(self.timeout)
            try:
                sock.connect(self.path)
            except OSError as error:
                raise LaunchError(f"HAProxy's runtime API at {self.path} does not answer: {error}") from None
            sock.sendall(line.encode() + b"\n")
            chunks = []
            while True:
                chunk = sock.recv(65536)
                if not chunk:
                    break
                chunks.append(chunk)
        return b"".join(chunks).decode(errors="replace")

    def servers(self) -> dict[str, dict[str, str]]:
        """The backend's servers by name: every column of ``show stat`` (``status``, ``scur``...)."""
        lines = self.command("show stat").splitlines()
        if not lines or not lines[0].startswith("# "):
            raise LaunchError(f"unexpected answer to 'show stat': {lines[:1]}")
        header = lines[0][2:].split(",")
        rows = (dict(zip(header, line.split(","), strict=False)) for line in lines[1:] if line)
        return {
            row["svname"]: row
            for row in rows
            if row.get("pxname") == BACKEND and row.get("svname") not in ("FRONTEND", "BACKEND")
        }

    def server(self, name: str) -> dict[str, str]:
        found = self.servers().get(name)
        if found is None:
            raise LaunchError(f"HAProxy has no server {BACKEND}/{name}")
        return found

    def held(self, name: str) -> int:
        """The connections HAProxy holds to ``name`` now (streams, tunnels, requests)."""
        row = self.server(name)
        return int(row.get("scur") or 0) + int(row.get("qcur") or 0)

    def set_state(self, name: str, state: str) -> None:
        answer = self.command(f"set server {BACKEND}/{name} state {state}").strip()
        if answer:
            raise LaunchError(f"set server {BACKEND}/{name} state {state}: {answer}")


def drain(api: RuntimeApi, name: str, wait: float) -> tuple[float, int]:
    """Put ``name`` in DRAIN (no new connections; those with a cookie or a stick entry still
    reach it), then wait until it holds none or ``wait`` seconds pass: (seconds, still held)."""
    api.set_state(name, "drain")
    start = time.monotonic()
    held = api.held(name)
    while held and time.monotonic() - start < wait:
        time.sleep(0.2)
        held = api.held(name)
    return time.monotonic() - start, held


# -- processes


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def answering(host: str, port: int, path: str, timeout: float, process: subprocess.Popen[bytes] | None = None) -> None:
    """Wait until an HTTP server answers on ``host:port`` (any status): a balancer started
    earlier would mark the worker down."""
    deadline = time.monotonic() + timeout
    while True:
        if process is not None and process.poll() is not None:
            raise LaunchError(f"the process on port {port} exited ({process.returncode}) before answering")
        connection = http.client.HTTPConnection(host, port, timeout=2)
        try:
            connection.request("GET", path)
            connection.getresponse().read()
            return
        except OSError:
            if time.monotonic() > deadline:
                raise LaunchError(f"nothing answered on {host}:{port} within {timeout:.0f} s") from None
            time.sleep(0.1)
        finally:
            connection.close()


def raise_file_limit() -> int:
    """The soft limit of open files raised to the hard one (the workers and HAProxy inherit it)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
        return hard
    return soft


@dataclass
class Worker:
    port: int
    pid: int = 0
    starts: int = 0
    process: subprocess.Popen[bytes] | None = field(default=None, repr=False)

    @property
    def name(self) -> str:
        return server_name(self.port)


class Launcher:
    """The process tree of ``run``."""

    def __init__(self, args: argparse.Namespace, settings: Settings, run_dir: Path) -> None:
        self.args = args
        self.settings = settings
        self.run_dir = run_dir
        self.workers = [Worker(port) for port in settings.ports]
        self.haproxy: subprocess.Popen[bytes] | None = None
        self.api = RuntimeApi(settings.socket)
        self.stopping = False
        self.rolling = False

    def say(self, text: str) -> None:
        print(f"launch: {text}", flush=True)

    def save(self, ready: bool) -> None:
        state = {
            "pid": os.getpid(),
            "ready": ready,
            "url": f"http://{self.settings.bind}{self.settings.path}",
            "bind": self.settings.bind,
            "socket": self.settings.socket,
            "haproxy_pid": self.haproxy.pid if self.haproxy else 0,
            "workers": [{"name": w.name, "port": w.port, "pid": w.pid, "starts": w.starts} for w in self.workers],
        }
        temporary = self.run_dir / (STATE + ".tmp")
        temporary.write_text(json.dumps(state, indent=2) + "\n", encoding="utf-8")
        os.replace(temporary, self.run_dir / STATE)

    def start_worker(self, worker: Worker) -> None:
        args = self.args
        command = [
            args.python, "-m", "uvicorn", args.app,
            "--host", "127.0.0.1", "--port", str(worker.port),
            "--ws-ping-interval", "10", "--ws-ping-timeout", "20", "--ws-max-size", str(WS_MAX_SIZE),
            "--ws-per-message-deflate", "false",
            "--timeout-keep-alive", "30", "--timeout-graceful-shutdown", str(args.grace_seconds),
            "--proxy-headers", "--forwarded-allow-ips", "127.0.0.1", "--no-access-log",
        ]  # fmt: skip
        if args.app_dir:
            command += ["--app-dir", args.app_dir]
        command += list(args.uvicorn_args)
        log = open(self.run_dir / f"{worker.name}.log", "ab")  # noqa: SIM115 - the child keeps it
        try:
            # a session of its own: a terminal's Ctrl-C reaches the launcher, which drains first
            worker.process = subprocess.Popen(
                command,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=log,
                start_new_session=True,
                env={**os.environ, "ACP_WORKER_PORT": str(worker.port)},  # the app may serve more beside it
            )
        finally:
            log.close()
        worker.pid = worker.process.pid
        worker.starts += 1
        answering("127.0.0.1", worker.port, self.settings.path, self.args.start_seconds, worker.process)

    def start_haproxy(self) -> None:
        config = self.run_dir / "haproxy.cfg"
        check = subprocess.run([self.args.haproxy, "-c", "-q", "-f", str(config)], capture_output=True, text=True)
        if check.returncode != 0:
            raise LaunchError(f"haproxy -c rejects {config}:\n{check.stdout}{check.stderr}")
        log = open(self.run_dir / "haproxy.log", "ab")  # noqa: SIM115 - the child keeps it
        try:
            self.haproxy = subprocess.Popen(
                [self.args.haproxy, "-W", "-db", "-f", str(config)],
                stdin=subprocess.DEVNULL, stdout=log, stderr=log, start_new_session=True,
            )  # fmt: skip
        finally:
            log.close()
        deadline = time.monotonic() + self.args.start_seconds
        while True:
            if self.haproxy.poll() is not None:
                raise LaunchError(f"haproxy exited ({self.haproxy.returncode}): see {self.run_dir / 'haproxy.log'}")
            with contextlib.suppress(LaunchError):
                rows = self.api.servers()
                if all(rows.get(w.name, {}).get("status") == "UP" for w in self.workers):
                    return
            if time.monotonic() > deadline:
                raise LaunchError(f"HAProxy did not report every worker UP within {self.args.start_seconds:.0f} s")
            time.sleep(0.1)

    def start(self) -> None:
        self.run_dir.mkdir(parents=True, exist_ok=True)
        (self.run_dir / "haproxy.cfg").write_text(render(self.settings), encoding="utf-8")
        self.save(ready=False)
        for worker in self.workers:
            self.start_worker(worker)
        self.start_haproxy()
        self.save(ready=True)
        names = ", ".join(f"{w.name} (pid {w.pid})" for w in self.workers)
        balancer = self.haproxy.pid if self.haproxy else 0
        self.say(f"serving http://{self.settings.bind}{self.settings.path} by {names}; HAProxy pid {balancer}")

    def stop_worker(self, worker: Worker) -> None:
        """SIGTERM, then uvicorn's graceful bound, then SIGKILL."""
        process = worker.process
        if process is None or process.poll() is not None:
            return
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(APP_DRAIN_SECONDS + self.args.grace_seconds + 5)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()

    def supervise(self) -> int:
        """Until SIGTERM/SIGINT: start again a worker that exited, roll on SIGHUP."""
        while not self.stopping:
            if self.haproxy is not None and self.haproxy.poll() is not None:
                self.say(f"HAProxy exited ({self.haproxy.returncode}): stopping")
                return 1
            if self.rolling:
                self.rolling = False
                self.roll()
            for worker in self.workers:
                if self.stopping or worker.process is None or worker.process.poll() is None:
                    continue
                self.say(f"{worker.name} exited ({worker.process.returncode}): starting it again")
                again = time.monotonic() + self.args.restart_delay
                while not self.stopping and time.monotonic() < again:
                    time.sleep(0.05)
                if not self.stopping:
                    self.restart(worker)
            time.sleep(0.1)
        return 0

    def restart(self, worker: Worker) -> None:
        try:
            self.start_worker(worker)
            self.api.set_state(worker.name, "ready")
        except LaunchError as error:
            self.say(f"{worker.name}: {error}")
        self.save(ready=True)

    def roll(self) -> None:
        for worker in self.workers:
            if self.stopping:
                return
            took, held = drain(self.api, worker.name, self.args.drain_seconds)
            self.say(f"rolling restart: {worker.name} drained in {took:.1f} s ({held} connections left)")
            self.stop_worker(worker)
            self.restart(worker)

    def stop(self) -> None:
        """Drain every worker (bounded), SIGTERM them, soft-stop HAProxy."""
        if self.haproxy is not None and self.haproxy.poll() is None:
            start = time.monotonic()
            with contextlib.suppress(LaunchError):
                for worker in self.workers:
                    self.api.set_state(worker.name, "drain")
                while time.monotonic() - start < self.args.drain_seconds:
                    if not sum(self.api.held(w.name) for w in self.workers):
                        break
                    time.sleep(0.2)
            self.say(f"drained for {time.monotonic() - start:.1f} s; stopping the workers")
        for worker in self.workers:
            if worker.process is not None and worker.process.poll() is None:
                worker.process.send_signal(signal.SIGTERM)
        for worker in self.workers:
            self.stop_worker(worker)
        if self.haproxy is not None and self.haproxy.poll() is None:
            self.haproxy.send_signal(signal.SIGUSR1)  # soft stop: ends when its sessions do
            try:
                self.haproxy.wait(5)
            except subprocess.TimeoutExpired:
                self.haproxy.terminate()
                self.haproxy.wait()
        with contextlib.suppress(OSError):
            os.unlink(self.settings.socket)
        self.save(ready=False)
        self.say("stopped")


def _check_run_dir(run_dir: Path) -> None:
    """Refuse a folder holding anything ``run`` did not write (it would replace it)."""
    if not run_dir.exists():
        return
    if not run_dir.is_dir():
        raise LaunchError(f"--run-dir {run_dir} is not a folder")
    foreign = sorted(p.name for p in run_dir.iterdir() if p.name not in OURS and not WORKER_LOG.fullmatch(p.name))
    if foreign:
        raise LaunchError(
            f"--run-dir {run_dir} holds files launch.py did not write ({', '.join(foreign[:5])}): "
            "name an empty or new folder"
        )
    state = run_dir / STATE
    if state.exists():
        previous = json.loads(state.read_text(encoding="utf-8"))
        if previous.get("ready") and _alive(int(previous.get("pid", 0))):
            raise LaunchError(f"a launcher (pid {previous['pid']}) still runs in {run_dir}")


def command_run(args: argparse.Namespace) -> int:
    if shutil.which(args.haproxy) is None:
        raise LaunchError(
            f"no {args.haproxy} on PATH: install HAProxy (Debian: apt-get install haproxy) or pass --haproxy"
        )
    run_dir = Path(args.run_dir).resolve()
    _check_run_dir(run_dir)
    raise_file_limit()
    settings = _settings(args, socket_path=str(run_dir / "haproxy.sock"))
    launcher = Launcher(args, settings, run_dir)

    def stop(signum: int, frame: Any) -> None:
        launcher.stopping = True

    def roll(signum: int, frame: Any) -> None:
        launcher.rolling = True

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    signal.signal(signal.SIGHUP, roll)
    code = 1
    try:
        launcher.start()
        code = launcher.supervise()
    finally:
        launcher.stop()
    return code


def _settings(args: argparse.Namespace, socket_path: str) -> Settings:
    ports = (
        [int(p) for p in args.worker_ports.split(",")]
        if args.worker_ports
        else [args.base_port + i for i in range(args.workers)]
    )
    return Settings(
        ports=ports,
        bind=args.bind,
        socket=socket_path,
        path=args.path,
        maxconn=args.maxconn,
        per_address_connections=args.per_address_connections,
        per_address_rate=args.per_address_rate,
        log_level=args.log_level,
    )


def _api(args: argparse.Namespace) -> RuntimeApi:
    if args.socket:
        return RuntimeApi(args.socket)
    return RuntimeApi(str(Path(args.run_dir).resolve() / "haproxy.sock"))


def command_drain(args: argparse.Namespace) -> int:
    took, held = drain(_api(args), server_name(args.port), args.wait)
    print(f"{server_name(args.port)}: drained for {took:.1f} s, {held} connections left")
    return 0


def command_ready(args: argparse.Namespace) -> int:
    _api(args).set_state(server_name(args.port), "ready")
    return 0


def command_status(args: argparse.Namespace) -> int:
    for name, row in sorted(_api(args).servers().items()):
        print(
            f"{name}  {row.get('status', '?'):<8} connections {row.get('scur', '?'):>5}  served {row.get('stot', '?')}"
        )
    return 0


def command_restart_worker(args: argparse.Namespace) -> int:
    """Drain (bounded), SIGTERM the worker, wait until it exited; the running launcher starts it again."""
    run_dir = Path(args.run_dir).resolve()
    state = json.loads((run_dir / STATE).read_text(encoding="utf-8"))
    pids = {w["port"]: w["pid"] for w in state["workers"]}
    if args.port not in pids:
        raise LaunchError(f"no worker on port {args.port} in {run_dir / STATE}")
    name, pid = server_name(args.port), pids[args.port]
    took, held = drain(_api(args), name, args.wait)
    print(f"{name}: drained for {took:.1f} s, {held} connections left; SIGTERM to pid {pid}", flush=True)
    start = time.monotonic()
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGTERM)
    while _alive(pid) and time.monotonic() - start < args.stop_seconds:
        time.sleep(0.05)
    if _alive(pid):
        raise LaunchError(f"{name} (pid {pid}) still runs {args.stop_seconds:.0f} s after SIGTERM")
    print(f"{name}: exited {time.monotonic() - start:.1f} s after SIGTERM", flush=True)
    return 0


def command_config(args: argparse.Namespace) -> int:
    sys.stdout.write(render(_settings(args, socket_path=args.socket or "/run/haproxy/admin.sock")))
    return 0


def _env(name: str, default: str) -> str:
    return os.environ.get(name, default)


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    commands = top.add_subparsers(dest="command", required=True)

    def balancer(sub: argparse.ArgumentParser) -> None:
        sub.add_argument(
            "--workers",
            type=int,
            default=int(_env("ACP_WORKERS", "2")),
            help="uvicorn processes (default 2; env ACP_WORKERS)",
        )
        sub.add_argument(
            "--base-port",
            type=int,
            default=int(_env("ACP_BASE_PORT", "8001")),
            help="the first worker's port; the others follow (default 8001)",
        )
        sub.add_argument(
            "--worker-ports",
            default=_env("ACP_WORKER_PORTS", ""),
            help="the workers' ports, comma-separated (instead of --workers/--base-port)",
        )
        sub.add_argument(
            "--bind",
            default=_env("ACP_BIND", "127.0.0.1:8080"),
            help="HAProxy's address:port (default 127.0.0.1:8080; env ACP_BIND)",
        )
        sub.add_argument("--path", default="/acp", help="the app's endpoint (default /acp)")
        sub.add_argument(
            "--maxconn",
            type=int,
            default=int(_env("ACP_MAXCONN", "4096")),
            help="HAProxy's connections at once (default 4096; needs about 2x file descriptors)",
        )
        sub.add_argument(
            "--per-address-connections",
            type=int,
            default=int(_env("ACP_PER_ADDRESS_CONNECTIONS", "100")),
            help="TCP connections one client address may hold (default 100)",
        )
        sub.add_argument(
            "--per-address-rate",
            type=int,
            default=int(_env("ACP_PER_ADDRESS_RATE", "100")),
            help="new TCP connections one address may open per 10 s (default 100)",
        )
        sub.add_argument("--log-level", default="notice", help="HAProxy's log level (info logs every request)")

    def reach(sub: argparse.ArgumentParser) -> None:
        sub.add_argument(
            "--run-dir", default=_env("ACP_RUN_DIR", "acp-run"), help="the folder of a running `run` (its haproxy.sock)"
        )
        sub.add_argument(
            "--socket",
            default=_env("ACP_HAPROXY_SOCKET", ""),
            help="HAProxy's runtime-API socket (instead of --run-dir)",
        )

    run = commands.add_parser("run", help="start N workers and HAProxy; drain and stop them on SIGTERM/SIGINT")
    balancer(run)
    run.add_argument(
        "--app",
        default=_env("ACP_APP", ""),
        required=not _env("ACP_APP", ""),
        help="the ASGI app, module:attribute (env ACP_APP)",
    )
    run.add_argument(
        "--app-dir", default=_env("ACP_APP_DIR", ""), help="a folder put first on the workers' import path"
    )
    run.add_argument(
        "--run-dir",
        default=_env("ACP_RUN_DIR", "acp-run"),
        help="where the config, socket, state and logs go (default ./acp-run; env ACP_RUN_DIR)",
    )
    run.add_argument(
        "--drain-seconds",
        type=float,
        default=float(_env("ACP_DRAIN_SECONDS", "30")),
        help="how long a stop waits for connections to leave a worker (default 30)",
    )
    run.add_argument(
        "--grace-seconds",
        type=int,
        default=int(_env("ACP_GRACE_SECONDS", "10")),
        help="uvicorn's --timeout-graceful-shutdown (default 10)",
    )
    run.add_argument(
        "--restart-delay", type=float, default=1.0, help="seconds before a worker that exited is started again"
    )
    run.add_argument(
        "--start-seconds", type=float, default=30.0, help="how long a worker or HAProxy may take to answer"
    )
    run.add_argument("--python", default=sys.executable, help="the Python that runs uvicorn (default: this one)")
    run.add_argument("--haproxy", default=_env("HAPROXY", "haproxy"), help="the haproxy executable")
    run.add_argument("uvicorn_args", nargs="*", help="after --: more uvicorn options for every worker")
    run.set_defaults(handler=command_run)

    config = commands.add_parser("config", help="print the HAProxy configuration for the workers")
    balancer(config)
    config.add_argument("--socket", default="", help="the runtime-API socket (default /run/haproxy/admin.sock)")
    config.set_defaults(handler=command_config)

    drain_ = commands.add_parser(
        "drain", help="stop new connections to the worker on PORT; wait until it holds none (bounded)"
    )
    drain_.add_argument("port", type=int)
    drain_.add_argument("--wait", type=float, default=60.0, help="seconds to wait at most (default 60)")
    reach(drain_)
    drain_.set_defaults(handler=command_drain)

    ready = commands.add_parser("ready", help="put the worker on PORT back into service")
    ready.add_argument("port", type=int)
    reach(ready)
    ready.set_defaults(handler=command_ready)

    restart = commands.add_parser(
        "restart-worker", help="drain the worker on PORT, SIGTERM it; a running `run` starts it again"
    )
    restart.add_argument("port", type=int)
    restart.add_argument("--wait", type=float, default=30.0, help="seconds the drain may take (default 30)")
    restart.add_argument(
        "--stop-seconds", type=float, default=30.0, help="seconds the worker may take to exit after SIGTERM"
    )
    reach(restart)
    restart.set_defaults(handler=command_restart_worker)

    status = commands.add_parser("status", help="each worker's state and connections, as HAProxy sees them")
    reach(status)
    status.set_defaults(handler=command_status)
    return top


def main(argv: Sequence[str] | None = None) -> int:
    args = parser().parse_args(argv)
    try:
        return int(args.handler(args))
    except LaunchError as error:
        print(f"launch: error: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
