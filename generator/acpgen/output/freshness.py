"""Skip a regeneration that cannot change anything.

After each successful write, a stamp records a fingerprint of every input (schema files, rule
table, templates, the generator's own code and data files, the versions of the tools that shape the output,
the settings) and the sha256 of every file written. When the next run has the same fingerprint
and the files on disk still match the stamp, rendering would reproduce them byte for byte, so it
is skipped. Only the standard library is imported here, so the check itself is fast.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from pathlib import Path

from acpgen.resources import package_dir, templates_dir
from acpgen.versions import installed_version

GENERATOR = package_dir()
"""The generator's code and data files (its ``data`` folder aside: the templates are counted below,
the schema files a run reads are among its input files)."""
TEMPLATES = templates_dir()
TOOLS = ("datamodel-code-generator", "ruff", "pydantic", "jinja2", "acpgen")


def fingerprint(files: Iterable[Path], settings: Mapping[str, object]) -> str:
    """A digest of the input files, the generator's code and templates, tool versions and settings."""
    digest = hashlib.sha256()
    code = [p for p in _tree(GENERATOR, "") if p.relative_to(GENERATOR).parts[0] != "data"]
    sources = sorted({*files, *code, *_tree(TEMPLATES, "")})
    for path in sources:
        digest.update(str(path).encode() + b"\0" + (path.read_bytes() if path.is_file() else b"<missing>") + b"\0")
    digest.update(json.dumps({"settings": settings, "tools": _versions()}, sort_keys=True, default=str).encode())
    return digest.hexdigest()


def is_fresh(stamp: Path, key: str, out_dir: Path, packages: Iterable[str]) -> bool:
    """Whether the last run wrote ``out_dir`` from the same inputs and nothing there changed since."""
    try:
        recorded = json.loads(stamp.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return bool(recorded.get("fingerprint") == key and recorded.get("files") == _hashes(out_dir, packages))


def record(stamp: Path, key: str, out_dir: Path, packages: Iterable[str]) -> None:
    """Remember the inputs and outputs of a successful run."""
    from acpgen.output.atomic_write import write

    text = json.dumps({"fingerprint": key, "files": _hashes(out_dir, packages)}, indent=1, sort_keys=True)
    write(stamp.parent, {stamp.name: text.encode("utf-8")})


def stamp_path(cache_dir: Path, out_dir: Path, packages: Iterable[str]) -> Path:
    """One stamp per output folder and set of packages."""
    name = hashlib.sha256(f"{out_dir.resolve()}|{','.join(sorted(packages))}".encode()).hexdigest()[:16]
    return cache_dir / f"generate-{name}.json"


def _hashes(out_dir: Path, packages: Iterable[str]) -> dict[str, str]:
    found = {}
    for package in sorted(packages):
        for path in _tree(out_dir / package, ""):
            found[path.relative_to(out_dir).as_posix()] = hashlib.sha256(path.read_bytes()).hexdigest()
    return found


def _tree(root: Path, suffix: str) -> list[Path]:
    """The files under ``root`` (ending with ``suffix``), without caches: ``__pycache__``,
    compiled files and hidden folders such as ``.ruff_cache``."""
    if not root.is_dir():
        return []
    return sorted(
        p
        for p in root.rglob(f"*{suffix}")
        if p.is_file()
        and not p.name.endswith(".pyc")
        and not any(part == "__pycache__" or part.startswith(".") for part in p.relative_to(root).parts[:-1])
    )


def _versions() -> dict[str, str]:
    return {tool: installed_version(tool) or "absent" for tool in TOOLS}
