"""What acpgen writes into a project besides the generated packages: the pinned schema files with
their lock (``acpgen schema fetch``, ``acpgen schema bump``, the npm versions ``acpgen diff``
caches) and the text pins a bump moves. Each is one crash-safe write
(:mod:`acpgen.output.atomic_write`): a run killed at any moment leaves the old files or the new.
"""

from __future__ import annotations

import subprocess
from collections.abc import Mapping
from pathlib import Path

from acpgen.errors import AcpgenError
from acpgen.load.lock import read_lock
from acpgen.output.atomic_write import Content, write
from acpgen.source.fetch import DEFAULT_PACKAGE, Run, download_schema
from acpgen.source.schema_lock import LOCK_NAME, SchemaLock, lock_to_json


def fetch_schema(
    version: str,
    schema_dir: Path,
    package: str = DEFAULT_PACKAGE,
    npm: str = "npm",
    run: Run = subprocess.run,
) -> SchemaLock:
    """Download ``package@version`` with npm, verify it, install its JSON schemas and return the new lock.

    Raises AcpgenError (and leaves ``schema_dir`` untouched) if npm fails, the tarball's
    integrity differs from the registry's, or the tarball holds unsafe or unexpected entries.
    """
    files, lock = download_schema(version, package, npm, run)
    install_schema(schema_dir, files, lock)
    return lock


def install_schema(schema_dir: Path, files: dict[str, bytes], lock: SchemaLock) -> None:
    """Replace the schema files and the lock in one atomic write, removing files only the old lock listed."""
    entries: dict[str, Content] = dict.fromkeys(_stale_names(schema_dir, lock))
    entries.update(files)
    entries[LOCK_NAME] = lock_to_json(lock).encode("utf-8")
    write(schema_dir.resolve(), entries)


def _stale_names(schema_dir: Path, lock: SchemaLock) -> list[str]:
    """Files the current lock (if readable) lists but ``lock`` does not."""
    if not (schema_dir / LOCK_NAME).is_file():
        return []
    try:
        previous = read_lock(schema_dir)
    except AcpgenError:
        return []
    keep = {name for name, _ in lock.files}
    return sorted(name for name, _ in previous.files if name not in keep)


def rewrite_files(root: Path, contents: Mapping[str, str]) -> None:
    """Replace each file ``root/name`` with its new text (UTF-8), one atomic write per file, its
    permission bits kept (a bump's text pins: :func:`acpgen.source.pins.moved`)."""
    for name, text in contents.items():
        path = root / name
        mode = path.stat().st_mode & 0o7777
        write(path.parent, {path.name: text.encode("utf-8")})
        if path.stat().st_mode & 0o7777 != mode:
            path.chmod(mode)
