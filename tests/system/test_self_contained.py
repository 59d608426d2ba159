"""The suite reads nothing outside the repository (issue 30).

The schema history lives in ``tests/data/acp-schemas`` (``tests/support/schema_history.py``): the archive
holds exactly what its index lists, unpacks to the recorded sha256s, is what ``pack`` writes, and
every revision says where it came from; a damaged archive is refused, never half-read. A scan of
the tests, the benchmarks, the Makefile and the CI script fails on a path that leaves the clone
(the folder beside it, the development machine's folders, the home folder, ``__file__`` climbing
above the root) or on a Makefile / CI default for ``ACP_SCHEMAS``.
"""

from __future__ import annotations

import json
import lzma
import re
import tarfile
from pathlib import Path

import pytest

from tests.support.schema_history import (
    HistoryError,
    Stored,
    format_sums,
    listed,
    read_index,
    read_sums,
    sha256,
    tar_stream,
    unpack,
)

ROOT = Path(__file__).resolve().parents[2]
STORED = Stored()
SCANNED = ["Makefile", ".ci/run", "pyproject.toml", "tests/**/*.py", "tests/**/*.mjs", "bench/**/*.py"]
SKIPPED_PARTS = {"node_modules", "golden", "data", "__pycache__"}
THIS = Path(__file__).resolve()  # names the patterns it looks for, so it is not scanned itself

OUTSIDE = [
    (re.compile(r"\.\./+shared\b|\bshared/acp-schemas\b"), "the shared folder beside the clone"),
    (re.compile(r"/work/(?:shared|main|wt|\.library|\.mirror)\b"), "a folder of the development machine"),
    (re.compile(r"Path\.home\(\)|expanduser\(|\bos\.environ\[[\"']HOME[\"']\]|\$\(?HOME\b"), "the home folder"),
    (re.compile(r"\bROOT\.parent\b|\bROOT\s*/\s*[\"']\.\."), "the folder above the repository root"),
    (re.compile(r"ACP_SCHEMAS\s*[?:+]?=\s*\S|export\s+ACP_SCHEMAS\b"), "a default for ACP_SCHEMAS"),
]
PARENTS = re.compile(r"Path\(__file__\)(?:\.resolve\(\))?\.parents\[(\d+)\]")
PARENT_CHAIN = re.compile(r"Path\(__file__\)(?:\.resolve\(\))?((?:\.parent\b)+)")


def escapes(relative: str, text: str) -> list[str]:
    """What in ``text`` (the file at ``relative`` below the root) points outside the repository."""
    found = [
        f"{relative}:{text.count(chr(10), 0, m.start()) + 1}: {m[0]!r} ({why})"
        for pattern, why in OUTSIDE
        for m in pattern.finditer(text)
    ]
    depth = len(Path(relative).parts) - 1  # folders between the root and the file
    for m in PARENTS.finditer(text):
        if int(m[1]) > depth:
            found.append(f"{relative}: {m[0]!r} climbs above the repository root")
    for m in PARENT_CHAIN.finditer(text):
        if m[1].count(".parent") > depth + 1:
            found.append(f"{relative}: {m[0]!r} climbs above the repository root")
    return found


def scanned_files() -> list[Path]:
    files = {p for pattern in SCANNED for p in ROOT.glob(pattern) if p.is_file()}
    return sorted(p for p in files if p != THIS and not SKIPPED_PARTS & set(p.relative_to(ROOT).parts))


def test_nothing_points_outside_the_repository() -> None:
    files = scanned_files()
    assert {"Makefile", ".ci/run", "tests/conftest.py", "bench/diff_history.py"} <= {
        p.relative_to(ROOT).as_posix() for p in files
    }
    found = [hit for p in files for hit in escapes(p.relative_to(ROOT).as_posix(), p.read_text(encoding="utf-8"))]
    assert not found, "tests must read nothing outside the clone:\n" + "\n".join(found)


@pytest.mark.parametrize(
    ("relative", "text"),
    [
        ("Makefile", "ACP_SCHEMAS ?= ../shared/acp-schemas\n"),
        (".ci/run", 'export ACP_SCHEMAS="$(cd .. && pwd)/x"\n'),
        ("tests/test_x.py", 'DATA = Path("/work/shared/guide")\n'),
        ("tests/test_x.py", "HISTORY = Path(__file__).resolve().parents[2] / 'shared'\n"),
        ("tests/peers/x.py", "UP = Path(__file__).parent.parent.parent.parent\n"),
        ("tests/test_x.py", "CACHE = Path.home() / '.cache'\n"),
        ("tests/test_x.py", "SIDE = ROOT.parent / 'other'\n"),
    ],
)
def test_the_scan_finds_a_path_that_leaves_the_clone(relative: str, text: str) -> None:
    assert escapes(relative, text)


def test_the_scan_lets_paths_inside_the_repository_pass() -> None:
    text = "ROOT = Path(__file__).resolve().parents[2]\nUP = Path(__file__).parent.parent.parent\n"
    assert escapes("tests/peers/x.py", text) == []
    assert escapes("tests/x.py", "ROOT = Path(__file__).resolve().parents[1]\ncwd = '/tmp'\n") == []


def test_the_archive_holds_exactly_what_the_index_lists() -> None:
    names = listed(read_index(STORED.index))
    assert len(names) == len(set(names)) > 200
    with tarfile.open(STORED.archive, mode="r:xz") as archive:
        members = archive.getmembers()
    assert [m.name for m in members] == names  # sorted, once each, nothing unlisted
    assert sorted(read_sums(STORED.sums)) == names
    odd = [
        m.name
        for m in members
        if not m.isfile() or (m.mtime, m.uid, m.gid, m.uname, m.gname, m.mode) != (0, 0, 0, "", "", 0o644)
    ]
    assert not odd, f"members that are not plain files with normalised headers: {odd}"


@pytest.fixture(scope="module")
def unpacked(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The committed history, unpacked once for this module (whatever ACP_SCHEMAS says)."""
    return unpack(tmp_path_factory.mktemp("stored") / "history")


def test_unpacking_gives_the_recorded_bytes(unpacked: Path) -> None:
    on_disk = {p.relative_to(unpacked).as_posix(): p for p in unpacked.rglob("*") if p.is_file()}
    sums = read_sums(STORED.sums)
    assert set(on_disk) == set(sums) | {"index.json"}
    assert {name: sha256(on_disk[name].read_bytes()) for name in sums} == sums
    assert on_disk["index.json"].read_bytes() == STORED.index.read_bytes()
    layouts = {name.split("/", 1)[1] for name in sums}  # every layout of the upstream history is there
    assert {"methods.json", "schema.unstable.json", "v2/schema.unstable.json"} <= layouts


def test_the_archive_is_what_pack_writes(unpacked: Path) -> None:
    names = listed(read_index(STORED.index))
    assert lzma.decompress(STORED.archive.read_bytes()) == tar_stream(unpacked, names)


def test_every_revision_says_where_it_came_from() -> None:
    record = json.loads(STORED.provenance.read_text(encoding="utf-8"))
    assert record["repository"] == "https://github.com/agentclientprotocol/agent-client-protocol"
    assert record["licence"] == "Apache-2.0" and record["path"] == "schema/"
    index = read_index(STORED.index)
    assert [r["tag"] for r in record["revisions"]] == [e["tag"] for e in index]
    for revision, entry in zip(record["revisions"], index, strict=True):
        assert revision["date"] == entry["date"]
        assert sorted(revision["same_as"]) == sorted(entry["same_as"])
        commits = [revision["commit"], *revision["same_as"].values()]
        assert all(re.fullmatch(r"[0-9a-f]{40}", c) for c in commits), revision


def _small_copy(tmp_path: Path, how: str) -> Stored:
    """A stored history of the first two revisions (small, to keep the test fast), its archive
    altered ``how``."""
    index = read_index(STORED.index)[:2]
    names = listed(index)
    folder = tmp_path / "files"
    with tarfile.open(STORED.archive, mode="r:xz") as archive:
        for name in names:
            extracted = archive.extractfile(name)
            assert extracted is not None
            (folder / name).parent.mkdir(parents=True, exist_ok=True)
            (folder / name).write_bytes(extracted.read())
    stored = Stored(tmp_path / "stored")
    stored.home.mkdir()
    stored.index.write_text(json.dumps(index), encoding="utf-8")
    sums = read_sums(STORED.sums)
    stored.sums.write_text(format_sums({name: sums[name] for name in names}), encoding="utf-8")
    if how == "changed-byte":
        target = folder / names[0]
        target.write_bytes(target.read_bytes().replace(b"{", b"[", 1))
    elif how == "missing-file":
        names = names[1:]
    elif how == "escaping-member":
        (tmp_path / "evil.json").write_bytes(b"{}")
        names = [*names, "../evil.json"]
    stored.archive.write_bytes(lzma.compress(tar_stream(folder, names), preset=0))
    (tmp_path / "evil.json").unlink(missing_ok=True)
    return stored


def test_an_intact_copy_unpacks(tmp_path: Path) -> None:  # the control of the test below
    folder = unpack(tmp_path / "out", _small_copy(tmp_path, "intact"))
    assert sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()) == [
        "index.json", "v0.0.13/methods.json", "v0.0.13/schema.json", "v0.0.14/meta.json", "v0.0.14/schema.json"
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("how", "said"),
    [
        ("changed-byte", "does not have the sha256 recorded"),
        ("missing-file", "lacks ["),
        ("escaping-member", "unexpected member '../evil.json'"),
    ],
)
def test_a_damaged_archive_is_refused(tmp_path: Path, how: str, said: str) -> None:
    stored = _small_copy(tmp_path, how)
    with pytest.raises(HistoryError, match=re.escape(said)):
        unpack(tmp_path / "out", stored)
    assert not (tmp_path / "evil.json").exists()  # nothing written outside the folder
    assert not (tmp_path / "out" / "index.json").exists()  # never a folder that looks complete


def test_unpack_writes_only_into_an_empty_folder(tmp_path: Path) -> None:
    (tmp_path / "mine.txt").write_text("a user's file", encoding="utf-8")
    with pytest.raises(HistoryError, match="not an empty folder"):
        unpack(tmp_path)
    assert [p.name for p in tmp_path.iterdir()] == ["mine.txt"]
