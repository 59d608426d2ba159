"""Run the differential test: build the seeded set, read it with both readers, compare, apply exclusions.

From the repository root (the SDK installed by ``make interop-deps``)::

    uv run --frozen python -m tests.support.differential.run [--size 10000] [--seed 12]

prints the agreement figure that the README quotes, then every finding no exclusion covers.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from dataclasses import dataclass, field

from tests.support.bindings import ROOT
from tests.support.differential.cases import Case, build_cases, schema_validator
from tests.support.differential.compare import Finding, agreement, wire_findings
from tests.support.differential.exclusions import Exclusion, load
from tests.support.differential.readers import Reading, read_ours, read_sdk

DEFAULT_SIZE = 10_000
DEFAULT_SEED = 12


@dataclass(slots=True)
class Report:
    """The outcome of a run: the cases, every finding, and which exclusion covers which."""

    cases: list[Case]
    findings: list[Finding]
    exclusions: list[Exclusion]
    covered: dict[str, int] = field(default_factory=dict)
    """Findings covered, by exclusion id."""
    uncovered: list[Finding] = field(default_factory=list)

    def figure(self) -> str:
        """The agreement figure: instances, how many the readers agree on, and outside the exclusions."""
        total = len(self.cases)
        disagreeing = {id(f.case) for f in self.findings if not f.outcome.startswith("wire-")}
        left = {id(f.case) for f in self.uncovered if not f.outcome.startswith("wire-")}
        excluded = disagreeing - left
        outside = total - len(excluded)
        agreeing = total - len(disagreeing)
        on_acceptance = total - len({id(f.case) for f in self.findings if f.outcome in ("sdk-accepts", "sdk-rejects")})
        return (
            f"{total} instances ({len({(c.build, c.type_name) for c in self.cases})} types of both builds): "
            f"the readers agree on accepting or refusing {on_acceptance} ({100 * on_acceptance / total:.2f} %), "
            f"on the value read too on {agreeing} ({100 * agreeing / total:.2f} %); outside the "
            f"{len(self.exclusions)} exclusions ({len(excluded)} instances) on {outside - len(left)} of {outside} "
            f"({100 * (outside - len(left)) / outside:.2f} %)"
        )


def run(size: int = DEFAULT_SIZE, seed: int = DEFAULT_SEED) -> Report:
    """Build the set of ``size`` cases from ``seed``, read it with both readers and compare."""
    cases = build_cases(size, seed)
    ours = [read_ours(c.build, c.type_name, c.text) for c in cases]
    dumped = [i for i, reading in enumerate(ours) if reading.wire is not None]
    batch = [(c.build, c.type_name, c.text) for c in cases]
    batch += [(cases[i].build, cases[i].type_name, ours[i].wire or "") for i in dumped]
    sdk = read_sdk(batch)
    findings = [f for c, o, s in zip(cases, ours, sdk, strict=False) if (f := agreement(c, o, s)) is not None]
    disagreeing = {id(f.case) for f in findings if not f.sdk_drops_unknown}  # those are still read and dumped
    for i, sdk_wire in zip(dumped, sdk[len(cases) :], strict=True):
        case = cases[i]
        if id(case) not in disagreeing:
            findings += _wire(case, ours[i], sdk[i], sdk_wire)
    return _classify(cases, findings, load())


def _wire(case: Case, ours: Reading, sdk: Reading, sdk_wire: Reading) -> list[Finding]:
    assert ours.wire is not None
    reread = read_ours(case.build, case.type_name, ours.wire)
    valid = schema_validator(case.build, case.type_name).is_valid(json.loads(ours.wire))
    return wire_findings(case, ours, reread, sdk, sdk_wire, valid)


def _classify(cases: list[Case], findings: list[Finding], exclusions: list[Exclusion]) -> Report:
    report = Report(cases, findings, exclusions, {e.id: 0 for e in exclusions})
    for finding in findings:
        covering = [e for e in exclusions if e.covers(finding)]
        for e in covering:
            report.covered[e.id] += 1
        if not covering:
            report.uncovered.append(finding)
    return report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size", type=int, default=DEFAULT_SIZE)
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    parser.add_argument("--show", type=int, default=40, help="findings to print (default 40)")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(ROOT / "generated"))
    report = run(args.size, args.seed)
    print(report.figure())
    for exclusion in report.exclusions:
        print(f"  excluded by {exclusion.id}: {report.covered[exclusion.id]} findings")
    for case in (c for c in report.cases if c.kind == "pinned"):
        found = [f for f in report.findings if f.case is case]
        said = ", ".join(
            f"{f.outcome}, excluded by {', '.join(e.id for e in report.exclusions if e.covers(f)) or 'nothing'}"
            for f in found
        )
        print(f"  named case {case.build} {case.site}: {said or 'the readers agree'}")
    counts = Counter(f.outcome for f in report.uncovered)
    print(f"findings no exclusion covers: {len(report.uncovered)} {dict(counts) if counts else ''}".rstrip())
    for finding in report.uncovered[: args.show]:
        print(finding.describe())
    return 1 if report.uncovered else 0


if __name__ == "__main__":
    raise SystemExit(main())
