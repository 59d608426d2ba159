"""Fetch the ACP JSON schema from its npm package and pin it under ``schema/`` with a lock.

The steps, in order; nothing under the schema directory changes until all checks passed:

1. ``npm view <package>@<version> dist.integrity --json``: the integrity the registry advertises.
2. ``npm pack <package>@<version> --json --pack-destination <tmp>``: download the tarball.
3. Hash the tarball (sha512, SRI form) and refuse it unless it matches the advertised integrity.
4. Read only ``package/schema/**/*.json`` from the tarball, refusing unsafe entries.
5. Write the files and the lock, and remove the files that only the previous lock listed, in
   one atomic write: a fetch killed at any moment leaves the old pinned set or the new one. Writing
   is output's work (:func:`acpgen.output.project_files.fetch_schema` does steps 1 to 5); this
   module downloads and verifies, and writes nothing but npm's temporary folder.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import subprocess
import tarfile
import tempfile
import zlib
from collections.abc import Callable
from pathlib import Path, PurePosixPath

from acpgen.errors import AcpgenError, Problem
from acpgen.source.schema_lock import LOCK_NAME, SchemaLock, unsafe_relative_path

Run = Callable[..., subprocess.CompletedProcess[str]]
"""How npm is invoked: a callable with the signature of :func:`subprocess.run` (text mode)."""

DEFAULT_PACKAGE = "@agentclientprotocol/sdk"
NPM_TIMEOUT_SECONDS = 300.0
MAX_SCHEMA_FILE_BYTES = 64 * 1024 * 1024

_SCHEMA_PREFIX = ("package", "schema")
VERSION = re.compile(r"\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?")
_PACKAGE = re.compile(r"(?:@[a-z0-9][a-z0-9._~-]*/)?[a-z0-9][a-z0-9._~-]*")


def download_schema(
    version: str,
    package: str = DEFAULT_PACKAGE,
    npm: str = "npm",
    run: Run = subprocess.run,
) -> tuple[dict[str, bytes], SchemaLock]:
    """Download ``package@version`` with npm and verify it (steps 1 to 4): its JSON schemas, by path
    below ``schema/``, and the lock that pins them. Nothing is written but npm's temporary folder."""
    spec = _package_spec(package, version)
    with tempfile.TemporaryDirectory(prefix="acpgen-npm-") as tmp:
        workdir = Path(tmp)
        advertised = _registry_integrity(spec, npm, workdir, run)
        tarball, reported = _pack(spec, npm, workdir, run)
        integrity = _verified_integrity(spec, tarball, advertised, reported)
        files = read_schema_files(tarball)
    digests = tuple(sorted((name, hashlib.sha256(data).hexdigest()) for name, data in files.items()))
    return files, SchemaLock(package=package, version=version, integrity=integrity, files=digests)


def _package_spec(package: str, version: str) -> str:
    """Return ``package@version`` after checking both look like an npm name and an exact semver."""
    if not _PACKAGE.fullmatch(package):
        raise AcpgenError(
            Problem(
                what=f"{package!r} is not an npm package name",
                where=package,
                hint="Pass a name like @scope/name.",
            )
        )
    if not VERSION.fullmatch(version):
        raise AcpgenError(
            Problem(
                what=f"{version!r} is not an exact version",
                where=f"{package}@{version}",
                hint="Pin an exact published version such as 2.4.0 (no ranges or tags).",
            )
        )
    return f"{package}@{version}"


def _npm(args: list[str], spec: str, npm: str, workdir: Path, run: Run) -> str:
    """Run ``npm args...`` in ``workdir`` and return its stdout, or raise AcpgenError."""
    command = [npm, *args]
    shown = " ".join(command)
    try:
        result = run(
            command,
            cwd=workdir,
            capture_output=True,
            text=True,
            check=False,
            timeout=NPM_TIMEOUT_SECONDS,
        )
    except FileNotFoundError:
        hint = "Install Node.js with npm, or pass the path of the npm executable."
        raise AcpgenError(Problem(what=f"the npm client {npm!r} was not found", where=spec, hint=hint)) from None
    except subprocess.TimeoutExpired:
        hint = "Check the network connection and the npm registry configuration, then retry."
        what = f"`{shown}` did not finish within {NPM_TIMEOUT_SECONDS:.0f} seconds"
        raise AcpgenError(Problem(what=what, where=spec, hint=hint)) from None
    except OSError as exc:
        hint = "Check that the npm executable can be run."
        raise AcpgenError(Problem(what=f"cannot run `{shown}`: {exc}", where=spec, hint=hint)) from exc
    if result.returncode != 0:
        what = f"`{shown}` failed with exit code {result.returncode}: {_npm_failure(result)}"
        package = spec.rpartition("@")[0]
        hint = (
            f"Check that the version is published (`npm view {package} versions`) "
            "and that the npm registry is reachable."
        )
        raise AcpgenError(Problem(what=what, where=spec, hint=hint))
    return result.stdout


def _npm_failure(result: subprocess.CompletedProcess[str]) -> str:
    """The most useful one-line reason for a failed npm call: its JSON error summary or last stderr line."""
    try:
        error = json.loads(result.stdout or "null")["error"]
        summary = error["summary"]
        if isinstance(summary, str) and summary:
            return summary
    except (ValueError, TypeError, KeyError):
        pass
    lines = [line for line in (result.stderr or "").splitlines() if line.strip()]
    errors = [line for line in lines if not line.startswith("npm warn")]
    return (errors or lines or ["no error output"])[-1]


def _parse_json(stdout: str, spec: str, command: str) -> object:
    """Parse npm's ``--json`` output, raising AcpgenError if it is not JSON."""
    try:
        value: object = json.loads(stdout)
    except ValueError:
        hint = "Upgrade npm, or check that nothing else writes to npm's standard output."
        raise AcpgenError(Problem(what=f"`npm {command} --json` did not print JSON", where=spec, hint=hint)) from None
    return value


def _registry_integrity(spec: str, npm: str, workdir: Path, run: Run) -> str:
    """The SRI integrity string the registry advertises for ``spec``'s tarball."""
    stdout = _npm(["view", spec, "dist.integrity", "--json"], spec, npm, workdir, run)
    if not stdout.strip():
        hint = "Pin a version that is published; `npm view <package> versions` lists them."
        raise AcpgenError(Problem(what="the registry has no such version", where=spec, hint=hint))
    value = _parse_json(stdout, spec, "view")
    if not isinstance(value, str) or not value:
        hint = "Pin one exact published version; the registry must report one dist.integrity."
        what = f"the registry did not report a single integrity string (got {value!r})"
        raise AcpgenError(Problem(what=what, where=spec, hint=hint))
    return value


def _pack(spec: str, npm: str, workdir: Path, run: Run) -> tuple[Path, str | None]:
    """Download ``spec``'s tarball into ``workdir``; return its path and the integrity npm reported."""
    stdout = _npm(
        ["pack", spec, "--json", "--pack-destination", str(workdir)],
        spec,
        npm,
        workdir,
        run,
    )
    entries = _parse_json(stdout, spec, "pack")
    hint = "Retry; if it persists, report the npm version and its `npm pack --json` output."
    if not isinstance(entries, list) or len(entries) != 1 or not isinstance(entries[0], dict):
        raise AcpgenError(Problem(what="`npm pack --json` did not describe exactly one tarball", where=spec, hint=hint))
    filename = entries[0].get("filename")
    if not isinstance(filename, str) or not filename or PurePosixPath(filename).name != filename:
        raise AcpgenError(Problem(what=f"`npm pack` reported an odd file name {filename!r}", where=spec, hint=hint))
    tarball = workdir / filename
    if not tarball.is_file():
        raise AcpgenError(Problem(what=f"`npm pack` did not create {filename}", where=spec, hint=hint))
    reported = entries[0].get("integrity")
    return tarball, reported if isinstance(reported, str) else None


def sri_sha512(path: Path) -> str:
    """The Subresource Integrity string of a file: ``sha512-`` + base64 of its sha512 digest."""
    digest = hashlib.sha512()
    with path.open("rb") as stream:
        for chunk in iter(lambda: stream.read(1 << 16), b""):
            digest.update(chunk)
    return "sha512-" + base64.b64encode(digest.digest()).decode("ascii")


def _sha512_entries(sri: str) -> set[str]:
    """The ``sha512-...`` hashes in an SRI string (which may list several hashes and options)."""
    hashes = (token.partition("?")[0] for token in sri.split())
    return {token for token in hashes if token.startswith("sha512-")}


def _verified_integrity(spec: str, tarball: Path, advertised: str, reported: str | None) -> str:
    """Return the tarball's sha512 SRI after checking it against the registry's and npm's integrity."""
    expected = _sha512_entries(advertised)
    if not expected:
        hint = "acpgen only trusts sha512 integrity; pin a version published with one."
        raise AcpgenError(
            Problem(
                what=f"the registry advertises no sha512 integrity ({advertised!r})",
                where=spec,
                hint=hint,
            )
        )
    actual = sri_sha512(tarball)
    hint = (
        "The download is corrupt or was tampered with; nothing was written. "
        "Run `npm cache verify` and retry; do not pin this tarball if the mismatch persists."
    )
    if actual not in expected:
        what = f"tarball {tarball.name} has integrity {actual}, but the registry advertises {advertised}"
        raise AcpgenError(Problem(what=what, where=spec, hint=hint))
    if reported is not None and actual not in _sha512_entries(reported):
        what = f"tarball {tarball.name} has integrity {actual}, but npm reported {reported}"
        raise AcpgenError(Problem(what=what, where=spec, hint=hint))
    return actual


def read_schema_files(tarball: Path) -> dict[str, bytes]:
    """Read ``package/schema/**/*.json`` from an npm tarball, keyed by path below ``package/schema/``.

    Nothing is extracted to disk. The whole tarball is refused (AcpgenError) if any entry
    name is absolute or contains ``..``, or if an entry under ``package/schema/`` is a link,
    device, FIFO or otherwise not a regular file or directory.
    """
    try:
        with tarfile.open(tarball, "r:gz") as archive:
            return _read_members(archive, tarball.name)
    except (tarfile.TarError, OSError, EOFError, zlib.error) as exc:
        hint = "The tarball is damaged; run `npm cache verify` and retry."
        raise AcpgenError(Problem(what=f"cannot read the tarball: {exc}", where=tarball.name, hint=hint)) from exc


def _read_members(archive: tarfile.TarFile, label: str) -> dict[str, bytes]:
    """Collect the schema JSON files of an open tarball, checking every member on the way."""
    files: dict[str, bytes] = {}
    for member in archive:
        name = _schema_name(member, label)
        if name is None:
            continue
        if name in files:
            raise _unsafe(label, member, "appears twice in the tarball")
        files[name] = _read_member(archive, member, label)
    if not files:
        hint = "Check that this package version ships its JSON schema under schema/."
        raise AcpgenError(Problem(what="the tarball holds no package/schema/**/*.json files", where=label, hint=hint))
    return files


def _schema_name(member: tarfile.TarInfo, label: str) -> str | None:
    """The path below ``package/schema/`` for a schema JSON file; None for entries to skip.

    Raises AcpgenError for entries that try to escape (absolute, ``..``) anywhere in the
    tarball, and for anything but regular files and directories under ``package/schema/``.
    """
    path = PurePosixPath(member.name)
    if path.is_absolute():
        raise _unsafe(label, member, "is an absolute path")
    if ".." in path.parts:
        raise _unsafe(label, member, "contains a '..' component")
    if path.parts[: len(_SCHEMA_PREFIX)] != _SCHEMA_PREFIX:
        return None
    if member.isdir():
        return None
    if not member.isfile():
        raise _unsafe(label, member, f"is not a regular file ({_member_kind(member)})")
    reason = unsafe_relative_path(member.name)
    if reason is not None:
        raise _unsafe(label, member, reason)
    if path.suffix != ".json" or len(path.parts) == len(_SCHEMA_PREFIX):
        return None
    name = "/".join(path.parts[len(_SCHEMA_PREFIX) :])
    if name == LOCK_NAME:
        raise _unsafe(label, member, "would overwrite the schema lock")
    return name


def _member_kind(member: tarfile.TarInfo) -> str:
    """A short description of a non-regular tar member."""
    if member.issym():
        return f"symbolic link to {member.linkname!r}"
    if member.islnk():
        return f"hard link to {member.linkname!r}"
    if member.isdev():
        return "device or FIFO"
    return f"tar type {member.type!r}"


def _unsafe(label: str, member: tarfile.TarInfo, reason: str) -> AcpgenError:
    """The error for a tarball entry that must not be extracted."""
    hint = (
        "The tarball was refused and nothing was written. An npm tarball never contains such "
        "entries; do not pin this package version."
    )
    return AcpgenError(
        Problem(what=f"tarball entry {member.name!r} {reason}", where=f"{label}:{member.name}", hint=hint)
    )


def _read_member(archive: tarfile.TarFile, member: tarfile.TarInfo, label: str) -> bytes:
    """Read one regular member, refusing oversized files and files that are not UTF-8 JSON."""
    if member.size > MAX_SCHEMA_FILE_BYTES:
        raise _unsafe(label, member, f"is larger than {MAX_SCHEMA_FILE_BYTES} bytes")
    stream = archive.extractfile(member)
    if stream is None:
        raise _unsafe(label, member, "has no content")
    with stream:
        data = stream.read(MAX_SCHEMA_FILE_BYTES + 1)
    try:
        json.loads(data.decode("utf-8"))
    except ValueError as exc:
        raise _unsafe(label, member, f"is not UTF-8 JSON ({exc})") from exc
    return data
