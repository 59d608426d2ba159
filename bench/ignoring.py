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
