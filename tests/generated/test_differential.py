"""Our models read the wire exactly as the reference reader does: the TypeScript SDK's zod schemas.

A seeded set of valid and mutated instances of every type of both builds (tests/support/differential/)
is read by our models and by the SDK (one node process); the readers must agree on accept or
reject and, where both accept, on the value read, and what our models dump must be the wire.
Named cases (``PINNED_CASES``: disagreements found before, such as a malformed known tag that the
default branch admits) are read on every run. Every disagreement is fixed or listed in
tests/support/differential/exclusions.json with the SDK defect it stems from; an exclusion that no longer
covers anything fails this test, as does any exception other than a validation error.
``--differential-size 100000`` runs a larger set (default 10000),
``--differential-seed N`` another one; ``python -m tests.support.differential.run`` prints the figure.
"""

from __future__ import annotations

from collections import Counter

import pytest

from tests.support.differential.cases import BUILDS, PINNED, PINNED_CASES, VALID, schema
from tests.support.differential.run import Report, run
from tests.support.mutations import KINDS

pytestmark = pytest.mark.interop

LEAST_PER_KIND = 10
SHOWN = 25


def _problems(report: Report, size: int) -> list[str]:
    problems = []
    if len(report.cases) < size:
        problems.append(f"only {len(report.cases)} instances, {size} wanted")
    types = {(c.build, c.type_name) for c in report.cases}
    missing = {(b, t) for b in BUILDS for t in schema(b)["$defs"]} - types
    if missing:
        problems.append(f"types without instances: {sorted(missing)}")
    kinds = Counter(c.kind for c in report.cases)
    scarce = {k: kinds[k] for k in (VALID, *KINDS) if kinds[k] < LEAST_PER_KIND * size // 10_000}
    if scarce:
        problems.append(f"too few instances of these kinds: {scarce}")
    pinned = {c.site for c in report.cases if c.kind == PINNED}
    if pinned != set(PINNED_CASES):
        problems.append(f"named cases not read: {sorted(set(PINNED_CASES) - pinned)}")
    stale = [e.id for e in report.exclusions if report.covered[e.id] == 0]
    if stale:
        problems.append(f"exclusions that cover nothing any more (remove them): {stale}")
    if report.uncovered:
        counts = Counter(f.outcome for f in report.uncovered)
        shown = "\n".join(f.describe() for f in report.uncovered[:SHOWN])
        problems.append(f"{len(report.uncovered)} findings no exclusion covers ({dict(counts)}):\n{shown}")
    return problems


def test_models_read_the_wire_as_the_sdk_does(request: pytest.FixtureRequest) -> None:
    size = request.config.getoption("--differential-size")
    report = run(size, request.config.getoption("--differential-seed"))
    problems = _problems(report, size)
    assert not problems, report.figure() + "\n\n" + "\n\n".join(problems)
