"""Where the two sides of a diff come from: a folder or file, a git ref, or an npm version.

A side is given as one string:

- a path to a folder or a schema file. In a folder, ``v1/schema.json`` (the npm package's
  layout, and this repository's ``schema/``) or ``schema.json``, each with its
  ``schema.unstable.json`` beside it if there is one, and a ``capability-rules.json`` and an
  ``unstable-features.json`` (the feature manifest) if present. A file is taken with its
  ``.unstable.json`` sibling if there is one (and those two tables beside it);
- ``REF:PATH``, a path inside a git ref of the repository in the current directory
  (``HEAD~1:schema``), read with ``git show`` into a temporary folder;
- ``npm:VERSION`` or a bare version (``2.3.0``) of the npm package, fetched with the npm client
  (integrity verified, see :mod:`acpgen.source.fetch`) into the cache folder and reused from there.

A single-file revision has no unstable schema: its unstable items are those marked
``**UNSTABLE**`` (see :mod:`acpgen.load.stability`).
"""

from __future__ import annotations

import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from acpgen.diff.snapshot import Snapshot, from_revision
from acpgen.errors import AcpgenError, Problem
from acpgen.features.manifest import MANIFEST_FILE, load_manifest
from acpgen.load.lock import read_lock, verify_files
from acpgen.load.rule_table import RULES_FILE, load_rules
from acpgen.output.project_files import fetch_schema
from acpgen.pipeline import Revision, read_schema_file
from acpgen.source.fetch import VERSION
from acpgen.source.schema_lock import LOCK_NAME, unsafe_relative_path

_LAYOUTS = ("v1/schema.json", "schema.json")


@dataclass(frozen=True, slots=True)
class Located:
    """The files of one side."""

    stable: Path
    unstable: Path | None
    rules: Path | None
    features: Path | None = None


def load_side(spec: str, cache_dir: Path, *, package: str) -> Snapshot:
    """The snapshot of the side ``spec`` (see the module docstring), labelled for a reader:
    with the package version its lock records, and the commit a git ref names."""
    path = Path(spec)
    if path.exists():
        return load_files(_versioned(spec, path), locate(path))
    if spec.startswith("npm:") or VERSION.fullmatch(spec):
        return load_files(
            f"{package}@{spec.removeprefix('npm:')}", locate(_npm(spec.removeprefix("npm:"), cache_dir, package))
        )
    if ":" in spec:
        ref, _, inside = spec.partition(":")
        commit = _run_git(["rev-parse", "--short", f"{ref}^{{commit}}"], spec).strip()
        with tempfile.TemporaryDirectory(prefix="acpgen-diff-") as tmp:
            folder = _git(ref, inside, Path(tmp))
            return load_files(_versioned(spec, folder, commit), locate(folder))
    raise AcpgenError(
        Problem(
            what=f"{spec} does not exist (no such schema folder or file; not REF:PATH or an npm version either)",
            where=spec,
            hint="Give a schema folder or file that exists (schema/), a git ref and path (HEAD~1:schema), "
            "or a version of the npm package (2.3.0 or npm:2.3.0).",
        )
    )


def _versioned(spec: str, path: Path, commit: str = "") -> str:
    """``spec`` (and the commit it names), preceded by the package and version that a schema
    lock beside the files records: ``@agentclientprotocol/sdk@2.4.0 (HEAD~1:schema, 34106e8)``."""
    where = f"{spec}, {commit}" if commit else spec
    folder = path if path.is_dir() else path.parent
    for candidate in (folder, folder.parent):
        if (candidate / LOCK_NAME).is_file():
            try:
                lock = read_lock(candidate)
            except AcpgenError:
                break
            return f"{lock.package}@{lock.version} ({where})"
    return f"{spec} ({commit})" if commit else spec


def locate(path: Path) -> Located:
    """The schema files of a folder, or of a schema file and its siblings."""
    if path.is_file():
        unstable = path.with_name(path.name.removesuffix(".json") + ".unstable.json")
        return Located(
            stable=path,
            unstable=unstable if unstable.is_file() else None,
            rules=_beside(path.parent, RULES_FILE),
            features=_beside(path.parent, MANIFEST_FILE),
        )
    for layout in _LAYOUTS:
        stable = path / layout
        if stable.is_file():
            unstable = stable.with_name("schema.unstable.json")
            return Located(
                stable=stable,
                unstable=unstable if unstable.is_file() else None,
                rules=_beside(path, RULES_FILE),
                features=_beside(path, MANIFEST_FILE),
            )
    raise AcpgenError(
        Problem(
            what="the folder holds no ACP schema (looked for v1/schema.json and schema.json)",
            where=str(path),
            hint="Point at a folder holding schema.json (and schema.unstable.json), or at a schema file.",
        )
    )


def _beside(folder: Path, name: str) -> Path | None:
    path = folder / name
    return path if path.is_file() else None


def load_files(label: str, located: Located) -> Snapshot:
    """The snapshot of located files (a problem in one is reported with its path)."""
    stable = read_schema_file(located.stable, package="local", version=label, name=str(located.stable))
    unstable = (
        read_schema_file(located.unstable, package="local", version=label, name=str(located.unstable))
        if located.unstable is not None
        else None
    )
    rules: dict[str, Any] | None = load_rules(located.rules) if located.rules is not None else None
    features = load_manifest(located.features) if located.features is not None else None
    revision = Revision(
        stable=stable,
        unstable=unstable,
        protocol_version=1,
        features=features,
        features_origin=str(located.features) if located.features is not None else MANIFEST_FILE,
    )
    return from_revision(label, revision, rules)


def _npm(version: str, cache_dir: Path, package: str) -> Path:
    """The folder of ``package@version``'s schemas in the cache, fetched first if missing or damaged."""
    folder = cache_dir / "npm" / f"{package.replace('/', '+')}@{version}"
    if (folder / LOCK_NAME).is_file():
        try:
            lock = read_lock(folder)
            verify_files(folder, lock)
            if lock.version == version and lock.package == package:
                return folder
        except AcpgenError:
            pass  # a damaged cache entry is fetched again
    fetch_schema(version, folder, package=package)
    return folder


def _git(ref: str, inside: str, into: Path) -> Path:
    """Copy the JSON files under ``inside`` (relative to the repository's top, as git reads
    ``REF:PATH``) at ``ref`` into ``into``; the copy of ``inside``."""
    where = f"{ref}:{inside}"
    top = Path(_run_git(["rev-parse", "--show-toplevel"], where).strip())
    listing = _run_git(["-C", str(top), "ls-tree", "-r", "--full-name", "--name-only", ref, "--", inside or "."], where)
    names = [n for n in listing.splitlines() if n.endswith(".json")]
    if not names:
        raise AcpgenError(
            Problem(
                what=f"git ref {ref!r} holds no JSON file under {inside or '.'!r}",
                where=where,
                hint="Check the ref and the path (e.g. HEAD~1:schema).",
            )
        )
    for name in names:
        if unsafe_relative_path(name) is not None:
            raise AcpgenError(
                Problem(what=f"unsafe path {name!r} in git ref {ref!r}", where=where, hint="Use another ref.")
            )
        target = into / PurePosixPath(name)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(_run_git(["-C", str(top), "show", f"{ref}:{name}"], where), encoding="utf-8")
    return into / PurePosixPath(inside) if inside else into


def _run_git(args: list[str], where: str) -> str:
    try:
        result = subprocess.run(["git", *args], capture_output=True, text=True, check=False, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as error:
        raise AcpgenError(
            Problem(what=f"cannot run git: {error}", where=where, hint="Install git or give a folder instead.")
        ) from None
    if result.returncode != 0:
        detail = result.stderr.strip().splitlines()[-1] if result.stderr.strip() else f"exit {result.returncode}"
        raise AcpgenError(
            Problem(
                what=f"git could not read {where!r}: {detail}",
                where=where,
                hint="Check that the ref exists in this repository and the path inside it (e.g. HEAD~1:schema).",
            )
        )
    return result.stdout
