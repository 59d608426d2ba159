"""The npm packages that tests read offline, in a cache folder of the repository.

``make test`` fills it first (``make test-npm-cache``, which runs ``python -m tests.support.npm_cache``;
the network is needed once, later runs find everything cached): the dependencies pinned in
``tests/interop/package.json`` (what ``npm install --package-lock-only`` resolves when a bump moves
the SDK there), and the SDK at the versions the README's ``acpgen diff`` examples name and at
:data:`ROUND_TRIP`. The tests then run npm with :func:`offline_env`: from this cache, never the
network.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CACHE = ROOT / ".test-artefacts" / "npm-cache"
SDK = "@agentclientprotocol/sdk"
ROUND_TRIP = "2.2.0"
"""The version tests/system/test_bump.py bumps to and back from: published, and its schema differs from the pin's."""
FILL = "run `make test-npm-cache` (fills .test-artefacts/npm-cache; needs the network once)"

_README_DIFF = re.compile(r"^acpgen diff (\d+\.\d+\.\d+)\b", re.MULTILINE)


def readme_diff_versions() -> list[str]:
    """The npm versions the README's ``acpgen diff VERSION`` examples compare with the pin."""
    return sorted(set(_README_DIFF.findall((ROOT / "README.md").read_text(encoding="utf-8"))))


def specs() -> list[str]:
    """Every ``name@version`` the cache must hold."""
    manifest = json.loads((ROOT / "tests" / "interop" / "package.json").read_text(encoding="utf-8"))
    pinned = {**manifest.get("dependencies", {}), **manifest.get("devDependencies", {})}
    found = {f"{name}@{version}" for name, version in pinned.items()}
    found |= {f"{SDK}@{version}" for version in (ROUND_TRIP, *readme_diff_versions())}
    return sorted(found)


def offline_env(base: dict[str, str] | None = None) -> dict[str, str]:
    """``base`` (default: this environment) with npm reading this cache only."""
    return {**(os.environ if base is None else base), "npm_config_cache": str(CACHE), "npm_config_offline": "true"}


def main() -> int:
    command = ["npm", "cache", "add", "--cache", str(CACHE), "--prefer-offline", "--no-audit", "--no-fund", *specs()]
    done = subprocess.run(command, cwd=ROOT, check=False)
    if done.returncode != 0:
        print(f"tests.support.npm_cache: `{' '.join(command)}` failed (exit {done.returncode})", file=sys.stderr)
    return done.returncode


if __name__ == "__main__":
    raise SystemExit(main())
