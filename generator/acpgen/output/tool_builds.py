"""The packages acpgen runs its own tools from (``acpgen conformance``, ``acpgen trace``,
``acpgen relay``): one build of the pinned schema with every tool, rendered once into acpgen's
cache folder and imported from there.

A tool judges or reads with the build it is told (stable, unstable, a selection of unstable
features, a protocol version). The package is rendered by the same route as ``acpgen vendor``
(:func:`acpgen.pipeline.render_builds`), under a name of its own (``acpgen_tools_<key>``), and
written with the one crash-safe writer (:mod:`acpgen.output.atomic_write`) into
``<cache>/tools/<key>/``: the key is a digest of everything the rendering reads (acpgen's own files,
templates, runtime and pinned schema included, and the build), so a changed acpgen or schema never
reads a stale package. The cache is ``$ACPGEN_CACHE_DIR``, else ``$XDG_CACHE_HOME/acpgen``, else
``~/.cache/acpgen``; acpgen writes there only folders of its own, and keeps the newest
:data:`KEEP` of them.
"""

from __future__ import annotations

import hashlib
import importlib
import json
import os
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

from acpgen.ir import Variant
from acpgen.output import atomic_write
from acpgen.render.header import generator_version
from acpgen.render.runtime_files import TOOL_NAMES
from acpgen.resources import package_dir

KEEP = 8
"""Cached tool packages kept; older ones (by last use) are removed."""
_PREFIX = "acpgen_tools_"
_DONE = ".complete"


@dataclass(frozen=True, slots=True)
class ToolBuild:
    """Which build a tool runs with."""

    variant: Variant = "stable"
    features: tuple[str, ...] | None = None
    protocol: int | None = None

    def describe(self) -> str:
        """How the build is named on a command line."""
        words = []
        if self.features is not None:
            words += [f"--unstable-feature {name}" for name in self.features]
        elif self.variant == "unstable":
            words.append("--unstable")
        if self.protocol is not None:
            words.append(f"--protocol {self.protocol}")
        return " ".join(words) or "the stable build"


def cache_root() -> Path:
    """acpgen's cache folder."""
    chosen = os.environ.get("ACPGEN_CACHE_DIR")
    if chosen:
        return Path(chosen)
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "acpgen"


def tool_package(build: ToolBuild) -> ModuleType:
    """The package of ``build`` with every tool, imported (rendered first when the cache lacks it)."""
    folder, name = _ensure(build)
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))
    return importlib.import_module(name)


def _ensure(build: ToolBuild) -> tuple[Path, str]:
    key = _key(build)
    parent = cache_root() / "tools"
    folder = parent / key
    name = _PREFIX + key
    if (folder / _DONE).is_file():
        os.utime(folder / _DONE)
        return folder, name
    files = _render(build, name)
    data = {path: text.encode("utf-8") for path, text in files.items()}
    data[_DONE] = b""
    atomic_write.write(parent, {key: atomic_write.Folder(data)})
    _prune(parent, keep=key)
    return folder, name


def _render(build: ToolBuild, name: str) -> dict[str, str]:
    from acpgen.pipeline import pinned_revision, render_builds
    from acpgen.source.config import Build, packaged_settings
    from acpgen.source.protocols import for_protocol, refuse_features

    settings = for_protocol(packaged_settings(), build.protocol)
    refuse_features(settings, build.features)
    variant: Variant = "unstable" if build.variant == "unstable" or build.features is not None else "stable"
    chosen = Build(variant, name, build.features, tools=frozenset(TOOL_NAMES))
    return render_builds(pinned_revision(settings), [chosen], regenerate=f"acpgen (its tools: {build.describe()})")


def _key(build: ToolBuild) -> str:
    """A digest of what the rendering reads: acpgen's version and files (its templates, runtime and
    pinned schema among them) and the build."""
    digest = hashlib.sha256()
    digest.update(json.dumps([generator_version(), build.variant, build.features, build.protocol]).encode())
    root = package_dir()
    found: list[Path] = []
    for top, folders, names in os.walk(root, followlinks=True):  # data/ links to templates/, schema/
        folders[:] = sorted(f for f in folders if f != "__pycache__")
        found += [Path(top, n) for n in names if not n.endswith(".pyc")]
    for path in sorted(found):
        digest.update(path.relative_to(root).as_posix().encode() + b"\0")
        digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()[:20]


def _prune(parent: Path, *, keep: str) -> None:
    """Remove all but the newest :data:`KEEP` tool packages (folders of acpgen's own only)."""
    ours = [p for p in parent.iterdir() if p.is_dir() and (p / _DONE).is_file() and p.name != keep]
    ours.sort(key=lambda p: (p / _DONE).stat().st_mtime, reverse=True)
    for old in ours[KEEP - 1 :]:
        shutil.rmtree(old, ignore_errors=True)
