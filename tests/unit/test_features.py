"""The unstable feature manifest: its shape, its checks against the schema at every generation
(each with a failing fixture), the pinned manifest, and ``acpgen features``."""

from __future__ import annotations

import copy
import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from acpgen.commands import main
from acpgen.errors import EXIT_BAD_INPUT, EXIT_OK, AcpgenError
from acpgen.features.manifest import load_manifest, parse_manifest
from acpgen.features.model import Manifest
from acpgen.pipeline import Revision, read_schema_file

ROOT = Path(__file__).resolve().parents[2]
FIXTURE = ROOT / "tests" / "fixtures" / "features"
"""A schema folder laid out as schema/ is: v1/schema.json, v1/schema.unstable.json (and v1/schema.unstable.bump.json,
a bump that adds unstable items), unstable-features.json."""
ORIGIN = "features.json"

Table = dict[str, Any]


def fixture_table() -> Table:
    return copy.deepcopy(load_manifest(FIXTURE / "unstable-features.json"))


def fixture_revision(table: Table, unstable: str = "schema.unstable.json") -> Revision:
    def read(name: str) -> Any:
        return read_schema_file(FIXTURE / "v1" / name, package="fixture", version="0", name=f"v1/{name}")

    return Revision(
        stable=read("schema.json"), unstable=read(unstable), protocol_version=1, features=table, features_origin=ORIGIN
    )


def resolve(table: Table, unstable: str = "schema.unstable.json") -> Manifest:
    manifest = fixture_revision(table, unstable).manifest()
    assert manifest is not None
    return manifest


def problems(table: Table, unstable: str = "schema.unstable.json") -> list[tuple[str, str, str]]:
    with pytest.raises(AcpgenError) as caught:
        resolve(table, unstable)
    return [(p.what, p.where, p.hint) for p in caught.value.problems]


# --- the fixture manifest is accepted ---------------------------------------------------------------


def test_fixture_manifest_is_accepted_and_owns_every_unstable_item_once() -> None:
    revision = fixture_revision(fixture_table())
    manifest = resolve(fixture_table())
    assert manifest.names() == ("plan_operations", "session_fork", "system_prompt", "turn_pause")
    owned = [key for f in manifest.features for key in f.owns]
    assert sorted(owned) == sorted(revision.unstable_items())  # each unstable item exactly once
    fork = manifest.feature("session_fork")
    assert "field:ForkSessionRequest.systemPrompt" in fork.owns  # a type key owns its fields
    assert "field:SessionCapabilities.fork" in fork.owns  # a capability path owns its property
    prompt = manifest.feature("system_prompt")
    assert {"value:SystemPromptMode=override", "field:SessionSystemPromptCapabilities.override"} <= prompt.owns
    assert manifest.owner("variant:SessionUpdate[plan_update]") == "plan_operations"
    assert manifest.closure(["session_fork"]) == ("session_fork", "system_prompt")


@pytest.mark.parametrize("variant", ["stable", "unstable"])
def test_every_generation_checks_the_manifest(variant: str) -> None:
    table = fixture_table()
    fixture_revision(table).protocol(variant)  # accepted
    table["features"]["turn_pause"]["items"] = ["value:StopReason=stopped"]
    with pytest.raises(AcpgenError, match=r"names value:StopReason=stopped, which the unstable schema does not have"):
        fixture_revision(table).protocol(variant)


# --- each check, failing --------------------------------------------------------------------------

Change = Callable[[dict[str, Any]], None]
ITEMS = "#/features/{}/items/{}"


def _items(name: str, *keys: str) -> Change:
    return lambda features: features[name]["items"].extend(keys)


@pytest.mark.parametrize(
    ("change", "what", "where", "hint"),
    [
        pytest.param(
            _items("turn_pause", "type:SessionPause"),
            "feature turn_pause names type:SessionPause, which the unstable schema does not have",
            ORIGIN + ITEMS.format("turn_pause", 1),
            "Correct the key (type:X, field:X.wireName",
            id="item-does-not-exist",
        ),
        pytest.param(
            _items("turn_pause", "value:StopReason=cancelled"),
            "feature turn_pause names value:StopReason=cancelled, which is stable",
            ORIGIN + ITEMS.format("turn_pause", 1),
            "Stable items belong to no feature",
            id="item-is-stable",
        ),
        pytest.param(
            _items("session_fork", "field:ForkSessionRequest.systemPrompt"),
            "feature session_fork names field:ForkSessionRequest.systemPrompt, which is part of the unstable "
            "type:ForkSessionRequest",
            ORIGIN + ITEMS.format("session_fork", 4),
            "A type key owns the type with everything in it",
            id="field-of-an-unstable-type",
        ),
        pytest.param(
            _items("session_fork", "field:SessionCapabilities.fork"),
            "feature session_fork names field:SessionCapabilities.fork, which holds the capability "
            "agentCapabilities.sessionCapabilities.fork",
            ORIGIN + ITEMS.format("session_fork", 4),
            'List "agentCapabilities.sessionCapabilities.fork" under `capabilities`',
            id="capability-property-as-item",
        ),
        pytest.param(
            lambda f: f["turn_pause"].update(capabilities=["agentCapabilities.sessionCapabilities.pause"]),
            "feature turn_pause names the capability agentCapabilities.sessionCapabilities.pause, which the schema "
            "does not have",
            ORIGIN + "#/features/turn_pause/capabilities/0",
            "Correct the path",
            id="capability-does-not-exist",
        ),
        pytest.param(
            lambda f: f["turn_pause"].update(capabilities=["agentCapabilities.sessionCapabilities.list"]),
            "feature turn_pause names the capability agentCapabilities.sessionCapabilities.list, which is stable",
            ORIGIN + "#/features/turn_pause/capabilities/0",
            "Stable capabilities belong to no feature",
            id="capability-is-stable",
        ),
        pytest.param(
            _items("turn_pause", "type:PlanUpdate"),
            "type:PlanUpdate is in two features: plan_operations and turn_pause",
            ORIGIN + ITEMS.format("turn_pause", 1),
            "An unstable item belongs to exactly one feature",
            id="item-in-two-features",
        ),
        pytest.param(
            lambda f: f["turn_pause"].update(capabilities=["agentCapabilities.sessionCapabilities.fork"]),
            "capability agentCapabilities.sessionCapabilities.fork is in two features: session_fork and turn_pause",
            ORIGIN + "#/features/turn_pause/capabilities/0",
            "An unstable item belongs to exactly one feature",
            id="capability-in-two-features",
        ),
        pytest.param(
            lambda f: f["turn_pause"].update(
                capabilities=[f["system_prompt"]["capabilities"].pop()]  # a property of system_prompt's type
            ),
            "field:SessionSystemPromptCapabilities.override belongs to two features: system_prompt "
            "(type:SessionSystemPromptCapabilities) and turn_pause (capability "
            "agentCapabilities.sessionCapabilities.systemPrompt.override)",
            ORIGIN + "#/features/turn_pause/capabilities/0",
            "An unstable item belongs to exactly one feature",
            id="capability-inside-another-features-type",
        ),
        pytest.param(
            lambda f: f["turn_pause"].update(items=[]),
            "feature turn_pause owns no unstable item",
            ORIGIN + "#/features/turn_pause",
            "delete the feature",
            id="feature-owns-nothing",
        ),
    ],
)
def test_broken_entry_fails_with_its_place(change: Change, what: str, where: str, hint: str) -> None:
    table = fixture_table()
    change(table["features"])
    found = [p for p in problems(table) if p[0] == what]
    assert found, problems(table)
    assert found[0][1] == where
    assert hint in found[0][2]


@pytest.mark.parametrize(
    ("change", "what", "where", "hint"),
    [
        pytest.param(
            lambda f: f["turn_pause"].update(items=["type:SessionPause"]),
            "unstable item value:StopReason=paused belongs to no feature",
            "v1/schema.unstable.json#/$defs/StopReason/oneOf/2",
            '"value:StopReason=paused" to the `items`',
            id="value",
        ),
        pytest.param(
            lambda f: f["plan_operations"]["items"].remove("variant:SessionUpdate[plan_update]"),
            "unstable item variant:SessionUpdate[plan_update] belongs to no feature",
            "v1/schema.unstable.json#/$defs/SessionUpdate/oneOf/1",
            '"variant:SessionUpdate[plan_update]" to the `items`',
            id="variant",
        ),
        pytest.param(
            lambda f: f["session_fork"]["items"].remove("method:agent:session/fork"),
            "unstable item method:agent:session/fork belongs to no feature",
            "v1/schema.unstable.json#/$defs/ForkSessionRequest",
            '"method:agent:session/fork" to the `items`',
            id="method",
        ),
        pytest.param(
            lambda f: f["session_fork"].pop("capabilities"),
            "unstable item field:SessionCapabilities.fork belongs to no feature",
            "v1/schema.unstable.json#/$defs/SessionCapabilities/properties/fork",
            'the capability "agentCapabilities.sessionCapabilities.fork" to the `capabilities`',
            id="capability",
        ),
        pytest.param(
            lambda f: f["system_prompt"]["capabilities"].pop(),
            "unstable capability agentCapabilities.sessionCapabilities.systemPrompt.override is listed by no feature",
            "v1/schema.unstable.json#/$defs/SessionSystemPromptCapabilities/properties/override",
            'Add "agentCapabilities.sessionCapabilities.systemPrompt.override" to the `capabilities` of feature '
            "system_prompt",
            id="capability-inside-an-owned-type",
        ),
    ],
)
def test_unstable_item_without_a_feature_fails_with_its_place_in_the_schema(
    change: Change, what: str, where: str, hint: str
) -> None:
    table = fixture_table()
    change(table["features"])
    found = [p for p in problems(table) if p[0] == what]
    assert found, problems(table)
    assert found[0][1] == where
    assert hint in found[0][2]


def test_schema_bump_that_adds_unstable_items_without_a_feature_fails_loudly() -> None:
    """schema.unstable.bump.json adds an unstable field to a stable type and a method with its two types."""
    found = problems(fixture_table(), unstable="schema.unstable.bump.json")
    assert [(what, where) for what, where, _ in found] == [
        (
            "unstable item field:NewSessionRequest.title belongs to no feature",
            "v1/schema.unstable.bump.json#/$defs/NewSessionRequest/properties/title",
        ),
        (
            "unstable item method:agent:session/set_title belongs to no feature",
            "v1/schema.unstable.bump.json#/$defs/SetSessionTitleRequest",
        ),
        (
            "unstable item type:SetSessionTitleRequest belongs to no feature",
            "v1/schema.unstable.bump.json#/$defs/SetSessionTitleRequest",
        ),
        (
            "unstable item type:SetSessionTitleResponse belongs to no feature",
            "v1/schema.unstable.bump.json#/$defs/SetSessionTitleResponse",
        ),
    ]  # the fields of the new types are owned by their type keys: not reported one by one
    assert all(f"{ORIGIN}, or of a new feature named after the Rust crate's cargo feature" in h for _, _, h in found)


# --- dependencies ---------------------------------------------------------------------------------


def _move(key: str, source: str, target: str, **extra: Any) -> Change:
    def change(features: dict[str, Any]) -> None:
        features[source]["items"].remove(key)
        features.setdefault(target, {"description": "Moved here."}).setdefault("items", []).append(key)
        features[target].update(extra)

    return change


@pytest.mark.parametrize(
    ("change", "what"),
    [
        pytest.param(
            lambda f: f["session_fork"].pop("dependencies"),
            "feature session_fork needs feature system_prompt: its item field:ForkSessionRequest.systemPrompt "
            "refers to type:SystemPrompt, which system_prompt owns",
            id="field-type",
        ),
        pytest.param(
            _move("type:PlanUpdate", "plan_operations", "plan_content"),
            "feature plan_operations needs feature plan_content: its item variant:SessionUpdate[plan_update] "
            "refers to type:PlanUpdate, which plan_content owns",
            id="variant-payload",
        ),
        pytest.param(
            _move("type:ForkSessionRequest", "session_fork", "fork_params", dependencies=["system_prompt"]),
            "feature session_fork needs feature fork_params: its item method:agent:session/fork refers to "
            "type:ForkSessionRequest, which fork_params owns",
            id="method-params",
        ),
    ],
)
def test_reference_to_another_features_type_needs_a_dependency(change: Change, what: str) -> None:
    table = fixture_table()
    change(table["features"])
    feature, needed = what.split()[1], what.split()[4].rstrip(":")
    found = [p for p in problems(table) if p[0] == what]
    assert found, problems(table)
    assert found[0][1] == f"{ORIGIN}#/features/{feature}/dependencies"
    assert found[0][2].startswith(f'Add "{needed}" to the dependencies of {feature}')


def test_dependency_through_another_dependency_is_enough() -> None:
    table = fixture_table()
    _move("type:SessionForkCapabilities", "session_fork", "fork_capability", dependencies=["system_prompt"])(
        table["features"]
    )
    table["features"]["fork_capability"]["capabilities"] = table["features"]["session_fork"].pop("capabilities")
    table["features"]["session_fork"]["dependencies"] = ["fork_capability"]
    manifest = resolve(table)  # session_fork reaches system_prompt through fork_capability
    assert manifest.closure(["session_fork"]) == ("fork_capability", "session_fork", "system_prompt")


@pytest.mark.parametrize(
    ("change", "what", "where"),
    [
        pytest.param(
            lambda f: f["turn_pause"].update(dependencies=["session_pause"]),
            "feature turn_pause depends on 'session_pause', which is not a feature of the manifest",
            "#/features/turn_pause/dependencies/0",
            id="unknown",
        ),
        pytest.param(
            lambda f: f["turn_pause"].update(dependencies=["turn_pause"]),
            "feature turn_pause depends on itself",
            "#/features/turn_pause/dependencies/0",
            id="itself",
        ),
        pytest.param(
            lambda f: (
                f["system_prompt"].update(dependencies=["turn_pause"])
                or f["turn_pause"].update(dependencies=["session_fork"])
            ),
            "features depend on each other in a cycle: session_fork -> system_prompt -> turn_pause -> session_fork",
            "#/features/session_fork/dependencies",
            id="cycle",
        ),
    ],
)
def test_broken_dependencies_fail(change: Change, what: str, where: str) -> None:
    table = fixture_table()
    change(table["features"])
    found = problems(table)
    assert (what, ORIGIN + where) in [(w, p) for w, p, _ in found], found


def test_unknown_dependency_lists_the_features() -> None:
    table = fixture_table()
    table["features"]["turn_pause"]["dependencies"] = ["session_pause"]
    (hint,) = [h for w, _, h in problems(table) if "session_pause" in w]
    assert hint == "Correct the name; the features are: plan_operations, session_fork, system_prompt, turn_pause."


# --- the manifest's shape -------------------------------------------------------------------------


def _fork(members: str) -> str:
    """A manifest with one feature, ``fork``, with ``members`` besides its description."""
    return '{"features": {"fork": {"description": "x"%s}}}' % (", " + members if members else "")


@pytest.mark.parametrize(
    ("text", "what", "where"),
    [
        ("{", "the feature manifest is not valid JSON", "m.json#"),
        ('{"features": {"a": {"description": "x"}, "a": {}}}', "the key 'a' appears twice", "m.json#"),
        ('{"feature": {}}', "'features' is a required property", "m.json#"),
        ('{"features": {"unstable_fork": {"description": "x"}}}', "does not match", "m.json#/features"),
        (_fork('"requires": []'), "'requires' was unexpected", "m.json#/features/fork"),
        ('{"features": {"fork": {"items": []}}}', "'description' is a required property", "m.json#/features/fork"),
        (_fork("").replace('"x"', '"two\\nlines"'), "does not match", "m.json#/features/fork/description"),
        (_fork('"items": ["ForkSessionRequest"]'), "does not match", "m.json#/features/fork/items/0"),
        (_fork('"items": ["type:A", "type:A"]'), "has non-unique elements", "m.json#/features/fork/items"),
        (_fork('"capabilities": ["session.fork"]'), "does not match", "m.json#/features/fork/capabilities/0"),
        (_fork('"link": "see the RFD"'), "does not match", "m.json#/features/fork/link"),
    ],
)
def test_malformed_manifest_is_refused_with_its_place(text: str, what: str, where: str) -> None:
    with pytest.raises(AcpgenError) as caught:
        parse_manifest(text, "m.json")
    problem = caught.value.problems[0]
    assert what in problem.what
    assert problem.where == where
    assert (
        problem.hint.endswith("The manifest's shape: acpgen/features/manifest.schema.json.") or "JSON" in problem.hint
    )


def test_shape_errors_explain_what_belongs_there() -> None:
    with pytest.raises(AcpgenError) as caught:
        parse_manifest('{"features": {"fork": {"description": "x", "items": ["fork"]}}}', "m.json")
    assert caught.value.problems[0].hint.startswith("An item key: type:X, field:X.wireName, variant:X[tag]")


# --- the pinned manifest --------------------------------------------------------------------------

PINNED = ROOT / "schema" / "unstable-features.json"


def pinned_manifest() -> tuple[Manifest, frozenset[str]]:
    from tests.generated.test_stability import revision

    pinned = Revision(
        stable=revision().stable,
        unstable=revision().unstable,
        protocol_version=1,
        features=load_manifest(PINNED),
    )
    manifest = pinned.manifest()
    assert manifest is not None
    return manifest, pinned.unstable_items()


def test_pinned_manifest_assigns_every_unstable_item_to_exactly_one_feature() -> None:
    manifest, unstable = pinned_manifest()
    owned = [key for f in manifest.features for key in f.owns]
    assert len(owned) == len(set(owned)) and set(owned) == unstable
    assert all(f.owns and f.description and not f.name.startswith("unstable_") for f in manifest.features)


def test_pinned_features_follow_the_issue() -> None:
    manifest, _ = pinned_manifest()
    assert {"session_fork", "llm_providers", "mcp_over_acp", "plan_operations", "subagents"} <= set(manifest.names())
    assert manifest.owner("method:agent:session/fork") == "session_fork"
    assert manifest.owner("field:NewSessionRequest.systemPrompt") == "session_system_prompt"
    assert manifest.owner("variant:McpServer[acp]") == "mcp_over_acp"
    assert manifest.owner("field:SessionCapabilities.archive") == "session_archive"
    assert manifest.closure(["subagents"]) == ("end_turn_token_usage", "subagents")  # IdleStateUpdate.usage


# --- acpgen generate and acpgen features ---------------------------------------------------------


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A project with a copy of the pinned schema folder (and so of the manifest)."""
    shutil.copytree(ROOT / "schema", tmp_path / "schema")
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text('[tool.acpgen]\nschema-dir = "schema"\noutput-dir = "out"\n', encoding="utf-8")
    return pyproject


def _edit_manifest(pyproject: Path, change: Change) -> Path:
    path = pyproject.parent / "schema" / "unstable-features.json"
    table = json.loads(path.read_text(encoding="utf-8"))
    change(table["features"])
    path.write_text(json.dumps(table), encoding="utf-8")
    return path


def test_generate_fails_on_an_unassigned_unstable_item(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _edit_manifest(project, lambda f: f["session_set_title"]["items"].remove("type:SetSessionTitleRequest"))
    code = main(["--config", str(project), "generate", "--stable", "--check"])
    err = capsys.readouterr().err
    assert code == EXIT_BAD_INPUT
    assert (
        "acpgen: error: unstable item type:SetSessionTitleRequest belongs to no feature "
        "(at v1/schema.unstable.json#/$defs/SetSessionTitleRequest)." in err
    )
    assert f"of the feature that introduced it in {path}" in err


def test_features_command_lists_every_feature(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--config", str(project), "features"]) == EXIT_OK
    text = capsys.readouterr().out
    manifest, unstable = pinned_manifest()
    assert text.startswith(f"{len(manifest.features)} unstable features owning {len(unstable)} unstable items")
    assert "\nsession_fork (" in text and "  depends on: session_system_prompt\n" in text
    assert "    type:ForkSessionRequest (+6)\n" in text
    assert main(["--config", str(project), "features", "--format", "json"]) == EXIT_OK
    data = json.loads(capsys.readouterr().out)
    assert [f["name"] for f in data["features"]] == list(manifest.names())
    fork = data["features"][manifest.names().index("session_fork")]
    assert fork["capabilities"] == ["agentCapabilities.sessionCapabilities.fork"]
    assert fork["dependencies"] == ["session_system_prompt"]
    assert sorted(k for f in data["features"] for k in f["owns"]) == sorted(unstable)


def test_features_command_fails_without_a_valid_manifest(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _edit_manifest(project, lambda f: f["session_fork"].pop("dependencies"))
    assert main(["--config", str(project), "features"]) == EXIT_BAD_INPUT
    assert "feature session_fork needs feature session_system_prompt" in capsys.readouterr().err
    (project.parent / "schema" / "unstable-features.json").unlink()
    assert main(["--config", str(project), "features"]) == EXIT_BAD_INPUT
    assert "there is no feature manifest" in capsys.readouterr().err


def test_features_command_shows_a_selection(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--config", str(project), "features", "--select", "subagents"]) == EXIT_OK
    text = capsys.readouterr().out
    assert "features (with their dependencies): end_turn_token_usage, subagents\n" in text
    assert "capabilities: clientCapabilities.subagents\n" in text
    assert "\n  field:PromptResponse.usage\n" in text and "session/fork" not in text
    assert main(["--config", str(project), "features", "--select", "session_fork", "--format", "json"]) == EXIT_OK
    data = json.loads(capsys.readouterr().out)
    assert data["requested"] == ["session_fork"]
    assert data["features"] == ["session_fork", "session_system_prompt"]
    assert "type:SystemPrompt" in data["items"] and "type:PlanUpdate" not in data["items"]


def test_features_command_refuses_an_unknown_feature(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--config", str(project), "features", "--select", "unstable_session_fork"]) == EXIT_BAD_INPUT
    err = capsys.readouterr().err
    assert "acpgen: error: unknown unstable feature 'unstable_session_fork' (at --select). The features are: " in err
    assert "session_fork, session_set_title, session_status" in err
