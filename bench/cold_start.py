"""P2: a fresh process that imports the bindings and parses one notification: its time and its memory.

Four processes, run alternately: ours (``acp_bindings.models``), the official SDK's
(``acp.schema``), pydantic alone doing the same (import pydantic, create one two-field model,
read the same line: the floor under any pydantic bindings) and a bare interpreter. Each prints
its ``VmRSS`` when done. The targets are against pydantic alone (issue 25, item 6): within 1.3x
of its time and 1.4x of its memory; the SDK's figures are the comparison users know.

Every process reads compiled bytecode, as after a normal install: the cache lives in a temporary
``PYTHONPYCACHEPREFIX`` that the warm-up round fills (``uv sync`` compiles nothing and this
machine sets ``PYTHONDONTWRITEBYTECODE``, so without it every side would be timed compiling its
sources on every start).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from collections.abc import Callable
from statistics import median

from bench.corpus import load
from bench.figures import Figure
from bench.generated import GENERATED
from bench.timing import alternate

_RSS = "\nimport re\nprint(re.search(r'VmRSS:\\s+(\\d+)', open('/proc/self/status').read()).group(1))\n"
_BINDINGS = """
import sys
from {module} import SessionNotification
SessionNotification.model_validate_json(sys.argv[1].encode())
"""
_PYDANTIC_ALONE = """
import sys
from typing import Any
from pydantic import BaseModel
class SessionNotification(BaseModel):
    sessionId: str
    update: dict[str, Any]
SessionNotification.model_validate_json(sys.argv[1].encode())
"""
"""The floor under any pydantic bindings: import pydantic, create one model, read the same line."""


def p2(rounds: int) -> list[Figure]:
    """Seconds for a fresh interpreter to import the bindings and parse one notification, and
    the MiB it then holds."""
    payload = load("session-update")[0].payload_bytes.decode()
    rss: dict[str, list[float]] = {}
    with tempfile.TemporaryDirectory(prefix="acpgen-bench-pycache-") as cache:
        env = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}
        env["PYTHONPYCACHEPREFIX"] = cache

        def process(name: str, script: str, extra: dict[str, str]) -> Callable[[], None]:
            full_env = {**env, **extra}
            samples = rss.setdefault(name, [])

            def run() -> None:
                done = subprocess.run([sys.executable, "-c", script + _RSS, payload], check=True, env=full_env,
                                      capture_output=True, text=True)  # fmt: skip
                samples.append(int(done.stdout.split()[-1]) / 1024)

            return run

        medians = alternate(
            {
                "ours": process("ours", _BINDINGS.format(module="acp_bindings.models"), {"PYTHONPATH": str(GENERATED)}),
                "theirs": process("theirs", _BINDINGS.format(module="acp.schema"), {}),
                "bare": process("bare", "pass", {}),
                "pydantic": process("pydantic", _PYDANTIC_ALONE, {}),
            },
            rounds,
        )
    memory = {name: median(values[1:]) for name, values in rss.items()}  # the warm-up round compiled
    return _figures(medians, memory)


def _figures(seconds: dict[str, float], mib: dict[str, float]) -> list[Figure]:
    floor, sdk = seconds["pydantic"], seconds["theirs"]
    return [
        Figure("P2 fresh process: import + parse one notification, vs pydantic alone", seconds["ours"], floor, "s",
               "<= 1.3x", seconds["ours"] / floor <= 1.3,
               f"bytecode cached; bare interpreter start {seconds['bare']:.3f} s included in both; reference: "
               "import pydantic, one two-field model, read the line"),
        Figure("P2 RSS of that process, vs pydantic alone", mib["ours"], mib["pydantic"], "MiB", "<= 1.4x",
               mib["ours"] / mib["pydantic"] <= 1.4, f"bare interpreter {mib['bare']:.1f} MiB"),
        Figure("P2 fresh process: import + parse one notification, vs the SDK", seconds["ours"], sdk, "s", "-", True,
               f"pydantic alone {floor / sdk:.2f}x of the SDK's time"),
        Figure("P2 RSS of that process, vs the SDK", mib["ours"], mib["theirs"], "MiB", "-", True,
               f"pydantic alone {mib['pydantic'] / mib['theirs']:.2f}x of the SDK's"),
    ]  # fmt: skip
