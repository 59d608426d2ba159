"""Offline tests for the schema fetch step and the schema lock."""

from __future__ import annotations

import base64
import hashlib
import io
import json
import shutil
import subprocess
import tarfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from acpgen.errors import AcpgenError
from acpgen.load.lock import read_lock, sha256_file, verify_files
from acpgen.output.project_files import fetch_schema
from acpgen.source.schema_lock import LOCK_NAME, SchemaLock, lock_to_json
from tests.support.crash import read_only

PACKAGE = "@example/sdk"
VERSION = "1.2.3"
V1 = b'{"$schema": "https://json-schema.org/draft/2020-12/schema", "title": "v1"}\n'
V1_UNSTABLE = b'{"title": "v1 unstable"}\n'

Member = tuple[tarfile.TarInfo, bytes | None]


def regular(name: str, data: bytes) -> Member:
    """A regular-file tar member."""
    info = tarfile.TarInfo(name)
    info.size = len(data)
    return info, data


def link(name: str, target: str, kind: bytes) -> Member:
    """A symbolic or hard link tar member."""
    info = tarfile.TarInfo(name)
    info.type = kind
    info.linkname = target
    return info, None


def base_members() -> list[Member]:
    """The entries of a well-formed fake npm tarball."""
    return [
        regular("package/package.json", b'{"name": "@example/sdk", "version": "1.2.3"}'),
        regular("package/schema/v1/schema.json", V1),
        regular("package/schema/v1/schema.unstable.json", V1_UNSTABLE),
        regular("package/schema/v1/README.md", b"not a schema\n"),
        regular("package/dist/x.js", b"export {};\n"),
    ]


def make_tarball(path: Path, members: list[Member]) -> Path:
    """Write a gzip tarball holding ``members``."""
    with tarfile.open(path, "w:gz") as archive:
        for info, data in members:
            archive.addfile(info, io.BytesIO(data) if data is not None else None)
    return path


def sri(path: Path) -> str:
    """The sha512 SRI string of a file, computed independently of the code under test."""
    return "sha512-" + base64.b64encode(hashlib.sha512(path.read_bytes()).digest()).decode()


class FakeNpm:
    """Answers ``npm view ... dist.integrity`` and ``npm pack ... --pack-destination``."""

    def __init__(self, tarball: Path, advertised: str | None = None) -> None:
        self.tarball = tarball
        self.advertised = advertised if advertised is not None else sri(tarball)
        self.calls: list[list[str]] = []

    def __call__(self, args: Sequence[str], **kwargs: Any) -> subprocess.CompletedProcess[str]:
        """Mimic the two npm calls fetch_schema makes."""
        argv = list(args)
        self.calls.append(argv)
        assert kwargs["cwd"] is not None
        if argv[1] == "view":
            return subprocess.CompletedProcess(argv, 0, json.dumps(self.advertised), "")
        assert argv[1] == "pack"
        destination = Path(argv[argv.index("--pack-destination") + 1])
        shutil.copyfile(self.tarball, destination / "example-sdk-1.2.3.tgz")
        entry = {"filename": "example-sdk-1.2.3.tgz", "integrity": sri(self.tarball)}
        return subprocess.CompletedProcess(argv, 0, json.dumps([entry]), "")


def snapshot(root: Path) -> dict[str, bytes]:
    """Every file below ``root`` with its content, to prove nothing changed."""
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.fixture
def schema_dir(tmp_path: Path) -> Path:
    """A schema directory that already holds an unrelated, hand-written file."""
    directory = tmp_path / "project" / "schema"
    directory.mkdir(parents=True)
    (directory / "README.md").write_text("keep me\n")
    return directory


def fetch(tmp_path: Path, schema_dir: Path, members: list[Member], **fake: Any) -> SchemaLock:
    """Build a tarball from ``members`` and fetch it through a fake npm."""
    tarball = make_tarball(tmp_path / "fake.tgz", members)
    return fetch_schema(VERSION, schema_dir, package=PACKAGE, run=FakeNpm(tarball, **fake))


def test_happy_path_writes_schema_files_and_lock(tmp_path: Path, schema_dir: Path) -> None:
    tarball = make_tarball(tmp_path / "fake.tgz", base_members())
    npm = FakeNpm(tarball)

    lock = fetch_schema(VERSION, schema_dir, package=PACKAGE, run=npm)

    assert [call[1] for call in npm.calls] == ["view", "pack"]
    assert npm.calls[0] == [
        "npm",
        "view",
        f"{PACKAGE}@{VERSION}",
        "dist.integrity",
        "--json",
    ]
    assert (schema_dir / "v1" / "schema.json").read_bytes() == V1
    assert (schema_dir / "v1" / "schema.unstable.json").read_bytes() == V1_UNSTABLE
    assert (schema_dir / "README.md").read_text() == "keep me\n"
    assert sorted(p.name for p in schema_dir.iterdir()) == [
        "README.md",
        LOCK_NAME,
        "v1",
    ]
    assert sorted(p.name for p in (schema_dir / "v1").iterdir()) == [
        "schema.json",
        "schema.unstable.json",
    ]
    assert lock == SchemaLock(
        package=PACKAGE,
        version=VERSION,
        integrity=sri(tarball),
        files=(
            ("v1/schema.json", hashlib.sha256(V1).hexdigest()),
            ("v1/schema.unstable.json", hashlib.sha256(V1_UNSTABLE).hexdigest()),
        ),
    )
    assert read_lock(schema_dir) == lock
    verify_files(schema_dir, lock)
    assert not [p for p in schema_dir.parent.iterdir() if p.name != "schema"]


def test_lock_file_is_deterministic_json(tmp_path: Path, schema_dir: Path) -> None:
    lock = fetch(tmp_path, schema_dir, base_members())

    expected = {
        "files": dict(lock.files),
        "integrity": lock.integrity,
        "package": PACKAGE,
        "version": VERSION,
    }
    text = (schema_dir / LOCK_NAME).read_text()
    assert text == json.dumps(expected, indent=2, sort_keys=True) + "\n"
    assert lock_to_json(read_lock(schema_dir)) == text
    assert sorted(p.name for p in schema_dir.iterdir()) == [
        "README.md",
        LOCK_NAME,
        "v1",
    ]


def test_refetch_removes_files_only_the_old_lock_listed(tmp_path: Path, schema_dir: Path) -> None:
    fetch(
        tmp_path,
        schema_dir,
        [*base_members(), regular("package/schema/v9/old.json", b"[]")],
    )
    (schema_dir / "v1" / "notes.txt").write_text("mine\n")

    lock = fetch(tmp_path, schema_dir, base_members())

    assert not (schema_dir / "v9").exists()
    assert (schema_dir / "v1" / "notes.txt").read_text() == "mine\n"
    assert (schema_dir / "README.md").exists()
    assert [name for name, _ in lock.files] == [
        "v1/schema.json",
        "v1/schema.unstable.json",
    ]


def test_integrity_mismatch_is_refused_and_writes_nothing(tmp_path: Path, schema_dir: Path) -> None:
    before = snapshot(schema_dir.parent)
    wrong = "sha512-" + base64.b64encode(hashlib.sha512(b"other").digest()).decode()

    with pytest.raises(AcpgenError, match="integrity") as caught:
        fetch(tmp_path, schema_dir, base_members(), advertised=wrong)

    assert wrong in str(caught.value)
    assert snapshot(schema_dir.parent) == before
    assert sorted(p.name for p in schema_dir.parent.iterdir()) == ["schema"]


SYMLINK, HARDLINK = tarfile.SYMTYPE, tarfile.LNKTYPE
UNSAFE_ENTRIES = [
    pytest.param(regular("package/schema/../../evil.json", b"{}"), "'..'", id="dotdot"),
    pytest.param(regular("package/../evil.json", b"{}"), "'..'", id="dotdot-elsewhere"),
    pytest.param(regular("/package/schema/v1/evil.json", b"{}"), "absolute", id="absolute"),
    pytest.param(regular("/tmp/evil.json", b"{}"), "absolute", id="absolute-elsewhere"),
    pytest.param(regular("package/schema/v1\\e.json", b"{}"), "backslash", id="backslash"),
    pytest.param(
        link("package/schema/v1/e.json", "/etc/passwd", SYMLINK),
        "symbolic",
        id="symlink",
    ),
    pytest.param(
        link("package/schema/v1/e.json", "package/x", HARDLINK),
        "hard link",
        id="hardlink",
    ),
    pytest.param(link("package/schema/v2", "../../..", SYMLINK), "symbolic", id="dir-symlink"),
]


@pytest.mark.parametrize(("bad", "reason"), UNSAFE_ENTRIES)
def test_unsafe_tarball_entries_are_refused_and_write_nothing(
    tmp_path: Path, schema_dir: Path, bad: Member, reason: str
) -> None:
    before = snapshot(tmp_path)

    with pytest.raises(AcpgenError, match=reason) as caught:
        fetch(tmp_path, schema_dir, [*base_members(), bad])

    assert bad[0].name in str(caught.value)
    after = snapshot(tmp_path)
    del after["fake.tgz"]
    assert after == before
    assert sorted(p.name for p in schema_dir.parent.iterdir()) == ["schema"]


def test_npm_missing_becomes_acpgen_error(schema_dir: Path) -> None:
    def no_npm(args: Sequence[str], **kwargs: Any) -> subprocess.CompletedProcess[str]:
        raise FileNotFoundError(args[0])

    with pytest.raises(AcpgenError, match="not found") as caught:
        fetch_schema(VERSION, schema_dir, package=PACKAGE, npm="no-such-npm", run=no_npm)

    assert "Install Node.js" in caught.value.problems[0].hint


def test_unknown_version_becomes_acpgen_error(schema_dir: Path) -> None:
    error = {"error": {"code": "E404", "summary": "No match found for version 9.9.9"}}

    def not_found(args: Sequence[str], **kwargs: Any) -> subprocess.CompletedProcess[str]:
        return subprocess.CompletedProcess(list(args), 1, json.dumps(error), "npm error 404\n")

    with pytest.raises(AcpgenError, match=r"No match found for version 9\.9\.9") as caught:
        fetch_schema("9.9.9", schema_dir, package=PACKAGE, run=not_found)

    assert "npm view @example/sdk versions" in caught.value.problems[0].hint


def test_verify_files_names_edited_and_missing_files(tmp_path: Path, schema_dir: Path) -> None:
    lock = fetch(tmp_path, schema_dir, base_members())
    (schema_dir / "v1" / "schema.json").write_bytes(V1 + b" ")
    (schema_dir / "v1" / "schema.unstable.json").unlink()

    with pytest.raises(AcpgenError) as caught:
        verify_files(schema_dir, lock)

    problems = caught.value.problems
    assert [p.where for p in problems] == [
        str(schema_dir / "v1" / "schema.json"),
        str(schema_dir / "v1" / "schema.unstable.json"),
    ]
    assert "v1/schema.json" in problems[0].what
    assert sha256_file(schema_dir / "v1" / "schema.json") in problems[0].what
    assert "missing" in problems[1].what
    for problem in problems:
        assert f"make schema VERSION={VERSION}" in problem.hint
        assert f"acpgen schema fetch --version {VERSION}" in problem.hint


def test_read_lock_missing_gives_clear_error(schema_dir: Path) -> None:
    with pytest.raises(AcpgenError, match="not found") as caught:
        read_lock(schema_dir)

    problem = caught.value.problems[0]
    assert problem.where == str(schema_dir / LOCK_NAME)
    assert "make schema" in problem.hint
    assert "acpgen schema fetch" in problem.hint


def lock_json(**files: str) -> str:
    """A lock document with valid header fields and the given ``files`` entries."""
    document = {"package": "p", "version": "1", "integrity": "sha512-x", "files": files}
    return json.dumps(document)


@pytest.mark.parametrize(
    ("content", "where"),
    [
        ("not json", "#"),  # the document as a whole, as for every JSON input (acpgen.load.nesting.parse)
        ('{"package": "p", "version": "1", "integrity": "sha512-x"}', ""),
        (lock_json(**{"../x.json": "0" * 64}), "#/files/..~1x.json"),
        (lock_json(**{"v1/schema.json": "xyz"}), "#/files/v1~1schema.json"),
    ],
    ids=["not-json", "no-files", "escaping-path", "bad-digest"],
)
def test_read_lock_malformed_gives_clear_error(schema_dir: Path, content: str, where: str) -> None:
    (schema_dir / LOCK_NAME).write_text(content)

    with pytest.raises(AcpgenError) as caught:
        read_lock(schema_dir)

    problem = caught.value.problems[0]
    assert problem.where == str(schema_dir / LOCK_NAME) + where
    assert "make schema" in problem.hint


def test_a_read_only_schema_folder_is_a_clear_error(tmp_path: Path, schema_dir: Path) -> None:
    fetch(tmp_path, schema_dir, base_members())
    before = snapshot(schema_dir)
    with read_only(schema_dir), pytest.raises(AcpgenError) as caught:
        fetch(tmp_path, schema_dir, [*base_members(), regular("package/schema/v2/new.json", b"{}")])
    [problem] = caught.value.problems
    assert problem.where == str(schema_dir.resolve()) and "cannot write into the folder" in problem.what
    assert "writable" in problem.hint and "nothing was changed" in problem.hint
    assert snapshot(schema_dir) == before
    assert not [p for p in schema_dir.iterdir() if p.name.startswith(".")]


def test_fetch_never_rewrites_the_schema_shipped_with_acpgen(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """In a folder whose configuration names no ``schema-dir`` (or that has none), the schema is the
    one inside acpgen's installed package: ``schema fetch`` must refuse, not rewrite acpgen itself."""
    from acpgen.commands import main
    from acpgen.resources import schema_dir as shipped

    before = {p.name: p.read_bytes() for p in sorted(Path(shipped()).rglob("*")) if p.is_file()}
    monkeypatch.chdir(tmp_path)
    assert main(["schema", "fetch", "--version", "2.2.0"]) == 2
    err = capsys.readouterr().err
    assert "shipped with acpgen" in err and "schema-dir" in err
    assert {p.name: p.read_bytes() for p in sorted(Path(shipped()).rglob("*")) if p.is_file()} == before
