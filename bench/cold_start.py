"""P2: a fresh process that imports the bindings and parses one notification: its time and its memory.

Five processes, run alternately: ours (``acp_bindings.models``), the official SDK's
(``acp.schema``), pydantic alone doing the same (import pydantic, create one two-field model,
read the same line: the floor under any pydantic bindings), one that only imports pydantic's
``BaseModel`` and ``TypeAdapter`` (subtracted from ours and the SDK's for the figure net of
pydantic, issue 33) and a bare interpreter. Each prints its ``VmRSS`` when done; ours and the
SDK's also the latency of the first message (the parse after the import, which builds the
validators deferred until then). The targets are against pydantic alone (issue 25, item 6): within 1.3x
of its time and 1.4x of its memory; the SDK's figures are the comparison users know.

Every process reads compiled bytecode, as after a normal install: the cache lives in a temporary
``PYTHONPYCACHEPREFIX`` that the warm-up round fills (``uv sync`` compiles nothing and this
machine sets ``PYTHONDONTWRITEBYTECODE``, so without it every side would be timed compiling its
sources on every start).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Callable
from statistics import median

from bench.corpus import load
from bench.figures import Figure
from bench.generated import GENERATED, bindings
from bench.timing import alternate

_RSS = "\nimport re\nprint(re.search(r'VmRSS:\\s+(\\d+)', open('/proc/self/status').read()).group(1))\n"
_BINDINGS = """
import sys, time
from {module} import SessionNotification
started = time.perf_counter()
SessionNotification.model_validate_json(sys.argv[1].encode())
print(time.perf_counter() - started)
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
_PYDANTIC_SHAPE = (
    _PYDANTIC_ALONE
    + """
import json
from pydantic import ConfigDict, Field, create_model
deferred = ConfigDict(defer_build=True, extra="allow")
kept = [
    create_model(f"Model{number}", __config__=deferred,
                 **{f"f{i}": (Any, Field(default=None, alias=f"a{i}")) for i in range(fields)})
    for number, fields in enumerate(json.loads(sys.argv[2]))
]
"""
)
"""The floor under bindings of our shape: pydantic alone, plus one deferred model per model class of ours
with as many fields (typed ``Any``, aliased): what pydantic itself holds for the classes the schema needs.
The classes are kept, as a module keeps its classes: a class nothing refers to is collected with its
pydantic objects (until issue 33's third round this floor let them go and read 2 MiB low)."""
_PYDANTIC_IMPORT = "from pydantic import BaseModel, TypeAdapter"
"""What every pydantic bindings import before their own work: subtracted for the net figures."""


def p2(rounds: int) -> list[Figure]:
    """Seconds for a fresh interpreter to import the bindings and parse one notification, and
    the MiB it then holds."""
    payload = load("session-update")[0].payload_bytes.decode()
    shape = json.dumps(_model_shape())
    rss: dict[str, list[float]] = {}
    first: dict[str, list[float]] = {}
    with tempfile.TemporaryDirectory(prefix="acpgen-bench-pycache-") as cache:
        env = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}
        env["PYTHONPYCACHEPREFIX"] = cache

        def process(name: str, script: str, extra: dict[str, str]) -> Callable[[], None]:
            full_env = {**env, **extra}
            samples = rss.setdefault(name, [])

            def run() -> None:
                done = subprocess.run([sys.executable, "-c", script + _RSS, payload, shape], check=True, env=full_env,
                                      capture_output=True, text=True)  # fmt: skip
                lines = done.stdout.split()
                samples.append(int(lines[-1]) / 1024)
                if len(lines) > 1:
                    first.setdefault(name, []).append(float(lines[0]))

            return run

        medians = alternate(
            {
                "ours": process("ours", _BINDINGS.format(module="acp_bindings.models"), {"PYTHONPATH": str(GENERATED)}),
                "theirs": process("theirs", _BINDINGS.format(module="acp.schema"), {}),
                "bare": process("bare", "pass", {}),
                "pydantic": process("pydantic", _PYDANTIC_ALONE, {}),
                "pydantic-import": process("pydantic-import", _PYDANTIC_IMPORT, {}),
                "pydantic-shape": process("pydantic-shape", _PYDANTIC_SHAPE, {}),
            },
            rounds,
        )
    memory = {name: median(values[1:]) for name, values in rss.items()}  # the warm-up round compiled
    latency = {name: median(values[1:]) for name, values in first.items()}
    return _figures(medians, memory, latency)


def _model_shape() -> list[int]:
    """How many fields each model class of ours has (the deferred classes the floor process creates)."""
    from pydantic import BaseModel

    models = bindings("models")
    classes = [value for value in vars(models).values() if isinstance(value, type) and issubclass(value, BaseModel)]
    return [len(cls.model_fields) for cls in classes if cls.__module__ == models.__name__]


def _figures(seconds: dict[str, float], mib: dict[str, float], first: dict[str, float]) -> list[Figure]:
    floor, sdk, imported = seconds["pydantic"], seconds["theirs"], seconds["pydantic-import"]
    net, net_sdk = seconds["ours"] - imported, sdk - imported
    return [
        Figure("P2 fresh process: import + parse one notification, vs pydantic alone", seconds["ours"], floor, "s",
               "<= 1.3x", seconds["ours"] / floor <= 1.3,
               f"bytecode cached; bare interpreter start {seconds['bare']:.3f} s included in both; reference: "
               "import pydantic, one two-field model, read the line"),
        Figure("P2 RSS of that process, vs pydantic alone", mib["ours"], mib["pydantic"], "MiB", "<= 1.4x",
               mib["ours"] / mib["pydantic"] <= 1.4, f"bare interpreter {mib['bare']:.1f} MiB"),
        Figure("P2 fresh process: import + parse one notification, vs the SDK", seconds["ours"], sdk, "s", "-", True,
               f"pydantic alone {floor / sdk:.2f}x of the SDK's time"),
        Figure("P2 fresh process, net of importing pydantic, vs the SDK", net, net_sdk, "s", "<= 0.25x",
               net / net_sdk <= 0.25,
               f"total {seconds['ours'] / sdk:.2f}x; importing pydantic's BaseModel and TypeAdapter alone: "
               f"{imported:.3f} s, subtracted from both; floor, pydantic creating deferred models of our shape: "
               f"{seconds['pydantic-shape'] - imported:.3f} s net", (seconds["pydantic-shape"] - imported) / net_sdk),
        Figure("P2 RSS of that process (import + first parse), vs the SDK", mib["ours"], mib["theirs"], "MiB",
               "<= 0.75x", mib["ours"] / mib["theirs"] <= 0.75,
               f"pydantic alone {mib['pydantic'] / mib['theirs']:.2f}x of the SDK's; importing pydantic alone "
               f"{mib['pydantic-import']:.1f} MiB ({mib['pydantic-import'] / mib['theirs']:.2f}x); floor, pydantic "
               f"holding deferred models of our shape: {mib['pydantic-shape']:.1f} MiB "
               f"({mib['pydantic-shape'] / mib['theirs']:.2f}x)", mib["pydantic-shape"] / mib["theirs"]),
        Figure("P2 the first message's latency after the import, vs the SDK", first["ours"] * 1e3,
               first["theirs"] * 1e3, "ms", "-", True,
               "SessionNotification.model_validate_json of the first line: builds what was deferred"),
    ]  # fmt: skip
