"""Conformance requirements are data (issue 31, item 4): derived from the schema's tables (method
table, required handlers, every capability rule both ways, closed enums and unions) and curated in
``schema/conformance-requirements.json``, which every generation checks against the schema as it
checks the capability rules. What a package carries is what its build's schema says."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from acpgen import ir
from acpgen.errors import AcpgenError
from acpgen.ir.build import build_protocol
from acpgen.ir.requirements import RequirementTable, slug
from acpgen.load.requirement_table import check_requirement_table, load_requirements
from acpgen.pipeline import Revision
from tests.conftest import ROOT
from tests.generated.test_stability import revision as pinned_schemas
from tests.support.tools import tools_of

TABLE_FILE = ROOT / "schema" / "conformance-requirements.json"
RULES_FILE = ROOT / "schema" / "capability-rules.json"


def _revision(table: dict[str, Any] | None = None) -> Revision:
    schemas = pinned_schemas()
    return Revision(
        stable=schemas.stable,
        unstable=schemas.unstable,
        protocol_version=1,
        rules=json.loads(RULES_FILE.read_text(encoding="utf-8")),
        requirements=table if table is not None else load_requirements(TABLE_FILE),
        requirements_origin="schema/conformance-requirements.json",
    )


def _by_id(protocol: ir.Protocol) -> dict[str, ir.Requirement]:
    return {r.id: r for r in protocol.requirements}


def test_slugs() -> None:
    assert slug("session/set_mode") == "SESSION-SET-MODE"
    assert slug("ContentBlock[image]") == "CONTENT-BLOCK-IMAGE"
    assert slug("NewSessionRequest.additionalDirectories") == "NEW-SESSION-REQUEST-ADDITIONAL-DIRECTORIES"
    assert slug("$/cancel_request") == "CANCEL-REQUEST"


@pytest.mark.parametrize("variant", ["stable", "unstable"])
def test_every_method_rule_and_closed_type_has_its_derived_requirements(variant: ir.Variant) -> None:
    protocol = _revision().protocol(variant)
    found = _by_id(protocol)
    assert len(found) == len(protocol.requirements)  # ids are unique
    for m in protocol.methods:
        if m.side == "proxy":
            continue
        base = f"ACP-MSG-{slug(m.side)}-{slug(m.wire)}"
        assert f"{base}-FORM" in found and f"{base}-PARAMS" in found
        assert (f"{base}-RESULT" in found) == (m.result is not None)
    for rule in protocol.rules:
        gate, honor = found[f"ACP-CAP-{slug(rule.subject)}-GATE"], found[f"ACP-CAP-{slug(rule.subject)}-HONOR"]
        assert gate.tier == "MANDATORY" and gate.side != rule.capability.owner
        assert honor.tier == "CAPABILITY" and honor.applies_when == (rule.capability.path,)
        assert honor.side == rule.capability.owner
    assert found["ACP-HANDLER-AGENT-SESSION-PROMPT"].tier == "MANDATORY"
    assert found["ACP-HANDLER-AGENT-SESSION-SET-MODE"].applies_when == ("inferred:SessionModeId",)
    assert "ACP-HANDLER-AGENT-SESSION-LOAD" not in found  # gated: its HONOR requirement instead
    assert found["ACP-ENUM-STOP-REASON"].side == "agent"
    assert found["ACP-UNION-CONTENT-BLOCK"].side == "both"
    for r in protocol.requirements:
        assert r.citation.url and r.citation.page and r.citation.section
        assert (r.tier == "CAPABILITY") <= bool(r.applies_when)


def test_a_curated_requirement_naming_an_unstable_item_is_left_out_of_the_stable_build() -> None:
    stable, unstable = _by_id(_revision().protocol("stable")), _by_id(_revision().protocol("unstable"))
    assert "ACP-AGENT-FORK-001" in unstable and "ACP-AGENT-FORK-001" not in stable
    assert "ACP-MSG-AGENT-SESSION-FORK-RESULT" in unstable and "ACP-MSG-AGENT-SESSION-FORK-RESULT" not in stable
    assert stable["ACP-AGENT-CANCEL-001"].source == "curated"
    assert stable["ACP-AGENT-CANCEL-001"].citation.url.endswith("/protocol/v1/prompt-turn#cancellation")


@pytest.mark.parametrize(
    ("mutation", "words"),
    [
        ({"methods": [{"method": "session/frobnicate", "side": "agent"}]}, "method 'session/frobnicate (agent)'"),
        ({"fields": ["PromptRequest.frobnicate"]}, "field 'PromptRequest.frobnicate'"),
        ({"variants": ["ContentBlock[hologram]"]}, "variant 'ContentBlock[hologram]'"),
        ({"values": ["StopReason=bored"]}, "value 'StopReason=bored'"),
        ({"capabilities": ["agentCapabilities.telepathy"]}, "capability 'agentCapabilities.telepathy'"),
        ({"types": ["NoSuchType"]}, "type 'NoSuchType'"),
    ],
)
def test_a_curated_requirement_naming_what_the_schema_lacks_fails_generation(
    mutation: dict[str, Any], words: str
) -> None:
    table = json.loads(TABLE_FILE.read_text(encoding="utf-8"))
    table["requirements"][5]["schema"] = mutation
    with pytest.raises(AcpgenError) as raised:
        _revision(table).protocol("stable")
    problem = raised.value.problems[0]
    assert words in problem.what and "which the schema does not have" in problem.what
    assert problem.where == "schema/conformance-requirements.json#/requirements/5"


def test_two_requirements_with_one_id_fail_generation() -> None:
    table = json.loads(TABLE_FILE.read_text(encoding="utf-8"))
    table["requirements"][1]["id"] = table["requirements"][0]["id"]
    with pytest.raises(AcpgenError, match="two conformance requirements have the id 'ACP-PEER-TRANSPORT-001'"):
        _revision(table).protocol("stable")


@pytest.mark.parametrize(
    ("change", "words"),
    [
        ({"tier": "SHOULD"}, "unknown tier 'SHOULD'"),
        ({"side": "server"}, "unknown side 'server'"),
        ({"id": "acp-lower-1"}, "is not of the form ACP-AREA-NNN"),
        ({"citation": {"page": "Transports"}}, "a citation must be an object with the strings page, section and url"),
        ({"tier": "CAPABILITY"}, "a CAPABILITY requirement must state when it applies"),
        ({"schema": {"methods": ["initialize"]}}, "`schema.methods` has the wrong shape"),
    ],
)
def test_the_table_file_is_checked_for_shape(change: dict[str, Any], words: str, tmp_path: Path) -> None:
    table = json.loads(TABLE_FILE.read_text(encoding="utf-8"))
    table["requirements"][0].update(change)
    path = tmp_path / "conformance-requirements.json"
    path.write_text(json.dumps(table), encoding="utf-8")
    with pytest.raises(AcpgenError) as raised:
        load_requirements(path)
    assert any(words in p.what and p.where.startswith(f"{path}#/requirements/0") for p in raised.value.problems)
    check_requirement_table(json.loads(TABLE_FILE.read_text(encoding="utf-8")), "ok")  # the real one passes


def test_a_schema_that_adds_a_method_and_a_capability_adds_their_requirements_with_no_code_change() -> None:
    schemas = pinned_schemas()
    doc = copy.deepcopy(dict(schemas.stable.doc))
    defs = doc["$defs"] = dict(doc["$defs"])
    defs["FrobnicateSessionRequest"] = {**defs["CloseSessionRequest"], "x-method": "session/frobnicate"}
    defs["FrobnicateSessionResponse"] = {**defs["CloseSessionResponse"], "x-method": "session/frobnicate"}
    caps = copy.deepcopy(defs["SessionCapabilities"])
    caps["properties"]["frobnicate"] = copy.deepcopy(caps["properties"]["close"])
    defs["SessionCapabilities"] = caps
    rules = json.loads(RULES_FILE.read_text(encoding="utf-8"))
    rules["rules"].append(
        {
            "method": "session/frobnicate",
            "needs": "agentCapabilities.sessionCapabilities.frobnicate",
            "side": "agent",
            "presence": "present",
        }
    )
    from acpgen.ir.capabilities import RuleTable
    from acpgen.load.capabilities import capability_properties

    marks = _revision().unstable_items()
    widest = schemas.unstable.doc["$defs"] if schemas.unstable is not None else defs
    paths = frozenset(c.path for c in capability_properties(widest, marks)) | frozenset(
        c.path for c in capability_properties(defs, marks)
    )
    protocol = build_protocol(
        doc,
        variant="stable",
        source=schemas.stable.source,
        protocol_version=1,
        unstable_items=marks,
        rules=RuleTable(rules, origin="rules", strict=False, all_paths=paths),
        requirement_table=RequirementTable(load_requirements(TABLE_FILE), "table", paths),
    )
    found = _by_id(protocol)
    for rid in (
        "ACP-MSG-AGENT-SESSION-FROBNICATE-FORM",
        "ACP-MSG-AGENT-SESSION-FROBNICATE-PARAMS",
        "ACP-MSG-AGENT-SESSION-FROBNICATE-RESULT",
        "ACP-CAP-SESSION-FROBNICATE-GATE",
        "ACP-CAP-SESSION-FROBNICATE-HONOR",
    ):
        assert rid in found, rid
    assert found["ACP-CAP-SESSION-FROBNICATE-HONOR"].applies_when == (
        "agentCapabilities.sessionCapabilities.frobnicate",
    )


def test_the_draft_protocol_gets_the_derived_requirements_and_cites_its_schema() -> None:
    from acpgen.pipeline import pinned_revision
    from acpgen.source.config import load_settings
    from acpgen.source.protocols import for_protocol

    settings = for_protocol(load_settings(ROOT / "pyproject.toml"), 2)
    protocol = pinned_revision(settings).protocol("stable")
    assert protocol.requirements and all(r.source.startswith("derived:") for r in protocol.requirements)
    assert all(r.citation.url.startswith("v2/schema.json#/$defs/") for r in protocol.requirements if "MSG" in r.id)


def test_the_tool_packages_carry_their_builds_requirements() -> None:
    stable = tools_of("stable").conformance
    unstable = tools_of("unstable").conformance

    assert [r.id for r in stable.REQUIREMENTS] == [r.id for r in _revision().protocol("stable").requirements]
    assert [r.id for r in unstable.REQUIREMENTS] == [r.id for r in _revision().protocol("unstable").requirements]
