"""The browser lookup of ``make browser-deps`` and the trace viewer's browser test (issue 30).

``tests/support/find_browser.py`` decides for both: ``CHROMIUM`` (a path or a command), else chromium,
chromium-browser, google-chrome, google-chrome-stable on PATH; without one, ``--install`` installs
Debian's chromium only where apt-get exists and it runs as root, and otherwise prints the line
that the skipped test reports. Real processes with a PATH of fake executables; the fake apt-get
records its arguments and never touches the system.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.find_browser import CANDIDATES, Found, Missing, Wrong, find

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "tests" / "support" / "find_browser.py"
ROOTED = hasattr(os, "geteuid") and os.geteuid() == 0


def executable(folder: Path, name: str, body: str = "#!/bin/sh\nexit 0\n") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(body, encoding="utf-8")
    path.chmod(0o755)
    return path


def run(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    """The script as make runs it, with exactly ``env`` (no CHROMIUM unless given)."""
    return subprocess.run(
        [sys.executable, str(SCRIPT), *args], env=env, capture_output=True, text=True, timeout=60, check=False
    )


def test_chromium_wins_over_what_is_on_path(tmp_path: Path) -> None:
    mine = executable(tmp_path / "opt", "my-chrome")
    executable(tmp_path / "bin", "chromium")
    assert find({"CHROMIUM": str(mine), "PATH": str(tmp_path / "bin")}) == Found(str(mine))


def test_chromium_may_name_a_command_on_path(tmp_path: Path) -> None:
    chrome = executable(tmp_path / "bin", "google-chrome-beta")
    assert find({"CHROMIUM": "google-chrome-beta", "PATH": str(tmp_path / "bin")}) == Found(str(chrome))


@pytest.mark.parametrize("value", ["/nowhere/chromium", "not-a-browser", "plain-file"])
def test_a_chromium_naming_no_executable_is_an_error(tmp_path: Path, value: str) -> None:
    (tmp_path / "plain-file").write_text("not executable", encoding="utf-8")
    if value == "plain-file":
        value = str(tmp_path / "plain-file")
    found = find({"CHROMIUM": value, "PATH": str(tmp_path)})
    assert isinstance(found, Wrong) and f"CHROMIUM={value} names no executable file" in found.reason


@pytest.mark.parametrize("present", [CANDIDATES[i:] for i in range(len(CANDIDATES))], ids=CANDIDATES)
def test_the_first_browser_on_path_in_order(tmp_path: Path, present: tuple[str, ...]) -> None:
    for name in reversed(present):  # one folder each, the last candidate first on PATH
        executable(tmp_path / name, name)
    search = os.pathsep.join(str(tmp_path / name) for name in reversed(present))
    assert find({"PATH": search}) == Found(str(tmp_path / present[0] / present[0]))


def test_without_a_browser_the_reason_says_how_to_enable_the_test(tmp_path: Path) -> None:
    found = find({"PATH": str(tmp_path)})
    assert isinstance(found, Missing)
    assert "browser test is skipped" in found.reason and "CHROMIUM=" in found.reason
    assert all(name in found.reason for name in CANDIDATES) and "\n" not in found.reason


def test_make_goes_on_without_a_browser_or_apt_get(tmp_path: Path) -> None:
    """macOS, or any machine without apt-get: one line, exit 0, nothing installed."""
    done = run({"PATH": str(tmp_path)}, "--install")
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout.splitlines() == [find({"PATH": str(tmp_path)}).reason]  # type: ignore[union-attr]


def test_apt_get_only_as_root(tmp_path: Path) -> None:
    """With apt-get on PATH: as root it installs (the fake apt-get puts a chromium beside itself);
    as anyone else it runs nothing and prints the skip line (which then names apt-get)."""
    bin_folder = tmp_path / "bin"
    log = tmp_path / "apt-get.log"
    body = (
        f"#!{sys.executable}\n"
        "import os, sys\n"
        f"open({str(log)!r}, 'a').write(' '.join(sys.argv[1:]) + ' DEBIAN_FRONTEND=' + "
        "os.environ.get('DEBIAN_FRONTEND', '') + '\\n')\n"
        "if 'install' in sys.argv:\n"
        f"    path = {str(bin_folder / 'chromium')!r}\n"
        "    open(path, 'w').write('#!/bin/sh\\n')\n"
        "    os.chmod(path, 0o755)\n"
    )
    executable(bin_folder, "apt-get", body)
    done = run({"PATH": str(bin_folder)}, "--install")
    assert done.returncode == 0, done.stderr
    if ROOTED:
        assert log.read_text(encoding="utf-8").splitlines() == [
            "update -qq DEBIAN_FRONTEND=noninteractive",
            "install -y -qq --no-install-recommends chromium DEBIAN_FRONTEND=noninteractive",
        ]
        lines = done.stdout.splitlines()
        assert "installing Debian's chromium" in lines[0] and lines[-1] == str(bin_folder / "chromium")
    else:
        assert not log.exists()
        assert done.stdout.splitlines() == [find({"PATH": str(bin_folder)}).reason]  # type: ignore[union-attr]
        assert sys.platform == "darwin" or "apt-get install chromium, as root" in done.stdout


@pytest.mark.skipif(not ROOTED, reason="only root runs apt-get, so only as root can it fail")
@pytest.mark.parametrize(
    ("script", "said"),
    [
        ("#!/bin/sh\nexit 100\n", "apt-get update -qq failed (exit 100)"),
        ("#!/bin/sh\nexit 0\n", "apt-get installed chromium, but none of chromium, chromium-browser"),
    ],
    ids=["apt-get-fails", "nothing-on-path-after"],
)
def test_a_failed_install_fails_make(tmp_path: Path, script: str, said: str) -> None:
    executable(tmp_path / "bin", "apt-get", script)
    done = run({"PATH": str(tmp_path / "bin")}, "--install")
    assert done.returncode == 1 and f"find_browser: error: {said}" in done.stderr


def test_a_wrong_chromium_stops_make(tmp_path: Path) -> None:
    done = run({"PATH": str(tmp_path), "CHROMIUM": "/nowhere/chromium"}, "--install")
    assert done.returncode == 2
    assert done.stderr.startswith("find_browser: error: CHROMIUM=/nowhere/chromium names no executable file")


@pytest.mark.slow
def test_without_a_browser_the_trace_viewer_test_is_a_skip_with_its_reason(tmp_path: Path) -> None:
    """The real test, run by pytest with no browser to find: reported as skipped, never passed,
    with the line that says how to enable it."""
    env = {k: v for k, v in os.environ.items() if k not in {"CHROMIUM", "PYTEST_XDIST_WORKER", "PYTEST_ADDOPTS"}}
    env["PATH"] = str(tmp_path)
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist", "-rs",
         f"--basetemp={tmp_path / 'inner'}",
         "tests/runtime/test_trace_viewer.py::test_html_transcript_in_a_real_browser"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 skipped" in done.stdout and "passed" not in done.stdout, done.stdout
    assert "the trace viewer's browser test is skipped: no browser" in done.stdout, done.stdout
    assert "or set CHROMIUM=" in done.stdout


@pytest.mark.slow
def test_with_a_wrong_chromium_the_trace_viewer_test_fails(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k not in {"PYTEST_XDIST_WORKER", "PYTEST_ADDOPTS"}}
    env["CHROMIUM"] = str(tmp_path / "no-such-browser")
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist",
         f"--basetemp={tmp_path / 'inner'}",
         "tests/runtime/test_trace_viewer.py::test_html_transcript_in_a_real_browser"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 1 and "1 error" in done.stdout, done.stdout
    assert f"CHROMIUM={tmp_path / 'no-such-browser'} names no executable file" in done.stdout
