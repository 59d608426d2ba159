"""The reports of a run: the terminal summary by tier ending in the verdict, the JSON
report (every requirement with its status and checks; for a FAIL the transcript of
its scenario and the agent's stderr tail), and JUnit XML for CI systems."""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any
from xml.etree import ElementTree as ET

from .requirements import STATUSES, TIERS, Outcome, Verdict
from .runner import Run

FORMAT = 1


def terminal(
    run: Run, results: Sequence[Outcome], verdict: Verdict, *, verbose: bool = False
) -> str:
    lines = [
        "ACP conformance of the agent: "
        + (run.options.url or " ".join(run.options.command))
        + (f" ({run.options.transport})" if run.options.url else ""),
        f"schema: {run.kit.schema}",
    ]
    if run.agent_info:
        lines.append(
            f"agent: {run.agent_info.get('name')} {run.agent_info.get('version')}"
            if isinstance(run.agent_info, dict)
            else ""
        )
    lines += tiers(results, verdict, verbose=verbose)
    return _end(run, results, verdict, lines)


def tiers(results: Sequence[Outcome], verdict: Verdict, *, verbose: bool) -> list[str]:
    """The requirements by tier: counts, then those not passed (all: ``verbose``)."""
    lines: list[str] = []
    for tier in TIERS:
        mine = [o for o in results if o.requirement.tier == tier]
        counts = ", ".join(
            f"{verdict.counts[tier][s]} {s}"
            for s in STATUSES
            if verdict.counts[tier][s]
        )
        lines.append("")
        lines.append(f"{tier} ({counts or 'none'})")
        for o in mine:
            message = next(
                (c.message for c in o.checks if c.status == o.status and c.message), ""
            )
            quiet = o.status == "PASS" or (
                o.status == "SKIPPED"
                and (
                    o.requirement.source != "curated"
                    or message.startswith("not applicable")
                )
            )
            if not verbose and (
                quiet
                or (
                    o.requirement.tier in ("ADVISORY", "INFORMATIONAL")
                    and o.status != "FAIL"
                )
            ):
                continue
            message = next(
                (c.message for c in o.checks if c.status == o.status and c.message), ""
            )
            lines.append(
                f"  {o.status:<10} {o.requirement.id}"
                + (f": {message}" if message else "")
            )
    return lines


def _end(
    run: Run, results: Sequence[Outcome], verdict: Verdict, lines: list[str]
) -> str:
    failed = [r for r in run.scenarios if r.error]
    if failed:
        lines.append("")
        lines.extend(f"scenario {r.name}: {r.error}" for r in failed)
    if run.options.select:
        lines.append("note: -k left requirements NOT_TESTED")
    if not run.judge.read:
        lines.append(
            "note: the agent wrote no message: did it start? (see "
            "--report-json for its stderr)"
        )
    lines.append("")
    lines.append(verdict.line())
    return "\n".join(lines) + "\n"


def as_json(
    run: Run, results: Sequence[Outcome], verdict: Verdict, command_line: Sequence[str]
) -> dict[str, Any]:
    scenarios = {r.name: r for r in run.scenarios}
    requirements = []
    for o in results:
        r = o.requirement
        entry: dict[str, Any] = {
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
            "applies_when": list(r.applies_when),
            "acp_tck": r.acp_tck or None,
            "status": o.status,
            "checks": [],
        }
        for c in o.checks:
            check: dict[str, Any] = {
                "scenario": c.scenario,
                "status": c.status,
                "message": c.message,
            }
            record = scenarios.get(c.scenario)
            if c.status == "FAIL" and record is not None:
                check["transcript"] = [
                    line for t in record.transcripts for line in t.as_json()
                ]
                check["stderr"] = record.stderr
            entry["checks"].append(check)
        requirements.append(entry)
    return {
        "format": FORMAT,
        "kit": f"{run.kit.package}.conformance",
        "side": "agent",
        "command": command_line,
        "agent_command": list(run.options.command),
        "agent_url": run.options.url,
        "transport": run.options.transport if run.options.url else "stdio",
        "protocol_version": run.kit.protocol_version,
        "negotiated_version": run.protocol_version,
        "schema": run.kit.schema,
        "advertised": {
            "agent": {
                "agentCapabilities": run.advertised,
                "authMethods": run.auth_methods,
                "agentInfo": run.agent_info,
            },
            "client": {"clientCapabilities": {}},
        },
        "started_at": _stamp(run.started),
        "finished_at": _stamp(time.time()),
        "scenarios": [
            {
                "name": r.name,
                "seconds": r.seconds,
                "error": r.error or None,
                "exited_on_close": r.exited_on_close,
            }
            for r in run.scenarios
        ],
        "requirements": requirements,
        "verdict": {
            "conformant": verdict.conformant,
            "line": verdict.line(),
            "tier_counts": verdict.counts,
            "blocked_by_auth": verdict.blocked_by_auth,
            "blocked_by_version_mismatch": verdict.blocked_by_version,
        },
    }


def trace_json(
    path: str,
    kit: Any,
    results: Sequence[Outcome],
    verdict: Verdict,
    command: Sequence[str],
) -> dict[str, Any]:
    """The JSON report of ``conformance trace``: each requirement a trace can show."""
    return {
        "format": FORMAT,
        "kit": f"{kit.package}.conformance",
        "side": "trace",
        "command": list(command),
        "trace": path,
        "protocol_version": kit.protocol_version,
        "schema": kit.schema,
        "requirements": [
            {
                "id": o.requirement.id,
                "tier": o.requirement.tier,
                "side": o.requirement.side,
                "what": o.requirement.what,
                "citation": {
                    "page": o.requirement.citation.page,
                    "url": o.requirement.citation.url,
                },
                "source": o.requirement.source,
                "status": o.status,
                "checks": [
                    {"status": c.status, "message": c.message} for c in o.checks
                ],
            }
            for o in results
        ],
        "verdict": {
            "conformant": verdict.conformant,
            "line": verdict.line(),
            "tier_counts": verdict.counts,
        },
    }


def junit(results: Sequence[Outcome], verdict: Verdict) -> bytes:
    suite = ET.Element("testsuite", name="acp-conformance", tests=str(len(results)))
    failures = skipped = 0
    for o in results:
        case = ET.SubElement(
            suite,
            "testcase",
            classname=f"acp.{o.requirement.tier.lower()}",
            name=o.requirement.id,
        )
        message = "; ".join(
            c.message for c in o.checks if c.status == o.status and c.message
        )[:2000]
        if o.status == "FAIL":
            failures += 1
            ET.SubElement(
                case, "failure", message=message or "FAIL"
            ).text = f"{o.requirement.what}\n{o.requirement.citation.url}"
        elif o.status in ("SKIPPED", "NOT_TESTED"):
            skipped += 1
            ET.SubElement(case, "skipped", message=f"{o.status}: {message}")
    suite.set("failures", str(failures))
    suite.set("skipped", str(skipped))
    ET.SubElement(suite, "system-out").text = verdict.line()
    data: bytes = ET.tostring(suite, encoding="utf-8", xml_declaration=True)
    return data


def write(path: str, data: bytes) -> None:
    Path(path).write_bytes(data)


def dumps(report: dict[str, Any]) -> bytes:
    return (json.dumps(report, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


def _stamp(t: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t))
