"""acpgen diff speaks features (issue 14, item 4): findings on unstable items name the feature that
owns them, and a feature as a whole is reported stabilised, removed, added or destabilised.

The revisions are made from the pinned schema and its manifest the way upstream moves: a feature
stabilised is the stable schema of a build of that feature (its items enter ``schema.json``) with
the feature gone from the manifest; a feature removed is the schema without its items.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from acpgen.commands import main
from acpgen.diff.compare import Finding, compare
from acpgen.diff.report import to_json, to_text
from acpgen.diff.snapshot import Snapshot, snapshot
from acpgen.features.manifest import load_manifest
from acpgen.features.selection import selected_schema
from acpgen.load.schema import load_schema

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = ROOT / "schema"
FEATURE_RULES = {"feature-stabilised", "feature-destabilised", "feature-added", "feature-removed"}


def _pinned() -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    stable = load_schema(SCHEMA / "v1" / "schema.json")
    unstable = load_schema(SCHEMA / "v1" / "schema.unstable.json")
    return stable, unstable, load_manifest(SCHEMA / "unstable-features.json")


def _without_features(table: dict[str, Any], *names: str) -> dict[str, Any]:
    copy = json.loads(json.dumps(table))
    for name in names:
        del copy["features"][name]
    return copy


@pytest.fixture(scope="module")
def pinned() -> Snapshot:
    stable, unstable, table = _pinned()
    return snapshot("pinned", stable, unstable, None, table)


@pytest.fixture(scope="module")
def fork_stabilised(pinned: Snapshot) -> Snapshot:
    """session_fork (and session_system_prompt, which it needs) moved into the stable schema."""
    _, unstable, table = _pinned()
    kept = pinned.features or {}
    keep = kept["session_fork"] | kept["session_system_prompt"]
    unstable_keys = frozenset(k for owned in kept.values() for k in owned)
    stable, _ = selected_schema(unstable, unstable_keys - keep)
    new_table = _without_features(table, "session_fork", "session_system_prompt")
    return snapshot("fork-stable", stable, unstable, None, new_table)


@pytest.fixture(scope="module")
def title_removed(pinned: Snapshot) -> Snapshot:
    """session_set_title dropped upstream: its items leave the unstable schema and the manifest."""
    stable, unstable, table = _pinned()
    reduced, _ = selected_schema(unstable, (pinned.features or {})["session_set_title"])
    return snapshot("title-gone", stable, reduced, None, _without_features(table, "session_set_title"))


def _feature_findings(findings: list[Finding]) -> set[tuple[str, str]]:
    return {(f.rule, f.item) for f in findings if f.rule in FEATURE_RULES}


def test_a_snapshot_knows_the_feature_of_every_unstable_item(pinned: Snapshot) -> None:
    unstable = [key for key, item in pinned.items.items() if item.stability == "unstable"]
    assert unstable
    assert [key for key in unstable if pinned.feature_of(key) is None] == []
    assert [key for key, item in pinned.items.items() if item.stability == "stable" and pinned.feature_of(key)] == []
    assert pinned.feature_of("method:agent:session/fork") == "session_fork"


def test_a_stabilised_feature_is_reported_and_its_items_name_it(pinned: Snapshot, fork_stabilised: Snapshot) -> None:
    findings = compare(pinned, fork_stabilised)
    assert _feature_findings(findings) == {
        ("feature-stabilised", "feature:session_fork"),
        ("feature-stabilised", "feature:session_system_prompt"),
    }
    stabilised = [f for f in findings if f.rule == "stabilised"]
    assert stabilised, "the items of the feature are reported stabilised one by one too"
    assert {f.feature for f in stabilised} == {"session_fork", "session_system_prompt"}
    assert any(f.item == "method:agent:session/fork" and f.feature == "session_fork" for f in stabilised)
    text = to_text("pinned", "fork-stable", findings)
    owned = len((pinned.features or {})["session_fork"])
    expected = f"feature session_fork is stable now (of its {owned} items, {owned} stable now)"
    assert f"feature-stabilised [source, stable] {expected}" in text
    assert "stable, was session_fork" in text


def test_read_backwards_the_feature_is_destabilised(pinned: Snapshot, fork_stabilised: Snapshot) -> None:
    findings = compare(fork_stabilised, pinned)
    assert _feature_findings(findings) == {
        ("feature-destabilised", "feature:session_fork"),
        ("feature-destabilised", "feature:session_system_prompt"),
    }
    destabilised = [f for f in findings if f.rule == "destabilised"]
    assert destabilised and {f.feature for f in destabilised} == {"session_fork", "session_system_prompt"}


def test_a_removed_feature_is_reported_and_its_removals_name_it(pinned: Snapshot, title_removed: Snapshot) -> None:
    findings = compare(pinned, title_removed)
    assert _feature_findings(findings) == {("feature-removed", "feature:session_set_title")}
    removed = next(f for f in findings if f.rule == "feature-removed")
    owned = len((pinned.features or {})["session_set_title"])
    assert removed.level == "warning"
    assert removed.message == f"feature session_set_title was removed (of its {owned} items, {owned} absent now)"
    item_findings = [f for f in findings if f.rule not in FEATURE_RULES]
    assert item_findings and {f.feature for f in item_findings} == {"session_set_title"}
    document = json.loads(to_json("pinned", "title-gone", findings))
    assert {f["feature"] for f in document["findings"]} == {"session_set_title"}
    assert "unstable session_set_title" in to_text("pinned", "title-gone", findings)


def test_read_backwards_the_feature_is_added(pinned: Snapshot, title_removed: Snapshot) -> None:
    findings = compare(title_removed, pinned)
    assert _feature_findings(findings) == {("feature-added", "feature:session_set_title")}
    assert {f.feature for f in findings} == {"session_set_title"}


def test_without_a_manifest_no_feature_is_named(pinned: Snapshot) -> None:
    stable, unstable, _ = _pinned()
    bare = snapshot("bare", stable, unstable)
    _, reduced_unstable, _ = _pinned()
    reduced, _ = selected_schema(reduced_unstable, (pinned.features or {})["session_set_title"])
    findings = compare(bare, snapshot("bare-reduced", stable, reduced))
    assert findings and all(f.feature is None for f in findings)
    assert _feature_findings(findings) == set()


def test_the_cli_diffs_a_schema_bump_whose_manifest_is_not_updated_yet(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A new unstable method upstream, the manifest as before: `make generate` would refuse it (no
    feature owns it), the diff reads it as an unstable item of no feature and names the others."""
    new = tmp_path / "schema"
    shutil.copytree(SCHEMA, new)
    unstable_path = new / "v1" / "schema.unstable.json"
    doc = json.loads(unstable_path.read_text(encoding="utf-8"))
    doc["$defs"]["BrandNewThing"] = {"type": "object", "properties": {"x": {"type": "string"}}}
    del doc["$defs"]["SetSessionTitleRequest"]["properties"]["title"]
    unstable_path.write_text(json.dumps(doc), encoding="utf-8")
    code = main(["diff", str(SCHEMA), str(new), "--format", "json"])
    out = capsys.readouterr().out
    assert code == 0
    findings = {f["item"]: f for f in json.loads(out)["findings"]}
    assert findings["type:BrandNewThing"]["feature"] is None
    assert findings["field:SetSessionTitleRequest.title"]["feature"] == "session_set_title"
