"""The spec diff on real history (``tests/data/acp-schemas``, or ``--acp-schemas`` / ``ACP_SCHEMAS``):
golden expectations on consecutive revisions, and the full report of two of them as golden files."""

from __future__ import annotations

import difflib
import itertools
import json
from collections.abc import Callable
from pathlib import Path

import pytest

from acpgen.diff.compare import Finding, compare
from acpgen.diff.report import to_json, to_markdown
from acpgen.diff.snapshot import Snapshot
from acpgen.diff.sources import load_files, locate

pytestmark = pytest.mark.slow

Loader = Callable[[str], Snapshot]
GOLDEN = Path(__file__).parents[1] / "golden" / "diff"
UPDATE = "make goldens (or: uv run --frozen pytest tests/unit/test_diff_history.py --update-goldens)"

# The revisions of the two-file era (schema.json and schema.unstable.json side by side).
ERA = [
    "v0.7.0", "v0.8.0", "v0.9.0", "v0.9.1", "v0.10.0", "v0.10.1", "v0.10.2", "v0.10.3", "v0.10.4", "v0.10.6",
    "v0.10.7", "v0.10.8", "v0.11.0", "v0.11.1", "v0.11.2", "v0.11.3", "v0.11.4", "v0.11.5", "v0.11.6", "v0.11.7",
    "v0.12.1", "v0.12.2", "v0.13.0", "v0.13.1", "v0.13.2", "v0.13.3", "v0.13.4", "v0.13.5", "v0.13.6", "v0.13.7",
]  # fmt: skip


@pytest.fixture(scope="module")
def load(acp_schemas: Path) -> Loader:
    cache: dict[str, Snapshot] = {}

    def get(tag: str) -> Snapshot:
        if tag not in cache:
            cache[tag] = load_files(tag, locate(acp_schemas / tag))
        return cache[tag]

    return get


def _stable_wire_breaks(findings: list[Finding]) -> list[Finding]:
    return [f for f in findings if f.level == "breaking" and f.category == "wire" and f.stability == "stable"]


def _check_golden(name: str, text: str, update: bool) -> None:
    path = GOLDEN / name
    if update:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        return
    current = path.read_text(encoding="utf-8") if path.is_file() else ""
    diff = "".join(difflib.unified_diff(current.splitlines(True), text.splitlines(True), f"golden/{name}", "new"))
    assert not diff, f"{diff}\nthe golden diff report {name} is stale; update with: {UPDATE}"


def test_v0_13_5_stabilises_additional_directories_without_a_wire_break(load: Loader, update_goldens: bool) -> None:
    old, new = load("v0.13.4"), load("v0.13.5")
    findings = compare(old, new)
    assert not [f for f in findings if f.level == "breaking"]
    assert not [f for f in findings if f.stability == "stable" and f.category == "wire" and f.level != "info"]
    stabilised = {f.item for f in findings if f.rule == "stabilised"}
    assert stabilised == {
        "field:LoadSessionRequest.additionalDirectories",
        "field:NewSessionRequest.additionalDirectories",
        "field:ResumeSessionRequest.additionalDirectories",
        "field:SessionCapabilities.additionalDirectories",
        "field:SessionInfo.additionalDirectories",
        "type:SessionAdditionalDirectoriesCapabilities",
    }
    # unstable since v0.11.4: in no stable schema before v0.13.5
    assert "field:NewSessionRequest.additionalDirectories" not in {
        k for k, item in load("v0.11.3").items.items() if item.stability == "stable"
    }
    first = load("v0.11.4").items["field:NewSessionRequest.additionalDirectories"]
    assert first.stability == "unstable"
    _check_golden("v0.13.4..v0.13.5.md", to_markdown("v0.13.4", "v0.13.5", findings), update_goldens)


def test_v0_9_0_narrows_meta_on_every_type(load: Loader, update_goldens: bool) -> None:
    old, new = load("v0.8.0"), load("v0.9.0")
    findings = compare(old, new)
    breaks = _stable_wire_breaks(findings)
    metas = {k for k, item in old.items.items() if k.endswith("._meta") and item.stability == "stable"}
    assert metas and {f.item for f in breaks} == metas
    assert {(f.rule, f.old, f.new) for f in breaks} == {("field-narrowed", "any value", "object or null")}
    assert all(f.affects for f in breaks)
    _check_golden("v0.8.0..v0.9.0.json", to_json("v0.8.0", "v0.9.0", findings), update_goldens)


def test_v0_9_0_is_the_one_stable_wire_break_of_its_era(load: Loader) -> None:
    breaking_pairs = [(a, b) for a, b in itertools.pairwise(ERA) if _stable_wire_breaks(compare(load(a), load(b)))]
    assert breaking_pairs == [("v0.8.0", "v0.9.0")]


def test_v0_11_0_type_renames_are_found(load: Loader) -> None:
    findings = compare(load("v0.10.8"), load("v0.11.0"))
    renames = {(f.old, f.new) for f in findings if f.rule == "type-renamed"}
    assert ("KillTerminalCommandRequest", "KillTerminalRequest") in renames
    assert ("FileSystemCapability", "FileSystemCapabilities") in renames
    assert all(f.category == "source" for f in findings if f.rule == "type-renamed")


def test_json_report_is_parseable_and_complete(load: Loader) -> None:
    findings = compare(load("v0.13.4"), load("v0.13.5"))
    document = json.loads(to_json("a", "b", findings))
    assert len(document["findings"]) == len(findings)
    assert sum(document["counts"].values()) == len(findings)
