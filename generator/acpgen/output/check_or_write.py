"""The one step that ends ``acpgen generate`` and ``acpgen vendor``: compare the rendering with
the packages on disk, or write it there.

Writing, in order: finish what a killed run left (``atomic_write.recover``); skip the run when
the freshness stamp says nothing changed (``freshness``); render; write nothing when the rendering
is what is on disk already; otherwise make sure each package folder is one acpgen may replace
(``ownership``: refused, with nothing changed, when it holds files acpgen did not write, unless
``force``, which names them first); then replace the packages as one crash-safe write
(``atomic_write``) and stamp the run. Checking only reads. Refusals are :class:`AcpgenError`
values; what the step did is an :class:`Outcome` for the command to report.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from acpgen.errors import AcpgenError
from acpgen.output import atomic_write, freshness

Render = Callable[[], Mapping[str, str]]
"""Renders the packages: each file's text, keyed ``package/path`` (called only when needed)."""
Say = Callable[[str], None]


@dataclass(frozen=True, slots=True)
class Target:
    """Where a command writes: package folders inside one parent folder."""

    parent: Path
    packages: tuple[str, ...]
    record: str | None = None
    """The file inside each package that lists what acpgen wrote there (a vendored copy's manifest)."""


@dataclass(frozen=True, slots=True)
class Stamp:
    """The freshness stamp of a run: where it lies and the fingerprint of the run's inputs."""

    path: Path
    key: str


@dataclass(frozen=True, slots=True)
class Outcome:
    """What the step found or did."""

    rendered: int = 0
    """How many files the rendering holds."""
    stale: tuple[str, ...] = ()
    """Checking: a unified diff of each file that differs."""
    changed: tuple[str, ...] = ()
    """Writing: the files the write changed, added or removed."""
    fresh: bool = False
    """Writing: skipped without rendering, as no input changed since the last run."""


def stamp(cache_dir: Path, target: Target, inputs: Iterable[Path], settings: Mapping[str, object]) -> Stamp:
    """The freshness stamp of a run that writes ``target``, kept in ``cache_dir``: a fingerprint of
    its input files and of the settings (any JSON-able values) that shape its output."""
    path = freshness.stamp_path(cache_dir, target.parent, target.packages)
    return Stamp(path, freshness.fingerprint(inputs, settings))


def check(target: Target, render: Render) -> Outcome:
    """Compare the rendering with the packages on disk; changes nothing."""
    from acpgen.output.folders import stale_files

    files = render()
    return Outcome(len(files), stale=tuple(stale_files(target.parent, files, target.packages)))


def write(target: Target, render: Render, say: Say, *, force: bool = False, stamp: Stamp | None = None) -> Outcome:
    """Write the rendering over the packages, if it changes them (or ``force``) and acpgen may."""
    from acpgen.output.folders import changed_files, package_folders

    _recover(target, stamp)
    if stamp is not None and not force and freshness.is_fresh(stamp.path, stamp.key, target.parent, target.packages):
        return Outcome(fresh=True)
    files = render()
    changed = changed_files(target.parent, files, target.packages)
    if changed or force:
        folders = package_folders(files, target.packages)
        _claim(target, {name: folder.files for name, folder in folders.items()}, say, force)
        atomic_write.write(target.parent, folders)
    if stamp is not None:
        freshness.record(stamp.path, stamp.key, target.parent, target.packages)
    return Outcome(len(files), changed=tuple(changed))


def _recover(target: Target, stamp: Stamp | None) -> None:
    """Finish what a killed run left first, so that the output (and the stamp) is whole."""
    atomic_write.recover(target.parent)
    if stamp is not None:
        atomic_write.recover(stamp.path.parent)


def _claim(target: Target, rendered: Mapping[str, Mapping[str, bytes]], say: Say, force: bool) -> None:
    """Refuse to replace a package folder holding the user's files (with ``force``: name them)."""
    from acpgen.output import ownership  # only a run that writes needs it: a no-op run stays fast

    found = [
        ownership.foreign(target.parent / name, ownership.Claim(files, target.record))
        for name, files in rendered.items()
    ]
    refused = [f for f in found if f is not None and (not force or f.guard is not None)]
    if refused:
        raise AcpgenError(*(ownership.refusal(f) for f in refused))
    for f in found:
        if f is not None:
            say(ownership.notice(f))
