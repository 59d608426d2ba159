"""The ACP schema history that the tests and ``bench/diff_history.py`` read, kept in the repository.

``tests/data/acp-schemas/`` holds every published revision of the upstream schema as one
deterministic archive (``revisions.tar.xz``: a folder per tag), the revision index
(``index.json``: tag, date, files, the later tags with identical files), the sha256 of every file
of the archive (``SHA256SUMS``) and where each revision came from (``provenance.json``: the
upstream repository, licence, and the commit of every tag). See the README.md there.

    uv run --frozen python -m tests.support.schema_history unpack DIR
        writes the folder that ``ACP_SCHEMAS`` / ``--acp-schemas`` may name: index.json and a
        folder per tag (DIR must be empty or absent)
    uv run --frozen python -m tests.support.schema_history pack SOURCE --upstream GITDIR
        rebuilds the four files from such a folder, after checking every file of it against the
        ``schema/`` folder of each tag in GITDIR (a clone of the upstream repository)
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import lzma
import re
import subprocess
import sys
import tarfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

HOME = Path(__file__).resolve().parents[1] / "data" / "acp-schemas"
UPSTREAM = "agentclientprotocol/agent-client-protocol"
LICENCE = "Apache-2.0"
UPSTREAM_FOLDER = "schema"  # where the schema files lie in the upstream repository, at every tag
XZ_PRESET = 9
SUM_LINE = re.compile(r"([0-9a-f]{64})  (\S+)")


class HistoryError(Exception):
    """The stored history (or a folder to pack) is not what it should be: what and where."""


@dataclass(frozen=True, slots=True)
class Stored:
    """The files of a stored history (``HOME`` by default; tests pass altered copies)."""

    home: Path = HOME

    @property
    def archive(self) -> Path:
        return self.home / "revisions.tar.xz"

    @property
    def index(self) -> Path:
        return self.home / "index.json"

    @property
    def sums(self) -> Path:
        return self.home / "SHA256SUMS"

    @property
    def provenance(self) -> Path:
        return self.home / "provenance.json"


def read_index(path: Path) -> list[dict[str, Any]]:
    """The entries of a revision index: ``{"tag", "date", "files", "same_as"}`` each."""
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise HistoryError(f"{path}: cannot read the revision index: {error}") from error
    if not isinstance(raw, list):
        raise HistoryError(f"{path}: a revision index is a JSON array of entries")
    for number, entry in enumerate(raw):
        if not (
            isinstance(entry, dict)
            and isinstance(entry.get("tag"), str)
            and isinstance(entry.get("files"), list)
            and all(isinstance(f, str) for f in entry["files"])
        ):
            raise HistoryError(f"{path}#/{number}: an entry needs a tag (string) and files (list of strings)")
    return raw


def listed(index: list[dict[str, Any]]) -> list[str]:
    """Every file the index names, as ``tag/file``, sorted."""
    return sorted(f"{entry['tag']}/{name}" for entry in index for name in entry["files"])


def read_sums(path: Path) -> dict[str, str]:
    """``SHA256SUMS`` (the format of ``sha256sum``): file -> sha256."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        raise HistoryError(f"{path}: cannot read the sums: {error}") from error
    sums: dict[str, str] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        match = SUM_LINE.fullmatch(line)
        if match is None or match[2] in sums:
            raise HistoryError(f"{path}:{number}: not a '<sha256>  <file>' line of a file not named before: {line!r}")
        sums[match[2]] = match[1]
    return sums


def format_sums(sums: dict[str, str]) -> str:
    return "".join(f"{sums[name]}  {name}\n" for name in sorted(sums))


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def tar_stream(folder: Path, names: list[str]) -> bytes:
    """A tar (ustar) of ``names`` under ``folder``: sorted, regular files only, mtime 0, owner 0:0
    without names, mode 0644; the same bytes for the same files wherever and whenever it runs."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.USTAR_FORMAT) as archive:
        for name in sorted(names):
            data = (folder / name).read_bytes()
            info = tarfile.TarInfo(name)
            info.size, info.mtime, info.mode = len(data), 0, 0o644
            info.uid = info.gid = 0
            info.uname = info.gname = ""
            archive.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def _safe_name(name: str) -> bool:
    path = PurePosixPath(name)
    return bool(name) and not path.is_absolute() and ".." not in path.parts and path.as_posix() == name


def unpack(target: Path, stored: Stored | None = None) -> Path:
    """Write the stored history into ``target`` (absent or empty): index.json and a folder per tag.
    Every file is checked against ``SHA256SUMS`` and the index; any difference is a :class:`HistoryError`."""
    stored = stored or Stored()
    if target.exists() and (not target.is_dir() or any(target.iterdir())):
        raise HistoryError(f"{target}: not an empty folder; unpack writes only into an empty or new folder")
    index_bytes = stored.index.read_bytes()
    names = listed(read_index(stored.index))
    sums = read_sums(stored.sums)
    if set(names) != set(sums):
        raise HistoryError(
            f"{stored.index} and {stored.sums} disagree: listed only in the index {sorted(set(names) - set(sums))}, "
            f"only in the sums {sorted(set(sums) - set(names))}"
        )
    target.mkdir(parents=True, exist_ok=True)
    written: set[str] = set()
    with tarfile.open(stored.archive, mode="r:xz") as archive:
        for member in archive:
            name = member.name
            if not member.isfile() or not _safe_name(name) or name not in sums or name in written:
                raise HistoryError(
                    f"{stored.archive}: unexpected member {name!r} (regular files named in SHA256SUMS only, once each)"
                )
            extracted = archive.extractfile(member)
            assert extracted is not None  # a regular file
            data = extracted.read()
            if sha256(data) != sums[name]:
                raise HistoryError(f"{stored.archive}: {name} does not have the sha256 recorded in {stored.sums}")
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            (target / name).write_bytes(data)
            written.add(name)
    if written != set(sums):
        raise HistoryError(f"{stored.archive} lacks {sorted(set(sums) - written)}")
    (target / "index.json").write_bytes(index_bytes)
    return target


def _git(upstream: Path, *args: str) -> bytes:
    done = subprocess.run(["git", "-C", str(upstream), *args], capture_output=True, check=False)
    if done.returncode != 0:
        raise HistoryError(f"git -C {upstream} {' '.join(args)}: {done.stderr.decode(errors='replace').strip()}")
    return done.stdout


def provenance(source: Path, index: list[dict[str, Any]], upstream: Path) -> dict[str, Any]:
    """Where each revision came from: the commit of its tag (and of every tag with the same files) in
    ``upstream``, after checking that each file of ``source`` is that tag's ``schema/`` file, byte for byte."""
    revisions = []
    for entry in index:
        commits = {}
        for tag in [entry["tag"], *entry.get("same_as", [])]:
            commits[tag] = _git(upstream, "rev-parse", f"{tag}^{{commit}}").decode().strip()
            for name in entry["files"]:
                published = _git(upstream, "show", f"{tag}:{UPSTREAM_FOLDER}/{name}")
                if published != (source / entry["tag"] / name).read_bytes():
                    raise HistoryError(f"{source / entry['tag'] / name} differs from {UPSTREAM_FOLDER}/{name} at {tag}")
        date = _git(upstream, "log", "-1", "--format=%cI", commits[entry["tag"]]).decode().strip()
        if date != entry.get("date"):
            raise HistoryError(f"{entry['tag']}: the index says {entry.get('date')!r}, its commit says {date!r}")
        revisions.append(
            {
                "tag": entry["tag"],
                "commit": commits[entry["tag"]],
                "date": date,
                "same_as": {tag: commits[tag] for tag in entry.get("same_as", [])},
            }
        )
    return {
        "repository": f"https://github.com/{UPSTREAM}",
        "licence": LICENCE,
        "path": f"{UPSTREAM_FOLDER}/",
        "collected": (
            "every distinct set of JSON files in schema/ at a release tag; a tag whose files equal an "
            "earlier tag's is listed under same_as of that one"
        ),
        "revisions": revisions,
    }


def pack(source: Path, upstream: Path, stored: Stored | None = None) -> None:
    """Rebuild the stored history from ``source`` (index.json and a folder per tag). Writes the four
    files of ``stored`` and nothing else; nothing is written when a check fails."""
    stored = stored or Stored()
    index = read_index(source / "index.json")
    names = listed(index)
    present = {p.relative_to(source).as_posix() for p in source.rglob("*") if p.is_file()}
    extra = sorted(present - set(names) - {"index.json", "README.md"})
    missing = sorted(set(names) - present)
    if extra or missing:
        raise HistoryError(f"{source}: files the index does not list {extra}; listed but missing {missing}")
    record = provenance(source, index, upstream)
    archive = lzma.compress(tar_stream(source, names), format=lzma.FORMAT_XZ, check=lzma.CHECK_CRC64, preset=XZ_PRESET)
    sums = {name: sha256((source / name).read_bytes()) for name in names}
    stored.home.mkdir(parents=True, exist_ok=True)
    stored.archive.write_bytes(archive)
    stored.index.write_bytes((source / "index.json").read_bytes())
    stored.sums.write_text(format_sums(sums), encoding="utf-8")
    stored.provenance.write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.support.schema_history", description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    unpack_command = commands.add_parser("unpack", help="write index.json and a folder per tag into DIR")
    unpack_command.add_argument("target", type=Path, metavar="DIR")
    pack_command = commands.add_parser("pack", help="rebuild tests/data/acp-schemas from a folder")
    pack_command.add_argument("source", type=Path, metavar="SOURCE")
    pack_command.add_argument("--upstream", type=Path, required=True, metavar="GITDIR", help=f"a clone of {UPSTREAM}")
    args = parser.parse_args(argv)
    try:
        if args.command == "unpack":
            unpack(args.target)
            print(f"wrote {args.target}: index.json and {len(read_index(Stored().index))} revision folders")
        else:
            pack(args.source, args.upstream)
            print(f"wrote {HOME}: revisions.tar.xz, index.json, SHA256SUMS, provenance.json")
    except HistoryError as error:
        print(f"schema_history: error: {error}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
