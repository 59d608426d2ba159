"""HAProxy for the deployment test (issue 32): one decision for ``make deploy-deps`` and
``tests/system/test_deploy.py``, so that they agree (the same shape as ``find_browser.py``).

1. ``$HAPROXY``: a path to an executable, or a command on ``PATH``; naming neither is an error.
2. Else ``haproxy`` on ``PATH`` (Debian installs it in ``/usr/sbin``, which is searched too).
3. Else none: ``--install`` installs Debian's ``haproxy`` with ``apt-get`` where ``apt-get``
   exists and this process is root; anywhere else it prints one line saying how to enable the
   test, and the test is skipped with that line.

    python3 tests/support/find_haproxy.py            HAProxy's path (exit 0), or why there is none (exit 1)
    python3 tests/support/find_haproxy.py --install  what make deploy-deps runs: exit 0 with or without
                                             HAProxy; 2 for a HAPROXY naming no executable, 1 when
                                             an apt-get install fails

Standard library only, Python 3.8+: ``make`` runs it with the system's ``python3``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

SBIN = ("/usr/local/sbin", "/usr/sbin", "/sbin")
"""Where Debian puts haproxy: searched after PATH (a user's PATH often lacks the sbin folders)."""
APT_INSTALL = ["apt-get", "install", "-y", "-qq", "--no-install-recommends", "haproxy"]


@dataclass(frozen=True)
class Found:
    """HAProxy to run."""

    path: str


@dataclass(frozen=True)
class Missing:
    """No HAProxy: the line that says so and how to enable the test."""

    reason: str


@dataclass(frozen=True)
class Wrong:
    """``HAPROXY`` is set but names no executable: an error, never a skip."""

    reason: str


def _how_to_enable(search_path: str) -> str:
    if sys.platform == "darwin":
        return "install HAProxy (brew install haproxy) or set HAPROXY=/path/to/haproxy"
    if shutil.which("apt-get", path=search_path):
        return "install haproxy (apt-get install haproxy, as root) or set HAPROXY=/path/to/haproxy"
    return "install HAProxy 2.6 or later, or set HAPROXY=/path/to/haproxy"


def find(environ: Mapping[str, str] | None = None, folders: Sequence[str] | None = None) -> Found | Missing | Wrong:
    """The HAProxy that ``environ`` (default: this process's environment) points at or has on its PATH,
    else in ``folders`` (default: ``SBIN``)."""
    environ = os.environ if environ is None else environ
    folders = SBIN if folders is None else folders
    search_path = environ.get("PATH", os.defpath)
    value = environ.get("HAPROXY", "")
    if value:
        if os.sep in value or (os.altsep is not None and os.altsep in value):
            located = value if os.path.isfile(value) and os.access(value, os.X_OK) else None
        else:
            located = shutil.which(value, path=search_path)
        if located is None:
            return Wrong(f"HAPROXY={value} names no executable file: point it at a haproxy binary, or unset it")
        return Found(located)
    located = shutil.which("haproxy", path=os.pathsep.join([search_path, *folders]))
    if located is not None:
        return Found(located)
    return Missing(
        "the deployment test is skipped: no HAProxy (HAPROXY is unset and haproxy is neither on PATH "
        f"nor in {', '.join(folders) or 'another folder'}); to run it, {_how_to_enable(search_path)}"
    )


def can_install() -> bool:
    """Whether ``--install`` may install Debian's haproxy here: apt-get exists and we are root."""
    return shutil.which("apt-get") is not None and hasattr(os, "geteuid") and os.geteuid() == 0


def main(argv: list[str]) -> int:
    install = argv == ["--install"]
    if argv and not install:
        print("usage: python3 tests/support/find_haproxy.py [--install]", file=sys.stderr)
        return 2
    found = find()
    if isinstance(found, Wrong):
        print(f"find_haproxy: error: {found.reason}", file=sys.stderr)
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
    print("no HAProxy for the deployment test: installing Debian's haproxy (apt-get, as root)", flush=True)
    environ = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    for command in (["apt-get", "update", "-qq"], APT_INSTALL):
        done = subprocess.run(command, env=environ, check=False)
        if done.returncode != 0:
            print(f"find_haproxy: error: {' '.join(command)} failed (exit {done.returncode})", file=sys.stderr)
            return 1
    after = find()
    if not isinstance(after, Found):
        print(
            "find_haproxy: error: apt-get installed haproxy, but it is neither on PATH nor in "
            f"{', '.join(SBIN)}: set HAPROXY=/path/to/haproxy",
            file=sys.stderr,
        )
        return 1
    print(after.path)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
