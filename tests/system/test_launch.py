"""``deploy/launch.py`` itself (issue 32, item 2): the HAProxy configuration it renders is one
HAProxy accepts, it refuses what it cannot do with a clear error and exit 2, it never writes
into a folder holding files of someone else, and its process tree stops gracefully (SIGTERM) and
restarts its workers one at a time (SIGHUP), leaving no process behind.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from deploy.launch import LaunchError, Settings, render
from tests.support.deploy import LAUNCH, Stack

pytestmark = pytest.mark.slow


def launch(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(LAUNCH), *args], capture_output=True, text=True, timeout=60, check=False, cwd=cwd
    )


def test_the_rendered_configuration_is_valid_for_haproxy(haproxy: str, tmp_path: Path) -> None:
    done = launch("config", "--worker-ports", "8001,8002,8003", "--bind", "127.0.0.1:8080", "--socket", "/tmp/x.sock")
    assert done.returncode == 0, done.stderr
    text = done.stdout
    for port in (8001, 8002, 8003):
        assert f"    server w{port} 127.0.0.1:{port} cookie w{port}\n" in text
    assert "@" not in text.replace("@NAME@", "")
    path = tmp_path / "haproxy.cfg"
    path.write_text(text, encoding="utf-8")
    check = subprocess.run([haproxy, "-c", "-f", str(path)], capture_output=True, text=True, check=False)
    assert check.returncode == 0, check.stdout + check.stderr


@pytest.mark.parametrize(
    ("settings", "said"),
    [
        (Settings(ports=[]), "at least one"),
        (Settings(ports=[8001, 8001]), "distinct"),
        (Settings(ports=[8001], bind="127.0.0.1:80 # x"), "bind"),
        (Settings(ports=[8001], socket="/run/a\nb"), "socket"),
    ],
)
def test_what_cannot_go_into_the_configuration_is_refused(settings: Settings, said: str) -> None:
    with pytest.raises(LaunchError, match=said):
        render(settings)


def test_a_template_naming_an_unknown_value_is_refused() -> None:
    with pytest.raises(LaunchError, match="WHATEVER"):
        render(Settings(ports=[8001]), "bind @BIND@\n@WHATEVER@\n")


def test_run_refuses_a_folder_holding_other_files(haproxy: str, tmp_path: Path) -> None:
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "notes.txt").write_text("keep me", encoding="utf-8")
    done = launch("run", "--app", "x:app", "--run-dir", str(folder), "--haproxy", haproxy)
    assert done.returncode == 2
    assert "holds files launch.py did not write (notes.txt)" in done.stderr
    assert sorted(p.name for p in folder.iterdir()) == ["notes.txt"]
    assert (folder / "notes.txt").read_text(encoding="utf-8") == "keep me"


def test_run_without_haproxy_says_so(tmp_path: Path) -> None:
    done = launch("run", "--app", "x:app", "--run-dir", str(tmp_path / "run"), "--haproxy", "no-such-haproxy")
    assert done.returncode == 2
    assert "no no-such-haproxy on PATH: install HAProxy" in done.stderr
    assert not (tmp_path / "run").exists()


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


def test_sighup_restarts_each_worker_and_sigterm_stops_everything(haproxy: str, tmp_path: Path) -> None:
    running = Stack(tmp_path, haproxy, drain_seconds=2).start()
    try:
        before = {w.port: w.pid for w in running.workers()}
        assert running.process is not None
        running.process.send_signal(signal.SIGHUP)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            after = {w.port: w.pid for w in running.workers()}
            if all(after[p] != before[p] for p in before) and all(running.status(p) == "UP" for p in after):
                break
            time.sleep(0.2)
        assert all(after[p] != before[p] for p in before), f"not every worker was restarted: {before} -> {after}"
        for port, pid in after.items():
            assert running.worker(port)["pid"] == pid
        state = running.state()
        pids = [*after.values(), state["haproxy_pid"]]
    finally:
        output = running.stop()
    assert running.process is not None and running.process.returncode == 0, output
    assert "rolling restart" in output and "drained for" in output and "launch: stopped" in output, output
    assert all(_gone(pid) for pid in pids), f"processes left: {[p for p in pids if not _gone(p)]}"
    assert not running.state()["ready"]
