"""The wheels of acpgen's locked dependencies, in a folder of the repository, so that tests install acpgen offline
with ``uv tool run --offline --no-index --find-links`` this folder (``uvx --from`` a wheel or a clone).

``make test`` fills it first (``make test-wheelhouse``, which runs ``python -m tests.support.wheelhouse``; the
network is needed once, and again only when uv.lock moves a dependency): for every package that
``uv export --no-dev --group build`` lists (what acpgen needs to run, and the build backend that builds it from a
clone), the wheel of the locked version that fits this interpreter, fetched from the address uv.lock records and
checked against the sha256 uv.lock records. ``wheelhouse.json`` lists what the folder holds; :func:`stale` says
why the folder cannot serve (missing, stale versus uv.lock, a file changed), or nothing.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import tomllib
import urllib.parse
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from packaging.markers import Marker
from packaging.tags import sys_tags
from packaging.utils import canonicalize_name, parse_wheel_filename

ROOT = Path(__file__).resolve().parents[2]
WHEELHOUSE = ROOT / ".test-artefacts" / "wheelhouse"
MANIFEST = "wheelhouse.json"
FILL = "run `make test-wheelhouse` (fills .test-artefacts/wheelhouse from uv.lock; needs the network once)"
TIMEOUT = 120
"""Seconds without a byte from the network before a download gives up."""


class WheelhouseError(Exception):
    """What stops the wheelhouse from being filled, said for the person who ran the command."""


@dataclass(frozen=True)
class Wheel:
    """One locked wheel: where uv.lock says it is, and its sha256."""

    name: str
    url: str
    sha256: str

    @property
    def filename(self) -> str:
        return urllib.parse.unquote(urllib.parse.urlsplit(self.url).path.rpartition("/")[2])


def _uv() -> str:
    found = os.environ.get("UV") or shutil.which("uv")
    if found is None:
        raise WheelhouseError("uv is needed to read uv.lock (`make install` installs it)")
    return found


def locked_requirements() -> list[tuple[str, str]]:
    """``(name, version)`` of each package acpgen needs to run or to be built, on this interpreter."""
    command = [_uv(), "export", "--frozen", "--no-dev", "--group", "build", "--no-emit-project"]
    command += ["--no-hashes", "--no-annotate", "--no-header", "--format", "requirements-txt", "--quiet"]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise WheelhouseError(f"`{' '.join(command)}` failed (exit {done.returncode}): {done.stderr.strip()}")
    found = []
    for line in done.stdout.splitlines():
        requirement, _, marker = line.partition(";")
        if not requirement.strip() or (marker.strip() and not Marker(marker.strip()).evaluate()):
            continue
        name, _, version = requirement.strip().partition("==")
        found.append((str(canonicalize_name(name)), version))
    return found


def locked_wheels() -> list[Wheel]:
    """The wheel of each locked requirement that fits this interpreter best (its tags' rank in ``sys_tags``)."""
    lock = tomllib.loads((ROOT / "uv.lock").read_text(encoding="utf-8"))
    packages = {(str(canonicalize_name(p["name"])), p.get("version")): p for p in lock["package"]}
    rank = {tag: i for i, tag in enumerate(sys_tags())}
    chosen = []
    for name, version in locked_requirements():
        entry = packages.get((name, version))
        if entry is None:
            raise WheelhouseError(f"uv.lock holds no {name} {version}, which `uv export` lists")
        fitting = []
        for listed in entry.get("wheels", []):
            wheel = Wheel(name, listed["url"], listed["hash"].removeprefix("sha256:"))
            tags = parse_wheel_filename(wheel.filename)[3]
            best = min((rank[tag] for tag in tags if tag in rank), default=None)
            if best is not None:
                fitting.append((best, wheel))
        if not fitting:
            raise WheelhouseError(f"uv.lock records no wheel of {name} {version} that fits {sys.executable}")
        chosen.append(min(fitting, key=lambda found: found[0])[1])
    return sorted(chosen, key=lambda wheel: wheel.filename)


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as file:
        while block := file.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()


def _recorded(folder: Path) -> dict[str, str] | None:
    """``{file: sha256}`` as ``folder``'s manifest lists them, or None without one."""
    try:
        listed: dict[str, str] = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))["wheels"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return listed


def stale(folder: Path = WHEELHOUSE) -> str | None:
    """Why ``folder`` cannot install acpgen's locked dependencies offline, or None when it can."""
    recorded = _recorded(folder)
    if recorded is None:
        return f"{folder} is missing (or has no {MANIFEST})"
    expected = {wheel.filename: wheel.sha256 for wheel in locked_wheels()}
    if recorded != expected:
        return f"{folder} is stale versus uv.lock (it holds other wheels than the lock names for this interpreter)"
    changed = [
        name for name, sha256 in expected.items() if not (folder / name).is_file() or _sha256(folder / name) != sha256
    ]
    if changed:
        return f"{folder} has missing or changed wheels: {', '.join(changed)}"
    extra = sorted(p.name for p in folder.iterdir() if p.name not in expected and p.name != MANIFEST)
    if extra:  # a wheel uv could pick instead of the locked one
        return f"{folder} holds files it does not list: {', '.join(extra[:10])}"
    return None


def _check_ours(folder: Path) -> None:
    """Refuse to replace a folder holding anything but a wheelhouse this module wrote."""
    if not folder.exists():
        return
    listed = _recorded(folder)
    foreign = sorted(
        p.name for p in folder.iterdir() if listed is None or (p.name not in listed and p.name != MANIFEST)
    )
    if foreign:
        raise WheelhouseError(
            f"{folder} holds {', '.join(foreign[:10])}, which this command did not write; nothing was changed. "
            "Move them away (or delete the folder) and run it again."
        )


def _fetch(wheel: Path, url: str, sha256: str) -> None:
    digest = hashlib.sha256()
    with urllib.request.urlopen(url, timeout=TIMEOUT) as response, wheel.open("wb") as file:
        while block := response.read(1 << 20):
            digest.update(block)
            file.write(block)
    if digest.hexdigest() != sha256:
        raise WheelhouseError(f"{url} has sha256 {digest.hexdigest()}, uv.lock records {sha256}; nothing was changed")


def fill(folder: Path = WHEELHOUSE) -> int:
    """Make ``folder`` hold the locked wheels (reusing those it holds); returns how many were downloaded."""
    _check_ours(folder)
    wheels = locked_wheels()
    folder.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f"{folder.name}.", dir=folder.parent))
    downloaded = 0
    try:
        kept = _recorded(folder) or {}
        for wheel in wheels:
            old = folder / wheel.filename
            if kept.get(wheel.filename) == wheel.sha256 and old.is_file() and _sha256(old) == wheel.sha256:
                shutil.copy2(old, staging / wheel.filename)
            else:
                _fetch(staging / wheel.filename, wheel.url, wheel.sha256)
                downloaded += 1
        manifest = {"from": "uv.lock", "python": sys.executable, "wheels": {w.filename: w.sha256 for w in wheels}}
        (staging / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
        if folder.exists():
            shutil.rmtree(folder)  # _check_ours: it holds only what this command wrote
        staging.rename(folder)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return downloaded


def main() -> int:
    try:
        problem = stale()
        if problem is None:
            print(f"tests.support.wheelhouse: {WHEELHOUSE.relative_to(ROOT)} is up to date with uv.lock")
            return 0
        downloaded = fill()
    except (WheelhouseError, OSError) as error:
        print(f"tests.support.wheelhouse: {error}", file=sys.stderr)
        return 1
    count = len(_recorded(WHEELHOUSE) or {})
    print(f"tests.support.wheelhouse: {WHEELHOUSE.relative_to(ROOT)} holds {count} wheels ({downloaded} downloaded)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
