"""T4: resident memory of a fresh process after importing the bindings, ours against the SDK.

Each sample is a fresh interpreter that imports one side's bindings and prints its ``VmRSS``.
Ours: what a client or an agent imports (``acp_bindings`` models, methods, interfaces,
dispatcher, connection and senders); theirs: ``import acp``, the SDK's public entry point.
A second pair of samples then reads every message of the realistic turn (as ``bench.read_path``
reads it), since models whose validators are built on first use grow later. The baselines: a
bare interpreter, and one that imports what any pydantic model needs (``BaseModel``,
``TypeAdapter``) and nothing else. Bytecode is cached as for P2.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from statistics import median

from bench.figures import Figure
from bench.generated import GENERATED, ROOT

_RSS = "\nimport re\nprint(re.search(r'VmRSS:\\s+(\\d+)', open('/proc/self/status').read()).group(1))\n"
_OURS = "import acp_bindings.models, acp_bindings.methods, acp_bindings.interfaces, acp_bindings.dispatch, "
_OURS += "acp_bindings.connection, acp_bindings.senders"
_READ = "\nfrom bench.corpus import load_turn\nfrom bench.read_path import {reader}\n{reader}(load_turn())()"
SCRIPTS = {
    "bare": "pass",
    "pydantic": "from pydantic import BaseModel, TypeAdapter",
    "ours": _OURS,
    "theirs": "import acp",
    "ours-read": _OURS + _READ.format(reader="ours_known"),
    "theirs-read": "import acp" + _READ.format(reader="theirs_known"),
}


def _sample(script: str, env: dict[str, str]) -> float:
    """MiB resident after ``script`` in a fresh interpreter."""
    done = subprocess.run([sys.executable, "-c", script + _RSS], cwd=ROOT, env=env, check=True,
                          capture_output=True, text=True)  # fmt: skip
    return int(done.stdout.split()[-1]) / 1024


def t4(rounds: int) -> list[Figure]:
    """MiB resident after import, and after reading the turn, ours against the SDK's (the memory
    target is against pydantic alone, P2)."""
    samples: dict[str, list[float]] = {name: [] for name in SCRIPTS}
    with tempfile.TemporaryDirectory(prefix="acpgen-bench-pycache-") as cache:
        env = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}
        env.update(PYTHONPYCACHEPREFIX=cache, PYTHONPATH=os.pathsep.join([str(GENERATED), str(ROOT)]))
        for _ in range(rounds + 1):  # the first round fills the bytecode cache and is dropped
            for name, script in SCRIPTS.items():
                samples[name].append(_sample(script, env))
    rss = {name: median(values[1:]) for name, values in samples.items()}
    base = (
        f"bare interpreter {rss['bare']:.1f} MiB, with pydantic's BaseModel imported {rss['pydantic']:.1f} MiB "
        f"({rss['pydantic'] / rss['theirs']:.2f}x the SDK's); targets against pydantic alone: P2"
    )
    return [
        Figure("T4 RSS of a fresh process after importing the bindings", rss["ours"], rss["theirs"], "MiB",
               "-", True, base),
        Figure("T4 RSS of a fresh process after import + reading the turn", rss["ours-read"],
               rss["theirs-read"], "MiB", "-", True, "method known, as T1 reads it"),
    ]  # fmt: skip
