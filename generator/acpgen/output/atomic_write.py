"""Write outputs so that a crash at any moment leaves them wholly old or wholly new.

Every file and folder acpgen writes (the generated packages, a vendored copy, the schema files
and their lock, the freshness stamp) goes through :func:`write`, which replaces a set of
*entries* (files or folders named by paths relative to one parent folder, or removals) as one
transaction:

1. **Lock** the parent folder (``flock`` on the folder itself) for the whole write. Writes into
   one folder never interleave, and a staging folder found there while holding the lock belongs
   to a run that died: no live run's staging is ever touched.
2. **Recover** what dead runs left (below).
3. **Stage** every new entry, complete and fsynced, in ``<parent>/.acpgen-staging-<pid>-<hex>/new/<n>``.
4. **Commit**: write ``journal.json`` (each entry's name and the inode of its staged copy) by
   renaming a finished temporary file. Until then no output has changed; from then on the new
   content is decided.
5. **Apply**, entry by entry: swap the staged entry with the live one in one Linux
   ``renameat2(RENAME_EXCHANGE)``, so that the live path always names a complete entry, old or
   new, never nothing. Where the exchange is unavailable (another system, some file systems),
   the live entry is renamed aside into ``old/<n>`` and the staged one renamed in.
6. **Remove** the staging folder, which now holds the old entries.

Recovery: a staging folder without a journal (the run died before committing) is deleted; one
with a journal is rolled forward first. Rolling forward is step 5 again, and it is idempotent:
an entry whose live path has the journal's inode is in place, any other is placed, so a run
killed while rolling forward is simply rolled forward by the next one.

What a kill can leave before the next run: a single entry is always wholly old or wholly new
(with the exchange; without it, it may be missing for the instant between its two renames).
One rename changes one path, so a write of several entries (``acpgen generate --both`` writes
two packages) has a window between two exchanges where one entry is new and the other old; the
committed journal makes the next write into that folder (any acpgen command that writes there,
including a no-op ``acpgen generate``) complete it before anything else.

Errors: a failure before the commit deletes the staging folder and changes nothing; one after it
swaps the entries placed so far back, then deletes it. Either way an :class:`AcpgenError` says
what, where and what to do. Durability: files, folders and the journal are fsynced in that order,
so the same reasoning holds after a power loss, not only after a killed process.
"""

from __future__ import annotations

import errno
import fcntl
import json
import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from functools import cache
from pathlib import Path, PurePosixPath
from typing import Any

from acpgen.errors import AcpgenError, Problem

STAGING_PREFIX = ".acpgen-staging-"
_JOURNAL = "journal.json"
_AT_FDCWD = -100
_RENAME_EXCHANGE = 2

step_hook: Callable[[str], None] | None = None
"""Called with a label at every point where a crash could land (tests kill the process there)."""


@dataclass(frozen=True, slots=True)
class Folder:
    """The complete new content of a folder: each file's bytes by POSIX path inside it."""

    files: Mapping[str, bytes]

    def __post_init__(self) -> None:
        """Refuse paths that would leave the folder."""
        for name in self.files:
            _check_relative(name)


Content = bytes | Folder | None
"""A file's bytes, a folder's files, or None to remove the entry."""


@dataclass(frozen=True, slots=True)
class _Planned:
    name: str
    slot: int
    ident: tuple[int, int] | None
    """(device, inode) of the staged copy; None for a removal."""


def write(parent: Path, entries: Mapping[str, Content]) -> None:
    """Replace each named entry under ``parent`` by its content (None: remove it), all or nothing."""
    names = _checked_names(entries)
    try:
        parent.mkdir(parents=True, exist_ok=True)
        with _locked(parent):
            _recover_locked(parent)
            _transact(parent, [(name, entries[name]) for name in names])
    except OSError as error:
        raise _write_error(parent, error) from None


def recover(parent: Path) -> None:
    """Finish or discard what runs killed while writing into ``parent`` left there."""
    if not parent.is_dir() or not any(_leftovers(parent)):
        return
    try:
        with _locked(parent):
            _recover_locked(parent)
    except OSError as error:
        raise _write_error(parent, error) from None


def exchange(first: Path, second: Path) -> bool:
    """Swap two paths in one step (Linux ``renameat2``); False where the system cannot."""
    function = _renameat2()
    if function is None:
        return False
    if function(_AT_FDCWD, os.fsencode(first), _AT_FDCWD, os.fsencode(second), _RENAME_EXCHANGE) == 0:
        return True
    import ctypes

    code = ctypes.get_errno()
    if code in (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP):
        return False
    raise OSError(code, os.strerror(code), os.fspath(second))


@cache
def _renameat2() -> Callable[..., int] | None:
    import ctypes

    try:
        function: Any = ctypes.CDLL(None, use_errno=True).renameat2
    except (OSError, AttributeError):
        return None
    function.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    function.restype = ctypes.c_int
    return function  # type: ignore[no-any-return]


def _step(label: str) -> None:
    if step_hook is not None:
        step_hook(label)


def _check_relative(name: str) -> None:
    path = PurePosixPath(name)
    if not path.parts or path.is_absolute() or path.as_posix() != name or ".." in path.parts or "\\" in name:
        raise ValueError(f"{name!r} is not a plain relative POSIX path")


def _checked_names(entries: Mapping[str, Content]) -> list[str]:
    names = sorted(entries)
    for name in names:
        _check_relative(name)
        if name.split("/", 1)[0].startswith(STAGING_PREFIX):
            raise ValueError(f"{name!r} names a staging folder")
        for inside in PurePosixPath(name).parents:
            if str(inside) in entries:
                raise ValueError(f"the entries {str(inside)!r} and {name!r} overlap")
    return names


@contextmanager
def _locked(folder: Path) -> Iterator[None]:
    descriptor = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX)
        _step("locked")
        yield
    finally:
        os.close(descriptor)


def _leftovers(parent: Path) -> Iterator[Path]:
    for path in sorted(parent.iterdir()):
        if path.name.startswith(STAGING_PREFIX) and path.is_dir() and not path.is_symlink():
            yield path


def _recover_locked(parent: Path) -> None:
    for staging in list(_leftovers(parent)):
        try:
            plan = _read_journal(staging)
            if plan is not None:
                _apply(parent, staging, plan)
                _step(f"rolled forward {staging.name}")
            _discard(staging)
        except (OSError, ValueError, KeyError, TypeError) as error:
            raise _recovery_error(staging, error) from None


def _transact(parent: Path, entries: Sequence[tuple[str, Content]]) -> None:
    staging = parent / f"{STAGING_PREFIX}{os.getpid()}-{os.urandom(4).hex()}"
    staging.mkdir()
    try:
        _step("created staging")
        plan = _stage_all(staging, entries)
        _commit(staging, plan)
    except BaseException:
        _discard(staging)
        raise
    created: list[Path] = []
    try:
        _apply(parent, staging, plan, created)
    except OSError as error:
        _undo(parent, staging, plan, created, error)
        raise
    try:
        _discard(staging)
    except OSError as error:
        raise _leftover_error(staging, error) from None


def _stage_all(staging: Path, entries: Sequence[tuple[str, Content]]) -> list[_Planned]:
    (staging / "new").mkdir()
    (staging / "old").mkdir()
    plan = []
    for slot, (name, content) in enumerate(entries):
        ident = None if content is None else _stage(staging / "new" / str(slot), content)
        plan.append(_Planned(name=name, slot=slot, ident=ident))
    for folder in (staging / "new", staging, staging.parent):
        _fsync_folder(folder)
    return plan


def _stage(path: Path, content: bytes | Folder) -> tuple[int, int]:
    if isinstance(content, bytes):
        _write_file(path, content)
    else:
        path.mkdir()
        folders = {path}
        for name, data in sorted(content.files.items()):
            target = path / name
            for folder in reversed(target.relative_to(path).parents[:-1]):
                if path / folder not in folders:
                    (path / folder).mkdir()
                    folders.add(path / folder)
            _write_file(target, data)
        for folder in sorted(folders, reverse=True):
            _fsync_folder(folder)
    status = os.lstat(path)
    return status.st_dev, status.st_ino


def _write_file(path: Path, data: bytes) -> None:
    with path.open("xb") as stream:
        stream.write(data)
        stream.flush()
        os.fsync(stream.fileno())
    _step(f"wrote {path.name}")


def _commit(staging: Path, plan: Sequence[_Planned]) -> None:
    records = [{"name": e.name, "slot": e.slot, "ident": list(e.ident) if e.ident else None} for e in plan]
    temporary = staging / "journal.tmp"
    _write_file(temporary, json.dumps({"entries": records}, indent=1).encode())
    os.rename(temporary, staging / _JOURNAL)
    _fsync_folder(staging)
    _step("committed")


def _read_journal(staging: Path) -> list[_Planned] | None:
    path = staging / _JOURNAL
    if not path.is_file():
        return None
    records = json.loads(path.read_text(encoding="utf-8"))["entries"]
    plan = []
    for record in records:
        ident = record["ident"]
        plan.append(
            _Planned(name=str(record["name"]), slot=int(record["slot"]), ident=(ident[0], ident[1]) if ident else None)
        )
    _checked_names(dict.fromkeys(e.name for e in plan))
    return plan


def _apply(parent: Path, staging: Path, plan: Sequence[_Planned], created: list[Path] | None = None) -> None:
    """Put every entry of ``plan`` in place (again); add the folders this made to ``created``."""
    touched = {parent}
    for entry in plan:
        _place(parent, staging, entry, [] if created is None else created)
        touched.update((parent / entry.name).parents)
    for folder in sorted(touched, reverse=True):
        if folder == parent or (parent in folder.parents and folder.is_dir()):
            _fsync_folder(folder)
    _step("applied")


def _place(parent: Path, staging: Path, entry: _Planned, created: list[Path]) -> None:
    target = parent / entry.name
    new, old = staging / "new" / str(entry.slot), staging / "old" / str(entry.slot)
    if entry.ident is None:
        if os.path.lexists(target):
            os.rename(target, old)
            _step(f"removed {entry.name}")
        _prune(target.parent, parent)
        return
    if _ident(target) == entry.ident:
        return
    if _ident(new) != entry.ident:
        raise OSError(errno.ENOENT, "the staged copy is gone", str(new))
    created += [folder for folder in target.parents if parent in folder.parents and not folder.exists()]
    target.parent.mkdir(parents=True, exist_ok=True)
    if not os.path.lexists(target):
        os.rename(new, target)
    elif not exchange(new, target):
        os.rename(target, old)
        _step(f"moved aside {entry.name}")
        os.rename(new, target)
    _step(f"placed {entry.name}")


def _undo(parent: Path, staging: Path, plan: Sequence[_Planned], created: list[Path], error: OSError) -> None:
    try:
        _roll_back(parent, staging, plan, created)
    except OSError:
        raise _half_done_error(parent, staging, error) from None
    with suppress(OSError):  # without its journal, the next run deletes what is left of it
        _discard(staging)


def _roll_back(parent: Path, staging: Path, plan: Sequence[_Planned], created: list[Path]) -> None:
    for entry in reversed(plan):
        target = parent / entry.name
        new, old = staging / "new" / str(entry.slot), staging / "old" / str(entry.slot)
        if entry.ident is not None and _ident(target) == entry.ident:
            if os.path.lexists(new) and exchange(new, target):
                continue
            os.rename(target, new)
        if os.path.lexists(old) and not os.path.lexists(target):
            target.parent.mkdir(parents=True, exist_ok=True)
            os.rename(old, target)
        _step(f"restored {entry.name}")
    for folder in sorted(created, key=lambda path: len(path.parts), reverse=True):
        with suppress(OSError):
            folder.rmdir()
    (staging / _JOURNAL).unlink()
    _fsync_folder(staging)
    _step("rolled back")


def _discard(staging: Path) -> None:
    import shutil  # not at the top: a no-op `acpgen generate` imports this module and should stay fast

    for child in sorted(staging.iterdir()):
        if child.is_dir() and not child.is_symlink():
            shutil.rmtree(child)
        else:
            child.unlink()
        _step(f"discarded {child.name}")
    staging.rmdir()


def _ident(path: Path) -> tuple[int, int] | None:
    try:
        status = os.lstat(path)
    except FileNotFoundError:
        return None
    return status.st_dev, status.st_ino


def _prune(folder: Path, stop: Path) -> None:
    while folder != stop and stop in folder.parents:
        try:
            folder.rmdir()
        except OSError:
            return
        folder = folder.parent


def _fsync_folder(folder: Path) -> None:
    descriptor = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


def _write_error(parent: Path, error: OSError) -> AcpgenError:
    reason = error.strerror or str(error)
    where = parent
    if error.filename is not None:
        path = Path(os.fsdecode(error.filename))
        where = parent if any(part.startswith(STAGING_PREFIX) for part in path.parts) else path
    if error.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
        hint = (
            f"Make {where} writable (permissions, read-only mount or immutable flag) or write to another "
            "folder, then run the command again; nothing was changed."
        )
    elif error.errno in (errno.ENOSPC, errno.EDQUOT):
        hint = "Free some disk space, then run the command again; nothing was changed."
    else:
        hint = "Fix the cause, then run the command again; nothing was changed."
    return AcpgenError(Problem(what=f"cannot write into the folder {parent}: {reason}", where=str(where), hint=hint))


def _half_done_error(parent: Path, staging: Path, error: OSError) -> AcpgenError:
    what = f"the write into the folder failed half way ({error.strerror or error}) and could not be undone"
    hint = f"Fix the cause and run the command again: it completes the write recorded in {staging.name}."
    return AcpgenError(Problem(what=what, where=str(parent), hint=hint))


def _leftover_error(staging: Path, error: OSError) -> AcpgenError:
    what = f"the output was written, but its staging folder could not be removed ({error.strerror or error})"
    return AcpgenError(
        Problem(what=what, where=str(staging), hint="Remove that folder by hand; the output itself is complete.")
    )


def _recovery_error(staging: Path, error: Exception) -> AcpgenError:
    what = f"cannot finish the write an earlier, interrupted run left in {staging.name} ({error})"
    hint = (
        "Fix the cause and run the command again; or delete that folder to abandon the interrupted write "
        "(the output may then hold some old and some new entries: regenerate it)."
    )
    return AcpgenError(Problem(what=what, where=str(staging.parent), hint=hint))
