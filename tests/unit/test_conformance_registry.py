"""One registry of what the conformance kit judges (issue 43, Deliver item 2): each check declares
the requirements it judges; the curated table's ``check`` names registered checks that declare the
entry, and generation fails, with the file and pointer, where the two disagree; a finding may only be
recorded by a scenario whose checks judge it, and an id the build does not hold fails loudly;
scenarios are keyed by the methods of the build they judge (issue 44, item 3)."""

from __future__ import annotations

import copy
import importlib
import json
import re
from pathlib import Path
from typing import Any

import pytest

from acpgen.errors import AcpgenError
from acpgen.ir.conformance_checks import all_checks, held, kit_modules
from acpgen.render.runtime_files import kit_files
from tests.conftest import ROOT
from tests.support.tools import tools_of
from tests.unit.test_conformance_requirements import TABLE_FILE, _revision


def _table() -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(TABLE_FILE.read_text(encoding="utf-8"))
    return loaded


def _problems(table: dict[str, Any]) -> list[str]:
    with pytest.raises(AcpgenError) as caught:
        _revision(table).protocol("stable")
    return [p.message() for p in caught.value.problems]


def test_every_check_name_of_the_table_is_registered_and_declares_its_entry() -> None:
    checks = all_checks()
    for entry in _table()["requirements"]:
        for name in entry["check"]:
            assert name in checks, (entry["id"], name)
            assert entry["id"] in checks[name].judges, (entry["id"], name)


def test_a_check_name_that_does_not_resolve_fails_generation_with_its_pointer() -> None:
    table = copy.deepcopy(_table())
    at = next(i for i, r in enumerate(table["requirements"]) if r["id"] == "ACP-AGENT-CANCEL-001")
    table["requirements"][at]["check"] = ["agent.no-such-check"]
    said = _problems(table)
    assert any(
        "names the check 'agent.no-such-check', which the conformance kit lacks" in m
        and f"conformance-requirements.json#/requirements/{at}/check/0" in m
        for m in said
    ), said
    # and the check that does judge it, left out of the list, is named too
    assert any("'agent.cancel' judges ACP-AGENT-CANCEL-001, but its `check` does not name it" in m for m in said)


def test_an_entry_naming_a_check_that_does_not_judge_it_fails_generation() -> None:
    table = copy.deepcopy(_table())
    at = next(i for i, r in enumerate(table["requirements"]) if r["id"] == "ACP-AGENT-CANCEL-001")
    table["requirements"][at]["check"] = ["agent.cancel", "agent.load"]
    assert any("names the check 'agent.load', which does not judge it" in m for m in _problems(table))


def test_every_id_a_check_declares_is_in_the_pinned_table() -> None:
    """A typo in a check's ``judges`` fails here. Generation does not refuse a declared id the table
    lacks: a maintainer who fits the table to an older schema drops entries (tests/system/test_bump.py),
    and the kit's code must not have to follow; such a check judges nothing for it."""
    ids = {r["id"] for r in _table()["requirements"]}
    stray = {(c.name, rid) for c in all_checks().values() for rid in c.judges if rid not in ids}
    assert not stray, stray


def test_a_table_without_an_id_a_check_declares_still_builds_and_its_check_judges_the_rest() -> None:
    table = copy.deepcopy(_table())
    table["requirements"] = [r for r in table["requirements"] if r["id"] != "ACP-AGENT-LOAD-003"]
    built = _revision(table).protocol("stable")
    by_id = {r.id: r for r in built.requirements}
    assert "ACP-AGENT-LOAD-003" not in by_id
    assert "agent.load" in by_id["ACP-AGENT-LOAD-002"].checks


def test_each_requirement_lists_the_checks_of_its_build_that_judge_it() -> None:
    stable = {r.id: r for r in _revision().protocol("stable").requirements}
    unstable = {r.id: r for r in _revision().protocol("unstable").requirements}
    assert stable["ACP-AGENT-CANCEL-001"].checks == ("agent.cancel",)
    assert stable["ACP-MSG-AGENT-SESSION-PROMPT-RESULT"].checks == ("trace.schema",)
    assert stable["ACP-HANDLER-AGENT-SESSION-CANCEL"].checks == ("agent.notifications",)
    assert "ACP-AGENT-FORK-001" not in stable and unstable["ACP-AGENT-FORK-001"].checks == ("agent.fork",)
    assert stable["ACP-AGENT-REMOTE-001"].checks == ()  # judged by no check: said so, never as judged


def _runtime(module: str) -> Any:
    """A module of the kit as the tool package holds it (its classes are the package's own)."""
    return importlib.import_module(f"{tools_of().__name__}._runtime.tools.conformance.{module}")


def test_recording_an_id_no_check_of_the_scenario_declares_fails() -> None:
    UndeclaredFinding = _runtime("registry").UndeclaredFinding
    kit = tools_of().conformance.kit()
    with pytest.raises(UndeclaredFinding, match="ACP-AGENT-LOAD-002"):
        kit.registry.allow("ACP-AGENT-LOAD-002", ("agent.cancel",), "cancel")
    with pytest.raises(UndeclaredFinding, match="no requirement of this build"):
        kit.registry.allow("ACP-AGENT-CANCEL-999", ("agent.cancel",), "cancel")
    assert kit.registry.allow("ACP-AGENT-CANCEL-001", ("agent.cancel",), "cancel") is True
    # declared by the check, but left out of this build (it names an unstable item): ignored
    assert kit.registry.allow("ACP-AGENT-CAPS-001", ("agent.initialize",), "initialize") is False


def test_a_finding_of_an_id_not_judged_in_the_run_is_never_dropped_silently() -> None:
    requirements = _runtime("requirements")
    kit = tools_of().conformance.kit()
    with pytest.raises(requirements.UnknownRequirement, match="ACP-TYPO-001"):
        requirements.outcomes(kit.requirements, [requirements.Finding("ACP-TYPO-001", "PASS", "", "x")])


def test_k_selects_by_the_ids_a_scenario_judges() -> None:
    kit = tools_of().conformance.kit()
    by_name = {s.name: s for s in kit.scenarios}
    assert kit.registry.selects(by_name["session-close"], ["CLOSE-002"])
    assert kit.registry.selects(by_name["session-list"], ["LIST-003"])
    assert not kit.registry.selects(by_name["cancel"], ["LIST-003"])


V1_ONLY = re.compile(
    r"\"(authenticate|logout|fs/read_text_file|fs/write_text_file|session/load|session/set_mode|"
    r"terminal/(?:create|kill|output|release|wait_for_exit))\""
)


def test_a_v2_build_carries_no_v1_method_in_its_tools() -> None:
    """Issue 44, item 3: the kit's modules a build holds are those whose methods it has."""
    v2 = Path(tools_of("stable", None, 2).__file__ or "").parent
    found = {
        p.relative_to(v2).as_posix(): V1_ONLY.findall(p.read_text(encoding="utf-8"))
        for p in (v2 / "_runtime" / "tools").rglob("*.py")
    }
    assert {path: names for path, names in found.items() if names} == {}
    v1 = Path(tools_of().__file__ or "").parent
    assert (v1 / "_runtime" / "tools" / "conformance" / "agent_load.py").is_file()
    assert not (v2 / "_runtime" / "tools" / "conformance" / "agent_load.py").exists()


def test_every_kit_module_is_held_by_the_builds_that_have_its_methods() -> None:
    assert {m.name for m in held(frozenset())} == {m.name for m in kit_modules() if not m.methods}
    assert set(kit_files()) == {m.file for m in kit_modules()}
    assert all((ROOT / "generator" / "acpgen" / "runtime" / m.file).is_file() for m in kit_modules())
