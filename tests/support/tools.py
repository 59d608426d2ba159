"""The tools as a user runs them: ``acpgen conformance``, ``acpgen trace``, ``acpgen relay`` (from
acpgen, with the build they are told; the tests' cache is ``tests.conftest.TOOL_CACHE``), and the tool
package of a build, imported in-process."""

from __future__ import annotations

import importlib
import sys
from types import ModuleType

from acpgen.output.tool_builds import ToolBuild, tool_package


def acpgen(tool: str, *args: str) -> list[str]:
    """The command line of ``acpgen TOOL ARGS...``, run with this interpreter."""
    return [sys.executable, "-m", "acpgen", tool, *args]


def tools_of(
    variant: str = "stable", features: tuple[str, ...] | None = None, protocol: int | None = None
) -> ModuleType:
    """The package acpgen runs its tools from for that build (rendered into the cache when missing),
    its tool modules imported (``tools_of().conformance.REQUIREMENTS``)."""
    package = tool_package(ToolBuild(variant, features, protocol))  # type: ignore[arg-type]
    for name in ("conformance", "trace", "relay"):
        importlib.import_module(f"{package.__name__}.{name}")
    return package
