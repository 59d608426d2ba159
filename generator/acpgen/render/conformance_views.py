"""Template data for the conformance kit (``conformance.py``): the build's requirements (the
IR's, :mod:`acpgen.ir.requirements`) and what the package was generated from."""

from __future__ import annotations

from collections import Counter

from acpgen import ir


def conformance_data(protocol: ir.Protocol, package: str) -> dict[str, object]:
    tiers = Counter(r.tier for r in protocol.requirements)
    derived = sum(r.source != "curated" for r in protocol.requirements)
    counts = (
        f"{len(protocol.requirements)} requirements ({derived} derived from the schema; "
        + ", ".join(f"{tiers[t]} {t}" for t in ir.TIERS if tiers[t])
        + ")"
    )
    return {"requirements": protocol.requirements, "package": package, "counts": counts}
