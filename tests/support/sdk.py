"""The pinned TypeScript SDK of the interop and differential tests, and the node that runs it.

It is installed in ``tests/interop/node_modules`` by ``make interop-deps`` (``make test`` runs it
first); the tests themselves are offline. A missing SDK is a failure, never a skip.
"""

from __future__ import annotations

import functools
import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from acpgen.load.lock import read_lock

ROOT = Path(__file__).resolve().parents[2]
INTEROP = ROOT / "tests" / "interop"
SDK_NAME = "@agentclientprotocol/sdk"
SDK_VERSION = read_lock(ROOT / "schema").version
"""The pinned schema's package version: tests/interop/package.json pins the same SDK (`make bump` moves
both; tests/system/test_pins.py checks that they agree)."""
INSTALLED_SDK = INTEROP / "node_modules" / "@agentclientprotocol" / "sdk" / "package.json"
FIX = "run `make interop-deps` (npm ci --prefix tests/interop --no-audit --no-fund; needs the network once)"


@functools.cache
def node() -> str:
    """The node executable, with the pinned SDK installed; the calling test fails (never skips) otherwise."""
    executable = shutil.which("node")
    if executable is None:
        pytest.fail("the interop tests need Node.js >= 20 on PATH (and then `make interop-deps`)")
    version = subprocess.run([executable, "--version"], capture_output=True, text=True, check=True).stdout.strip()
    major = re.match(r"v(\d+)\.", version)
    if major is None or int(major.group(1)) < 20:
        pytest.fail(f"the interop tests need Node.js >= 20, found {version!r} at {executable}")
    if not INSTALLED_SDK.is_file():
        pytest.fail(
            f"the TypeScript SDK {SDK_NAME}@{SDK_VERSION} is not installed in tests/interop/node_modules: {FIX}"
        )
    installed = json.loads(INSTALLED_SDK.read_text(encoding="utf-8"))["version"]
    if installed != SDK_VERSION:
        pinned = json.loads((INTEROP / "package.json").read_text(encoding="utf-8"))["dependencies"].get(SDK_NAME)
        fix = (
            FIX
            if pinned == SDK_VERSION
            else f"tests/interop/package.json pins {pinned}: run `make bump VERSION={SDK_VERSION}`"
        )
        pytest.fail(
            f"tests/interop/node_modules holds {SDK_NAME}@{installed}, the schema lock pins {SDK_VERSION}: {fix}"
        )
    return executable
