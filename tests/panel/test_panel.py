"""The conformance panel (issue 43, Deliver item 4): the kit against third-party peers installed,
pinned, from the registries, each outcome compared with what the spec says it is
(``expected/<peer>.json``; README.md says how each was judged and how acp-tck judges the same peers).

Where today's kit is wrong, the recorded outcome is the spec's and the comparison is a strict
expected failure of its own (``test_a_known_false_finding_of_the_kit``): it passes, and so fails
the suite, once the kit is fixed, so that the entry is moved out of ``kit_wrong``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from tests.panel.peers import PEERS
from tests.panel.runs import VERDICT, expected, known_false_findings, statuses
from tests.support import mock_model

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


@pytest.mark.parametrize(
    ("name", "key"),
    [
        pytest.param(
            name,
            key,
            marks=pytest.mark.xfail(strict=True, reason=expected(name)["kit_wrong"][key]["reason"]),
            id=f"{name}-{key}",
        )
        for name, key in known_false_findings()
    ],
)
def test_a_known_false_finding_of_the_kit(name: str, key: str, panel_runs: Runs) -> None:
    """What the spec says, where today's kit says otherwise (strict: fails the suite once it agrees)."""
    report = panel_runs(name)["report"]
    wanted = expected(name)
    if key == VERDICT:
        assert report["verdict"]["conformant"] is wanted["conformant"], report["verdict"]["line"]
    else:
        assert statuses(report)[key] == wanted["requirements"][key]


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
    assert any(mock_model.SLOW in p for p in prompts)
    kinds = {c["answer"] for c in responses}
    assert kinds == {"tool call", "text after the tool", "slow text"}, kinds
    report = run["report"]
    assert report["advertised"]["agent"]["agentInfo"]["name"] == "codex-acp"
    assert statuses(report)["ACP-AGENT-PROMPT-005"] == "PASS"  # its turns made tool calls
