"""The JSON report of a run: what was run against what, every requirement judged with
its tier, citation, status and findings (for a FAIL the transcript of its scenario
and the peer's stderr tail), the requirements the kit does not judge, where the
schema and the models read a message differently, and the verdict."""

from __future__ import annotations

import json
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from .requirements import Outcome, Requirement, Verdict

FORMAT = 2


def requirement_json(r: Requirement) -> dict[str, Any]:
    return {
        "id": r.id,
        "tier": r.tier,
        "side": r.side,
        "what": r.what,
        "citation": {
            "page": r.citation.page,
            "section": r.citation.section,
            "url": r.citation.url,
        },
        "source": r.source,
        "checks": list(r.checks),
        "applies_when": list(r.applies_when),
        "acp_tck": r.acp_tck or None,
    }


def outcome_json(o: Outcome, evidence: Mapping[str, dict[str, Any]]) -> dict[str, Any]:
    """One requirement's entry; ``evidence``: scenario -> its transcript and stderr."""
    entry = requirement_json(o.requirement)
    entry["status"] = o.status
    if o.status == "NOT_TESTED":
        entry["why_not_tested"] = o.why_not_tested
    findings = []
    for f in o.findings:
        item: dict[str, Any] = {
            "scenario": f.scenario,
            "status": f.status,
            "message": f.message,
        }
        if f.status == "FAIL" and f.scenario in evidence:
            item.update(evidence[f.scenario])
        findings.append(item)
    entry["findings"] = findings
    return entry


def report(
    *,
    kit: Any,
    side: str,
    command: Sequence[str],
    results: Sequence[Outcome],
    verdict: Verdict,
    unjudged: Sequence[Requirement],
    disagreements: Sequence[dict[str, Any]],
    evidence: Mapping[str, dict[str, Any]] | None = None,
    extra: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    return {
        "format": FORMAT,
        "kit": f"{kit.package}.conformance",
        "side": side,
        "command": list(command),
        "protocol_version": kit.protocol_version,
        "schema": kit.schema,
        **(extra or {}),
        "finished_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "requirements": [outcome_json(o, evidence or {}) for o in results],
        "not_judged_by_this_kit": [requirement_json(r) for r in unjudged],
        "disagreements": list(disagreements),
        "verdict": {
            "conformant": verdict.conformant,
            "line": verdict.line(),
            "tier_counts": verdict.counts,
            "blocked": verdict.blocked or None,
            "unfinished": verdict.unfinished or None,
        },
    }


def write(path: str, report: dict[str, Any]) -> None:
    text = json.dumps(report, indent=2, ensure_ascii=False) + "\n"
    Path(path).write_text(text, encoding="utf-8")
