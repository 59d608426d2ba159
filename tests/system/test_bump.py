"""`make bump` in a copy of this repository (issue 30, item 7): 2.4.0 -> 2.2.0 -> 2.4.0 comes back
byte-identical, offline.

The copy holds what git would (the working tree without what .gitignore ignores); it gets a
virtual environment of its own from uv's cache (``UV_OFFLINE``), npm reads the tests' cache
(``tests/support/npm_cache.py``, filled by ``make test``) and nothing else. Each step is the real
``make bump VERSION=...``: the fetch with its integrity check, the trial of the curated tables, the
pins, ``make generate``, npm's lock, the migration golden, the report.

2.2.0 lacks five unstable features that 2.3.0 added, which the curated tables of 2.4.0 name: the
first bump is refused with nothing changed; a maintainer then drops them from the tables (what
:func:`_fit_tables_to_2_2_0` does), bumps, and on the way back restores the tables. It takes 27 s of
wall time alone at a load average of 3, 50 s at 8 (two full regenerations, a fresh virtual
environment; `uv run --frozen pytest -q tests/system/test_bump.py --durations=1`).
"""

from __future__ import annotations

import fnmatch
import hashlib
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from acpgen.load.lock import read_lock
from tests.support.npm_cache import CACHE, FILL, ROUND_TRIP, SDK, offline_env

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
PINNED = read_lock(ROOT / "schema").version
LIMIT = 600
"""Seconds: only stops a hang."""
ADDED_IN_2_3_0 = ("auth_status", "proxy_chains", "session_archive", "session_set_title", "session_status")
"""The unstable features 2.2.0 lacks, and the methods the rule tables gate for them."""
GATED_IN_2_3_0 = ("session/archive", "session/unarchive", "session/status", "session/set_title", "auth/status")
TABLES = (
    "schema/unstable-features.json",
    "schema/capability-rules.json",
    "schema/capability-rules-v2.json",
    "schema/conformance-requirements.json",
)
NAMING_2_3_0 = ("ACP-AGENT-AUTH-004", "ACP-AGENT-CAPS-001", "ACP-AGENT-CAPS-002")
"""The curated conformance requirements that name what 2.3.0 added (auth/status, archive)."""


def _ignored() -> list[str]:
    patterns = (ROOT / ".gitignore").read_text(encoding="utf-8").split()
    return [p.rstrip("/") for p in patterns if not p.startswith("#")] + [".git", ".acpgen-staging-*"]


def _skip(relative: str, patterns: list[str]) -> bool:
    name = relative.rsplit("/", 1)[-1]
    return any(fnmatch.fnmatch(name, p) if "/" not in p else relative == p for p in patterns)


def _tree(folder: Path) -> dict[str, tuple[str, bool]]:
    """Every file git would see in ``folder``: its sha256 and whether it is executable."""
    patterns = _ignored()
    found: dict[str, tuple[str, bool]] = {}
    for top, dirs, files in os.walk(folder):
        base = Path(top).relative_to(folder).as_posix()
        prefix = "" if base == "." else base + "/"
        dirs[:] = sorted(d for d in dirs if not _skip(prefix + d, patterns))
        for name in sorted(files):
            if not _skip(prefix + name, patterns):
                path = Path(top) / name
                found[prefix + name] = (hashlib.sha256(path.read_bytes()).hexdigest(), os.access(path, os.X_OK))
    return found


def _copy(into: Path) -> Path:
    patterns = _ignored()

    def ignore(folder: str, names: list[str]) -> set[str]:
        base = Path(folder).relative_to(ROOT).as_posix()
        prefix = "" if base == "." else base + "/"
        return {n for n in names if _skip(prefix + n, patterns)}

    return Path(shutil.copytree(ROOT, into / "repo", ignore=ignore, symlinks=True))


def _env() -> dict[str, str]:
    """This environment without what ties it to this checkout's environment or to the make and pytest
    running this test; uv and npm offline."""
    dropped = {"VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME", "UV_PROJECT_ENVIRONMENT", "ACP_TRACE"}
    dropped |= {"MAKEFLAGS", "MAKELEVEL", "MFLAGS", "MAKEOVERRIDES"}
    kept = {k: v for k, v in os.environ.items() if k not in dropped and not k.startswith("PYTEST_")}
    return offline_env(kept) | {"UV_OFFLINE": "1"}


def _make(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["make", "--no-print-directory", *args],
        cwd=repo,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=LIMIT,
        check=False,
    )


def _fit_tables_to_2_2_0(repo: Path) -> None:
    """What a maintainer edits by hand for 2.2.0: the features and rules of what 2.3.0 added go."""
    manifest = repo / TABLES[0]
    document = json.loads(manifest.read_text(encoding="utf-8"))
    assert set(ADDED_IN_2_3_0) <= document["features"].keys()
    for name in ADDED_IN_2_3_0:
        del document["features"][name]
    manifest.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
    requirements = repo / TABLES[3]
    document = json.loads(requirements.read_text(encoding="utf-8"))
    document["requirements"] = [r for r in document["requirements"] if r["id"] not in NAMING_2_3_0]
    requirements.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
    for table in TABLES[1:3]:
        path = repo / table
        document = json.loads(path.read_text(encoding="utf-8"))
        kept = [rule for rule in document["rules"] if rule.get("method") not in GATED_IN_2_3_0]
        assert len(document["rules"]) - len(kept) == len(GATED_IN_2_3_0), table
        document["rules"] = kept
        path.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")


def _says(done: subprocess.CompletedProcess[str]) -> str:
    return f"exit {done.returncode}\n--- stdout\n{done.stdout[-3000:]}\n--- stderr\n{done.stderr[-6000:]}"


def test_a_bump_there_and_back_leaves_the_tree_byte_identical(tmp_path: Path) -> None:
    if not any(CACHE.glob("*")):
        pytest.fail(f"the npm cache of the tests is empty: {FILL}")
    assert ROUND_TRIP != PINNED
    repo = _copy(tmp_path)
    before = _tree(repo)
    tables = {name: (repo / name).read_bytes() for name in TABLES}

    refused = _make(repo, "bump", f"VERSION={ROUND_TRIP}")
    assert refused.returncode == 2, _says(refused)
    assert f"the curated tables do not fit {SDK}@{ROUND_TRIP}; nothing was changed" in refused.stderr
    assert refused.stdout == "" and _tree(repo) == before

    _fit_tables_to_2_2_0(repo)
    down = _make(repo, "bump", f"VERSION={ROUND_TRIP}")
    assert down.returncode == 0, _says(down)
    assert down.stdout.startswith(f"### ACP spec diff: `{SDK}@{PINNED}` -> `{SDK}@{ROUND_TRIP} (schema)`\n")
    assert "`method-removed`" in down.stdout and "session/set_title" in down.stdout
    uv = os.environ.get("UV") or shutil.which("uv") or "uv"
    checked = subprocess.run(
        [uv, "run", "--frozen", "acpgen", "schema", "bump", "--check"],
        cwd=repo,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=LIMIT,
        check=False,
    )
    assert checked.returncode == 0, _says(checked)
    assert f"8 pinned place(s) name {SDK} {ROUND_TRIP}" in checked.stderr
    assert read_lock(repo / "schema").version == ROUND_TRIP
    header = (repo / "generated" / "acp_bindings" / "models.py").read_text(encoding="utf-8").splitlines()[0]
    assert f"from {SDK}@{ROUND_TRIP} v1/schema.json" in header
    golden = (repo / "tests" / "golden" / "migration-v1-v2" / "report.md").read_text(encoding="utf-8")
    assert golden.startswith(f"### ACP spec diff: `{SDK}@{ROUND_TRIP} (schema/v1)`")
    assert f'"version": "{ROUND_TRIP}"' in (repo / "tests" / "interop" / "package-lock.json").read_text("utf-8")
    assert f"`{SDK}` {ROUND_TRIP}):" in (repo / "README.md").read_text(encoding="utf-8")

    for name, data in tables.items():  # the maintainer's edit, undone
        (repo / name).write_bytes(data)
    back = _make(repo, "bump", f"VERSION={PINNED}")
    assert back.returncode == 0, _says(back)
    assert back.stdout.startswith(f"### ACP spec diff: `{SDK}@{ROUND_TRIP}` -> `{SDK}@{PINNED} (schema)`\n")
    assert "`feature-added`" in back.stdout
    after = _tree(repo)
    changed = sorted(name for name in before.keys() | after.keys() if before.get(name) != after.get(name))
    assert not changed, f"the round trip changed {changed}"
