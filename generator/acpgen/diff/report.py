"""Findings as text (a terminal), Markdown (a pull-request comment), JSON (tools) or GitHub
workflow annotations (CI logs).

Text and Markdown group findings that say the same thing (same rule, level, category,
stability, old and new value, notes, and who is affected) so that a change made across many
types (``_meta`` narrowed on every type) takes a few lines; JSON and the annotations list every
finding. Every format says whether a finding is about a stable or an unstable item, and names
the unstable feature of an unstable item where the revision's manifest says it.
"""

from __future__ import annotations

import json
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass

from acpgen.diff.catalogue import LEVELS, RULES
from acpgen.diff.compare import Finding

FORMAT_VERSION = 1
_LIST_LIMIT = 12


@dataclass(frozen=True, slots=True)
class Group:
    """Findings that differ only in their item."""

    findings: tuple[Finding, ...]

    @property
    def first(self) -> Finding:
        return self.findings[0]

    @property
    def uniform(self) -> bool:
        """Whether the old and new values say it all (the items can be listed by name alone)."""
        return self.first.old is not None or self.first.new is not None


def counts(findings: Sequence[Finding]) -> dict[str, int]:
    """Findings per level, every level present."""
    return {level: sum(f.level == level for f in findings) for level in LEVELS}


def group(findings: Sequence[Finding]) -> list[Group]:
    """Findings grouped (see the module docstring), in the order of their first finding."""
    groups: dict[str, list[Finding]] = {}
    for finding in findings:
        key = json.dumps(
            [
                finding.level,
                finding.rule,
                finding.category,
                finding.stability,
                finding.feature,
                finding.affects,
                finding.notes,
                finding.old,
                finding.new,
            ],
            sort_keys=True,
            default=str,
        )
        groups.setdefault(key, []).append(finding)
    return [Group(tuple(members)) for members in groups.values()]


def _stability(finding: Finding) -> str:
    """``stable`` or ``unstable``, with the feature where it is known and not the item itself:
    ``unstable session_fork``, ``stable, was session_fork`` (a stabilised item)."""
    if finding.feature is None or finding.item.startswith("feature:"):
        return finding.stability
    if finding.stability == "unstable":
        return f"unstable {finding.feature}"
    return f"stable, was {finding.feature}"


def _label(finding: Finding) -> str:
    return finding.item.split(":", 1)[1]


def _title(old: str, new: str, findings: Sequence[Finding]) -> str:
    c = counts(findings)
    return f"{old} -> {new}: " + ", ".join(f"{c[level]} {level}" for level in LEVELS)


def _change(g: Group) -> str:
    f = g.first
    if f.old is not None and f.new is not None:
        return f": {_value(f.old)} -> {_value(f.new)}"
    if f.new is not None:
        return f": {_value(f.new)}"
    if f.old is not None:
        return f": was {_value(f.old)}"
    return ""


def _value(value: object) -> str:
    return value if isinstance(value, str) else json.dumps(value, sort_keys=True)


def to_text(old: str, new: str, findings: Sequence[Finding]) -> str:
    """A report for a terminal."""
    lines = [f"acpgen diff {_title(old, new, findings)}"]
    if not findings:
        lines.append("no API change")
    for level in LEVELS:
        groups = [g for g in group(findings) if g.first.level == level]
        if not groups:
            continue
        lines += ["", level.upper()]
        for g in groups:
            f = g.first
            count = f" x{len(g.findings)}" if len(g.findings) > 1 else ""
            head = f"  {f.rule} [{f.category}, {_stability(f)}]{count}"
            if g.uniform:
                lines.append(head + (_change(g) if len(g.findings) > 1 else f" {f.message}"))
            else:
                lines.append(head + (f" {f.message}" if len(g.findings) == 1 else f" {RULES[f.rule].summary}"))
            if f.affects:
                lines.append(f"      breaks: {'; '.join(f.affects)}")
            if f.notes:
                lines.append(f"      note: {'; '.join(f.notes)}")
            if len(g.findings) > 1:
                if g.uniform:
                    names = ", ".join(_label(x) for x in g.findings)
                    lines += textwrap.wrap(names, 100, initial_indent="      ", subsequent_indent="      ")
                else:
                    shown = g.findings[:_LIST_LIMIT]
                    lines += [f"      {x.message}" for x in shown]
                    if len(g.findings) > len(shown):
                        lines.append(f"      ... and {len(g.findings) - len(shown)} more (--format json lists all)")
    return "\n".join(lines) + "\n"


def to_markdown(old: str, new: str, findings: Sequence[Finding]) -> str:
    """A report for a pull-request comment."""
    c = counts(findings)
    lines = [
        f"### ACP spec diff: `{old}` -> `{new}`",
        "",
        "| breaking | warning | info |",
        "|---:|---:|---:|",
        f"| {c['breaking']} | {c['warning']} | {c['info']} |",
    ]
    if not findings:
        lines += ["", "No API change."]
    for level in LEVELS:
        groups = [g for g in group(findings) if g.first.level == level]
        if not groups:
            continue
        lines += [
            "",
            f"#### {level.capitalize()}",
            "",
            "| rule | category | stability | change | breaks |",
            "|---|---|---|---|---|",
        ]
        for g in groups:
            f = g.first
            if len(g.findings) == 1:
                change = _md(f.message)
            elif g.uniform:
                names = ", ".join(f"`{_label(x)}`" for x in g.findings)
                change = f"{len(g.findings)} items{_md(_change(g))}: {names}"
            else:
                change = "<br>".join(_md(x.message) for x in g.findings)
            if f.notes:
                change += f" _({_md('; '.join(f.notes))})_"
            affects = _md("; ".join(f.affects)) or "-"
            lines.append(f"| `{f.rule}` | {f.category} | {_stability(f)} | {change} | {affects} |")
    return "\n".join(lines) + "\n"


def _md(text: str) -> str:
    return text.replace("|", "\\|").replace("->", "→")


def to_json(old: str, new: str, findings: Sequence[Finding]) -> str:
    """Every finding, with the counts; stable keys for tools."""
    document = {
        "format": FORMAT_VERSION,
        "old": old,
        "new": new,
        "counts": counts(findings),
        "findings": [
            {
                "rule": f.rule,
                "level": f.level,
                "category": f.category,
                "item": f.item,
                "stability": f.stability,
                "feature": f.feature,
                "message": f.message,
                "affects": list(f.affects),
                "notes": list(f.notes),
                "old": f.old,
                "new": f.new,
            }
            for f in findings
        ],
    }
    return json.dumps(document, indent=2, sort_keys=False, default=str) + "\n"


_ANNOTATION = {"breaking": "error", "warning": "warning", "info": "notice"}


def to_github(old: str, new: str, findings: Sequence[Finding]) -> str:
    """One GitHub workflow annotation per finding (``::error``, ``::warning``, ``::notice``)."""
    lines = []
    for f in findings:
        title = _escape(f"acpgen diff {f.rule} ({f.category}, {_stability(f)})", property_value=True)
        text = f.message + (f" - breaks: {'; '.join(f.affects)}" if f.affects else "")
        text += f" ({'; '.join(f.notes)})" if f.notes else ""
        lines.append(f"::{_ANNOTATION[f.level]} title={title}::{_escape(text)}")
    lines.append(f"::notice title=acpgen diff::{_escape(_title(old, new, findings))}")
    return "\n".join(lines) + "\n"


def _escape(text: str, *, property_value: bool = False) -> str:
    """Escaped as workflow commands require (their data, or a property's value)."""
    text = text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    return text.replace(":", "%3A").replace(",", "%2C") if property_value else text


def rules_table() -> str:
    """Every rule id with its level, category, direction and meaning (``acpgen diff --list-rules``)."""
    width = max(len(r) for r in RULES)
    lines = [f"{'rule':<{width}}  {'level':<8}  {'category':<8}  {'breaks':<10}  meaning"]
    for r in RULES.values():
        lines.append(f"{r.id:<{width}}  {r.level:<8}  {r.category:<8}  {r.direction:<10}  {r.summary}")
    return "\n".join(lines) + "\n"
