"""Selecting unstable features: names -> features with their dependencies -> the unstable items a build keeps.

The manifest's dependencies are what make a selection buildable: the schema of a selection (the
unstable schema without the unstable items it leaves out, built here the way the generator is to
build it) must be a valid schema holding exactly the stable items and the selected ones.
"""

from __future__ import annotations

from typing import Any

import pytest

from acpgen.errors import AcpgenError
from acpgen.features.model import Manifest
from acpgen.features.selection import select, selected_schema
from acpgen.load.inventory import item_map
from acpgen.load.schema import check_schema
from tests.unit.test_features import fixture_revision, fixture_table, pinned_manifest


def fixture_manifest() -> Manifest:
    manifest = fixture_revision(fixture_table()).manifest()
    assert manifest is not None
    return manifest


def test_selection_adds_the_dependencies() -> None:
    selection = select(fixture_manifest(), ["session_fork", "session_fork"], "--unstable-feature")
    assert selection.requested == ("session_fork",)
    assert selection.features == ("session_fork", "system_prompt")
    assert selection.capabilities == (
        "agentCapabilities.sessionCapabilities.fork",
        "agentCapabilities.sessionCapabilities.systemPrompt",
        "agentCapabilities.sessionCapabilities.systemPrompt.override",
    )
    assert {"method:agent:session/fork", "type:SystemPrompt", "field:NewSessionRequest.systemPrompt"} <= selection.items
    assert not selection.items & {"type:PlanUpdate", "value:StopReason=paused"}


def test_no_feature_is_the_stable_build_and_every_feature_the_unstable_build() -> None:
    manifest = fixture_manifest()
    unstable = fixture_revision(fixture_table()).unstable_items()
    assert select(manifest, [], "x").items == frozenset()
    assert select(manifest, manifest.names(), "x").items == unstable
    assert select(manifest, ["turn_pause"], "x").dropped(unstable) == unstable - {"value:StopReason=paused"}


@pytest.mark.parametrize(
    ("origin", "where"),
    [("--unstable-feature", "--unstable-feature"), ("pyproject.toml#/tool/acpgen/unstable-features", "/1")],
)
def test_unknown_feature_is_an_error_that_lists_the_known_ones(origin: str, where: str) -> None:
    with pytest.raises(AcpgenError) as caught:
        select(fixture_manifest(), ["session_fork", "fork"], origin)
    (problem,) = caught.value.problems
    assert problem.what == "unknown unstable feature 'fork'"
    assert problem.where.endswith(where)
    assert problem.hint.startswith("The features are: plan_operations, session_fork, system_prompt, turn_pause")


# --- every selection of the pinned manifest is a schema of its own -------------------------------


def _selections() -> list[tuple[str, ...]]:
    manifest, _ = pinned_manifest()
    return [(), *((name,) for name in manifest.names()), ("session_fork", "subagents"), manifest.names()]


def build_of(items: frozenset[str]) -> tuple[dict[str, Any], list[str]]:
    """The schema of the pinned revision keeping the unstable ``items``, and the places where it lost a
    branch that is not a method's (in an envelope) or a message group's (at the root): changed kept items."""
    from tests.generated.test_stability import revision

    _, unstable = pinned_manifest()
    full = revision().unstable
    assert full is not None
    doc, pruned = selected_schema(full.doc, unstable - items)
    methods = {name for name, node in full.doc["$defs"].items() if "x-method" in node}
    return doc, [p for p in pruned if not p.startswith("/anyOf/") and p.rsplit(" -> ", 1)[1] not in methods]


@pytest.mark.parametrize("names", _selections(), ids=lambda names: "+".join(names) or "none")
def test_each_selection_builds_a_schema_with_exactly_its_items(names: tuple[str, ...]) -> None:
    from tests.generated.test_stability import revision

    manifest, _ = pinned_manifest()
    selection = select(manifest, names, "--unstable-feature")
    doc, changed = build_of(selection.items)
    check_schema(doc, "+".join(names))  # valid, and no reference to a type the selection left out
    assert not changed, "kept items lost the union branches of a type of an unselected feature"
    stable = set(item_map(revision().stable.doc["$defs"]))
    assert set(item_map(doc["$defs"])) == stable | selection.items
    others = {n for n in manifest.names() if n not in selection.features}
    assert not any(manifest.feature(n).owns & selection.items for n in others)


def test_a_feature_without_its_dependency_would_change_a_kept_item() -> None:
    """Control for the test above: session_fork without session_system_prompt loses a branch of a field."""
    manifest, _ = pinned_manifest()
    _, changed = build_of(manifest.feature("session_fork").owns)
    assert changed == ["/$defs/ForkSessionRequest/properties/systemPrompt/anyOf/0 -> SystemPrompt"]
