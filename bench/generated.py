"""The committed generated bindings, importable from the benchmark (``generated/`` on the path)."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[1]
GENERATED = ROOT / "generated"


def bindings(module: str, variant: str = "stable") -> ModuleType:
    """``acp_bindings.<module>`` (or the unstable build's)."""
    if str(GENERATED) not in sys.path:
        sys.path.insert(0, str(GENERATED))
    package = "acp_bindings_unstable" if variant == "unstable" else "acp_bindings"
    return importlib.import_module(f"{package}.{module}")
