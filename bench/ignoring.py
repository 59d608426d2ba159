"""The generated stable bindings as they would be without keeping unknown members: the reference of
what keeping them costs (issue 25, item 3).

A copy of ``generated/acp_bindings`` is imported as ``acp_bindings_ignoring`` from a temporary
folder, and before any of its models is built (they defer building), every model that keeps the
members the schema does not name (``extra="allow"``) is set to drop them (``extra="ignore"``),
pydantic's default. Everything else is the same code.
"""

from __future__ import annotations

import atexit
import importlib
import shutil
import sys
import tempfile
from pathlib import Path
from types import ModuleType
from typing import Any

from pydantic import BaseModel

from bench.generated import GENERATED

PACKAGE = "acp_bindings_ignoring"


def ignoring(module: str) -> ModuleType:
    """``acp_bindings_ignoring.<module>``: the stable bindings whose models drop unknown members."""
    if PACKAGE not in sys.modules:
        folder = Path(tempfile.mkdtemp(prefix="acpgen-bench-ignoring-"))
        atexit.register(shutil.rmtree, folder, True)
        shutil.copytree(GENERATED / "acp_bindings", folder / PACKAGE)
        sys.path.insert(0, str(folder))
        models = importlib.import_module(f"{PACKAGE}.models")
        for value in vars(models).values():
            if isinstance(value, type) and issubclass(value, BaseModel) and value.model_config.get("extra") == "allow":
                value.model_config["extra"] = "ignore"
    return importlib.import_module(f"{PACKAGE}.{module}")


def per_chunk(rounds: int = 41) -> dict[str, float]:
    """Nanoseconds to validate one ``agent_message_chunk`` notification's params (the turn's 130),
    keeping and dropping unknown members, from decoded dicts and from JSON bytes."""
    import json
    import statistics
    import time

    from pydantic import TypeAdapter

    from bench.corpus import load_turn
    from bench.generated import bindings

    messages = [json.loads(line) for line in load_turn().received]
    params = [m["params"] for m in messages if m.get("method") == "session/update"]
    chunks = [p for p in params if p["update"]["sessionUpdate"] == "agent_message_chunk"]
    raw = [json.dumps(chunk).encode() for chunk in chunks]

    def validator(package: Any) -> Any:
        adapter: TypeAdapter[Any] = TypeAdapter(package("models").SessionNotification)
        adapter.rebuild()
        return adapter.validator

    keeping, dropping = validator(bindings), validator(ignoring)
    work = {
        "keeping, dict": (keeping.validate_python, chunks),
        "dropping, dict": (dropping.validate_python, chunks),
        "keeping, JSON": (keeping.validate_json, raw),
        "dropping, JSON": (dropping.validate_json, raw),
    }
    samples: dict[str, list[float]] = {name: [] for name in work}
    for _ in range(rounds):
        for name, (validate, inputs) in work.items():
            started = time.perf_counter()
            for value in inputs:
                validate(value)
            samples[name].append((time.perf_counter() - started) / len(inputs) * 1e9)
    return {name: statistics.median(values) for name, values in samples.items()}


if __name__ == "__main__":
    figures = per_chunk()
    for name, ns in figures.items():
        print(f"{ns:7.0f} ns  {name}")
    for mode in ("dict", "JSON"):
        kept, dropped = figures[f"keeping, {mode}"], figures[f"dropping, {mode}"]
        print(
            f"keeping unknown members, from a {mode}: +{kept - dropped:.0f} ns per notification, {kept / dropped:.2f}x"
        )
