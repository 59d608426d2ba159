"""The conformance panel (issue 43, Deliver item 4): the kit against third-party peers installed,
pinned, from the registries, each outcome compared with what the spec says it is
(``expected/<peer>.json``; README.md says how each was judged and how acp-tck judges the same peers).

Where the kit is found wrong on a peer, the recorded outcome is the spec's and the entry goes to
that peer's ``kit_wrong``; ``test_the_kit_makes_no_known_false_finding_on_the_panel`` fails until
the kit is fixed and the entry is moved out (the false findings of issue 43 were, and are gone).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from tests.panel.peers import PEERS
from tests.panel.runs import VERDICT, expected, known_false_findings, statuses

pytestmark = [pytest.mark.panel, pytest.mark.slow]

Runs = Callable[[str], dict[str, Any]]


@pytest.mark.parametrize("name", sorted(PEERS))
def test_the_kit_judges_the_peer_as_the_spec_does(name: str, panel_runs: Runs) -> None:
    report = panel_runs(name)["report"]
    wanted = expected(name)
    wrong = wanted.get("kit_wrong", {})
    got = statuses(report)
    assert report["side"] == wanted["mode"] == PEERS[name].mode
    assert set(got) == set(wanted["requirements"]), (
        "requirements appeared or went: run `uv run --frozen python -m tests.panel.record "
        f"{name}` and judge the new ones ({sorted(set(got) ^ set(wanted['requirements']))})"
    )
    differ = {
        rid: f"{got[rid]} (recorded {status})"
        for rid, status in wanted["requirements"].items()
        if rid not in wrong and got[rid] != status
    }
    assert not differ, f"{name}: outcomes differ from the recorded ones: {differ}\n{report['panel']['stdout_tail']}"
    if VERDICT not in wrong:
        assert report["verdict"]["conformant"] is wanted["conformant"], report["verdict"]["line"]
        assert report["panel"]["exit_code"] == (0 if wanted["conformant"] else 1)
    for rid in wrong:
        assert rid == VERDICT or rid in got, f"kit_wrong names {rid}, which the report does not hold"


def test_the_kit_makes_no_known_false_finding_on_the_panel() -> None:
    """Issue 43: a verdict must never be wrong. A false finding of the kit found on a peer is recorded
    in that peer's ``kit_wrong`` (the spec's outcome, the kit's, why) while it is being fixed: this
    test fails until it is, and the entry is moved out."""
    assert known_false_findings() == []


def test_codex_made_its_model_calls_to_the_mock_and_nothing_else(panel_runs: Runs) -> None:
    """Every model call of codex-acp's run reached the mock (the kit's prompts among them, with the
    fake key, each answered), none went elsewhere: no other path, nothing through the proxy."""
    run = panel_runs("codex-acp")
    calls = run["model_calls"]
    responses = [c for c in calls if c["method"] == "POST" and c["path"] == "/v1/responses"]
    assert responses and len(responses) == len(calls), [c for c in calls if c not in responses]
    assert all(c["keyed"] and c["model"] == "gpt-5.4-mini" and c["answer"] for c in responses)
    prompts = {c["user_text"] for c in responses}
    assert {"Hello, conformance kit: héllo ✓", "Remember this turn."} <= prompts, prompts
    # the slow turn's prompt reaches the mock unless the kit's cancel (0.1 s in) came first
    kinds = {c["answer"] for c in responses}
    assert {"tool call", "text after the tool"} <= kinds <= {"tool call", "text after the tool", "slow text"}, kinds
    report = run["report"]
    assert report["advertised"]["agent"]["agentInfo"]["name"] == "codex-acp"
    assert statuses(report)["ACP-AGENT-PROMPT-005"] == "PASS"  # its turns made tool calls


STATUSES = ("NOT_TESTED", "SKIPPED", "PASS", "FAIL")


def _judged_status(judgement: str) -> str | None:
    """The status a judgement starts with (``FAIL (ADVISORY), right: ...``, ``Now PASS, ...``)."""
    words = judgement.removeprefix("Now ")
    for status in ("NOT CONFORMANT", "CONFORMANT", *STATUSES):
        if words.startswith(status):
            return status
    return None


@pytest.mark.parametrize("name", sorted(PEERS))
def test_every_judgement_names_the_recorded_outcome(name: str) -> None:
    """A judgement explains the outcome recorded beside it: one left from an earlier recording
    (another status) is stale, and so is a FAIL or NOT_TESTED without one."""
    wanted = expected(name)
    recorded = dict(wanted["requirements"])
    recorded[VERDICT] = "CONFORMANT" if wanted["conformant"] else "NOT CONFORMANT"
    stale = {
        rid: (recorded.get(rid), text[:60])
        for rid, text in wanted["judgements"].items()
        if _judged_status(text) != recorded.get(rid)
    }
    assert not stale, f"{name}: judgements that name another outcome: {stale}"
    questioned = [rid for rid, status in recorded.items() if status in ("FAIL", "NOT_TESTED")]
    unjudged = [rid for rid in questioned if rid not in wanted["judgements"]]
    assert not unjudged, f"{name}: outcomes nobody judged against the spec: {unjudged}"
