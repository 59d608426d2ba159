"""The terminal summary of a run: the requirements by tier (counts, then each one not
passed, all with ``-v``), what the kit does not judge, notes, and the verdict line."""

from __future__ import annotations

import textwrap
from collections.abc import Sequence

from .requirements import STATUSES, TIERS, Outcome, Requirement, Verdict

LINE = 240
"""Characters a requirement's line keeps (the JSON report has every message whole)."""


def tiers(results: Sequence[Outcome], verdict: Verdict, *, verbose: bool) -> list[str]:
    """The requirements by tier: counts, then those a reader must see (all:
    ``verbose``).

    Shown without ``-v``: a FAIL of any tier, a MANDATORY or CAPABILITY NOT_TESTED,
    and a curated MANDATORY or CAPABILITY SKIPPED that is not "not applicable"."""
    lines: list[str] = []
    for tier in TIERS:
        counts = ", ".join(
            f"{verdict.counts[tier][s]} {s}"
            for s in STATUSES
            if verdict.counts[tier][s]
        )
        lines += ["", f"{tier} ({counts or 'none'})"]
        blocked: dict[str, list[str]] = {}
        for o in results:
            if o.requirement.tier != tier or not (verbose or _shown(o)):
                continue
            if o.status == "NOT_TESTED":
                blocked.setdefault(o.message(), []).append(o.requirement.id)
            else:
                lines.append(_line(o))
        for why, ids in blocked.items():  # one reason, once
            lines += _group(why, ids)
    return lines


def _group(why: str, ids: list[str]) -> list[str]:
    if len(ids) == 1:
        return [_cut(f"  {'NOT_TESTED':<10} {ids[0]}: {why}")]
    head = _cut(f"  {'NOT_TESTED':<10} {len(ids)} requirements: {why}")
    wrapped = textwrap.wrap(", ".join(ids), LINE - 6, break_on_hyphens=False)
    return [head, *(f"      {w}" for w in wrapped)]


def _cut(text: str) -> str:
    return text if len(text) <= LINE else text[: LINE - 3] + "..."


def _shown(o: Outcome) -> bool:
    tier, status = o.requirement.tier, o.status
    if status == "FAIL":
        return True
    if tier not in ("MANDATORY", "CAPABILITY"):
        return False
    if status == "NOT_TESTED":
        return True
    message = o.message()
    return (
        status == "SKIPPED"
        and o.requirement.source == "curated"
        and not message.startswith(("not applicable", "not observed"))
    )


def _line(o: Outcome) -> str:
    message = o.message()
    found = o.deciding()
    where = f" [{found.scenario}]" if o.status == "FAIL" and found is not None else ""
    said = f": {message}" if message else ""
    return _cut(f"  {o.status:<10} {o.requirement.id}{where}{said}")


def unjudged(requirements: Sequence[Requirement]) -> list[str]:
    """The requirements of the side no check of the kit judges: listed, never judged."""
    if not requirements:
        return []
    ids = ", ".join(r.id for r in requirements)
    wrapped = textwrap.wrap(ids, LINE - 4, break_on_hyphens=False)
    return [
        "",
        f"NOT JUDGED BY THIS KIT ({len(requirements)})",
        *(f"  {w}" for w in wrapped),
    ]
