"""The browser for the trace viewer's browser test: one decision for ``make browser-deps`` and
``tests/runtime/test_trace_viewer.py``, so that they agree.

1. ``$CHROMIUM``: a path to an executable, or a command on ``PATH``; naming neither is an error.
2. Else the first of ``chromium``, ``chromium-browser``, ``google-chrome``, ``google-chrome-stable``
   on ``PATH``.
3. Else none: ``--install`` installs Debian's ``chromium`` with ``apt-get`` where ``apt-get`` exists
   and this process is root; anywhere else it prints one line saying how to enable the test, and
   the test is skipped with that line.

    python3 tests/support/find_browser.py            the browser's path (exit 0), or why there is none (exit 1)
    python3 tests/support/find_browser.py --install  what make browser-deps runs: exit 0 with or without a
                                             browser; 2 for a CHROMIUM naming no executable, 1 when
                                             an apt-get install fails

Standard library only, Python 3.8+: ``make`` runs it with the system's ``python3``, before any virtual
environment exists (macOS ships 3.9).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import dataclass

CANDIDATES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
MAC_CHROME = "/Applications/Google Chrome.app/Contents/MacOS/Google Chrome"
APT_INSTALL = ["apt-get", "install", "-y", "-qq", "--no-install-recommends", "chromium"]


@dataclass(frozen=True)
class Found:
    """The browser to run."""

    path: str


@dataclass(frozen=True)
class Missing:
    """No browser: the line that says so and how to enable the test."""

    reason: str


@dataclass(frozen=True)
class Wrong:
    """``CHROMIUM`` is set but names no executable: an error, never a skip."""

    reason: str


def _how_to_enable(search_path: str | None) -> str:
    if sys.platform == "darwin":
        return f"install Chromium or Google Chrome, or set CHROMIUM='{MAC_CHROME}'"
    if shutil.which("apt-get", path=search_path):
        return "install chromium (apt-get install chromium, as root) or set CHROMIUM=/path/to/chrome"
    return "install chromium or Google Chrome, or set CHROMIUM=/path/to/chrome"


def find(environ: Mapping[str, str] | None = None) -> Found | Missing | Wrong:
    """The browser that ``environ`` (default: this process's environment) points at or has on its PATH."""
    environ = os.environ if environ is None else environ
    search_path = environ.get("PATH", os.defpath)
    value = environ.get("CHROMIUM", "")
    if value:
        if os.sep in value or (os.altsep is not None and os.altsep in value):
            located = value if os.path.isfile(value) and os.access(value, os.X_OK) else None
        else:
            located = shutil.which(value, path=search_path)
        if located is None:
            return Wrong(
                f"CHROMIUM={value} names no executable file: point it at a Chromium or Chrome binary, or unset it"
            )
        return Found(located)
    for name in CANDIDATES:
        located = shutil.which(name, path=search_path)
        if located is not None:
            return Found(located)
    return Missing(
        "the trace viewer's browser test is skipped: no browser (CHROMIUM is unset and none of "
        f"{', '.join(CANDIDATES)} is on PATH); to run it, {_how_to_enable(search_path)}"
    )


def can_install() -> bool:
    """Whether ``--install`` may install Debian's chromium here: apt-get exists and we are root."""
    return shutil.which("apt-get") is not None and hasattr(os, "geteuid") and os.geteuid() == 0


def main(argv: list[str]) -> int:
    install = argv == ["--install"]
    if argv and not install:
        print("usage: python3 tests/support/find_browser.py [--install]", file=sys.stderr)
        return 2
    found = find()
    if isinstance(found, Wrong):
        print(f"find_browser: error: {found.reason}", file=sys.stderr)
        return 2
    if isinstance(found, Found):
        print(found.path)
        return 0
    if not install:
        print(found.reason)
        return 1
    if not can_install():
        print(found.reason)
        return 0
    print("no browser for the trace viewer's browser test: installing Debian's chromium (apt-get, as root)", flush=True)
    environ = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    for command in (["apt-get", "update", "-qq"], APT_INSTALL):
        done = subprocess.run(command, env=environ, check=False)
        if done.returncode != 0:
            print(f"find_browser: error: {' '.join(command)} failed (exit {done.returncode})", file=sys.stderr)
            return 1
    after = find()
    if not isinstance(after, Found):
        print(
            "find_browser: error: apt-get installed chromium, but none of "
            f"{', '.join(CANDIDATES)} is on PATH: add its folder to PATH or set CHROMIUM=/path/to/chromium",
            file=sys.stderr,
        )
        return 1
    print(after.path)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
