"""Requirements, what a run found of each, and the verdict.

The tiers are those of acp-tck: MANDATORY (a FAIL or a NOT_TESTED makes the run not
conformant), CAPABILITY (applies only where ``applies_when`` held; then a FAIL
counts), ADVISORY and INFORMATIONAL (reported, never change the verdict). A check
gives PASS, FAIL or SKIPPED (exercised, but not applicable or not observable); a
requirement is the worst of its checks (FAIL, then PASS, then SKIPPED), NOT_TESTED
when no check of it ran."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Literal

Tier = Literal["MANDATORY", "CAPABILITY", "ADVISORY", "INFORMATIONAL"]
Status = Literal["PASS", "FAIL", "SKIPPED", "NOT_TESTED"]
TIERS: tuple[Tier, ...] = ("MANDATORY", "CAPABILITY", "ADVISORY", "INFORMATIONAL")
STATUSES: tuple[Status, ...] = ("PASS", "FAIL", "SKIPPED", "NOT_TESTED")
_RANK = {"FAIL": 3, "PASS": 2, "SKIPPED": 1, "NOT_TESTED": 0}


@dataclass(frozen=True, slots=True)
class Citation:
    """Where the spec states a requirement."""

    page: str
    section: str
    url: str


@dataclass(frozen=True, slots=True)
class Requirement:
    """One conformance requirement of the package's schema."""

    id: str
    tier: Tier
    side: Literal["agent", "client", "both"]
    """The side it judges (``both``: whichever side is under test)."""
    what: str
    citation: Citation
    source: str
    """``derived:<family>`` or ``curated``."""
    check: str
    applies_when: tuple[str, ...] = ()
    subject: str = ""
    acp_tck: str = ""

    @property
    def family(self) -> str:
        """The derived family (``capability-gate``), or ``curated``."""
        return self.source.removeprefix("derived:")


@dataclass(frozen=True, slots=True)
class Check:
    """What one check of a scenario found of one requirement."""

    requirement: str
    status: Literal["PASS", "FAIL", "SKIPPED"]
    message: str
    scenario: str


@dataclass(slots=True)
class Outcome:
    """A requirement's status over the run, with its checks."""

    requirement: Requirement
    status: Status = "NOT_TESTED"
    checks: list[Check] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class Verdict:
    """Whether the run found the peer conformant, and why not."""

    conformant: bool
    mandatory_failures: int
    mandatory_not_tested: int
    capability_failures: int
    blocked_by_auth: bool
    blocked_by_version: bool
    counts: Mapping[str, Mapping[str, int]]
    unfinished: str = ""
    """Why the run could not finish (a client that never left): not conformant."""

    def line(self) -> str:
        """``VERDICT: CONFORMANT`` or ``VERDICT: NOT CONFORMANT (...)``."""
        if self.conformant:
            return "VERDICT: CONFORMANT"
        why = [
            f"{self.mandatory_failures} mandatory failures",
            f"{self.mandatory_not_tested} not tested",
        ]
        if self.capability_failures:
            why.append(f"{self.capability_failures} capability failures")
        if self.blocked_by_auth:
            why.append("blocked by authentication")
        if self.blocked_by_version:
            why.append("blocked by version mismatch")
        if self.unfinished:
            why.append(self.unfinished)
        return f"VERDICT: NOT CONFORMANT ({', '.join(why)})"


def outcomes(
    requirements: Iterable[Requirement], checks: Iterable[Check]
) -> list[Outcome]:
    """Each requirement's outcome: the worst of its checks."""
    found = {r.id: Outcome(r) for r in requirements}
    for check in checks:
        outcome = found.get(check.requirement)
        if outcome is None:
            continue  # a check of a requirement this build does not hold
        outcome.checks.append(check)
        if _RANK[check.status] > _RANK[outcome.status]:
            outcome.status = check.status
    return list(found.values())


def verdict(
    results: Iterable[Outcome],
    *,
    blocked_by_auth: bool = False,
    blocked_by_version: bool = False,
    unfinished: str = "",
) -> Verdict:
    """The run's verdict from its outcomes."""
    counts: dict[str, dict[str, int]] = {t: dict.fromkeys(STATUSES, 0) for t in TIERS}
    failures = not_tested = capability = 0
    for o in results:
        counts[o.requirement.tier][o.status] += 1
        if o.requirement.tier == "MANDATORY":
            failures += o.status == "FAIL"
            not_tested += o.status == "NOT_TESTED"
        elif o.requirement.tier == "CAPABILITY":
            capability += o.status == "FAIL"
    ok = not (
        failures
        or not_tested
        or capability
        or blocked_by_auth
        or blocked_by_version
        or unfinished
    )
    return Verdict(
        ok,
        failures,
        not_tested,
        capability,
        blocked_by_auth,
        blocked_by_version,
        counts,
        unfinished,
    )
