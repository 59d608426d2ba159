"""``docs/conformance.md``: the conformance kit's page, its requirement lists rendered from the IR
of each build (``templates/docs/conformance.md.jinja`` lays it out), so that the page lists exactly
what the packages check. ``tests/generated/test_conformance_doc.py`` compares it with the file and rewrites
it with ``--update-goldens``."""

from __future__ import annotations

from collections import Counter

from acpgen import ir
from acpgen.render.templating import environment


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def _cite(r: ir.Requirement) -> str:
    if not r.citation.url.startswith("http"):
        return f"{_cell(r.citation.page)}: `{r.citation.url}`"
    return f"[{_cell(r.citation.page)}, {_cell(r.citation.section)}]({r.citation.url})"


def _row(r: ir.Requirement) -> str:
    applies = f" (applies when {', '.join(f'`{a}`' for a in r.applies_when)})" if r.applies_when else ""
    source = r.source.removeprefix("derived:")
    checks = ", ".join(f"`{c}`" for c in r.checks) or "not judged"
    return f"| {r.id} | {r.tier} | {r.side} | {_cell(r.what)}{applies} | {_cite(r)} | {source} | {checks} |"


def _unjudged(r: ir.Requirement) -> str:
    return f"{r.id} ({r.tier}, {r.side}): {_cell(r.what)} ({_cite(r)})"


def _counts(protocol: ir.Protocol) -> str:
    tiers = Counter(r.tier for r in protocol.requirements)
    derived = sum(r.source != "curated" for r in protocol.requirements)
    by_tier = ", ".join(f"{tiers[t]} {t}" for t in ir.TIERS if tiers[t])
    judged = sum(bool(r.checks) for r in protocol.requirements)
    total = len(protocol.requirements)
    return f"{total} ({derived} derived, {total - derived} curated; {by_tier}), {judged} of them judged by this kit"


def conformance_doc(stable: ir.Protocol, unstable: ir.Protocol, draft: ir.Protocol, draft_unstable: ir.Protocol) -> str:
    """The page, from the IR of the v1 stable and unstable builds and the draft (v2) builds."""
    known = {r.id for r in stable.requirements}
    return (
        environment("docs")
        .get_template("conformance.md.jinja")
        .render(
            stable_rows=[_row(r) for r in stable.requirements],
            unjudged=[_unjudged(r) for r in stable.requirements if not r.checks],
            unstable_rows=[_row(r) for r in unstable.requirements if r.id not in known],
            counts={
                "stable": _counts(stable),
                "unstable": _counts(unstable),
                "draft": _counts(draft),
                "draft_unstable": _counts(draft_unstable),
            },
            families=Counter(r.source for r in stable.requirements if r.source != "curated"),
            schema=stable.source.package,
        )
    )
