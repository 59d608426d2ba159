"""Every published schema revision generates both builds, and they import.

One test per revision of the schema history (``tests/data/acp-schemas``, unpacked by the
``acp_schemas`` fixture; or the folder ``--acp-schemas`` / ``ACP_SCHEMAS`` names): render the
stable and the unstable package, import both ``models`` modules in one fresh interpreter, and
check that the stable models define nothing named after an unstable type. The revisions are read
from ``index.json`` at collection time; an unreadable index fails the suite (it does not skip).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from acpgen.diff.sources import locate
from acpgen.pipeline import Revision, SchemaFile, read_schema_file
from tests.support.goldens import render_build
from tests.support.schema_history import Stored

pytestmark = pytest.mark.slow

STABLE_PACKAGE = "acp_hist_stable"
UNSTABLE_PACKAGE = "acp_hist_unstable"
UPSTREAM = "agentclientprotocol/agent-client-protocol"
DEFAULT_PROTOCOL_VERSION = 1

# Revisions that cannot generate because of a genuine problem in the upstream schema:
# tag -> reason (they run as strict xfails).
UPSTREAM_PROBLEMS: dict[str, str] = {}

# Imports both models modules, then prints (as JSON) which of the names given in argv[1]
# (a JSON list) each models module has: {"stable": [...], "unstable": [...]}.
IMPORT_SCRIPT = f"""
import importlib, json, sys
modules = {{
    "stable": importlib.import_module("{STABLE_PACKAGE}.models"),
    "unstable": importlib.import_module("{UNSTABLE_PACKAGE}.models"),
}}
for package in ("{STABLE_PACKAGE}", "{UNSTABLE_PACKAGE}"):  # the session state of every revision imports
    importlib.import_module(package + ".session_state")
names = json.loads(sys.argv[1])
print(json.dumps({{v: sorted(n for n in names if hasattr(m, n)) for v, m in modules.items()}}))
"""


@dataclass(frozen=True, slots=True)
class Entry:
    """One revision of ``index.json``: its tag (= folder name) and files."""

    tag: str
    files: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Missing:
    """The schema history cannot be read: why."""

    message: str


def _entries(value: str | None) -> list[Entry] | Missing:
    index = Path(value) / "index.json" if value else Stored().index
    if not index.is_file():
        return Missing(
            f"{value} (--acp-schemas / ACP_SCHEMAS) holds no index.json; unset it to use tests/data/acp-schemas"
        )
    try:
        raw = json.loads(index.read_text(encoding="utf-8"))
        return [Entry(tag=str(e["tag"]), files=tuple(str(f) for f in e["files"])) for e in raw]
    except (ValueError, KeyError, TypeError) as error:
        return Missing(f"{index} is not a valid revision index: {error!r}")


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "history_entry" not in metafunc.fixturenames:
        return
    found = _entries(metafunc.config.getoption("--acp-schemas"))
    if isinstance(found, Missing):
        metafunc.parametrize("history_entry", [pytest.param(found, id="schema-history-missing")])
        return
    params = [
        pytest.param(entry, id=entry.tag, marks=[pytest.mark.xfail(strict=True, reason=UPSTREAM_PROBLEMS[entry.tag])])
        if entry.tag in UPSTREAM_PROBLEMS
        else pytest.param(entry, id=entry.tag)
        for entry in found
    ]
    metafunc.parametrize("history_entry", params)


def _protocol_version(stable: Path) -> int:
    """The protocol version of ``meta.json`` beside the stable schema (the oldest revisions have none)."""
    meta = stable.with_name("meta.json")
    if not meta.is_file():
        return DEFAULT_PROTOCOL_VERSION
    version = json.loads(meta.read_text(encoding="utf-8")).get("version", DEFAULT_PROTOCOL_VERSION)
    assert isinstance(version, int), f"{meta}: version {version!r} is not an integer"
    return version


def load_revision(root: Path, entry: Entry) -> Revision:
    """The :class:`Revision` of one history entry."""
    folder = root / entry.tag
    located = locate(folder)  # v1/schema.json or schema.json, with its schema.unstable.json if published

    def read(path: Path) -> SchemaFile:
        return read_schema_file(path, package=UPSTREAM, version=entry.tag, name=path.relative_to(folder).as_posix())

    return Revision(
        stable=read(located.stable),
        unstable=read(located.unstable) if located.unstable is not None else None,
        protocol_version=_protocol_version(located.stable),
    )


def unstable_only_classes(revision: Revision) -> list[str]:
    """Class names (in the unstable build) of the unstable types that the stable schema lacks."""
    unstable_ir = revision.protocol("unstable")
    stable_defs = {t.wire for t in revision.protocol("stable").types}
    wires = {key.removeprefix("type:") for key in revision.unstable_items() if key.startswith("type:")}
    return sorted(unstable_ir.type(wire).class_name for wire in wires if wire not in stable_defs)


def test_revision_generates_and_imports(
    history_entry: Entry | Missing, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    if isinstance(history_entry, Missing):
        pytest.fail(history_entry.message)
    root: Path = request.getfixturevalue("acp_schemas")
    revision = load_revision(root, history_entry)
    files = render_build(revision, "stable", STABLE_PACKAGE) | render_build(revision, "unstable", UNSTABLE_PACKAGE)
    for relative, text in files.items():
        target = tmp_path / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    forbidden = unstable_only_classes(revision)

    done = subprocess.run(
        [sys.executable, "-c", IMPORT_SCRIPT, json.dumps(forbidden)],
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(tmp_path), "PYTHONDONTWRITEBYTECODE": "1"},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, f"{history_entry.tag}: importing the generated models failed:\n{done.stderr}"
    present: dict[str, list[str]] = json.loads(done.stdout)
    assert present["unstable"] == forbidden, f"{history_entry.tag}: the unstable models lack some unstable types"
    leaked = present["stable"]
    assert not leaked, f"{history_entry.tag}: the stable models define unstable-only types: {leaked}"
