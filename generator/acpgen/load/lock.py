"""Read the schema lock (``schema/schema.lock.json``, :mod:`acpgen.source.schema_lock`) and check the
pinned files against it: a lock that is missing, not JSON, nested too deeply or not of the lock's
format, and a pinned file that is missing or edited, are refused with what, where and what to do.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

from acpgen.errors import AcpgenError, Problem, pointer
from acpgen.load.nesting import parse
from acpgen.source.schema_lock import LOCK_NAME, SchemaLock, unsafe_relative_path

_LOCK_KEYS = frozenset({"package", "version", "integrity", "files"})
_SHA256_HEX = re.compile(r"[0-9a-f]{64}")
_CHUNK = 1 << 16


def sha256_file(path: Path) -> str:
    """Return the sha256 of a file's bytes as lowercase hex."""
    digest = hashlib.sha256()
    with path.open("rb") as stream:
        for chunk in iter(lambda: stream.read(_CHUNK), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _fetch_hint(version: str = "x.y.z") -> str:
    """The command that (re)creates the schema files and their lock."""
    return (
        f"Run `make schema VERSION={version}` (or `acpgen schema fetch --version {version}`) "
        "to fetch the schema files and write the lock."
    )


def read_lock(schema_dir: Path) -> SchemaLock:
    """Read and validate ``schema_dir/schema.lock.json``; raise AcpgenError if missing or malformed."""
    path = schema_dir / LOCK_NAME
    document = _load_json(path)
    problems = _lock_problems(path, document)
    if problems:
        raise AcpgenError(*problems)
    assert isinstance(document, dict)
    files = tuple(sorted(document["files"].items()))
    return SchemaLock(
        package=document["package"], version=document["version"], integrity=document["integrity"], files=files
    )


def _load_json(path: Path) -> object:
    """Parse the lock file, turning a missing, unreadable or non-JSON file into AcpgenError."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise AcpgenError(Problem(what="schema lock file not found", where=str(path), hint=_fetch_hint())) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise AcpgenError(
            Problem(what=f"cannot read the schema lock file: {exc}", where=str(path), hint=_fetch_hint())
        ) from exc
    document: object = parse(text, str(path), what="the schema lock file", hint=_fetch_hint())
    return document


def _lock_problems(path: Path, document: object) -> list[Problem]:
    """Every way in which a parsed lock document deviates from the lock format."""
    if not isinstance(document, dict):
        return [Problem(what="schema lock file must hold a JSON object", where=str(path), hint=_fetch_hint())]
    problems = [
        Problem(what=f"schema lock file lacks the key {key!r}", where=str(path), hint=_fetch_hint())
        for key in sorted(_LOCK_KEYS - document.keys())
    ]
    problems += [
        Problem(
            what=f"schema lock file has the unknown key {key!r}",
            where=f"{path}#{pointer(key)}",
            hint=_fetch_hint(),
        )
        for key in sorted(document.keys() - _LOCK_KEYS)
    ]
    for key in ("package", "version", "integrity"):
        value = document.get(key, "")
        if not isinstance(value, str) or not value:
            problems.append(_field_problem(path, key, "must be a non-empty string"))
    integrity = document.get("integrity")
    if isinstance(integrity, str) and integrity and not integrity.startswith("sha512-"):
        problems.append(_field_problem(path, "integrity", "must be a sha512 SRI string (sha512-...)"))
    problems += _files_problems(path, document.get("files", {}))
    return problems


def _files_problems(path: Path, files: object) -> list[Problem]:
    """Problems with the ``files`` object: relative paths mapped to sha256 hex digests."""
    if not isinstance(files, dict):
        return [_field_problem(path, "files", "must be an object mapping paths to sha256 hex digests")]
    problems: list[Problem] = []
    for name, digest in files.items():
        reason = unsafe_relative_path(name)
        if reason is None and name == LOCK_NAME:
            reason = "names the lock file itself"
        if reason is not None:
            problems.append(_field_problem(path, "files", f"entry {name!r} {reason}", name))
        if not isinstance(digest, str) or not _SHA256_HEX.fullmatch(digest):
            problems.append(_field_problem(path, "files", "must be a lowercase sha256 hex digest", name))
    return problems


def _field_problem(path: Path, key: str, what: str, *more: str) -> Problem:
    """A problem located at ``path#/key[/more...]``."""
    return Problem(
        what=f"schema lock field {key!r} {what}",
        where=f"{path}#{pointer(key, *more)}",
        hint=_fetch_hint(),
    )


def verify_files(schema_dir: Path, lock: SchemaLock) -> None:
    """Raise AcpgenError naming every locked file that is missing or whose sha256 differs from the lock."""
    hint = (
        "The schema files were edited or the lock is stale. "
        f"Run `make schema VERSION={lock.version}` (or `acpgen schema fetch --version {lock.version}`) "
        "to restore the pinned files."
    )
    problems: list[Problem] = []
    for name, expected in lock.files:
        path = schema_dir / name
        if not path.is_file():
            problems.append(Problem(what=f"schema file {name} is missing", where=str(path), hint=hint))
            continue
        actual = sha256_file(path)
        if actual != expected:
            what = f"schema file {name} has sha256 {actual}, but {LOCK_NAME} pins {expected}"
            problems.append(Problem(what=what, where=str(path), hint=hint))
    if problems:
        raise AcpgenError(*problems)
