"""The schema lock: which package version the files in ``schema/`` came from, and their hashes.

The lock is a small JSON file, ``schema/schema.lock.json``::

    {
      "files": {
        "v1/schema.json": "<sha256 hex>",
        ...
      },
      "integrity": "sha512-...",
      "package": "@agentclientprotocol/sdk",
      "version": "2.4.0"
    }

``files`` maps a path relative to the schema directory (forward slashes) to the sha256 of
that file; ``integrity`` is the npm SRI string of the tarball the files were taken from.

This module holds the lock's format (the value, where it lies, how it is written); reading a lock
and checking the files against it is loading's work (:mod:`acpgen.load.lock`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import PurePosixPath

LOCK_NAME = "schema.lock.json"


@dataclass(frozen=True, slots=True)
class SchemaLock:
    """The pinned schema: npm package, version, tarball integrity and per-file sha256."""

    package: str
    version: str
    integrity: str
    files: tuple[tuple[str, str], ...]
    """(path relative to the schema directory, sha256 hex), sorted by path, paths unique."""

    def __post_init__(self) -> None:
        """Reject file lists that are unsorted, repeat a path, or name a path outside the directory."""
        names = [name for name, _ in self.files]
        if names != sorted(set(names)):
            raise ValueError("SchemaLock.files must be sorted by path without duplicates")
        for name in names:
            reason = unsafe_relative_path(name)
            if reason is None and name == LOCK_NAME:
                reason = "names the lock file itself"
            if reason is not None:
                raise ValueError(f"SchemaLock.files: {name!r} {reason}")


def unsafe_relative_path(name: str) -> str | None:
    """Say why ``name`` is not a plain relative POSIX path below a directory, or None if it is."""
    if not name:
        return "is empty"
    if "\\" in name or "\0" in name:
        return "contains a backslash or NUL character"
    path = PurePosixPath(name)
    if path.is_absolute():
        return "is absolute"
    if ".." in path.parts:
        return "contains a '..' component"
    if path.as_posix() != name:
        return "is not in normal form (use single forward slashes, no '.' components)"
    return None


def lock_to_json(lock: SchemaLock) -> str:
    """Render a lock deterministically: sorted keys, 2-space indent, trailing newline."""
    document = {
        "package": lock.package,
        "version": lock.version,
        "integrity": lock.integrity,
        "files": dict(lock.files),
    }
    return json.dumps(document, sort_keys=True, indent=2, ensure_ascii=False) + "\n"
