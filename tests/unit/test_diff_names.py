"""The spec diff reports renames of the generated names that no item carries (issue 34, item 6):
builder functions, ``SessionState`` properties, tracker classes, the message unions' classes. All
are decided in ``acpgen.ir.naming`` and carried by the IR, which the diff reads."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from acpgen.commands import main
from acpgen.diff.compare import Finding, compare
from acpgen.diff.snapshot import snapshot

FIXTURE = Path(__file__).parents[1] / "fixtures" / "diff-names"
Doc = dict[str, Any]


def test_a_renamed_update_kind_renames_its_builder_and_its_state_property(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The pair in tests/fixtures/diff-names: the kind ``usage_update`` is now ``usage_report``
    (the same payload), as ``acpgen diff OLD NEW --format json`` reports it."""
    assert main(["diff", str(FIXTURE / "old"), str(FIXTURE / "new"), "--format", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    found = {f["rule"]: f for f in report["findings"]}
    assert set(found) == {"variant-removed", "variant-added", "builder-renamed", "state-property-renamed"}
    assert [(found[r]["level"], found[r]["category"], found[r]["old"], found[r]["new"]) for r in sorted(found)][:2] == [
        ("breaking", "source", "usage_update_session_update", "usage_report_session_update"),
        ("breaking", "source", "usage", "usage_report"),
    ]
    assert found["state-property-renamed"]["item"] == "variant:SessionUpdate[usage_report]"
    assert found["builder-renamed"]["affects"] == ["code using the generated bindings"]


def _fixture() -> Doc:
    doc: Doc = json.loads((FIXTURE / "old" / "schema.json").read_text(encoding="utf-8"))
    return doc


def _with_jobs(doc: Doc, id_type: str = "JobId") -> Doc:
    """Jobs an agent creates (``job``) and patches (``job_update``), keyed by ``jobId``: a slot
    named after the id type and a tracker for its things."""
    defs = doc["$defs"]
    defs[id_type] = {"type": "string"}
    ref = {"$ref": f"#/$defs/{id_type}"}
    defs["Job"] = {"type": "object", "properties": {"jobId": ref, "title": {"type": "string"}}}
    defs["Job"]["required"] = ["jobId", "title"]
    defs["JobUpdate"] = {"type": "object", "properties": {"jobId": ref, "title": {"type": ["string", "null"]}}}
    defs["JobUpdate"]["required"] = ["jobId"]
    for tag, payload in (("job", "Job"), ("job_update", "JobUpdate")):
        defs["SessionUpdate"]["oneOf"].append(
            {
                "type": "object",
                "allOf": [{"$ref": f"#/$defs/{payload}"}],
                "properties": {"sessionUpdate": {"type": "string", "const": tag}},
                "required": ["sessionUpdate"],
            }
        )
    return doc


def _with_root(doc: Doc, title: str = "Agent") -> Doc:
    """A root that lists what the agent writes: the ``<title>OutgoingMessage`` union."""
    doc["$defs"]["AgentNotification"] = {
        "type": "object",
        "properties": {"method": {"type": "string"}},
        "required": ["method"],
    }
    branch = {"title": "Notification", "allOf": [{"$ref": "#/$defs/AgentNotification"}]}
    doc["anyOf"] = [{"title": title, "type": "object", "anyOf": [branch]}]
    return doc


def _renamed_params(doc: Doc) -> Doc:
    defs = doc["$defs"]
    defs["SessionNewRequest"] = defs.pop("NewSessionRequest")
    return doc


def _diff(old: Doc, new: Doc) -> list[Finding]:
    return compare(snapshot("old", old, None), snapshot("new", new, None))


def _renames(findings: list[Finding]) -> set[tuple[str, str, str]]:
    return {(f.rule, f.old, f.new) for f in findings if f.rule.endswith("-renamed")}


Edit = Callable[[Doc], Doc]
CASES: list[tuple[str, Edit, Edit, set[tuple[str, str, str]]]] = [
    (
        "id-type-renamed",
        lambda d: _with_jobs(d, "JobId"),
        lambda d: _with_jobs(d, "JobItemId"),
        {
            ("type-renamed", "JobId", "JobItemId"),
            ("state-property-renamed", "jobs", "job_items"),
            ("tracker-renamed", "JobTracker", "JobItemTracker"),
        },
    ),
    (
        "root-branch-retitled",
        lambda d: _with_root(d, "Agent"),
        lambda d: _with_root(d, "AgentSide"),
        {("message-class-renamed", "AgentOutgoingMessage", "AgentSideOutgoingMessage")},
    ),
    (
        "params-type-renamed",
        lambda d: d,
        _renamed_params,
        {
            ("type-renamed", "NewSessionRequest", "SessionNewRequest"),
            ("python-method-renamed", "new_session", "session_new"),
            ("builder-renamed", "new_session_request", "session_new_request"),
        },
    ),
]


@pytest.mark.parametrize(("old", "new", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_generated_names_renamed_with_what_they_name(old: Edit, new: Edit, expected: set[tuple[str, str, str]]) -> None:
    findings = _diff(old(_fixture()), new(_fixture()))
    assert _renames(findings) == expected
    assert all((f.level, f.category) == ("breaking", "source") for f in findings if (f.rule, f.old, f.new) in expected)
    backwards = _renames(_diff(new(_fixture()), old(_fixture())))
    assert backwards == {(rule, after, before) for rule, before, after in expected}


@pytest.mark.parametrize("edit", [_with_jobs, _with_root, lambda d: d])
def test_the_same_schema_renames_nothing(edit: Edit) -> None:
    assert _diff(edit(_fixture()), edit(copy.deepcopy(_fixture()))) == []


def test_the_fixture_pair_is_what_the_test_says() -> None:
    """The two files differ in the kind's tag alone."""
    old, new = (json.loads((FIXTURE / side / "schema.json").read_text(encoding="utf-8")) for side in ("old", "new"))
    new["$defs"]["SessionUpdate"]["oneOf"][0]["properties"]["sessionUpdate"]["const"] = "usage_update"
    assert old == new
